// Every extension vector (ours and iptables' own .t files) against the kernel: the rule is
// loaded with iptables-restore into a throw-away namespace and printed back with iptables-save
// (1.8.9 here). Where the kernel accepts, our parse + print must give the same rule line; where
// it refuses, we must refuse too.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { beforeAll, expect, it } from 'vitest';
import { TARGETS } from '../../src/iptables/extensions/registry.js';
import { parseRuleArgs, printRule, readVectors, runRule, tokenize } from '../extensions/harness.js';
import { describeShared, optionalShared, sharedPath } from '../shared-data.js';
import { describeKernel, kernelSaveMany, type KernelSaveResult } from './harness.js';
import { check } from '../../src/iptables/check/index.js';
import { printIptablesSave } from '../../src/iptables/print/save.js';
import { parseIptablesSave } from '../../src/iptables/syntax/save.js';
import { RATEEST_PREAMBLE, RATEEST_TABLES, RATEEST_VECTORS } from '../extensions/rateest-vectors.js';

interface Case {
  readonly id: string;
  readonly family: 4 | 6;
  readonly table: string;
  readonly chain: string;
  readonly rule: string;
}

const OURS = fileURLToPath(new URL('../vectors/extensions/', import.meta.url));
const UPSTREAM_REL = 'corpus/iptables-extension-tests';
const UPSTREAM = sharedPath(UPSTREAM_REL);
const NOT_EXTENSIONS = new Set(['libipt_standard.t', 'libxt_standard.t']);

function collect(withUpstream: boolean): Case[] {
  const seen = new Set<string>();
  const out: Case[] = [];
  const add = (dir: string, file: string, family: 4 | 6): void => {
    for (const v of readVectors(file, readFileSync(join(dir, file), 'utf8'))) {
      for (const chain of v.chains) {
        const key = `${family} ${v.table} ${chain} ${v.rule}`;
        if (seen.has(key)) continue;
        seen.add(key);
        out.push({ id: `${file}:${v.line} ${v.table}/${chain}`, family, table: v.table, chain, rule: v.rule });
      }
    }
  };
  for (const f of readdirSync(OURS).filter((f) => f.endsWith('.t')).sort()) add(OURS, f, f.endsWith('-ipv6.t') ? 6 : 4);
  if (withUpstream) {
    for (const f of readdirSync(UPSTREAM).filter((f) => f.endsWith('.t') && !NOT_EXTENSIONS.has(f)).sort()) {
      add(UPSTREAM, f, f.startsWith('libip6t_') ? 6 : 4);
    }
  }
  return out;
}

/** The saved line of the one rule, without `-A CHAIN `. */
function savedRule(save: string, chain: string): string | undefined {
  const prefix = `-A ${chain} `;
  const line = save.split('\n').find((l) => l.startsWith(prefix) || l === `-A ${chain}`);
  return line === undefined ? undefined : line.slice(prefix.length);
}


const NFACCT_NAME = /--nfacct-name (\S+)/;

describeKernel('extension vectors vs iptables-save', () => {
  const cases = collect(optionalShared("iptables' own extension vectors", [UPSTREAM_REL]));
  const kernel = new Map<Case, KernelSaveResult>();
  beforeAll(async () => {
    for (const family of [4, 6] as const) {
      // The accounting objects nfacct rules name exist (nfacct add), as they do where such rules load.
      for (const withAcct of [false, true]) {
        const mine = cases.filter((c) => c.family === family && NFACCT_NAME.test(c.rule) === withAcct);
        const texts = mine.map((c) => `*${c.table}\n-A ${c.chain} ${c.rule}\nCOMMIT\n`);
        const names = [...new Set(mine.map((c) => NFACCT_NAME.exec(c.rule)?.[1]).filter((n): n is string => n !== undefined))];
        const results = await kernelSaveMany(texts, family, withAcct ? { setup: { nfacct: names } } : {});
        mine.forEach((c, i) => kernel.set(c, results[i]!));
      }
    }
  }, 600_000);

  it.for(cases)('$id $rule', (c) => {
    const k = kernel.get(c)!;
    const o = runRule(c.rule, { family: c.family, table: c.table, chain: c.chain });
    if (!k.ok) {
      expect(o.ok, `kernel refused (${k.stderr.trim()}) but we accepted: ${o.ok ? o.saved : ''}`).toBe(false);
      return;
    }
    expect(o, `kernel accepted as: ${savedRule(k.save, c.chain)}`).toEqual({ ok: true, saved: savedRule(k.save, c.chain) });
  });
});

