/**
 * `netfilter-sim fmt [--strict|--lenient] [-4|-6] [--counters] [--json] FILE|-`
 * @internal
 */
import { parseArgs } from 'node:util';
import { diagnostic, type Diagnostic } from '../../model/errors.js';
import { formatDiagnostic } from '../../model/diagnostic-text.js';
import { printIptablesSave } from '../../iptables/print/save.js';
import { parseIptablesSave } from '../../iptables/syntax/save.js';
import { detectRulesSyntax, nftLoadErrors, printNftRuleset } from '../../nftables/index.js';
import { EXIT_INPUT, EXIT_OK, UsageError, type CliIO } from '../io.js';
import { nftLoadOptions } from '../nft-load.js';
import { writeJson } from '../json.js';

export const FMT_HELP = `Usage: netfilter-sim fmt [--strict | --lenient] [-4 | -6] [--counters] [--json] [--syntax iptables|nft]
                      [--iface NAME]... [-I DIR]... FILE|-

Reads iptables-save / iptables-restore text and prints it exactly as iptables-save
(iptables 1.8.9) prints the same rules once loaded: the canonical form. An nft file (its first
statement is table, add, flush, insert, delete or define) is printed exactly as
\`nft list ruleset\` (nftables 1.0.6) lists it after \`nft -f\` in a fresh namespace.

  --strict     accept exactly what iptables-restore --test accepts (default)
  --lenient    also accept what generators feed fake parsers (unquoted comments, no COMMIT)
  -4, -6       iptables (default) or ip6tables
  --counters   keep [packets:bytes] counters, as iptables-restore -c / iptables-save -c
  --json       print the parsed rule set as JSON instead
  --syntax S   iptables or nft (default: guessed from the first statement)
  --iface NAME nft: the host has this interface (repeat, or NAME,NAME; ifindex order after lo):
               iif/oif NAME and device NAME resolve against them, as nft resolves them
  -I DIR       nft: where include "FILE" finds files (repeat; searched in order)

Exit status: 0 ok, 1 the input is rejected (FILE:LINE:COLUMN: message on stderr), 2 usage.

Examples:
  netfilter-sim fmt rules.v4
  iptables-save | netfilter-sim fmt -
  netfilter-sim fmt -6 --lenient generated.rules
  netfilter-sim fmt istio.nft
`;

export async function runFmt(args: string[], io: CliIO): Promise<number> {
  const { values, positionals } = parseArgs({
    args,
    allowPositionals: true,
    options: {
      strict: { type: 'boolean' },
      lenient: { type: 'boolean' },
      '4': { type: 'boolean', short: '4' },
      '6': { type: 'boolean', short: '6' },
      counters: { type: 'boolean' },
      json: { type: 'boolean' },
      syntax: { type: 'string' },
      iface: { type: 'string', multiple: true },
      'include-path': { type: 'string', short: 'I', multiple: true },
      help: { type: 'boolean', short: 'h' },
    },
  });
  if (values.help) {
    io.stdout(FMT_HELP);
    return EXIT_OK;
  }
  if (positionals.length !== 1) throw new UsageError('fmt takes exactly one FILE (or - for standard input)');
  if (values.strict && values.lenient) throw new UsageError('--strict and --lenient cannot be used together');
  if (values['4'] && values['6']) throw new UsageError('-4 and -6 cannot be used together');
  if (values.syntax !== undefined && values.syntax !== 'iptables' && values.syntax !== 'nft') throw new UsageError(`--syntax must be iptables or nft, not "${values.syntax}"`);
  const file = positionals[0]!;
  const text = io.readFile(file);
  if ((values.syntax ?? detectRulesSyntax(text)) === 'nft') {
    if (values.lenient || values['4'] || values['6'] || values.counters) throw new UsageError('--lenient, -4, -6 and --counters are for iptables text; nft files are read as nft -f reads them');
    const name = file === '-' ? '<stdin>' : file;
    const loaded = nftLoadErrors(text, nftLoadOptions(values.iface, values['include-path'], io));
    if (loaded.diagnostics.length > 0) {
      for (const d of loaded.diagnostics) io.stderr(formatDiagnostic(d, text, name) + '\n');
      return EXIT_INPUT;
    }
    io.stdout(values.json ? JSON.stringify(loaded.ruleset, (_k, v: unknown) => (typeof v === 'bigint' ? v.toString() : v), 2) + '\n' : printNftRuleset(loaded.ruleset));
    return EXIT_OK;
  }
  const family = values['6'] ? 6 : 4;
  const result = parseIptablesSave(text, { family, mode: values.lenient ? 'lenient' : 'strict', counters: values.counters ?? false });
  const name = file === '-' ? '<stdin>' : file;
  const errors = result.diagnostics.filter((d) => d.severity === 'error');
  const warnings = [...result.diagnostics];
  const failing = new Set<Diagnostic>(result.loadFailures);
  // iptables-restore --test takes a jump to a chain the table does not have (it looks for a
  // target of that name at load); the kernel load fails: a warning, as documented.
  if (errors.length === 0) {
    for (const t of result.ruleset.tables) {
      const chains = new Set(t.chains.map((c) => c.name));
      for (const c of t.chains) {
        for (const r of c.rules) {
          const g = r.target;
          if (g !== null && (g.kind === 'jump' || g.kind === 'goto') && !chains.has(g.chain)) {
            const d: Diagnostic = { ...diagnostic('UNKNOWN_CHAIN', `${g.kind === 'jump' ? '-j' : '-g'} ${g.chain}: no chain or target by that name in table ${t.name}`, g.span, g.chain), severity: 'warning' };
            warnings.push(d);
            failing.add(d);
          }
        }
      }
    }
  }
  for (const d of warnings) {
    // Only what the load refuses says so; other warnings (a comment cut to 255 bytes, CRLF line
    // endings read leniently) describe what was kept.
    if (d.severity === 'warning') io.stderr(formatDiagnostic({ ...d, message: `warning: ${d.message}${failing.has(d) ? ' (loading this into the kernel would fail)' : ''}` }, text, name) + '\n');
  }
  if (errors.length > 0) {
    for (const d of errors) io.stderr(formatDiagnostic(d, text, name) + '\n');
    return EXIT_INPUT;
  }
  if (values.json) writeJson(result.ruleset, io.stdout);
  else io.stdout(printIptablesSave(result.ruleset, { counters: values.counters ?? false }));
  return EXIT_OK;
}
