/**
 * The data of a meshed-pod scenario: the pods as they run (after injection), their start-up
 * order, the hops a connection takes and the verdict. Plain, JSON-serializable values.
 *
 * @module
 */
import type { ConnectStep } from '../engine/path/netns.js';
import type { Ruleset } from '../model/types.js';
import type { Namespace, Pod, PodContainer } from '../compile/pod.js';

/**
 * The meshes the scenario knows.
 *
 * @example
 * ```ts
 * const mesh: MeshName = 'linkerd';
 * ```
 */
export type MeshName = 'linkerd' | 'istio';

/**
 * The answer to "did this connection go through the mesh?".
 *
 * - `meshed`: the client's outbound proxy and the server's inbound proxy both handled it;
 * - `plaintext`: neither did;
 * - `client-bypass` / `server-bypass`: one side's proxy was skipped;
 * - `refused` / `dropped`: it never reached an application;
 * - `loop`: a proxy's own connection was captured again (its UID is not exempted).
 *
 * @example
 * ```ts
 * const v: MeshVerdict = simulateMesh(options).verdict;
 * ```
 */
export type MeshVerdict = 'meshed' | 'plaintext' | 'client-bypass' | 'server-bypass' | 'refused' | 'dropped' | 'loop';

/**
 * How the rules get into a pod: the mesh's init container, its CNI plugin, or not at all.
 *
 * @example
 * ```ts
 * const install: MeshInstall = 'cni';
 * ```
 */
export type MeshInstall = 'init-container' | 'cni' | 'none';

/**
 * What a container does to the pod's network when it starts.
 *
 * - `rules`: writes the iptables rules (`linkerd-init`, `istio-init`, or the CNI plugin at sandbox creation);
 * - `proxy`: the proxy starts and keeps running (a native sidecar, or the proxy among the containers);
 * - `validator`: checks that the rules are in place (`linkerd-network-validator`, `istio-validation`);
 * - `none`: an ordinary container.
 *
 * @example
 * ```ts
 * const e: StartupEffect = 'rules';
 * ```
 */
export type StartupEffect = 'rules' | 'proxy' | 'validator' | 'none';

/**
 * One step of a pod's start-up, in order: the sandbox (where a CNI plugin runs), each init
 * container, then the containers.
 *
 * @example
 * ```ts
 * pod.startup.map((s: StartupStep) => `${s.stage} ${s.name}`);
 * // ['sandbox linkerd-cni', 'init linkerd-network-validator', 'init linkerd-proxy', 'init fetch', 'container web']
 * ```
 */
export interface StartupStep {
  /** `sandbox` (CNI ADD), `init` (an init container; native sidecars included), `container`. */
  readonly stage: 'sandbox' | 'init' | 'container';
  /** The container name, or the CNI plugin's name for the sandbox step. */
  readonly name: string;
  readonly effect: StartupEffect;
  /** `false` when the step would act but does not (the CNI plugin was not ready, or skipped the pod). */
  readonly active: boolean;
  /** Why the step does what it does, in words. */
  readonly note: string;
}

/**
 * A pod's proxy: its container, the identity it runs as and the ports it listens on.
 *
 * @example
 * ```ts
 * pod.proxy?.uid; // 2102
 * ```
 */
export interface MeshProxy {
  readonly container: string;
  readonly uid: number;
  readonly gid: number;
  /** Where captured outbound connections are sent (4140, 15001). */
  readonly outboundPort: number;
  /** Where captured inbound connections are sent (4143, 15006). */
  readonly inboundPort: number;
  /** Other ports the proxy (or its agent) listens on: admin, metrics, health, tunnel, DNS. */
  readonly otherPorts: readonly { readonly port: number; readonly address?: string; readonly proto?: 'tcp' | 'udp'; readonly role: string }[];
  /** The proxy listens on IPv6 too (dual-stack configuration). */
  readonly ipv6: boolean;
  /** Runs as a native sidecar (an init container with `restartPolicy: Always`). */
  readonly nativeSidecar: boolean;
  /** `SO_MARK` on the proxy's own sockets (Istio ambient: ztunnel's 0x539), which the rules exempt instead of a UID. */
  readonly mark?: number;
  /** `ztunnel` for an Istio ambient pod (the node's ztunnel, with its sockets in the pod); absent for a sidecar. */
  readonly kind?: 'sidecar' | 'ztunnel';
}

/**
 * An Istio ambient pod: why the node agent enrolled it and the pod-level settings of its in-pod rules.
 *
 * @example
 * ```ts
 * const running: MeshPod = prepareMeshPod('istio', readPod(podYaml), { ambient: true });
 * const a: MeshAmbient | undefined = running.ambient;
 * a?.dnsCapture; // true: the chart's ambient.dnsCapture default
 * ```
 */
