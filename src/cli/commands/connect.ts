/**
 * `netfilter-sim connect`: a connection attempt through a modelled pod namespace.
 *
 * @module
 */
import { parseArgs } from 'node:util';
import type { ParseArgsConfig } from 'node:util';
import { check } from '../../iptables/check/index.js';
import { noteChecked } from '../../engine/path/setup.js';
import { defaultRegistry } from '../../engine/rules/registry.js';
import { diagnostic, NetfilterSimError, type Diagnostic } from '../../model/errors.js';
import { formatDiagnostic } from '../../model/diagnostic-text.js';
import { parseEndpoint } from '../../engine/path/probe.js';
import { parseAnyAddress } from '../../engine/state/routing.js';
import type { Ipset } from '../../model/ipset.js';
import { parseIpsetArgument, parseIpsetSave } from '../../iptables/syntax/ipset.js';
import { Netns, listenerFromString } from '../../engine/path/netns.js';
import type { ConnectResult, ConnectSpec, ListenerSpec, NetnsOptions } from '../../engine/path/netns.js';
import { parseIpRoute, parseIpRule } from '../../engine/path/ip-args.js';
import type { Family, Ruleset } from '../../model/types.js';
import { parseIptablesSave } from '../../iptables/syntax/save.js';
import { detectRulesSyntax, nftLoadErrors } from '../../nftables/index.js';
import type { NftRuleset } from '../../nftables/model.js';
import { renderOutcome, renderTrace } from '../../trace/render.js';
import type { TraceFormat } from '../../trace/render.js';
import { EXIT_OK, FileReadError, SourceError, UsageError, reportCliError } from '../io.js';
import { writeJson } from '../json.js';
import { MAX_CONNTRACK_MAX } from '../../model/limits.js';
import type { CliIO } from '../io.js';
import { type Values, str, list } from '../values.js';

const CONNECT_HELP = `Usage: netfilter-sim connect --rules FILE|- --dst IP:PORT [options]

Simulates a TCP connection attempt (SYN, the answer, the ACK) or one UDP datagram in a
modelled pod network namespace, through every hook, table and chain it crosses.

Rules and namespace:
  --rules FILE|-          iptables-save text for IPv4 (- reads standard input), or an nft file
                          (first statement table/add/flush/insert/delete/define); repeatable:
                          nft files load in order beside at most one iptables-save file
  --syntax iptables|nft   read every --rules file as this syntax instead of guessing
  --rules6 FILE|-         iptables-save text for IPv6
  --strict                read the rules as iptables-restore does (default: leniently, as
                          generators write them; what iptables would refuse is a warning)
  --listen LIST           listening sockets: 4140,4143,8080 (0.0.0.0 and [::]),
                          127.0.0.1:15001, [::1]:15001, 53/udp; repeatable; the words
                          transparent (IP_TRANSPARENT), uid=N, gid=N (the owner) apply to
                          every socket of the same --listen: '0.0.0.0:15006,transparent'.
                          '[::]:8080' is IPv6 only (IPV6_V6ONLY, as the [::] socket of a bare
                          port is): IPv4 clients need 0.0.0.0:8080 or the port alone
  --iface NAME=ADDRS      interface addresses, e.g. eth0=10.0.0.2/24,fd00::2/64; repeatable
                          (default eth0=10.0.0.2/24,fd00::2/64; lo always has 127.0.0.1/8, ::1/128)
  --gateway IP            default gateway (default 10.0.0.1 and fd00::1); repeatable
  --rule 'ARGS'           a policy routing rule, as ip rule add takes it: 'fwmark 1 lookup 100',
                          '-6 fwmark 0x1/0x1 pref 100 lookup 100' (IPv4 unless -6); repeatable
  --route 'ARGS'          a route, as ip route add takes it: 'local default dev lo table 100',
                          '10.96.0.0/12 via 10.0.0.1 dev eth0'; repeatable
  --route-localnet        net.ipv4.conf.all.route_localnet=1
  --ip-forward            net.ipv4.ip_forward=1 (forward packets not addressed to the pod)
  --peer IP=PORTS         a remote host that listens only on PORTS (others accept everything)
  --conntrack-max N       nf_conntrack_max: connections the table holds (default 262144); past it
                          a new connection is dropped
  --ipset NAME=ADDRS      an ipset the rules name (-m set, -j SET): hash:ip, or hash:net when an
                          address has a /prefix; inet6: before the list for an empty IPv6 set;
                          repeatable
  --ipsets FILE           ipsets as \`ipset save\` prints them (create/add lines)

The connection:
  --from local|remote     a process of the namespace (default with --uid) or a remote client
  --uid N [--gid N] [--groups A,B]   the local process's credentials (gid defaults to uid)
  --src IP                the remote client's address (or the local socket's bound address: one
                          the pod does not own is refused as bind() refuses it, EADDRNOTAVAIL,
                          unless --transparent)
  --transparent           IP_TRANSPARENT on the local socket: it may bind any --src
  --in IFACE              the interface a remote client's packets arrive on (default: the one
                          whose network holds --src, else eth0)
  --sport N               source port (default: one of ip_local_port_range 32768-60999,
                          picked as connect() picks it)
  --dst IP:PORT           destination ([IPv6]:PORT)
  --proto tcp|udp         default tcp
  --mark N, --so-mark N   SO_MARK of the local socket (mark matches and fwmark rules see it)
  --probes FILE|-         several connections in order in one namespace, one a line in the
                          syntax of the flags above (--uid 1000 --dst 10.96.0.10:80), plus
                          --close (closed after the handshake) and --after SECONDS (the clock
                          moves on first); # starts a comment. One result a line

Output:
  --json                  one JSON object: outcome, address, port, originalDestination, source,
                          errno (what the client's connect() returns), steps, reason (with
                          --enumerate: an array of them, each with probability; with --probes:
                          one object a line)
  --format FMT            text | tree | json | mermaid | dot (the trace; default tree)
  --enumerate             follow every branch of statistic --mode random (one result each)
  --seed N                seed of statistic --mode random (default 1)
  --evaluator NAME        lowered (default) | reference
  --color / --no-color    colour the trace (default: only on a terminal, never with NO_COLOR)

Exit status: 0 the simulation ran (whatever its outcome), 1 bad input (rules, addresses),
2 usage error.

Examples:
  netfilter-sim connect --rules linkerd.rules --listen 4140,4143,8080 --uid 1000 --dst 10.96.0.10:80
  netfilter-sim connect --rules istio.rules --listen 15001,15006 --from remote --src 10.0.0.5 --dst 10.0.0.2:8080 --json
  iptables-save | netfilter-sim connect --rules - --uid 1337 --dst 127.0.0.6:15002 --format text
`;

