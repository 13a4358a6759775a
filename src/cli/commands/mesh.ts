/**
 * `netfilter-sim mesh linkerd|istio`: a connection between two meshed pods, end to end, with a
 * verdict, the hops and a diagnosis.
 *
 * @module
 */
import { parseArgs } from 'node:util';
import { NetfilterSimError } from '../../model/errors.js';
import { readNamespace, readPod, type Namespace, type Pod } from '../../compile/pod.js';
import { parseServices } from '../../mesh/address.js';
import { MESH_FORMATS, renderMesh, type MeshFormat } from '../../mesh/render.js';
import { simulateMesh } from '../../mesh/simulate.js';
import { renderMeshAllPorts, simulateMeshAllPorts } from '../../mesh/all-ports.js';
import { simulateMeshOnCluster } from '../../mesh/cluster.js';
import { readSnapshot } from '../../cluster/snapshot.js';
import { snapshotSources } from './cluster.js';
import type { MeshName, MeshScenarioOptions, MeshService } from '../../mesh/types.js';
import { EXIT_OK, FileReadError, SourceError, UsageError, type CliIO, reportCliError } from '../io.js';
import { type Values, str } from '../values.js';

/** `netfilter-sim mesh --help`. @internal */
export const MESH_HELP = `Usage: netfilter-sim mesh linkerd|istio [--client POD] [--server POD] [--dst ADDR:PORT] [options]

Simulates a connection between two pods of a service mesh, end to end: from the client's
application (or one of its init containers, at its point of the pod's start-up) through the
client's iptables rules and proxy, across the network, through the server's rules and proxy, to
the server's application. Prints every hop with the rule that moved it, a verdict and, unless
the verdict is "meshed", a diagnosis: the rule or missing rule, the setting behind it and the
usual fix.

POD is a Kubernetes Pod manifest (YAML or JSON; a Deployment's pod template works too), as it
runs (already injected: the rules come from its linkerd-init / istio-init arguments, or with
--cni from its annotations) or as written (with linkerd.io/inject: enabled or
sidecar.istio.io/inject: "true", injected here with the mesh's defaults). Addresses come from
status.podIPs. Without --client/--server, built-in pods are used: client 10.0.0.2 (container web,
uid 1000) and server 10.0.1.5 (container api, port 8080), both written with the inject annotation.

Pods and install:
  --client FILE|-            the client pod
  --server FILE|-            the server pod
  --namespace FILE           a Namespace whose annotations (and injection labels) apply to both
  --cni                      the mesh's CNI plugin writes the rules (linkerd-cni, istio-cni)
  --native-sidecars on|off   proxies as native sidecars (default: on: Linkerd's default, and what
                             Istio's ENABLE_NATIVE_SIDECARS=auto picks on kubelet 1.33+ nodes)
  --cni-not-ready            the CNI plugin was not ready when the pods started (no rules)

Istio ambient (a pod is ambient when it or its namespace has the label
istio.io/dataplane-mode: ambient; ztunnel's in-pod sockets 15001, 15006, 15008 and 15053 are its
proxy, its own sockets carry mark 0x539):
  --ambient [client|server]  run the pods (or one of them) in ambient mode whatever their labels
                             say (not pods with a sidecar or on the host network)
  --native-nftables          istio-cni's nftables backend for the in-pod rules (Istio 1.28+)
  --dns-capture on|off       the node's ambient.dnsCapture (default on); a pod's
                             ambient.istio.io/dns-capture annotation overrides it
  --kubelet                  the connection is the kubelet's health probe from the node to the
                             server (to --dst, default the server's first port)
  --host-rules on|off        the node has istio-cni's host rule that SNATs kubelet probes to
                             169.254.7.127 (default on)
  --mtls permissive|strict   the server's PeerAuthentication mode (default permissive): strict
                             refuses plain text at ztunnel's 15006 and Envoy's 15006
  --istio-version V          the release (1.21, 1.22, 1.31), which decides how a sidecar sends
                             to an ambient pod: HBONE to its 15008 for a Service's endpoints from
                             1.22 (PILOT_ENABLE_SENDING_HBONE), plain text to its 15006 before and
                             to a bare pod address. Default: the newest release's behaviour

The connection:
  --dst ADDR:PORT            destination ([IPv6]:PORT); default: the server's first address and port
  --phase app|init:NAME      connect from the application (default) or from the client's init
                             container NAME, at its point of the start-up (the server is running)
  --container NAME           the connecting container (default: the first application container)
  --uid N [--gid N]          run the connecting process as this UID (and GID)
  --so-mark N                SO_MARK on the connecting process's socket (0x539 is ztunnel's)
  --proto tcp|udp            default tcp
  --service VIP:PORT=ADDR:PORT,…   ClusterIP Services (repeat a VIP to add endpoints); the
                             outbound proxy resolves them, without a proxy the node's DNAT does

Linkerd:
  --linkerd-version V        the release (2.17, 2.19, edge-25.2.3), which decides the port a
                             meshed connection travels to: opaque ports to the inbound port 4143
                             from 2.10; every meshed pod-to-pod connection from 2.18 (edge-25.2.3,
                             the destination controller's forceOpaqueTransport). Default: 2.17's
                             behaviour (opaque ports only)

On a cluster (the pods from a snapshot, on their nodes):
  --cluster PATH             what kubectl get namespaces,nodes,pods,services,endpointslices,
                             networkpolicies -A -o yaml prints (a file or a directory; repeat to
                             add files); then --client and --server are NS/POD, and --dst may be
                             NS/svc/NAME[:PORT]. Each pod's namespace holds its mesh's rules and
                             its proxy, the nodes hold kube-proxy's and the CNI's rules and
                             enforce the snapshot's NetworkPolicies at the pods' veths; the node
                             hops are printed, and a policy that drops the connection is named
                             with the port and source it saw (verdict dropped, cause
                             network-policy)
  --kube-proxy iptables|nftables|none   kube-proxy's mode on the nodes (default iptables)
  --netpol reference|kube-router|kube-router-nftables|kube-network-policies|none
                             the NetworkPolicy enforcer (default reference)
  --cluster-cni bridge|ptp   how pods are joined to their node (default bridge)
  --node-rules NODE=FILE     a node's real rules instead of the compiled ones (repeat)
  --service-lb kube-proxy|socket   who translates a Service address no proxy resolved:
                             kube-proxy on the node (default, after the pod's rules) or a socket
                             load balancer at connect() (Cilium's), before the pod's rules, so
                             that the proxy's SO_ORIGINAL_DST is the endpoint

Output:
  --all-ports                the verdict for every destination port of --dst's address (a short
                             table of port ranges), and per client UID where the UID matters
  --format text|json|mermaid|dot   default text (a tree of the hops)
  --json                     the same as --format json: { verdict, hops, diagnosis }
  --color / --no-color       colour the text (default: only on a terminal, never with NO_COLOR)

Verdicts: meshed, plaintext, client-bypass, server-bypass, refused, dropped, loop.
Exit status: 0 when a verdict was computed (whatever it is), 1 bad input, 2 usage error.

Examples:
  netfilter-sim mesh linkerd
  netfilter-sim mesh linkerd --client web.yaml --server api.yaml --dst 10.96.0.10:80 \\
      --service 10.96.0.10:80=10.0.1.5:8080
  netfilter-sim mesh linkerd --client web.yaml --server api.yaml --cni --native-sidecars off \\
      --phase init:fetch-config
  netfilter-sim mesh istio --client web.yaml --server api.yaml --dst '[fd00::1:5]:8080' --json
  netfilter-sim mesh istio --format mermaid > hops.mmd
  netfilter-sim mesh istio --client web.yaml --server api.yaml --ambient
  netfilter-sim mesh istio --server api.yaml --ambient server --kubelet --host-rules off --mtls strict
  netfilter-sim mesh linkerd --all-ports
  netfilter-sim mesh linkerd --cluster snapshot/ --client shop/web --server shop/redis \\
      --dst shop/svc/redis
  netfilter-sim mesh istio --cluster snapshot/ --server shop/api --client shop/web --kubelet
`;

