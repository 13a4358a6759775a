// What the fuzz suite feeds: one row per parser or entry point. A new front end (nftables, say) is
// one more row: its name, where its seed inputs come from, and how to run one input.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { check } from '../../src/iptables/check/index.js';
import { Netns } from '../../src/engine/path/netns.js';
import { formatIptablesSave } from '../../src/iptables/fmt.js';
import { parseIstioIptablesArgs } from '../../src/compile/istio/args.js';
import { parseProxyInitArgs } from '../../src/compile/linkerd/config.js';
import { readManifests, readPod } from '../../src/compile/pod.js';
import { parseIptablesArgv } from '../../src/iptables/syntax/command.js';
import { parseIptablesSave } from '../../src/iptables/syntax/save.js';
import { checkNftRuleset, parseNftRuleset } from '../../src/nftables/index.js';
import { readSnapshot } from '../../src/cluster/snapshot.js';
import { Cluster } from '../../src/cluster/cluster.js';

const ROOT = resolve(import.meta.dirname, '../..');
const SHARED = resolve(ROOT, '../shared');

/** Every file under `dir` whose name passes `keep`, as text (nothing when the folder is absent). */
export function filesUnder(dir: string, keep: (name: string) => boolean): string[] {
  if (!existsSync(dir)) return [];
  const out: string[] = [];
  for (const e of readdirSync(dir, { withFileTypes: true, recursive: true })) {
    if (e.isFile() && keep(e.name)) out.push(readFileSync(join(e.parentPath, e.name), 'utf8'));
  }
  return out;
}

/** Splits a command line on spaces (the fuzz inputs for argv parsers are text, mutated as text). */
export function words(text: string): string[] {
  return text.split(/[ \n]+/).filter((w) => w !== '');
}

export interface FuzzTarget {
  readonly name: string;
  /** Seed inputs, mutated by the suite. */
  readonly seeds: () => readonly string[];
  /** Runs one input: returns, or throws NetfilterSimError; anything else is a defect. */
  readonly run: (input: string) => unknown;
}

const saveSeeds = (): string[] => [
  ...filesUnder(join(ROOT, 'examples'), (n) => n.endsWith('.rules')),
  ...filesUnder(join(SHARED, 'vectors/linkerd'), (n) => n.endsWith('.save')).slice(0, 20),
  '*nat\n:PREROUTING ACCEPT [0:0]\n:OUTPUT ACCEPT [0:0]\n:PROXY_INIT_OUTPUT - [0:0]\n-A OUTPUT -j PROXY_INIT_OUTPUT\n-A PROXY_INIT_OUTPUT -m owner --uid-owner 2102 -j RETURN\n-A PROXY_INIT_OUTPUT -p tcp -j REDIRECT --to-ports 4140\nCOMMIT\n',
  '*mangle\n-A PREROUTING -j RATEEST --rateest-name r --rateest-interval 250ms --rateest-ewmalog 1s\n-A PREROUTING -m rateest --rateest-delta --rateest1 r --rateest-bps1 1mbit --rateest-gt --rateest-bps2 2mbit --rateest2 r -j ACCEPT\n-A PREROUTING -m rateest --rateest r ! --rateest-lt --rateest-pps 5 -j DROP\n-A PREROUTING -p tcp -j HMARK --hmark-tuple src,dst,sport,dport,proto,ct --hmark-src-prefix 24 --hmark-rnd 0xdeadbeef --hmark-mod 7 --hmark-offset 100\nCOMMIT\n',
];

const argvSeeds = (): string[] => [
  '-A INPUT -s 10.0.0.0/8 -p tcp -m multiport --dports 80,443 -j ACCEPT',
  '-t nat -A OUTPUT -p tcp -m owner ! --uid-owner 1337 -j REDIRECT --to-ports 15001',
  '-I FORWARD 2 -i eth0 -o eth1 -m conntrack --ctstate RELATED,ESTABLISHED -j ACCEPT',
  '-A PREROUTING -t mangle -p tcp --dport 80 -j TPROXY --on-port 15006 --tproxy-mark 0x1/0x1',
  '-t mangle -A OUTPUT -j HMARK --hmark-tuple s,d,sp --hmark-dport-mask 0xff00 --hmark-rnd 1 --hmark-mod 3', '-t mangle -A OUTPUT -m rateest --rateest x --rateest-gt --rateest-bps',
  '-N CHAIN', '-P INPUT DROP', '-A INPUT -m comment --comment "a b" -m mark --mark 0x10/0xff -j LOG --log-prefix x',
];

const manifestSeeds = (): string[] => [
  ...filesUnder(join(ROOT, 'examples/mesh'), (n) => n.endsWith('.yaml')),
  ...filesUnder(join(ROOT, 'test/fixtures/pods'), (n) => n.endsWith('.yaml') || n.endsWith('.json')),
];