/** The options common to `connect` and `trace`. @internal */
export const NETNS_OPTIONS = {
  rules: { type: 'string', multiple: true },
  rules6: { type: 'string' },
  syntax: { type: 'string' },
  strict: { type: 'boolean' },
  listen: { type: 'string', multiple: true },
  rule: { type: 'string', multiple: true },
  route: { type: 'string', multiple: true },
  iface: { type: 'string', multiple: true },
  gateway: { type: 'string', multiple: true },
  'route-localnet': { type: 'boolean' },
  'ip-forward': { type: 'boolean' },
  peer: { type: 'string', multiple: true },
  'conntrack-max': { type: 'string' },
  ipset: { type: 'string', multiple: true },
  ipsets: { type: 'string' },
  format: { type: 'string' },
  json: { type: 'boolean' },
  seed: { type: 'string' },
  evaluator: { type: 'string' },
  color: { type: 'boolean' },
  'no-color': { type: 'boolean' },
  help: { type: 'boolean', short: 'h' },
} as const satisfies ParseArgsConfig['options'];

function int(v: Values, k: string, max = 0xffffffff): number | undefined {
  const s = str(v, k);
  if (s === undefined) return undefined;
  if (!/^(0x[0-9a-f]+|\d+)$/i.test(s)) throw new UsageError(`--${k} needs a number, not "${s}"`);
  const n = Number(s);
  if (n > max) throw new UsageError(`--${k} is at most ${max}, not ${s}`);
  return n;
}

/**
 * Reads and parses one rules file as the engine would (leniently unless `strict`), then runs the
 * load-time check: warnings go to stderr with the line and a caret, errors throw a
 * {@link SourceError} naming this file.
 */
