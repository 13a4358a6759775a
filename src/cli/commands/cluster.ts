/**
 * `netfilter-sim cluster connect|reach|rules`: a Kubernetes cluster's snapshot on the packet path.
 * @internal
 */
import { parseArgs } from 'node:util';
import type { ParseArgsConfig } from 'node:util';
import { Cluster } from '../../cluster/cluster.js';
import type { ClusterConnectResult, ClusterOptions } from '../../cluster/cluster.js';
import { readSnapshot } from '../../cluster/snapshot.js';
import type { SnapshotSource } from '../../cluster/snapshot.js';
import { renderClusterOutcome, renderClusterTrace, renderReach, renderReachAllPorts } from '../../cluster/render.js';
import { printNftRuleset } from '../../nftables/print.js';
import { nftLoadErrors } from '../../nftables/index.js';
import { NetfilterSimError, diagnostic } from '../../model/errors.js';
import { EXIT_OK, EXIT_USAGE, FileReadError, UsageError, reportCliError } from '../io.js';
import type { CliIO } from '../io.js';
import { writeJson } from '../json.js';
import { traceFormat, useColor } from './connect.js';
import { type Values, str, list } from '../values.js';

const COMMON_OPTIONS = {
  snapshot: { type: 'string', multiple: true },
  'kube-proxy': { type: 'string' },
  netpol: { type: 'string' },
  cni: { type: 'string' },
  hairpin: { type: 'boolean' },
  'node-rules': { type: 'string', multiple: true },
  'pod-rules': { type: 'string', multiple: true },
  seed: { type: 'string' },
  json: { type: 'boolean' },
  format: { type: 'string' },
  color: { type: 'boolean' },
  'no-color': { type: 'boolean' },
  help: { type: 'boolean', short: 'h' },
} as const satisfies ParseArgsConfig['options'];

const CLUSTER_FLAGS = `Cluster:
  --snapshot PATH         what kubectl get namespaces,nodes,pods,services,endpointslices,
                          networkpolicies -A -o yaml (or -o json) prints: a file, a directory
                          (its .yaml, .yml and .json files) or - (standard input); repeatable
  --kube-proxy MODE       iptables (default) | nftables | none: kube-proxy's rules on every node
  --netpol reference|kube-router|kube-router-nftables|kube-network-policies|none
                          where NetworkPolicy is enforced (default reference): at the pods' veths,
                          kube-router's iptables rules and ipsets, kube-router's nftables tables,
                          kube-network-policies' queue, or nowhere
  --cni bridge|ptp        how pods are joined to their node (default bridge: a cni0 bridge with
                          bridge netfilter; ptp: a veth per pod routed by the node)
  --hairpin               hairpin mode on the bridge's ports (a pod reaching itself through a
                          Service; off by default, as the bridge plugin leaves it)
  --node-rules NODE=FILE  a node's real rules (iptables-save, ip6tables-save or nft list ruleset
                          output), instead of what would be compiled for it; repeatable
  --pod-rules NS/POD=FILE the rules in a pod's own namespace (a mesh's init container's, say), in
                          the same forms; its containers' ports are its listeners; repeatable
  --seed N                seed of the random choices (statistic, numgen) of every namespace`;

const CONNECT_HELP = `Usage: netfilter-sim cluster connect --snapshot PATH --from NS/POD[/CONTAINER] --to TARGET [options]

Simulates one connection (TCP: SYN, answer, ACK; UDP: one datagram) from a pod across every
namespace it crosses — the pod, its node, the other node, the destination pod — and every answer
back, with conntrack in each, and traces it hop by hop.

TARGET is NS/POD (the pod's address), NS/svc/NAME (the Service's ClusterIP), or ADDR:PORT
([IPv6]:PORT).

The connection:
  --from NS/POD[/CONTAINER]  the client pod (the container's runAsUser owns the socket)
  --to TARGET             where to
  --port N                the port, for a pod or Service target (default: its only port)
  --proto tcp|udp|sctp    default tcp (sctp is not simulated: an error says so)
  -4 / -6                 the address family of a dual-stack target (default: its first address)

${CLUSTER_FLAGS}

Output:
  --json                  one object: outcome, address, port, source, originalDestination (as
                          the destination app sees them), errno (what the client's connect()
                          returns), reason, steps (each with its namespace), hops (namespace,
                          in, out, steps), policy
  --format FMT            tree (default) | text | json (the events, each with its namespace) |
                          mermaid | dot
  --color / --no-color    colour the trace

Exit status: 0 the simulation ran (whatever its outcome), 1 bad input, 2 usage error.

Examples:
  netfilter-sim cluster connect --snapshot cluster.yaml --from shop/client --to shop/svc/web
  netfilter-sim cluster connect --snapshot dump/ --from shop/client --to db/redis-0 --port 6379 --json
`;

