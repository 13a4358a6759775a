/**
 * What lowered matches decide, packet by packet, against the kernel's rules (`xt_owner.c`,
 * `xt_multiport.c`, `xt_tcpudp.c`, `xt_mark.c`, `xt_conntrack.c`, `xt_statistic.c`, …).
 */
import { describe, expect, it } from 'vitest';
import { NetfilterSimError } from '../../src/model/errors.js';
import { CT_STATE, CT_STATUS, IPPROTO, type PacketSocket } from '../../src/model/packet.js';
import { MATCHES } from '../../src/iptables/extensions/registry.js';
import type { MatchExtension } from '../../src/iptables/extensions/types.js';
import { parseAddress } from '../../src/model/address.js';
import { parseRuleArgs, tokenize } from './harness.js';
import { ct, packet } from './packet.js';

/** Lowers every match of a rule line and ANDs them, as a rule does. */
function lowerRule(line: string, family: 4 | 6 = 4): (p: ReturnType<typeof packet>) => boolean {
  const r = parseRuleArgs(tokenize(line), { family, table: 'mangle', chain: 'OUTPUT' });
  const tests = r.matches.map((m) => m.ext.lower(m.options, family));
  return (p) => tests.every((t) => t(p));
}
const v4 = (s: string): number[] => parseAddress(s, 4)!;

describe('owner', () => {
  const noSocket = packet({ socket: null });
  it('a packet without a socket fails every positive test', () => {
    expect(lowerRule('-m owner --uid-owner 1337')(noSocket)).toBe(false);
    expect(lowerRule('-m owner --gid-owner 0-65535')(noSocket)).toBe(false);
    expect(lowerRule('-m owner --socket-exists')(noSocket)).toBe(false);
  });
  it('and passes when every test is negated ((match ^ invert) == 0)', () => {
    expect(lowerRule('-m owner ! --uid-owner 1337')(noSocket)).toBe(true);
    expect(lowerRule('-m owner ! --uid-owner 1337 ! --gid-owner 1337')(noSocket)).toBe(true);
    expect(lowerRule('-m owner ! --socket-exists')(noSocket)).toBe(true);
  });
  it('but not when one test is positive, nor with --suppl-groups (its bit is never inverted)', () => {
    expect(lowerRule('-m owner ! --uid-owner 1337 --gid-owner 1')(noSocket)).toBe(false);
    expect(lowerRule('-m owner ! --gid-owner 1 --suppl-groups')(noSocket)).toBe(false);
  });
  it('compares uid and gid ranges of the socket', () => {
    const proxy = packet({ socket: { uid: 1337, gid: 1337, groups: [] } });
    const app = packet({ socket: { uid: 1000, gid: 1000, groups: [1337] } });
    expect(lowerRule('-m owner --uid-owner 1337')(proxy)).toBe(true);
    expect(lowerRule('-m owner --uid-owner 1337')(app)).toBe(false);
    expect(lowerRule('-m owner ! --uid-owner 1337')(app)).toBe(true);
    expect(lowerRule('-m owner --uid-owner 1000-1336')(app)).toBe(true);
    expect(lowerRule('-m owner --uid-owner 1000-1336')(proxy)).toBe(false);
    expect(lowerRule('-m owner --gid-owner 1337')(app)).toBe(false);
    expect(lowerRule('-m owner --gid-owner 1337 --suppl-groups')(app)).toBe(true);
    expect(lowerRule('-m owner ! --gid-owner 1337 --suppl-groups')(app)).toBe(false);
  });
  it('--socket-exists holds for any socket; ! --socket-exists fails when there is one', () => {
    expect(lowerRule('-m owner --socket-exists')(packet())).toBe(true);
    expect(lowerRule('-m owner ! --socket-exists')(packet())).toBe(false);
  });
});

