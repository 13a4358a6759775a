/**
 * The playground's views as functions of its state: each does what the CLI command of the same
 * name does with the same flags, through the same library calls and renderers, and returns plain
 * data the page can show (and a worker can post). Errors come back as values with their line and
 * column where the input has them, never thrown.
 *
 * @module
 */
import { check } from '../iptables/check/index.js';
import { parseIptablesSave } from '../iptables/syntax/save.js';
import { NetfilterSimError, diagnostic, type Diagnostic } from '../model/errors.js';
import { formatDiagnostic } from '../model/diagnostic-text.js';
import type { Ruleset } from '../model/types.js';
import { detectRulesSyntax, nftLoadErrors } from '../nftables/index.js';
import type { NftRuleset } from '../nftables/model.js';
import { Netns, listenerFromString } from '../engine/path/netns.js';
import type { ConnectResult, ConnectSpec, ListenerSpec, NetnsOptions } from '../engine/path/netns.js';
import { parseIpRoute, parseIpRule } from '../engine/path/ip-args.js';
import type { TraceEvent } from '../engine/trace/events.js';
import { renderOutcome, renderTrace } from '../trace/render.js';
import { traceOutline, type OutlineNode } from '../trace/outline.js';
import { explore, type ExploreOptions, type ExploreResult } from '../explore/explore.js';
import { renderExplore } from '../explore/render.js';
import { simulateMesh } from '../mesh/simulate.js';
import { meshJson, renderMesh } from '../mesh/render.js';
import type { MeshScenarioOptions } from '../mesh/types.js';
import { readPod } from '../compile/pod.js';
import { parseProxyInitArgs } from '../compile/linkerd/config.js';
import { compileProxyInit } from '../compile/linkerd/proxy-init.js';
import { injectProxyInitArgs } from '../compile/linkerd/injector.js';
import { renderLinkerd } from '../compile/linkerd/output.js';
import { parseIstioIptablesCommandLine } from '../compile/istio/args.js';
import { compileIstio } from '../compile/istio/compile.js';
import { detectEnableIPv6 } from '../compile/istio/config.js';
import { formatIstioResult } from '../compile/istio/format.js';
import { istioInitArgsForPod } from '../compile/istio/inject.js';
import { DEFAULT_STATE, type PlaygroundState } from './state.js';
import { traceSequence, type SequenceDiagram } from './sequence.js';
import { shellWords } from './words.js';

/** A diagnostic as the page shows it: where, what, and the CLI's own rendering of it. */
export interface PlaygroundDiagnostic {
  readonly severity: 'error' | 'warning';
  readonly code: string;
  readonly message: string;
  /** 1-based; null for a diagnostic without a place in the text. */
  readonly line: number | null;
  readonly column: number | null;
  readonly length: number;
  /** `formatDiagnostic`'s text: `rules:LINE:COL: message`, the line, the caret run. */
  readonly text: string;
}

/** An error of a view: the input it names ("rules", "client", "--listen") and its diagnostics. */
export interface PlaygroundFailure {
  readonly ok: false;
  /** `rules` when the diagnostics point into the rules editor, else the field or `input`. */
  readonly source: string;
  readonly diagnostics: readonly PlaygroundDiagnostic[];
}

/** What `check` says about the editor's text. */
export interface CheckView {
  readonly ok: boolean;
  readonly syntax: 'iptables' | 'nft';
  readonly rules: number;
  readonly diagnostics: readonly PlaygroundDiagnostic[];
  /** The line `check` prints on success (`rules: ok (8 rules)`), or the count of errors. */
  readonly summary: string;
  readonly command: string;
}

/** A connection's or a packet's result, in every form the page offers. */
export interface TraceView {
  readonly ok: true;
  /** The object `connect --json` (or `trace --json`, without its trace) prints. */
  readonly result: Omit<ConnectResult, 'trace'>;
  /** `renderOutcome`'s line. */
  readonly outcome: string;
  /** Each renderer's text, as `--format` prints it. */
  readonly tree: string;
  readonly text: string;
  readonly mermaid: string;
  readonly dot: string;
  readonly json: string;
  readonly outline: readonly OutlineNode[];
  readonly sequence: SequenceDiagram;
  readonly events: number;
  readonly warnings: readonly string[];
  readonly command: string;
}