function int(v: Values, k: string): number | undefined {
  const s = str(v, k);
  if (s === undefined) return undefined;
  if (!/^\d+$/.test(s)) throw new UsageError(`--${k} needs a number${s.startsWith('-') ? ' from 0' : ''}, not "${s}"`);
  if (Number(s) > 0xffffffff) throw new UsageError(`--${k} is at most 4294967295, not ${s}`);
  return Number(s);
}

/** Reads a manifest file, naming it in any error. */
function readManifest<T>(io: CliIO, file: string, read: (text: string) => T, sources: Map<string, string>): T {
  let text: string;
  try {
    text = io.readFile(file);
  } catch (e) {
    throw e instanceof FileReadError ? e : new FileReadError(file, e);
  }
  sources.set(file, text);
  try {
    return read(text);
  } catch (e) {
    // The error names no file of its own: say which manifest it came from, with the line.
    if (e instanceof NetfilterSimError) throw new SourceError(file, text, e.diagnostics);
    throw e;
  }
}

/**
 * Runs `netfilter-sim mesh ARGS`: exit 0 when a verdict was computed (the verdict is the answer,
 * whatever it is), 1 on bad input (manifests, addresses, an unknown init container), 2 on a usage
 * error.
 *
 * @example
 * ```ts
 * const code = await runMesh(['linkerd', '--json'], processIO());
 * ```
 */
