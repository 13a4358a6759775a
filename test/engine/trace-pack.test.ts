// The compact form batch workers send traces in: every kind of event, and the traces of generated
// iptables and nftables pods, come back as the same JSON text (the same fields, values and order).
import { describe, expect, it } from 'vitest';
import { Netns } from '../../src/engine/path/netns.js';
import type { ConnectSpec, NetnsOptions } from '../../src/engine/path/netns.js';
import { TracePacker, unpackTrace } from '../../src/engine/trace/pack.js';
import type { TraceEvent, TraceEventType } from '../../src/engine/trace/events.js';
import { generateConnectCase } from '../kernel/generate.js';
import { generateNftConnectCase } from '../kernel/nft-generate.js';

/** Packs the traces in one message, as a worker does, and rebuilds each. */
function roundTrip(traces: readonly (readonly TraceEvent[])[]): TraceEvent[][] {
  const strings: string[] = [];
  const index = new Map<string, number>();
  const packer = new TracePacker(traces.length, (s) => {
    let i = index.get(s);
    if (i === undefined) index.set(s, (i = strings.push(s) - 1));
    return i;
  });
  for (const t of traces) packer.add(t, 0);
  const p = packer.finish();
  let from = 0;
  return traces.map((_, i) => {
    const to = p.end[i]!;
    const events = unpackTrace(p.values, from, to, strings, p.objects);
    from = to;
    return events;
  });
}

const B = { packet: 2, label: 'ACK' } as const;
const POS = { hook: 'OUTPUT', table: 'nat', chain: 'PROXY_INIT_OUTPUT', rule: 3 } as const;
const SPAN = { line: 7, column: 1, offset: 120, length: 64 };

/** Every kind of event, with its fields set and, where they may be, null (the type lists every kind). */
const SAMPLES: { readonly [K in TraceEventType]: readonly Extract<TraceEvent, { type: K }>[] } = {
  packet: [
    { ...B, type: 'packet', family: 4, proto: 'tcp', src: '10.0.0.2', sport: 40000, dst: '10.96.0.10', dport: 80, flags: 'SYN', origin: 'local', iface: null, uid: 2102, gid: 2102, mark: 0xffffffff },
    { ...B, type: 'packet', family: 6, proto: 'udp', src: 'fd00::5', sport: 0, dst: 'fd00::2', dport: 53, flags: '', origin: 'remote', iface: 'eth0', uid: null, gid: null, mark: 0 },
  ],
  route: [
    { ...B, type: 'route', hook: 'PREROUTING', dst: '10.0.0.2', result: 'local', dev: 'lo', via: '10.0.0.1', src: '10.0.0.2', table: 255, reason: 'because' },
    { ...B, type: 'route', hook: null, dst: '10.9.9.9', result: 'unreachable', dev: null, via: null, src: null, table: null, reason: null },
  ],
  reroute: [
    { ...B, type: 'reroute', hook: 'OUTPUT', table: 'mangle', dst: '127.0.0.1', result: 'local', dev: 'lo', via: null },
  ],
  table: [{ ...B, type: 'table', hook: 'INPUT', table: 'filter' }],
  rule: [
    { ...B, type: 'rule', ...POS, target: 'REDIRECT', action: 'extension', text: '-A X -p tcp -m comment --comment "über" -j REDIRECT --to-ports 4140', comment: 'über', span: SPAN },
    { ...B, type: 'rule', ...POS, target: '', action: 'none', text: null, comment: null, span: null },
  ],
  return: [{ ...B, type: 'return', ...POS }],
  policy: [{ ...B, type: 'policy', ...POS, policy: 'DROP' }],
  assumed: [
    { ...B, type: 'assumed', ...POS, match: 'limit', result: true, assumption: 'under the limit' },
    { ...B, type: 'assumed', ...POS, match: 'recent', result: false, assumption: null },
  ],
  verdict: [
    { ...B, type: 'verdict', hook: 'INPUT', table: 'filter', verdict: 'DROP', reason: 'REJECT' },
    { ...B, type: 'verdict', hook: 'INPUT', table: 'filter', verdict: 'ACCEPT', reason: null },
  ],
  conntrack: [
    { ...B, type: 'conntrack', hook: 'OUTPUT', action: 'new', state: 'NEW', direction: 'ORIGINAL', zone: 0, id: 17 },
    { ...B, type: 'conntrack', hook: 'PREROUTING', action: 'invalid', state: 'INVALID', direction: null, zone: 3, id: null },
    { ...B, type: 'conntrack', hook: 'INPUT', action: 'found', state: 'ESTABLISHED', direction: 'REPLY', zone: 0, id: 4, reason: 'ACK ignored' },
  ],
  nat: [{ ...B, type: 'nat', hook: 'OUTPUT', manip: 'DST', action: 'REDIRECT', from: '10.96.0.10:80', to: '127.0.0.1:4140', reason: null }],
  effect: [{ ...B, type: 'effect', ...POS, target: 'MARK', detail: 'mark 0x539' }],
  socket: [
    { ...B, type: 'socket', result: 'delivered', address: '127.0.0.1', port: 4140, socket: 'listener 0.0.0.0:4140' },
    { ...B, type: 'socket', result: 'refused', address: '10.0.0.2', port: 9, socket: null },
  ],
  wire: [{ ...B, type: 'wire', dev: 'eth0', src: '10.0.0.2', sport: 40000, dst: '10.96.0.10', dport: 80 }],
  loopback: [{ ...B, type: 'loopback' }],
  drop: [
    { ...B, type: 'drop', hook: 'INPUT', reason: 'REJECT', reject: 'tcp-reset' },
    { ...B, type: 'drop', hook: null, reason: 'no route', reject: null },
  ],
};

