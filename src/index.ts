/**
 * netfilter-sim: a userspace simulator of Linux iptables/netfilter.
 *
 * The common path: parse rule-set text, print it canonically, check it, trace packets through a
 * modelled network namespace, compile mesh rule sets.
 *
 * @example
 * ```ts
 * import { formatIptablesSave } from 'netfilter-sim';
 * console.log(formatIptablesSave('*nat\n-A OUTPUT -p tcp -j REDIRECT --to-port 4140\nCOMMIT\n'));
 * ```
 *
 * @module netfilter-sim
 */
export type * from './model/types.js';
export { BUILTIN_CHAINS, HOOK_NAMES, TABLE_NAMES } from './model/types.js';
export { NetfilterSimError, type Diagnostic, type ErrorCode } from './model/errors.js';
export { formatDiagnostic } from './model/diagnostic-text.js';
export { parseIptablesSave, parseIptablesSaveOrThrow, type SaveParseOptions, type SaveParseResult } from './iptables/syntax/save.js';
export { parseIptablesArgv, type ParsedCommand, type CommandOptions } from './iptables/syntax/command.js';
export { applyIptablesCommands, type ApplyOptions } from './iptables/syntax/apply.js';
export { printIptablesSave, printRule, type PrintOptions } from './iptables/print/save.js';
export { formatIptablesSave, type FormatOptions } from './iptables/fmt.js';
export { parseCidr, formatCidr, parseAddress, formatAddress } from './model/address.js';
export * from './compile/istio/index.js';
export * from './compile/linkerd/index.js';
export { compileProxyInit as compileLinkerd } from './compile/linkerd/index.js';
export { renderLinkerd, linkerdRulesets } from './compile/linkerd/output.js';
export { readPod, readNamespace, readService, type Pod, type Namespace } from './compile/pod.js';
export { compileKubeProxy, kubeProxyNfacctNames, KUBE_PROXY_VERSIONS, KUBE_PROXY_DEFAULT_VERSION } from './compile/kube-proxy/index.js';
export type { KubeProxyOptions, KubeProxyVersion, KubeProxyMode, DetectLocalMode } from './compile/kube-proxy/index.js';
export { compileCniNodeRules, podSandboxId } from './compile/cni/index.js';
export type { CniNodeRulesOptions, PortmapOptions } from './compile/cni/index.js';
export { Netns, needsConntrack, parsePacketSpec, parseEndpoint } from './engine/index.js';
export { NetnsPool, connectBatch } from './engine/batch/pool.js';
export type { BatchOptions, PoolOptions } from './engine/batch/pool.js';
export type {
  NetnsOptions, ListenerSpec, ConnectSpec, LocalConnectSpec, RemoteConnectSpec, ConnectResult, ConnectStep, CallOptions,
  PacketSpec, Endpoint, InterfaceSpec, RouteSpec, RuleSpec, ConntrackSnapshot, ExtensionRegistry, RuleCounter, TraceEvent,
  QueueReader, QueuedPacket, QueueAnswer,
} from './engine/index.js';
export { check, reachableHooks, MAX_CHAIN_NAME_LENGTH, NFT_JUMP_STACK_SIZE, type CheckOptions, type IpsetDeclaration } from './iptables/check/index.js';
export {
  renderTrace, renderTraceText, renderTraceTree, renderTraceJson, renderTraceMermaid, renderTraceDot, renderOutcome,
  type RenderOptions, type TraceFormat,
} from './trace/index.js';
export type { CommandName } from './iptables/syntax/command.js';
export type {
  TraceEventBase, TraceEventType, PacketEvent, RouteEvent, RerouteEvent, TableEvent, RulePosition, RuleEvent, ReturnEvent,
  PolicyEvent, AssumedEvent, VerdictEvent, ConntrackEvent, NatEvent, EffectEvent, SocketEvent, WireEvent, LoopbackEvent, DropEvent,
} from './engine/trace/events.js';
export type { RouteType } from './engine/state/routing.js';
export type {
  MatchExtension, TargetExtension, OptionDef, OptionOccurrence, ExtensionContext, CheckContext, Placement, Accounts,
} from './iptables/extensions/types.js';
export { IPPROTO, TCP_FLAGS, CT_STATE, CT_STATUS, ADDR_TYPE, type PacketView, type SocketView, type ConntrackView } from './model/packet.js';
export type { FlagDef as IstioIptablesFlag } from './compile/istio/args.js';
export type { PodContainer, ContainerPort, EnvVar, Service, ServicePort } from './compile/pod.js';
export type { LinkerdRuleset, LinkerdOutputFormat } from './compile/linkerd/output.js';
export {
  simulateMesh, prepareMeshPod, validateMeshPod, parseServices, defaultPods, demoLinkerd,
  renderMesh, renderMeshText, renderMeshJson, renderMeshMermaid, renderMeshDot, meshJson, MESH_FORMATS,
  DEFAULT_POD_MANIFESTS, LINKERD_SCENARIO_DEFAULTS, ISTIO_SCENARIO_DEFAULTS,
} from './mesh/index.js';
export type {
  MeshScenarioOptions, MeshResult, MeshHop, HopRule, MeshPod, MeshProxy, RuleNote, StartupStep, StartupEffect, MeshInstall,
  MeshName, MeshVerdict, MeshService, ValidatorResult, MeshFormat, MeshRenderOptions, PrepareMeshPodOptions,
  MeshAmbient,
} from './mesh/index.js';
export * from './laws/index.js';
export { explore, classOf, expectedFor, renderExplore, addressRangeText, summarizeExplore, renderExploreSummary } from './explore/index.js';
export type { ExploreOptions, ExploreResult, ExploreClass, ExploreBox, ExploreOutcome, ExploreFrom, ExploreSummary, ExploreSummaryOutcome, ExploreNarrowing } from './explore/index.js';
export { simulateMeshAllPorts, renderMeshAllPorts, renderPortVerdicts } from './mesh/all-ports.js';
export { simulateMeshOnCluster } from './mesh/cluster.js';
export type { MeshClusterOptions, MeshClusterResult } from './mesh/cluster.js';
export type { MeshPolicyStop } from './mesh/types.js';
export type { MeshAllPortsResult, PortVerdict, UidVerdicts } from './mesh/all-ports.js';
export {
  parseNftRuleset, parseNftRulesetOrThrow, formatNftRuleset, nftLoadErrors, printNftRuleset, printNftRule, printNftTable, checkNftRuleset, detectRulesSyntax,
  type NftParseResult, type NftParseOptions, type NftCheckOptions, type RulesSyntax,
} from './nftables/index.js';
export type * from './nftables/model.js';
export {
  NetworkPolicyEvaluator, evaluateNetworkPolicy, describeVerdict, validateNetworkPolicy, expectValidNetworkPolicy, defaultNetworkPolicy,
  NAMESPACE_NAME_LABEL,
  type NetpolOptions, type NetpolConnection, type NetpolEndpointSpec, type NetpolEndpoint, type NetpolVerdict, type DirectionVerdict,
  type DirectionReason, type PolicyDecision, type PolicyDirection, type NetpolFieldError, type FieldErrorType, type ValidateOptions,
  type DefaultedPolicy, type DefaultedRule, type DefaultedPort, type NetpolSnapshot,
} from './netpol/index.js';
export {
  compileNetworkPolicy, compileKubeRouter, compileKubeRouterNft, compileKubeNetworkPolicies,
  type CompileNetworkPolicyOptions, type CompiledNetworkPolicy, type NetworkPolicyImplementation, type KubeRouterOptions, type KubeRouterRules,
  type KubeRouterNftOptions, type KubeRouterNftRules,
  type KubeNetworkPoliciesOptions, type QueueVerdict,
} from './compile/netpol/index.js';
export { Cluster } from './cluster/cluster.js';
export type {
  ClusterOptions, ClusterConnectSpec, ClusterConnectResult, ClusterHop, ClusterStep, ClusterTraceEvent, ReachOptions, ReachResult, ReachWhy,
  PodExtras, ClusterPolicyQuestion,
  ReachRange, AllPortsReachResult,
} from './cluster/cluster.js';
export {
  readSnapshot, objectName, MAX_SNAPSHOT_BYTES, MAX_SNAPSHOT_FILES, MAX_SNAPSHOT_OBJECTS, MAX_SNAPSHOT_NODES, MAX_PODS_PER_NODE, type SnapshotSource,
} from './cluster/snapshot.js';
export { renderClusterTrace, renderClusterOutcome, renderReach, renderReachAllPorts } from './cluster/render.js';
export type { Topology, PlannedNode, PlannedPod, PlannedOutside, PlannedListener } from './cluster/topology.js';
export type { IpAddress, IpCidr } from './cluster/addresses.js';
export type {
  KubeProxyMode as ClusterKubeProxyMode, NetpolImplementation, CniMode, PolicyVerdict, PolicyCheck, PolicyEnforcer, PolicyEnforcerFactory, EnforcerContext, KubeProxyCompiler, CniRulesCompiler,
} from './cluster/components.js';
export type {
  Snapshot, K8sObject, K8sNamespace, K8sNode, K8sPod, K8sService, K8sEndpointSlice, K8sNetworkPolicy, K8sContainer, K8sProtocol, ObjectMeta, LabelSelector,
  LabelSelectorRequirement, NetworkPolicyIngressRule, NetworkPolicyEgressRule, NetworkPolicyPeer, NetworkPolicyPort, IPBlock, NodeAddress, EndpointPort,
  ContainerPort as K8sContainerPort, ServicePort as K8sServicePort, Endpoint as K8sEndpoint, EndpointPort as K8sEndpointPort, NodeAddress as K8sNodeAddress,
} from './model/kubernetes.js';
