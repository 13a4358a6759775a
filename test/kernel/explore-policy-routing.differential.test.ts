// explore with policy routing against the kernel: the Istio TPROXY sidecar and the ambient pod,
// with the `ip rule`/`ip route` their components add, explored from both sides (IPv4). From a grid
// of probes the kernel harness can make (sources it can own, destinations it can route to the
// pod), up to three per class are run in a real pod namespace; each kernel outcome (with address,
// port and SO_ORIGINAL_DST) must be the one of the class that holds the probe.
import { beforeAll, expect, it } from 'vitest';
import { classOf, explore, expectedFor } from '../../src/explore/index.js';
import type { ExploreClass, ExploreResult } from '../../src/explore/index.js';
import type { ListenerSpec } from '../../src/engine/path/netns.js';
import { POLICY_PODS } from '../explore/policy-pods.js';
import { describeKernel, kernelConnectMany } from './harness.js';
import type { KernelCase, KernelConnectReport, KernelListener, KernelProbe } from './harness.js';

const PORTS = [80, 8080, 15001, 15006, 15008, 15090];
const REMOTE_SRCS = ['10.1.0.5', '192.168.7.7', '169.254.7.127'];
const REMOTE_DSTS = ['10.0.0.2', '10.9.9.9'];
const LOCAL_DSTS = ['10.0.0.2', '127.0.0.1', '10.0.0.1', '10.9.9.9'];
const UIDS = [0, 1000, 1337];

function grid(from: 'local' | 'remote'): KernelProbe[] {
  const out: KernelProbe[] = [];
  for (const port of PORTS) {
    if (from === 'remote') for (const src of REMOTE_SRCS) for (const d of REMOTE_DSTS) out.push({ from, src, dst: `${d}:${port}` });
    else for (const uid of UIDS) for (const d of LOCAL_DSTS) out.push({ from, uid, dst: `${d}:${port}` });
  }
  return out;
}

/** Up to `per` probes of the grid in each class, the classes in order. */
function drawn(r: ExploreResult, per: number): { probe: KernelProbe; cls: ExploreClass }[] {
  const count = new Map<ExploreClass, number>();
  const out: { probe: KernelProbe; cls: ExploreClass }[] = [];
  for (const p of grid(r.from)) {
    const cls = classOf(r, p.from === 'local' ? { uid: p.uid, gid: p.uid, dst: p.dst } : { src: p.src, dst: p.dst, iface: 'eth0' });
    if (cls === undefined) throw new Error(`no class holds ${JSON.stringify(p)}`);
    const n = count.get(cls) ?? 0;
    if (n >= per) continue;
    count.set(cls, n + 1);
    out.push({ probe: p, cls });
  }
  return out;
}

const kernelListener = (l: number | string | ListenerSpec): KernelListener => (typeof l === 'number' ? { port: l } : typeof l === 'string' ? { port: Number(l) } : { port: l.port, ...(l.uid !== undefined ? { uid: l.uid } : {}), ...(l.transparent ? { transparent: true } : {}) });

const CASES = POLICY_PODS.flatMap((pod) =>
  (['local', 'remote'] as const).map((from) => {
    const r = explore({ ...pod.options, from, family: 4 });
    const probes = drawn(r, 3);
    const kernel: KernelCase = {
      rules4: pod.options.rules as string,
      listeners: (pod.options.listen ?? []).map(kernelListener),
      probes: probes.map((p) => p.probe),
      ipBatch: pod.ipCommands.filter((c) => c[1] === '-4' && (c[2] === 'rule' || c[2] === 'route')).map((c) => [c[2]!, ...c.slice(3)].join(' ')),
      worldBatch: ['route add 10.9.9.0/24 via 10.0.0.2'],
    };
    return { name: `${pod.name}, ${from}`, r, probes, kernel };
  }),
);

describeKernel('explore with policy routing: kernel probes drawn from each class get their class\'s outcome', () => {
  let reports: KernelConnectReport[] = [];
  beforeAll(async () => {
    reports = await kernelConnectMany(CASES.map((c) => c.kernel));
  }, 120_000);

  it.each(CASES.map((c, i) => [c.name, i] as const))('%s', (_name, i) => {
    const c = CASES[i]!;
    const k = reports[i]!;
    if (!k.ok) expect.fail(`${c.name}: the kernel did not take the case (${k.stage}, status ${k.status}):\n${k.stderr}`);
    // The grid reaches the classes the harness can make probes for (the rest hold only martian
    // or unroutable probes: sources in 0.0.0.0/8 or 127.0.0.0/8, multicast, …).
    expect(c.probes.length).toBeGreaterThan(0);
    c.probes.forEach(({ probe, cls }, j) => {
      const got = k.results[j]!;
      const want = expectedFor(cls, probe.from === 'remote' ? { src: probe.src, dst: probe.dst } : { dst: probe.dst });
      expect({ outcome: got.outcome, address: got.address, port: got.port, originalDestination: got.originalDestination }, `${c.name}: ${JSON.stringify(probe)} in class ${JSON.stringify(cls.example)} ${JSON.stringify(cls.rules)}`).toEqual(want);
    });
  });
});