describe('multiport', () => {
  const m = lowerRule('-p tcp -m multiport --dports 80,443,8000:8080');
  it('matches listed ports and ranges (inclusive)', () => {
    for (const dport of [80, 443, 8000, 8042, 8080]) expect(m(packet({ dport }))).toBe(true);
    for (const dport of [81, 442, 7999, 8081]) expect(m(packet({ dport }))).toBe(false);
  });
  it('! inverts the whole list', () => {
    const n = lowerRule('-p tcp -m multiport ! --dports 15090,15021');
    expect(n(packet({ dport: 15090 }))).toBe(false);
    expect(n(packet({ dport: 80 }))).toBe(true);
  });
  it('--sports looks at the source, --ports at either', () => {
    expect(lowerRule('-p tcp -m multiport --sports 41000')(packet())).toBe(true);
    expect(lowerRule('-p tcp -m multiport --sports 80')(packet())).toBe(false);
    expect(lowerRule('-p tcp -m multiport --ports 41000')(packet())).toBe(true);
    expect(lowerRule('-p tcp -m multiport --ports 80')(packet())).toBe(true);
    expect(lowerRule('-p tcp -m multiport --ports 22')(packet())).toBe(false);
  });
  it('a non-first fragment never matches, even negated', () => {
    expect(lowerRule('-p tcp -m multiport ! --dports 22')(packet({ fragment: true }))).toBe(false);
  });
});

describe('tcp', () => {
  it('--syn is flags & (FIN,SYN,RST,ACK) == SYN', () => {
    const syn = lowerRule('-p tcp --syn');
    expect(syn(packet({ tcpFlags: 0x02 }))).toBe(true);
    expect(syn(packet({ tcpFlags: 0x02 | 0x08 }))).toBe(true); // PSH is outside the mask
    expect(syn(packet({ tcpFlags: 0x12 }))).toBe(false); // SYN-ACK
    expect(syn(packet({ tcpFlags: 0x10 }))).toBe(false);
    expect(lowerRule('-p tcp ! --syn')(packet({ tcpFlags: 0x12 }))).toBe(true);
  });
  it('--tcp-flags ALL NONE matches a null scan only', () => {
    const m = lowerRule('-p tcp --tcp-flags ALL NONE');
    expect(m(packet({ tcpFlags: 0 }))).toBe(true);
    expect(m(packet({ tcpFlags: 0x01 }))).toBe(false);
  });
  it('port ranges and negation', () => {
    expect(lowerRule('-p tcp --dport 1:1023')(packet({ dport: 80 }))).toBe(true);
    expect(lowerRule('-p tcp ! --dport 15008')(packet({ dport: 15008 }))).toBe(false);
    expect(lowerRule('-p tcp --sport 41000 --dport 81')(packet())).toBe(false);
  });
  it('needs a TCP packet and no fragment', () => {
    expect(lowerRule('-p tcp --dport 80')(packet({ proto: IPPROTO.udp }))).toBe(false);
    expect(lowerRule('-p tcp --dport 80')(packet({ fragment: true }))).toBe(false);
  });
  it('--tcp-option is assumed absent and says so', () => {
    const ext = MATCHES.get('tcp')!;
    const withOption = parseRuleArgs(tokenize('-p tcp --tcp-option 2'), { family: 4, table: 'filter', chain: 'INPUT' }).matches[0]!;
    expect(ext.assumption!(withOption.options)).toMatch(/not modelled/);
    expect(lowerRule('-p tcp --tcp-option 2')(packet())).toBe(false);
    expect(lowerRule('-p tcp ! --tcp-option 2')(packet())).toBe(true);
  });
});

