/**
 * Pieces shared by the Linkerd and Istio pod preparation: rule notes from rule sets, start-up
 * steps, annotation lookup, containers.
 *
 * @module
 */
import { NetfilterSimError, diagnostic } from '../model/errors.js';
import type { Ruleset } from '../model/types.js';
import { printRule } from '../iptables/print/save.js';
import type { Namespace, Pod, PodContainer } from '../compile/pod.js';
import type { RuleNote, StartupEffect, StartupStep } from './types.js';

/** Options of the per-mesh pod preparation. @internal */
export interface PrepareOptions {
  readonly namespace?: Namespace | undefined;
  readonly cni?: boolean | undefined;
  readonly nativeSidecars?: boolean | undefined;
  readonly cniNotReady?: boolean | undefined;
  /** Istio: run the pod in ambient mode (unless it has a sidecar or the host network). */
  readonly ambient?: boolean | undefined;
  /** Istio ambient: istio-cni's nftables backend. */
  readonly nativeNftables?: boolean | undefined;
  /** Istio ambient: the node's DNS capture (default on, the chart's default). */
  readonly dnsCapture?: boolean | undefined;
}

/** Throws a `BAD_MANIFEST` error. @internal */
export function badPod(message: string): never {
  throw new NetfilterSimError(diagnostic('BAD_MANIFEST', message));
}

/** Where an annotation comes from: the pod, else its namespace. @internal */
export function annotationSource(pod: Pod, ns: Namespace | undefined, key: string): { value: string; where: string } | undefined {
  if (Object.prototype.hasOwnProperty.call(pod.annotations, key)) return { value: pod.annotations[key]!, where: `pod ${pod.name || '(unnamed)'}` };
  if (ns && Object.prototype.hasOwnProperty.call(ns.annotations, key)) return { value: ns.annotations[key]!, where: `namespace ${ns.name || '(unnamed)'}` };
  return undefined;
}

/** A container's uid as the kernel sees it (root when neither it nor the pod sets one). @internal */
export function uidOf(c: PodContainer): number {
  return c.runAsUser ?? 0;
}

/** `name (uid N)`. @internal */
export function describeProcess(name: string, uid: number, gid?: number): string {
  return gid !== undefined && gid !== uid ? `${name} (uid ${uid} gid ${gid})` : `${name} (uid ${uid})`;
}

/** A minimal container. @internal */
export function container(name: string, fields: Partial<PodContainer> = {}): PodContainer {
  return { name, command: [], args: [], ports: [], env: [], ...fields };
}

/** The `-m comment` of a rule, if any. @internal */
export function ruleComment(rule: Ruleset['tables'][number]['chains'][number]['rules'][number]): string | null {
  for (const m of rule.matches) {
    if (m.name === 'comment' && typeof m.options['comment'] === 'string') return m.options['comment'];
  }
  return null;
}

/** Explains one rule: why it exists and the setting behind it. @internal */
export type RuleExplainer = (args: {
  readonly family: 4 | 6;
  readonly table: string;
  readonly chain: string;
  readonly text: string;
  readonly source: string | undefined;
  readonly comment: string | null;
}) => { why: string; setting: string | null };

/** Notes for every rule of the rule sets, in table/chain/rule order. @internal */
export function ruleNotes(rulesets: readonly (Ruleset | null)[], explain: RuleExplainer): RuleNote[] {
  const out: RuleNote[] = [];
  for (const rs of rulesets) {
    if (!rs) continue;
    for (const t of rs.tables) {
      for (const c of t.chains) {
        c.rules.forEach((r, i) => {
          const text = printRule(r, c.name, rs.family);
          const comment = ruleComment(r);
          const { why, setting } = explain({ family: rs.family, table: t.name, chain: c.name, text, source: r.text, comment });
          out.push({ family: rs.family, table: t.name, chain: c.name, rule: i + 1, text, comment, why, setting });
        });
      }
    }
  }
  return out;
}

/** Whether a rule set has any rule at all. @internal */
export function hasRules(rs: Ruleset | null | undefined): boolean {
  return !!rs && rs.tables.some((t) => t.chains.some((c) => c.rules.length > 0));
}

/** Start-up steps: the sandbox (CNI), the init containers in order, then the containers. @internal */
export function startupSteps(
  pod: Pod,
  sandbox: StartupStep | null,
  effectOf: (c: PodContainer, stage: 'init' | 'container') => { effect: StartupEffect; note: string; active?: boolean },
): StartupStep[] {
  const steps: StartupStep[] = [];
  if (sandbox) steps.push(sandbox);
  for (const c of pod.initContainers) {
    const e = effectOf(c, 'init');
    steps.push({ stage: 'init', name: c.name, effect: e.effect, active: e.active ?? true, note: e.note });
  }
  for (const c of pod.containers) {
    const e = effectOf(c, 'container');
    steps.push({ stage: 'container', name: c.name, effect: e.effect, active: e.active ?? true, note: e.note });
  }
  return steps;
}

/** Parses a port list with ranges (`25,587,8000-8002`). @internal */
export function parsePortList(text: string): number[] {
  const out: number[] = [];
  for (const raw of text.split(',')) {
    const t = raw.trim();
    const m = /^(\d+)(?:-(\d+))?$/.exec(t);
    if (!m) continue;
    const lo = Number(m[1]);
    const hi = m[2] === undefined ? lo : Number(m[2]);
    if (hi - lo > 65535) continue;
    for (let p = lo; p <= hi && p <= 65535; p++) out.push(p);
  }
  return out;
}