const packetSeeds = (): string[] => [
  'tcp 10.0.0.5:40000 > 10.0.0.2:8080 in eth0', 'tcp > 10.96.0.10:80 uid 1000', 'udp > 10.96.0.10:53 uid 0 mark 0x1',
  'icmp 10.0.0.5 > 10.0.0.2 in eth0 type 8 code 0', 'tcp [fd00::5]:1 > [fd00::2]:80 in eth0 flags S', 'tcp > 127.0.0.1:4140 uid 2102 gid 2102 groups 1,2',
];

const nftSeeds = (): string[] => [
  ...filesUnder(join(SHARED, 'vectors/istio-nftables'), (n) => n.endsWith('.golden')).slice(0, 30),
  'table inet filter {\n  chain input {\n    type filter hook input priority 0; policy accept;\n    tcp dport { 22, 80 } accept\n    ip saddr 10.0.0.0/8 counter drop\n  }\n}\n',
];

const snapshotSeeds = (): string[] => [
  ...filesUnder(join(ROOT, 'test/fixtures/cluster'), (n) => n.endsWith('.yaml') || n.endsWith('.json')),
  ...filesUnder(join(ROOT, 'examples/cluster'), (n) => n.endsWith('.yaml')),
  JSON.stringify({ kind: 'List', items: [{ kind: 'Node', metadata: { name: 'n' }, spec: { podCIDR: '10.1.0.0/24' }, status: { addresses: [{ type: 'InternalIP', address: '192.168.1.2' }] } }, { kind: 'Pod', metadata: { name: 'p', namespace: 'a' }, spec: { nodeName: 'n', containers: [{ name: 'c', ports: [{ containerPort: 80 }] }] }, status: { podIPs: [{ ip: '10.1.0.9' }] } }] }),
];

/** A snapshot through the whole path: read, planned, built, and one connection between its first and last pods. */
function clusterPath(text: string): unknown {
  const c = new Cluster({ snapshot: text, kubeProxy: 'none', netpol: 'none' });
  const pods = c.topology.pods;
  if (pods.length === 0) return c;
  return c.connect({ from: pods[0]!.key, to: pods[pods.length - 1]!.key, port: pods[pods.length - 1]!.listeners[0]?.port ?? 80 });
}

const LINKERD_RULES = readFileSync(join(ROOT, 'examples/linkerd-default.rules'), 'utf8');
let netns: Netns | undefined;

export const FUZZ_TARGETS: readonly FuzzTarget[] = [
  { name: 'iptables-save text (strict)', seeds: saveSeeds, run: (t) => parseIptablesSave(t) },
  { name: 'iptables-save text (lenient, ip6tables)', seeds: saveSeeds, run: (t) => parseIptablesSave(t, { mode: 'lenient', family: 6 }) },
  { name: 'fmt', seeds: saveSeeds, run: (t) => formatIptablesSave(t) },
  {
    name: 'check',
    seeds: saveSeeds,
    run: (t) => {
      const r = parseIptablesSave(t, { mode: 'lenient' });
      return [check(r.ruleset), check(r.ruleset, { backend: 'legacy' })];
    },
  },
  { name: 'iptables argv', seeds: argvSeeds, run: (t) => parseIptablesArgv(words(t), { family: 4, mode: 'strict' }) },
  { name: 'YAML/JSON manifests', seeds: manifestSeeds, run: (t) => [readManifests(t), readPod(t)] },
  { name: 'cluster snapshots', seeds: snapshotSeeds, run: (t) => readSnapshot([{ name: 'fuzz.yaml', text: t }]) },
  { name: 'cluster path (snapshot, namespaces, one connection)', seeds: snapshotSeeds, run: clusterPath },
  { name: 'proxy-init flags', seeds: () => ['--incoming-proxy-port 4143 --outgoing-proxy-port 4140 --proxy-uid 2102 --inbound-ports-to-ignore 4190,4191 --ipv6=false', '-p 4143 -o 4140 -u 2102 -r 80,443 --subnets-to-ignore 10.0.0.0/8'], run: (t) => parseProxyInitArgs(words(t)) },
  { name: 'istio-iptables flags', seeds: () => ['-p 15001 -z 15006 -u 1337 -m REDIRECT -i * -x "" -b * -d 15090,15021', '--redirect-dns --capture-all-dns -o 80,443 -q 22 --run-validation'], run: (t) => parseIstioIptablesArgs(words(t)) },
  {
    name: 'nftables text',
    seeds: nftSeeds,
    run: (t) => {
      const r = parseNftRuleset(t);
      return r.diagnostics.some((d) => d.severity === 'error') ? r : checkNftRuleset(r.ruleset);
    },
  },
  {
    name: 'connect (packet descriptions traced through a pod)',
    seeds: packetSeeds,
    run: (t) => (netns ??= new Netns({ rules: LINKERD_RULES, listen: [4140, 4143] })).trace(t),
  },
];
