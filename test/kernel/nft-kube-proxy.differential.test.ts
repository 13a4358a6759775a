// kube-proxy's nftables mode (the bench's generator) and the comments nft keeps on tables and set
// elements, against the kernel: each text is loaded with `nft -f` into a throw-away namespace and
// listed back; `formatNftRuleset` must print the same bytes.
import { beforeAll, expect, it } from 'vitest';
import { formatNftRuleset } from '../../src/nftables/index.js';
import { describeNftKernel, kernelNftListMany, type KernelNftResult } from './harness.js';
import { kubeProxyNftRules, kubeProxyServices } from '../../bench/kube-proxy.js';

const CASES: readonly { readonly name: string; readonly text: string }[] = [
  ...[[20, 1], [60, 2], [150, 3]].map(([n, seed]) => ({ name: `kube-proxy nft, ${n} services`, text: kubeProxyNftRules(kubeProxyServices(n!, seed)) })),
  { name: 'table comment, block form', text: 'table ip t {\n\tcomment "a table"\n\tchain c {\n\t}\n}\n' },
  { name: 'table comment only', text: 'table inet t {\n\tcomment "x"\n}\n' },
  { name: 'table comment, command form', text: 'add table ip6 t { comment "rules for t" ; }\nadd chain ip6 t c\n' },
  { name: 'element comments in a set', text: 'table ip t {\n\tset s {\n\t\ttype ipv4_addr\n\t\telements = { 1.1.1.1 comment "one", 2.2.2.2, 3.3.3.3 comment "three" }\n\t}\n}\n' },
  {
    name: 'element comments in a verdict map, added later',
    text: 'add table ip t\nadd chain ip t c\nadd map ip t m { type ipv4_addr . inet_proto . inet_service : verdict ; }\nadd element ip t m { 10.0.0.1 . tcp . 80 comment "ns/a:http" : goto c }\nadd element ip t m { 10.0.0.2 . udp . 53 : jump c, 10.0.0.3 . tcp . 443 comment "b" : drop }\n',
  },
];

describeNftKernel('fmt differential: kube-proxy nftables mode and comments', () => {
  let results: KernelNftResult[] = [];
  beforeAll(async () => {
    results = await kernelNftListMany(CASES.map((c) => c.text));
  }, 300_000);

  it.for(CASES.map((c, i) => ({ ...c, i })))('$name', (c) => {
    const k = results[c.i]!;
    if (!k.ok) expect.fail(`the kernel refused ${c.name}:\n${k.stderr}`);
    expect(formatNftRuleset(c.text)).toBe(k.list);
  });
});
