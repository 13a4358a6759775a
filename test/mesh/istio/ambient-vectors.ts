/**
 * Reads the Istio ambient vectors in test/fixtures/istio-ambient (see ATTRIBUTION.md there).
 */
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { AmbientInput } from '../../../src/compile/istio/ambient.js';

export const AMBIENT_FIXTURES = join(dirname(fileURLToPath(import.meta.url)), '..', '..', 'fixtures', 'istio-ambient');

export function ambientFixture(path: string): string {
  return readFileSync(join(AMBIENT_FIXTURES, path), 'utf8');
}

export interface AmbientCase {
  readonly file: string;
  readonly ipv6: boolean;
  readonly host: boolean;
  readonly overrides: { readonly RedirectDNS?: boolean };
  readonly podOverrides: { readonly IngressMode?: boolean; readonly VirtualInterfaces?: string[]; readonly DNSProxy?: string };
  readonly kernel: { readonly accepted: boolean; readonly save4?: string; readonly save6?: string; readonly list?: string; readonly setup?: string };
}

const all = JSON.parse(ambientFixture('cases.json')) as Record<string, unknown>;

export function ambientCases(backend: 'iptables' | 'nftables'): [string, AmbientCase][] {
  return Object.entries(all)
    .filter(([k]) => k.startsWith(`ambient-${backend}/`))
    .map(([k, v]) => [k.slice(`ambient-${backend}/`.length), v as AmbientCase]);
}

/** The upstream test's configuration (constructTestConfig + the case's overrides) as our input. */
export function ambientInput(c: AmbientCase, backend: 'iptables' | 'nftables'): AmbientInput {
  const dns = c.podOverrides.DNSProxy;
  return {
    host: c.host,
    config: {
      enableIPv6: c.ipv6,
      redirectDNS: c.overrides.RedirectDNS ?? false,
      hostProbeSNATAddress: '169.254.7.127',
      // The iptables host test sets the chart default; every other test another address.
      hostProbeV6SNATAddress: c.host && backend === 'iptables' ? 'fd16:9254:7127:1337:ffff:ffff:ffff:ffff' : 'e9ac:1e77:90ca:399f:4d6d:ece2:2f9b:3164',
      nativeNftables: backend === 'nftables',
      kubeletUID: 1000,
    },
    pod: {
      ingressMode: c.podOverrides.IngressMode ?? false,
      virtualInterfaces: c.podOverrides.VirtualInterfaces ?? [],
      dnsProxy: dns === 'config.PodDNSEnabled' ? 'enabled' : dns === 'config.PodDNSDisabled' ? 'disabled' : 'unset',
    },
  };
}

/** A kernel listing without the `# Generated …` / `# Completed …` lines. */
export function stripSaveComments(text: string): string {
  return text.split('\n').filter((l) => !l.startsWith('# ')).join('\n');
}