describe('udp and icmp', () => {
  it('udp ports', () => {
    expect(lowerRule('-p udp --dport 53')(packet({ proto: IPPROTO.udp, dport: 53 }))).toBe(true);
    expect(lowerRule('-p udp --dport 53')(packet({ proto: IPPROTO.tcp, dport: 53 }))).toBe(false);
  });
  it('icmp type and code ranges; any', () => {
    const echo = packet({ proto: IPPROTO.icmp, icmpType: 8, icmpCode: 0 });
    const fragNeeded = packet({ proto: IPPROTO.icmp, icmpType: 3, icmpCode: 4 });
    expect(lowerRule('-p icmp --icmp-type echo-request')(echo)).toBe(true);
    expect(lowerRule('-p icmp --icmp-type destination-unreachable')(fragNeeded)).toBe(true);
    expect(lowerRule('-p icmp --icmp-type port-unreachable')(fragNeeded)).toBe(false);
    expect(lowerRule('-p icmp --icmp-type any')(fragNeeded)).toBe(true);
    expect(lowerRule('-p icmp ! --icmp-type 8')(echo)).toBe(false);
  });
});

describe('mark and connmark', () => {
  it('(mark & mask) == value, ! inverts', () => {
    expect(lowerRule('-m mark --mark 0x539/0xfff')(packet({ mark: 0x1539 }))).toBe(true);
    expect(lowerRule('-m mark --mark 0x539/0xfff')(packet({ mark: 0x538 }))).toBe(false);
    expect(lowerRule('-m mark ! --mark 0x539/0xfff')(packet({ mark: 0x538 }))).toBe(true);
    expect(lowerRule('-m mark --mark 0x4000/0x4000')(packet({ mark: 0xffffffff }))).toBe(true);
    expect(lowerRule('-m mark --mark 0xffffffff')(packet({ mark: 0xffffffff }))).toBe(true);
    expect(lowerRule('-m mark --mark 0x0')(packet({ mark: 0 }))).toBe(true);
  });
  it('connmark reads the conntrack entry and never matches without one', () => {
    expect(lowerRule('-m connmark --mark 0x111/0xfff')(packet({ ct: ct({ mark: 0x2111 }) }))).toBe(true);
    expect(lowerRule('-m connmark ! --mark 0x1')(packet({ ct: null }))).toBe(false);
    expect(lowerRule('-m connmark ! --mark 0x1')(packet({ ct: ct({ state: CT_STATE.UNTRACKED }) }))).toBe(false);
  });
});

describe('conntrack and state', () => {
  const established = packet({ ct: ct({ state: CT_STATE.ESTABLISHED, direction: 'REPLY', status: CT_STATUS.SEEN_REPLY | CT_STATUS.ASSURED }) });
  const fresh = packet();
  const dnatted = packet({ ct: ct({ status: CT_STATUS.DNAT }) });
  it('--ctstate bits', () => {
    expect(lowerRule('-m conntrack --ctstate NEW')(fresh)).toBe(true);
    expect(lowerRule('-m conntrack --ctstate RELATED,ESTABLISHED')(fresh)).toBe(false);
    expect(lowerRule('-m conntrack --ctstate RELATED,ESTABLISHED')(established)).toBe(true);
    expect(lowerRule('-m state --state ESTABLISHED')(established)).toBe(true);
    expect(lowerRule('-m state ! --state NEW')(fresh)).toBe(false);
  });
  it('virtual DNAT/SNAT states come from the status bits', () => {
    expect(lowerRule('-m conntrack --ctstate DNAT')(dnatted)).toBe(true);
    expect(lowerRule('-m conntrack --ctstate DNAT')(fresh)).toBe(false);
    expect(lowerRule('-m conntrack ! --ctstate RELATED,ESTABLISHED,DNAT')(dnatted)).toBe(false);
    expect(lowerRule('-m conntrack ! --ctstate RELATED,ESTABLISHED,DNAT')(fresh)).toBe(true);
  });
  it('no entry: a missing ct counts as INVALID, untracked as UNTRACKED; other tests then fail', () => {
    expect(lowerRule('-m conntrack --ctstate INVALID')(packet({ ct: null }))).toBe(true);
    expect(lowerRule('-m conntrack --ctstate UNTRACKED')(packet({ ct: ct({ state: CT_STATE.UNTRACKED }) }))).toBe(true);
    expect(lowerRule('-m state --state UNTRACKED')(packet({ ct: ct({ state: CT_STATE.UNTRACKED }) }))).toBe(true);
    expect(lowerRule('-m conntrack ! --ctstate NEW')(packet({ ct: null }))).toBe(true);
    expect(lowerRule('-m conntrack --ctorigdst 10.96.0.10')(packet({ ct: null }))).toBe(false);
    expect(lowerRule('-m conntrack ! --ctorigdst 10.96.0.10')(packet({ ct: null }))).toBe(false);
  });
  it('tuples, ports, protocol, status and direction', () => {
    expect(lowerRule('-m conntrack --ctorigdst 10.96.0.0/12 --ctorigdstport 80')(fresh)).toBe(true);
    expect(lowerRule('-m conntrack ! --ctorigdst 10.96.0.0/12')(fresh)).toBe(false);
    expect(lowerRule('-m conntrack --ctreplsrc 10.96.0.10 --ctreplsrcport 80')(fresh)).toBe(true);
    expect(lowerRule('-m conntrack --ctproto tcp')(fresh)).toBe(true);
    expect(lowerRule('-m conntrack ! --ctproto tcp')(fresh)).toBe(false);
    expect(lowerRule('-m conntrack --ctstatus ASSURED')(established)).toBe(true);
    expect(lowerRule('-m conntrack --ctstatus ASSURED')(fresh)).toBe(false);
    expect(lowerRule('-m conntrack --ctstatus NONE')(fresh)).toBe(false); // status & 0 is never set
    expect(lowerRule('-m conntrack --ctdir ORIGINAL')(fresh)).toBe(true);
    expect(lowerRule('-m conntrack --ctdir REPLY')(fresh)).toBe(false);
    expect(lowerRule('-m conntrack --ctdir REPLY')(established)).toBe(true);
  });
});

