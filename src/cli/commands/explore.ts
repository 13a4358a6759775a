/**
 * `netfilter-sim explore`: every probe of a pod's space, partitioned into classes that share one
 * outcome.
 *
 * @module
 */
import { parseArgs } from 'node:util';
import { explore } from '../../explore/explore.js';
import type { ExploreOptions } from '../../explore/explore.js';
import { renderExplore } from '../../explore/render.js';
import { renderExploreSummary, summarizeExplore } from '../../explore/summary.js';
import { readNarrowing } from '../../explore/narrow.js';
import { NetfilterSimError } from '../../model/errors.js';
import { EXIT_OK, UsageError } from '../io.js';
import type { CliIO } from '../io.js';
import { NETNS_OPTIONS, netnsOptions, reportError } from './connect.js';

const EXPLORE_HELP = `Usage: netfilter-sim explore --rules FILE|- --from local|remote [options]

Partitions every connection a pod can see into classes that share one outcome, exactly: for
--from local, uid × gid × destination address × destination port; for --from remote, source
address × destination address × destination port × interface (IPv4, then IPv6). Each class
says what connect gives for every probe in it, and which rules decided.

Rules and namespace (as for connect):
  --rules FILE|-          iptables-save text for IPv4 (- reads standard input), or an nft file
                          (first statement table/add/flush/insert/delete/define); repeatable:
                          nft files load in order beside at most one iptables-save file
  --syntax iptables|nft   read every --rules file as this syntax instead of guessing
  --rules6 FILE|-         iptables-save text for IPv6
  --strict                read the rules as iptables-restore does
  --listen LIST           listening sockets: 4140,4143,8080, 127.0.0.1:15001, 53/udp; repeatable
  --iface NAME=ADDRS      interface addresses (default eth0=10.0.0.2/24,fd00::2/64); repeatable
  --gateway IP            default gateway; repeatable
  --route-localnet        net.ipv4.conf.all.route_localnet=1
  --ip-forward            net.ipv4.ip_forward=1
  --peer IP=PORTS         a remote host that listens only on PORTS
  --rule 'ARGS'           a policy routing rule, as ip rule add takes it: 'fwmark 1 lookup 100',
                          '-6 fwmark 0x1/0x1 pref 100 lookup 100' (IPv4 unless -6); repeatable
  --route 'ARGS'          a route, as ip route add takes it: 'local default dev lo table 100',
                          '10.96.0.0/12 via 10.0.0.1 dev eth0'; repeatable

The space:
  --from local|remote     probes from a process of the pod, or from a remote client
  --proto tcp|udp         default tcp
  -4 / -6                 one family only (default both)
  --sport N               the probes' source port (default 41000 local, 40000 remote: fixed
                          ports of the ephemeral range)

Narrowing (each repeatable or a comma list; the classes partition the narrowed space):
  --dst CIDR              destinations in these prefixes (a family with none is not explored)
  --dport N|N-M           destination ports
  --uid N|N-M             the local process's uid (--from local)
  --gid N|N-M             the local process's gid (--from local)
  --src CIDR              sources in these prefixes (--from remote)
  --iface NAME            arriving on this interface (--from remote; NAME=ADDRS makes one)

Output:
  --summary               per outcome: its exact number of probes, its share of the space and
                          the rules that produce it, instead of the classes
  --json                  one object: from, fields, spaces, classes (outcome, address, port,
                          originalDestination, boxes, example, rules); with --summary,
                          outcomes (outcome, address, port, probes, share, classes, rules)

Exit status: 0 the exploration ran, 1 bad input or a rule explore cannot split exactly
(named, with its line), 2 usage error.

Examples:
  netfilter-sim explore --rules linkerd.rules --listen 4140,4143,8080 --from local -4
  netfilter-sim explore --rules istio.rules --listen 15001,15006 --from remote --json
  netfilter-sim explore --rules pod.nft --listen 15001,8080 --from local -4
  netfilter-sim explore --rules node.rules --from local --dst 10.96.0.0/12 --dport 80 --summary
`;

/** JSON with one field per line, but ranges (arrays of plain values) on one line. */
function compactJson(value: unknown): string {
  return JSON.stringify(value, null, 2).replace(/\[\s*\n([^[\]{}]*?)\n\s*\]/g, (_, items: string) => `[${items.split('\n').map((l) => l.trim()).join(' ')}]`);
}