const REACH_HELP = `Usage: netfilter-sim cluster reach --snapshot PATH --port N|--all-ports [options]

The reachability matrix over the snapshot's pods: from every pod to every pod (to its address,
or through a Service that selects it), each cell a connection on the cluster path, printed as the
Kubernetes NetworkPolicy e2e suite prints its truth tables (. reachable, X blocked), with why each
blocked cell is blocked. Pods that nothing on the path tells apart (namespace, labels, node,
containers' ports, ipBlock answers, EndpointSlices; no rules of their own and no --node-rules)
form a class: one connection per pair of classes answers every pair of their pods.

The matrix:
  --port N                the destination port
  --all-ports             every port: the ranges of ports that share one answer in every cell,
                          each with its matrix (cut at every port the policies, containers,
                          Services and rules name; one port of each piece probed)
  --proto tcp|udp         default tcp
  --to pod|service        to each pod's address (default), or through the first Service (by
                          name) selecting it, each endpoint of the Service chosen in turn
  --namespaces A,B        only the pods of these namespaces

${CLUSTER_FLAGS}

Output:
  --json                  one object: port, protocol, to, pods, allowed (allowed[i][j] from
                          pods[i] to pods[j]), why, classes, probes; with --all-ports ports: "all"
                          and ranges (first, last, allowed, why) instead of port, allowed, why

Exit status: 0 the matrix was computed, 1 bad input, 2 usage error.

Examples:
  netfilter-sim cluster reach --snapshot cluster.yaml --port 80
  netfilter-sim cluster reach --snapshot cluster.yaml --port 80 --to service --json
  netfilter-sim cluster reach --snapshot cluster.yaml --all-ports --namespaces shop
`;

const RULES_HELP = `Usage: netfilter-sim cluster rules --snapshot PATH --node NAME [options]

What a node holds: kube-proxy's rules, the CNI plugins' node rules and the NetworkPolicy
enforcer's, compiled from the snapshot (or the dumps given with --node-rules), printed as
iptables-save (both families) or nft list ruleset print them.

  --node NAME             the node
  --format save|nft|ipsets
                          iptables-save text (default when the node has iptables rules), the
                          native nft tables, or the ipsets the enforcer keeps (kube-router's),
                          as ipset save prints them

${CLUSTER_FLAGS}

Exit status: 0 ok, 1 bad input, 2 usage error.

Example:
  netfilter-sim cluster rules --snapshot cluster.yaml --node worker-1 --node-rules worker-1=worker-1.rules
`;

function clusterHelp(): string {
  return `Usage: netfilter-sim cluster connect|reach|rules [options]

A Kubernetes cluster's snapshot on the packet path: nodes and pods as network namespaces, joined
as the CNI plugins join them, with the rules each node holds.

Commands:
  connect   one connection traced across every namespace it crosses
  reach     the reachability matrix over the pods for a port
  rules     what a node's components write

Run "netfilter-sim cluster <command> --help" for its options and examples.
`;
}

function oneOf<T extends string>(v: Values, k: string, allowed: readonly T[]): T | undefined {
  const s = str(v, k);
  if (s === undefined) return undefined;
  if (!(allowed as readonly string[]).includes(s)) throw new UsageError(`--${k} is ${allowed.join(', ')}, not "${s}"`);
  return s as T;
}

function read(io: CliIO, path: string): string {
  try {
    return io.readFile(path);
  } catch (e) {
    throw e instanceof FileReadError ? e : new FileReadError(path, e);
  }
}

/** The snapshot's texts: files, every .yaml/.yml/.json file of a directory, or standard input. @internal */
export function snapshotSources(io: CliIO, paths: readonly string[], flag = '--snapshot'): SnapshotSource[] {
  if (paths.length === 0) throw new UsageError(`${flag} PATH is required (kubectl get … -o yaml, a file or a directory)`);
  if (paths.filter((p) => p === '-').length > 1) throw new UsageError(`only one ${flag} can read standard input`);
  const out: SnapshotSource[] = [];
  for (const p of paths) {
    const names = io.listDir?.(p) ?? null;
    if (names === null) {
      out.push({ name: p === '-' ? '<stdin>' : p, text: read(io, p) });
      continue;
    }
    const files = names.filter((n) => /\.(ya?ml|json)$/i.test(n));
    if (files.length === 0) throw new NetfilterSimError(diagnostic('BAD_MANIFEST', `${p}: a directory without .yaml, .yml or .json files`));
    for (const n of files) {
      const path = `${p.replace(/\/+$/, '')}/${n}`;
      out.push({ name: path, text: read(io, path) });
    }
  }
  return out;
}

