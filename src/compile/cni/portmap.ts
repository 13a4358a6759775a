/**
 * The reference `portmap` plugin (containernetworking/plugins v1.9.1, plugins/meta/portmap): the
 * hostPort rules it adds for one container, with the iptables backend (`CNI-HOSTPORT-DNAT`, a
 * `CNI-DN-*` chain per container, `CNI-HOSTPORT-SETMARK`, `CNI-HOSTPORT-MASQ`) or the nftables
 * one (`table ip cni_hostport` / `ip6 cni_hostport`).
 *
 * @internal
 * @module
 */
import { hex, sha512 } from '../digest.js';

/** One `runtimeConfig.portMappings` entry, as the runtime passes a container port with a hostPort. */
export interface PortMapEntry {
  readonly hostPort: number;
  readonly containerPort: number;
  /** Lower case: `tcp`, `udp`, `sctp`. */
  readonly protocol: string;
  readonly hostIP?: string;
}

/** The portmap settings of a CNI configuration, with the plugin's defaults. */
export interface PortmapConfig {
  /** The network's `name`. */
  readonly name: string;
  /** `snat`; default true. */
  readonly snat: boolean;
  /** `markMasqBit`; default 13. */
  readonly markMasqBit: number;
  /** `masqAll`: hairpin masquerade from any source (iptables backend only in v1.9.1). */
  readonly masqAll: boolean;
  /** `externalSetMarkChain` (iptables backend): marks through this chain instead of CNI-HOSTPORT-SETMARK. */
  readonly externalSetMarkChain?: string;
  /** `conditionsV4`, `conditionsV6`: extra matches on the entry rules, in the backend's syntax. */
  readonly conditionsV4?: readonly string[];
  readonly conditionsV6?: readonly string[];
}

/** A chain as the plugin's `chain` type holds it: entry rules go into each entry chain. */
export interface PortmapChain {
  readonly table: 'nat';
  readonly name: string;
  readonly entryChains: readonly string[];
  readonly entryRules: readonly (readonly string[])[];
  readonly rules: readonly (readonly string[])[];
  readonly prependEntry: boolean;
}

/** pkg/utils `MustFormatHashWithPrefix`: the prefix, then hex SHA-512 of `toHash`, cut to `length`. */
export function formatHashWithPrefix(length: number, prefix: string, toHash: string): string {
  return (prefix + hex(sha512(toHash))).slice(0, length);
}

/** pkg/utils `MustFormatChainNameWithPrefix`: `CNI-` + prefix + hash of name+id, 28 characters. */
export function cniChainName(name: string, id: string, prefix = ''): string {
  return formatHashWithPrefix(28, 'CNI-' + prefix, name + id);
}

/** `trimComment`: at most 255 characters. */
function trimComment(s: string): string {
  return s.length <= 255 ? s : s.slice(0, 253) + '...';
}

/** `fmtIPPort`. */
function ipPort(ip: string, port: number): string {
  return ip.includes(':') ? `[${ip}]:${port}` : `${ip}:${port}`;
}

/** `genToplevelDnatChain`. */
export function topLevelDnatChain(): PortmapChain {
  return { table: 'nat', name: 'CNI-HOSTPORT-DNAT', entryChains: ['PREROUTING', 'OUTPUT'], entryRules: [['-m', 'addrtype', '--dst-type', 'LOCAL']], rules: [], prependEntry: false };
}

/** `genSetMarkChain`. */
export function setMarkChain(markBit: number): PortmapChain {
  const v = `0x${(2 ** markBit).toString(16)}`;
  return { table: 'nat', name: 'CNI-HOSTPORT-SETMARK', entryChains: [], entryRules: [], rules: [['-m', 'comment', '--comment', 'CNI portfwd masquerade mark', '-j', 'MARK', '--set-xmark', `${v}/${v}`]], prependEntry: false };
}

/** `genMarkMasqChain`: prepended to POSTROUTING so the bridge/ptp masquerade rules do not stomp on it. */
export function markMasqChain(markBit: number): PortmapChain {
  const v = `0x${(2 ** markBit).toString(16)}`;
  return {
    table: 'nat',
    name: 'CNI-HOSTPORT-MASQ',
    entryChains: ['POSTROUTING'],
    entryRules: [['-m', 'comment', '--comment', 'CNI portfwd requiring masquerade']],
    rules: [['-m', 'mark', '--mark', `${v}/${v}`, '-j', 'MASQUERADE']],
    prependEntry: true,
  };
}

