/**
 * What a broken law reports: the law, what happened, the rule set as `iptables-save` text and a
 * `netfilter-sim connect` command line that replays it; and {@link explainCounterexample}, which
 * writes all of it (with the trace) for a failing property's message.
 *
 * @module
 */
import type { ConnectResult } from '../engine/path/netns.js';
import { renderOutcome, renderTraceTree } from '../trace/render.js';
import { expectArgument, expectFields } from '../model/guard.js';

/**
 * A connection a law probed, in the shape `Netns.connect` takes.
 *
 * @example
 * ```ts
 * const p: LawProbe = { from: 'local', uid: 1000, gid: 1000, dst: '10.96.0.10:80', proto: 'tcp' };
 * ```
 */
export type LawProbe =
  | { readonly from: 'local'; readonly uid: number; readonly gid?: number; readonly dst: string; readonly proto?: 'tcp' | 'udp' }
  | { readonly from: 'remote'; readonly src: string; readonly dst: string; readonly proto?: 'tcp' | 'udp' };

/**
 * A law's counterexample: everything needed to see and replay the failure.
 *
 * @example
 * ```ts
 * const cx: Counterexample | undefined = proxyNeverCapturesItself(setup, probe);
 * if (cx) console.log(explainCounterexample(cx));
 * ```
 */
export interface Counterexample {
  /** The law, in words (`the proxy never captures its own traffic`). */
  readonly law: string;
  /** What happened, against what the law says. */
  readonly message: string;
  /** The address family of the rule set shown. */
  readonly family: 4 | 6;
  /** The rule set, as `iptables-save` prints it (the IPv6 one for an IPv6 probe). */
  readonly rules: string;
  /**
   * A command line that replays it: `netfilter-sim connect --rules - … --dst …`, reading the
   * rules on standard input (see {@link explainCounterexample} for the full shell snippet).
   * Absent for laws about text rather than connections.
   */
  readonly command?: string;
  /** The probe, when the law made a connection. */
  readonly probe?: LawProbe;
  /** What the simulated connection did (with its steps and trace). */
  readonly result?: ConnectResult;
  /** The configuration a compiler was given, when the rules came from one. */
  readonly config?: unknown;
  /** Further detail: a diff, the second rule set, a note on what the command line cannot express. */
  readonly details?: string;
  /**
   * What lenient reading of the setup's rule text dropped (`CaptureSetup.lenient`), one line
   * each with its position: the rules the law ran are not all the text said. Absent when nothing was.
   */
  readonly warnings?: readonly string[];
}

// Brackets are not safe: an IPv6 destination ([fd00::5]:1) would be a glob pattern to the shell.
const SAFE = /^[A-Za-z0-9_./:,=@%+\-]+$/;

