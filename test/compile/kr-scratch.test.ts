import { it } from 'vitest';
import { compileKubeRouter } from '../../src/compile/netpol/kube-router.js';
import { policy, snapshot } from '../netpol/helpers.js';
it('x', () => {
  const s = snapshot(['x/a', 'x/b', 'y/a'], [
    policy('x', 'web', { matchLabels: { pod: 'a' } }, { ingress: [{ from: [{ podSelector: { matchLabels: { pod: 'b' } } }], ports: [{ port: 80 }, { port: 'serve-81-tcp' }] }, { from: [{ ipBlock: { cidr: '10.0.0.0/8', except: ['10.1.0.0/16'] } }] }] }),
    policy('x', 'eg', {}, { policyTypes: ['Egress'], egress: [{ to: [{ namespaceSelector: {} }], ports: [{ port: 53, protocol: 'UDP' }] }] }),
  ]);
  const r = compileKubeRouter(s, 'node-1');
  console.log(r.rules); console.log(r.ipsets);
});
