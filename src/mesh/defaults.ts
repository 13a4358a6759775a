/**
 * The built-in pod pairs: a client and a server per mesh, written as a person writes them (with
 * the inject annotation, not yet injected), used when `mesh` is run without `--client`/`--server`.
 *
 * @module
 */
import { podFromObject, type Pod } from '../compile/pod.js';
import type { MeshName } from './types.js';
import { expectArgument, expectOneOf } from '../model/guard.js';

/**
 * The built-in pods' manifests, as objects (what `kubectl get pod -o json` would show before
 * injection, with `status.podIPs` filled in): client `10.0.0.2`, server `10.0.1.5`, each with one
 * application container running as UID 1000 on port 8080.
 *
 * @example
 * ```ts
 * DEFAULT_POD_MANIFESTS.linkerd.client.metadata.annotations; // { 'linkerd.io/inject': 'enabled' }
 * ```
 */
export const DEFAULT_POD_MANIFESTS = {
  linkerd: {
    client: manifest('client', 'web', '10.0.0.2', { 'linkerd.io/inject': 'enabled' }),
    server: manifest('server', 'api', '10.0.1.5', { 'linkerd.io/inject': 'enabled' }),
  },
  istio: {
    client: manifest('client', 'web', '10.0.0.2', { 'sidecar.istio.io/inject': 'true' }),
    server: manifest('server', 'api', '10.0.1.5', { 'sidecar.istio.io/inject': 'true' }),
  },
} as const;

function manifest(name: string, app: string, ip: string, annotations: Record<string, string>) {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, namespace: 'default', annotations },
    spec: {
      containers: [
        {
          name: app,
          image: `example.com/${app}:1.0`,
          ports: [{ containerPort: 8080, name: 'http', protocol: 'TCP' }],
          securityContext: { runAsUser: 1000, runAsGroup: 1000 },
        },
      ],
    },
    status: { podIP: ip, podIPs: [{ ip }] },
  };
}

/**
 * The built-in client and server pods of a mesh, as {@link Pod}s.
 *
 * @example
 * ```ts
 * const { client, server } = defaultPods('linkerd');
 * server.podIPs; // ['10.0.1.5']
 * ```
 */
export function defaultPods(mesh: MeshName): { client: Pod; server: Pod } {
  expectArgument(mesh, 'string', 'mesh');
  expectOneOf(mesh, ['linkerd', 'istio'], 'mesh');
  const m = DEFAULT_POD_MANIFESTS[mesh];
  return { client: podFromObject(m.client), server: podFromObject(m.server) };
}