export interface MeshAmbient {
  /** Why the pod is ambient: its label, its namespace's label, or `--ambient`. */
  readonly reason: string;
  /** istio-cni's backend for the in-pod rules. */
  readonly backend: 'iptables' | 'nftables';
  /** DNS (port 53) is captured to ztunnel's 15053. */
  readonly dnsCapture: boolean;
  /** Where the DNS capture setting came from (the node's `ambient.dnsCapture`, or the pod annotation). */
  readonly dnsSetting: string;
  /** `ambient.istio.io/bypass-inbound-capture: "true"`: no inbound redirection in the pod. */
  readonly bypassInbound: boolean;
  /** `istio.io/reroute-virtual-interfaces`. */
  readonly virtualInterfaces: readonly string[];
}

/**
 * Why one generated rule exists, for hops and diagnoses.
 *
 * @example
 * ```ts
 * const n: RuleNote = { family: 4, table: 'nat', chain: 'PROXY_INIT_OUTPUT', rule: 3, text: '-A PROXY_INIT_OUTPUT …',
 *   comment: 'proxy-init/ignore-port-9999', why: 'Outgoing TCP connections to ports 9999 bypass the proxy.',
 *   setting: 'config.linkerd.io/skip-outbound-ports: "9999" on pod web' };
 * ```
 */
export interface RuleNote {
  readonly family: 4 | 6;
  readonly table: string;
  readonly chain: string;
  /** 1-based position in its chain, as `iptables -L --line-numbers`. */
  readonly rule: number;
  /** The rule as `iptables-save` prints it. */
  readonly text: string;
  readonly comment: string | null;
  /** What the rule is for. */
  readonly why: string;
  /** The flag, annotation or value behind it, and where that came from. */
  readonly setting: string | null;
}

/**
 * A pod as the scenario runs it: injected if it was written with the inject annotation, with the
 * rules its init container or CNI plugin writes and its start-up order.
 *
 * @example
 * ```ts
 * const p: MeshPod = prepareMeshPod('linkerd', readPod(text), { cni: true });
 * p.startup.map((s) => s.name);
 * ```
 */
export interface MeshPod {
  readonly mesh: MeshName;
  readonly name: string;
  /** The pod as it runs (the injected containers added). */
  readonly pod: Pod;
  /** `running`: already injected; `injected`: injected here with the mesh's defaults; `plain`: not meshed. */
  readonly source: 'running' | 'injected' | 'plain';
  readonly install: MeshInstall;
  /** What wrote the rules (`linkerd-init`, `linkerd-cni`, `istio-init`, `istio-cni`), or null. */
  readonly rulesBy: string | null;
  /** The rules once written (IPv4, IPv6); `null` for a family without rules. */
  readonly rules4: Ruleset | null;
  readonly rules6: Ruleset | null;
  /** Every written rule with its reason. */
  readonly ruleNotes: readonly RuleNote[];
  readonly proxy: MeshProxy | null;
  readonly startup: readonly StartupStep[];
  /** Application containers (not the proxy, not the mesh's init containers). */
  readonly apps: readonly PodContainer[];
  /** How the pod's mesh settings were decided (injector values, annotations, arguments), in words. */
  readonly settings: readonly string[];
  /** Annotations in force: the pod's, falling back on its namespace's. */
  readonly annotations: Readonly<Record<string, string>>;
  /** Linkerd: ports the proxies treat as opaque (no protocol detection). */
  readonly opaquePorts: readonly number[];
  /** Policy routing and loopback addresses the mesh adds (Istio TPROXY, `::6` on `lo`). */
  readonly ipCommands: readonly (readonly string[])[];
  /** The CNI plugin was not ready when the pod started (no rules from it). */
  readonly cniNotReady: boolean;
  readonly warnings: readonly string[];
  /** Istio ambient: the pod is enrolled with ztunnel (absent for sidecar and plain pods). */
  readonly ambient?: MeshAmbient;
  /** Native nftables rules (`nft -f` text) in the pod, when its rules are nft (ambient's nftables backend). */
  readonly nft?: string;
}

/**
 * A ClusterIP Service: the virtual address and its endpoints.
 *
 * @example
 * ```ts
 * const svc: MeshService = { vip: '10.96.0.10', port: 80, endpoints: [{ address: '10.0.1.5', port: 8080 }] };
 * ```
 */
export interface MeshService {
  readonly vip: string;
  readonly port: number;
  readonly proto?: 'tcp' | 'udp';
  readonly endpoints: readonly { readonly address: string; readonly port: number }[];
}

/**
 * The rule that decided a hop (the last rule of the first packet at the hook that mattered).
 *
 * @example
 * ```ts
 * hop.rule?.chain; // 'PROXY_INIT_OUTPUT'
 * ```
 */
