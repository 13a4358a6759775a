/**
 * `mesh … --all-ports`: the verdict for every destination port 1–65535, as port ranges. The
 * ports are cut wherever anything on the way can tell two ports apart: the classes `explore`
 * finds in each pod's namespace (every rule, listener and route), the listeners, the Services
 * and the proxies' opaque ports. One connection per range then decides the range, since every
 * leg of the journey treats its ports alike. The same per client UID where the UID matters.
 *
 * @module
 */
import { NetfilterSimError, diagnostic } from '../model/errors.js';
import { expectArgument, expectFields, expectObjects } from '../model/guard.js';
import { expectMeshScenarioOptions } from './options-shape.js';
import { explore } from '../explore/explore.js';
import { canonicalAddress, formatAddr, parseServices } from './address.js';
import { defaultPods } from './defaults.js';
import { podRuntime, type PodRuntime } from './runtime.js';
import { asNamespace, asPod, defaultDestination, podAddresses, prepareMeshPod, simulateMesh } from './simulate.js';
import type { MeshScenarioOptions, MeshService, MeshVerdict } from './types.js';

/** Ports `[first, last]` with one verdict. */
export interface PortVerdict {
  readonly ports: readonly [number, number];
  readonly verdict: MeshVerdict;
}

/** The verdicts of a UID range, when the client's UID matters. */
export interface UidVerdicts {
  readonly uids: readonly [number, number];
  readonly ranges: readonly PortVerdict[];
}

/** What {@link simulateMeshAllPorts} returns (and `mesh --all-ports --json` prints). */
export interface MeshAllPortsResult {
  readonly mesh: 'linkerd' | 'istio';
  /** The destination address every port was tried on. */
  readonly address: string;
  /** The connecting process's UID for {@link ranges}. */
  readonly uid: number;
  readonly ranges: readonly PortVerdict[];
  /** Present when some client UID gets other verdicts: every UID range with its own. */
  readonly byUid?: readonly UidVerdicts[];
}

function cutsOf(rt: PodRuntime, proto: 'tcp' | 'udp', ports: Set<number>, uids: Set<number> | null): void {
  for (const from of ['local', 'remote'] as const) {
    if (from === 'remote' && !rt.options.interfaces) continue;
    const r = explore({ ...rt.options, from, proto });
    for (const c of r.classes) {
      for (const b of c.boxes) {
        ports.add(b.dport![0]);
        ports.add(b.dport![1] + 1);
        if (uids !== null && b.uid) {
          uids.add(b.uid[0]);
          uids.add(b.uid[1] + 1);
        }
      }
    }
  }
  for (const l of rt.listeners) {
    ports.add(l.port);
    ports.add(l.port + 1);
  }
  for (const p of rt.mesh.opaquePorts) {
    ports.add(p);
    ports.add(p + 1);
  }
}

function intervals(cuts: Set<number>, lo: number, hi: number): [number, number][] {
  const sorted = [...cuts].filter((c) => c > lo && c <= hi).sort((a, b) => a - b);
  const out: [number, number][] = [];
  let start = lo;
  for (const c of sorted) {
    out.push([start, c - 1]);
    start = c;
  }
  out.push([start, hi]);
  return out;
}

function merge(list: PortVerdict[]): PortVerdict[] {
  const out: PortVerdict[] = [];
  for (const v of list) {
    const last = out[out.length - 1];
    if (last && last.verdict === v.verdict && last.ports[1] + 1 === v.ports[0]) out[out.length - 1] = { ports: [last.ports[0], v.ports[1]], verdict: v.verdict };
    else out.push(v);
  }
  return out;
}

/**
 * The mesh verdict for every destination port of one address, exactly.
 *
 * @example
 * ```ts
 * const r = simulateMeshAllPorts({ mesh: 'linkerd' });
 * r.ranges; // [{ ports: [1, 4189], verdict: 'meshed' }, { ports: [4190, 4191], verdict: 'server-bypass' }, …]
 * ```
 */
