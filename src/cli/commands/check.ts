/**
 * `netfilter-sim check [-4|-6] [--lenient] [--backend nft|legacy] [--ipsets FILE] [--nfacct FILE] [--json] FILE|-`
 * @internal
 */
import { parseArgs } from 'node:util';
import { check, type IpsetDeclaration } from '../../iptables/check/index.js';
import { diagnostic, NetfilterSimError, type Diagnostic } from '../../model/errors.js';
import { formatDiagnostic } from '../../model/diagnostic-text.js';
import { parseIptablesSave } from '../../iptables/syntax/save.js';
import { parseIpsetArgument, parseIpsetHeaders } from '../../iptables/syntax/ipset.js';
import { parseNfacctList } from '../../iptables/syntax/nfacct.js';
import type { Ruleset } from '../../model/types.js';
import { detectRulesSyntax, nftLoadErrors } from '../../nftables/index.js';
import { EXIT_INPUT, EXIT_OK, FileReadError, SourceError, UsageError, type CliIO } from '../io.js';
import { nftLoadOptions } from '../nft-load.js';
import { writeJson } from '../json.js';

export const CHECK_HELP = `Usage: netfilter-sim check [-4 | -6] [--lenient] [--backend nft|legacy] [--ipsets FILE] [--ipset NAME=ADDRS]
                           [--nfacct FILE] [--json] [--syntax iptables|nft]
                           [--iface NAME]... [-I DIR]... FILE|-

Checks iptables-save / iptables-restore text as iptables-restore and the kernel would when
loading it: syntax, then commands the load refuses (-X of a chain that is still referenced or
not empty, -P on a user chain, -D of a rule that is not there), chains that do not exist, loops
(ELOOP), jump depth, chain-name limits, policies, and extensions used where the kernel refuses
them (REDIRECT outside nat PREROUTING/OUTPUT, owner outside OUTPUT/POSTROUTING, TPROXY outside
mangle PREROUTING, DROP in the nat table, …).

  -4, -6          iptables (default) or ip6tables
  --lenient       also accept what generators feed fake parsers
  --backend B     nft (default: also the 16-level jump limit) or legacy
  --ipsets FILE   the ipsets that exist, as \`ipset save\` prints them (create lines; any set
                  type): -m set and -j SET naming another set, or a set of the other family, are
                  errors. Without --ipsets or --ipset, a rule naming a set gets a warning.
  --ipset NAME=ADDRS  one more set that exists (as connect takes it; repeat)
  --nfacct FILE   the nfacct objects that exist, as \`nfacct list\` prints them (or one name
                  a line): -m nfacct naming another is an error. Without it, a warning.
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
  netfilter-sim check --ipsets <(ipset save) --nfacct <(nfacct list) node.rules
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
      ipsets: { type: 'string' },
      ipset: { type: 'string', multiple: true },
      nfacct: { type: 'string' },
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
  const objectFlags = values.ipsets !== undefined || values.ipset !== undefined || values.nfacct !== undefined;
  if ((values.syntax ?? detectRulesSyntax(text)) === 'nft') {
    if (objectFlags) throw new UsageError('--ipsets, --ipset and --nfacct are for iptables rules');
    const loaded = nftLoadErrors(text, nftLoadOptions(values.iface, values['include-path'], io));
    const ok = loaded.diagnostics.length === 0;
    if (values.json) io.stdout(JSON.stringify({ ok, diagnostics: loaded.diagnostics }, null, 2) + '\n');
    else {
      for (const d of loaded.diagnostics) io.stderr(formatDiagnostic(d, text, name) + '\n');
      if (ok) io.stdout(`${name}: ok (${loaded.ruleset.tables.reduce((n, t) => n + t.chains.reduce((m, c) => m + c.rules.length, 0), 0)} rules)\n`);
    }
    return ok ? EXIT_OK : EXIT_INPUT;
  }
  const ipsets = values.ipsets === undefined && values.ipset === undefined ? undefined : readIpsets(io, values.ipsets, values.ipset ?? []);
  const nfacct = values.nfacct === undefined ? undefined : readNfacct(io, values.nfacct);
  const parsed = parseIptablesSave(text, { family: values['6'] ? 6 : 4, mode: values.lenient ? 'lenient' : 'strict' });
  // What --test takes but the load refuses (-X of a chain in use, -P on a user chain, …) stops
  // the whole restore: an error here.
  const diagnostics: Diagnostic[] = parsed.diagnostics.map((d) => (parsed.loadFailures.includes(d) ? { ...d, severity: 'error' as const } : d));
  if (!parsed.diagnostics.some((d) => d.severity === 'error')) {
    diagnostics.push(...check(parsed.ruleset, { backend, ...(ipsets ? { ipsets } : {}), ...(nfacct ? { nfacct } : {}) }));
    diagnostics.push(...untoldObjects(parsed.ruleset, ipsets === undefined, nfacct === undefined));
  }
  const normalized = diagnostics;
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

function readSource(io: CliIO, file: string): string {
  try {
    return io.readFile(file);
  } catch (e) {
    throw e instanceof FileReadError ? e : new FileReadError(file, e);
  }
}

function readIpsets(io: CliIO, file: string | undefined, specs: readonly string[]): IpsetDeclaration[] {
  const out: IpsetDeclaration[] = [];
  if (file !== undefined) {
    const text = readSource(io, file);
    try {
      out.push(...parseIpsetHeaders(text, file));
    } catch (e) {
      if (e instanceof NetfilterSimError) throw new SourceError(file, text, e.diagnostics);
      throw e;
    }
  }
  for (const spec of specs) out.push(parseIpsetArgument(spec));
  return out;
}

function readNfacct(io: CliIO, file: string): string[] {
  const text = readSource(io, file);
  try {
    return parseNfacctList(text, file);
  } catch (e) {
    if (e instanceof NetfilterSimError) throw new SourceError(file, text, e.diagnostics);
    throw e;
  }
}

/**
 * Rules that name ipsets or nfacct objects when check was not told which exist: a warning per
 * name (first use), since the load fails unless the object is there.
 */
function untoldObjects(rs: Ruleset, sets: boolean, accts: boolean): Diagnostic[] {
  const out: Diagnostic[] = [];
  const seen = new Set<string>();
  const warn = (kind: 'set' | 'nfacct', name: string, span: Diagnostic['span']): void => {
    if (seen.has(`${kind} ${name}`)) return;
    seen.add(`${kind} ${name}`);
    const d = kind === 'set'
      ? diagnostic('UNKNOWN_SET', `the rules name ipset "${name}"; the load fails unless it exists (give the sets with --ipsets FILE, e.g. from ipset save)`, span, name)
      : diagnostic('UNKNOWN_NFACCT', `the rules name nfacct object "${name}"; the load fails unless it exists (give the objects with --nfacct FILE, e.g. from nfacct list)`, span, name);
    out.push({ ...d, severity: 'warning' });
  };
  for (const t of rs.tables) {
    for (const c of t.chains) {
      for (const r of c.rules) {
        for (const m of r.matches) {
          if (sets && m.name === 'set') warn('set', (m.options as { name: string }).name, m.span ?? r.span);
          if (accts && m.name === 'nfacct') warn('nfacct', (m.options as { name: string }).name, m.span ?? r.span);
        }
        const tg = r.target;
        if (sets && tg?.kind === 'extension' && tg.name === 'SET') {
          const o = tg.options as { add: { name: string } | null; del: { name: string } | null };
          for (const x of [o.add, o.del]) if (x) warn('set', x.name, tg.span ?? r.span);
        }
      }
    }
  }
  return out;
}
