// What a connection on the cluster path costs with each NetworkPolicy enforcer (issue "NetworkPolicy
// on the cluster path", Measure): `--netpol none`, `reference` (the evaluator as a verdict at the
// pod's veth), `kube-router` (its compiled iptables rules and ipsets in each node) and
// `kube-network-policies` (its nft table, the queued first packet answered by the reference
// evaluator), on one cluster: 3 nodes, 30 pods in 3 namespaces, 23 policies (ingress from pods and
// namespaces of some labels on numbered and named ports, from an ipBlock with an except; egress to
// some namespaces; a default deny), kube-proxy off.
//
// Each connection is pod → pod (a TCP handshake; most cross two nodes), from a fixed mix of
// 600 pairs and ports, split by the reference's verdict into the allowed and the blocked ones
// (`none` makes every one of them: its "blocked" figure is the same connections delivered). Per
// set and enforcer: a warm-up round, then five rounds (the enforcers in turn, in reverse order,
// and so on), conntrack flushed before each; the best round's µs of the process's CPU time (user +
// system) per connection, untraced and traced (CPU time: on a shared machine, wall time includes
// waiting for a core). The
// enforcers must agree on every connection but kube-router's named departures (none in this mix):
// the run stops if they do not.
//
//   npm run build && node --expose-gc bench/netpol-enforcers.js [--json]
import { Cluster } from '../dist/index.js';

const JSON_OUT = process.argv.includes('--json');
const say = (line) => (JSON_OUT ? process.stderr : process.stdout).write(`${line}\n`);

const NS = ['shop', 'db', 'ops'];
const APPS = ['web', 'api', 'cache', 'worker', 'redis'];
const NODES = 3;
const PODS = 30;

function snapshot() {
  const items = [];
  for (const ns of NS) items.push({ kind: 'Namespace', metadata: { name: ns, labels: { team: ns === 'ops' ? 'ops' : 'app' } } });
  for (let i = 0; i < NODES; i++) {
    items.push({ kind: 'Node', metadata: { name: `node-${i}` }, spec: { podCIDR: `10.244.${i}.0/24` }, status: { addresses: [{ type: 'InternalIP', address: `192.168.0.${10 + i}` }] } });
  }
  for (let j = 0; j < PODS; j++) {
    const node = j % NODES;
    const ip = `10.244.${node}.${10 + Math.floor(j / NODES)}`;
    items.push({
      kind: 'Pod',
      metadata: { name: `p${j}`, namespace: NS[j % 3], labels: { app: APPS[j % 5], tier: j % 2 === 0 ? 'front' : 'back' } },
      spec: { nodeName: `node-${node}`, containers: [{ name: 'c', ports: [{ name: 'http', containerPort: 8080 }, { name: 'metrics', containerPort: 9090 }] }] },
      status: { phase: 'Running', podIP: ip, podIPs: [{ ip }] },
    });
  }
  const policies = [];
  for (let k = 0; k < 18; k++) {
    const ns = NS[k % 3];
    const app = APPS[k % 5];
    const from = APPS[(k + 2) % 5];
    policies.push({
      kind: 'NetworkPolicy', metadata: { name: `allow-${k}`, namespace: ns },
      spec: {
        podSelector: { matchLabels: { app } },
        ingress: [
          { from: [{ podSelector: { matchLabels: { app: from } } }, { namespaceSelector: { matchLabels: { team: 'ops' } } }], ports: [{ port: k % 2 === 0 ? 8080 : 'http' }] },
          { from: [{ ipBlock: { cidr: '10.244.0.0/16', except: [`10.244.${k % 3}.0/28`] } }], ports: [{ port: 9090 }] },
        ],
      },
    });
  }
  for (const ns of NS) {
    // Egress only (a policy of both types selecting both ends is one of kube-router's departures).
    policies.push({ kind: 'NetworkPolicy', metadata: { name: 'egress-back', namespace: ns }, spec: { podSelector: { matchLabels: { tier: 'back' } }, policyTypes: ['Egress'], egress: [{ to: [{ namespaceSelector: { matchLabels: { team: 'app' } } }], ports: [{ port: 8080 }] }, { to: [{ podSelector: {} }] }] } });
  }
  policies.push({ kind: 'NetworkPolicy', metadata: { name: 'deny-all', namespace: 'db' }, spec: { podSelector: {}, policyTypes: ['Ingress'] } });
  policies.push({ kind: 'NetworkPolicy', metadata: { name: 'ops-in', namespace: 'db' }, spec: { podSelector: { matchLabels: { tier: 'back' } }, ingress: [{ from: [{ namespaceSelector: { matchLabels: { team: 'ops' } } }] }] } });
  items.push(...policies);
  return JSON.stringify({ kind: 'List', items });
}