/** POSIX shell quoting for one argument. */
function shellQuote(arg: string): string {
  return SAFE.test(arg) ? arg : `'${arg.replace(/'/g, `'\\''`)}'`;
}

/**
 * The `netfilter-sim connect` arguments that replay a probe against rules read from standard
 * input (`--rules -`, or `--rules6 -` for IPv6), with the namespace's interfaces and gateways
 * when they are not the default pod's.
 *
 * @example
 * ```ts
 * connectCommand({ from: 'local', uid: 2102, dst: '10.96.0.10:80' }, [4140, 4143], 4);
 * // 'netfilter-sim connect --rules - --listen 4140,4143 --from local --uid 2102 --dst 10.96.0.10:80'
 * ```
 */
export function connectCommand(
  probe: LawProbe,
  listen: readonly (number | string)[],
  family: 4 | 6,
  netns: { readonly interfaces?: readonly { readonly name: string; readonly addresses: readonly string[] }[]; readonly gateway?: readonly string[] } = {},
): string {
  expectArgument(probe, 'object', 'probe');
  expectArgument(listen, 'array', 'listen');
  expectArgument(netns, 'object', 'netns');
  const args = ['netfilter-sim', 'connect', family === 6 ? '--rules6' : '--rules', '-'];
  if (listen.length > 0) args.push('--listen', listen.join(','));
  for (const i of netns.interfaces ?? []) args.push('--iface', `${i.name}=${i.addresses.join(',')}`);
  for (const g of netns.gateway ?? []) args.push('--gateway', g);
  if (probe.from === 'local') {
    args.push('--from', 'local', '--uid', `${probe.uid}`);
    if (probe.gid !== undefined && probe.gid !== probe.uid) args.push('--gid', `${probe.gid}`);
  } else {
    args.push('--from', 'remote', '--src', probe.src);
  }
  args.push('--dst', probe.dst);
  if (probe.proto !== undefined && probe.proto !== 'tcp') args.push('--proto', probe.proto);
  return args.map(shellQuote).join(' ');
}

/** JSON with one field per line, but arrays of plain values on one line. */
function compactJson(value: unknown): string {
  return JSON.stringify(value, null, 2).replace(/\[\s*\n([^[\]{}]*?)\n\s*\]/g, (_, items: string) => `[${items.split('\n').map((l) => l.trim()).join(' ')}]`);
}

function indent(text: string, by = '    '): string {
  return text.replace(/\n$/, '').split('\n').map((l) => (l.length > 0 ? by + l : l)).join('\n');
}

/**
 * Writes a counterexample for people: the law and what broke it, the probe the law ran (which may
 * differ from the generated one a property reports, when the property aims it), the shell snippet
 * that replays it (the command with the rule set as a here-document, unindented so that it pastes
 * into a shell as printed), and the trace of the connection. Use it as the message of a failing
 * property.
 *
 * @example
 * ```ts
 * import * as fc from 'fast-check';
 * import { connection } from 'netfilter-sim/arbitraries';
 * fc.assert(fc.property(connection({ from: 'local' }), (probe) => {
 *   const cx = appTrafficReachesProxy(setup, probe);
 *   if (cx) throw new Error(explainCounterexample(cx));
 * }));
 * ```
 */
export function explainCounterexample(cx: Counterexample): string {
  expectFields(cx, { law: 'string', message: 'string', rules: 'string' }, 'counterexample');
  const out: string[] = [];
  out.push(`Law broken: ${cx.law}`);
  out.push(indent(cx.message, '  '));
  if (cx.warnings !== undefined && cx.warnings.length > 0) {
    out.push('', 'Read leniently: the rules the law ran leave out what these say was dropped:', ...cx.warnings.map((w) => `  ${w}`));
  }
  if (cx.probe !== undefined) out.push('', 'Probe (the connection the law made):', indent(JSON.stringify(cx.probe)));
  if (cx.config !== undefined) out.push('', 'Configuration:', indent(compactJson(cx.config)));
  if (cx.command !== undefined) {
    // Not indented: bash ends a here-document only at a line that is exactly `EOF`.
    out.push('', 'Replay it (paste into a shell):', `${cx.command} <<'EOF'`, cx.rules.replace(/\n$/, ''), 'EOF');
  } else {
    out.push('', `Rules (iptables-save, IPv${cx.family}):`, indent(cx.rules.length > 0 ? cx.rules : '(empty)'));
  }
  if (cx.result) {
    // The first packet decides where a connection goes; the whole exchange matters when it failed.
    const whole = cx.result.outcome === 'refused' || cx.result.outcome === 'dropped';
    const trace = (cx.result.trace ?? []).filter((e) => whole || e.packet === 0);
    out.push('', whole ? 'What happened:' : 'What happened (the first packet; the replay shows the whole exchange):');
    if (trace.length > 0) out.push(indent(renderTraceTree(trace, { color: false })));
    out.push(indent(renderOutcome(cx.result, { color: false })));
  }
  if (cx.details !== undefined) out.push('', indent(cx.details, ''));
  return out.join('\n') + '\n';
}
