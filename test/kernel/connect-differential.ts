/**
 * The body of a connect differential suite: generated pods go through the kernel (real sockets in
 * throw-away namespaces) and through `Netns`, probe by probe in order, in one namespace each, and
 * outcome, address, port and SO_ORIGINAL_DST must agree. A mismatch prints the seed, the rules,
 * both answers and our trace.
 */
import { beforeAll, expect, it } from 'vitest';
import type { ConnectCase, SimProbe } from './generate.js';
import { RETRY_TIMEOUT_MS, kernelConnectMany } from './harness.js';
import type { BatchOptions, KernelCase, KernelConnectOptions, KernelConnectReport, KernelListener, KernelProbeResult } from './harness.js';
import { describeError, loadNetns } from './sim.js';
import type { SimConnectResult, SimNetnsConstructor } from './sim.js';

interface View {
  readonly outcome: string;
  readonly address: string | null;
  readonly port: number | null;
  readonly originalDestination: string | null;
  /** The source address (not port: both ends pick ephemeral ports their own way) the accepting side saw. */
  readonly source: string | null;
  /** What the client's connect() returned: an errno name (the kernel's timeout is ETIMEDOUT), null when it connected. */
  readonly errno: string | null;
  /** With {@link ConnectCase.peer}: the peer the accepting socket saw (`ADDR` or `ADDR port PORT`). */
  readonly peer?: string | null;
}

/** `10.0.0.2:41234` or `[fd00::2]:41234` without its port. */
const hostOf = (endpoint: string | null | undefined): string | null => (endpoint ? endpoint.replace(/:\d+$/, '').replace(/^\[(.*)\]$/, '$1') : null);

/**
 * The errno probe.py saw: `timeout` (no answer within the probe's wait; the kernel's connect()
 * would end with ETIMEDOUT once its SYN retransmissions run out), `bind: EADDRNOTAVAIL` (the
 * bind before connect), an errno name, or null when it connected (also when the handshake
 * completed on the client's side and no listener accepted: a harness note, shown apart).
 */
function kernelErrno(r: KernelProbeResult): string | null {
  if (r.outcome === 'local' || r.outcome === 'remote') return null;
  const e = r.error ?? null;
  if (e === null) return null;
  if (e === 'timeout') return 'ETIMEDOUT';
  const name = e.replace(/^bind: /, '');
  // A harness note ("connected, but no listener accepted"): connect() returned 0.
  return /^E[A-Z0-9]+$/.test(name) ? name : null;
}

const kernelView = (r: KernelProbeResult): View => ({ outcome: r.outcome, address: r.address, port: r.port, originalDestination: r.originalDestination, source: r.outcome === 'local' || r.outcome === 'remote' ? hostOf(r.peer) : null, errno: kernelErrno(r) });
const simView = (r: SimConnectResult): View => ({ outcome: r.outcome, address: r.address, port: r.port, originalDestination: r.originalDestination, source: hostOf(r.source), errno: r.errno ?? null });

/** `10.0.0.2:5000` / `[fd00::2]:5000` → address and port. */
function splitEndpoint(e: string): { addr: string; port: string } {
  const m = /^\[(.*)\]:(\d+)$/.exec(e) ?? /^(.*):(\d+)$/.exec(e);
  return m ? { addr: m[1] as string, port: m[2] as string } : { addr: e, port: '' };
}

/** The peer as compared: the address, and the port when the probe chose its source port. */
function peerText(endpoint: string | null | undefined, withPort: boolean): string | null {
  if (!endpoint) return null;
  const { addr, port } = splitEndpoint(endpoint);
  return withPort ? `${addr} port ${port}` : addr;
}

/**
 * The source the accepting socket sees, from our trace: the SYN's source, rewritten by each SRC
 * binding applied to it (SNAT, MASQUERADE, NETMAP) on its way to the listener.
 */
export function simPeer(r: SimConnectResult): string | null {
  if (r.outcome !== 'local' && r.outcome !== 'remote') return null;
  let peer: string | null = null;
  for (const e of r.trace ?? []) {
    if (e.packet !== 0) continue;
    if (e.type === 'packet') {
      const src = String(e['src']);
      peer = `${src.includes(':') ? `[${src}]` : src}:${String(e['sport'])}`;
    } else if (e.type === 'nat' && e['manip'] === 'SRC' && e['action'] === 'apply') peer = String(e['to']);
  }
  return peer;
}