function loadRulesFile(io: CliIO, file: string, family: Family, strict: boolean, sources: Map<string, string>, read?: string): Ruleset {
  let text: string;
  try {
    text = read ?? io.readFile(file);
  } catch (e) {
    throw e instanceof FileReadError ? e : new FileReadError(file, e);
  }
  sources.set(file, text);
  const name = file === '-' ? '<stdin>' : file;
  const warn = (ds: readonly Diagnostic[]): void => {
    for (const d of ds) if (d.severity === 'warning') io.stderr(formatDiagnostic({ ...d, message: `warning: ${d.message}` }, text, name) + '\n');
  };
  const parsed = parseIptablesSave(text, { family, mode: strict ? 'strict' : 'lenient' });
  warn(parsed.diagnostics);
  const parseErrors = parsed.diagnostics.filter((d) => d.severity === 'error');
  if (parseErrors.length > 0) throw new SourceError(file, text, parseErrors);
  const registry = defaultRegistry();
  const checked = check(parsed.ruleset, { registry });
  const errors = checked.filter((d) => d.severity === 'error');
  if (errors.length > 0) throw new SourceError(file, text, errors);
  warn(checked);
  // The namespace built from it need not check it again.
  noteChecked(parsed.ruleset, registry);
  return parsed.ruleset;
}

/** Reads the files and builds the namespace options. @internal */
export function netnsOptions(values: Values, io: CliIO): { options: NetnsOptions; sources: Map<string, string> } {
  const sources = new Map<string, string>();
  const rulesFiles = list(values, 'rules');
  const rules6File = str(values, 'rules6');
  if ((rulesFiles.includes('-') && rules6File === '-') || rulesFiles.filter((f) => f === '-').length > 1) throw new UsageError('only one of --rules and --rules6 can read standard input');
  const syntax = str(values, 'syntax');
  if (syntax !== undefined && syntax !== 'iptables' && syntax !== 'nft') throw new UsageError(`--syntax must be iptables or nft, not "${syntax}"`);
  const strict = values['strict'] === true;
  const listen = list(values, 'listen').flatMap((l) => listenerSpecs(l));
  const ipRules = list(values, 'rule').map((r) => parseIpRule(r));
  const routes = list(values, 'route').map((r) => parseIpRoute(r));
  let interfaces: Record<string, string[]> | undefined;
  for (const spec of list(values, 'iface')) {
    const eq = spec.indexOf('=');
    if (eq <= 0) throw new UsageError(`--iface needs NAME=ADDR[,ADDR…], not "${spec}"`);
    interfaces ??= Object.create(null) as Record<string, string[]>; // an interface may be called __proto__
    interfaces[spec.slice(0, eq)] = splitList(spec.slice(eq + 1));
  }
  const gateways = list(values, 'gateway').flatMap((g) => splitList(g));
  let peers: Record<string, number[]> | undefined;
  for (const spec of list(values, 'peer')) {
    const eq = spec.indexOf('=');
    if (eq <= 0) throw new UsageError(`--peer needs IP=PORT[,PORT…], not "${spec}"`);
    peers ??= Object.create(null) as Record<string, number[]>; // so that __proto__ reaches the address check
    peers[spec.slice(0, eq)] = splitList(spec.slice(eq + 1)).map((p) => {
      if (!/^\d+$/.test(p)) throw new UsageError(`bad port "${p}" in --peer ${spec}`);
      return Number(p);
    });
  }
  const evaluator = str(values, 'evaluator');
  if (evaluator !== undefined && evaluator !== 'lowered' && evaluator !== 'reference') throw new UsageError(`--evaluator is lowered or reference, not "${evaluator}"`);
  const seed = int(values, 'seed');
  const conntrackMax = int(values, 'conntrack-max', MAX_CONNTRACK_MAX);
  if (conntrackMax === 0) throw new UsageError(`--conntrack-max is at least 1 (the kernel's 0, no limit, is not simulated)`);
  const options: { -readonly [K in keyof NetnsOptions]: NetnsOptions[K] } = {
    listen,
    routeLocalnet: values['route-localnet'] === true,
    ipForward: values['ip-forward'] === true,
  };
  let nft: NftRuleset | undefined;
  for (const rulesFile of rulesFiles) {
    let text: string;
    try {
      text = io.readFile(rulesFile);
    } catch (e) {
      throw e instanceof FileReadError ? e : new FileReadError(rulesFile, e);
    }
    if ((syntax ?? detectRulesSyntax(text)) === 'nft') {
      sources.set(rulesFile, text);
      const loaded = nftLoadErrors(text, nft ? { base: nft } : {});
      if (loaded.diagnostics.length > 0) throw new SourceError(rulesFile, text, loaded.diagnostics);
      nft = loaded.ruleset;
      continue;
    }
    if (options.rules !== undefined) throw new UsageError('only one iptables-save file for IPv4 (give IPv6 rules with --rules6; nft files may be repeated)');
    options.rules = loadRulesFile(io, rulesFile, 4, strict, sources, text);
  }
  if (nft) options.nft = nft;
  if (rules6File !== undefined) options.rules6 = loadRulesFile(io, rules6File, 6, strict, sources);
  if (interfaces) options.interfaces = interfaces;
  if (ipRules.length > 0) options.ipRules = ipRules;
  if (routes.length > 0) options.routes = routes;
  if (gateways.length > 0) options.gateway = gateways;
  if (peers) options.peers = peers;
  if (evaluator) options.evaluator = evaluator;
  if (seed !== undefined) options.seed = seed;
  if (conntrackMax !== undefined) options.conntrackMax = conntrackMax;
  const ipsets: Ipset[] = [];
  const ipsetsFile = str(values, 'ipsets');
  if (ipsetsFile !== undefined) {
    let text: string;
    try {
      text = io.readFile(ipsetsFile);
    } catch (e) {
      throw e instanceof FileReadError ? e : new FileReadError(ipsetsFile, e);
    }
    sources.set(ipsetsFile, text);
    try {
      ipsets.push(...parseIpsetSave(text, ipsetsFile));
    } catch (e) {
      if (e instanceof NetfilterSimError) throw new SourceError(ipsetsFile, text, e.diagnostics);
      throw e;
    }
  }
  for (const spec of list(values, 'ipset')) ipsets.push(parseIpsetArgument(spec));
  if (ipsets.length > 0) options.ipsets = ipsets;
  return { options, sources };
}

