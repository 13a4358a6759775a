/**
 * Loads the Linkerd vectors of test/fixtures/linkerd (see its README.md and ATTRIBUTION.md).
 */
import { readFileSync } from 'node:fs';
import type { CompileLinkerdCniInput } from '../../../src/compile/linkerd/cni.js';

const dir = new URL('../../fixtures/linkerd/', import.meta.url);

export function fixture(name: string): string {
  return readFileSync(new URL(name, dir), 'utf8');
}

export interface ExpectedError {
  readonly stage: 'iptables' | 'config' | 'cni-annotation';
  readonly pass?: 'ipv4' | 'ipv6';
  readonly failingCommandLine?: number;
  readonly exitCode?: number;
  readonly stderr?: string;
  readonly proxyInitExitCode?: number;
  readonly proxyInitStderrFirstLine?: string;
  readonly message?: string;
  readonly commandsRun?: number;
}

export interface LinkerdCase {
  readonly name: string;
  readonly component: 'proxy-init' | 'linkerd-cni';
  readonly args?: string[];
  readonly cniConf?: Record<string, unknown>;
  readonly podAnnotations?: Record<string, string>;
  readonly namespaceAnnotations?: Record<string, string>;
  readonly podLabels?: Record<string, string>;
  readonly kubernetesService?: { ports: { port: number; targetPort?: number | string }[] };
  readonly initContainers?: string[];
  readonly containers?: string[];
  readonly cniSkipped?: string;
  readonly equivalentArgs?: string[];
  readonly netnsWrapper?: string;
  readonly existing?: string;
  readonly commands: string;
  readonly save: string;
  readonly save6?: string;
  readonly saveBinary: string;
  readonly save6Binary?: string;
  readonly expectedError?: ExpectedError;
}

export const cases: LinkerdCase[] = Object.entries(
  JSON.parse(fixture('cases.json')) as Record<string, Omit<LinkerdCase, 'name'>>,
).map(([name, c]) => ({ name, ...c }));

export const proxyInitCases: LinkerdCase[] = cases.filter((c) => c.component === 'proxy-init');
export const cniCases: LinkerdCase[] = cases.filter((c) => c.component === 'linkerd-cni');

/** The .commands file as lines (none for an empty file). */
export function expectedCommands(c: LinkerdCase): string {
  return fixture(c.commands);
}

/** The .save body, then the .save6 body when the case has one. */
export function expectedSave(c: LinkerdCase): string {
  return fixture(c.save) + (c.save6 ? fixture(c.save6) : '');
}

/** A CNI case as the plugin sees it: conf, pod manifest, namespace, kubernetes Service. */
export function cniInput(c: LinkerdCase): CompileLinkerdCniInput {
  return {
    conf: { cniVersion: '0.3.1', name: 'linkerd-cni', type: 'linkerd-cni', linkerd: c.cniConf },
    pod: {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: c.name, namespace: 'test', annotations: c.podAnnotations ?? {}, labels: c.podLabels ?? {} },
      spec: {
        initContainers: (c.initContainers ?? []).map((name) => ({ name, image: 'x' })),
        containers: (c.containers ?? []).map((name) => ({ name, image: 'x' })),
      },
    },
    namespace: { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'test', annotations: c.namespaceAnnotations ?? {} } },
    ...(c.kubernetesService
      ? { kubernetesService: { kind: 'Service', metadata: { name: 'kubernetes', namespace: 'default' }, spec: { ports: c.kubernetesService.ports } } }
      : {}),
  };
}

export const unit = JSON.parse(fixture('unit.json')) as {
  'multiport-chunking': { input: string[] | null; chunks: string[][]; source: string }[];
  'port-ranges': { input: string; lower?: number; upper?: number; error?: string; errorContains?: string; source: string }[];
  ports: { input: string; port?: number; error?: string; source: string }[];
};