export async function runMesh(args: string[], io: CliIO): Promise<number> {
  const sources = new Map<string, string>();
  try {
    const { values, positionals } = parseArgs({
      args,
      options: {
        client: { type: 'string' },
        server: { type: 'string' },
        namespace: { type: 'string' },
        dst: { type: 'string' },
        cni: { type: 'boolean' },
        'native-sidecars': { type: 'string' },
        'cni-not-ready': { type: 'boolean' },
        phase: { type: 'string' },
        container: { type: 'string' },
        uid: { type: 'string' },
        gid: { type: 'string' },
        proto: { type: 'string' },
        service: { type: 'string', multiple: true },
        format: { type: 'string' },
        json: { type: 'boolean' },
        'all-ports': { type: 'boolean' },
        ambient: { type: 'boolean' },
        'native-nftables': { type: 'boolean' },
        'dns-capture': { type: 'string' },
        kubelet: { type: 'boolean' },
        'host-rules': { type: 'string' },
        mtls: { type: 'string' },
        'so-mark': { type: 'string' },
        'linkerd-version': { type: 'string' },
        'istio-version': { type: 'string' },
        cluster: { type: 'string', multiple: true },
        'kube-proxy': { type: 'string' },
        netpol: { type: 'string' },
        'cluster-cni': { type: 'string' },
        'node-rules': { type: 'string', multiple: true },
        'service-lb': { type: 'string' },
        color: { type: 'boolean' },
        'no-color': { type: 'boolean' },
        help: { type: 'boolean', short: 'h' },
      },
      allowPositionals: true,
      strict: true,
    });
    if (values.help) {
      io.stdout(MESH_HELP);
      return EXIT_OK;
    }
    // `--ambient client|server`: a boolean flag followed by the side it applies to.
    let ambientSide: 'client' | 'server' | undefined;
    const rest = positionals.filter((p, i) => {
      if (values.ambient !== true || (p !== 'client' && p !== 'server') || i === 0) return true;
      const at = args.indexOf(p);
      if (at > 0 && args[at - 1] === '--ambient') {
        ambientSide = p;
        return false;
      }
      return true;
    });
    const [mesh, ...extra] = rest;
    if (mesh === undefined) throw new UsageError('which mesh? netfilter-sim mesh linkerd|istio …');
    if (mesh !== 'linkerd' && mesh !== 'istio') throw new UsageError(`unknown mesh "${mesh}" (linkerd or istio)`);
    if (extra.length > 0) throw new UsageError(`unexpected argument "${extra[0]}"`);
    let format: MeshFormat = 'text';
    const f = str(values, 'format');
    if (f !== undefined) {
      if (!(MESH_FORMATS as readonly string[]).includes(f)) throw new UsageError(`--format is ${MESH_FORMATS.join(', ')}, not "${f}"`);
      format = f as MeshFormat;
    }
    if (values.json) format = 'json';
    const native = str(values, 'native-sidecars');
    if (native !== undefined && native !== 'on' && native !== 'off') throw new UsageError(`--native-sidecars is on or off, not "${native}"`);
    const proto = str(values, 'proto');
    if (proto !== undefined && proto !== 'tcp' && proto !== 'udp') throw new UsageError(`--proto is tcp or udp, not "${proto}"`);
    const phase = str(values, 'phase');
    if (phase !== undefined && phase !== 'app' && !/^init:.+/.test(phase)) throw new UsageError(`--phase is app or init:NAME, not "${phase}"`);
    const uid = int(values, 'uid');
    const gid = int(values, 'gid');
    const onOff = (k: string): boolean | undefined => {
      const x = str(values, k);
      if (x === undefined) return undefined;
      if (x !== 'on' && x !== 'off') throw new UsageError(`--${k} is on or off, not "${x}"`);
      return x === 'on';
    };
    const dnsCapture = onOff('dns-capture');
    const hostRules = onOff('host-rules');
    const mtls = str(values, 'mtls');
    if (mtls !== undefined && mtls !== 'permissive' && mtls !== 'strict') throw new UsageError(`--mtls is permissive or strict, not "${mtls}"`);
    const markText = str(values, 'so-mark');
    let mark: number | undefined;
    if (markText !== undefined) {
      if (!/^(0x[0-9a-fA-F]+|\d+)$/.test(markText) || Number(markText) > 0xffffffff) throw new UsageError(`--so-mark is a number from 0 to 0xffffffff, not "${markText}"`);
      mark = Number(markText);
    }
    if (mesh === 'linkerd') {
      for (const k of ['ambient', 'native-nftables', 'dns-capture', 'kubelet', 'host-rules', 'mtls', 'istio-version'] as const) {
        if (values[k] !== undefined) throw new UsageError(`--${k} is for Istio (mesh istio)`);
      }
    }
    if (mesh === 'istio' && values['linkerd-version'] !== undefined) throw new UsageError('--linkerd-version is for Linkerd (mesh linkerd)');
    const clusterPaths = values.cluster ?? [];
    const onCluster = clusterPaths.length > 0;
    if (!onCluster) {
      for (const k of ['kube-proxy', 'netpol', 'cluster-cni', 'node-rules', 'service-lb'] as const) {
        if (values[k] !== undefined) throw new UsageError(`--${k} is for a mesh on a cluster (--cluster PATH)`);
      }
    } else {
      for (const k of ['service', 'namespace', 'all-ports'] as const) {
        if (values[k] !== undefined) throw new UsageError(`--${k} does not go with --cluster (${k === 'service' ? 'the Services come from the snapshot' : k === 'namespace' ? 'the Namespaces come from the snapshot' : 'give one --dst'})`);
      }
      if (str(values, 'client') === undefined || str(values, 'server') === undefined) throw new UsageError('--cluster needs --client NS/POD and --server NS/POD');
    }

    const clientFile = str(values, 'client');
    const serverFile = str(values, 'server');
    const nsFile = str(values, 'namespace');
    if ([clientFile, serverFile, nsFile].filter((f) => f === '-').length > 1) throw new UsageError('only one of --client, --server and --namespace can read standard input');
    const client: Pod | undefined = clientFile !== undefined && !onCluster ? readManifest(io, clientFile, readPod, sources) : undefined;
    const server: Pod | undefined = serverFile !== undefined && !onCluster ? readManifest(io, serverFile, readPod, sources) : undefined;
    const namespace: Namespace | undefined = nsFile !== undefined ? readManifest(io, nsFile, readNamespace, sources) : undefined;
    const services: MeshService[] = (values.service ?? []).flatMap((s) => parseServices(s));

    const options: MeshScenarioOptions = {
      mesh: mesh as MeshName,
      ...(client ? { client } : {}),
      ...(server ? { server } : {}),
      ...(namespace ? { namespace } : {}),
      ...(str(values, 'dst') !== undefined ? { dst: str(values, 'dst')! } : {}),
      ...(values.cni ? { cni: true } : {}),
      ...(native !== undefined ? { nativeSidecars: native === 'on' } : {}),
      ...(values['cni-not-ready'] ? { cniNotReady: true } : {}),
      ...(phase !== undefined ? { phase } : {}),
      ...(str(values, 'container') !== undefined ? { container: str(values, 'container')! } : {}),
      ...(uid !== undefined ? { uid } : {}),
      ...(gid !== undefined ? { gid } : {}),
      ...(proto !== undefined ? { proto } : {}),
      services,
      ...(values.ambient ? { ambient: ambientSide ?? true } : {}),
      ...(values['native-nftables'] ? { nativeNftables: true } : {}),
      ...(dnsCapture !== undefined ? { dnsCapture } : {}),
      ...(values.kubelet ? { kubelet: true } : {}),
      ...(hostRules !== undefined ? { hostRules } : {}),
      ...(mtls !== undefined ? { mtls: mtls as 'permissive' | 'strict' } : {}),
      ...(mark !== undefined ? { mark } : {}),
      ...(str(values, 'linkerd-version') !== undefined ? { linkerdVersion: str(values, 'linkerd-version')! } : {}),
      ...(str(values, 'istio-version') !== undefined ? { istioVersion: str(values, 'istio-version')! } : {}),
    };
    const linkerdVersion = str(values, 'linkerd-version');
    if (onCluster) {
      const choice = <T extends string>(k: string, allowed: readonly T[]): T | undefined => {
        const x = str(values, k);
        if (x !== undefined && !(allowed as readonly string[]).includes(x)) throw new UsageError(`--${k} is ${allowed.join(', ')}, not "${x}"`);
        return x as T | undefined;
      };
      const kubeProxy = choice('kube-proxy', ['iptables', 'nftables', 'none'] as const);
      const netpol = choice('netpol', ['reference', 'kube-router', 'kube-router-nftables', 'kube-network-policies', 'none'] as const);
      const cniMode = choice('cluster-cni', ['bridge', 'ptp'] as const);
      const serviceLb = choice('service-lb', ['kube-proxy', 'socket'] as const);
      const nodeRules: Record<string, string[]> = Object.create(null) as Record<string, string[]>;
      for (const spec of values['node-rules'] ?? []) {
        const eq = spec.indexOf('=');
        if (eq <= 0 || eq === spec.length - 1) throw new UsageError(`--node-rules needs NODE=FILE, not "${spec}"`);
        let text: string;
        try {
          text = io.readFile(spec.slice(eq + 1));
        } catch (e) {
          throw e instanceof FileReadError ? e : new FileReadError(spec.slice(eq + 1), e);
        }
        (nodeRules[spec.slice(0, eq)] ??= []).push(text);
      }
      const { client: _c, server: _s, services: _v, namespace: _n, ...rest } = options;
      const result = simulateMeshOnCluster({
        ...rest,
        snapshot: readSnapshot(snapshotSources(io, clusterPaths, '--cluster')),
        client: str(values, 'client')!,
        server: str(values, 'server')!,
        ...(kubeProxy !== undefined ? { kubeProxy } : {}),
        ...(netpol !== undefined ? { netpol } : {}),
        ...(cniMode !== undefined ? { cniMode } : {}),
        ...(serviceLb !== undefined ? { serviceLb } : {}),
        ...(Object.keys(nodeRules).length > 0 ? { nodeRules } : {}),
        ...(linkerdVersion !== undefined ? { linkerdVersion } : {}),
      });
      for (const w of result.warnings) io.stderr(`netfilter-sim mesh: warning: ${w}\n`);
      const color = values['no-color'] === true ? false : values.color === true ? true : io.color;
      io.stdout(renderMesh(result, format, { color }));
      return EXIT_OK;
    }
    if (values['all-ports']) {
      if (format !== 'text' && format !== 'json') throw new UsageError('--all-ports prints text or JSON');
      const all = simulateMeshAllPorts(options);
      io.stdout(format === 'json' ? JSON.stringify(all, null, 2) + '\n' : renderMeshAllPorts(all));
      return EXIT_OK;
    }
    const result = simulateMesh(options);
    const color = values['no-color'] === true ? false : values.color === true ? true : io.color;
    io.stdout(renderMesh(result, format, { color }));
    return EXIT_OK;
  } catch (e) {
    return reportCliError(e, io, 'mesh', (err) => err.diagnostics.map((d) => `netfilter-sim mesh: ${d.message}\n`).join(''));
  }
}
