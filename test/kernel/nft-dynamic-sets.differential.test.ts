// Sets filled from the packet path (`update @set`, `add @set`) and default set timeouts, against
// the kernel: `nft -f` then `nft list ruleset` must print what formatNftRuleset prints. (The
// kernel keeps a timeout in jiffies: one that is not a whole multiple of a tick, 250ms at HZ=250
// say, lists back rounded — 248ms — which formatNftRuleset cannot know; whole seconds are exact.)
import { beforeAll, expect, it } from 'vitest';
import { formatNftRuleset } from '../../src/nftables/index.js';
import { describeNftKernel, kernelNftListMany, type KernelNftResult } from './harness.js';
import { DYNAMIC_SETS_INPUT } from '../nftables/dynamic-sets-cases.js';

const CASES = [
  { name: 'update/add statements, sizes, flags, timeouts', text: DYNAMIC_SETS_INPUT },
  { name: 'timeouts in every unit', text: 'add table ip t\n' + ['1s', '59s', '60s', '3600s', '86400s', '90061s', '1d2h3m4s'].map((x, i) => `add set ip t s${i} { type ipv4_addr ; flags timeout ; timeout ${x} ; }`).join('\n') + '\n' },
  { name: 'the timeout flag with and without a default timeout', text: 'add table ip t\nadd set ip t a { type ipv4_addr ; flags timeout ; }\nadd set ip t b { type ipv4_addr ; flags timeout ; timeout 5s ; }\nadd set ip t c { type ipv4_addr ; flags dynamic,timeout ; timeout 5s ; }\nadd set ip t d { type ipv4_addr ; flags interval,timeout ; timeout 5s ; }\nadd set ip t e { type ipv4_addr ; flags constant,interval ; }\n' },
  { name: 'an IPv6 affinity set as kube-proxy writes it', text: 'add table ip6 kube-proxy\nadd chain ip6 kube-proxy ep\nadd set ip6 kube-proxy affinity-X { type ipv6_addr ; flags dynamic,timeout ; timeout 10800s ; }\nadd rule ip6 kube-proxy ep update @affinity-X { ip6 saddr }\nadd rule ip6 kube-proxy ep ip6 saddr @affinity-X accept\n' },
];

describeNftKernel('nft: sets filled from the packet path, against the kernel', () => {
  let results: KernelNftResult[] = [];
  beforeAll(async () => {
    results = await kernelNftListMany(CASES.map((c) => c.text));
  }, 120_000);
  it.for(CASES.map((c, i) => ({ ...c, i })))('$name', (c) => {
    const k = results[c.i]!;
    if (!k.ok) expect.fail(k.stderr);
    expect(formatNftRuleset(c.text)).toBe(k.list);
  });
});