/** The cluster the flags describe; its warnings go to standard error. */
function buildCluster(values: Values, io: CliIO, command: string): Cluster {
  const sources = snapshotSources(io, list(values, 'snapshot'));
  const nodeRules: Record<string, string[]> = Object.create(null) as Record<string, string[]>;
  for (const spec of list(values, 'node-rules')) {
    const eq = spec.indexOf('=');
    if (eq <= 0 || eq === spec.length - 1) throw new UsageError(`--node-rules needs NODE=FILE, not "${spec}"`);
    const node = spec.slice(0, eq);
    (nodeRules[node] ??= []).push(read(io, spec.slice(eq + 1)));
  }
  const podRules: Record<string, { rules: string[] }> = Object.create(null) as Record<string, { rules: string[] }>;
  for (const spec of list(values, 'pod-rules')) {
    const eq = spec.indexOf('=');
    if (eq <= 0 || eq === spec.length - 1 || !spec.slice(0, eq).includes('/')) throw new UsageError(`--pod-rules needs NS/POD=FILE, not "${spec}"`);
    (podRules[spec.slice(0, eq)] ??= { rules: [] }).rules.push(read(io, spec.slice(eq + 1)));
  }
  const seedText = str(values, 'seed');
  if (seedText !== undefined && !/^\d+$/.test(seedText)) throw new UsageError(`--seed needs a number, not "${seedText}"`);
  const kubeProxy = oneOf(values, 'kube-proxy', ['iptables', 'nftables', 'none'] as const);
  const netpol = oneOf(values, 'netpol', ['reference', 'kube-router', 'kube-router-nftables', 'kube-network-policies', 'none'] as const);
  const cni = oneOf(values, 'cni', ['bridge', 'ptp'] as const);
  const options: ClusterOptions = {
    snapshot: readSnapshot(sources),
    ...(kubeProxy !== undefined ? { kubeProxy } : {}),
    ...(netpol !== undefined ? { netpol } : {}),
    ...(cni !== undefined ? { cni } : {}),
    ...(values['hairpin'] === true ? { hairpin: true } : {}),
    ...(Object.keys(nodeRules).length > 0 ? { nodeRules } : {}),
    ...(Object.keys(podRules).length > 0 ? { podRules } : {}),
    ...(seedText !== undefined ? { seed: Number(seedText) } : {}),
  };
  const cluster = new Cluster(options);
  for (const w of cluster.warnings) io.stderr(`netfilter-sim cluster ${command}: warning: ${w}\n`);
  return cluster;
}

function jsonResult(r: ClusterConnectResult): Omit<ClusterConnectResult, 'trace'> {
  const { trace: _t, ...rest } = r;
  return rest;
}

async function runConnect(args: string[], io: CliIO): Promise<number> {
  const { values } = parseArgs({
    args,
    options: { ...COMMON_OPTIONS, from: { type: 'string' }, to: { type: 'string' }, port: { type: 'string' }, proto: { type: 'string' }, '4': { type: 'boolean', short: '4' }, '6': { type: 'boolean', short: '6' } },
    allowPositionals: false,
    strict: true,
  });
  if (values.help) {
    io.stdout(CONNECT_HELP);
    return EXIT_OK;
  }
  const from = values.from;
  const to = values.to;
  if (from === undefined) throw new UsageError('--from NS/POD is required');
  if (to === undefined) throw new UsageError('--to NS/POD, NS/svc/NAME or ADDR:PORT is required');
  let port: number | undefined;
  if (values.port !== undefined) {
    if (!/^\d+$/.test(values.port) || Number(values.port) < 1 || Number(values.port) > 65535) throw new UsageError(`--port needs a port 1-65535, not "${values.port}"`);
    port = Number(values.port);
  }
  const proto = oneOf(values, 'proto', ['tcp', 'udp', 'sctp'] as const);
  if (values['4'] && values['6']) throw new UsageError('-4 and -6 exclude each other');
  const format = traceFormat(values, 'tree');
  const color = useColor(values, io);
  const cluster = buildCluster(values, io, 'connect');
  const r = cluster.connect({
    from, to,
    ...(port !== undefined ? { port } : {}),
    ...(proto !== undefined ? { proto } : {}),
    ...(values['4'] ? { family: 4 as const } : values['6'] ? { family: 6 as const } : {}),
  }, { trace: true });
  if (values.json) writeJson(jsonResult(r), io.stdout);
  else {
    io.stdout(renderClusterTrace(r.trace ?? [], format, { color }));
    if (format === 'tree' || format === 'text') io.stdout(renderClusterOutcome(r, { color }));
  }
  return EXIT_OK;
}