function show(v: View | undefined): string {
  if (!v) return '(none)';
  const where = v.address === null ? '' : ` ${v.address.includes(':') ? `[${v.address}]` : v.address}:${v.port}`;
  return `${v.outcome}${v.errno ? ` ${v.errno}` : ''}${where}${v.originalDestination ? ` (SO_ORIGINAL_DST ${v.originalDestination})` : ''}${v.source ? ` from ${v.source}` : ''}${v.peer ? ` peer ${v.peer}` : ''}`;
}

function report(c: ConnectCase, k: readonly View[], o: readonly (SimConnectResult | string)[], notes: readonly (string | undefined)[], oViews?: readonly View[]): string {
  const lines = [
    `connect differential mismatch: seed=${c.seed} (${c.description})`,
    `--- rules4 ---`,
    c.kernel.rules4 || '(none)',
    `--- rules6 ---`,
    c.kernel.rules6 || '(none)',
    `--- listeners: ${c.sim.listen.map((l) => (typeof l === 'object' ? JSON.stringify(l) : String(l))).join(', ')} ---`,
    ...(c.kernel.ipBatch?.length ? [`--- ip: ${c.kernel.ipBatch.join('; ')} ---`] : []),
    ...(c.kernel.ipsets ? [`--- ipsets ---`, c.kernel.ipsets] : []),
    `--- probes: kernel | ours ---`,
  ];
  c.probes.forEach((p, i) => {
    const ours = o[i];
    const ov = oViews?.[i] ?? (typeof ours === 'string' || ours === undefined ? undefined : simView(ours));
    const oursView = typeof ours === 'string' ? ours : ov ? show(ov) : '(not run)';
    const same = typeof ours !== 'string' && ov !== undefined && JSON.stringify(ov) === JSON.stringify(k[i]);
    lines.push(`${same ? ' ' : '✗'} ${i + 1}. ${JSON.stringify(p)}`);
    lines.push(`     kernel: ${show(k[i])}${notes[i] ? `  [${notes[i]}]` : ''}`);
    lines.push(`     ours:   ${oursView}`);
    if (!same && ours && typeof ours !== 'string') {
      if (ours.reason) lines.push(`     reason: ${ours.reason}`);
      for (const s of ours.steps ?? []) lines.push(`       ${JSON.stringify(s)}`);
    }
  });
  return lines.join('\n');
}

