/**
 * The kernel-verified proxy-init lab (test/fixtures/linkerd/lab.json) replayed through the
 * scenario pipeline: each lab pod written as a Pod manifest with its linkerd-init arguments,
 * prepared (rules from the arguments, listeners from its containers), and probed as the lab
 * probes it: from a remote client, from its own containers, and from one pod to another.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { podFromObject, type Pod } from '../../../src/compile/pod.js';
import { prepareMeshPod, simulateMesh } from '../../../src/mesh/index.js';
import { findListener, podRuntime } from '../../../src/mesh/runtime.js';

interface LabListener { container: string; port: number; uid: number; response: string }
interface LabProbe { from: 'remote' | 'local'; uid: number | null; dstAddress: string; dstPort: number; expected: string; response?: string; container?: string }
interface LabPod { args: string[] | null; listeners: LabListener[]; probes: LabProbe[] }

const lab = JSON.parse(readFileSync(join(import.meta.dirname, '..', '..', 'fixtures', 'linkerd', 'lab.json'), 'utf8')) as { pods: Record<string, LabPod> };
const UNDER_TEST = '10.0.0.2';
const PLAIN = '10.0.1.5';

function labPod(name: string, p: LabPod, ip: string): Pod {
  const byContainer = new Map<string, LabListener[]>();
  for (const l of p.listeners) byContainer.set(l.container, [...(byContainer.get(l.container) ?? []), l]);
  return podFromObject({
    kind: 'Pod',
    metadata: { name },
    spec: {
      initContainers: p.args ? [{ name: 'linkerd-init', args: p.args }] : [],
      containers: [...byContainer].map(([c, ls]) => ({
        name: c,
        ports: ls.map((l) => ({ containerPort: l.port })),
        securityContext: { runAsUser: ls[0]!.uid },
      })),
    },
    status: { podIPs: [{ ip }] },
  });
}

const plain = labPod('pod-with-no-rules', lab.pods['pod-with-no-rules']!, PLAIN);

describe.each(Object.entries(lab.pods))('%s', (name, p) => {
  const manifest = labPod(name, p, UNDER_TEST);
  const prepared = prepareMeshPod('linkerd', manifest);
  const containerOf = (response: string | undefined): string | undefined =>
    [...p.listeners, ...lab.pods['pod-with-no-rules']!.listeners].find((l) => l.response === response)?.container;

  it.each(p.probes.filter((x) => x.from === 'remote').map((x) => [x.dstPort, x.expected, x] as const))('remote → pod:%i: %s', (_port, _expected, probe) => {
    const rt = podRuntime(prepared, 'app', [UNDER_TEST]);
    const r = rt.ns.connect({ from: 'remote', src: '10.0.9.9', dst: `${UNDER_TEST}:${probe.dstPort}` }, { trace: false });
    if (probe.expected === 'refused') {
      expect(r.outcome).toBe('refused');
      return;
    }
    expect(r.outcome).toBe('local');
    expect(findListener(rt, r.address!, r.port!, 'tcp')?.container).toBe(containerOf(probe.response));
  });

  const local = p.probes.filter((x) => x.from === 'local');
  if (local.length === 0) return;
  it.each(local.map((x) => [x.container!, x.uid!, x.dstAddress, x.dstPort, x.expected, x] as const))('%s (uid %i) → %s:%i: %s', (container, uid, dstAddress, dstPort, expected, probe) => {
    const dst = `${dstAddress === 'pod' ? UNDER_TEST : dstAddress === '127.0.0.1' ? '127.0.0.1' : PLAIN}:${dstPort}`;
    const r = simulateMesh({ mesh: 'linkerd', client: manifest, server: plain, dst, container, uid });
    const last = r.hops.at(-1)!;
    if (expected === 'refused') {
      expect(r.verdict).toBe('refused');
      return;
    }
    expect(last.outcome).toBe('local');
    if (expected === 'proxy') {
      // The lab's proxy stub is an ordinary container here: the REDIRECT lands on it.
      expect(r.hops).toHaveLength(1);
      expect(last.to).toBe(`127.0.0.1:${p.args![p.args!.indexOf('-o') + 1]}`);
      expect(last.receiver.startsWith('proxy-stub')).toBe(true);
    } else {
      expect(r.hops.some((h) => h.receiver.startsWith('proxy-stub'))).toBe(false);
      expect(last.receiver.startsWith(containerOf(probe.response) ?? '?')).toBe(true);
    }
  });
});