/**
 * One `--listen` value: endpoints (`4140`, `127.0.0.1:15001`, `[::1]:53/udp`) and attributes that
 * apply to every endpoint of the same value: `transparent` (IP_TRANSPARENT), `uid=N`, `gid=N`
 * (the owner; gid defaults to uid).
 */
function listenerSpecs(value: string): (string | ListenerSpec)[] {
  let transparent = false;
  let uid: number | undefined;
  let gid: number | undefined;
  const endpoints: string[] = [];
  for (const item of splitList(value)) {
    const owner = /^(uid|gid)=(.*)$/.exec(item);
    if (item === 'transparent') transparent = true;
    else if (owner) {
      if (!/^\d+$/.test(owner[2]!) || Number(owner[2]) > 0xffffffff) throw new UsageError(`--listen ${value}: ${owner[1]} needs a number from 0 to 4294967295, not "${owner[2]!}"`);
      if (owner[1] === 'uid') uid = Number(owner[2]);
      else gid = Number(owner[2]);
    } else if (/^[a-z]+(=.*)?$/i.test(item) && !/^(tcp|udp)$/i.test(item)) {
      throw new UsageError(`--listen ${value}: unknown attribute "${item}" (transparent, uid=N, gid=N)`);
    } else endpoints.push(item);
  }
  if (endpoints.length === 0) throw new UsageError(`--listen ${value}: no address or port`);
  if (!transparent && uid === undefined && gid === undefined) return endpoints;
  return endpoints.map((e) => ({
    ...listenerFromString(e),
    ...(transparent ? { transparent } : {}),
    ...(uid !== undefined ? { uid } : {}),
    ...(gid !== undefined ? { gid } : {}),
  }));
}

function splitList(s: string): string[] {
  return s.split(',').map((x) => x.trim()).filter((x) => x !== '');
}

/** `--format`, checked. @internal */
export function traceFormat(values: Values, fallback: TraceFormat): TraceFormat {
  const f = str(values, 'format') ?? fallback;
  if (f !== 'text' && f !== 'tree' && f !== 'json' && f !== 'mermaid' && f !== 'dot') throw new UsageError(`--format is text, tree, json, mermaid or dot, not "${f}"`);
  return f;
}

/** Whether to colour: `--color`/`--no-color`, else what the I/O allows. @internal */
export function useColor(values: Values, io: CliIO): boolean {
  if (values['no-color'] === true) return false;
  if (values['color'] === true) return true;
  return io.color;
}

