// The ambient in-pod path of `mesh istio` against the kernel: an ambient pod as the scenario
// prepares it (istio-cni's in-pod rules, iptables or nftables backend, and its routing) is loaded
// into a real namespace with ztunnel's listeners (15001, 15006, 15008, 127.0.0.1:15053) and the
// application's (8080); real sockets make the connections the scenario's hops make (the app's
// outbound, ztunnel's own with SO_MARK 0x539, HBONE and plain-text arrivals, the kubelet probe's
// SNATed source, DNS over TCP, an app that sets 0x539 itself), and which listener accepted and
// SO_ORIGINAL_DST must be what the scenario's namespace says, probe by probe. The node's host rule
// (the kubelet probe SNAT) is checked the same way, with the source the world sees.
import { beforeAll, expect, it } from 'vitest';
import type { Pod } from '../../src/compile/pod.js';
import { prepareMeshPod, simulateMesh } from '../../src/mesh/index.js';
import { hostProbeRules } from '../../src/mesh/ambient.js';
import { podRuntime } from '../../src/mesh/runtime.js';
import { departure } from '../../src/mesh/decide.js';
import type { MeshPod } from '../../src/mesh/types.js';
import { Netns, type ConnectSpec } from '../../src/engine/path/netns.js';
import { printIptablesSave } from '../../src/iptables/print/save.js';
import { describeKernel, describeNftKernel, kernelConnectMany, type KernelCase, type KernelConnectReport, type KernelProbe } from './harness.js';

const POD_IP = '10.0.0.2'; // the harness pod's eth0
const PEER = '10.0.1.5';

function ambientPod(annotations: Record<string, string> = {}): Pod {
  return {
    kind: 'Pod', name: 'app', namespace: 'shop', labels: { 'istio.io/dataplane-mode': 'ambient' }, annotations,
    initContainers: [], podIPs: [POD_IP],
    containers: [{ name: 'app', command: [], args: [], env: [], ports: [{ containerPort: 8080, protocol: 'TCP' }], runAsUser: 1000 }],
  };
}

/** `ip -4 route replace …` → `route replace …` for `ip -batch`. */
function batchLines(p: MeshPod): string[] {
  return p.ipCommands.map((c) => c.slice(1).filter((x) => x !== '-4' && x !== '-6').join(' '));
}

interface Probe {
  readonly name: string;
  readonly kernel: KernelProbe;
}

const PROBES: readonly Probe[] = [
  { name: "the app's outbound connection (to ztunnel's 15001)", kernel: { from: 'local', uid: 1000, dst: `${PEER}:8080` } },
  { name: "ztunnel's HBONE to the peer's 15008, mark 0x539", kernel: { from: 'local', uid: 0, mark: 0x539, dst: `${PEER}:15008` } },
  { name: 'ztunnel in plain text to an uninjected peer, mark 0x539', kernel: { from: 'local', uid: 0, mark: 0x539, dst: `${PEER}:8080` } },
  { name: 'an app that sets 0x539 itself', kernel: { from: 'local', uid: 1000, mark: 0x539, dst: `${PEER}:8080` } },
  { name: 'a mark with other bits outside 0xfff: still ztunnel\'s', kernel: { from: 'local', uid: 1000, mark: 0x1539, dst: `${PEER}:8081` } },
  { name: 'HBONE arriving at 15008', kernel: { from: 'remote', src: '10.0.0.1', dst: `${POD_IP}:15008` } },
  { name: 'plain text arriving at the app port (to 15006)', kernel: { from: 'remote', src: '10.0.0.1', dst: `${POD_IP}:8080` } },
  { name: 'the kubelet probe from 169.254.7.127', kernel: { from: 'remote', src: '169.254.7.127', dst: `${POD_IP}:8080` } },
  { name: "ztunnel delivering to the app (mark 0x539, not captured again)", kernel: { from: 'local', uid: 0, mark: 0x539, dst: `${POD_IP}:8080` } },
  { name: 'DNS over TCP (to 15053)', kernel: { from: 'local', uid: 1000, dst: '10.96.0.10:53' } },
  { name: 'ztunnel\'s own DNS query upstream (mark 0x539)', kernel: { from: 'local', uid: 0, mark: 0x539, dst: '10.96.0.10:53' } },
  { name: 'the app to 127.0.0.1', kernel: { from: 'local', uid: 1000, dst: '127.0.0.1:8080' } },
  { name: 'the app to its own pod address', kernel: { from: 'local', uid: 1000, dst: `${POD_IP}:8080` } },
];