export interface HopRule {
  readonly hook: string;
  readonly table: string;
  readonly chain: string;
  readonly rule: number;
  /** `rule` (a rule matched) or `policy` (none did; the chain's policy decided). */
  readonly event: 'rule' | 'policy';
  readonly target: string;
  readonly comment: string | null;
  /** The rule as `iptables-save` prints it (null for a policy). */
  readonly text: string | null;
  /** The jumps that led to it (`ISTIO_OUTPUT rule 10`), outermost first. */
  readonly via: readonly string[];
  /** Why the rule exists. */
  readonly why: string | null;
  /** The setting behind it. */
  readonly setting: string | null;
}

/**
 * One leg of the connection: a connection attempt made in one pod (by a process, or arriving
 * from the network), where it landed and the rule that sent it there.
 *
 * @example
 * ```ts
 * const h: MeshHop = { pod: 'client', from: 'web (uid 1000)', to: '127.0.0.1:4140',
 *   why: 'PROXY_INIT_OUTPUT rule 4 REDIRECT "proxy-init/redirect-all-outgoing-to-proxy-port"',
 *   receiver: 'linkerd-proxy outbound', outcome: 'local', rule: null, steps: [], originalDestination: '10.0.1.5:8080',
 *   fromActor: 'client/web', toActor: 'client/linkerd-proxy' };
 * ```
 */
export interface MeshHop {
  /** The pod the leg happens in (`network` for the node's Service DNAT between pods). */
  readonly pod: string;
  /** Who connects: `web (uid 1000)`, `linkerd-proxy (uid 2102)`, or the remote `10.0.0.2:41000`. */
  readonly from: string;
  /** Where the connection went: the accepting socket, or the destination it left the pod for. */
  readonly to: string;
  /** The rule that moved it (chain, rule number, target, comment), or why no rule did. */
  readonly why: string;
  /** What took the connection: `linkerd-proxy outbound`, `api`, `the network`, `nothing (refused)`. */
  readonly receiver: string;
  readonly outcome: 'local' | 'remote' | 'refused' | 'dropped';
  /** `SO_ORIGINAL_DST` on the accepting socket, when it has one. */
  readonly originalDestination: string | null;
  readonly rule: HopRule | null;
  /** The kernel TRACE lines of the leg (first packet and its answers). */
  readonly steps: readonly ConnectStep[];
  /** Actor ids for diagrams: `pod/container`, or `network`. */
  readonly fromActor: string;
  readonly toActor: string;
  /** On the cluster path: the NetworkPolicy that dropped the connection in this hop. */
  readonly policy?: MeshPolicyStop;
}

/**
 * A NetworkPolicy that dropped the connection on the cluster path (`mesh --cluster`): the policy
 * and rule (`rule: null`: the pod is isolated and no rule allows it), where it was enforced, and
 * the packet as the enforcer saw it.
 *
 * @example
 * ```ts
 * const p: MeshPolicyStop | undefined = simulateMeshOnCluster({ mesh: 'linkerd', snapshot: yaml, client: 'shop/web', server: 'shop/redis' }).policy;
 * p?.port; // 4143: the port the connection arrived on, not the application's 6379
 * ```
 */
export interface MeshPolicyStop {
  readonly namespace: string;
  readonly name: string;
  readonly direction: 'ingress' | 'egress';
  readonly rule: number | null;
  /** The pod the direction is about (`NS/NAME`) and its node. */
  readonly pod: string;
  readonly node: string;
  /** The packet the enforcer judged. */
  readonly src: string;
  readonly dst: string;
  readonly port: number;
  readonly protocol: 'TCP' | 'UDP' | 'SCTP';
  /** The application port the connection stands for, when it travels to another (a tunnel, a transport header). */
  readonly appPort: number | null;
  /** Why it travels to `port`: Linkerd's opaque transport, its transport header for every meshed connection (2.18+), HBONE; the kubelet probe's SNAT; null: the port is the application's. */
  readonly why: 'opaque' | 'forced' | 'hbone' | 'probe-snat' | null;
}

/**
 * What a mesh's start-up check (`linkerd-network-validator`, `istio-validation`) concluded.
 *
 * @example
 * ```ts
 * const v: ValidatorResult | null = validateMeshPod(pod); // null: the pod has no start-up check
 * if (v && !v.ok) console.log(`${v.container} exits ${v.exitCode}`);
 * ```
 */
export interface ValidatorResult {
  readonly pod: string;
  readonly container: string;
  readonly ok: boolean;
  /** 0, or the container's failure code (95 for Linkerd's validator, 126 for Istio's). */
  readonly exitCode: number;
  /** What the probe connected to and where it landed. */
  readonly probe: string;
  readonly landed: string;
  readonly originalDestination: string | null;
  readonly message: string;
}

