/**
 * The shape of {@link MeshScenarioOptions}, checked where a scenario starts: a wrong value from
 * plain JavaScript is a `BAD_ARGUMENT` naming its field (`options.mtls`), not a value read the
 * wrong way.
 *
 * @module
 */
import { expectShape } from '../model/guard.js';

/** Throws `BAD_ARGUMENT` naming the field unless `options` is a {@link MeshScenarioOptions} object. */
export function expectMeshScenarioOptions(options: unknown): void {
  const yesNo = ['boolean', 'undefined'] as const;
  expectShape(options, {
    kind: 'object',
    fields: {
      mesh: { kind: 'string', oneOf: ['linkerd', 'istio'] },
      client: ['object', 'string', 'undefined'],
      server: ['object', 'string', 'undefined'],
      namespace: ['object', 'string', 'undefined'],
      dst: ['string', 'undefined'],
      cni: yesNo,
      nativeSidecars: yesNo,
      cniNotReady: { kind: ['boolean', 'string', 'undefined'], oneOf: ['client', 'server'] },
      phase: ['string', 'undefined'],
      container: ['string', 'undefined'],
      uid: ['integer', 'undefined'],
      gid: ['integer', 'undefined'],
      proto: { kind: ['string', 'undefined'], oneOf: ['tcp', 'udp'] },
      services: { kind: ['array', 'string', 'undefined'], items: 'object' },
      ambient: { kind: ['boolean', 'string', 'undefined'], oneOf: ['client', 'server'] },
      nativeNftables: yesNo,
      dnsCapture: yesNo,
      mark: ['integer', 'undefined'],
      kubelet: yesNo,
      hostRules: yesNo,
      mtls: { kind: ['string', 'undefined'], oneOf: ['permissive', 'strict'] },
      linkerdVersion: ['string', 'undefined'],
      istioVersion: ['string', 'undefined'],
    },
  }, 'options');
}