/** The older dumps of the corpus (iptables 1.4-1.6 output, hand-written files). */
const OLD_DUMPS: readonly (readonly [string, 4 | 6])[] = [
  ['netnetwork_tum-i8-firewall_2016-06-27.iptables-save', 4],
  ['netnetwork_medium-company_2016-01-31.iptables-save', 4],
  ['netnetwork_docker-topos4.1.iptables-save', 4],
  ['netnetwork_serverfault-769294_openvpn-as.iptables-save', 4],
  ['netnetwork_synology-ds414_2016-07.ip6tables-save', 6],
  ['iptsemantics_parser-stress.iptables-save', 4],
  ['iptsemantics_parser-stress.ip6tables-save', 6],
  ['moby_usernet-portmap.derived.iptables-save', 4],
  ['netnetwork_majek-vpn_iptables.up.rules', 4],
];

const BUILTIN = new Set(['PREROUTING', 'INPUT', 'FORWARD', 'OUTPUT', 'POSTROUTING']);
const VERDICTS = new Set(['ACCEPT', 'DROP', 'RETURN']);

interface CorpusCase {
  readonly id: string;
  readonly family: 4 | 6;
  readonly text: string;
  readonly chain: string;
  readonly ours: string;
}

/**
 * Every distinct rule of the older dumps that uses an extension, as we print it (jumps to user
 * chains dropped so that the rule loads alone; the anonymised MAC placeholder replaced by a real
 * address; rules iptables refuses skipped).
 */
function corpusCases(): CorpusCase[] {
  const dir = sharedPath('corpus');
  const seen = new Set<string>();
  const out: CorpusCase[] = [];
  for (const [file, family] of OLD_DUMPS) {
    const path = join(dir, file);
    let table = 'filter';
    readFileSync(path, 'utf8').split('\n').forEach((raw, idx) => {
      const l = raw.trim();
      const t = /^\*(\S+)/.exec(l);
      if (t) table = t[1]!;
      if (!l.startsWith('-A ') || !/ -m | -j [A-Z]+/.test(l)) return;
      let toks = tokenize(l.replace(/--mac-source XX:XX:XX:XX:XX:XX/, '--mac-source 00:11:22:33:44:55'));
      const chain = toks[1]!.text;
      toks = toks.slice(2);
      const j = toks.findIndex((x) => x.text === '-j' || x.text === '-g');
      if (j >= 0 && !VERDICTS.has(toks[j + 1]!.text) && !TARGETS.has(toks[j + 1]!.text)) toks = toks.slice(0, j);
      // Addresses are the command parser's business; keep to rules whose -s/-d already print canonically.
      const sd = toks.findIndex((x, i) => (x.text === '-s' || x.text === '-d' || x.text === '--src') && !toks[i + 1]!.text.includes('/'));
      if (sd >= 0) return;
      let ours: string;
      try {
        ours = printRule(parseRuleArgs(toks, { family, table, chain, mode: 'strict' }), family);
      } catch {
        return; // refused by us; the corpus tests say which lines iptables refuses too
      }
      const key = `${family} ${table} ${ours}`;
      if (seen.has(key)) return;
      seen.add(key);
      const decl = BUILTIN.has(chain) ? '' : `:${chain} - [0:0]\n`;
      out.push({ id: `${file}:${idx + 1}`, family, chain, ours, text: `*${table}\n${decl}-A ${chain} ${ours}\nCOMMIT\n` });
    });
  }
  return out;
}