describe('statistic', () => {
  it('nth: every n-th packet, starting with packet p+1', () => {
    const run = (line: string, n: number): boolean[] => {
      const f = lowerRule(line);
      return Array.from({ length: n }, () => f(packet()));
    };
    expect(run('-m statistic --mode nth --every 3 --packet 0', 7)).toEqual([true, false, false, true, false, false, true]);
    expect(run('-m statistic --mode nth --every 3 --packet 2', 6)).toEqual([false, false, true, false, false, true]);
    expect(run('-m statistic --mode nth ! --every 2 --packet 0', 4)).toEqual([false, true, false, true]);
  });
  it('each rule keeps its own counter', () => {
    const a = lowerRule('-m statistic --mode nth --every 2 --packet 0');
    const b = lowerRule('-m statistic --mode nth --every 2 --packet 0');
    expect([a(packet()), a(packet()), b(packet())]).toEqual([true, false, true]);
  });
  it('random: asks the packet for a draw with the kernel fraction', () => {
    const seen: number[] = [];
    const p = packet({
      statisticRandom: (prob: number) => {
        seen.push(prob);
        return true;
      },
    });
    expect(lowerRule('-m statistic --mode random --probability 0.5')(p)).toBe(true);
    expect(lowerRule('-m statistic --mode random ! --probability 0.25')(p)).toBe(false);
    expect(seen).toEqual([0x40000000, 0x20000000]);
  });
});