/** `explore`'s classes, and its text report. */
export interface ExploreView {
  readonly ok: true;
  readonly result: ExploreResult;
  readonly report: string;
  readonly command: string;
}

/** `mesh`'s answer: the `--json` object, the text tree and the Mermaid diagram. */
export interface MeshView {
  readonly ok: true;
  readonly json: ReturnType<typeof meshJson>;
  readonly text: string;
  readonly mermaid: string;
  readonly command: string;
}

/** `compile`'s output, with what the component (or the injector) said on the side. */
export interface CompileView {
  readonly ok: boolean;
  readonly output: string;
  readonly messages: readonly string[];
  readonly command: string;
}

// For the examples of this module: a state to start from.
export { DEFAULT_STATE, type PlaygroundState };

const RULES_NAME = 'rules';

function placed(d: Diagnostic, text: string | undefined, name: string): PlaygroundDiagnostic {
  const shown = d.severity === 'warning' ? { ...d, message: `warning: ${d.message}` } : d;
  return {
    severity: d.severity,
    code: d.code,
    message: d.message,
    line: d.span?.line ?? null,
    column: d.span?.column ?? null,
    length: d.span?.length ?? 0,
    text: d.span && text !== undefined ? formatDiagnostic(shown, text, name) : `${name}: ${shown.message}`,
  };
}

function failure(source: string, diagnostics: readonly Diagnostic[], text?: string): PlaygroundFailure {
  return { ok: false, source, diagnostics: diagnostics.map((d) => placed(d, text, source)) };
}

/** Any error of a view as a failure: a typed error keeps its diagnostics; anything else is named plainly. */
function caught(e: unknown, source: string, text?: string): PlaygroundFailure {
  if (e instanceof PlaygroundInputError) return failure(e.source, e.diagnostics, e.text);
  if (e instanceof NetfilterSimError) return failure(source, e.diagnostics, text);
  const message = e instanceof Error ? e.message : String(e);
  return failure(source, [diagnostic('BAD_CONFIG', message)]);
}

/** An error in one input of the page, with that input's text for the caret. */
class PlaygroundInputError extends Error {
  readonly source: string;
  readonly diagnostics: readonly Diagnostic[];
  readonly text: string | undefined;
  constructor(source: string, diagnostics: readonly Diagnostic[], text?: string) {
    super(diagnostics[0]?.message ?? source);
    this.source = source;
    this.diagnostics = diagnostics;
    this.text = text;
  }
}

function bad(source: string, message: string): never {
  throw new PlaygroundInputError(source, [diagnostic('BAD_CONFIG', message)]);
}

function syntaxOf(state: PlaygroundState): 'iptables' | 'nft' {
  return state.syntax === 'auto' ? detectRulesSyntax(state.rules) : state.syntax;
}

function countRules(rs: { tables: readonly { chains: readonly { rules: readonly unknown[] }[] }[] }): number {
  let n = 0;
  for (const t of rs.tables) for (const c of t.chains) n += c.rules.length;
  return n;
}

