// Verdicts and diagnoses from code: the client and server pods of examples/mesh/, as written,
// under a few installs, and a running client whose proxy UID does not match its rules.
// Run with `npm run build && node examples/mesh-verdict.mjs`.
import { readFileSync } from 'node:fs';
import { parseServices, readPod, simulateMesh } from 'netfilter-sim';

const pod = (name) => readPod(readFileSync(new URL(`./mesh/${name}`, import.meta.url), 'utf8'));
const web = pod('web.yaml');
const api = pod('api.yaml');

const scenarios = [
  ['defaults', { client: web, server: api }],
  ['init container, linkerd-cni, no native sidecars', { client: web, server: api, cni: true, nativeSidecars: false, phase: 'init:fetch-config' }],
  ['init container, linkerd-init, no native sidecars', { client: web, server: api, nativeSidecars: false, phase: 'init:fetch-config' }],
  ['server skips inbound port 8080', { client: web, server: pod('api-skip-inbound.yaml') }],
  ['proxy runs as 2103, rules exempt 2102', { client: pod('web-running.yaml'), server: api }],
  ['through a Service', { client: web, server: api, dst: '10.96.0.10:80', services: parseServices('10.96.0.10:80=10.0.1.5:8080') }],
];
for (const [name, options] of scenarios) {
  const r = simulateMesh({ mesh: 'linkerd', ...options });
  console.log(`${name}: ${r.verdict} (${r.hops.length} hops)`);
  for (const d of r.diagnosis) console.log(`  - ${d.length > 110 ? `${d.slice(0, 107)}...` : d}`);
}
