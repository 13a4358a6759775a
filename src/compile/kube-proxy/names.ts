/**
 * kube-proxy's per-service chain names. iptables mode: a prefix and the first 16 characters of
 * the base32 of SHA-256(`ServicePortName.String()` + protocol [+ endpoint]) — `KUBE-SVC-`,
 * `KUBE-SVL-`, `KUBE-EXT-`, `KUBE-FW-`, `KUBE-SEP-` (28 characters at most, iptables' limit).
 * nftables mode: `HASH-ns/name/proto/port[__ip/port]`, where HASH is the first 8 characters of
 * the base32 of SHA-256 of the rest, with a prefix (`service-`, `local-`, `external-`,
 * `firewall-`, `endpoint-`, `affinity-`), cut to 240 characters with `...`.
 *
 * @module
 */
import { base32, sha256 } from '../digest.js';
import type { ProxyEndpoint, ProxyServicePort } from './services.js';

function hash16(text: string): string {
  return base32(sha256(text)).slice(0, 16);
}

/** `portProtoHash`. */
function portProtoHash(p: ProxyServicePort): string {
  return hash16(p.nameString + p.protocol);
}

/** The iptables chains of a service port. */
export interface IptablesServiceChains {
  readonly svc: string;
  readonly svl: string;
  readonly ext: string;
  readonly fw: string;
}

/** `KUBE-SVC-`, `KUBE-SVL-`, `KUBE-EXT-`, `KUBE-FW-` names of a service port. */
export function iptablesServiceChains(p: ProxyServicePort): IptablesServiceChains {
  const h = portProtoHash(p);
  return { svc: `KUBE-SVC-${h}`, svl: `KUBE-SVL-${h}`, ext: `KUBE-EXT-${h}`, fw: `KUBE-FW-${h}` };
}

/** `KUBE-SEP-` name of an endpoint of a service port (the endpoint as `ip:port`, `[ip]:port`). */
export function iptablesEndpointChain(p: ProxyServicePort, ep: ProxyEndpoint): string {
  return `KUBE-SEP-${hash16(p.nameString + p.protocol + ep.text)}`;
}

/** knftables.NameLengthMax (256) - the longest prefix (16). */
const CHAIN_NAME_BASE_MAX = 240;

/** `hashAndTruncate`. */
function hashAndTruncate(name: string): string {
  let out = base32(sha256(name)).slice(0, 8) + '-' + name;
  if (out.length > CHAIN_NAME_BASE_MAX) out = out.slice(0, CHAIN_NAME_BASE_MAX - 3) + '...';
  return out;
}

/** `servicePortChainNameBase`: `HASH-ns/name/proto/port`. */
export function nftServiceBase(p: ProxyServicePort): string {
  return hashAndTruncate(`${p.namespace}/${p.name}/${p.protocol}/${p.portName}`);
}

/** `servicePortEndpointChainNameBase`: `HASH-ns/name/proto/port__ip/port`, colons of IPv6 as dots. */
export function nftEndpointBase(p: ProxyServicePort, ep: ProxyEndpoint): string {
  return hashAndTruncate(`${p.namespace}/${p.name}/${p.protocol}/${p.portName}__${ep.ip.replaceAll(':', '.')}/${ep.port}`);
}
