/**
 * Protocol names as iptables reads and prints them: `xtables_chain_protos` first, then the
 * system's protocol database (a copy of Debian's `/etc/protocols`, so results do not depend on
 * the host).
 *
 * @module
 */

/** `xtables_chain_protos` (libxtables/xtables.c), in lookup order. */
const CHAIN_PROTOS: readonly (readonly [string, number])[] = [
  ['tcp', 6], ['sctp', 132], ['udp', 17], ['udplite', 136], ['icmp', 1], ['ipv6-icmp', 58],
  ['icmpv6', 58], ['esp', 50], ['ah', 51], ['ipv6-mh', 135], ['mh', 135], ['all', 0],
];

/** Debian netbase `/etc/protocols` (name, number). */
const ETC_PROTOCOLS: readonly (readonly [string, number])[] = [
  ['ip', 0], ['hopopt', 0], ['icmp', 1], ['igmp', 2], ['ggp', 3], ['ipencap', 4], ['st', 5], ['tcp', 6],
  ['egp', 8], ['igp', 9], ['pup', 12], ['udp', 17], ['hmp', 20], ['xns-idp', 22], ['rdp', 27],
  ['iso-tp4', 29], ['dccp', 33], ['xtp', 36], ['ddp', 37], ['idpr-cmtp', 38], ['ipv6', 41],
  ['ipv6-route', 43], ['ipv6-frag', 44], ['idrp', 45], ['rsvp', 46], ['gre', 47], ['esp', 50], ['ah', 51],
  ['skip', 57], ['ipv6-icmp', 58], ['ipv6-nonxt', 59], ['ipv6-opts', 60], ['rspf', 73], ['vmtp', 81],
  ['eigrp', 88], ['ospf', 89], ['ax.25', 93], ['ipip', 94], ['etherip', 97], ['encap', 98], ['pim', 103],
  ['ipcomp', 108], ['vrrp', 112], ['l2tp', 115], ['isis', 124], ['sctp', 132], ['fc', 133],
  ['mobility-header', 135], ['udplite', 136], ['mpls-in-ip', 137], ['manet', 138], ['hip', 139],
  ['shim6', 140], ['wesp', 141], ['rohc', 142], ['ethernet', 143],
];

/**
 * Parses a `-p` argument as `xtables_parse_protocol`: a number 0-255, a name from the protocol
 * database, or a chain-proto name. The caller lower-cases it first, as iptables does.
 */
export function parseProtocol(text: string): number | null {
  if (/^(0x[0-9a-f]+|0[0-7]*|[1-9][0-9]*)$/i.test(text)) {
    const n = text.startsWith('0x') || text.startsWith('0X') ? parseInt(text.slice(2), 16)
      : text.length > 1 && text.startsWith('0') ? parseInt(text, 8) : Number(text);
    return n <= 255 ? n : null;
  }
  if (text === 'all') return 0;
  for (const [name, num] of ETC_PROTOCOLS) if (name === text) return num;
  for (const [name, num] of CHAIN_PROTOS) if (name === text) return num;
  return null;
}

/**
 * The name iptables-save prints for a protocol number, or the number. iptables-nft 1.8.9 prints
 * the `/etc/protocols` name (`-p mh` saves as `-p mobility-header`); the chain-proto names agree
 * with it for every other number they list.
 */
export function protocolName(num: number): string {
  if (num !== 0) for (const [name, n] of ETC_PROTOCOLS) if (n === num) return name;
  for (const [name, n] of CHAIN_PROTOS) if (n === num) return name;
  return String(num);
}

/** The match module a protocol loads implicitly (`-p tcp --dport 80` loads `tcp`). */
export function protocolMatchName(num: number, family: 4 | 6): string | null {
  switch (num) {
    case 6: return 'tcp';
    case 17: return 'udp';
    case 132: return 'sctp';
    case 33: return 'dccp';
    case 136: return 'udplite';
    case 1: return family === 4 ? 'icmp' : null;
    case 58: return family === 6 ? 'icmp6' : null;
    case 135: return family === 6 ? 'mh' : null;
    default: return null;
  }
}

/** `getprotobyname` over the copy of `/etc/protocols`: the number of a name, or null. */
export function etcProtocolNumber(name: string): number | null {
  for (const [n, num] of ETC_PROTOCOLS) if (n === name) return num;
  return null;
}

/** `getprotobynumber` over the copy of `/etc/protocols`: the first name of a number, or null. */
export function etcProtocolName(num: number): string | null {
  for (const [n, v] of ETC_PROTOCOLS) if (v === num) return n;
  return null;
}