/** Prints an error the way every command does; returns the exit code. @internal */
export function reportError(e: unknown, io: CliIO, command: string, sources: Map<string, string>, files: { rules?: string | undefined; rules6?: string | undefined }): number {
  return reportCliError(e, io, command, (err) =>
    err.diagnostics
      .map((d) => {
        // Diagnostics with a position come from a rules file: the IPv4 one unless only IPv6 was given.
        const file = d.span ? (files.rules ?? files.rules6) : undefined;
        const source = file !== undefined ? sources.get(file) : undefined;
        return `${d.span ? formatDiagnostic(d, source, file === '-' ? '<stdin>' : file) : `netfilter-sim ${command}: ${d.message}`}\n`;
      })
      .join(''),
  );
}

function connectSpec(values: Values): ConnectSpec {
  const dst = str(values, 'dst');
  if (dst === undefined) throw new UsageError('--dst IP:PORT is required');
  const uid = int(values, 'uid');
  const src = str(values, 'src');
  let from = str(values, 'from');
  if (from === undefined) from = uid !== undefined || src === undefined ? 'local' : 'remote';
  const proto = str(values, 'proto');
  if (proto !== undefined && proto !== 'tcp' && proto !== 'udp') throw new UsageError(`--proto is tcp or udp, not "${proto}"`);
  const sport = int(values, 'sport', 65535);
  if (from === 'local') {
    if (uid === undefined) throw new UsageError('--from local needs --uid N');
    if (str(values, 'in') !== undefined) throw new UsageError('--in is for --from remote (a local process sends through its route)');
    const gid = int(values, 'gid');
    const groups = str(values, 'groups');
    if (groups !== undefined) for (const g of splitList(groups)) if (!/^\d+$/.test(g)) throw new UsageError(`--groups needs numeric GIDs, not "${g}"`);
    if (str(values, 'mark') !== undefined && str(values, 'so-mark') !== undefined) throw new UsageError('--mark and --so-mark are the same option; give one');
    const mark = int(values, 'mark') ?? int(values, 'so-mark');
    return {
      from: 'local', uid, dst,
      ...(gid !== undefined ? { gid } : {}),
      ...(groups !== undefined ? { groups: splitList(groups).map(Number) } : {}),
      ...(sport !== undefined ? { sport } : {}),
      ...(proto !== undefined ? { proto } : {}),
      ...(src !== undefined ? { src } : {}),
      ...(mark !== undefined ? { mark } : {}),
      ...(values['transparent'] === true ? { transparent: true } : {}),
    };
  }
  if (from !== 'remote') throw new UsageError(`--from is local or remote, not "${from}"`);
  if (src === undefined) throw new UsageError('--from remote needs --src IP');
  for (const k of ['uid', 'gid', 'groups', 'mark', 'so-mark']) if (str(values, k) !== undefined) throw new UsageError(`--${k} is for --from local (a remote client has no socket here)`);
  if (values['transparent'] === true) throw new UsageError('--transparent is for --from local (a remote client has no socket here)');
  const iface = str(values, 'in');
  return {
    from: 'remote', src, dst,
    ...(sport !== undefined ? { sport } : {}),
    ...(proto !== undefined ? { proto } : {}),
    ...(iface !== undefined ? { iface } : {}),
  };
}

/** The options that describe one probe, on the command line and on a line of a `--probes` file. */
const PROBE_SPEC_OPTIONS = {
  from: { type: 'string' },
  uid: { type: 'string' },
  gid: { type: 'string' },
  groups: { type: 'string' },
  src: { type: 'string' },
  sport: { type: 'string' },
  dst: { type: 'string' },
  proto: { type: 'string' },
  mark: { type: 'string' },
  'so-mark': { type: 'string' },
  transparent: { type: 'boolean' },
  in: { type: 'string' },
} as const satisfies ParseArgsConfig['options'];

/** The options a line of a `--probes` file takes. */
const PROBE_OPTIONS = {
  ...PROBE_SPEC_OPTIONS,
  close: { type: 'boolean' },
  after: { type: 'string' },
} as const satisfies ParseArgsConfig['options'];

/** One probe of a `--probes` file: its line, the connection, and what to do around it. */
interface Probe {
  readonly line: number;
  readonly spec: ConnectSpec;
  readonly close: boolean;
  readonly after: number;
}

/**
 * Reads a `--probes` file: one probe a line in the flags' own syntax (`--uid 1000 --dst
 * 10.96.0.10:80`, `--from remote --src 10.1.0.5 --dst 10.0.0.2:8080`), plus `--close` (the
 * connection is closed after its handshake) and `--after SECONDS` (the namespace's clock moves on
 * that much first). Blank lines are skipped, and a word starting with `#` starts a comment to the
 * end of its line. Every line is checked
 * before any probe runs; an error names FILE:LINE:COLUMN.
 */
