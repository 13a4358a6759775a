/**
 * The namespace's rate estimators (`xt_rateest_net`): one per name that a `RATEEST` rule of
 * either family creates, shared by every rule that names it, timed from when the rules load.
 *
 * @module
 */
import { RateEstimator } from '../../iptables/extensions/rate-estimator.js';
import type { RateestTargetOptions } from '../../iptables/extensions/target/RATEEST.js';
import type { Ruleset } from '../../model/types.js';

/** The estimators the rule sets create, by name (the first rule to name one sets its timing). @internal */
export function rateEstimatorTable(rulesets: readonly Ruleset[], now: number): ReadonlyMap<string, RateEstimator> {
  let out: Map<string, RateEstimator> | null = null;
  for (const rs of rulesets) {
    for (const t of rs.tables) {
      for (const c of t.chains) {
        for (const r of c.rules) {
          const tg = r.target;
          if (tg?.kind !== 'extension' || tg.name !== 'RATEEST') continue;
          const o = tg.options as unknown as RateestTargetOptions;
          out ??= new Map();
          if (!out.has(o.name)) out.set(o.name, new RateEstimator(o.name, o.interval, o.ewmaLog, now));
        }
      }
    }
  }
  return out ?? NO_ESTIMATORS;
}

/** The table of namespaces whose rules create no estimator (one, shared, never written). */
const NO_ESTIMATORS: ReadonlyMap<string, RateEstimator> = new Map();
