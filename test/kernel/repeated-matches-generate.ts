/**
 * Rules with repeated matches, seeded: two to four tcp or udp matches in one rule (explicit
 * `-m tcp`, or options after `-p` that load the match implicitly), each with a random mix of
 * ports (single, ranges, open ends, the full range, `!`), TCP flags (`--syn`, masks, `NONE`,
 * `!`) and sometimes `--tcp-option` or no option at all, between other matches (mark, comment,
 * limit, multiport, length, and repeated copies of those). iptables-nft merges some of them when
 * it lists the rule back; `fmt` must print what iptables-save prints.
 */
import { Rng } from './generate.js';

function port(r: Rng): number {
  return r.weighted([[3, r.int(1, 1023)], [2, r.int(1024, 65534)], [1, 0], [1, 65535]]);
}

function portSpec(r: Rng): string {
  const a = port(r);
  const b = port(r);
  const [lo, hi] = a <= b ? [a, b] : [b, a];
  return r.weighted<string>([
    [4, String(a)],
    [3, `${lo}:${hi}`],
    [1, `:${hi}`],
    [1, `${lo}:`],
    [1, '0:65535'],
    [1, `0:${hi}`],
  ]);
}

const FLAG_SETS = ['SYN', 'ACK', 'FIN', 'RST', 'SYN,ACK', 'FIN,SYN,RST,ACK', 'ALL', 'NONE', 'SYN,RST', 'URG,PSH'];

function l4Options(r: Rng, proto: 'tcp' | 'udp'): string[] {
  const out: string[] = [];
  const neg = (): string => (r.chance(0.3) ? '! ' : '');
  if (r.chance(0.55)) out.push(`${neg()}--sport ${portSpec(r)}`);
  if (r.chance(0.65)) out.push(`${neg()}--dport ${portSpec(r)}`);
  if (proto === 'tcp') {
    if (r.chance(0.2)) out.push(`${neg()}--syn`);
    else if (r.chance(0.3)) out.push(`${neg()}--tcp-flags ${r.pick(FLAG_SETS)} ${r.pick(FLAG_SETS)}`);
    if (r.chance(0.1)) out.push(`${neg()}--tcp-option ${r.int(1, 30)}`);
  }
  return r.shuffle(out);
}

function otherMatch(r: Rng, proto: 'tcp' | 'udp', family: 4 | 6): string {
  return r.pick([
    () => `-m mark --mark 0x${r.int(1, 255).toString(16)}${r.chance(0.5) ? `/0x${r.int(1, 0xffff).toString(16)}` : ''}`,
    () => `-m comment --comment c${r.int(1, 99)}`,
    () => `-m limit --limit ${r.int(1, 60)}/${r.pick(['sec', 'min', 'hour'])}`,
    () => `-m multiport --${r.pick(['dports', 'sports', 'ports'])} ${r.int(1, 999)},${r.int(1000, 9999)}`,
    () => `-m length --length ${r.int(0, 1000)}:${r.int(1000, 65535)}`,
    () => (family === 4 ? `-m ttl --ttl-gt ${r.int(0, 200)}` : `-m hl --hl-lt ${r.int(1, 255)}`),
    () => `-m conntrack --ctstate ${r.pick(['NEW', 'ESTABLISHED', 'NEW,ESTABLISHED'])}`,
    () => (proto === 'tcp' ? `-m tcpmss --mss ${r.int(1, 1400)}:${r.int(1400, 9000)}` : '-m pkttype --pkt-type unicast'),
  ])();
}

/** One rule line (without `-A CHAIN`) with repeated tcp or udp matches. */
export function repeatedMatchRule(seed: number, family: 4 | 6): string {
  const r = new Rng(seed);
  const proto: 'tcp' | 'udp' = r.chance(0.65) ? 'tcp' : 'udp';
  const parts: string[] = [`-p ${proto}`];
  const l4 = r.int(2, 4);
  const others = r.int(0, 3);
  const slots = r.shuffle([...Array.from({ length: l4 }, () => 'l4'), ...Array.from({ length: others }, () => 'other')]);
  let first = true;
  for (const s of slots) {
    if (s === 'other') {
      parts.push(otherMatch(r, proto, family));
      continue;
    }
    const opts = l4Options(r, proto);
    // Options right after -p load the match implicitly, as iptables does.
    if (first && parts.length === 1 && opts.length > 0 && r.chance(0.3)) parts.push(opts.join(' '));
    else parts.push(`-m ${proto}${opts.length > 0 ? ' ' + opts.join(' ') : ''}`);
    first = false;
  }
  if (r.chance(0.5)) parts.push(r.pick(['-j ACCEPT', '-j DROP', '-j RETURN']));
  return parts.join(' ');
}
