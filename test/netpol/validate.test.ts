// Validation as the API server does it (pkg/apis/networking/validation/validation.go): each case
// is a policy the API server refuses, with the field path and message it reports; and the
// evaluator refuses such a policy (or leaves it out, with `invalid: 'skip'`), never silently.
import { describe, expect, it } from 'vitest';
import { NetfilterSimError } from '../../src/model/errors.js';
import { NetworkPolicyEvaluator, defaultNetworkPolicy, validateNetworkPolicy } from '../../src/netpol/index.js';
import { policy, snapshot } from './helpers.js';

const spec = (s: object): unknown => ({ kind: 'NetworkPolicy', metadata: { name: 'p', namespace: 'x' }, spec: { podSelector: {}, ...s } });
const messages = (p: unknown, strict = true): string[] => validateNetworkPolicy(p, { strictCidr: strict }).map((e) => e.message);

describe('validateNetworkPolicy: what the API server refuses, with its field path', () => {
  it('accepts a well-formed policy (the concepts page example)', () => {
    expect(messages(spec({
      policyTypes: ['Ingress', 'Egress'],
      ingress: [{ from: [{ ipBlock: { cidr: '172.17.0.0/16', except: ['172.17.1.0/24'] } }, { namespaceSelector: { matchLabels: { project: 'myproject' } } }, { podSelector: { matchLabels: { role: 'frontend' } } }], ports: [{ protocol: 'TCP', port: 6379 }] }],
      egress: [{ to: [{ ipBlock: { cidr: '10.0.0.0/24' } }], ports: [{ protocol: 'TCP', port: 5978 }] }],
    }))).toEqual([]);
  });

  it.each([
    ['a bad selector operator', { podSelector: { matchExpressions: [{ key: 'app', operator: 'Equals', values: ['a'] }] } }, 'spec.podSelector.matchExpressions[0].operator: Invalid value: "Equals": not a valid selector operator'],
    ['values with Exists', { podSelector: { matchExpressions: [{ key: 'app', operator: 'Exists', values: ['a'] }] } }, "spec.podSelector.matchExpressions[0].values: Forbidden: may not be specified when `operator` is 'Exists' or 'DoesNotExist'"],
    ['In without values', { ingress: [{ from: [{ podSelector: { matchExpressions: [{ key: 'app', operator: 'In' }] } }] }] }, "spec.ingress[0].from[0].podSelector.matchExpressions[0].values: Required value: must be specified when `operator` is 'In' or 'NotIn'"],
    ['endPort without port', { ingress: [{ ports: [{ endPort: 90 }] }] }, 'spec.ingress[0].ports[0].endPort: Invalid value: 90: may not be specified when `port` is not specified'],
    ['endPort below port', { egress: [{ ports: [{ port: 90, endPort: 80 }] }] }, 'spec.egress[0].ports[0].endPort: Invalid value: 80: must be greater than or equal to `port`'],
    ['endPort with a named port', { ingress: [{ ports: [{ port: 'http', endPort: 90 }] }] }, 'spec.ingress[0].ports[0].endPort: Invalid value: 90: may not be specified when `port` is non-numeric'],
    ['port 0', { ingress: [{ ports: [{ port: 0 }] }] }, 'spec.ingress[0].ports[0].port: Invalid value: 0: must be between 1 and 65535, inclusive'],
    ['an unsupported protocol', { ingress: [{ ports: [{ protocol: 'ICMP' }] }] }, 'spec.ingress[0].ports[0].protocol: Unsupported value: "ICMP": supported values: "TCP", "UDP", "SCTP"'],
    ['a port name that is not an IANA service name', { ingress: [{ ports: [{ port: 'Web_Port' }] }] }, 'spec.ingress[0].ports[0].port: Invalid value: "Web_Port": must contain only alpha-numeric characters (a-z, 0-9), and hyphens (-)'],
    ['a malformed CIDR', { ingress: [{ from: [{ ipBlock: { cidr: '10.0.0.0/33' } }] }] }, 'spec.ingress[0].from[0].ipBlock.cidr: Invalid value: "10.0.0.0/33": must be a valid CIDR value, (e.g. 10.9.8.0/24 or 2001:db8::/64)'],
    ['an except outside its ipBlock', { ingress: [{ from: [{ ipBlock: { cidr: '10.0.0.0/16', except: ['10.1.0.0/24'] } }] }] }, 'spec.ingress[0].from[0].ipBlock.except[0]: Invalid value: "10.1.0.0/24": must be a strict subset of `cidr`'],
    ['an except equal to its ipBlock', { egress: [{ to: [{ ipBlock: { cidr: '10.0.0.0/16', except: ['10.0.0.0/16'] } }] }] }, 'spec.egress[0].to[0].ipBlock.except[0]: Invalid value: "10.0.0.0/16": must be a strict subset of `cidr`'],
    ['an except of the other family', { ingress: [{ from: [{ ipBlock: { cidr: '10.0.0.0/8', except: ['fd00::/64'] } }] }] }, 'spec.ingress[0].from[0].ipBlock.except[0]: Invalid value: "fd00::/64": must be a strict subset of `cidr`'],
    ['ipBlock with another peer', { ingress: [{ from: [{ ipBlock: { cidr: '10.0.0.0/8' }, podSelector: {} }] }] }, 'spec.ingress[0].from[0]: Forbidden: may not specify both ipBlock and another peer'],
    ['an empty peer', { egress: [{ to: [{}] }] }, 'spec.egress[0].to[0]: Required value: must specify a peer'],
    ['an ipBlock without cidr', { egress: [{ to: [{ ipBlock: { except: [] } }] }] }, 'spec.egress[0].to[0].ipBlock.cidr: Required value'],
    ['a policy type that does not exist', { policyTypes: ['Ingress', 'Both'] }, 'spec.policyTypes[1]: Unsupported value: "Both": supported values: "Ingress", "Egress"'],
    ['three policy types', { policyTypes: ['Ingress', 'Egress', 'Ingress'] }, 'spec.policyTypes: Invalid value: ["Ingress","Egress","Ingress"]: may not specify more than two policyTypes'],
    ['a label value that is not one', { podSelector: { matchLabels: { app: 'a b' } } }, "spec.podSelector.matchLabels: Invalid value: \"a b\": a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character"],
    ['a port that is neither number nor name', { ingress: [{ ports: [{ port: true }] }] }, 'spec.ingress[0].ports[0].port: Invalid value: true: must be an integer or a port name'],
    ['rules that are not a list', { ingress: { from: [] } }, 'spec.ingress: Invalid value: {"from":[]}: must be a list of rules'],
  ])('%s', (_name, s, message) => {
    expect(messages(spec(s))).toContain(message);
  });

  it('metadata: a name and a namespace are required; the name is a DNS subdomain', () => {
    expect(messages({ kind: 'NetworkPolicy', metadata: { name: 'Bad_Name' }, spec: {} })).toEqual([
      'metadata.name: Invalid value: "Bad_Name": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, \'-\' or \'.\', and must start and end with an alphanumeric character',
      'metadata.namespace: Required value',
    ]);
    expect(messages(null)).toEqual(['<root>: Invalid value: null: must be a NetworkPolicy object']);
    expect(messages({ kind: 'NetworkPolicy', metadata: { name: 'p', namespace: 'x' } })).toEqual(['spec: Required value']);
  });

  it('CIDRs: the strict reading (1.36 on) refuses host bits, leading zeros and IPv4-mapped addresses; the sloppy one (1.35 and before) does not', () => {
    for (const [cidr, why] of [
      ['10.0.0.1/24', 'must not have bits set beyond the prefix length'],
      ['010.0.0.0/8', 'must not have leading 0s in IP or prefix length'],
      ['10.0.0.0/08', 'must not have leading 0s in IP or prefix length'],
      ['::ffff:10.0.0.0/104', 'must not have an IPv4-mapped IPv6 address'],
    ] as const) {
      const p = spec({ ingress: [{ from: [{ ipBlock: { cidr } }] }] });
      expect(messages(p)).toEqual([`spec.ingress[0].from[0].ipBlock.cidr: Invalid value: "${cidr}": ${why}`]);
      expect(messages(p, false)).toEqual([]);
    }
  });

  it('reports every error, each naming the policy', () => {
    const errors = validateNetworkPolicy(spec({ ingress: [{ ports: [{ port: 0 }, { endPort: 1 }] }] }));
    expect(errors.map((e) => [e.policy, e.field, e.type])).toEqual([
      ['x/p', 'spec.ingress[0].ports[0].port', 'Invalid'],
      ['x/p', 'spec.ingress[0].ports[1].endPort', 'Invalid'],
    ]);
  });
});

