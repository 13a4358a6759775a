/**
 * Address helpers for scenarios: endpoints as text, families, the `--service` syntax.
 *
 * @module
 */
import { parseEndpoint } from '../engine/path/probe.js';
import { parseAnyAddress } from '../engine/state/routing.js';
import { NetfilterSimError, diagnostic } from '../model/errors.js';
import { formatAddress } from '../model/address.js';
import type { MeshService } from './types.js';
import { expectArgument } from '../model/guard.js';

/** An endpoint with its address in canonical form. @internal */
export interface Addr {
  readonly family: 4 | 6;
  readonly address: string;
  readonly port: number;
}

/** `ADDR:PORT` / `[V6]:PORT` → canonical parts. Throws `BAD_PROBE`. @internal */
export function parseAddr(text: string): Addr {
  const e = parseEndpoint(text, true);
  return { family: e.family, address: formatAddress(e.addr, e.family), port: e.port };
}

/** The canonical form of an address, or null. @internal */
export function canonicalAddress(text: string): string | null {
  const a = parseAnyAddress(text.replace(/\/\d+$/, ''));
  return a ? formatAddress(a.addr, a.family) : null;
}

/** The family of an address (4 when it does not parse). @internal */
export function familyOf(address: string): 4 | 6 {
  return address.includes(':') ? 6 : 4;
}

/** `ADDR:PORT`, with brackets for IPv6. @internal */
export function formatAddr(address: string, port: number): string {
  return address.includes(':') ? `[${address}]:${port}` : `${address}:${port}`;
}

/**
 * Parses `VIP:PORT=ADDR:PORT,…` (the `--service` syntax): each entry maps a ClusterIP and port to
 * one endpoint; repeating a VIP and port adds endpoints to it. A `/udp` suffix on the VIP side
 * makes a UDP service.
 *
 * @example
 * ```ts
 * parseServices('10.96.0.10:80=10.0.1.5:8080,10.96.0.10:80=10.0.1.6:8080');
 * // [{ vip: '10.96.0.10', port: 80, proto: 'tcp', endpoints: [{ address: '10.0.1.5', port: 8080 }, { address: '10.0.1.6', port: 8080 }] }]
 * ```
 */
export function parseServices(text: string): MeshService[] {
  expectArgument(text, 'string', 'text');
  const out: { vip: string; port: number; proto: 'tcp' | 'udp'; endpoints: { address: string; port: number }[] }[] = [];
  for (const raw of text.split(',')) {
    const entry = raw.trim();
    if (entry === '') continue;
    const eq = entry.indexOf('=');
    if (eq <= 0) throw new NetfilterSimError(diagnostic('BAD_CONFIG', `a service is VIP:PORT=ADDR:PORT, not "${entry}"`, undefined, entry));
    let left = entry.slice(0, eq);
    let proto: 'tcp' | 'udp' = 'tcp';
    const m = /\/(tcp|udp)$/i.exec(left);
    if (m) {
      proto = m[1]!.toLowerCase() as 'tcp' | 'udp';
      left = left.slice(0, m.index);
    }
    const vip = parseAddr(left);
    const ep = parseAddr(entry.slice(eq + 1));
    if (vip.family !== ep.family) {
      throw new NetfilterSimError(diagnostic('BAD_CONFIG', `service ${entry}: the VIP and the endpoint are of different families`, undefined, entry));
    }
    let svc = out.find((s) => s.vip === vip.address && s.port === vip.port && s.proto === proto);
    if (!svc) {
      svc = { vip: vip.address, port: vip.port, proto, endpoints: [] };
      out.push(svc);
    }
    svc.endpoints.push({ address: ep.address, port: ep.port });
  }
  return out;
}

/** The service a destination names, if any. @internal */
export function findService(services: readonly MeshService[], address: string, port: number, proto: 'tcp' | 'udp'): MeshService | undefined {
  return services.find((s) => canonicalAddress(s.vip) === address && s.port === port && (s.proto ?? 'tcp') === proto && s.endpoints.length > 0);
}