/**
 * Runs `netfilter-sim explore ARGS`.
 *
 * @example
 * ```ts
 * const code = await runExplore(['--rules', 'pod.rules', '--from', 'local', '--json'], processIO());
 * ```
 */
export async function runExplore(args: string[], io: CliIO): Promise<number> {
  let sources = new Map<string, string>();
  let files: { rules?: string | undefined; rules6?: string | undefined } = {};
  try {
    const { values } = parseArgs({
      args,
      options: {
        ...NETNS_OPTIONS,
        from: { type: 'string' },
        proto: { type: 'string' },
        sport: { type: 'string' },
        dst: { type: 'string', multiple: true },
        src: { type: 'string', multiple: true },
        dport: { type: 'string', multiple: true },
        uid: { type: 'string', multiple: true },
        gid: { type: 'string', multiple: true },
        summary: { type: 'boolean' },
        '4': { type: 'boolean', short: '4' },
        '6': { type: 'boolean', short: '6' },
      },
      allowPositionals: false,
      strict: true,
    });
    if (values.help) {
      io.stdout(EXPLORE_HELP);
      return EXIT_OK;
    }
    const from = values.from;
    if (from === undefined) throw new UsageError('--from local|remote is required');
    if (from !== 'local' && from !== 'remote') throw new UsageError(`--from is local or remote, not "${from}"`);
    const proto = values.proto;
    if (proto !== undefined && proto !== 'tcp' && proto !== 'udp') throw new UsageError(`--proto is tcp or udp, not "${proto}"`);
    if (values['4'] && values['6']) throw new UsageError('-4 and -6 exclude each other (give neither for both)');
    if (values.format !== undefined) throw new UsageError('explore has no --format; --json prints the classes as data');
    let sport: number | undefined;
    if (values.sport !== undefined) {
      if (!/^\d+$/.test(values.sport) || Number(values.sport) < 1 || Number(values.sport) > 65535) throw new UsageError(`--sport needs a port 1-65535, not "${values.sport}"`);
      sport = Number(values.sport);
    }
    files = { rules: values.rules?.[0], rules6: values.rules6 };
    if (files.rules === undefined && files.rules6 === undefined) throw new UsageError('--rules FILE (or --rules6 FILE) is required');
    // --iface NAME=ADDRS makes an interface (as for connect); --iface NAME narrows the remote space.
    const ifaceSpecs = values.iface ?? [];
    const narrowIfaces = ifaceSpecs.filter((v) => !v.includes('='));
    // The narrowing's own errors name the flag: a bad value is a usage error.
    const narrowing = { dst: values.dst, src: values.src, dport: values.dport, uid: values.uid, gid: values.gid, iface: narrowIfaces.length > 0 ? narrowIfaces : undefined };
    try {
      readNarrowing(narrowing, from);
    } catch (e) {
      const m = e instanceof NetfilterSimError ? /^explore: (\w+): (.*)$/s.exec(e.diagnostics[0]?.message ?? '') : null;
      if (m) throw new UsageError(`--${m[1]!} ${m[2]!}`);
      throw e;
    }
    const built = netnsOptions({ ...values, iface: ifaceSpecs.filter((v) => v.includes('=')) }, io);
    sources = built.sources;
    const { evaluator: _e, seed: _s, ...ns } = built.options;
    const options: ExploreOptions = {
      ...ns,
      from,
      ...(proto !== undefined ? { proto } : {}),
      ...(values['4'] ? { family: 4 as const } : values['6'] ? { family: 6 as const } : {}),
      ...(sport !== undefined ? { sport } : {}),
      ...(values.dst !== undefined ? { dst: values.dst } : {}),
      ...(values.src !== undefined ? { src: values.src } : {}),
      ...(values.dport !== undefined ? { dport: values.dport } : {}),
      ...(values.uid !== undefined ? { uid: values.uid } : {}),
      ...(values.gid !== undefined ? { gid: values.gid } : {}),
      ...(narrowIfaces.length > 0 ? { iface: narrowIfaces } : {}),
    };
    const result = explore(options);
    if (values.summary) {
      const summary = summarizeExplore(result);
      io.stdout(values.json ? compactJson(summary) + '\n' : renderExploreSummary(summary));
      return EXIT_OK;
    }
    io.stdout(values.json ? compactJson(result) + '\n' : renderExplore(result));
    return EXIT_OK;
  } catch (e) {
    return reportError(e, io, 'explore', sources, files);
  }
}