describe('defaults the API server applies', () => {
  it('policyTypes: Ingress, plus Egress when egress has rules; protocol TCP', () => {
    const d = (s: object) => defaultNetworkPolicy(spec(s) as never);
    expect([d({}).ingress, d({}).egress]).toEqual([true, false]);
    expect([d({ egress: [] }).egress, d({ egress: [{}] }).egress]).toEqual([false, true]);
    expect([d({ policyTypes: [], egress: [{}] }).ingress, d({ policyTypes: [], egress: [{}] }).egress]).toEqual([true, true]);
    expect([d({ policyTypes: ['Egress'] }).ingress, d({ policyTypes: ['Egress'] }).egress]).toEqual([false, true]);
    expect(d({ ingress: [{ ports: [{ port: 80 }] }] }).ingressRules[0]!.ports).toEqual([{ protocol: 'TCP', port: 80 }]);
    expect(d({ ingress: [{ from: [], ports: [] }] }).ingressRules[0]).toEqual({ index: 0, peers: null, ports: null });
  });
});

describe('the evaluator and invalid policies', () => {
  const bad = policy('x', 'bad', {}, { ingress: [{ ports: [{ port: 90, endPort: 80 }] }] });

  it('throws INVALID_NETWORK_POLICY naming the policy and the field', () => {
    try {
      new NetworkPolicyEvaluator(snapshot(['x/a'], [bad]));
      expect.unreachable();
    } catch (e) {
      expect(e).toBeInstanceOf(NetfilterSimError);
      expect((e as NetfilterSimError).code).toBe('INVALID_NETWORK_POLICY');
      expect((e as NetfilterSimError).message).toBe('NetworkPolicy x/bad is invalid: spec.ingress[0].ports[0].endPort: Invalid value: 80: must be greater than or equal to `port`');
    }
  });

  it('with invalid: skip, leaves it out as the API server would have, and says so', () => {
    const ev = new NetworkPolicyEvaluator(snapshot(['x/a', 'y/a'], [bad]), { invalid: 'skip' });
    expect(ev.evaluate({ from: 'y/a', to: 'x/a', port: 85 }).ingress.reason).toBe('not-isolated');
    expect(ev.warnings).toEqual(['NetworkPolicy x/bad is left out: the API server would refuse it (spec.ingress[0].ports[0].endPort: Invalid value: 80: must be greater than or equal to `port`)']);
  });
});
