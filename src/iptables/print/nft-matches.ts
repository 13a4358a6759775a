/**
 * The matches of a rule as iptables-nft 1.8.9 lists them back. iptables-nft does not hand the tcp
 * and udp matches to the kernel as xt matches: it writes their ports and flags as payload tests
 * (`nft.c` `add_nft_tcp`, `add_nft_udp`, `add_nft_tcpudp`), and when it lists the rule it reads
 * those tests back into one tcp (one udp) match per rule, made where the first such test is
 * (`nft-shared.c` `nft_tcp_match`, `nft_parse_tcp`, `nft_parse_tcp_range`, `nft_parse_tcp_flags`).
 * So two tcp matches come back as one (`-p tcp --syn -m tcp --dport 22` as
 * `-m tcp --dport 22 --tcp-flags FIN,SYN,RST,ACK SYN`), a later port test overwrites an earlier
 * one's bounds (a `!` stays once set), `! --dport 0:1023` comes back as `--dport 1024:65535`, and a
 * match whose tests all vanish (`! --dport 0:65535`, `--tcp-flags NONE SYN`) is not listed. A tcp
 * match with `--tcp-option`, and a tcp or udp match with no test, stays an xt match of its own.
 *
 * @module
 */
import type { Family } from '../../model/types.js';
import type { PortRange } from '../extensions/target-options.js';
import { MATCHES } from '../extensions/registry.js';
import { saveTcp, tcpAsPayload, type TcpOptions } from '../extensions/match/tcp.js';
import { udpAsPayload, type UdpOptions } from '../extensions/match/udp.js';

/** A match as the printer needs it. */
interface MatchLike {
  readonly name: string;
  readonly options: unknown;
}

/** `struct xt_tcp` / `struct xt_udp` as `nft_parse_*` fills it (`flags` for tcp only). */
interface Ports {
  spts: [number, number];
  dpts: [number, number];
  invSrc: boolean;
  invDst: boolean;
  invFlags: boolean;
  flgMask: number;
  flgCmp: number;
}

type CmpOp = 'eq' | 'neq' | 'lte' | 'gt';

/** One payload test iptables-nft writes for a port option, as `nft_parse_*` reads it back. */
type PortTest =
  | { readonly kind: 'cmp'; readonly side: 'src' | 'dst' | 'both'; readonly op: CmpOp; readonly sport: number; readonly dport: number }
  | { readonly kind: 'range'; readonly side: 'src' | 'dst'; readonly neq: boolean; readonly lo: number; readonly hi: number };

const fresh = (): Ports => ({ spts: [0, 0xffff], dpts: [0, 0xffff], invSrc: false, invDst: false, invFlags: false, flgMask: 0, flgCmp: 0 });

/** `expr_gen_range_cmp16`: one side's test, or none for the full range (the caller's test). */
function sideTest(side: 'src' | 'dst', r: PortRange, inv: boolean): PortTest {
  const cmp = (op: CmpOp, port: number): PortTest => ({ kind: 'cmp', side, op, sport: side === 'src' ? port : -1, dport: side === 'dst' ? port : -1 });
  if (r.min === r.max) return cmp(inv ? 'neq' : 'eq', r.min);
  if (r.min === 0 && r.max < 0xffff) return cmp(inv ? 'gt' : 'lte', r.max);
  return { kind: 'range', side, neq: inv, lo: r.min, hi: r.max };
}

/** `add_nft_tcpudp`: both single ports with one sense in one 32-bit test, else one test per side. */
function portTests(src: PortRange, invSrc: boolean, dst: PortRange, invDst: boolean): PortTest[] {
  if (src.min !== 0 && src.min === src.max && dst.min !== 0 && dst.min === dst.max && invSrc === invDst) {
    return [{ kind: 'cmp', side: 'both', op: invSrc ? 'neq' : 'eq', sport: src.min, dport: dst.min }];
  }
  const out: PortTest[] = [];
  if (src.min !== 0 || src.max < 0xffff) out.push(sideTest('src', src, invSrc));
  if (dst.min !== 0 || dst.max < 0xffff) out.push(sideTest('dst', dst, invDst));
  return out;
}

/** `port_match_single_to_range`. */
function single(ports: [number, number], op: CmpOp, port: number, invert: () => void): void {
  if (port < 0) return;
  if (op === 'neq') invert();
  if (op === 'eq' || op === 'neq') {
    ports[0] = port;
    ports[1] = port;
  } else if (op === 'lte') ports[1] = port;
  else ports[0] = Math.min(port + 1, 0xffff);
}