async function runReach(args: string[], io: CliIO): Promise<number> {
  const { values } = parseArgs({
    args,
    options: { ...COMMON_OPTIONS, port: { type: 'string' }, 'all-ports': { type: 'boolean' }, proto: { type: 'string' }, to: { type: 'string' }, namespaces: { type: 'string' } },
    allowPositionals: false,
    strict: true,
  });
  if (values.help) {
    io.stdout(REACH_HELP);
    return EXIT_OK;
  }
  if (values.format !== undefined) throw new UsageError('reach has no --format: the matrix is text, --json the data');
  const all = values['all-ports'] === true;
  if (all && values.port !== undefined) throw new UsageError('--port and --all-ports exclude each other');
  if (!all && values.port === undefined) throw new UsageError('--port N or --all-ports is required');
  if (!all && (!/^\d+$/.test(values.port!) || Number(values.port) < 1 || Number(values.port) > 65535)) throw new UsageError(`--port needs a port 1-65535, not "${values.port}"`);
  const proto = oneOf(values, 'proto', ['tcp', 'udp', 'sctp'] as const);
  const to = oneOf(values, 'to', ['pod', 'service'] as const);
  const namespaces = values.namespaces?.split(',').map((s) => s.trim()).filter((s) => s !== '');
  const cluster = buildCluster(values, io, 'reach');
  const common = { ...(proto !== undefined ? { proto } : {}), ...(to !== undefined ? { to } : {}), ...(namespaces !== undefined ? { namespaces } : {}) };
  if (all) {
    const r = cluster.reach({ allPorts: true, ...common });
    if (values.json) writeJson(r, io.stdout);
    else io.stdout(renderReachAllPorts(r));
  } else {
    const r = cluster.reach({ port: Number(values.port), ...common });
    if (values.json) writeJson(r, io.stdout);
    else io.stdout(renderReach(r));
  }
  return EXIT_OK;
}

async function runRules(args: string[], io: CliIO): Promise<number> {
  const { values } = parseArgs({ args, options: { ...COMMON_OPTIONS, node: { type: 'string' } }, allowPositionals: false, strict: true });
  if (values.help) {
    io.stdout(RULES_HELP);
    return EXIT_OK;
  }
  const node = values.node;
  if (node === undefined) throw new UsageError('--node NAME is required');
  const format = oneOf(values, 'format', ['save', 'nft', 'ipsets'] as const);
  if (values.json) throw new UsageError('rules prints rule text: --format save, nft or ipsets, no --json');
  const cluster = buildCluster(values, io, 'rules');
  const rules = cluster.nodeRules(node);
  if (format === 'ipsets') {
    io.stdout(rules.ipsets);
    if (rules.ipsets === '') io.stderr(`netfilter-sim cluster rules: node ${node} holds no ipsets (kube-router's NetworkPolicy enforcer keeps them: --netpol kube-router)\n`);
    return EXIT_OK;
  }
  const nft = rules.nft.length === 0 ? '' : printNftRuleset(nftLoadErrors(rules.nft.join('\n')).ruleset);
  const chosen = format ?? (rules.save !== '' || nft === '' ? 'save' : 'nft');
  io.stdout(chosen === 'save' ? rules.save : nft);
  if (chosen === 'save' && rules.ipsets !== '') io.stderr(`netfilter-sim cluster rules: the rules name ipsets node ${node} holds: --format ipsets prints them\n`);
  if (chosen === 'save' && rules.save === '' ) io.stderr(`netfilter-sim cluster rules: node ${node} holds no iptables rules${nft !== '' ? ' (it has nft tables: --format nft)' : ''}\n`);
  if (chosen === 'nft' && nft === '') io.stderr(`netfilter-sim cluster rules: node ${node} holds no nft tables${rules.save !== '' ? ' (it has iptables rules: --format save)' : ''}\n`);
  return EXIT_OK;
}

const SUBS: Record<string, (args: string[], io: CliIO) => Promise<number>> = { connect: runConnect, reach: runReach, rules: runRules };

/**
 * Runs `netfilter-sim cluster …`.
 *
 * @example
 * ```ts
 * const code = await runCluster(['connect', '--snapshot', 'cluster.yaml', '--from', 'shop/client', '--to', 'shop/svc/web'], processIO());
 * ```
 */
export async function runCluster(args: string[], io: CliIO): Promise<number> {
  const [sub, ...rest] = args;
  if (sub === undefined) {
    io.stderr(clusterHelp());
    return EXIT_USAGE;
  }
  if (sub === '--help' || sub === '-h' || sub === 'help') {
    io.stdout(clusterHelp());
    return EXIT_OK;
  }
  const run = Object.hasOwn(SUBS, sub) ? SUBS[sub] : undefined;
  if (run === undefined) throw new UsageError(`unknown cluster command "${sub}" (connect, reach or rules)`);
  try {
    return await run(rest, io);
  } catch (e) {
    return reportCliError(e, io, `cluster ${sub}`);
  }
}
