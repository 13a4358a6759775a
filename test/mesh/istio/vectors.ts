/**
 * Reads the Istio vectors in test/fixtures/istio (see ATTRIBUTION.md there).
 */
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { IstioConfig } from '../../../src/compile/istio/config.js';
import { type Pod, podFromObject } from '../../../src/compile/pod.js';

export const FIXTURES = join(dirname(fileURLToPath(import.meta.url)), '..', '..', 'fixtures', 'istio');

export function fixture(path: string): string {
  return readFileSync(join(FIXTURES, path), 'utf8');
}

export function fixtureExists(path: string): boolean {
  return existsSync(join(FIXTURES, path));
}

export interface SidecarCase {
  readonly file: string;
  readonly overrides: Record<string, unknown>;
  readonly config: Record<string, unknown>;
  readonly equivalent_cli: string[];
  readonly equivalent_env: Record<string, string>;
  readonly ipv6_rules_emitted: boolean;
  readonly dns_capture_effective: boolean;
}

export interface CniCase {
  readonly file: string;
  readonly pod_annotations?: Record<string, string>;
  readonly istio_proxy_env?: Record<string, string>;
  readonly istio_proxy_runAsUser?: number | null;
  readonly istio_proxy_runAsGroup?: number | null;
  readonly derived_config?: Record<string, unknown>;
}

export const cases = JSON.parse(fixture('cases.json')) as Record<string, unknown>;

export function casesIn<T>(group: string): [string, T][] {
  return Object.entries(cases)
    .filter(([k]) => k.startsWith(`${group}/`))
    .map(([k, v]) => [k.slice(group.length + 1), v as T]);
}

/** upstream `config.Config` field names → ours. */
const FIELDS: Record<string, keyof IstioConfig> = {
  ProxyPort: 'proxyPort',
  InboundCapturePort: 'inboundCapturePort',
  InboundTunnelPort: 'inboundTunnelPort',
  ProxyUID: 'proxyUID',
  ProxyGID: 'proxyGID',
  InboundInterceptionMode: 'inboundInterceptionMode',
  InboundTProxyMark: 'inboundTProxyMark',
  InboundTProxyRouteTable: 'inboundTProxyRouteTable',
  InboundPortsInclude: 'inboundPortsInclude',
  InboundPortsExclude: 'inboundPortsExclude',
  OwnerGroupsInclude: 'ownerGroupsInclude',
  OwnerGroupsExclude: 'ownerGroupsExclude',
  OutboundPortsInclude: 'outboundPortsInclude',
  OutboundPortsExclude: 'outboundPortsExclude',
  OutboundIPRangesInclude: 'outboundIPRangesInclude',
  OutboundIPRangesExclude: 'outboundIPRangesExclude',
  RerouteVirtualInterfaces: 'rerouteVirtualInterfaces',
  ExcludeInterfaces: 'excludeInterfaces',
  RedirectDNS: 'redirectDNS',
  CaptureAllDNS: 'captureAllDNS',
  DropInvalid: 'dropInvalid',
  EnableIPv6: 'enableIPv6',
  DNSServersV4: 'dnsServersV4',
  DNSServersV6: 'dnsServersV6',
  HostIPv4LoopbackCidr: 'hostIPv4LoopbackCidr',
  DryRun: 'dryRun',
  HostFilesystemPodNetwork: 'hostFilesystemPodNetwork',
};

/** Converts a cases.json `config` object to our field names. */
export function toIstioConfig(upstream: Record<string, unknown>): Partial<IstioConfig> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(upstream)) {
    const f = FIELDS[k];
    if (!f) throw new Error(`unmapped config field ${k}`);
    out[f] = v;
  }
  return out as Partial<IstioConfig>;
}

/** A golden without the recorded `iptables-save` / `ip6tables-save` lines. */
export function stripSaves(golden: string): string {
  return golden
    .split('\n')
    .filter((l) => l !== 'iptables-save' && l !== 'ip6tables-save')
    .join('\n');
}

/** Splits restore text into `* table … COMMIT` blocks keyed by table (the CNI test's comparison). */
export function tableBlocks(text: string): Map<string, string> {
  const out = new Map<string, string>();
  let current: string | null = null;
  let lines: string[] = [];
  for (const line of text.split('\n')) {
    if (line.startsWith('* ')) {
      current = line.slice(2);
      lines = [line];
    } else if (current !== null) {
      lines.push(line);
      if (line === 'COMMIT') {
        out.set(current, lines.join('\n'));
        current = null;
      }
    }
  }
  return out;
}

/** A pod carrying a CNI case's inputs. */
export function podForCniCase(c: CniCase): Pod {
  return podFromObject(manifestForCniCase(c));
}

/** The Pod manifest (as the API server returns it) carrying a CNI case's inputs. */
export function manifestForCniCase(c: CniCase): Record<string, unknown> {
  const securityContext: { runAsUser?: number; runAsGroup?: number } = {};
  if (c.istio_proxy_runAsUser !== undefined && c.istio_proxy_runAsUser !== null) securityContext.runAsUser = c.istio_proxy_runAsUser;
  if (c.istio_proxy_runAsGroup !== undefined && c.istio_proxy_runAsGroup !== null) securityContext.runAsGroup = c.istio_proxy_runAsGroup;
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: 'test', namespace: 'default', annotations: c.pod_annotations ?? {} },
    spec: {
      containers: [
        { name: 'app' },
        {
          name: 'istio-proxy',
          args: ['proxy', 'sidecar'],
          env: Object.entries(c.istio_proxy_env ?? {}).map(([name, value]) => ({ name, value })),
          securityContext,
        },
      ],
    },
    status: { podIPs: [{ ip: '10.0.0.2' }] },
  };
}
