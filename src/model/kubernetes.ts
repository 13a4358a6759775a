/**
 * The Kubernetes API objects a cluster snapshot holds, as `kubectl get … -o yaml` prints them:
 * only the fields netfilter-sim reads, with the API's own names and nesting, so a parsed
 * document can be used as it is. Fields the API marks optional are optional here too; absent
 * and empty are different things in several of them (NetworkPolicy's `ingress`, `from`,
 * `ports`), and readers keep that difference.
 *
 * @module
 */

/** `metadata`: name, namespace (absent on cluster-scoped objects), labels, annotations. */
export interface ObjectMeta {
  readonly name: string;
  readonly namespace?: string;
  readonly labels?: Readonly<Record<string, string>>;
  readonly annotations?: Readonly<Record<string, string>>;
  readonly uid?: string;
}

/** `metav1.LabelSelectorRequirement`. */
export interface LabelSelectorRequirement {
  readonly key: string;
  readonly operator: 'In' | 'NotIn' | 'Exists' | 'DoesNotExist';
  readonly values?: readonly string[];
}

/** `metav1.LabelSelector`: both parts must hold; an empty selector selects everything. */
export interface LabelSelector {
  readonly matchLabels?: Readonly<Record<string, string>>;
  readonly matchExpressions?: readonly LabelSelectorRequirement[];
}

/** The protocols a port of a Pod, Service or policy may name. */
export type K8sProtocol = 'TCP' | 'UDP' | 'SCTP';

/** `v1.Namespace`. */
export interface K8sNamespace {
  readonly kind: 'Namespace';
  readonly metadata: ObjectMeta;
}

/** `v1.NodeAddress`. */
export interface NodeAddress {
  readonly type: 'InternalIP' | 'ExternalIP' | 'Hostname' | 'InternalDNS' | 'ExternalDNS';
  readonly address: string;
}

/** `v1.Node`. */
export interface K8sNode {
  readonly kind: 'Node';
  readonly metadata: ObjectMeta;
  readonly spec?: { readonly podCIDR?: string; readonly podCIDRs?: readonly string[] };
  readonly status?: { readonly addresses?: readonly NodeAddress[] };
}

/** `v1.ContainerPort`. */
export interface ContainerPort {
  readonly name?: string;
  readonly containerPort: number;
  readonly protocol?: K8sProtocol;
  readonly hostPort?: number;
  readonly hostIP?: string;
}

/** `v1.Container` (the fields read). */
export interface K8sContainer {
  readonly name: string;
  readonly image?: string;
  readonly ports?: readonly ContainerPort[];
  readonly args?: readonly string[];
  readonly env?: readonly { readonly name: string; readonly value?: string }[];
  readonly securityContext?: { readonly runAsUser?: number; readonly runAsGroup?: number };
  /** `Always` on an init container makes it a native sidecar, which keeps running (and listening). */
  readonly restartPolicy?: string;
}

/** `v1.Pod`. */
export interface K8sPod {
  readonly kind: 'Pod';
  readonly metadata: ObjectMeta;
  readonly spec: {
    readonly nodeName?: string;
    readonly hostNetwork?: boolean;
    readonly containers: readonly K8sContainer[];
    readonly initContainers?: readonly K8sContainer[];
    readonly securityContext?: { readonly runAsUser?: number; readonly runAsGroup?: number };
  };
  readonly status?: {
    readonly podIP?: string;
    readonly podIPs?: readonly { readonly ip: string }[];
    readonly hostIP?: string;
    readonly phase?: string;
  };
}

/** `v1.ServicePort`. `targetPort` is a number or a container port's name. */
export interface ServicePort {
  readonly name?: string;
  readonly protocol?: K8sProtocol;
  readonly port: number;
  readonly targetPort?: number | string;
  readonly nodePort?: number;
}