function readProbes(file: string, text: string): Probe[] {
  const probes: Probe[] = [];
  const lines = text.split('\n');
  let offset = 0;
  lines.forEach((raw, i) => {
    const lineOffset = offset;
    offset += raw.length + 1;
    // A word that starts with # starts a comment, to the end of the line.
    const full = raw.endsWith('\r') ? raw.slice(0, -1) : raw;
    const hash = full.search(/(^|\s)#/);
    const line = hash < 0 ? full : full.slice(0, hash);
    const trimmed = line.trim();
    if (trimmed === '') return;
    const at = (token: string | undefined, message: string): SourceError => {
      const found = token === undefined ? -1 : line.search(new RegExp(`(^|\\s)${token.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}(\\s|$)`));
      const col = found < 0 ? line.length - line.trimStart().length : found + (found > 0 || /^\s/.test(line) ? 1 : 0);
      const span = { line: i + 1, column: col + 1, offset: lineOffset + col, length: token?.length ?? trimmed.length };
      return new SourceError(file, text, [diagnostic('BAD_CONFIG', `probe: ${message}`, span, token)]);
    };
    const args = trimmed.split(/\s+/);
    let values: Values;
    try {
      values = parseArgs({ args, options: PROBE_OPTIONS, allowPositionals: false, strict: true }).values;
    } catch (e) {
      const m = e instanceof Error ? e.message : String(e);
      // "--after -5": parseArgs takes -5 for an option and calls the argument ambiguous.
      const ambiguous = /^Option '(?:-\w, )?(--[\w-]+)[^']*' argument is ambiguous/.exec(m);
      if (ambiguous) {
        const flag = ambiguous[1]!;
        const value = args[args.indexOf(flag) + 1];
        throw at(value ?? flag, `${flag} needs a value${value === undefined ? '' : `, not "${value}"`}${flag === '--after' ? ' (a number of seconds, never negative)' : ''}`);
      }
      throw at(quotedArg(m, args), m.split('\n')[0]!.replace(/\. To specify a positional argument.*$/, '').replace(/\. This command does not take positional arguments$/, ' (each option of a probe line starts with --)'));
    }
    let spec: ConnectSpec;
    try {
      spec = connectSpec(values);
      parseEndpoint(spec.dst, true);
      if (spec.src !== undefined && !parseAnyAddress(spec.src)) throw new UsageError(`bad address "${spec.src}" in --src`);
    } catch (e) {
      if (e instanceof UsageError || e instanceof NetfilterSimError) {
        throw at(quotedArg(e.message, args), e.message);
      }
      throw e;
    }
    const after = str(values, 'after');
    if (after !== undefined && (!/^\d+(\.\d+)?$/.test(after) || !Number.isFinite(Number(after)))) throw at(after, `--after needs a number of seconds, not "${after}"`);
    probes.push({ line: i + 1, spec, close: values['close'] === true, after: after === undefined ? 0 : Number(after) });
  });
  if (probes.length === 0) throw new SourceError(file, text, [diagnostic('BAD_CONFIG', `no probes in ${file === '-' ? '<stdin>' : file} (one a line: --uid N --dst IP:PORT, or --from remote --src IP --dst IP:PORT)`)]);
  return probes;
}

/** The argument a message quotes (`'--dts'`, `"10.0.0.300"` inside `10.0.0.300:80`), if any. */
function quotedArg(message: string, args: readonly string[]): string | undefined {
  for (const m of message.matchAll(/'([^' ]+)|"([^"]+)"/g)) {
    const q = m[1] ?? m[2]!;
    const hit = args.find((a) => a === q) ?? args.find((a) => a.includes(q));
    if (hit !== undefined) return hit;
  }
  return undefined;
}

/** Runs the probes of a file in order in one namespace; one result a line. */
function runProbes(ns: Netns, file: string, text: string, probes: readonly Probe[], json: boolean, color: boolean, io: CliIO): void {
  for (const p of probes) {
    let r: ConnectResult;
    try {
      if (p.after > 0) ns.advance(p.after);
      r = ns.connect(p.spec, { close: p.close, trace: json });
    } catch (e) {
      if (e instanceof NetfilterSimError) {
        const d = e.diagnostics[0]!;
        throw new SourceError(file, text, [{ ...d, message: `probe: ${d.message}`, span: { line: p.line, column: 1, offset: 0, length: 0 } }]);
      }
      throw e;
    }
    if (json) io.stdout(JSON.stringify(jsonResult(r)) + '\n');
    else io.stdout(`${p.line}: ${renderOutcome(r, { color })}`);
  }
}

