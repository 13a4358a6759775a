// The namespace reuses its packet records from one connection to the next. A reused record must
// be the packet a new one would be: every field reset, its addresses its own.
import { describe, expect, it } from 'vitest';
import { Netns } from '../../src/engine/path/netns.js';
import type { ConnectSpec, NetnsOptions } from '../../src/engine/path/netns.js';
import { PacketState } from '../../src/engine/state/packet-state.js';
import type { PacketHost } from '../../src/engine/state/packet-state.js';
import { generateConnectCase } from '../kernel/generate.js';
import { generateNftConnectCase } from '../kernel/nft-generate.js';

const host: PacketHost = { addressType: () => 0, statisticRandom: () => false };

/** Every own field of a packet but its host and its conntrack view's object. */
function fields(p: PacketState): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(p)) if (k !== 'host' && k !== 'ctView') out[k] = v;
  return out;
}

describe('packet records', () => {
  it('a reset record has every field of a new packet', () => {
    const used = new PacketState(host, 6, 17, [1, 2, 3, 4], 1, [5, 6, 7, 8], 2, 0);
    // Every field set to something a new packet does not have.
    for (const [k, v] of Object.entries(used)) {
      if (k === 'host' || k === 'ctView') continue;
      const r = used as unknown as Record<string, unknown>;
      if (typeof v === 'number') r[k] = v + 7;
      else if (typeof v === 'boolean') r[k] = !v;
      else if (typeof v === 'string') r[k] = `${v}!`;
      else if (v === null) r[k] = { stale: true };
    }
    const table = { isConfirmed: () => true } as unknown as Parameters<PacketState['setConntrack']>[0];
    used.setConntrack(table, 3, 1, 2);
    const src = [0x0a000002];
    const dst = [0x0a600001];
    used.reset(4, 6, src, 40000, dst, 80, 2);
    const fresh = new PacketState(host, 4, 6, [0x0a000002], 40000, [0x0a600001], 80, 2);
    expect(fields(used)).toEqual(fields(fresh));
    expect(used.ctState).toBe(0);
    // Its addresses are copies: a NAT rewriting them in place leaves the caller's alone.
    expect(used.src).not.toBe(src);
    expect(used.dst).not.toBe(dst);
    used.dst[0] = 1;
    expect(dst[0]).toBe(0x0a600001);
  });

  it('generated pods give the same results and traces with reused records as with new ones', () => {
    let compared = 0;
    for (let seed = 1; seed <= 60; seed++) {
      for (const c of [generateConnectCase(seed), generateNftConnectCase(seed, seed % 2 === 0)]) {
        const options = { ...c.sim, ...('nft' in c ? { nft: c.nft } : {}) } as unknown as NetnsOptions;
        let reused: Netns;
        try {
          reused = new Netns(options);
        } catch {
          continue;
        }
        const fresh = new Netns(options);
        fresh.reusePackets = false;
        const close = seed % 3 === 0;
        for (const [i, p] of c.probes.entries()) {
          // Traced and untraced connections alternate: both paths take records from the same pool.
          const trace = i % 2 === 0;
          const a = reused.connect(p as ConnectSpec, { trace, close });
          const b = fresh.connect(p as ConnectSpec, { trace, close });
          expect(JSON.stringify(a), `seed ${seed}, probe ${i}`).toBe(JSON.stringify(b));
          compared++;
        }
        expect(reused.conntrack()).toEqual(fresh.conntrack());
        expect(reused.counters(4)).toEqual(fresh.counters(4));
      }
    }
    expect(compared).toBeGreaterThan(500);
  });
});
