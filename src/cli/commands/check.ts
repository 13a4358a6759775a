/**
 * `netfilter-sim check [-4|-6] [--lenient] [--backend nft|legacy] [--json] FILE|-`
 * @internal
 */
import { parseArgs } from 'node:util';
import { check } from '../../iptables/check/index.js';
import { type Diagnostic } from '../../model/errors.js';
import { formatDiagnostic } from '../../model/diagnostic-text.js';
import { parseIptablesSave } from '../../iptables/syntax/save.js';
import { detectRulesSyntax, nftLoadErrors } from '../../nftables/index.js';
import { EXIT_INPUT, EXIT_OK, UsageError, type CliIO } from '../io.js';
import { nftLoadOptions } from '../nft-load.js';
import { writeJson } from '../json.js';

export const CHECK_HELP = `Usage: netfilter-sim check [-4 | -6] [--lenient] [--backend nft|legacy] [--json] [--syntax iptables|nft]
                        [--iface NAME]... [-I DIR]... FILE|-

Checks iptables-save / iptables-restore text as iptables-restore and the kernel would when
loading it: syntax, then chains that do not exist, loops (ELOOP), jump depth, chain-name limits,
policies, and extensions used where the kernel refuses them (REDIRECT outside nat
PREROUTING/OUTPUT, owner outside OUTPUT/POSTROUTING, TPROXY outside mangle PREROUTING, …).

  -4, -6          iptables (default) or ip6tables
  --lenient       also accept what generators feed fake parsers
  --backend B     nft (default: also the 16-level jump limit) or legacy
  --json          print {"ok": bool, "diagnostics": [...]} instead
  --syntax S      iptables or nft (default: guessed from the first statement). An nft file is
                  checked as nft -f and the kernel would: syntax, types, then what the kernel
                  refuses at commit (jumps to missing chains, loops, jump depth, redirect/dnat
                  outside nat prerouting/output, masquerade outside nat postrouting, tproxy
                  outside prerouting, reject in postrouting, chain types at the wrong hook).
  --iface NAME    nft: the host has this interface (repeat; ifindex order after lo)
  -I DIR          nft: where include "FILE" finds files (repeat; searched in order)

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
      syntax: { type: 'string' },
      iface: { type: 'string', multiple: true },
      'include-path': { type: 'string', short: 'I', multiple: true },
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
  if (values.syntax !== undefined && values.syntax !== 'iptables' && values.syntax !== 'nft') throw new UsageError(`--syntax must be iptables or nft, not "${values.syntax}"`);
  if ((values.syntax ?? detectRulesSyntax(text)) === 'nft') {
    const loaded = nftLoadErrors(text, nftLoadOptions(values.iface, values['include-path'], io));
    const ok = loaded.diagnostics.length === 0;
    if (values.json) io.stdout(JSON.stringify({ ok, diagnostics: loaded.diagnostics }, null, 2) + '\n');
    else {
      for (const d of loaded.diagnostics) io.stderr(formatDiagnostic(d, text, name) + '\n');
      if (ok) io.stdout(`${name}: ok (${loaded.ruleset.tables.reduce((n, t) => n + t.chains.reduce((m, c) => m + c.rules.length, 0), 0)} rules)\n`);
    }
    return ok ? EXIT_OK : EXIT_INPUT;
  }
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
