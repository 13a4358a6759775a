/**
 * Every `-m NAME` and `-j NAME` in the shared corpus and vectors: rules in iptables-save output
 * must print back byte for byte; restore inputs (goldens, `.rules`, recorded commands) must
 * parse. The vectors are those of test/fixtures; the corpus is read in place from ../shared/corpus
 * (some of it is non-commercial or GPL, so it is never copied into the repository; a clone without
 * it leaves it out, see test/shared-data.ts).
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { optionalShared, sharedPath } from '../shared-data.js';
import { parseRuleArgs, printRule, shellWords, tokenize, type Tok } from './harness.js';

const FIXTURES = join(import.meta.dirname, '..', 'fixtures');
const CORPUS = sharedPath('corpus');

function walk(dir: string): string[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir).flatMap((f) => {
    const p = join(dir, f);
    return statSync(p).isDirectory() ? walk(p) : [p];
  });
}

interface RuleLine {
  readonly file: string;
  readonly line: number;
  readonly family: 4 | 6;
  readonly table: string;
  readonly text: string;
  /** The rule as argv tokens from `-A`/`-I`. */
  readonly tokens: Tok[];
}

/**
 * Rule lines of a save/restore text. Istio goldens hold the IPv4 tables, then the IPv6 ones;
 * the IPv6 part starts at the first table whose name is not greater than the previous one.
 */
function ruleLines(file: string, family: 4 | 6, splitFamilies: boolean): RuleLine[] {
  const out: RuleLine[] = [];
  let table = 'filter';
  let fam = family;
  let prevTable = '';
  readFileSync(file, 'utf8').split('\n').forEach((raw, idx) => {
    const l = raw.replace(/\s+$/, '');
    const t = /^\*\s*(\S+)/.exec(l);
    if (t) {
      table = t[1]!;
      if (splitFamilies && prevTable !== '' && table <= prevTable) fam = 6;
      prevTable = table;
      return;
    }
    let tokens: Tok[];
    try {
      tokens = file.endsWith('.commands') ? shellWords(l) : tokenize(l);
    } catch {
      return;
    }
    const k = tokens.findIndex((x) => x.text === '-A' || x.text === '-I');
    if (k < 0 || l.startsWith('#')) return;
    const tt = tokens.findIndex((x) => x.text === '-t');
    out.push({ file, line: idx + 1, family: fam, table: tt >= 0 ? tokens[tt + 1]!.text : table, text: l, tokens: tokens.slice(k) });
  });
  return out;
}

/** Splits `-A CHAIN rest` / `-I CHAIN [N] rest` and drops `-t table`. */
function ruleArgs(tokens: readonly Tok[]): { chain: string; args: Tok[] } {
  const chain = tokens[1]!.text;
  let rest = tokens.slice(2);
  if (tokens[0]!.text === '-I' && /^\d+$/.test(rest[0]?.text ?? '')) rest = rest.slice(1);
  const t = rest.findIndex((x) => x.text === '-t');
  if (t >= 0) rest = [...rest.slice(0, t), ...rest.slice(t + 2)];
  return { chain, args: rest };
}

const famOf = (f: string): 4 | 6 => (/\.(ip6tables-save|save6)$/.test(f) ? 6 : 4);

/** iptables-save output of the vectors: must print back exactly. */
const SAVED_VECTORS = [
  ...walk(join(FIXTURES, 'linkerd')).filter((f) => /\.(save|save6)$/.test(f)),
  ...walk(join(FIXTURES, 'istio')).filter((f) => /\.(save|save6)$/.test(f)),
  ...walk(join(FIXTURES, 'kubernetes')).filter((f) => f.endsWith('.kernel-save')),
];
/** Restore input and recorded commands of the vectors: must parse. */
const INPUT_VECTORS = [
  ...walk(join(FIXTURES, 'istio')).filter((f) => /\.(golden|restore)$/.test(f) && !f.includes('/builder/')),
  ...walk(join(FIXTURES, 'linkerd')).filter((f) => f.endsWith('.commands')),
  ...walk(join(FIXTURES, 'kubernetes')).filter((f) => f.endsWith('.rules')),
];
// The kube-proxy fixture is also in the corpus; test/fixtures/kubernetes holds the copy read above.
const notCopied = (f: string): boolean => !f.includes('kubernetes_kube-proxy_tracepacket-fixture');
/** The same from ../shared/corpus (left out, visibly, where it is absent). */
const SAVED_CORPUS = (): string[] => walk(CORPUS).filter((f) => /\.(kernel-save|iptables-save|ip6tables-save)$/.test(f) && !f.includes('iptsemantics_') && notCopied(f));
const INPUT_CORPUS = (): string[] => walk(CORPUS).filter((f) => (/\.(rules|golden)$/.test(f) || f.includes('iptsemantics_')) && notCopied(f));