/** The mix: 600 (from, to, port) with a seeded generator. */
function mix() {
  let a = 29;
  const next = () => {
    a = (Math.imul(a, 1103515245) + 12345) >>> 0;
    return a >>> 8;
  };
  const out = [];
  while (out.length < 600) {
    const f = next() % PODS;
    const t = next() % PODS;
    if (f === t) continue;
    const port = next() % 3 === 0 ? 9090 : 8080;
    out.push({ from: `${NS[f % 3]}/p${f}`, to: `${NS[t % 3]}/p${t}`, port });
  }
  return out;
}

const ENFORCERS = ['none', 'reference', 'kube-router', 'kube-network-policies'];
const text = snapshot();
const probes = mix();
const clusters = new Map();
for (const netpol of ENFORCERS) {
  const t0 = performance.now();
  clusters.set(netpol, new Cluster({ snapshot: text, kubeProxy: 'none', netpol }));
  say(`built ${netpol}: ${(performance.now() - t0).toFixed(0)} ms`);
}

// The enforcers agree (kube-router's departures do not arise in this mix: no named port shared by
// pods of different port numbers, no two ipBlocks in one rule, no policy of both types).
const verdicts = new Map();
for (const netpol of ENFORCERS) {
  const c = clusters.get(netpol);
  verdicts.set(netpol, probes.map((p) => c.connect(p, { trace: false }).outcome === 'local'));
}
const ref = verdicts.get('reference');
for (const netpol of ['kube-router', 'kube-network-policies']) {
  const v = verdicts.get(netpol);
  const diff = v.findIndex((x, i) => x !== ref[i]);
  if (diff >= 0) throw new Error(`${netpol} disagrees with the reference on ${JSON.stringify(probes[diff])}`);
}
const blocked = ref.filter((x) => !x).length;
say(`mix: ${probes.length} connections, ${blocked} blocked by policy (reference); every enforcer agrees`);

const allowedSet = probes.filter((_, i) => ref[i]);
const blockedSet = probes.filter((_, i) => !ref[i]);

function round(netpol, trace, set) {
  const c = clusters.get(netpol);
  c.flushConntrack();
  const t0 = process.cpuUsage();
  for (const p of set) c.connect(p, { trace });
  const t = process.cpuUsage(t0);
  return (t.user + t.system) / set.length;
}

const results = {};
for (const trace of [false, true]) {
  for (const [what, set] of [['allowed', allowedSet], ['blocked', blockedSet]]) {
    for (const netpol of ENFORCERS) round(netpol, trace, set); // warm-up
    const best = Object.fromEntries(ENFORCERS.map((n) => [n, Infinity]));
    for (const order of [ENFORCERS, [...ENFORCERS].reverse(), ENFORCERS, [...ENFORCERS].reverse(), ENFORCERS]) {
      for (const netpol of order) {
        globalThis.gc?.();
        best[netpol] = Math.min(best[netpol], round(netpol, trace, set));
      }
    }
    for (const netpol of ENFORCERS) {
      results[`${what} ${netpol}${trace ? ' traced' : ''}`] = best[netpol];
      say(`${trace ? 'traced  ' : 'untraced'} ${what} ${netpol.padEnd(22)} ${best[netpol].toFixed(1).padStart(7)} µs/connection  (${(best[netpol] / best.none).toFixed(2)}× none)`);
    }
  }
}
if (JSON_OUT) process.stdout.write(`${JSON.stringify({ connections: probes.length, blocked: blockedSet.length, usPerConnection: results })}\n`);