function apply(s: Ports, t: PortTest): void {
  if (t.kind === 'cmp') {
    single(s.spts, t.op, t.sport, () => (s.invSrc = true));
    single(s.dpts, t.op, t.dport, () => (s.invDst = true));
    return;
  }
  if (t.neq) {
    if (t.side === 'src') s.invSrc = true;
    else s.invDst = true;
  }
  if (t.side === 'src') s.spts = [t.lo, t.hi];
  else s.dpts = [t.lo, t.hi];
}

const range = (p: { readonly value: PortRange } | undefined): PortRange => p?.value ?? { min: 0, max: 0xffff };

/** The payload tests of a tcp match, or null when it stays an xt match (`add_nft_tcp`). */
function tcpTests(o: TcpOptions): { flags: { mask: number; comp: number; neq: boolean } | null; ports: PortTest[] } | null {
  if (!tcpAsPayload(o)) return null;
  const flags = o.flags !== undefined && o.flags.value.mask !== 0 ? { mask: o.flags.value.mask, comp: o.flags.value.comp, neq: o.flags.negated } : null;
  return { flags, ports: portTests(range(o.sport), o.sport?.negated ?? false, range(o.dport), o.dport?.negated ?? false) };
}

/** The payload tests of a udp match, or null when it stays an xt match (`add_nft_udp`). */
function udpTests(o: UdpOptions): PortTest[] | null {
  if (!udpAsPayload(o)) return null;
  return portTests(range(o.sport), o.sport?.negated ?? false, range(o.dport), o.dport?.negated ?? false);
}

function portOption(ports: [number, number], negated: boolean): { negated: boolean; value: PortRange } | undefined {
  // tcp_save/udp_save print a side only when it is not the full range.
  return ports[0] === 0 && ports[1] === 0xffff ? undefined : { negated, value: { min: ports[0], max: ports[1] } };
}

function mergedOptions(s: Ports, withFlags: boolean): TcpOptions {
  const sport = portOption(s.spts, s.invSrc);
  const dport = portOption(s.dpts, s.invDst);
  return {
    ...(sport ? { sport } : {}),
    ...(dport ? { dport } : {}),
    ...(withFlags && (s.flgMask !== 0 || s.invFlags) ? { flags: { negated: s.invFlags, value: { mask: s.flgMask, comp: s.flgCmp } } } : {}),
  };
}

/**
 * Each match of a rule as `-m NAME options` text, as iptables-nft lists the rule back: tcp and
 * udp matches merged as described above, every other match as its module saves it.
 *
 * @example
 * ```ts
 * savedMatches(parseIptablesSaveOrThrow('*filter\n-A INPUT -p tcp --syn -m tcp --dport 22\nCOMMIT\n').tables[0].chains[0].rules[0].matches, 4);
 * // ['-m tcp --dport 22 --tcp-flags FIN,SYN,RST,ACK SYN']
 * ```
 */
export function savedMatches(matches: readonly MatchLike[], family: Family): string[] {
  const slots: (string | 'tcp' | 'udp')[] = [];
  const merged: { tcp: Ports | null; udp: Ports | null } = { tcp: null, udp: null };
  const slot = (which: 'tcp' | 'udp'): Ports => {
    let s = merged[which];
    if (s === null) {
      s = fresh();
      merged[which] = s;
      slots.push(which);
    }
    return s;
  };
  for (const m of matches) {
    if (m.name === 'tcp') {
      const t = tcpTests(m.options as TcpOptions);
      if (t !== null) {
        if (t.flags !== null) {
          const s = slot('tcp');
          if (t.flags.neq) s.invFlags = true;
          s.flgCmp = t.flags.comp;
          s.flgMask = t.flags.mask;
        }
        for (const p of t.ports) apply(slot('tcp'), p);
        continue;
      }
    } else if (m.name === 'udp') {
      const t = udpTests(m.options as UdpOptions);
      if (t !== null) {
        for (const p of t) apply(slot('udp'), p);
        continue;
      }
    }
    const ext = MATCHES.get(m.name);
    const opts = ext ? ext.save(m.options, family) : '';
    slots.push(`-m ${m.name}${opts ? ' ' + opts : ''}`);
  }
  return slots.map((s) => {
    if (s !== 'tcp' && s !== 'udp') return s;
    const opts = saveTcp(mergedOptions(merged[s]!, s === 'tcp'));
    return `-m ${s}${opts ? ' ' + opts : ''}`;
  });
}