/** Registers one test per case (inside a `describeKernel` body). */
export function connectDifferential(cases: readonly ConnectCase[], title = 'seed $seed', options: BatchOptions & KernelConnectOptions = {}): void {
  const kernel = new Map<ConnectCase, KernelConnectReport>();
  let Netns: SimNetnsConstructor | Error;

  beforeAll(async () => {
    Netns = await loadNetns().catch((e: unknown) => (e instanceof Error ? e : new Error(String(e))));
    if (Netns instanceof Error) return; // every case fails with the reason; no need for the kernel
    const t0 = Date.now();
    const reports = await kernelConnectMany(cases.map((c) => c.kernel), options);
    cases.forEach((c, i) => kernel.set(c, reports[i] as KernelConnectReport));
    const probes = cases.reduce((n, c) => n + c.probes.length, 0);
    console.log(`[kernel] ${cases.length} cases, ${probes} probes: ${((Date.now() - t0) / 1000).toFixed(1)} s`);
  }, 600_000);

  it.for(cases)(title, async (c) => {
    if (Netns instanceof Error) throw Netns;
    const first = kernel.get(c) as KernelConnectReport;
    if (!first.ok) expect.fail(`seed=${c.seed}: the kernel did not take the generated case (${first.stage}, status ${first.status}):\n${first.stderr}\n--- rules4 ---\n${c.kernel.rules4}\n--- rules6 ---\n${c.kernel.rules6}`);
    let k: Extract<KernelConnectReport, { ok: true }> = first;
    const noteOf = (r: (typeof first.results)[number]): string | undefined => (r.error && r.error !== 'timeout' && !/^E[A-Z]+$/.test(r.error) ? r.error : undefined);
    const withPeer = (v: View, peer: string | null | undefined, i: number): View =>
      c.peer ? { ...v, peer: v.outcome === 'local' || v.outcome === 'remote' ? peerText(peer, c.probes[i]?.sport !== undefined) : null } : v;
    let kernelViews = k.results.map((r, i) => withPeer(kernelView(r), r.peer, i));
    let ns;
    try {
      ns = new Netns(c.sim);
    } catch (e) {
      expect.fail(report(c, kernelViews, c.probes.map(() => `Netns constructor threw: ${describeError(e)}`), k.results.map(noteOf)));
    }
    // In order, in one namespace: conntrack state carries from probe to probe, as in the kernel.
    const results: (SimConnectResult | string)[] = [];
    for (const probe of c.probes) {
      // A probe's `after` (NamedProbe): the clock moves on first, as the kernel side sleeps.
      const { after, ...p } = probe as SimProbe & { readonly after?: number };
      if (after !== undefined) ns.advance(after);
      try {
        results.push(ns.connect(p as SimProbe));
      } catch (e) {
        results.push(`threw ${describeError(e)}`);
      }
    }
    const oursViews = results.map((r, i) => (typeof r === 'string' ? withPeer({ outcome: r, address: null, port: null, originalDestination: null, source: null, errno: null }, null, i) : withPeer(simView(r), simPeer(r), i)));
    // A probe the kernel left unanswered within the batch's timeout, where we answer, is asked
    // again: the whole case, alone, in fresh namespaces, with 3 s per connect(). On a loaded
    // machine the loopback's RST can wait in the softirq backlog past a short timeout; a packet
    // the rules really drop stays dropped however long the wait.
    const differs = oursViews.map((v, i) => JSON.stringify(v) !== JSON.stringify(kernelViews[i]));
    if (differs.some((d) => d) && differs.every((d, i) => !d || (k.results[i]?.error === 'timeout' && oursViews[i]?.outcome !== 'dropped'))) {
      const again = (await kernelConnectMany([c.kernel], { ...options, concurrency: 1, connectTimeoutMs: RETRY_TIMEOUT_MS }))[0] as KernelConnectReport;
      if (again.ok && again.results.length === k.results.length) {
        console.log(`[kernel] seed=${c.seed}: probes ${differs.flatMap((d, i) => (d ? [i + 1] : [])).join(', ')} timed out; asked again with ${RETRY_TIMEOUT_MS} ms`);
        k = again;
        kernelViews = k.results.map((r, i) => withPeer(kernelView(r), r.peer, i));
      }
    }
    // Harness notes (a failed bind, a handshake no listener completed), not errno names or timeouts.
    const notes = k.results.map(noteOf);
    expect(oursViews, report(c, kernelViews, results, notes, oursViews)).toEqual(kernelViews);
  });
}

/** A listener of a hand-written case: a port (0.0.0.0 and [::]) or one address, optionally IP_TRANSPARENT. */
export type NamedListener = number | { readonly address?: string; readonly port: number; readonly transparent?: boolean };

/** A probe of a hand-written case: a local one may carry SO_MARK, a bound source and IP_TRANSPARENT. */
export type NamedProbe = (SimProbe | (Extract<SimProbe, { from: 'local' }> & { readonly mark?: number; readonly src?: string; readonly transparent?: boolean })) & {
  /**
   * The kernel side keeps both ends of this connection open until the case ends, as `Netns`
   * keeps every connection it makes (by default the harness closes each with a RST after the probe).
   */
  readonly keep?: boolean;
  /** Seconds that pass before this probe: the kernel side sleeps, `Netns` advances its clock. */
  readonly after?: number;
};