const text = (x: unknown): string => JSON.stringify(x);

describe('packed traces', () => {
  it('every kind of event, with and without nulls, comes back as the same JSON text', () => {
    const traces = Object.values(SAMPLES) as readonly (readonly TraceEvent[])[];
    expect(traces).toHaveLength(16);
    const got = roundTrip([...traces, traces.flat(), []]);
    expect(text(got)).toBe(text([...traces, traces.flat(), []]));
    expect(got.at(-2)).toStrictEqual(traces.flat());
  });

  it('an event of a kind it does not know comes back whole', () => {
    const odd = { packet: 0, label: 'SYN', type: 'future', detail: { a: [1, 2] } } as unknown as TraceEvent;
    const trace = [SAMPLES.table[0]!, odd, SAMPLES.loopback[0]!];
    expect(text(roundTrip([trace]))).toBe(text([trace]));
  });

  it('an event with a number that does not fit in 32 bits comes back whole, and exact', () => {
    const big = { ...SAMPLES.conntrack[0]!, id: 2 ** 40 + 1 };
    const negative = { ...SAMPLES.socket[0]!, port: -1 };
    const fraction = { ...SAMPLES.packet[1]!, uid: 0.5 };
    const trace = [SAMPLES.table[0]!, big, negative, fraction, SAMPLES.packet[0]!];
    expect(text(roundTrip([trace]))).toBe(text([trace]));
  });

  it('the traces of generated pods (iptables, nftables, both families) come back as the same JSON text', () => {
    const seen = new Set<string>();
    let events = 0;
    for (let seed = 1; seed <= 40; seed++) {
      for (const c of [generateConnectCase(seed), generateNftConnectCase(seed, seed % 2 === 0)]) {
        const options = { ...c.sim, ...('nft' in c ? { nft: c.nft } : {}) } as unknown as NetnsOptions;
        let ns: Netns;
        try {
          ns = new Netns(options);
        } catch {
          continue;
        }
        const results = c.probes.map((p) => ns.connect(p as ConnectSpec, { trace: true, close: seed % 3 === 0 }));
        const traces = results.map((r) => r.trace!);
        for (const t of traces) for (const e of t) seen.add(e.type);
        events += traces.reduce((n, t) => n + t.length, 0);
        expect(text(roundTrip(traces)), `seed ${seed}`).toBe(text(traces));
        // As a worker records them: each event packed as it comes, into one message.
        const twin = new Netns(options);
        const strings: string[] = [];
        const packer = new TracePacker(c.probes.length, (s) => strings.push(s) - 1);
        const direct = c.probes.map((p) => {
          const { result, omitted } = twin.connectInto(p as ConnectSpec, seed % 3 === 0, packer);
          packer.endResult(omitted);
          return result;
        });
        const packed = packer.finish();
        direct.forEach((r, i) => {
          expect({ ...r, steps: results[i]!.steps, trace: results[i]!.trace }).toEqual(results[i]);
          const events = unpackTrace(packed.values, i === 0 ? 0 : packed.end[i - 1]!, packed.end[i]!, strings, packed.objects);
          expect(text(events), `seed ${seed}, probe ${i}`).toBe(text(traces[i]));
        });
      }
    }
    expect(events).toBeGreaterThan(5000);
    // The engine's own events of at least these kinds went through.
    for (const kind of ['packet', 'route', 'table', 'rule', 'return', 'policy', 'verdict', 'conntrack', 'nat', 'socket', 'loopback', 'wire', 'drop']) expect(seen).toContain(kind);
  });
});
