// Types of kube-proxy.js, for the TypeScript tests that reuse the generator.
import type { ConnectSpec, NetnsOptions, Ruleset } from '../src/index.js';

export interface KubeService {
  readonly key: string;
  readonly vip: string;
  readonly port: number;
  readonly endpoints: readonly string[];
  readonly externalIP: string | null;
  readonly nodePort: number | null;
}

export function kubeProxyServices(count: number, seed?: number): KubeService[];
export function kubeProxyRules(services: readonly KubeService[]): string;
export function kubeProxyNode(rules: string | Ruleset | undefined, extra?: Partial<NetnsOptions>): NetnsOptions;
export function kubeProxyProbes(services: readonly KubeService[], count: number, seed?: number): ConnectSpec[];
export function kubeProxyNftRules(services: readonly KubeService[]): string;
