/**
 * `netfilter-sim trace`: one packet through every hook it visits.
 *
 * @module
 */
import { parseArgs } from 'node:util';
import { Netns } from '../../engine/path/netns.js';
import { renderOutcome, renderTrace } from '../../trace/render.js';
import { EXIT_OK, UsageError } from '../io.js';
import { writeJson } from '../json.js';
import type { CliIO } from '../io.js';
import { NETNS_OPTIONS, netnsOptions, reportError, traceFormat, useColor } from './connect.js';

const TRACE_HELP = `Usage: netfilter-sim trace --rules FILE|- --packet 'PACKET' [options]

Traces one packet through every hook, table and chain it visits in a modelled pod namespace,
with the routing, conntrack, NAT and socket decisions around them.

PACKET is  PROTO [SRC[:SPORT]] > DST[:DPORT] [in IFACE] [uid N] [gid N] [groups A,B]
           [mark N] [flags S,A] [type N] [code N] [frag]
A packet with a source arrives (on IFACE, by default the interface whose network holds the
source); one without a source, or with uid, is sent by a local process.

Options:
  --rules FILE|- (repeatable; nft files too)  --rules6 FILE|-  --syntax iptables|nft  --strict  --listen LIST  --iface NAME=ADDRS  --gateway IP
  --route-localnet  --ip-forward  --peer IP=PORTS  --conntrack-max N
  --rule 'ARGS'  --route 'ARGS'   (as for connect)
  --format FMT    text (kernel TRACE lines) | tree (default) | json (the events) | mermaid | dot
  --json          the result object: outcome, address, port, originalDestination, steps,
                  reason, and trace (the full event list)
  --seed N  --evaluator lowered|reference
  --color / --no-color   (default: colour only on a terminal, never with NO_COLOR)

Exit status: 0 the trace ran (whatever the packet's fate), 1 bad input, 2 usage error.

Examples:
  netfilter-sim trace --rules istio.rules --packet 'tcp 10.0.0.5:40000 > 10.0.0.2:8080 in eth0'
  netfilter-sim trace --rules linkerd.rules --packet 'tcp > 10.96.0.10:80 uid 1000' --format text
  netfilter-sim trace --rules kube.rules --ip-forward --packet 'tcp 10.0.0.2:5000 > 172.30.0.41:80' --format mermaid
`;

/**
 * Runs `netfilter-sim trace ARGS`. Exit 0 when the trace ran, 1 on bad input, 2 on a usage error.
 *
 * @example
 * ```ts
 * await runTrace(['--rules', 'pod.rules', '--packet', 'tcp 10.0.0.5:40000 > 10.0.0.2:8080 in eth0'], processIO());
 * ```
 */
export async function runTrace(args: string[], io: CliIO): Promise<number> {
  let sources = new Map<string, string>();
  let files: { rules?: string | undefined; rules6?: string | undefined } = {};
  try {
    const { values } = parseArgs({ args, options: { ...NETNS_OPTIONS, packet: { type: 'string' } }, allowPositionals: false, strict: true });
    if (values.help) {
      io.stdout(TRACE_HELP);
      return EXIT_OK;
    }
    const packet = values.packet;
    if (packet === undefined) throw new UsageError("--packet 'PACKET' is required");
    const format = traceFormat(values, 'tree');
    files = { rules: values.rules?.[0], rules6: values.rules6 };
    const built = netnsOptions(values, io);
    sources = built.sources;
    const ns = new Netns(built.options);
    const r = ns.trace(packet);
    if (r.traceOmitted) io.stderr(`netfilter-sim trace: warning: the trace keeps the first 65536 rule events; ${r.traceOmitted} more were left out\n`);
    const color = useColor(values, io);
    if (values.json) {
      writeJson(r, io.stdout);
      return EXIT_OK;
    }
    if (format === 'json') writeJson(r.trace ?? [], io.stdout);
    else io.stdout(renderTrace(r.trace ?? [], format, { color }));
    if (format === 'tree' || format === 'text') io.stdout(renderOutcome(r, { color }));
    return EXIT_OK;
  } catch (e) {
    return reportError(e, io, 'trace', sources, files);
  }
}