interface Variant {
  readonly name: string;
  readonly pod: MeshPod;
  readonly nft: boolean;
}

const variants: Variant[] = [
  { name: 'iptables, DNS capture on', pod: prepareMeshPod('istio', ambientPod()), nft: false },
  { name: 'iptables, DNS capture off, bypass-inbound-capture', pod: prepareMeshPod('istio', ambientPod({ 'ambient.istio.io/bypass-inbound-capture': 'true' }), { dnsCapture: false }), nft: false },
];
const nftVariant: Variant = { name: 'nftables, DNS capture on', pod: prepareMeshPod('istio', ambientPod(), { nativeNftables: true }), nft: true };

function kernelCase(v: Variant): KernelCase {
  const p = v.pod;
  return {
    ...(p.rules4 ? { rules4: printIptablesSave(p.rules4) } : {}),
    ...(p.nft ? { nft: p.nft } : {}),
    ipBatch: batchLines(p),
    listeners: [
      { port: 15001, uid: 0 }, { port: 15006, uid: 0 }, { port: 15008, uid: 0 }, { address: '127.0.0.1', port: 15053, uid: 0 },
      { port: 8080, uid: 1000 },
    ],
    probes: PROBES.map((x) => x.kernel),
  };
}

interface View {
  readonly outcome: string;
  readonly address: string | null;
  readonly port: number | null;
  readonly originalDestination: string | null;
}
const view = (r: View): View => ({ outcome: r.outcome, address: r.address, port: r.port, originalDestination: r.originalDestination });

describeKernel('ambient in-pod path: the scenario\'s pod namespace vs the kernel', () => {
  const reports = new Map<Variant, KernelConnectReport>();
  let node: KernelConnectReport;
  beforeAll(async () => {
    const all = await kernelConnectMany([...variants.map(kernelCase), nodeCase()]);
    variants.forEach((v, i) => reports.set(v, all[i]!));
    node = all[variants.length]!;
  }, 120_000);

  it.for(variants)('$name: every probe lands where the simulated pod says', (v) => checkVariant(v, reports.get(v)!));

  it('the scenario\'s own hops agree with the kernel\'s delivery (ambient ↔ ambient, plain text in, the ztunnel mark)', () => {
    const k = reports.get(variants[0]!)!;
    if (!k.ok) expect.fail(k.stderr);
    const peer: Pod = { ...ambientPod(), name: 'peer', podIPs: [PEER] };
    const out = simulateMesh({ mesh: 'istio', client: ambientPod(), server: peer });
    const at = (r: View): string => `${r.address}:${r.port}`;
    expect(out.hops[0]!.to).toBe(at(k.results[0]!));
    expect(out.hops[0]!.originalDestination).toBe(k.results[0]!.originalDestination);
    expect(out.hops[1]!.to).toBe(at(k.results[1]!));
    const inbound = simulateMesh({ mesh: 'istio', client: { ...ambientPod(), name: 'peer', labels: {}, podIPs: ['10.0.0.1'] }, server: ambientPod() });
    expect(inbound.hops[1]!.to).toBe(at(k.results[6]!));
    expect(inbound.hops[1]!.originalDestination).toBe(k.results[6]!.originalDestination);
    expect(inbound.hops[2]!.to).toBe(at(k.results[8]!));
    const marked = simulateMesh({ mesh: 'istio', client: ambientPod(), server: peer, mark: 0x539 });
    expect(marked.hops[0]!.outcome).toBe(k.results[3]!.outcome);
  });

  it("the node's host rule SNATs the kubelet's probe to the probe address; without the pod in the ipset it does not", () => {
    if (!node.ok) expect.fail(`the kernel did not take the host rules (${node.stage}):\n${node.stderr}`);
    const h = hostProbeRules([PEER], false, SNAT);
    const sim = new Netns({ rules: h.rules!, ipsets: h.ipsets!, listen: [], interfaces: { eth0: ['10.0.0.2/24', `${SNAT}/32`] } });
    const probes = nodeProbes();
    const ours = probes.map((p) => sim.connect(p as ConnectSpec, { trace: true }));
    node.results.forEach((r, i) => {
      expect(view(ours[i]!)).toEqual(view(r));
      // The source the packet left with (after SNAT) is the one the world's socket saw.
      expect(departure(ours[i]!.trace)?.src).toBe(r.peer?.split(':')[0]);
    });
    expect(node.results[0]!.peer?.startsWith(`${SNAT}:`)).toBe(true);
    expect(node.results[1]!.peer?.startsWith('10.0.0.2:')).toBe(true);
  });
});

