// A snapshot is user data: objects of any shape reach the evaluator and the compilers. They
// answer with a typed error or a warning naming the object, never a crash or a silent allow.
import { fc, test } from '@fast-check/vitest';
import { describe, expect, it } from 'vitest';
import { compileNetworkPolicy } from '../../src/compile/netpol/index.js';
import { NetfilterSimError } from '../../src/model/errors.js';
import { NetworkPolicyEvaluator, validateNetworkPolicy } from '../../src/netpol/index.js';
import { pod, policy, snapshot } from './helpers.js';

/** Runs f; a NetfilterSimError is an answer, anything else thrown is a crash. */
function answer(f: () => unknown): 'ok' | string {
  try {
    f();
    return 'ok';
  } catch (e) {
    if (e instanceof NetfilterSimError) return e.code;
    throw e;
  }
}

/** A well-formed snapshot with one object replaced by anything. */
const hostile = fc.record({
  where: fc.constantFrom('pods', 'namespaces', 'networkPolicies', 'nodes'),
  value: fc.oneof(
    fc.anything(),
    fc.record({ metadata: fc.anything(), spec: fc.anything(), status: fc.anything() }),
    fc.record({ metadata: fc.constant({ name: 'h', namespace: 'x' }), spec: fc.anything(), status: fc.anything() }),
    fc.record({ metadata: fc.constant({ name: 'h', namespace: 'x' }), spec: fc.record({ containers: fc.anything(), nodeName: fc.anything(), podSelector: fc.anything(), ingress: fc.anything() }), status: fc.record({ podIPs: fc.anything(), podIP: fc.anything() }) }),
  ),
});

describe('hostile snapshots', () => {
  test.prop([hostile], { numRuns: 400 })('the evaluator and both compilers answer with a typed error or warnings, never a crash', ({ where, value }) => {
    const base = snapshot(['x/a', 'x/b'], [policy('x', 'p', {}, { ingress: [] })]);
    const s = { ...base, [where]: [...(base[where] as unknown[]), value] } as typeof base;
    // A policy the API server accepts may allow x/a → x/b (seed 1510354143 found one: ingress: [{}]).
    const validPolicy = where === 'networkPolicies' && validateNetworkPolicy(value).length === 0;
    const r = answer(() => {
      const ev = new NetworkPolicyEvaluator(s);
      // Otherwise the policy that was read still isolates x/b: never a silent allow.
      if (!validPolicy) expect(ev.evaluate({ from: 'x/a', to: 'x/b', port: 80 }).allowed).toBe(false);
    });
    expect(['ok', 'INVALID_NETWORK_POLICY']).toContain(r);
    expect(['ok', 'INVALID_NETWORK_POLICY']).toContain(answer(() => compileNetworkPolicy(s, 'node-1', { implementation: 'kube-router' })));
    expect(['ok', 'INVALID_NETWORK_POLICY']).toContain(answer(() => compileNetworkPolicy(s, 'node-1', { implementation: 'kube-network-policies' })));
    if (where === 'networkPolicies') expect(() => validateNetworkPolicy(value)).not.toThrow();
  });

  it('names what it left out', () => {
    const s = snapshot([pod('x/a', 0), { ...pod('x/bad', 1), status: { podIPs: '10.244.1.3' } } as never]);
    expect(new NetworkPolicyEvaluator(s).warnings).toEqual(['pod x/bad has status.podIPs that are not a list of { ip }: left out']);
    const t = { ...snapshot(['x/a']), namespaces: [{ kind: 'Namespace', metadata: {} } as never] };
    expect(new NetworkPolicyEvaluator(t).warnings[0]).toBe('namespace #0 has no metadata.name: left out');
  });

  it('a snapshot that is not an object of lists is a BAD_ARGUMENT', () => {
    expect(answer(() => new NetworkPolicyEvaluator(null as never))).toBe('BAD_ARGUMENT');
    expect(answer(() => new NetworkPolicyEvaluator({ ...snapshot(['x/a']), pods: {} } as never))).toBe('BAD_ARGUMENT');
  });
});
