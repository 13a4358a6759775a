/**
 * The built-in demonstration: the default Linkerd pod pair, traced and explained.
 *
 * @module
 */
import { defaultPods } from './defaults.js';
import { renderMeshText } from './render.js';
import { simulateMesh } from './simulate.js';
import type { MeshPod } from './types.js';

function describePod(p: MeshPod, same?: MeshPod): string[] {
  const how = p.source === 'injected' ? "injected with the injector's defaults" : p.source === 'running' ? 'as it runs' : 'not meshed';
  const lines = [`pod ${p.name} (${p.pod.podIPs.join(', ')}): ${how}`];
  if (p.proxy) {
    lines.push(`  ${p.proxy.container} runs as uid ${p.proxy.uid}${p.proxy.nativeSidecar ? ', as a native sidecar' : ''}; outbound port ${p.proxy.outboundPort}, inbound port ${p.proxy.inboundPort}`);
  }
  const steps = p.startup.map((s) => `${s.name}${s.effect !== 'none' ? ` (${s.effect}${s.active ? '' : ', inactive'})` : ''}`);
  lines.push(`  start-up: ${steps.join(' → ')}`);
  const texts = (x: MeshPod): string => x.ruleNotes.map((n) => n.text).join('\n');
  if (p.rulesBy && same && texts(same) === texts(p)) {
    lines.push(`  rules written by ${p.rulesBy}: the same as pod ${same.name}'s`);
    return lines;
  }
  if (p.rulesBy) lines.push(`  rules written by ${p.rulesBy}:`);
  for (const n of p.ruleNotes) lines.push(`    ${n.chain} ${n.rule}: ${n.text.replace(/^-A \S+ /, '')}`);
  return lines;
}

/**
 * The default Linkerd client/server pair (both written with `linkerd.io/inject: enabled` and
 * injected with the injector's defaults): the pods and their rules, a connection from the
 * client's application to the server traced hop by hop, and, for contrast, the same client
 * under linkerd-cni without native sidecars, where an init container's connection is refused.
 *
 * @example
 * ```ts
 * process.stdout.write(demoLinkerd());
 * ```
 */
export function demoLinkerd(): string {
  const meshed = simulateMesh({ mesh: 'linkerd' });
  const out: string[] = ['# A Linkerd client and server, end to end', ''];
  out.push(...describePod(meshed.client), ...describePod(meshed.server, meshed.client), '');
  out.push('## web → api (linkerd-init, native sidecars: the defaults)', renderMeshText(meshed));
  const base = defaultPods('linkerd').client;
  const client = { ...base, initContainers: [{ name: 'fetch-config', command: [], args: [], ports: [], env: [], runAsUser: 1000 }] };
  const refused = simulateMesh({ mesh: 'linkerd', client, cni: true, nativeSidecars: false, phase: 'init:fetch-config' });
  out.push('## The same client under linkerd-cni without native sidecars: its init container fetch-config connects', renderMeshText(refused));
  return out.join('\n');
}