/** `v1.Service`. */
export interface K8sService {
  readonly kind: 'Service';
  readonly metadata: ObjectMeta;
  readonly spec: {
    readonly type?: 'ClusterIP' | 'NodePort' | 'LoadBalancer' | 'ExternalName';
    readonly selector?: Readonly<Record<string, string>>;
    readonly clusterIP?: string;
    readonly clusterIPs?: readonly string[];
    readonly ipFamilies?: readonly ('IPv4' | 'IPv6')[];
    readonly ports?: readonly ServicePort[];
    readonly externalIPs?: readonly string[];
    readonly externalTrafficPolicy?: 'Cluster' | 'Local';
    readonly internalTrafficPolicy?: 'Cluster' | 'Local';
    readonly sessionAffinity?: 'None' | 'ClientIP';
    readonly sessionAffinityConfig?: { readonly clientIP?: { readonly timeoutSeconds?: number } };
    readonly healthCheckNodePort?: number;
    readonly loadBalancerSourceRanges?: readonly string[];
  };
  readonly status?: {
    readonly loadBalancer?: {
      /** `ipMode: Proxy` (KEP-1860): kube-proxy does not program the address. */
      readonly ingress?: readonly { readonly ip?: string; readonly hostname?: string; readonly ipMode?: 'VIP' | 'Proxy' }[];
    };
  };
}

/** `discovery.k8s.io/v1.EndpointPort`. */
export interface EndpointPort {
  readonly name?: string;
  readonly protocol?: K8sProtocol;
  readonly port?: number;
}

/** `discovery.k8s.io/v1.Endpoint`. */
export interface Endpoint {
  readonly addresses: readonly string[];
  readonly conditions?: { readonly ready?: boolean; readonly serving?: boolean; readonly terminating?: boolean };
  readonly nodeName?: string;
  readonly targetRef?: { readonly kind?: string; readonly namespace?: string; readonly name?: string };
}

/** `discovery.k8s.io/v1.EndpointSlice`; its Service is the `kubernetes.io/service-name` label. */
export interface K8sEndpointSlice {
  readonly kind: 'EndpointSlice';
  readonly metadata: ObjectMeta;
  readonly addressType: 'IPv4' | 'IPv6' | 'FQDN';
  readonly endpoints?: readonly Endpoint[];
  readonly ports?: readonly EndpointPort[];
}

/** `networking.k8s.io/v1.NetworkPolicyPort`. `port` is a number or a container port's name. */
export interface NetworkPolicyPort {
  readonly protocol?: K8sProtocol;
  readonly port?: number | string;
  readonly endPort?: number;
}

/** `networking.k8s.io/v1.IPBlock`. */
export interface IPBlock {
  readonly cidr: string;
  readonly except?: readonly string[];
}

/** `networking.k8s.io/v1.NetworkPolicyPeer`. */
export interface NetworkPolicyPeer {
  readonly podSelector?: LabelSelector;
  readonly namespaceSelector?: LabelSelector;
  readonly ipBlock?: IPBlock;
}

/** `networking.k8s.io/v1.NetworkPolicyIngressRule`. */
export interface NetworkPolicyIngressRule {
  readonly from?: readonly NetworkPolicyPeer[];
  readonly ports?: readonly NetworkPolicyPort[];
}

/** `networking.k8s.io/v1.NetworkPolicyEgressRule`. */
export interface NetworkPolicyEgressRule {
  readonly to?: readonly NetworkPolicyPeer[];
  readonly ports?: readonly NetworkPolicyPort[];
}

/** `networking.k8s.io/v1.NetworkPolicy`. */
export interface K8sNetworkPolicy {
  readonly kind: 'NetworkPolicy';
  readonly metadata: ObjectMeta;
  readonly spec: {
    readonly podSelector: LabelSelector;
    readonly policyTypes?: readonly ('Ingress' | 'Egress')[];
    readonly ingress?: readonly NetworkPolicyIngressRule[];
    readonly egress?: readonly NetworkPolicyEgressRule[];
  };
}

/** Every kind a snapshot keeps. */
export type K8sObject = K8sNamespace | K8sNode | K8sPod | K8sService | K8sEndpointSlice | K8sNetworkPolicy;

/**
 * A cluster snapshot: the objects of each kind, in the order they were read, and what the reader
 * skipped or doubted (unknown kinds, objects it could not use), each naming the object.
 */
export interface Snapshot {
  readonly namespaces: readonly K8sNamespace[];
  readonly nodes: readonly K8sNode[];
  readonly pods: readonly K8sPod[];
  readonly services: readonly K8sService[];
  readonly endpointSlices: readonly K8sEndpointSlice[];
  readonly networkPolicies: readonly K8sNetworkPolicy[];
  readonly warnings: readonly string[];
}
