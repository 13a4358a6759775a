/**
 * Helpers for the scenario tests: our Pod manifests under test/fixtures/pods.
 */
import { readFileSync } from 'node:fs';
import { readNamespace, readPod, type Namespace, type Pod } from '../../../src/compile/pod.js';
import type { MeshHop, MeshResult } from '../../../src/mesh/index.js';

const dir = new URL('../../fixtures/pods/', import.meta.url);

/** The text of a fixture. */
export function podText(name: string): string {
  return readFileSync(new URL(name, dir), 'utf8');
}

/** A fixture read as a Pod. */
export function pod(name: string): Pod {
  return readPod(podText(name));
}

/** A fixture read as a Namespace. */
export function namespace(name: string): Namespace {
  return readNamespace(podText(name));
}

/** The pod with more annotations. */
export function annotate(p: Pod, annotations: Record<string, string>): Pod {
  return { ...p, annotations: { ...p.annotations, ...annotations } };
}

/** `pod: from → to | why`, one line per hop, for compact assertions. */
export function hopLines(r: MeshResult): string[] {
  return r.hops.map((h: MeshHop) => `${h.pod}: ${h.from} → ${h.to} | ${h.why}`);
}

/** The diagnosis as one string. */
export function diagnosisText(r: MeshResult): string {
  return r.diagnosis.join('\n');
}
