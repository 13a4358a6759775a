/**
 * A rate estimator as `xt_RATEEST` creates it (`gen_new_estimator`, net/core/gen_estimator.c), on
 * the namespace's virtual clock: `RATEEST` adds each packet's bytes and one packet to its
 * counters; a timer, every `2^(interval+2)/4` seconds from creation, folds the counters' growth
 * since the last tick into exponentially weighted averages (`est_timer`):
 *
 *     brate = (bytes - last_bytes) << (10 - intvl_log)
 *     avbps += (brate >> ewma_log) - (avbps >> ewma_log)          (the same for packets)
 *
 * and `rateest` reads `avbps >> 8` bytes/s and `avpps >> 8` packets/s (`gen_estimator_read`).
 * Before the first tick both are 0. The kernel's timer runs on jiffies and fires late under load;
 * here it fires exactly on time.
 *
 * @module
 */

import type { RuntimeRateEstimator } from './types.js';

/** One estimator (`struct xt_rateest` with its `net_rate_estimator`). */
export class RateEstimator implements RuntimeRateEstimator {
  readonly name: string;
  /** `xt_rateest_target_info.interval`: -2 … 3 (250 ms … 8 s). */
  readonly interval: number;
  readonly ewmaLog: number;
  /** The timer period in seconds. */
  private readonly period: number;
  private readonly intvlLog: number;
  private bytes = 0;
  private packets = 0;
  private lastBytes = 0;
  private lastPackets = 0;
  private avbps = 0;
  private avpps = 0;
  /** Bytes per second at the last {@link sample} (`avbps >> 8`, 32-bit). */
  bps = 0;
  /** Packets per second at the last {@link sample}. */
  pps = 0;
  /** When the timer fires next (seconds on the namespace's clock). */
  private next: number;

  constructor(name: string, interval: number, ewmaLog: number, now: number) {
    this.name = name;
    this.interval = interval;
    this.ewmaLog = ewmaLog;
    this.intvlLog = interval + 2;
    this.period = 2 ** this.intvlLog / 4;
    this.next = now + this.period;
  }

  /** Runs the timer ticks due by `now`. */
  private catchUp(now: number): void {
    const e = 2 ** this.ewmaLog;
    const scale = 2 ** (10 - this.intvlLog);
    while (this.next <= now) {
      const brate = (this.bytes - this.lastBytes) * scale;
      const prate = (this.packets - this.lastPackets) * scale;
      this.avbps += Math.floor(brate / e) - Math.floor(this.avbps / e);
      this.avpps += Math.floor(prate / e) - Math.floor(this.avpps / e);
      this.lastBytes = this.bytes;
      this.lastPackets = this.packets;
      this.next += this.period;
      if (this.avbps === 0 && this.avpps === 0 && this.next <= now) {
        // Idle and decayed to 0 (the counters cannot grow between ticks): the ticks left change nothing.
        this.next += (Math.floor((now - this.next) / this.period) + 1) * this.period;
      }
    }
  }

  /** `xt_rateest_tg`: one packet of `length` bytes at `now`. */
  add(length: number, now: number): void {
    this.catchUp(now);
    this.bytes += length;
    this.packets += 1;
  }

  /** `gen_estimator_read` at `now`: sets {@link bps} and {@link pps}. */
  sample(now: number): void {
    this.catchUp(now);
    this.bps = Math.floor(this.avbps / 256) >>> 0;
    this.pps = Math.floor(this.avpps / 256) >>> 0;
  }

  /** Bytes and packets per second at `now`. */
  read(now: number): { bps: number; pps: number } {
    this.sample(now);
    return { bps: this.bps, pps: this.pps };
  }
}
