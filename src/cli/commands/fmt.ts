/**
 * `netfilter-sim fmt [--strict|--lenient] [-4|-6] [--counters] [--json] FILE|-`
 * @internal
 */
import { parseArgs } from 'node:util';
import { formatDiagnostic } from '../../errors.js';
import { printIptablesSave } from '../../print/save.js';
import { parseIptablesSave } from '../../syntax/save.js';
import { EXIT_INPUT, EXIT_OK, UsageError, type CliIO } from '../io.js';
import { writeJson } from '../json.js';

export const FMT_HELP = `Usage: netfilter-sim fmt [--strict | --lenient] [-4 | -6] [--counters] [--json] FILE|-

Reads iptables-save / iptables-restore text and prints it exactly as iptables-save
(iptables 1.8.9) prints the same rules once loaded: the canonical form.

  --strict     accept exactly what iptables-restore --test accepts (default)
  --lenient    also accept what generators feed fake parsers (unquoted comments, no COMMIT)
  -4, -6       iptables (default) or ip6tables
  --counters   keep [packets:bytes] counters, as iptables-restore -c / iptables-save -c
  --json       print the parsed rule set as JSON instead

Exit status: 0 ok, 1 the input is rejected (FILE:LINE:COLUMN: message on stderr), 2 usage.

Examples:
  netfilter-sim fmt rules.v4
  iptables-save | netfilter-sim fmt -
  netfilter-sim fmt -6 --lenient generated.rules
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
  const file = positionals[0]!;
  const text = io.readFile(file);
  const family = values['6'] ? 6 : 4;
  const result = parseIptablesSave(text, { family, mode: values.lenient ? 'lenient' : 'strict', counters: values.counters ?? false });
  const name = file === '-' ? '<stdin>' : file;
  const errors = result.diagnostics.filter((d) => d.severity === 'error');
  for (const d of result.diagnostics) {
    if (d.severity === 'warning') io.stderr(formatDiagnostic({ ...d, message: `warning: ${d.message} (loading this into the kernel would fail)` }, text, name) + '\n');
  }
  if (errors.length > 0) {
    for (const d of errors) io.stderr(formatDiagnostic(d, text, name) + '\n');
    return EXIT_INPUT;
  }
  if (values.json) writeJson(result.ruleset, io.stdout);
  else io.stdout(printIptablesSave(result.ruleset, { counters: values.counters ?? false }));
  return EXIT_OK;
}