function checkVariant(v: Variant, k: KernelConnectReport): void {
  if (!k.ok) expect.fail(`the kernel did not take the ambient pod's rules (${k.stage}, status ${k.status}):\n${k.stderr}`);
  // The very namespace the scenario runs the pod in.
  const rt = podRuntime(v.pod, 'app', [POD_IP]);
  const ours = PROBES.map((p) => view(rt.ns.connect(p.kernel as ConnectSpec, { trace: false })));
  const theirs = k.results.map(view);
  const lines = PROBES.map((p, i) => `${JSON.stringify(ours[i]) === JSON.stringify(theirs[i]) ? ' ' : '✗'} ${p.name}: kernel ${JSON.stringify(theirs[i])} ours ${JSON.stringify(ours[i])}`);
  expect(ours, lines.join('\n')).toEqual(theirs);
  // And what the kernel did is what the hops of the scenario say, where the probe is a hop.
  const outbound = theirs[0]!;
  expect(outbound).toEqual({ outcome: 'local', address: '127.0.0.1', port: 15001, originalDestination: `${PEER}:8080` });
  expect(theirs[1]!.outcome).toBe('remote');
  expect(theirs[5]).toMatchObject({ outcome: 'local', port: 15008 });
  expect(theirs[7]).toMatchObject({ outcome: 'local', port: 8080 });
  expect(theirs[8]).toMatchObject({ outcome: 'local', port: 8080 });
  expect(theirs[3]!.outcome).toBe('remote');
  expect(theirs[6]).toMatchObject({ outcome: 'local', port: v.pod.ambient!.bypassInbound ? 8080 : 15006 });
  // DNS over TCP: to the DNS proxy with capture on, else to ztunnel's outbound like any TCP.
  expect(theirs[9]).toMatchObject({ outcome: 'local', address: '127.0.0.1', port: v.pod.ambient!.dnsCapture ? 15053 : 15001 });
}


describeNftKernel('ambient in-pod path, nftables backend: the scenario\'s pod namespace vs the kernel', () => {
  let report: KernelConnectReport;
  beforeAll(async () => {
    report = (await kernelConnectMany([kernelCase(nftVariant)]))[0]!;
  }, 120_000);
  it('every probe lands where the simulated pod says', () => checkVariant(nftVariant, report));
});

/**
 * The probe SNAT address here: one the harness's world can answer (it has no route to 169.254/16),
 * held by the node as a second address so that the answers come back to it.
 */
const SNAT = '10.0.0.77';

/** The node as the harness pod: the host rules, the probe ipset holding PEER (an ambient pod). */
function nodeProbes(): KernelProbe[] {
  return [
    { from: 'local', uid: 0, dst: `${PEER}:8080` },
    // Not in the ipset: no SNAT.
    { from: 'local', uid: 0, dst: '10.0.1.9:8080' },
  ];
}

function nodeCase(): KernelCase {
  const h = hostProbeRules([PEER], false, SNAT);
  return { rules4: h.rules!, ipsets: h.ipsets!, ipBatch: [`addr add ${SNAT}/32 dev eth0`], listeners: [], probes: nodeProbes() };
}
