/** A PacketView with defaults, for lower() tests. */
import { ADDR_TYPE, CT_STATE, IPPROTO, type ConntrackView, type PacketView } from '../../src/model/packet.js';
import { parseAddress } from '../../src/model/address.js';

const v4 = (s: string): number[] => parseAddress(s, 4)!;

export function ct(over: Partial<ConntrackView> = {}): ConntrackView {
  return {
    state: CT_STATE.NEW, status: 0, direction: 'ORIGINAL', mark: 0, zone: 0, proto: IPPROTO.tcp,
    origSrc: v4('10.0.0.2'), origDst: v4('10.96.0.10'), origSport: 41000, origDport: 80,
    replySrc: v4('10.96.0.10'), replyDst: v4('10.0.0.2'), replySport: 80, replyDport: 41000,
    ...over,
  };
}

export function packet(over: Partial<PacketView> & { local?: readonly string[] } = {}): PacketView {
  const local = (over.local ?? ['127.0.0.1', '10.0.0.2']).map((a) => v4(a)[0]);
  const { local: _l, ...rest } = over;
  void _l;
  return {
    family: 4, proto: IPPROTO.tcp, src: v4('10.0.0.2'), dst: v4('10.96.0.10'), sport: 41000, dport: 80,
    tcpFlags: 0x02, icmpType: -1, icmpCode: -1, fragment: false, length: 60, inIface: null, outIface: 'eth0',
    hook: 'OUTPUT', table: 'nat', mark: 0, socket: { uid: 1000, gid: 1000, groups: [] }, ct: ct(),
    addressType(addr) {
      return local.includes(addr[0]!) || (addr[0]! >>> 24) === 127 ? ADDR_TYPE.LOCAL : ADDR_TYPE.UNICAST;
    },
    statisticRandom: () => false,
    ...rest,
  };
}
