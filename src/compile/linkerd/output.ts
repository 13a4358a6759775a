/**
 * The rule sets a proxy-init or linkerd-cni run leaves, and their renderings: `save` (what
 * `iptables-save -t nat` prints afterwards), `restore` (equivalent `iptables-restore` input),
 * `commands` and `json`. The rule sets come from replaying the run's commands on the starting
 * nat table through the shared command parser, and print through the canonical printer.
 *
 * @module
 */
import { NetfilterSimError } from '../../model/errors.js';
import { BUILTIN_CHAINS, type Ruleset, type Table } from '../../model/types.js';
import { printIptablesSave } from '../../iptables/print/save.js';
import { applyIptablesCommands } from '../../iptables/syntax/apply.js';
import { parseIptablesSave } from '../../iptables/syntax/save.js';
import type { LinkerdCniResult } from './cni.js';
import type { ProxyInitResult } from './proxy-init.js';
import { expectFields } from '../../model/guard.js';

/**
 * The output formats of `compile linkerd` / `compile linkerd-cni`.
 *
 * @example
 * ```ts
 * const format: LinkerdOutputFormat = 'restore';
 * process.stdout.write(renderLinkerd(result, format));
 * ```
 */
export type LinkerdOutputFormat = 'save' | 'restore' | 'commands' | 'json';

/**
 * The nat table of one family after the run.
 *
 * @example
 * ```ts
 * for (const { family, saveBin, ruleset } of linkerdRulesets(result)) console.log(family, saveBin, ruleset.tables.length);
 * ```
 */
export interface LinkerdRuleset {
  readonly family: 4 | 6;
  /** The save binary of that pass (`iptables-nft-save`, …). */
  readonly saveBin: string;
  readonly ruleset: Ruleset;
}

function freshNat(): Table {
  return {
    name: 'nat',
    chains: BUILTIN_CHAINS.nat.map((name) => ({
      name,
      builtin: true,
      policy: 'ACCEPT' as const,
      counters: { packets: 0, bytes: 0 },
      rules: [],
    })),
  };
}

function initialRuleset(family: 4 | 6, existing: string | undefined): Ruleset {
  if (existing === undefined) return { family, tables: [freshNat()] };
  const { ruleset, diagnostics } = parseIptablesSave(existing, { family, mode: 'lenient' });
  const errors = diagnostics.filter((d) => d.severity === 'error');
  if (errors.length > 0) throw new NetfilterSimError(errors, { file: 'existing' });
  if (ruleset.tables.some((t) => t.name === 'nat')) return ruleset;
  return { ...ruleset, tables: [...ruleset.tables, freshNat()] };
}

// What the shared parser is given: the command as iptables understood it. `-w` only waits for the
// xtables lock, and iptables ignores what follows `-N NAME` (releases before v2.2.0 put a comment there).
function normalize(argv: readonly string[]): string[] {
  const out = argv[argv.length - 1] === '-w' ? argv.slice(0, -1) : [...argv];
  const n = out.indexOf('-N');
  return n >= 0 ? out.slice(0, n + 2) : out;
}

/**
 * The nat table of each family after the run: the IPv4 pass, then the IPv6 pass when the
 * configuration has one (an untouched table when that pass never ran). Commands that failed are
 * not applied; under `--simulate` none is.
 *
 * @example
 * ```ts
 * const [v4] = linkerdRulesets(compileProxyInit({ incomingProxyPort: 4143, outgoingProxyPort: 4140, ipv6: false }));
 * v4.ruleset.tables[0].chains.map((c) => c.name); // ['PREROUTING', 'INPUT', 'OUTPUT', 'POSTROUTING', 'PROXY_INIT_OUTPUT', 'PROXY_INIT_REDIRECT']
 * ```
 */
export function linkerdRulesets(result: ProxyInitResult | LinkerdCniResult): LinkerdRuleset[] {
  expectFields(result, { runs: 'array', passes: 'array' }, 'result');
  const families: (4 | 6)[] = result.ipv6 ? [4, 6] : [4];
  return families.map((family) => {
    const run = result.runs.find((r) => r.family === family);
    const pass = result.passes.find((p) => p.family === family);
    const saveBin = run?.saveBin ?? pass?.saveBin ?? (family === 4 ? 'iptables-save' : 'ip6tables-save');
    // A pass that never ran (an earlier failure, a skipped pod) leaves the table as it was.
    const initial = initialRuleset(family, run ? run.existing : pass?.existing);
    const commands = !run || !run.executed
      ? []
      : run.argv.filter((_, i) => !run.failed.includes(i)).map(normalize);
    const ruleset = applyIptablesCommands(initial, commands, { family, mode: 'lenient' });
    return { family, saveBin, ruleset };
  });
}

function saveBody(ruleset: Ruleset): string {
  const text = printIptablesSave(ruleset, { tables: ['nat'] });
  return text.split('\n').filter((l) => !l.startsWith('#')).join('\n');
}

/**
 * Renders a run: `commands` (one line each, as run), `save` (the `iptables-save -t nat` body of
 * each family, IPv4 first), `restore` (the same bodies as `iptables-restore` input, each headed by
 * a comment naming the restore binary — proxy-init itself never uses iptables-restore), `json`
 * (the rule sets as an array).
 *
 * @example
 * ```ts
 * renderLinkerd(compileProxyInit({ incomingProxyPort: 4143, outgoingProxyPort: 4140, ipv6: false }), 'save');
 * // '*nat\n:PREROUTING ACCEPT [0:0]\n…\nCOMMIT\n'
 * ```
 */
export function renderLinkerd(result: ProxyInitResult | LinkerdCniResult, format: LinkerdOutputFormat): string {
  switch (format) {
    case 'commands':
      return result.commands.map((l) => `${l}\n`).join('');
    case 'save':
      return linkerdRulesets(result).map((r) => saveBody(r.ruleset)).join('');
    case 'restore':
      return linkerdRulesets(result)
        .map((r) => {
          const restoreBin = r.saveBin.replace(/-save$/, '-restore');
          return `# ${restoreBin} input equivalent to the commands linkerd proxy-init runs (it never uses iptables-restore itself)\n${saveBody(r.ruleset)}`;
        })
        .join('');
    case 'json':
      return `${JSON.stringify(linkerdRulesets(result).map((r) => r.ruleset), null, 2)}\n`;
  }
}