/** `genDnatChain` + `fillDnatRules`: the container's `CNI-DN-*` chain for one of its addresses. */
export function dnatChain(config: PortmapConfig, containerID: string, entries: readonly PortMapEntry[], containerIP: string, prefixLength: number): PortmapChain {
  const isV6 = containerIP.includes(':');
  const comment = trimComment(`dnat name: "${config.name}" id: "${containerID}"`);
  const setMark = config.externalSetMarkChain ?? 'CNI-HOSTPORT-SETMARK';
  // groupByProto, protocols sorted, ports in entry order, 15 to a multiport rule.
  const byProto = new Map<string, number[]>();
  for (const e of entries) byProto.set(e.protocol, [...(byProto.get(e.protocol) ?? []), e.hostPort]);
  const entryRules: string[][] = [];
  const conditions = (isV6 ? config.conditionsV6 : config.conditionsV4) ?? [];
  for (const proto of [...byProto.keys()].sort()) {
    const ports = byProto.get(proto)!;
    for (let i = 0; i < ports.length; i += 15) {
      entryRules.push(['-m', 'comment', '--comment', comment, '-m', 'multiport', '-p', proto, '--destination-ports', ports.slice(i, i + 15).join(','), ...conditions]);
    }
  }
  const rules: string[][] = [];
  for (const e of entries) {
    let withDst = false;
    if (e.hostIP !== undefined && e.hostIP !== '') {
      if (e.hostIP.includes(':') !== isV6) continue;
      withDst = !(e.hostIP === '0.0.0.0' || e.hostIP === '::' || /^0+(\.0+){3}$/.test(e.hostIP) || /^[0:]+$/.test(e.hostIP));
    }
    const base = ['-p', e.protocol, '--dport', String(e.hostPort), ...(withDst ? ['-d', e.hostIP!] : [])];
    if (config.snat) {
      const masqCIDR = config.masqAll ? (isV6 ? '::/0' : '0.0.0.0/0') : `${containerIP}/${prefixLength}`;
      rules.push([...base, '-s', masqCIDR, '-j', setMark]);
      if (!isV6 && !config.masqAll) rules.push([...base, '-s', '127.0.0.1', '-j', setMark]);
    }
    rules.push([...base, '-j', 'DNAT', '--to-destination', ipPort(containerIP, e.containerPort)]);
  }
  return { table: 'nat', name: cniChainName(config.name, containerID, 'DN-'), entryChains: ['CNI-HOSTPORT-DNAT'], entryRules, rules, prependEntry: false };
}

/** What the nftables backend adds for one container address, as knftables operations. */
export function portmapNftTransaction(config: PortmapConfig, containerID: string, entries: readonly PortMapEntry[], containerIP: string): string[] {
  const isV6 = containerIP.includes(':');
  const ipX = isV6 ? 'ip6' : 'ip';
  const t = `${ipX} cni_hostport`;
  const conditions = ((isV6 ? config.conditionsV6 : config.conditionsV4) ?? []).join(' ');
  const cond = conditions === '' ? '' : conditions + ' ';
  const c = (s: string): string => `comment "${s.replace(/\\/g, '\\\\').replace(/"/g, '\\"')}"`;
  const ops = [
    `add table ${t} { comment "CNI portmap plugin" ; }`,
    `add chain ${t} hostports`,
    `add chain ${t} hostip_hostports`,
    `add chain ${t} hostports_all`,
    `flush chain ${t} hostports_all`,
    `add rule ${t} hostports_all jump hostip_hostports`,
    `add rule ${t} hostports_all jump hostports`,
    `add chain ${t} prerouting { type nat hook prerouting priority -100 ; }`,
    `flush chain ${t} prerouting`,
    `add rule ${t} prerouting ${cond}fib daddr type local jump hostports_all`,
    `add chain ${t} output { type nat hook output priority -100 ; }`,
    `flush chain ${t} output`,
    `add rule ${t} output ${cond}fib daddr type local jump hostports_all`,
  ];
  if (config.snat) ops.push(`add chain ${t} masquerading { type nat hook postrouting priority 100 ; }`);
  for (const e of entries) {
    let useHostIP = false;
    if (e.hostIP !== undefined && e.hostIP !== '') {
      if (e.hostIP.includes(':') !== isV6) continue;
      useHostIP = !(e.hostIP === '0.0.0.0' || e.hostIP === '::' || /^[0:]+$/.test(e.hostIP));
    }
    const dst = useHostIP ? `${ipX} daddr ${e.hostIP} ` : '';
    ops.push(`add rule ${t} hostports ${dst}${e.protocol} dport ${e.hostPort} dnat to ${ipPort(containerIP, e.containerPort)} ${c(containerID)}`);
  }
  if (config.snat) {
    ops.push(`add rule ${t} masquerading ${ipX} saddr ${containerIP} ${ipX} daddr ${containerIP} masquerade ${c(containerID)}`);
    if (!isV6) ops.push(`add rule ${t} masquerading ${ipX} saddr 127.0.0.1 ${ipX} daddr ${containerIP} masquerade ${c(containerID)}`);
  }
  return ops;
}
