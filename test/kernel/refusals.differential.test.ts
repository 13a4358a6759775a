// What the load refuses, against `netfilter-sim check`, under both back ends (iptables-nft and
// iptables-legacy 1.8.9 on this kernel):
//  1. the catalogue (test/check/refusal-cases.ts): one case per refusal message of iptables'
//     parser and the kernel's checkentry functions, and cases beside them that load; the pinned
//     answer must still be the kernel's, and check must give it;
//  2. a sweep: the first accepted rule of every extension vector file, in every built-in chain of
//     every table, written there and in a user chain jumped to from there: the kernel's answer
//     and check's must agree. (NETFILTER_SIM_REFUSAL_SWEEP=all sweeps every accepted vector
//     rule: about 20,000 loads a back end, four minutes each on two cores.)
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { beforeAll, expect, it } from 'vitest';
import { readVectors } from '../extensions/harness.js';
import { agrees, checkCase, REFUSAL_CASES, type RefusalCase } from '../check/refusal-cases.js';
import { describeKernel, kernelSave, mapLimit, type KernelSaveResult } from './harness.js';

const BACKENDS = ['nft', 'legacy'] as const;
type Backend = (typeof BACKENDS)[number];

function load(c: RefusalCase, backend: Backend): Promise<KernelSaveResult> {
  const setup = c.ipsets !== undefined || c.nfacct !== undefined ? { setup: { ...(c.ipsets !== undefined ? { ipsets: c.ipsets } : {}), ...(c.nfacct !== undefined ? { nfacct: c.nfacct } : {}) } } : {};
  return kernelSave(c.text, c.family ?? 4, { backend, ...setup });
}

const VECTORS = fileURLToPath(new URL('../vectors/extensions/', import.meta.url));
const CHAINS: Readonly<Record<string, readonly string[]>> = {
  filter: ['INPUT', 'FORWARD', 'OUTPUT'],
  nat: ['PREROUTING', 'INPUT', 'OUTPUT', 'POSTROUTING'],
  mangle: ['PREROUTING', 'INPUT', 'FORWARD', 'OUTPUT', 'POSTROUTING'],
  raw: ['PREROUTING', 'OUTPUT'],
  security: ['INPUT', 'FORWARD', 'OUTPUT'],
};

/** The sweep's cases: a rule of each vector file in every built-in chain, directly and via a user chain. */
function sweepCases(all: boolean): RefusalCase[] {
  const out: RefusalCase[] = [];
  for (const f of readdirSync(VECTORS).filter((x) => x.endsWith('.t')).sort()) {
    const family = f.endsWith('-ipv6.t') ? 6 : 4;
    // rateest needs an estimator an earlier RATEEST rule makes: it has cases of its own.
    const ok = readVectors(f, readFileSync(join(VECTORS, f), 'utf8')).filter((v) => v.ok && !/rateest/.test(v.rule));
    for (const v of all ? ok : ok.slice(0, 1)) {
      const sets = [...new Set([...v.rule.matchAll(/--(?:match-set|add-set|del-set) (\S+)/g)].map((m) => m[1]!))];
      const nfacct = [...new Set([...v.rule.matchAll(/--nfacct-name (\S+)/g)].map((m) => m[1]!))];
      const objects = {
        ...(sets.length > 0 ? { ipsets: sets.map((s) => `create ${s} hash:ip family ${family === 6 ? 'inet6' : 'inet'}\n`).join('') } : {}),
        ...(nfacct.length > 0 ? { nfacct } : {}),
      };
      for (const [table, chains] of Object.entries(CHAINS)) {
        for (const chain of chains) {
          const base = { source: `${f}:${v.line}`, family, refused: false, ...objects } as const;
          out.push({ ...base, name: `${f}:${v.line} ${table} ${chain}: ${v.rule}`, text: `*${table}\n-A ${chain} ${v.rule}\nCOMMIT\n` });
          out.push({ ...base, name: `${f}:${v.line} ${table} ${chain} → U: ${v.rule}`, text: `*${table}\n:U - [0:0]\n-A ${chain} -j U\n-A U ${v.rule}\nCOMMIT\n` });
        }
      }
    }
  }
  return out;
}

describeKernel('refusals: the catalogue, loaded, against check', () => {
  const results = new Map<string, KernelSaveResult>();
  beforeAll(async () => {
    for (const backend of BACKENDS) {
      const r = await mapLimit(REFUSAL_CASES, 4, (c) => load(c, backend));
      REFUSAL_CASES.forEach((c, i) => results.set(`${backend} ${c.name}`, r[i]!));
    }
  }, 600_000);

  for (const backend of BACKENDS) {
    it.for(REFUSAL_CASES)(`${backend}: $name`, async (c) => {
      const k = results.get(`${backend} ${c.name}`)!;
      const pinned = backend === 'legacy' ? c.legacy ?? c.refused : c.refused;
      const said = k.ok ? 'loaded' : `refused:\n${k.stderr}`;
      expect(!k.ok, `${c.source}: the kernel ${said}`).toBe(pinned);
      const r = await checkCase(c, backend);
      expect(agrees(c, !k.ok, r), `the kernel ${said}\ncheck exit ${r.code}:\n${r.err}`).toBe(true);
    });
  }
});

describeKernel('refusals: every extension in every chain, against check', () => {
  const cases = sweepCases(process.env['NETFILTER_SIM_REFUSAL_SWEEP'] === 'all');
  const results = new Map<string, KernelSaveResult>();
  beforeAll(async () => {
    for (const backend of BACKENDS) {
      const r = await mapLimit(cases, 4, (c) => load(c, backend));
      cases.forEach((c, i) => results.set(`${backend} ${c.name}`, r[i]!));
    }
  }, 3_600_000);

  for (const backend of BACKENDS) {
    it(`${backend}: check agrees with the load, case by case`, async () => {
      const wrong: string[] = [];
      let refused = 0;
      for (const c of cases) {
        const k = results.get(`${backend} ${c.name}`)!;
        if (!k.ok) refused++;
        const r = await checkCase(c, backend);
        if (!agrees(c, !k.ok, r)) wrong.push(`${c.name}\n  kernel: ${k.ok ? 'loaded' : k.stderr.trim().split('\n').pop()}\n  check: exit ${r.code} ${r.err.split('\n')[0] ?? ''}`);
      }
      expect(wrong, wrong.slice(0, 20).join('\n')).toEqual([]);
      // Both answers occur, often: the sweep is not trivially all-accept or all-refuse.
      expect(refused).toBeGreaterThan(cases.length / 10);
      expect(refused).toBeLessThan(cases.length * 0.9);
    }, 600_000);
  }
});