export function simulateMeshAllPorts(options: MeshScenarioOptions): MeshAllPortsResult {
  expectMeshScenarioOptions(options);
  const mesh = options.mesh;
  if (mesh !== 'linkerd' && mesh !== 'istio') throw new NetfilterSimError(diagnostic('BAD_CONFIG', `unknown mesh "${String(mesh)}" (linkerd or istio)`));
  const defaults = defaultPods(mesh);
  const namespace = asNamespace(options.namespace);
  const proto = options.proto ?? 'tcp';
  const phase = options.phase ?? 'app';
  const notReady = options.cniNotReady;
  const prep = (pod: Parameters<typeof asPod>[0], role: 'client' | 'server') =>
    prepareMeshPod(mesh, asPod(pod), {
      ...(namespace ? { namespace } : {}),
      ...(options.cni !== undefined ? { cni: options.cni } : {}),
      ...(options.nativeSidecars !== undefined ? { nativeSidecars: options.nativeSidecars } : {}),
      cniNotReady: notReady === true || notReady === role,
      // Ambient pods (and their nft rules with istio-cni's nftables backend) cut the ports too.
      ...(options.ambient === true || options.ambient === role ? { ambient: true } : {}),
      ...(options.nativeNftables !== undefined ? { nativeNftables: options.nativeNftables } : {}),
      ...(options.dnsCapture !== undefined ? { dnsCapture: options.dnsCapture } : {}),
    });
  const client = prep(options.client ?? defaults.client, 'client');
  const server = prep(options.server ?? defaults.server, 'server');
  const warnings: string[] = [];
  const clientAddrs = podAddresses(client, '10.0.0.2', warnings);
  const serverAddrs = podAddresses(server, '10.0.1.5', warnings);
  const clientRt = podRuntime(client, phase, clientAddrs);
  const serverRt = podRuntime(server, 'app', serverAddrs);
  let address: string;
  if (options.dst !== undefined) {
    const m = /^\[([^\]]+)\](?::\d+)?$/.exec(options.dst) ?? /^([^:]+)(?::\d+)?$/.exec(options.dst) ?? /^([0-9a-f:]+)$/i.exec(options.dst);
    const a = m ? canonicalAddress(m[1]!) : null;
    if (a === null) throw new NetfilterSimError(diagnostic('BAD_CONFIG', `bad --dst "${options.dst}" (ADDR or ADDR:PORT)`));
    address = a;
  } else address = defaultDestination(server, serverAddrs, proto).address;
  const services: readonly MeshService[] = typeof options.services === 'string' ? parseServices(options.services) : options.services ?? [];
  const ports = new Set<number>();
  const uids = new Set<number>();
  cutsOf(clientRt, proto, ports, uids);
  cutsOf(serverRt, proto, ports, null);
  for (const s of services) {
    ports.add(s.port);
    ports.add(s.port + 1);
    for (const e of s.endpoints) {
      ports.add(e.port);
      ports.add(e.port + 1);
    }
  }
  const portRanges = intervals(ports, 1, 65535);
  const run = (uid: number | undefined): PortVerdict[] =>
    merge(portRanges.map(([lo, hi]) => {
      const r = simulateMesh({ ...options, dst: formatAddr(address, lo), ...(uid !== undefined ? { uid } : {}) });
      return { ports: [lo, hi] as const, verdict: r.verdict };
    }));
  const first = simulateMesh({ ...options, dst: formatAddr(address, portRanges[0]![0]) });
  const actorUid = Number(/uid (\d+)/.exec(first.hops[0]?.from ?? '')?.[1] ?? options.uid ?? 0);
  const ranges = run(options.uid);
  const result: { -readonly [K in keyof MeshAllPortsResult]: MeshAllPortsResult[K] } = { mesh, address, uid: options.uid ?? actorUid, ranges };
  if (options.uid === undefined) {
    const byUid = intervals(uids, 0, 4294967295).map(([lo, hi]): UidVerdicts => ({ uids: [lo, hi], ranges: run(lo) }));
    const same = (a: readonly PortVerdict[], b: readonly PortVerdict[]): boolean => JSON.stringify(a) === JSON.stringify(b);
    if (byUid.some((u) => !same(u.ranges, ranges))) {
      const merged: UidVerdicts[] = [];
      for (const u of byUid) {
        const last = merged[merged.length - 1];
        if (last && same(last.ranges, u.ranges)) merged[merged.length - 1] = { uids: [last.uids[0], u.uids[1]], ranges: u.ranges };
        else merged.push(u);
      }
      result.byUid = merged;
    }
  }
  return result;
}

/** `1–4189 meshed · 4190–4191 server-bypass · …`. */
export function renderPortVerdicts(ranges: readonly PortVerdict[]): string {
  expectArgument(ranges, 'array', 'ranges');
  expectObjects(ranges, 'ranges');
  return ranges.map((r) => `${r.ports[0] === r.ports[1] ? r.ports[0] : `${r.ports[0]}–${r.ports[1]}`} ${r.verdict}`).join(' · ');
}

/**
 * The text form of {@link simulateMeshAllPorts}.
 *
 * @example
 * ```ts
 * process.stdout.write(renderMeshAllPorts(simulateMeshAllPorts({ mesh: 'istio' })));
 * ```
 */
export function renderMeshAllPorts(r: MeshAllPortsResult): string {
  expectFields(r, { ranges: 'array', mesh: 'string' }, 'result');
  const lines = [`${r.mesh}: every port of ${r.address}, from uid ${r.uid}`, `  ${renderPortVerdicts(r.ranges)}`];
  if (r.byUid) {
    lines.push('', 'by client uid:');
    for (const u of r.byUid) lines.push(`  uid ${u.uids[0] === u.uids[1] ? u.uids[0] : `${u.uids[0]}–${u.uids[1]}`}: ${renderPortVerdicts(u.ranges)}`);
  }
  return lines.join('\n') + '\n';
}
