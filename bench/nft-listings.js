// Reading and listing large real-world nft rule sets: a firewalld-shaped and an fw4-shaped
// rule set (the corpus files' shapes, test/fixtures/nft-corpus, grown to many zones), parsed and
// listed by `formatNftRuleset` (MB/s, the median of 5 runs after one warm-up) next to `nft -c -f` on the same text
// (one run in a fresh network namespace, when root with `nft` and `unshare`; process start and
// the kernel's dry run included).
//
//   npm run build && node bench/nft-listings.js        (writes bench/nft-listings-results.json)
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { formatNftRuleset } from '../dist/index.js';

const log = (s) => process.stderr.write(`${s}\n`);
const ZONES = 400;

/** firewalld 1.x's shape, one zone per interface, each with its pre/log/deny/allow/post chains. */
function firewalld(zones) {
  const out = ['table inet firewalld {'];
  const chains = [];
  const dispatchIn = [];
  const dispatchFwd = [];
  for (let z = 0; z < zones; z++) {
    const zone = `zone${z}`;
    dispatchIn.push(`\t\tiifname "eth${z}" goto filter_IN_${zone}`);
    dispatchFwd.push(`\t\tiifname "eth${z}" goto filter_FWD_${zone}`);
    chains.push(`\tchain filter_IN_${zone} {\n\t\tjump filter_IN_${zone}_pre\n\t\tjump filter_IN_${zone}_log\n\t\tjump filter_IN_${zone}_deny\n\t\tjump filter_IN_${zone}_allow\n\t\tjump filter_IN_${zone}_post\n\t\tmeta l4proto { icmp, ipv6-icmp } accept\n\t}`);
    for (const part of ['pre', 'log', 'deny', 'post']) chains.push(`\tchain filter_IN_${zone}_${part} {\n\t}`);
    chains.push(`\tchain filter_IN_${zone}_allow {\n\t\ttcp dport 22 ct state { new, untracked } accept\n\t\tip6 daddr fe80::/64 udp dport 546 ct state { new, untracked } accept\n\t\ttcp dport ${9000 + z} ct state { new, untracked } accept\n\t\tip saddr 10.${z % 250}.0.0/16 udp dport { 53, 67, 123 } accept\n\t}`);
    chains.push(`\tchain filter_FWD_${zone} {\n\t\tjump filter_FWD_${zone}_allow\n\t}`);
    chains.push(`\tchain filter_FWD_${zone}_allow {\n\t\toifname "eth${z}" accept\n\t}`);
  }
  out.push('\tchain filter_INPUT {\n\t\ttype filter hook input priority filter + 10; policy accept;\n\t\tct state { established, related } accept\n\t\tct status dnat accept\n\t\tiifname "lo" accept\n\t\tct state invalid drop\n\t\tjump filter_INPUT_ZONES\n\t\treject with icmpx admin-prohibited\n\t}');
  out.push('\tchain filter_FORWARD {\n\t\ttype filter hook forward priority filter + 10; policy accept;\n\t\tct state { established, related } accept\n\t\tct status dnat accept\n\t\tiifname "lo" accept\n\t\tct state invalid drop\n\t\tjump filter_FORWARD_ZONES\n\t\treject with icmpx admin-prohibited\n\t}');
  out.push(`\tchain filter_INPUT_ZONES {\n${dispatchIn.join('\n')}\n\t\tgoto filter_IN_zone0\n\t}`);
  out.push(`\tchain filter_FORWARD_ZONES {\n${dispatchFwd.join('\n')}\n\t\tgoto filter_FWD_zone0\n\t}`);
  out.push(...chains, '}', '');
  return out.join('\n');
}

