// What compiling kube-proxy from a snapshot costs, at 1,000 and 10,000 Services, in both modes:
// `format: 'restore'` (kube-proxy's own payload or transaction, the compiler alone) and the
// default `'save'` (the same text, then through our parser and printer into what iptables-save /
// nft list ruleset show). Median of a few runs after a warm-up, wall clock, one process.
//
//   npm run build && node --expose-gc bench/kube-proxy-compile.js [services…]
import { performance } from 'node:perf_hooks';
import { compileKubeProxy } from '../dist/index.js';
import { rng } from './rng.js';

const ip = (n) => `${(n >>> 24) & 255}.${(n >>> 16) & 255}.${(n >>> 8) & 255}.${n & 255}`;

/** A snapshot of `count` Services (1–3 endpoints, 3% without any, 10% NodePort, 5% with an external IP) on two nodes. */
export function benchSnapshot(count, seed = 1) {
  const r = rng(seed);
  const services = [];
  const endpointSlices = [];
  let pod = 1;
  let nodePort = 30000;
  for (let i = 0; i < count; i++) {
    const ns = `ns${i % 97}`;
    const name = `svc${i}`;
    const port = r() < 0.7 ? 80 : [443, 8080, 9090, 53][Math.floor(r() * 4)];
    const np = r() < 0.1;
    services.push({
      kind: 'Service',
      metadata: { name, namespace: ns },
      spec: {
        type: np ? 'NodePort' : 'ClusterIP',
        clusterIP: ip(((10 << 24) | (96 << 16)) + 10 + i),
        ports: [{ name: 'p', port, protocol: 'TCP', ...(np ? { nodePort: nodePort++ } : {}) }],
        ...(r() < 0.05 ? { externalIPs: [ip(((192 << 24) | (168 << 16) | (99 << 8)) + (i % 250))] } : {}),
      },
    });
    const n = r() < 0.03 ? 0 : 1 + Math.floor(r() * 3);
    const endpoints = [];
    for (let k = 0; k < n; k++) endpoints.push({ addresses: [ip(((10 << 24) | (244 << 16)) + pod++)], nodeName: r() < 0.5 ? 'node-a' : 'node-b' });
    endpointSlices.push({ kind: 'EndpointSlice', metadata: { name: `${name}-1`, namespace: ns, labels: { 'kubernetes.io/service-name': name } }, addressType: 'IPv4', endpoints, ports: [{ name: 'p', port: 8080, protocol: 'TCP' }] });
  }
  const nodes = ['node-a', 'node-b'].map((n, i) => ({ kind: 'Node', metadata: { name: n }, spec: { podCIDRs: [`10.244.${i}.0/24`] }, status: { addresses: [{ type: 'InternalIP', address: `192.168.0.${i + 2}` }] } }));
  return { namespaces: [], nodes, pods: [], services, endpointSlices, networkPolicies: [], warnings: [] };
}

function median(xs) {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)];
}

function time(fn, runs) {
  fn(); // warm-up
  const ms = [];
  let out;
  for (let i = 0; i < runs; i++) {
    globalThis.gc?.();
    const t = performance.now();
    out = fn();
    ms.push(performance.now() - t);
  }
  return { ms: median(ms), out };
}

export function kubeProxyCompileBench(sizes = [1000, 10000]) {
  const rows = [];
  for (const count of sizes) {
    const snap = benchSnapshot(count);
    const runs = count >= 10000 ? 3 : 7;
    for (const mode of ['iptables', 'nftables']) {
      for (const format of ['restore', 'save']) {
        const opts = { mode, format, clusterCIDR: '10.244.0.0/16' };
        const { ms, out } = time(() => compileKubeProxy(snap, 'node-a', opts), runs);
        const lines = out.split('\n').length;
        rows.push({ services: count, mode, format, ms, usPerService: (ms * 1000) / count, lines, bytes: Buffer.byteLength(out) });
      }
    }
  }
  return rows;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const sizes = process.argv.slice(2).map(Number).filter((n) => n > 0);
  const rows = kubeProxyCompileBench(sizes.length > 0 ? sizes : undefined);
  console.log('services  mode      format    ms (median)  µs/service  lines    bytes');
  for (const r of rows) {
    console.log(`${String(r.services).padStart(8)}  ${r.mode.padEnd(8)}  ${r.format.padEnd(8)}  ${r.ms.toFixed(1).padStart(11)}  ${r.usPerService.toFixed(1).padStart(10)}  ${String(r.lines).padStart(6)}  ${String(r.bytes).padStart(8)}`);
  }
  const byKey = Object.fromEntries(rows.map((r) => [`${r.services}/${r.mode}/${r.format}`, r.ms]));
  for (const mode of ['iptables', 'nftables']) {
    for (const format of ['restore', 'save']) {
      const a = byKey[`1000/${mode}/${format}`];
      const b = byKey[`10000/${mode}/${format}`];
      if (a !== undefined && b !== undefined) console.log(`${mode} ${format}: 10,000 Services cost ${(b / a).toFixed(1)}× 1,000`);
    }
  }
}
