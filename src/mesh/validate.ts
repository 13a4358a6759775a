/**
 * The meshes' start-up checks, run as they run in the pod: `linkerd-network-validator` (CNI mode)
 * and `istio-validation` (the `istio-iptables --run-validation` probe).
 *
 * @module
 */
import { LINKERD_SCENARIO_DEFAULTS } from './linkerd.js';
import { ISTIO_SCENARIO_DEFAULTS } from './istio.js';
import { podRuntime, type PodListener } from './runtime.js';
import type { MeshPod, ValidatorResult } from './types.js';
import { expectArgument, expectFields } from '../model/guard.js';

/**
 * Runs the start-up check of a pod, if it has one (`linkerd-network-validator` or
 * `istio-validation` among its init containers), at its point of the start-up: with the rules
 * written before it (by the CNI plugin) and only its own listeners.
 *
 * - Linkerd: listens on `0.0.0.0:4140` as UID 65534 and connects to `1.1.1.1:20001`; the rules
 *   must redirect that connection to its own listener, otherwise it exits with 95.
 * - Istio: listens on `127.0.0.1:15001` and `127.0.0.1:15006` as UID 1337 and connects from
 *   `127.0.0.1` to `127.0.0.6:15002`; it must land on 15006 with original port 15002, otherwise
 *   it exits with 126.
 *
 * @example
 * ```ts
 * const v = validateMeshPod(prepareMeshPod('istio', pod, { cni: true }));
 * v?.ok; // true: 127.0.0.6:15002 reached 127.0.0.1:15006
 * ```
 */
export function validateMeshPod(pod: MeshPod, addressesGiven?: readonly string[]): ValidatorResult | null {
  expectFields(pod, { pod: 'object' }, 'pod');
  const addresses = addressesGiven ?? pod.pod.podIPs;
  expectArgument(addresses, 'array', 'addresses');
  const step = pod.startup.find((s) => s.stage === 'init' && s.effect === 'validator');
  if (!step) return null;
  const phase = `init:${step.name}`;
  if (pod.mesh === 'linkerd') {
    const d = LINKERD_SCENARIO_DEFAULTS.validator;
    const own = { container: step.name, uid: d.uid, gid: d.uid, role: 'probe' as const, label: step.name };
    const port = pod.proxy?.outboundPort ?? 4140;
    const listeners: PodListener[] = [{ ...own, address: null, port, proto: 'tcp' }];
    const rt = podRuntime(pod, phase, addresses, listeners);
    const probe = pod.rules6 && !pod.rules4 ? d.probe6 : d.probe4;
    const r = rt.ns.connect({ from: 'local', uid: d.uid, dst: probe }, { trace: false });
    const ok = r.outcome === 'local' && r.port === port;
    return {
      pod: pod.name,
      container: step.name,
      ok,
      exitCode: ok ? 0 : d.exitCode,
      probe,
      landed: landed(r.outcome, r.address, r.port),
      originalDestination: r.originalDestination,
      message: ok
        ? `${step.name}: its connection to ${probe} was redirected to its own listener on ${port}: the rules are in place`
        : `${step.name} exits with ${d.exitCode}: its connection to ${probe} was not redirected to its listener on ${port} (${landed(r.outcome, r.address, r.port)}), so the pod stays in Init:CrashLoopBackOff; the linkerd-cni repair controller deletes such pods (event LinkerdCNINotConfigured) so that they are recreated once the plugin is in place`,
    };
  }
  const d = ISTIO_SCENARIO_DEFAULTS.validator;
  const own = { container: step.name, uid: d.uid, gid: d.uid, role: 'probe' as const, label: step.name, proto: 'tcp' as const };
  const six = addresses.length > 0 && addresses[0]!.includes(':');
  const lo = six ? '::1' : '127.0.0.1';
  const listeners: PodListener[] = [
    { ...own, address: lo, port: 15001 },
    { ...own, address: lo, port: 15006 },
  ];
  const rt = podRuntime(pod, phase, addresses, listeners);
  const probe = six ? d.probe6 : d.probe4;
  const r = rt.ns.connect({ from: 'local', uid: d.uid, src: lo, dst: probe }, { trace: false });
  const expected = six ? '[::6]:15002' : '127.0.0.6:15002';
  const ok = r.outcome === 'local' && r.port === 15006 && r.originalDestination === expected;
  return {
    pod: pod.name,
    container: step.name,
    ok,
    exitCode: ok ? 0 : d.exitCode,
    probe,
    landed: landed(r.outcome, r.address, r.port),
    originalDestination: r.originalDestination,
    message: ok
      ? `${step.name}: its probe to ${probe} ${landed(r.outcome, r.address, r.port)} with original destination ${r.originalDestination}: the rules are in place`
      : `${step.name} exits with ${d.exitCode}: its probe to ${probe} ${landed(r.outcome, r.address, r.port)} instead of reaching 15006 with original port 15002, so the pod does not start; istio-cni's repair (cni.repair) deletes or labels such pods — recreate the pod once istio-cni is ready`,
  };
}

function landed(outcome: string, address: string | null, port: number | null): string {
  const at = address === null ? '' : address.includes(':') ? `[${address}]:${port}` : `${address}:${port}`;
  switch (outcome) {
    case 'local':
      return `was accepted at ${at}`;
    case 'remote':
      return `left the pod for ${at}`;
    case 'refused':
      return 'was refused';
    default:
      return 'was dropped';
  }
}
