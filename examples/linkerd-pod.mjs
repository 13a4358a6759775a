// A Linkerd pod with the injector's defaults: the linkerd-init arguments the injector writes, the
// rules proxy-init writes for them (as iptables-save prints them), and where four connections end
// in that pod: the app's outbound call, the proxy's own call, an inbound call, and an inbound call
// to the proxy's admin port (which the rules skip).
// Run with `npm run build && node examples/linkerd-pod.mjs`.
import { Netns, compileLinkerd, injectProxyInitArgs, linkerdRulesets, parseProxyInitArgs, renderLinkerd } from 'netfilter-sim';

// 1. What the injector writes into the linkerd-init container (no annotations: the defaults).
const { args } = injectProxyInitArgs({});
console.log('linkerd-init', args.join(' '));

// 2. What proxy-init does with those arguments.
const parsed = parseProxyInitArgs(args);
if (!parsed.ok) throw new Error(parsed.error);
const result = compileLinkerd(parsed.config);
process.stdout.write(renderLinkerd(result, 'save'));

// 3. The pod: eth0 10.0.0.2/24, the proxy listening on 4140 (outbound), 4143 (inbound) and
//    4191 (admin), the application on 8080.
const [{ ruleset }] = linkerdRulesets(result);
const pod = new Netns({ rules: ruleset, listen: [4140, 4143, 4191, 8080] });
const cases = [
  ['app (uid 1000) → 10.96.0.10:80', { from: 'local', uid: 1000, dst: '10.96.0.10:80' }],
  ['proxy (uid 2102) → 10.1.0.7:8080', { from: 'local', uid: 2102, dst: '10.1.0.7:8080' }],
  ['10.1.0.7 → pod:8080', { from: 'remote', src: '10.1.0.7', dst: '10.0.0.2:8080' }],
  ['10.1.0.7 → pod:4191 (admin)', { from: 'remote', src: '10.1.0.7', dst: '10.0.0.2:4191' }],
];
for (const [name, spec] of cases) {
  const r = pod.connect(spec);
  const decided = r.steps.filter((s) => s.event === 'rule' && s.packet === 'SYN').at(-1);
  const why = decided ? `${decided.chain}:${decided.rule} -j ${decided.target}` : 'no rule';
  console.log(`${name.padEnd(34)} ${r.outcome.padEnd(7)} ${`${r.address}:${r.port}`.padEnd(16)} SO_ORIGINAL_DST ${String(r.originalDestination).padEnd(14)} ${why}`);
}