/** A hand-written case: rules, listeners, and probes made in order in one namespace. */
export interface NamedCase {
  readonly name: string;
  readonly rules4: string;
  readonly rules6?: string;
  /** Ports (bound to 0.0.0.0 and [::]) or listeners bound to one address. */
  readonly listen: readonly NamedListener[];
  readonly probes: readonly NamedProbe[];
  /** More `Netns` options (the virtual clock, interfaces, routes, ipRules, for instance). */
  readonly options?: Readonly<Record<string, unknown>>;
  /** `ip -batch` lines run in the real pod before the rules (the kernel side of `options`' interfaces and routes). */
  readonly ipBatch?: readonly string[];
  /** `ip -batch` lines run in the real world namespace (routes back to extra pod addresses). */
  readonly worldBatch?: readonly string[];
  /** An nft script loaded after the iptables rules (`nft -f`; the `nft` option of `Netns`). */
  readonly nft?: string;
}

const endpointText = (address: string, port: number): string => (address.includes(':') ? `[${address}]:${port}` : `${address}:${port}`);

/** A local probe of a hand-written case: uid (and gid) 1000 unless given, with its socket options. */
export const namedLocal = (dst: string, extra: { uid?: number; mark?: number; src?: string; transparent?: boolean } = {}): NamedProbe => {
  const uid = extra.uid ?? 1000;
  return { from: 'local', uid, gid: uid, dst, ...(extra.mark === undefined ? {} : { mark: extra.mark }), ...(extra.src ? { src: extra.src } : {}), ...(extra.transparent ? { transparent: true } : {}) };
};
/** A remote probe of a hand-written case. */
export const namedRemote = (src: string, dst: string): NamedProbe => ({ from: 'remote', src, dst });
/** `*NAME` … `COMMIT` around rule lines: `saveTable('nat')('-A OUTPUT …')`. */
export const saveTable = (name: string) => (...lines: string[]): string => `*${name}\n${lines.join('\n')}\nCOMMIT\n`;

/**
 * The hand-written cases wait up to a second for connect(): a case's first probes may wait for
 * neighbour discovery on addresses it added, which a loaded machine can stretch past the
 * generated cases' 400 ms (a connection the kernel makes then looked dropped).
 */
const NAMED_OPTIONS = { connectTimeoutMs: 1000 };

/** Registers one test per hand-written case (inside a `describeKernel` body), as {@link connectDifferential}. */
export function namedDifferential(cases: readonly NamedCase[]): void {
  connectDifferential(cases.map((c, i): ConnectCase & { name: string } => {
    const listeners: KernelListener[] = c.listen.map((l) => (typeof l === 'number' ? { port: l } : { ...(l.address ? { address: l.address } : {}), port: l.port, ...(l.transparent ? { transparent: true } : {}) }));
    const listen = c.listen.map((l) => {
      if (typeof l === 'number') return l;
      if (l.address === undefined || l.transparent) return { ...(l.address ? { address: l.address } : {}), port: l.port, ...(l.transparent ? { transparent: true } : {}) };
      return endpointText(l.address, l.port);
    });
    const kernel: KernelCase = {
      rules4: c.rules4,
      rules6: c.rules6 ?? '',
      listeners,
      probes: c.probes.map((p) => {
        const wait = p.after === undefined ? {} : { waitMs: Math.round(p.after * 1000) };
        if (p.from === 'local') {
          const { after: _after, ...rest } = p;
          return { ...rest, from: 'local', ...wait };
        }
        return { from: 'remote', src: p.src, dst: p.dst, ...(p.sport === undefined ? {} : { sport: p.sport }), ...(p.keep ? { keep: true } : {}), ...wait };
      }),
      ...(c.ipBatch ? { ipBatch: c.ipBatch } : {}),
      ...(c.worldBatch ? { worldBatch: c.worldBatch } : {}),
      ...(c.nft ? { nft: c.nft } : {}),
    };
    const probes = c.probes.map((p): SimProbe & { readonly after?: number } => {
      if (p.keep === undefined) return p;
      const { keep: _keep, ...rest } = p;
      return rest as SimProbe;
    });
    return { seed: i + 1, name: c.name, description: c.name, kernel, sim: { rules: c.rules4, rules6: c.rules6 ?? '', listen: listen as (number | string)[], ...(c.nft ? { nft: c.nft } : {}), ...(c.options ?? {}) }, probes };
  }), '$name', NAMED_OPTIONS);
}
