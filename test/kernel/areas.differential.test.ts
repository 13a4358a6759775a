// The widened connect differential: one generator per area of the packet path (areas-generate.ts),
// each at least 300 pods with real sockets, probes made in order in one namespace per pod, and
// outcome, address, port and SO_ORIGINAL_DST (and, for the SNAT area, the peer address the
// listener saw) must agree with the kernel, probe by probe.
//
// NETFILTER_SIM_AREA_CASES=N runs N cases per area instead (to replay or develop; CI runs the full count).
import { connectDifferential } from './connect-differential.js';
import { AREAS, generateAreaCase } from './areas-generate.js';
import { describeKernel } from './harness.js';

const CASES = Number(process.env['NETFILTER_SIM_AREA_CASES'] ?? 300);
// Most of a case is waiting (a dropped probe costs the connect timeout): many cases in flight, and
// a timeout well above a veth's round trip (a SYN-ACK comes back in well under a millisecond).
const BATCH = { concurrency: 16, connectTimeoutMs: 250 };
const ONLY = process.env['NETFILTER_SIM_AREAS']?.split(',');

for (const area of AREAS) {
  if (ONLY && !ONLY.includes(area.name)) continue;
  describeKernel(`areas differential, ${area.name} (${area.what}): Netns.connect vs real sockets`, () => {
    connectDifferential(Array.from({ length: CASES }, (_, i) => generateAreaCase(area.name, i + 1)), 'seed $seed', BATCH);
  });
}