/**
 * What {@link simulateMesh} takes.
 *
 * @example
 * ```ts
 * const options: MeshScenarioOptions = { mesh: 'linkerd', client, server, dst: '10.0.1.5:8080', cni: true, nativeSidecars: false, phase: 'init:fetch' };
 * ```
 */
export interface MeshScenarioOptions {
  readonly mesh: MeshName;
  /** The client pod (a Pod, or a manifest's text). Default: the mesh's built-in client. */
  readonly client?: Pod | string;
  /** The server pod. Default: the mesh's built-in server. */
  readonly server?: Pod | string;
  /** A Namespace whose annotations (and labels) apply to both pods. */
  readonly namespace?: Namespace | string;
  /** `ADDR:PORT` (`[V6]:PORT`). Default: the server's first address and first application port. */
  readonly dst?: string;
  /** The mesh's CNI plugin writes the rules instead of its init container. */
  readonly cni?: boolean;
  /** Proxies as native sidecars. Default: the mesh's current default (on for both). */
  readonly nativeSidecars?: boolean;
  /** The CNI plugin was not ready when the pods (`true`: both) or one of them started. */
  readonly cniNotReady?: boolean | 'client' | 'server';
  /** `app` (default) or `init:NAME`: connect from that init container, at its point of start-up. */
  readonly phase?: string;
  /** The connecting container (default: the first application container, or the phase's init container). */
  readonly container?: string;
  /** Run the connecting process as this UID (and GID) instead of the container's. */
  readonly uid?: number;
  readonly gid?: number;
  readonly proto?: 'tcp' | 'udp';
  /** ClusterIP Services: objects, or `VIP:PORT=ADDR:PORT,…` text. */
  readonly services?: readonly MeshService[] | string;
  /**
   * Istio ambient: enrol the pods (`true`: both, or one of them) with ztunnel whatever their
   * labels say (pods with a sidecar and host-network pods excepted). Without it, a pod is ambient
   * when it or its namespace has the label `istio.io/dataplane-mode: ambient`.
   */
  readonly ambient?: boolean | 'client' | 'server';
  /** Istio ambient: istio-cni's nftables backend (`ambient.enableNativeNftables`) instead of iptables. */
  readonly nativeNftables?: boolean;
  /** Istio ambient: the node's DNS capture (`ambient.dnsCapture`, default on); a pod's annotation overrides it. */
  readonly dnsCapture?: boolean;
  /** `SO_MARK` on the connecting process's socket. */
  readonly mark?: number;
  /** The connection is the kubelet's health probe from the node to the server (the client pod is not used). */
  readonly kubelet?: boolean;
  /** Istio ambient: the node has istio-cni's host rule that SNATs kubelet probes (default true). */
  readonly hostRules?: boolean;
  /** Istio: the server's PeerAuthentication mode (default `permissive`); `strict` refuses plain text at ztunnel and Envoy. */
  readonly mtls?: 'permissive' | 'strict';
  /**
   * Linkerd's release (`2.17`, `2.19`, `edge-25.2.3`), which decides the port a meshed connection
   * travels to: opaque ports to the inbound port from 2.10, every meshed connection from 2.18
   * (edge-25.2.3). Default: 2.17's behaviour (opaque ports only).
   */
  readonly linkerdVersion?: string;
  /**
   * Istio's release (`1.21`, `1.24.3`), which decides how a sidecar sends to an ambient pod: over
   * HBONE to its 15008 from 1.22 (to a Service's endpoints), in plain text before. Default: the
   * newest release's behaviour.
   */
  readonly istioVersion?: string;
}

/**
 * The outcome of a scenario: verdict, hops, diagnosis, and the pods as they ran.
 *
 * @example
 * ```ts
 * const r: MeshResult = simulateMesh({ mesh: 'linkerd' });
 * r.verdict; // 'meshed'
 * ```
 */
export interface MeshResult {
  readonly mesh: MeshName;
  readonly verdict: MeshVerdict;
  readonly hops: readonly MeshHop[];
  /** For every verdict but `meshed`: the rule or missing rule, the setting behind it, the usual fix. Notes otherwise. */
  readonly diagnosis: readonly string[];
  readonly client: MeshPod;
  readonly server: MeshPod;
  /** The connecting process: `web (uid 1000)`. */
  readonly origin: string;
  readonly dst: string;
  readonly proto: 'tcp' | 'udp';
  readonly phase: string;
  /** The start-up checks of pods that have one. */
  readonly validators: readonly ValidatorResult[];
  /** `network-policy`: a NetworkPolicy on the cluster path decided the verdict (`mesh --cluster`). */
  readonly cause?: 'network-policy';
  /** The NetworkPolicy that dropped the connection. */
  readonly policy?: MeshPolicyStop;
}