/** OpenWrt fw4's shape, one zone per interface, with its input/forward/output and NAT chains. */
function fw4(zones) {
  const out = ['table inet fw4 {'];
  const dispatch = { input: [], forward: [], output: [], dstnat: [], srcnat: [] };
  const chains = [];
  for (let z = 0; z < zones; z++) {
    const zone = `z${z}`;
    const dev = `br-${z}`;
    dispatch.input.push(`\t\tiifname "${dev}" jump input_${zone} comment "!fw4: Handle ${zone} IPv4/IPv6 input traffic"`);
    dispatch.forward.push(`\t\tiifname "${dev}" jump forward_${zone} comment "!fw4: Handle ${zone} IPv4/IPv6 forward traffic"`);
    dispatch.output.push(`\t\toifname "${dev}" jump output_${zone} comment "!fw4: Handle ${zone} IPv4/IPv6 output traffic"`);
    dispatch.dstnat.push(`\t\tiifname "${dev}" jump dstnat_${zone} comment "!fw4: Handle ${zone} IPv4/IPv6 dstnat traffic"`);
    dispatch.srcnat.push(`\t\toifname "${dev}" jump srcnat_${zone} comment "!fw4: Handle ${zone} IPv4/IPv6 srcnat traffic"`);
    chains.push(`\tchain input_${zone} {\n\t\ttcp dport ${2000 + z} counter accept comment "!fw4: Allow-${zone}"\n\t\tct status dnat accept comment "!fw4: Accept port redirections"\n\t\tjump reject_from_${zone}\n\t}`);
    chains.push(`\tchain forward_${zone} {\n\t\tjump accept_to_wan comment "!fw4: Accept ${zone} to wan forwarding"\n\t\tct status dnat accept comment "!fw4: Accept port forwards"\n\t\tjump reject_to_${zone}\n\t}`);
    chains.push(`\tchain output_${zone} {\n\t\toifname "${dev}" counter accept comment "!fw4: accept ${zone} IPv4/IPv6 traffic"\n\t}`);
    chains.push(`\tchain reject_from_${zone} {\n\t\tiifname "${dev}" counter jump handle_reject comment "!fw4: reject ${zone} IPv4/IPv6 traffic"\n\t}`);
    chains.push(`\tchain reject_to_${zone} {\n\t\toifname "${dev}" counter jump handle_reject comment "!fw4: reject ${zone} IPv4/IPv6 traffic"\n\t}`);
    chains.push(`\tchain dstnat_${zone} {\n\t\tmeta nfproto ipv4 tcp dport ${8000 + z} counter dnat ip to 192.168.${z % 250}.10:80 comment "!fw4: forward ${zone}"\n\t}`);
    chains.push(`\tchain srcnat_${zone} {\n\t\tmeta nfproto ipv4 masquerade comment "!fw4: Masquerade IPv4 ${zone} traffic"\n\t}`);
  }
  out.push(`\tchain input {\n\t\ttype filter hook input priority filter; policy drop;\n\t\tiifname "lo" accept comment "!fw4: Accept traffic from loopback"\n\t\tct state vmap { established : accept, related : accept } comment "!fw4: Handle inbound flows"\n\t\ttcp flags syn / fin,syn,rst,ack jump syn_flood comment "!fw4: Rate limit TCP syn packets"\n${dispatch.input.join('\n')}\n\t\tjump handle_reject\n\t}`);
  out.push(`\tchain forward {\n\t\ttype filter hook forward priority filter; policy drop;\n\t\tct state vmap { established : accept, related : accept } comment "!fw4: Handle forwarded flows"\n${dispatch.forward.join('\n')}\n\t\tjump handle_reject\n\t}`);
  out.push(`\tchain output {\n\t\ttype filter hook output priority filter; policy accept;\n\t\toifname "lo" accept comment "!fw4: Accept traffic towards loopback"\n${dispatch.output.join('\n')}\n\t}`);
  out.push(`\tchain dstnat {\n\t\ttype nat hook prerouting priority dstnat; policy accept;\n${dispatch.dstnat.join('\n')}\n\t}`);
  out.push(`\tchain srcnat {\n\t\ttype nat hook postrouting priority srcnat; policy accept;\n${dispatch.srcnat.join('\n')}\n\t}`);
  out.push('\tchain syn_flood {\n\t\tlimit rate 25/second burst 50 packets return comment "!fw4: Accept SYN packets below rate-limit"\n\t\tdrop comment "!fw4: Drop excess packets"\n\t}');
  out.push('\tchain handle_reject {\n\t\tmeta l4proto tcp reject with tcp reset comment "!fw4: Reject TCP traffic"\n\t\treject comment "!fw4: Reject any other traffic"\n\t}');
  out.push('\tchain accept_to_wan {\n\t\toifname "eth0" counter accept comment "!fw4: accept wan IPv4/IPv6 traffic"\n\t}');
  out.push(...chains, '}', '');
  return out.join('\n');
}

const whyNot = process.getuid?.() !== 0 ? 'not root' : spawnSync('nft', ['--version']).status !== 0 ? 'no nft' : null;
const results = {};
for (const [name, text] of [['firewalld', firewalld(ZONES)], ['fw4', fw4(ZONES)]]) {
  const mb = Buffer.byteLength(text) / 1e6;
  const rules = text.split('\n').filter((l) => /^\t\t[^t]/.test(l) && !l.startsWith('\t\ttype ')).length;
  const times = [];
  let listing = formatNftRuleset(text); // one warm-up run, not timed
  for (let k = 0; k < 5; k++) {
    const t0 = performance.now();
    listing = formatNftRuleset(text);
    times.push(performance.now() - t0);
  }
  times.sort((a, b) => a - b);
  const oursMBps = mb / (times[2] / 1000);
  let nft = null;
  if (whyNot === null) {
    const dir = mkdtempSync(join(tmpdir(), 'nfsim-bench-'));
    const file = join(dir, `${name}.nft`);
    writeFileSync(file, text);
    const t0 = performance.now();
    const r = spawnSync('unshare', ['--net', 'nft', '-c', '-f', file], { encoding: 'utf8' });
    const ms = performance.now() - t0;
    const listed = spawnSync('unshare', ['--net', 'sh', '-c', 'nft -f "$0" && nft list ruleset', file], { encoding: 'utf8' });
    rmSync(dir, { recursive: true, force: true });
    if (r.status !== 0) throw new Error(`nft -c -f refused the ${name} input: ${r.stderr}`);
    nft = { ms, MBps: mb / (ms / 1000), sameListing: listed.stdout === listing };
  }
  results[name] = { zones: ZONES, bytes: Buffer.byteLength(text), rules, parseAndListMs: times[2], parseAndListMBps: oursMBps, nft: nft ?? whyNot };
  log(`${name}: ${(mb).toFixed(2)} MB, ${rules} rules; parse + list ${times[2].toFixed(0)} ms (${oursMBps.toFixed(1)} MB/s)` +
    (nft ? `; nft -c -f ${nft.ms.toFixed(0)} ms (${nft.MBps.toFixed(2)} MB/s); listing identical to nft's: ${nft.sameListing}` : `; nft: ${whyNot}`));
}
results.loadAverage = (await import('node:os')).loadavg()[0];
log(`load average (1 min) at the end: ${results.loadAverage.toFixed(2)}`);
writeFileSync(new URL('./nft-listings-results.json', import.meta.url), JSON.stringify(results, null, 2) + '\n');
