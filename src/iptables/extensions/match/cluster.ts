/**
 * `-m cluster` (`libxt_cluster.c`, kernel `xt_cluster.c`): the hash of the connection's original
 * source address, with `--cluster-hash-seed`, picks one of `--cluster-total-nodes` nodes; the
 * match holds when that node is in `--cluster-local-nodemask` (or is `--cluster-local-node`).
 * iptables-save prints the mask as `0x%08x`. The engine does not compute the kernel's jhash:
 * every connection is taken to hash to node 1 — an assumption the trace shows.
 *
 * @module
 */
import type { MatchExtension } from '../types.js';
import { badValue, exclusive, missing, parseUint32, requireOption, unknownOption } from '../values.js';

/** `XT_CLUSTER_NODES_MAX`. */
const NODES_MAX = 32;

/** Options of `-m cluster`. */
export interface ClusterOptions {
  readonly totalNodes: number;
  readonly nodeMask: number;
  readonly hashSeed: number;
  readonly negated: boolean;
}

/** `-m cluster`. */
export const cluster: MatchExtension<ClusterOptions> = {
  kind: 'match',
  name: 'cluster',
  family: 'both',
  options: [
    { name: 'cluster-total-nodes', arg: true },
    { name: 'cluster-local-node', arg: true, negatable: true },
    { name: 'cluster-local-nodemask', arg: true, negatable: true },
    { name: 'cluster-hash-seed', arg: true },
  ],
  parse(occurrences, ctx) {
    exclusive(occurrences, ['cluster-local-node', 'cluster-local-nodemask']);
    requireOption(ctx, occurrences, 'cluster', 'cluster-total-nodes');
    requireOption(ctx, occurrences, 'cluster', 'cluster-hash-seed');
    let totalNodes = 0;
    let nodeMask: number | undefined;
    let hashSeed = 0;
    let negated = false;
    let which = '';
    for (const o of occurrences) {
      switch (o.name) {
        case 'cluster-total-nodes': totalNodes = parseUint32(o, 'cluster', 1, NODES_MAX); break;
        case 'cluster-local-node': nodeMask = (1 << (parseUint32(o, 'cluster', 1, NODES_MAX) - 1)) >>> 0; negated = o.negated; which = o.name; break;
        case 'cluster-local-nodemask': nodeMask = parseUint32(o, 'cluster', 1, NODES_MAX); negated = o.negated; which = o.name; break;
        case 'cluster-hash-seed': hashSeed = parseUint32(o, 'cluster'); break;
        default: unknownOption('cluster', o);
      }
    }
    if (nodeMask === undefined) missing(ctx, 'cluster', 'cluster match: --cluster-local-node or --cluster-local-nodemask is missing');
    if (nodeMask >= 2 ** totalNodes) {
      const o = occurrences.find((x) => x.name === which)!;
      badValue(o, which === 'cluster-local-node' ? 'cluster match: --cluster-local-node must be <= --cluster-total-nodes' : 'cluster match: --cluster-local-nodemask too big for --cluster-total-nodes');
    }
    return { totalNodes, nodeMask, hashSeed, negated };
  },
  save(o) {
    return `${o.negated ? '! ' : ''}--cluster-local-nodemask 0x${o.nodeMask.toString(16).padStart(8, '0')} --cluster-total-nodes ${o.totalNodes} --cluster-hash-seed 0x${o.hashSeed.toString(16).padStart(8, '0')}`;
  },
  lower(o) {
    const v = ((o.nodeMask & 1) !== 0) !== o.negated;
    return (p) => p.ct !== null && v;
  },
  evaluates: 'assumed',
  assumption() {
    return "the cluster hash (jhash of the original source) is not computed: every connection is taken to hash to node 1";
  },
};