/** A word for a shell command line, quoted only when it has to be. */
function sh(word: string): string {
  return /^[A-Za-z0-9_@%+=:,./-]+$/.test(word) ? word : `'${word.replace(/'/g, `'\\''`)}'`;
}

const lines = (s: string): string[] => s.split('\n').map((l) => l.trim()).filter((l) => l !== '' && !l.startsWith('#'));
const items = (s: string): string[] => s.split(/[\s,]+/).filter((x) => x !== '');

/**
 * The editor's text as `check` sees it: `check FILE` (strict) or `check --lenient FILE` for
 * iptables-save text, `nft -f`'s checks for nft.
 *
 * @example
 * ```ts
 * checkRules({ ...DEFAULT_STATE, rules: '*nat\n-A OUTPUT -j REDIRECT --to-ports x\nCOMMIT\n' }).diagnostics[0]!.line; // 2
 * ```
 */
export function checkRules(state: PlaygroundState): CheckView {
  const text = state.rules;
  const syntax = syntaxOf(state);
  const command = ['netfilter-sim check', ...(state.strict || syntax === 'nft' ? [] : ['--lenient']), ...(state.syntax === 'auto' ? [] : [`--syntax ${state.syntax}`]), 'rules'].join(' ');
  if (syntax === 'nft') {
    const loaded = nftLoadErrors(text);
    const n = countRules(loaded.ruleset);
    const ok = loaded.diagnostics.length === 0;
    return { ok, syntax, rules: n, diagnostics: loaded.diagnostics.map((d) => placed(d, text, RULES_NAME)), summary: ok ? `${RULES_NAME}: ok (${n} rules)` : `${loaded.diagnostics.length} errors`, command };
  }
  const parsed = parseIptablesSave(text, { family: 4, mode: state.strict ? 'strict' : 'lenient' });
  const all: Diagnostic[] = [...parsed.diagnostics];
  if (!parsed.diagnostics.some((d) => d.severity === 'error')) for (const d of check(parsed.ruleset, { backend: 'nft' })) all.push(d);
  // As `check`: a chain that does not exist stops the load.
  const normalized = all.map((d) => (d.code === 'UNKNOWN_CHAIN' || d.code === 'BAD_RULE_NUMBER' || d.code === 'CHAIN_EXISTS' || d.code === 'RULE_NOT_FOUND' ? { ...d, severity: 'error' as const } : d));
  const errors = normalized.filter((d) => d.severity === 'error').length;
  const n = countRules(parsed.ruleset);
  return {
    ok: errors === 0,
    syntax,
    rules: n,
    diagnostics: normalized.map((d) => placed(d, text, RULES_NAME)),
    summary: errors === 0 ? `${RULES_NAME}: ok (${n} rules${normalized.length ? `, ${normalized.length} warnings` : ''})` : `${errors} error${errors === 1 ? '' : 's'}`,
    command,
  };
}

/** The last rules read, kept so that probing a large dump again does not parse it again. */
let cached: { key: string; rules?: Ruleset; nft?: NftRuleset; warnings: readonly Diagnostic[] } | null = null;

/** Reads the rules as `connect` does: leniently unless strict, then the load-time check. */
function loadRules(state: PlaygroundState): { rules?: Ruleset; nft?: NftRuleset; warnings: readonly Diagnostic[] } {
  const text = state.rules;
  if (text.trim() === '') return { warnings: [] };
  const syntax = syntaxOf(state);
  const key = `${syntax}\0${state.strict}\0${text}`;
  if (cached?.key === key) return cached;
  if (syntax === 'nft') {
    const loaded = nftLoadErrors(text);
    if (loaded.diagnostics.length > 0) throw new PlaygroundInputError(RULES_NAME, loaded.diagnostics, text);
    cached = { key, nft: loaded.ruleset, warnings: [] };
    return cached;
  }
  const parsed = parseIptablesSave(text, { family: 4, mode: state.strict ? 'strict' : 'lenient' });
  const parseErrors = parsed.diagnostics.filter((d) => d.severity === 'error');
  if (parseErrors.length > 0) throw new PlaygroundInputError(RULES_NAME, parseErrors, text);
  const checked = check(parsed.ruleset);
  const errors = checked.filter((d) => d.severity === 'error');
  if (errors.length > 0) throw new PlaygroundInputError(RULES_NAME, errors, text);
  cached = { key, rules: parsed.ruleset, warnings: [...parsed.diagnostics.filter((d) => d.severity === 'warning'), ...checked] };
  return cached;
}

/** One `--listen` value: endpoints and the attributes transparent, uid=N, gid=N (as the CLI reads it). */
function listeners(value: string): (string | ListenerSpec)[] {
  let transparent = false;
  let uid: number | undefined;
  let gid: number | undefined;
  const endpoints: string[] = [];
  for (const item of items(value)) {
    const owner = /^(uid|gid)=(.*)$/.exec(item);
    if (item === 'transparent') transparent = true;
    else if (owner) {
      if (!/^\d+$/.test(owner[2]!) || Number(owner[2]) > 0xffffffff) bad('listen', `listen ${value}: ${owner[1]} needs a number from 0 to 4294967295, not "${owner[2]!}"`);
      if (owner[1] === 'uid') uid = Number(owner[2]);
      else gid = Number(owner[2]);
    } else if (/^[a-z]+(=.*)?$/i.test(item) && !/^(tcp|udp)$/i.test(item)) {
      bad('listen', `listen ${value}: unknown attribute "${item}" (transparent, uid=N, gid=N)`);
    } else endpoints.push(item);
  }
  if (endpoints.length === 0) bad('listen', `listen ${value}: no address or port`);
  if (!transparent && uid === undefined && gid === undefined) return endpoints;
  return endpoints.map((e) => ({ ...listenerFromString(e), ...(transparent ? { transparent } : {}), ...(uid !== undefined ? { uid } : {}), ...(gid !== undefined ? { gid } : {}) }));
}

/** The namespace's options from the form, as `connect`'s flags build them. */
function namespaceOptions(state: PlaygroundState): { options: NetnsOptions; warnings: readonly Diagnostic[] } {
  const f = state.ns;
  const options: { -readonly [K in keyof NetnsOptions]: NetnsOptions[K] } = {
    listen: lines(f.listen).flatMap(listeners),
    routeLocalnet: f.routeLocalnet,
    ipForward: f.ipForward,
  };
  const loaded = loadRules(state);
  if (loaded.rules) options.rules = loaded.rules;
  if (loaded.nft) options.nft = loaded.nft;
  let interfaces: Record<string, string[]> | undefined;
  for (const spec of lines(f.ifaces)) {
    const eq = spec.indexOf('=');
    if (eq <= 0) bad('interfaces', `interface needs NAME=ADDR[,ADDR…], not "${spec}"`);
    interfaces ??= Object.create(null) as Record<string, string[]>;
    interfaces[spec.slice(0, eq).trim()] = items(spec.slice(eq + 1));
  }
  if (interfaces) options.interfaces = interfaces;
  const gateways = items(f.gateway);
  if (gateways.length > 0) options.gateway = gateways;
  try {
    const routes = lines(f.routes).map((r) => parseIpRoute(r));
    if (routes.length > 0) options.routes = routes;
  } catch (e) {
    throw e instanceof NetfilterSimError ? new PlaygroundInputError('routes', e.diagnostics) : e;
  }
  try {
    const ipRules = lines(f.ipRules).map((r) => parseIpRule(r));
    if (ipRules.length > 0) options.ipRules = ipRules;
  } catch (e) {
    throw e instanceof NetfilterSimError ? new PlaygroundInputError('policy rules', e.diagnostics) : e;
  }
  return { options, warnings: loaded.warnings };
}

/** The namespace's flags, for the command line the page shows. */
function namespaceFlags(state: PlaygroundState): string[] {
  const f = state.ns;
  const out = ['--rules', 'rules'];
  if (state.syntax !== 'auto') out.push('--syntax', state.syntax);
  if (state.strict && syntaxOf(state) === 'iptables') out.push('--strict');
  for (const l of lines(f.listen)) out.push('--listen', sh(l.replace(/\s+/g, '')));
  for (const l of lines(f.ifaces)) out.push('--iface', sh(l.replace(/\s+/g, '')));
  for (const g of items(f.gateway)) out.push('--gateway', sh(g));
  for (const r of lines(f.ipRules)) out.push('--rule', sh(r));
  for (const r of lines(f.routes)) out.push('--route', sh(r));
  if (f.routeLocalnet) out.push('--route-localnet');
  if (f.ipForward) out.push('--ip-forward');
  return out;
}

function uint(value: string, name: string, max = 0xffffffff): number | undefined {
  const s = value.trim();
  if (s === '') return undefined;
  if (!/^(0x[0-9a-f]+|\d+)$/i.test(s)) bad(name, `${name} needs a number, not "${s}"`);
  const n = Number(s);
  if (n > max) bad(name, `${name} is at most ${max}, not ${s}`);
  return n;
}

/** The connection of the form, as `connect`'s flags give it. */
function connectSpec(state: PlaygroundState): { spec: ConnectSpec; flags: string[] } {
  const c = state.conn;
  const dst = c.dst.trim();
  if (dst === '') bad('destination', 'the destination IP:PORT is required');
  const sport = uint(c.sport, 'source port', 65535);
  const flags: string[] = [];
  if (c.from === 'local') {
    const uid = uint(c.uid, 'uid');
    if (uid === undefined) bad('uid', 'a local process needs a uid');
    const gid = uint(c.gid, 'gid');
    const mark = uint(c.mark, 'mark');
    const src = c.src.trim();
    flags.push('--uid', String(uid));
    if (gid !== undefined) flags.push('--gid', String(gid));
    if (src !== '') flags.push('--src', sh(src));
    if (sport !== undefined) flags.push('--sport', String(sport));
    if (mark !== undefined) flags.push('--mark', c.mark.trim());
    if (c.proto !== 'tcp') flags.push('--proto', c.proto);
    flags.push('--dst', sh(dst));
    return {
      spec: {
        from: 'local', uid, dst,
        ...(gid !== undefined ? { gid } : {}),
        ...(sport !== undefined ? { sport } : {}),
        ...(c.proto !== 'tcp' ? { proto: c.proto } : {}),
        ...(src !== '' ? { src } : {}),
        ...(mark !== undefined ? { mark } : {}),
      },
      flags,
    };
  }
  const src = c.src.trim();
  if (src === '') bad('source', 'a remote client needs a source address');
  const iface = c.iface.trim();
  flags.push('--from', 'remote', '--src', sh(src));
  if (iface !== '') flags.push('--in', sh(iface));
  if (sport !== undefined) flags.push('--sport', String(sport));
  if (c.proto !== 'tcp') flags.push('--proto', c.proto);
  flags.push('--dst', sh(dst));
  return {
    spec: { from: 'remote', src, dst, ...(sport !== undefined ? { sport } : {}), ...(c.proto !== 'tcp' ? { proto: c.proto } : {}), ...(iface !== '' ? { iface } : {}) },
    flags,
  };
}

function warningTexts(ds: readonly Diagnostic[], text: string): string[] {
  return ds.map((d) => placed(d, text, RULES_NAME).text);
}

function traceView(r: ConnectResult, trace: readonly TraceEvent[], warnings: string[], command: string): TraceView {
  const { trace: _t, ...result } = r;
  if (r.traceOmitted) warnings.push(`the trace keeps the first 65536 rule events; ${r.traceOmitted} more were left out`);
  return {
    ok: true,
    result,
    outcome: renderOutcome(r, { color: false }),
    tree: renderTrace(trace, 'tree', { color: false }),
    text: renderTrace(trace, 'text', { color: false }),
    mermaid: renderTrace(trace, 'mermaid', { color: false }),
    dot: renderTrace(trace, 'dot', { color: false }),
    json: renderTrace(trace, 'json', { color: false }),
    outline: traceOutline(trace),
    sequence: traceSequence(trace),
    events: trace.length,
    warnings,
    command,
  };
}

/**
 * `connect`: the form's connection through a fresh namespace built from the rules and the
 * namespace form.
 *
 * @example
 * ```ts
 * const v = runConnect({ ...DEFAULT_STATE, rules: saveText, ns: { ...DEFAULT_STATE.ns, listen: '4140,4143,8080' } });
 * if (v.ok) v.result.outcome; // 'local'
 * ```
 */
export function runConnect(state: PlaygroundState): TraceView | PlaygroundFailure {
  try {
    const { spec, flags } = connectSpec(state);
    const { options, warnings } = namespaceOptions(state);
    const r = new Netns(options).connect(spec);
    return traceView(r, r.trace ?? [], warningTexts(warnings, state.rules), ['netfilter-sim connect', ...namespaceFlags(state), ...flags].join(' '));
  } catch (e) {
    return caught(e, 'connection');
  }
}

/**
 * `trace --packet`: one packet through every hook it visits.
 *
 * @example
 * ```ts
 * runPacket({ ...DEFAULT_STATE, packet: 'tcp 10.0.0.5:40000 > 10.0.0.2:8080 in eth0' });
 * ```
 */
export function runPacket(state: PlaygroundState): TraceView | PlaygroundFailure {
  try {
    if (state.packet.trim() === '') bad('packet', 'the packet is required (PROTO [SRC[:SPORT]] > DST[:DPORT] …)');
    const { options, warnings } = namespaceOptions(state);
    const r = new Netns(options).trace(state.packet.trim());
    return traceView(r, r.trace ?? [], warningTexts(warnings, state.rules), ['netfilter-sim trace', ...namespaceFlags(state), '--packet', sh(state.packet.trim())].join(' '));
  } catch (e) {
    return caught(e, 'packet');
  }
}

/**
 * `explore`: every connection of the space, in classes that share one outcome.
 *
 * @example
 * ```ts
 * const v = runExplore({ ...DEFAULT_STATE, rules: saveText, explore: { ...DEFAULT_STATE.explore, from: 'local' } });
 * if (v.ok) v.result.classes.length;
 * ```
 */
export function runExplore(state: PlaygroundState): ExploreView | PlaygroundFailure {
  try {
    const f = state.explore;
    const { options: ns } = namespaceOptions(state);
    const options: ExploreOptions = {
      ...ns,
      from: f.from,
      ...(f.proto !== 'tcp' ? { proto: f.proto } : {}),
      ...(f.family === '4' ? { family: 4 as const } : f.family === '6' ? { family: 6 as const } : {}),
    };
    const result = explore(options);
    const command = ['netfilter-sim explore', ...namespaceFlags(state), '--from', f.from, ...(f.proto !== 'tcp' ? ['--proto', f.proto] : []), ...(f.family === 'both' ? [] : [`-${f.family}`])].join(' ');
    return { ok: true, result, report: renderExplore(result), command };
  } catch (e) {
    return caught(e, 'explore');
  }
}

/**
 * `mesh`: a connection between the two pods, end to end.
 *
 * @example
 * ```ts
 * const v = runMesh({ ...DEFAULT_STATE, mesh: { ...DEFAULT_STATE.mesh, mesh: 'linkerd' } });
 * if (v.ok) v.json.verdict; // 'meshed'
 * ```
 */
export function runMesh(state: PlaygroundState): MeshView | PlaygroundFailure {
  const f = state.mesh;
  let side = 'client';
  try {
    const client = f.client.trim() === '' ? undefined : readPod(f.client);
    side = 'server';
    const server = f.server.trim() === '' ? undefined : readPod(f.server);
    side = 'mesh';
    const phase = f.phase.trim();
    if (phase !== '' && phase !== 'app' && !/^init:.+/.test(phase)) bad('phase', `the phase is app or init:NAME, not "${phase}"`);
    const options: MeshScenarioOptions = {
      mesh: f.mesh,
      ...(client ? { client } : {}),
      ...(server ? { server } : {}),
      ...(f.dst.trim() !== '' ? { dst: f.dst.trim() } : {}),
      ...(f.cni ? { cni: true } : {}),
      ...(f.nativeSidecars !== 'default' ? { nativeSidecars: f.nativeSidecars === 'on' } : {}),
      ...(phase !== '' && phase !== 'app' ? { phase } : {}),
      ...(f.ambient && f.mesh === 'istio' ? { ambient: true } : {}),
    };
    const result = simulateMesh(options);
    const command = [
      `netfilter-sim mesh ${f.mesh}`,
      ...(client ? ['--client', 'client.yaml'] : []),
      ...(server ? ['--server', 'server.yaml'] : []),
      ...(options.dst !== undefined ? ['--dst', sh(options.dst)] : []),
      ...(f.cni ? ['--cni'] : []),
      ...(f.nativeSidecars !== 'default' ? ['--native-sidecars', f.nativeSidecars] : []),
      ...(options.phase !== undefined ? ['--phase', sh(options.phase)] : []),
      ...(options.ambient ? ['--ambient'] : []),
    ].join(' ');
    return { ok: true, json: meshJson(result), text: renderMesh(result, 'text', { color: false }), mermaid: renderMesh(result, 'mermaid'), command };
  } catch (e) {
    return caught(e, side, side === 'client' ? f.client : side === 'server' ? f.server : undefined);
  }
}

/** The injector's reason for leaving the pod alone (`NOT_INJECTED`), or `null`. */
function injectorSkip(inject: () => unknown): string | null {
  try {
    inject();
    return null;
  } catch (e) {
    if (e instanceof NetfilterSimError && e.diagnostics[0]?.code === 'NOT_INJECTED') return e.diagnostics[0].message;
    throw e;
  }
}

/**
 * `compile linkerd|istio`: the rules the component writes, from its flags or from a Pod (the
 * injector's defaults writing the flags).
 *
 * @example
 * ```ts
 * const v = runCompile({ ...DEFAULT_STATE, compile: { mesh: 'linkerd', input: 'flags', flags: '-p 4143 -o 4140 -u 2102 --ipv6=false', pod: '', format: 'save' } });
 * if ('output' in v) console.log(v.output);
 * ```
 */
export function runCompile(state: PlaygroundState): CompileView | PlaygroundFailure {
  const f = state.compile;
  try {
    const messages: string[] = [];
    let argv: readonly string[];
    let podIPs: readonly string[] = [];
    if (f.input === 'pod') {
      if (f.pod.trim() === '') bad('pod', 'paste a Pod manifest');
      let pod;
      try {
        pod = readPod(f.pod);
      } catch (e) {
        throw e instanceof NetfilterSimError ? new PlaygroundInputError('pod', e.diagnostics, f.pod) : e;
      }
      const skipped = injectorSkip(() => (f.mesh === 'linkerd' ? injectProxyInitArgs({ pod }) : istioInitArgsForPod(pod)));
      if (skipped !== null) return { ok: true, output: '', messages: [skipped], command: '' };
      if (f.mesh === 'linkerd') {
        const inj = injectProxyInitArgs({ pod });
        if (inj.error !== undefined) return { ok: false, output: '', messages: [`the proxy injector fails for this pod: ${inj.error}`], command: '' };
        for (const w of inj.warnings) messages.push(`warning: ${w}`);
        if (inj.args === null) return { ok: true, output: '', messages: [...messages, `the proxy injector adds no linkerd-init to this pod: cniEnabled (${inj.container} only)`], command: '' };
        messages.push(`injector: linkerd-proxy runs ${inj.nativeSidecar ? 'as a native sidecar' : 'as a regular container'}; linkerd-init ${inj.args.join(' ')}`);
        argv = inj.args;
      } else {
        const injected = istioInitArgsForPod(pod);
        if (injected === null) return { ok: true, output: '', messages: ['the sidecar injector adds no istio-init to this pod: interception mode NONE'], command: '' };
        argv = injected;
        podIPs = pod.podIPs;
      }
    } else argv = shellWords(f.flags);
    const command = `netfilter-sim compile ${f.mesh} ${f.input === 'pod' ? '--pod pod.yaml' : argv.map(sh).join(' ')} --format ${f.format}`;
    if (f.mesh === 'linkerd') {
      const parsed = parseProxyInitArgs(argv);
      if (!parsed.ok) bad('flags', parsed.error);
      for (const arg of parsed.positional) messages.push(`proxy-init: ignoring argument ${JSON.stringify(arg)} (proxy-init takes no arguments; bool flags need --flag=false)`);
      const result = compileProxyInit(parsed.config);
      for (const line of result.log) messages.push(`proxy-init: ${line}`);
      for (const line of result.warnings) messages.push(`proxy-init: warning: ${line}`);
      const error = result.error;
      if (error && error.stage !== 'iptables') return { ok: false, output: '', messages: [...messages, error.stage === 'config' ? error.stderrFirstLine : `proxy-init: ${error.message}`], command };
      const output = renderLinkerd(result, f.format);
      if (error) return { ok: false, output, messages: [...messages, ...(error.toolStderr ? [error.toolStderr.trimEnd()] : []), error.stderrFirstLine], command };
      return { ok: true, output, messages, command };
    }
    let line;
    try {
      line = parseIstioIptablesCommandLine(argv);
    } catch (e) {
      throw e instanceof NetfilterSimError ? new PlaygroundInputError('flags', e.diagnostics) : e;
    }
    for (const a of line.ignored) messages.push(`warning: ignored argument "${a}" (istio-iptables takes no positional arguments)`);
    const config = podIPs.length > 0 ? { ...line.config, enableIPv6: detectEnableIPv6(podIPs, line.config.dualStack) } : line.config;
    const result = compileIstio(config);
    for (const w of result.warnings) messages.push(`warning: ${w}`);
    for (const c of result.ipCommands) messages.push(`# also run in the pod: ${c.join(' ')}`);
    return { ok: true, output: formatIstioResult(result, f.format), messages, command };
  } catch (e) {
    return caught(e, f.input === 'pod' ? 'pod' : 'flags', f.input === 'pod' ? f.pod : undefined);
  }
}