function jsonResult(r: ConnectResult): Omit<ConnectResult, 'trace'> {
  const { trace: _trace, ...rest } = r;
  return rest;
}

/**
 * Runs `netfilter-sim connect ARGS`. Exit 0 when the simulation ran (whatever its outcome),
 * 1 on bad input (rules, addresses), 2 on a usage error.
 *
 * @example
 * ```ts
 * const code = await runConnect(['--rules', 'pod.rules', '--uid', '1000', '--dst', '10.96.0.10:80', '--json'], processIO());
 * ```
 */
export async function runConnect(args: string[], io: CliIO): Promise<number> {
  let sources = new Map<string, string>();
  let files: { rules?: string | undefined; rules6?: string | undefined } = {};
  try {
    const { values } = parseArgs({
      args,
      options: {
        ...NETNS_OPTIONS,
        ...PROBE_SPEC_OPTIONS,
        enumerate: { type: 'boolean' },
        probes: { type: 'string' },
      },
      allowPositionals: false,
      strict: true,
    });
    if (values.help) {
      io.stdout(CONNECT_HELP);
      return EXIT_OK;
    }
    const format = traceFormat(values, 'tree');
    const probesFile = values.probes;
    if (probesFile !== undefined) {
      for (const k of Object.keys(PROBE_OPTIONS)) if (values[k as keyof typeof values] !== undefined) throw new UsageError(`--${k} goes on the lines of the --probes file, not beside it`);
      if (values.enumerate) throw new UsageError('--enumerate and --probes cannot be combined');
      if (values.format !== undefined) throw new UsageError('--probes prints one result a line: no --format (use --json for the steps)');
    }
    const spec = probesFile === undefined ? connectSpec(values) : null;
    files = { rules: values.rules?.[0], rules6: values.rules6 };
    if (probesFile !== undefined && (probesFile === '-' && (files.rules === '-' || files.rules6 === '-'))) throw new UsageError('only one of --rules, --rules6 and --probes can read standard input');
    let probeText = '';
    let probes: Probe[] = [];
    if (probesFile !== undefined) {
      try {
        probeText = io.readFile(probesFile);
      } catch (e) {
        throw e instanceof FileReadError ? e : new FileReadError(probesFile, e);
      }
      probes = readProbes(probesFile, probeText);
    }
    const built = netnsOptions(values, io);
    sources = built.sources;
    const ns = new Netns(built.options);
    const color = useColor(values, io);
    if (spec === null) {
      runProbes(ns, probesFile!, probeText, probes, values.json === true, color, io);
      return EXIT_OK;
    }
    const results = values.enumerate ? ns.connectAll(spec) : [ns.connect(spec)];
    const omitted = results.reduce((sum, r) => sum + (r.traceOmitted ?? 0), 0);
    if (omitted > 0) io.stderr(`netfilter-sim connect: warning: traces keep the first 65536 rule events per call; ${omitted} more were left out\n`);
    if (values.enumerate) {
      const covered = results.reduce((sum, r) => sum + (r.probability ?? 0), 0);
      if (covered < 1 - 1e-9) {
        io.stderr(`netfilter-sim connect: warning: enumeration stopped at ${results.length} branches; they cover ${(covered * 100).toPrecision(4)}% of the probability\n`);
      }
    }
    if (values.json) {
      writeJson(values.enumerate ? results.map(jsonResult) : jsonResult(results[0]!), io.stdout);
      return EXIT_OK;
    }
    results.forEach((r, i) => {
      if (results.length > 1) io.stdout(`${i > 0 ? '\n' : ''}branch ${i + 1} of ${results.length} (probability ${(r.probability ?? 1).toFixed(4)})\n`);
      io.stdout(renderTrace(r.trace ?? [], format, { color }));
      if (format === 'tree' || format === 'text') io.stdout(renderOutcome(r, { color }));
    });
    return EXIT_OK;
  } catch (e) {
    return reportError(e, io, 'connect', sources, files);
  }
}