/**
 * Lines we knowingly print differently, with the reason. Keys are `file-suffix:line`.
 */
const KNOWN_DIFFERENCES: readonly { readonly match: RegExp; readonly why: string }[] = [
  {
    match: /netnetwork_synology-ds414_2016-07\.ip6tables-save:.*-p icmpv6 /,
    why: 'rule-level -p (not an extension): the old dump says icmpv6, our -p printer says ipv6-icmp',
  },
  {
    match: /netnetwork_tum-i8-firewall_2016-06-27\.iptables-save:.*-m recent /,
    why: 'iptables 1.4.14 saved recent revision 0 (no --mask); 1.8 saves revision 1 and prints --mask 255.255.255.255',
  },
];

/** Restore-input lines iptables itself refuses (the tests expect the refusal). */
const REFUSED: readonly { readonly match: RegExp; readonly why: string }[] = [
  { match: /iptsemantics_parser-stress\.iptables-save:.*--something-else/, why: 'unknown option: iptables refuses it' },
  { match: /iptsemantics_parser-stress\.iptables-save:.*-m icmp6/, why: 'icmp6 is an ip6tables match; iptables cannot load it' },
  { match: /owner-groups(-exclude)?\.golden:.*--gid-owner (java|ftp)/, why: 'group names unknown to the Debian base group file (kernel-save/rejected.json)' },
  { match: /kube-proxy_tracepacket-fixture\.rules:\d+ .*--comment kubernetes [a-z]/, why: 'unquoted multi-word comment: iptables-restore fails on the second word (corpus README)' },
  { match: /error-all-invalid-ports\.commands:.*--dports ''/, why: 'empty port list: "invalid port/service" (proxy-init error case)' },
];

const savedLines = (files: readonly string[]): RuleLine[] => files.flatMap((f) => ruleLines(f, famOf(f), false));
const inputLines = (files: readonly string[]): RuleLine[] => files.flatMap((f) => ruleLines(f, famOf(f), f.endsWith('.golden') || f.endsWith('.restore')));

const key = (r: RuleLine): string => `${r.file.startsWith(CORPUS) ? r.file.slice(CORPUS.length - 'corpus'.length) : r.file.slice(FIXTURES.length + 1)}:${r.line} ${r.text}`;

describe('corpus: iptables-save output prints back byte for byte', () => {
  const withCorpus = optionalShared('the dumps of ../shared/corpus', ['corpus']);
  const saved = savedLines([...SAVED_VECTORS, ...(withCorpus ? SAVED_CORPUS() : [])]);
  it('has the vectors', () => {
    expect(savedLines(SAVED_VECTORS).length).toBeGreaterThan(1000);
  });
  if (withCorpus) {
    it('has the corpus', () => {
      expect(saved.length).toBeGreaterThan(6000);
    });
  }
  const cases = saved.filter((r) => !KNOWN_DIFFERENCES.some((k) => k.match.test(key(r))));
  it.each(cases.map((r) => [key(r), r] as const))('%s', (_k, r) => {
    const { chain, args } = ruleArgs(r.tokens);
    const parsed = parseRuleArgs(args, { family: r.family, table: r.table, chain, mode: 'lenient' });
    const printed = `-A ${chain}${args.length ? ' ' : ''}${printRule(parsed, r.family)}`;
    expect(printed).toBe(r.text.replace(/^\[\d+:\d+\] /, ''));
  });
});

describe('corpus: restore input and recorded commands parse', () => {
  const withCorpus = optionalShared('the dumps of ../shared/corpus', ['corpus']);
  const inputs = inputLines([...INPUT_VECTORS, ...(withCorpus ? INPUT_CORPUS() : [])]);
  it.each(inputs.map((r) => [key(r), r] as const))('%s', (_k, r) => {
    const { chain, args } = ruleArgs(r.tokens);
    const run = (): unknown => parseRuleArgs(args, { family: r.family, table: r.table, chain, mode: 'strict' });
    if (REFUSED.some((k) => k.match.test(key(r)))) expect(run).toThrow();
    else expect(run).not.toThrow();
  });
});
