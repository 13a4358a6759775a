// kube-proxy's nftables mode (the bench's generator) and the comments nft keeps on tables and set
// elements, against the kernel: each text is loaded with `nft -f` into a throw-away namespace and
// listed back; `formatNftRuleset` must print the same bytes.
import { beforeAll, expect, it } from 'vitest';
import { formatNftRuleset, nftLoadErrors } from '../../src/nftables/index.js';
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

/** Texts the kernel refuses: ours must refuse them at the same line. */
const REFUSED: readonly { readonly name: string; readonly text: string; readonly line: number }[] = [
  {
    name: 'a map key added again with other data',
    text: 'add table ip t\nadd chain ip t a\nadd chain ip t b\nadd map ip t m { type ipv4_addr . inet_service : verdict ; }\nadd element ip t m { 10.0.0.1 . 80 : goto a }\nadd element ip t m { 10.0.0.1 . 80 : goto b }\n',
    line: 6,
  },
  {
    name: 'a map key added again with the same data is fine, other data is not',
    text: 'table ip t {\n\tmap m {\n\t\ttype ipv4_addr : mark\n\t\telements = { 10.0.0.1 : 0x1, 10.0.0.2 : 0x2 }\n\t}\n}\nadd element ip t m { 10.0.0.1 : 0x1 }\nadd element ip t m { 10.0.0.2 : 0x3 }\n',
    line: 8,
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

  let refused: KernelNftResult[] = [];
  beforeAll(async () => {
    refused = await kernelNftListMany(REFUSED.map((c) => c.text));
  }, 300_000);

  it.for(REFUSED.map((c, i) => ({ ...c, i })))('refused: $name', (c) => {
    const k = refused[c.i]!;
    expect(k.ok, 'the kernel took it').toBe(false);
    if (k.ok) return;
    expect(k.stderr).toContain(`:${c.line}:`);
    expect(k.stderr).toContain('File exists');
    const r = nftLoadErrors(c.text);
    expect(r.diagnostics.map((d) => d.span?.line)).toEqual([c.line]);
    expect(r.diagnostics[0]!.message).toContain('File exists');
  });
});
