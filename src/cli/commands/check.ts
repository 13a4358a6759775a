/**
 * `netfilter-sim check [-4|-6] [--lenient] [--backend nft|legacy] [--json] FILE|-`
 * @internal
 */
import { parseArgs } from 'node:util';
import { check } from '../../check/index.js';
import { formatDiagnostic, type Diagnostic } from '../../errors.js';
import { parseIptablesSave } from '../../syntax/save.js';
import { EXIT_INPUT, EXIT_OK, UsageError, type CliIO } from '../io.js';
import { writeJson } from '../json.js';

export const CHECK_HELP = `Usage: netfilter-sim check [-4 | -6] [--lenient] [--backend nft|legacy] [--json] FILE|-

Checks iptables-save / iptables-restore text as iptables-restore and the kernel would when
loading it: syntax, then chains that do not exist, loops (ELOOP), jump depth, chain-name limits,
policies, and extensions used where the kernel refuses them (REDIRECT outside nat
PREROUTING/OUTPUT, owner outside OUTPUT/POSTROUTING, TPROXY outside mangle PREROUTING, …).

  -4, -6          iptables (default) or ip6tables
  --lenient       also accept what generators feed fake parsers
  --backend B     nft (default: also the 16-level jump limit) or legacy
  --json          print {"ok": bool, "diagnostics": [...]} instead

Exit status: 0 no errors (warnings may be printed), 1 errors found, 2 usage.

Examples:
  iptables-save | netfilter-sim check -
  netfilter-sim check --backend legacy node.rules
`;

export async function runCheck(args: string[], io: CliIO): Promise<number> {
  const { values, positionals } = parseArgs({
    args,
    allowPositionals: true,
    options: {
      '4': { type: 'boolean', short: '4' },
      '6': { type: 'boolean', short: '6' },
      lenient: { type: 'boolean' },
      backend: { type: 'string' },
      json: { type: 'boolean' },
      help: { type: 'boolean', short: 'h' },
    },
  });
  if (values.help) {
    io.stdout(CHECK_HELP);
    return EXIT_OK;
  }
  if (positionals.length !== 1) throw new UsageError('check takes exactly one FILE (or - for standard input)');
  const backend = values.backend ?? 'nft';
  if (backend !== 'nft' && backend !== 'legacy') throw new UsageError(`--backend must be nft or legacy, not "${backend}"`);
  const file = positionals[0]!;
  const name = file === '-' ? '<stdin>' : file;
  const text = io.readFile(file);
  const parsed = parseIptablesSave(text, { family: values['6'] ? 6 : 4, mode: values.lenient ? 'lenient' : 'strict' });
  const diagnostics: Diagnostic[] = [...parsed.diagnostics];
  if (!parsed.diagnostics.some((d) => d.severity === 'error')) diagnostics.push(...check(parsed.ruleset, { backend }));
  // A chain that does not exist stops the load: report it as an error here.
  const normalized = diagnostics.map((d) => (d.code === 'UNKNOWN_CHAIN' || d.code === 'BAD_RULE_NUMBER' || d.code === 'CHAIN_EXISTS' || d.code === 'RULE_NOT_FOUND' ? { ...d, severity: 'error' as const } : d));
  const errors = normalized.filter((d) => d.severity === 'error');
  if (values.json) {
    writeJson({ ok: errors.length === 0, diagnostics: normalized }, io.stdout);
  } else {
    for (const d of normalized) io.stderr(formatDiagnostic(d.severity === 'warning' ? { ...d, message: `warning: ${d.message}` } : d, text, name) + '\n');
    if (errors.length === 0) io.stdout(`${name}: ok (${countRules(parsed.ruleset)} rules${normalized.length ? `, ${normalized.length} warnings` : ''})\n`);
  }
  return errors.length === 0 ? EXIT_OK : EXIT_INPUT;
}

function countRules(rs: { tables: readonly { chains: readonly { rules: readonly unknown[] }[] }[] }): number {
  let n = 0;
  for (const t of rs.tables) for (const c of t.chains) n += c.rules.length;
  return n;
}
