/**
 * The reference plugins' masquerading (containernetworking/plugins v1.9.1, pkg/ip/ipmasq_*), as
 * `bridge` with `ipMasq: true` sets it up for each container address: with iptables, a
 * `CNI-<hash>` chain per network and container that accepts the container's own subnet and
 * masquerades the rest (not multicast), jumped to from POSTROUTING by the container's address;
 * with nftables, one rule per address in `table inet cni_plugins_masquerade`.
 *
 * @internal
 * @module
 */
import { cniChainName, formatHashWithPrefix } from './portmap.js';

/** `FormatComment`: `name: "NET" id: "ID"` (Go's %q). */
export function cniComment(network: string, containerID: string): string {
  const q = (s: string): string => `"${s.replace(/\\/g, '\\\\').replace(/"/g, '\\"')}"`;
  return `name: ${q(network)} id: ${q(containerID)}`;
}

/** One container address with its subnet's prefix length (`10.244.1.5/24`). */
export interface MasqAddress {
  readonly ip: string;
  readonly prefixLength: number;
  /** The subnet, host bits cleared (`10.244.1.0/24`). */
  readonly subnet: string;
}

/** The iptables operations of `setupIPMasqIPTables` for one container: its chain, its rules, its POSTROUTING jumps. */
export interface IptablesMasq {
  readonly chain: string;
  readonly comment: string;
  /** Rules appended to the chain, per family (`-d SUBNET -j ACCEPT …`, `! -d MCAST -j MASQUERADE …`). */
  readonly rules: readonly { readonly family: 4 | 6; readonly args: readonly string[] }[];
  /** Rules appended to POSTROUTING (`-s IP -j CHAIN …`). */
  readonly postrouting: readonly { readonly family: 4 | 6; readonly args: readonly string[] }[];
}

/**
 * `SetupIPMasq` for each address (the iptables backend ignores the interface name). The
 * destination of the ACCEPT rule is the address with its mask, which iptables stores as the subnet.
 */
export function iptablesMasq(network: string, containerID: string, addresses: readonly MasqAddress[]): IptablesMasq {
  const chain = cniChainName(network, containerID);
  const comment = cniComment(network, containerID);
  const rules: { family: 4 | 6; args: string[] }[] = [];
  const postrouting: { family: 4 | 6; args: string[] }[] = [];
  for (const a of addresses) {
    const family = a.ip.includes(':') ? 6 : 4;
    const mcast = family === 6 ? 'ff00::/8' : '224.0.0.0/4';
    rules.push({ family, args: ['-d', `${a.ip}/${a.prefixLength}`, '-j', 'ACCEPT', '-m', 'comment', '--comment', comment] });
    rules.push({ family, args: ['!', '-d', mcast, '-j', 'MASQUERADE', '-m', 'comment', '--comment', comment] });
    postrouting.push({ family, args: ['-s', a.ip, '-j', chain, '-m', 'comment', '--comment', comment] });
  }
  return { chain, comment, rules, postrouting };
}

/** `hashForNetwork`. */
function hashForNetwork(network: string): string {
  return formatHashWithPrefix(16, '', network);
}

/** `commentForInstance`: a hash of network and instance, then who it is for (at most 128 bytes, knftables' limit). */
export function nftMasqComment(network: string, ifname: string, containerID: string): string {
  const strip = (s: string): string => s.replaceAll('"', '');
  const c = `${hashForNetwork(network)}-${formatHashWithPrefix(16, '', `${ifname}:${containerID}`)}, net: ${strip(network)}, if: ${strip(ifname)}, id: ${strip(containerID)}`;
  return c.length > 128 ? c.slice(0, 128) : c;
}

/** `setupIPMasqNFTablesWithInterface` on a node without the table yet: its knftables operations. */
export function nftMasqTransaction(network: string, ifname: string, containerID: string, addresses: readonly MasqAddress[]): string[] {
  const t = 'inet cni_plugins_masquerade';
  const ops = [
    `add table ${t} { comment "Masquerading for plugins from github.com/containernetworking/plugins" ; }`,
    `add chain ${t} masq_checks { comment "Masquerade traffic from certain IPs to any (non-multicast) IP outside their subnet" ; }`,
    `add chain ${t} postrouting { type nat hook postrouting priority 100 ; }`,
    `flush chain ${t} postrouting`,
    `add rule ${t} postrouting ip daddr == 224.0.0.0/4  return`,
    `add rule ${t} postrouting ip6 daddr == ff00::/8  return`,
    `add rule ${t} postrouting goto masq_checks`,
  ];
  const comment = nftMasqComment(network, ifname, containerID);
  for (const a of addresses) {
    const ip = a.ip.includes(':') ? 'ip6' : 'ip';
    ops.push(`add rule ${t} masq_checks ${ip} saddr == ${a.ip} ${ip} daddr != ${a.subnet} masquerade comment "${comment}"`);
  }
  return ops;
}