describe('addrtype, iprange', () => {
  it('addrtype asks the namespace for the route type', () => {
    expect(lowerRule('-m addrtype --dst-type LOCAL')(packet({ dst: v4('127.0.0.5') }))).toBe(true);
    expect(lowerRule('-m addrtype --dst-type LOCAL')(packet())).toBe(false);
    expect(lowerRule('-m addrtype ! --dst-type LOCAL')(packet())).toBe(true);
    expect(lowerRule('-m addrtype --src-type LOCAL --dst-type UNICAST')(packet())).toBe(true);
  });
  it('IPv6 addrtype: UNICAST, MULTICAST and UNSPEC test the address class, LOCAL and UNREACHABLE the route, all ANDed', () => {
    const v6 = (a: string): number[] => parseAddress(a, 6)!;
    const route = (t: number) => (): number => t;
    const p6 = (dst: string, type: number) => packet({ family: 6, src: v6('fd00::2'), dst: v6(dst), addressType: route(type) });
    const LOCAL = 1 << 2;
    const UNICAST = 1 << 1;
    const UNREACHABLE = 1 << 7;
    expect(lowerRule('-m addrtype --dst-type UNICAST', 6)(p6('::1', LOCAL))).toBe(true);
    expect(lowerRule('-m addrtype --dst-type UNICAST', 6)(p6('ff02::1', 1 << 5))).toBe(false);
    expect(lowerRule('-m addrtype --dst-type UNICAST', 6)(p6('::ffff:10.0.0.1', UNICAST))).toBe(false);
    expect(lowerRule('-m addrtype --dst-type UNICAST,LOCAL', 6)(p6('fd00::2', LOCAL))).toBe(true);
    expect(lowerRule('-m addrtype --dst-type UNICAST,LOCAL', 6)(p6('fd00:1::5', UNICAST))).toBe(false);
    expect(lowerRule('-m addrtype --dst-type LOCAL,UNREACHABLE', 6)(p6('fd00:9::5', UNREACHABLE))).toBe(true);
    expect(lowerRule('-m addrtype --dst-type UNSPEC', 6)(p6('::', 1))).toBe(true);
    expect(lowerRule('-m addrtype ! --dst-type UNICAST', 6)(p6('::1', LOCAL))).toBe(false);
  });
  it('iprange compares as unsigned numbers', () => {
    const m = lowerRule('-m iprange --dst-range 10.0.0.0-10.255.255.255');
    expect(m(packet({ dst: v4('10.1.2.3') }))).toBe(true);
    expect(m(packet({ dst: v4('11.0.0.0') }))).toBe(false);
    expect(lowerRule('-m iprange --src-range 200.0.0.0-255.255.255.255')(packet({ src: v4('250.0.0.1') }))).toBe(true);
    expect(lowerRule('-m iprange ! --dst-range 10.0.0.0-10.255.255.255')(packet({ dst: v4('10.1.2.3') }))).toBe(false);
  });
});

describe('socket', () => {
  const sock = (over: Partial<PacketSocket> = {}): PacketSocket => ({ wildcard: false, transparent: false, full: true, mark: 0, ...over });
  it('finds no socket without a socket table', () => {
    expect(lowerRule('-m socket')(packet())).toBe(false);
    expect(lowerRule('-m socket --nowildcard')(packet({ socketLookup: () => null }))).toBe(false);
  });
  it('ignores a wildcard listener unless --nowildcard', () => {
    const wild = packet({ socketLookup: () => sock({ wildcard: true }) });
    expect(lowerRule('-m socket')(wild)).toBe(false);
    expect(lowerRule('-m socket --nowildcard')(wild)).toBe(true);
    expect(lowerRule('-m socket')(packet({ socketLookup: () => sock() }))).toBe(true);
    // A request or TIME_WAIT socket is not a full one: never a wildcard.
    expect(lowerRule('-m socket')(packet({ socketLookup: () => sock({ wildcard: true, full: false }) }))).toBe(true);
  });
  it('--transparent wants IP_TRANSPARENT', () => {
    expect(lowerRule('-m socket --transparent')(packet({ socketLookup: () => sock() }))).toBe(false);
    expect(lowerRule('-m socket --transparent')(packet({ socketLookup: () => sock({ transparent: true }) }))).toBe(true);
  });
  it('--restore-skmark copies the mark of a full socket that matches', () => {
    let mark = 0;
    const setMark = (m: number): void => {
      mark = m;
    };
    expect(lowerRule('-m socket --restore-skmark')(packet({ socketLookup: () => sock({ mark: 7 }), setMark }))).toBe(true);
    expect(mark).toBe(7);
    mark = 0;
    expect(lowerRule('-m socket --restore-skmark')(packet({ socketLookup: () => sock({ mark: 7, wildcard: true }), setMark }))).toBe(false);
    expect(lowerRule('-m socket --transparent --restore-skmark')(packet({ socketLookup: () => sock({ mark: 9 }), setMark }))).toBe(false);
    expect(mark).toBe(0);
  });
});

