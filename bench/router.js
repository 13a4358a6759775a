// The 5.5k-rule university router dump (shared/corpus, CC BY-NC-SA: read from there, never
// copied) as a namespace: its VLAN interfaces with the networks its FORWARD rules name
// (`-A FORWARD -s NET -i IFACE`), the uplink eth1.110 with the default route, forwarding on; and
// single packets crossing it both ways.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { rng } from './rng.js';

export const ROUTER_DUMP = join(import.meta.dirname, '../../shared/corpus/netnetwork_tum-i8-firewall_2016-06-27.iptables-save');

const UPLINK = 'eth1.110';

const toInt = (a) => a.split('.').reduce((n, o) => ((n << 8) | Number(o)) >>> 0, 0);
const toIp = (n) => `${n >>> 24}.${(n >>> 16) & 255}.${(n >>> 8) & 255}.${n & 255}`;

/** The dump's text, its interfaces and their networks. */
export function routerSetup() {
  const text = readFileSync(ROUTER_DUMP, 'utf8');
  const nets = new Map();
  const names = new Set();
  for (const m of text.matchAll(/-[io] (eth[0-9.]+)/g)) names.add(m[1]);
  for (const m of text.matchAll(/^-A FORWARD -s ([0-9.]+)\/(\d+) -i (eth[0-9.]+)/gm)) {
    const prefix = Number(m[2]);
    if (prefix <= 30 && !nets.has(m[3])) nets.set(m[3], { net: toInt(m[1]), prefix });
  }
  const interfaces = {};
  let k = 1;
  for (const name of [...names].sort()) {
    const n = nets.get(name);
    interfaces[name] = n ? [`${toIp(n.net + 1)}/${n.prefix}`] : [`10.255.${k++}.1/24`];
  }
  const uplink = interfaces[UPLINK][0].split('/')[0];
  const gateway = toIp(toInt(uplink) + 1);
  // The dump's MAC addresses are anonymised (XX:XX:XX:XX:XX:XX), which iptables refuses: read it
  // leniently, which leaves those rules out with a warning each.
  return { text, nets: [...nets].map(([iface, n]) => ({ iface, ...n })), options: { rules: text, lenient: true, interfaces, gateway, ipForward: true } };
}

/**
 * Packet descriptions for `Netns.trace`: from the Internet through the uplink to hosts of the
 * internal networks, and from those hosts out.
 */
export function routerPackets(nets, count, seed = 3) {
  const r = rng(seed);
  const out = [];
  const ports = [22, 25, 53, 80, 443, 3389, 8080];
  for (let i = 0; i < count; i++) {
    const n = nets[Math.floor(r() * nets.length)];
    const size = 2 ** (32 - n.prefix);
    const host = toIp(n.net + 1 + Math.floor(r() * (size - 2)));
    const outside = toIp(((198 << 24) | (51 << 16) | (100 << 8)) + Math.floor(r() * 250) + 1);
    const port = ports[Math.floor(r() * ports.length)];
    const proto = port === 53 && r() < 0.5 ? 'udp' : 'tcp';
    const sport = 30000 + Math.floor(r() * 30000);
    out.push(r() < 0.6 ? `${proto} ${outside}:${sport} > ${host}:${port} in ${UPLINK}` : `${proto} ${host}:${sport} > ${outside}:${port} in ${n.iface}`);
  }
  return out;
}