describeKernel('corpus rules with extensions vs iptables-save', () => {
  describeShared('the older dumps of ../shared/corpus', OLD_DUMPS.map(([file]) => `corpus/${file}`), corpusSuite);
});

function corpusSuite(): void {
  const cases = corpusCases();
  const kernel = new Map<CorpusCase, KernelSaveResult>();
  beforeAll(async () => {
    for (const family of [4, 6] as const) {
      const mine = cases.filter((c) => c.family === family);
      const results = await kernelSaveMany(mine.map((c) => c.text), family);
      mine.forEach((c, i) => kernel.set(c, results[i]!));
    }
  }, 600_000);

  it('has the corpus', () => {
    expect(cases.length).toBeGreaterThan(3000);
  });
  it.for(cases)('$id $ours', (c) => {
    const k = kernel.get(c)!;
    expect(k.ok, k.ok ? '' : k.stderr).toBe(true);
    if (k.ok) expect(c.ours).toBe(savedRule(k.save, c.chain));
  });
}

// rateest names estimators that earlier RATEEST rules must create, so its vectors are loaded as a
// whole table after them (IPv4 and IPv6): the kernel's refusals (no comparison, neither bps nor
// pps, an unknown estimator) and iptables-save's reordering must be ours.
describeKernel('rateest vectors (after their RATEEST rules) vs iptables-save', () => {
  const cases = ([4, 6] as const).flatMap((family) => RATEEST_VECTORS.map(([rule]) => ({ family, rule, text: `*mangle\n${[...RATEEST_PREAMBLE, `-A OUTPUT ${rule}`].join('\n')}\nCOMMIT\n` })));
  const kernel = new Map<(typeof cases)[number], KernelSaveResult>();
  beforeAll(async () => {
    for (const family of [4, 6] as const) {
      const mine = cases.filter((c) => c.family === family);
      const results = await kernelSaveMany(mine.map((c) => c.text), family);
      mine.forEach((c, i) => kernel.set(c, results[i]!));
    }
  }, 600_000);
  it.for(cases)('IPv$family $rule', (c) => {
    const k = kernel.get(c)!;
    const parsed = parseIptablesSave(c.text, { family: c.family, mode: 'strict' });
    const errors = [...parsed.diagnostics, ...check(parsed.ruleset)].filter((d) => d.severity === 'error');
    const ours = errors.length > 0 ? null : printIptablesSave(parsed.ruleset).split('\n').filter((l) => l.startsWith('-A OUTPUT '));
    if (!k.ok) {
      expect(ours, `kernel refused (${k.stderr.trim()}) but we accepted`).toBeNull();
      return;
    }
    expect(ours, errors.map((d) => d.message).join('; ')).toEqual(k.save.split('\n').filter((l) => l.startsWith('-A OUTPUT ')));
  });
});

describeKernel('rate estimator order and agreement vs the kernel', () => {
  const cases = RATEEST_TABLES.map(([lines, loads], i) => ({ i, loads, text: `*mangle\n${lines.join('\n')}\nCOMMIT\n` }));
  const kernel = new Map<(typeof cases)[number], KernelSaveResult>();
  beforeAll(async () => {
    const results = await kernelSaveMany(cases.map((c) => c.text), 4);
    cases.forEach((c, i) => kernel.set(c, results[i]!));
  }, 600_000);
  it.for(cases)('table $i', (c) => {
    const k = kernel.get(c)!;
    const parsed = parseIptablesSave(c.text, { family: 4, mode: 'strict' });
    const errors = [...parsed.diagnostics, ...check(parsed.ruleset)].filter((d) => d.severity === 'error');
    expect(k.ok, k.ok ? '' : k.stderr).toBe(c.loads);
    expect(errors.length === 0, errors.map((d) => d.message).join('; ')).toBe(k.ok);
    if (k.ok) expect(printIptablesSave(parsed.ruleset).split('\n').filter((l) => l.startsWith('-A '))).toEqual(k.save.split('\n').filter((l) => l.startsWith('-A ')));
  });
});