describe('matches we cannot evaluate say so', () => {
  const assumed = [...new Set(MATCHES.values())].filter((m: MatchExtension) => m.evaluates === 'assumed').map((m) => m.name).sort();
  it('the assumed ones', () => {
    expect(assumed).toEqual(['bpf', 'cgroup', 'cluster', 'connbytes', 'cpu', 'eui64', 'helper', 'mac', 'osf', 'policy', 'rpfilter', 'string', 'u32']);
  });
  it('follow their documented rule', () => {
    expect(lowerRule('-m mac --mac-source 00:11:22:33:44:55')(packet())).toBe(false);
    expect(lowerRule('-m mac ! --mac-source 00:11:22:33:44:55')(packet())).toBe(true);
    expect(lowerRule('-m limit --limit 1/sec')(packet())).toBe(true);
    expect(lowerRule('-m recent --set')(packet())).toBe(true);
    expect(lowerRule('-m recent --update --seconds 60')(packet())).toBe(false);
    expect(lowerRule('-m recent ! --rcheck')(packet())).toBe(true);
    expect(lowerRule('-m policy --dir out --pol none')(packet())).toBe(true);
    expect(lowerRule('-m policy --dir out --pol ipsec')(packet())).toBe(false);
    expect(lowerRule('-m rpfilter')(packet())).toBe(true);
    expect(lowerRule('-m rpfilter --invert')(packet())).toBe(false);
    expect(lowerRule('-p tcp -m osf --genre Linux')(packet())).toBe(false);
    expect(lowerRule('-p tcp -m osf ! --genre Linux')(packet())).toBe(false);
    expect(lowerRule('-m srh ! --srh-tag 5 ! --srh-next-hdr 6', 6)(packet())).toBe(false);
    for (const name of assumed) {
      const ext = MATCHES.get(name)!;
      expect(ext.assumption, name).toBeTypeOf('function');
    }
  });
});

describe('errors name the token and its place', () => {
  it('a bad port', () => {
    try {
      parseRuleArgs(tokenize('-p tcp --dport 70000'), { family: 4, table: 'filter', chain: 'INPUT' });
      expect.unreachable();
    } catch (e) {
      expect(e).toBeInstanceOf(NetfilterSimError);
      const err = e as NetfilterSimError;
      expect(err.code).toBe('BAD_PORT');
      expect(err.diagnostics[0]!.message).toBe('invalid port/service "70000" specified (must be 0-65535)');
      expect(err.diagnostics[0]!.token).toBe('70000');
      expect(err.span).toEqual({ line: 1, column: 16, offset: 15, length: 5 });
    }
  });
  it('too many multiport ports, a long comment, an unknown state', () => {
    const code = (line: string): string | undefined => {
      try {
        parseRuleArgs(tokenize(line), { family: 4, table: 'filter', chain: 'INPUT' });
        return undefined;
      } catch (e) {
        return (e as NetfilterSimError).code;
      }
    };
    expect(code('-p tcp -m multiport --dports 1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16')).toBe('TOO_MANY_PORTS');
    // iptables 1.8.9 keeps the first 255 characters of a longer comment (the parser warns).
    expect(code(`-m comment --comment ${'x'.repeat(256)}`)).toBeUndefined();
    expect(code(`-m comment --comment ${'x'.repeat(255)}`)).toBeUndefined();
    expect(code('-m conntrack --ctstate NEWISH')).toBe('BAD_VALUE');
    expect(code('-m owner')).toBe('MISSING_OPTION');
    expect(code('-p sctp -m sctp --chunk-types any INIT')).toBe('UNSUPPORTED');
  });
});
