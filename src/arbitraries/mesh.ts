/**
 * Mesh inputs: proxy-init (Linkerd) and istio-iptables configurations across their option space,
 * and Kubernetes Pod manifests annotated for either mesh. Configurations are ones the tools
 * accept (no configuration error), unless a constraint asks for the entries they drop.
 *
 * @module
 */
import * as fc from 'fast-check';
import { formatIstioIptablesArgs } from '../compile/istio/args.js';
import { istioConfig as fillIstioConfig, type IstioConfig } from '../compile/istio/config.js';
import { formatProxyInitArgs, proxyInitConfig, type ProxyInitConfig } from '../compile/linkerd/config.js';
import type { Family } from '../model/types.js';
import { cidr } from './address.js';
import { badConstraint, checkBool, checkInt, checkKnownKeys, checkSubset } from './constraints.js';
import { port, portRange, formatPortRange, type PortRange } from './ports.js';

// ---------------------------------------------------------------------------------------------
// Linkerd

/**
 * Constraints of {@link linkerdConfig}.
 *
 * @example
 * ```ts
 * const c: LinkerdConfigConstraints = { ipv6: false, maxPortsToIgnore: 30, iptablesModes: ['nft'] };
 * ```
 */
export interface LinkerdConfigConstraints {
  /**
   * Whether proxy-init runs its IPv6 pass (`--ipv6`). proxy-init gives the same subnets to both
   * passes, so a configuration with an IPv6 pass never has `subnetsToIgnore` (any CIDR breaks one
   * of the passes). `'either'`: both kinds.
   * @defaultValue false (what the injector passes: `--ipv6=false`)
   */
  readonly ipv6?: boolean | 'either';
  /**
   * Most entries in each of `inboundPortsToIgnore` / `outboundPortsToIgnore` (more than 15
   * exercises the multiport chunking).
   * @defaultValue 20
   */
  readonly maxPortsToIgnore?: number;
  /**
   * Most entries in `portsToRedirect` (non-empty switches inbound to `redirect-listed` mode).
   * @defaultValue 3
   */
  readonly maxPortsToRedirect?: number;
  /**
   * Most entries in `subnetsToIgnore`.
   * @defaultValue 3
   */
  readonly maxSubnets?: number;
  /**
   * `--iptables-mode` values (`''` lets `--firewall-bin-path` decide, which is left empty: legacy).
   * @defaultValue ['', 'legacy', 'nft', 'plain']
   */
  readonly iptablesModes?: readonly ('' | 'legacy' | 'nft' | 'plain')[];
  /**
   * Also write port entries proxy-init logs and drops (`notanumber`, `" 8080"`, `25-23`), as
   * users do by mistake. Never all of a list: that makes proxy-init fail.
   * @defaultValue false
   */
  readonly invalidPortEntries?: boolean;
  /**
   * Whether `--proxy-gid` is sometimes set (proxy-init v2.4.0+).
   * @defaultValue true
   */
  readonly proxyGid?: boolean;
}

/** `N` or `L-U`, as proxy-init reads port entries. */
function linkerdPortEntry(): fc.Arbitrary<string> {
  return portRange({ maxWidth: 2000 }).map((r: PortRange) => formatPortRange(r, '-'));
}

/**
 * proxy-init configurations (`ProxyInitConfig`, every field filled) that proxy-init accepts:
 * valid distinct proxy ports, a proxy UID above 0 (proxy-init cannot exempt UID 0), port and
 * range entries, subnets of the pass's family, each iptables mode.
 *
 * @example
 * ```ts
 * import * as fc from 'fast-check';
 * import { compileProxyInit } from 'netfilter-sim';
 * import { linkerdConfig } from 'netfilter-sim/arbitraries';
 * fc.assert(fc.property(linkerdConfig(), (config) => compileProxyInit(config).error === undefined));
 * ```
 */
export function linkerdConfig(constraints: LinkerdConfigConstraints = {}): fc.Arbitrary<ProxyInitConfig> {
  const name = 'linkerdConfig';
  checkKnownKeys(name, constraints, ['ipv6', 'maxPortsToIgnore', 'maxPortsToRedirect', 'maxSubnets', 'iptablesModes', 'invalidPortEntries', 'proxyGid']);
  const ipv6Setting = constraints.ipv6 === 'either' ? undefined : checkBool(name, 'ipv6', constraints.ipv6, false);
  const maxIgnore = checkInt(name, 'maxPortsToIgnore', constraints.maxPortsToIgnore, 0, 1000, 20);
  const maxRedirect = checkInt(name, 'maxPortsToRedirect', constraints.maxPortsToRedirect, 0, 1000, 3);
  const maxSubnets = checkInt(name, 'maxSubnets', constraints.maxSubnets, 0, 1000, 3);
  const modes = checkSubset(name, 'iptablesModes', constraints.iptablesModes, ['', 'legacy', 'nft', 'plain'] as const, ['', 'legacy', 'nft', 'plain']);
  if (modes.length === 0) badConstraint(name, 'iptablesModes', 'must not be empty');
  const invalid = checkBool(name, 'invalidPortEntries', constraints.invalidPortEntries, false);
  const withGid = checkBool(name, 'proxyGid', constraints.proxyGid, true);

  const entry = invalid
    ? fc.oneof({ arbitrary: linkerdPortEntry(), weight: 5 }, { arbitrary: fc.constantFrom('notanumber', ' 8080', '25-23', '65536', '1-2-3', ''), weight: 1 })
    : linkerdPortEntry();
  // proxy-init fails when every entry of a non-empty list is invalid: keep one valid entry first.
  const ignoreList = fc.tuple(linkerdPortEntry(), fc.array(entry, { maxLength: Math.max(0, maxIgnore - 1) }))
    .map(([first, rest]) => [first, ...rest]);
  const ignore = maxIgnore === 0 ? fc.constant([]) : fc.oneof({ arbitrary: fc.constant([] as string[]), weight: 1 }, { arbitrary: ignoreList, weight: 3 });
  const ipv6 = ipv6Setting === undefined ? fc.boolean() : fc.constant(ipv6Setting);

  return fc
    .record({
      incomingProxyPort: fc.oneof(fc.constant(4143), port(1, 65535)),
      outgoingProxyPort: fc.oneof(fc.constant(4140), port(1, 65535)),
      proxyUid: fc.oneof(fc.constant(2102), fc.integer({ min: 1, max: 65535 })),
      proxyGid: withGid ? fc.oneof({ arbitrary: fc.constant(-1), weight: 3 }, { arbitrary: fc.integer({ min: 1, max: 65535 }), weight: 1 }) : fc.constant(-1),
      portsToRedirect: fc.array(port(1, 65535), { maxLength: maxRedirect }),
      inboundPortsToIgnore: ignore,
      outboundPortsToIgnore: ignore,
      subnets: fc.array(cidr({ family: 4, minPrefix: 8, hostBits: true }), { maxLength: maxSubnets }),
      useWaitFlag: fc.boolean(),
      iptablesMode: fc.constantFrom(...modes),
      ipv6,
    })
    .map(({ subnets, ...r }) => {
      // Distinct proxy ports: one REDIRECT target must not be mistaken for the other.
      const outgoing = r.outgoingProxyPort === r.incomingProxyPort ? (r.incomingProxyPort === 65535 ? 65534 : r.incomingProxyPort + 1) : r.outgoingProxyPort;
      return proxyInitConfig({ ...r, outgoingProxyPort: outgoing, subnetsToIgnore: r.ipv6 ? [] : subnets });
    });
}

// ---------------------------------------------------------------------------------------------
// Istio

/**
 * Constraints of {@link istioConfig}.
 *
 * @example
 * ```ts
 * const c: IstioConfigConstraints = { interceptionModes: ['REDIRECT'], dns: false, ipv6: true };
 * ```
 */
export interface IstioConfigConstraints {
  /**
   * Inbound interception modes (`-m`); `''` is upstream's default (REDIRECT).
   * @defaultValue ['', 'REDIRECT', 'TPROXY']
   */
  readonly interceptionModes?: readonly ('' | 'REDIRECT' | 'TPROXY')[];
  /**
   * Whether DNS capture (`--redirect-dns`, with `--capture-all-dns` or resolv.conf servers) is
   * sometimes on.
   * @defaultValue true
   */
  readonly dns?: boolean;
  /**
   * Whether the pod has IPv6 (`EnableIPv6`, an `ip6tables-restore` pass).
   * @defaultValue 'either'
   */
  readonly ipv6?: boolean | 'either';
  /**
   * Whether the owner-group filters (`ISTIO_OUTBOUND_OWNER_GROUPS[_EXCLUDE]`) are sometimes set.
   * @defaultValue true
   */
  readonly ownerGroups?: boolean;
  /**
   * Whether `-c` (excluded interfaces) and `-k` (virtual interfaces) are sometimes set.
   * @defaultValue true
   */
  readonly interfaces?: boolean;
  /**
   * Most entries in each port and CIDR list.
   * @defaultValue 4
   */
  readonly maxListLength?: number;
}

const ISTIO_INTERFACES = ['eth1', 'veth0', 'net1', 'kubevirt0', 'eth0'];

/**
 * istio-iptables configurations (`IstioConfig`) across its option space that istio-iptables
 * accepts: proxy ports, proxy UIDs and GIDs, REDIRECT and TPROXY inbound capture, inbound and
 * outbound port lists, CIDR includes and excludes of both families, excluded and virtual
 * interfaces, DNS capture, owner-group filters, drop-invalid.
 *
 * @example
 * ```ts
 * import * as fc from 'fast-check';
 * import { compileIstio } from 'netfilter-sim';
 * import { istioConfig } from 'netfilter-sim/arbitraries';
 * fc.assert(fc.property(istioConfig({ dns: false }), (config) => compileIstio(config).restore.length >= 1));
 * ```
 */
export function istioConfig(constraints: IstioConfigConstraints = {}): fc.Arbitrary<IstioConfig> {
  const name = 'istioConfig';
  checkKnownKeys(name, constraints, ['interceptionModes', 'dns', 'ipv6', 'ownerGroups', 'interfaces', 'maxListLength']);
  const modes = checkSubset(name, 'interceptionModes', constraints.interceptionModes, ['', 'REDIRECT', 'TPROXY'] as const, ['', 'REDIRECT', 'TPROXY']);
  if (modes.length === 0) badConstraint(name, 'interceptionModes', 'must not be empty');
  const dns = checkBool(name, 'dns', constraints.dns, true);
  const ipv6Fixed = constraints.ipv6 === undefined || constraints.ipv6 === 'either' ? undefined : checkBool(name, 'ipv6', constraints.ipv6, false);
  const groups = checkBool(name, 'ownerGroups', constraints.ownerGroups, true);
  const ifaces = checkBool(name, 'interfaces', constraints.interfaces, true);
  const maxList = checkInt(name, 'maxListLength', constraints.maxListLength, 0, 64, 4);

  const portList = fc.array(port(1, 65535), { maxLength: maxList }).map((ps) => ps.join(','));
  const idList = (known: number): fc.Arbitrary<string> =>
    fc.array(fc.oneof(fc.constant(known), fc.integer({ min: 1, max: 65535 })), { minLength: 1, maxLength: 2 }).map((ids) => [...new Set(ids)].join(','));
  const cidrs = (v6: boolean): fc.Arbitrary<string> =>
    fc.array(v6 ? fc.oneof(cidr({ family: 4, minPrefix: 8 }), cidr({ family: 6, minPrefix: 16 })) : cidr({ family: 4, minPrefix: 8 }), { maxLength: maxList })
      .map((cs) => cs.join(','));
  const ifaceList = ifaces ? fc.subarray(ISTIO_INTERFACES, { maxLength: 2 }).map((l) => l.join(',')) : fc.constant('');

  return fc
    .record({
      proxyPort: fc.oneof(fc.constant(15001), port(1, 65535)),
      inboundCapturePort: fc.oneof(fc.constant(15006), port(1, 65535)),
      inboundTunnelPort: fc.oneof(fc.constant(15008), port(1, 65535)),
      proxyUID: fc.oneof({ arbitrary: fc.constant(''), weight: 1 }, { arbitrary: idList(1337), weight: 3 }),
      proxyGID: fc.oneof({ arbitrary: fc.constant(''), weight: 3 }, { arbitrary: idList(1337), weight: 1 }),
      inboundInterceptionMode: fc.constantFrom(...modes),
      inboundPortsInclude: fc.oneof({ arbitrary: fc.constant('*'), weight: 4 }, { arbitrary: fc.constant(''), weight: 1 }, { arbitrary: portList, weight: 2 }),
      inboundPortsExclude: fc.oneof(fc.constant('15090,15021,15020'), portList),
      outboundPortsInclude: fc.oneof({ arbitrary: fc.constant(''), weight: 3 }, { arbitrary: portList, weight: 1 }),
      outboundPortsExclude: fc.oneof({ arbitrary: fc.constant(''), weight: 2 }, { arbitrary: portList, weight: 1 }),
      ipv6: ipv6Fixed === undefined ? fc.boolean() : fc.constant(ipv6Fixed),
      includeKind: fc.constantFrom('*', '*', 'list', ''),
      includeList: fc.boolean(),
      excludeList: fc.boolean(),
      rerouteVirtualInterfaces: ifaceList,
      excludeInterfaces: ifaceList,
      dnsMode: dns ? fc.constantFrom('off', 'off', 'all', 'servers') : fc.constant('off'),
      dropInvalid: fc.boolean(),
      ownerGroupsInclude: groups ? fc.oneof({ arbitrary: fc.constant('*'), weight: 4 }, { arbitrary: idList(1000), weight: 1 }) : fc.constant('*'),
      ownerGroupsExclude: groups ? fc.oneof({ arbitrary: fc.constant(''), weight: 4 }, { arbitrary: idList(1000), weight: 1 }) : fc.constant(''),
      hostIPv4LoopbackCidr: fc.constantFrom('127.0.0.1/32', '127.0.0.1/32', '127.0.0.0/8', '127.0.0.1/24'),
      cidrs4: cidrs(false),
      cidrs6: cidrs(true),
      excl4: cidrs(false),
      excl6: cidrs(true),
    })
    .map((r) => {
      // Distinct proxy ports, as a working mesh needs them.
      const used = new Set<number>();
      const distinct = (p: number): string => {
        let q = p;
        while (used.has(q)) q = q === 65535 ? 1 : q + 1;
        used.add(q);
        return `${q}`;
      };
      const proxyPort = distinct(r.proxyPort);
      const inboundCapturePort = distinct(r.inboundCapturePort);
      const inboundTunnelPort = distinct(r.inboundTunnelPort);
      const include = r.includeKind === '*' ? '*' : r.includeKind === '' ? '' : (r.ipv6 ? r.cidrs6 : r.cidrs4);
      return fillIstioConfig({
        proxyPort, inboundCapturePort, inboundTunnelPort,
        proxyUID: r.proxyUID,
        proxyGID: r.proxyGID,
        inboundInterceptionMode: r.inboundInterceptionMode,
        inboundPortsInclude: r.inboundPortsInclude,
        inboundPortsExclude: r.inboundPortsExclude,
        outboundPortsInclude: r.outboundPortsInclude,
        outboundPortsExclude: r.outboundPortsExclude,
        outboundIPRangesInclude: include,
        outboundIPRangesExclude: r.excludeList ? (r.ipv6 ? r.excl6 : r.excl4) : '',
        rerouteVirtualInterfaces: r.rerouteVirtualInterfaces,
        excludeInterfaces: r.excludeInterfaces,
        redirectDNS: r.dnsMode !== 'off',
        captureAllDNS: r.dnsMode === 'all',
        dnsServersV4: r.dnsMode === 'servers' ? ['10.96.0.10'] : [],
        dnsServersV6: r.dnsMode === 'servers' && r.ipv6 ? ['fd00::a'] : [],
        dropInvalid: r.dropInvalid,
        enableIPv6: r.ipv6,
        dualStack: r.ipv6,
        ownerGroupsInclude: r.ownerGroupsInclude,
        ownerGroupsExclude: r.ownerGroupsInclude === '*' ? r.ownerGroupsExclude : '',
        hostIPv4LoopbackCidr: r.hostIPv4LoopbackCidr,
      });
    });
}

// ---------------------------------------------------------------------------------------------
// Pods

/**
 * A container of a {@link PodManifest}.
 *
 * @example
 * ```ts
 * const c: PodManifestContainer = { name: 'linkerd-init', args: ['--incoming-proxy-port', '4143'] };
 * ```
 */
export interface PodManifestContainer {
  readonly name: string;
  readonly image?: string;
  readonly args?: readonly string[];
  readonly env?: readonly { readonly name: string; readonly value: string }[];
  readonly ports?: readonly { readonly containerPort: number }[];
  readonly securityContext?: { readonly runAsUser?: number; readonly runAsGroup?: number };
}

/**
 * A Kubernetes Pod manifest (`v1.Pod`, the fields meshes read), as plain JSON-ready data.
 *
 * @example
 * ```ts
 * const p: PodManifest = { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'web-1', annotations: { 'linkerd.io/inject': 'enabled' } },
 *   spec: { containers: [{ name: 'app' }] }, status: { podIP: '10.0.0.2', podIPs: [{ ip: '10.0.0.2' }] } };
 * ```
 */
export interface PodManifest {
  readonly apiVersion: 'v1';
  readonly kind: 'Pod';
  readonly metadata: {
    readonly name: string;
    readonly namespace?: string;
    readonly labels?: Readonly<Record<string, string>>;
    readonly annotations?: Readonly<Record<string, string>>;
  };
  readonly spec: {
    readonly initContainers?: readonly PodManifestContainer[];
    readonly containers: readonly PodManifestContainer[];
  };
  readonly status?: { readonly podIP?: string; readonly podIPs?: readonly { readonly ip: string }[] };
}

/**
 * Constraints of {@link pod}.
 *
 * @example
 * ```ts
 * const c: PodConstraints = { mesh: 'istio', form: 'injected', family: 'dual' };
 * ```
 */
export interface PodConstraints {
  /**
   * The mesh the pod is annotated for.
   * @defaultValue either
   */
  readonly mesh?: 'linkerd' | 'istio';
  /**
   * `written`: as a user writes it, with the inject annotation and mesh settings as
   * annotations. `injected`: as it runs, with the mesh's init container (its arguments from a
   * generated configuration) and proxy container.
   * @defaultValue 'written'
   */
  readonly form?: 'written' | 'injected';
  /**
   * The pod's addresses (`status.podIPs`): IPv4, IPv6, or both (IPv4 first).
   * @defaultValue 4
   */
  readonly family?: Family | 'dual';
}

function skipList(maxLength: number): fc.Arbitrary<string> {
  return fc.array(linkerdPortEntry(), { minLength: 1, maxLength }).map((l) => l.join(','));
}

function optionalAnnotations(entries: Readonly<Record<string, fc.Arbitrary<string>>>): fc.Arbitrary<Record<string, string>> {
  const keys = Object.keys(entries);
  return fc.record(entries, { requiredKeys: [] }).map((r) => {
    const out: Record<string, string> = {};
    for (const k of keys) {
      const v = (r as Record<string, string | undefined>)[k];
      if (v !== undefined) out[k] = v;
    }
    return out;
  });
}

const LINKERD_WRITTEN = optionalAnnotations({
  'config.linkerd.io/skip-inbound-ports': skipList(5),
  'config.linkerd.io/skip-outbound-ports': skipList(5),
  'config.linkerd.io/skip-subnets': fc.array(cidr({ minPrefix: 8 }), { minLength: 1, maxLength: 3 }).map((l) => l.join(',')),
  'config.linkerd.io/proxy-uid': fc.integer({ min: 1, max: 65535 }).map(String),
  'config.linkerd.io/inbound-port': port(1, 65535).map(String),
  'config.linkerd.io/outbound-port': port(1, 65535).map(String),
  'config.linkerd.io/proxy-enable-native-sidecar': fc.constantFrom('true', 'false'),
});

const ISTIO_WRITTEN = optionalAnnotations({
  'traffic.sidecar.istio.io/includeOutboundIPRanges': fc.oneof(fc.constant('*'), fc.array(cidr({ minPrefix: 8 }), { minLength: 1, maxLength: 3 }).map((l) => l.join(','))),
  'traffic.sidecar.istio.io/excludeOutboundIPRanges': fc.array(cidr({ minPrefix: 8 }), { minLength: 1, maxLength: 3 }).map((l) => l.join(',')),
  'traffic.sidecar.istio.io/includeInboundPorts': fc.oneof(fc.constant('*'), fc.array(port(1, 65535), { minLength: 1, maxLength: 3 }).map((l) => l.join(','))),
  'traffic.sidecar.istio.io/excludeInboundPorts': fc.array(port(1, 65535), { minLength: 1, maxLength: 3 }).map((l) => l.join(',')),
  'traffic.sidecar.istio.io/excludeOutboundPorts': fc.array(port(1, 65535), { minLength: 1, maxLength: 3 }).map((l) => l.join(',')),
  'traffic.sidecar.istio.io/includeOutboundPorts': fc.array(port(1, 65535), { minLength: 1, maxLength: 3 }).map((l) => l.join(',')),
  'sidecar.istio.io/interceptionMode': fc.constantFrom('REDIRECT', 'TPROXY'),
});

/**
 * Kubernetes Pod manifests (plain objects, ready for `JSON.stringify` or a YAML printer) for a
 * Linkerd or Istio mesh, as written (inject annotation and per-pod settings) or as injected (the
 * init container with its arguments, and the proxy container), with the pod's addresses in
 * `status.podIPs`.
 *
 * @example
 * ```ts
 * import * as fc from 'fast-check';
 * import { pod } from 'netfilter-sim/arbitraries';
 * const [p] = fc.sample(pod({ mesh: 'linkerd' }), { seed: 9, numRuns: 1 });
 * p.metadata?.annotations?.['linkerd.io/inject']; // 'enabled'
 * ```
 */
export function pod(constraints: PodConstraints = {}): fc.Arbitrary<PodManifest> {
  const name = 'pod';
  checkKnownKeys(name, constraints, ['mesh', 'form', 'family']);
  if (constraints.mesh !== undefined && constraints.mesh !== 'linkerd' && constraints.mesh !== 'istio') {
    badConstraint(name, 'mesh', `must be "linkerd" or "istio", got ${JSON.stringify(constraints.mesh)}`);
  }
  const form = constraints.form ?? 'written';
  if (form !== 'written' && form !== 'injected') badConstraint(name, 'form', `must be "written" or "injected", got ${JSON.stringify(constraints.form)}`);
  const family = constraints.family ?? 4;
  if (family !== 4 && family !== 6 && family !== 'dual') badConstraint(name, 'family', `must be 4, 6 or "dual", got ${JSON.stringify(constraints.family)}`);

  const podName = fc.tuple(fc.constantFrom('web', 'api', 'db', 'worker', 'client', 'server'), fc.stringMatching(/^[a-z0-9]{5}$/))
    .map(([base, hash]) => `${base}-${hash}`);
  const host = fc.integer({ min: 2, max: 254 });
  const ips = host.map((h) => {
    const v4 = `10.0.0.${h}`;
    const v6 = `fd00::${h.toString(16)}`;
    return family === 4 ? [v4] : family === 6 ? [v6] : [v4, v6];
  });
  const appPort = port(1, 65535);

  const meshes: ('linkerd' | 'istio')[] = constraints.mesh ? [constraints.mesh] : ['linkerd', 'istio'];
  const byMesh = meshes.map((mesh) => {
    const base = fc.record({ podName, namespace: fc.constantFrom('default', 'emojivoto', 'bookinfo', 'prod'), ips, appPort });
    if (form === 'written') {
      const annotations = mesh === 'linkerd'
        ? LINKERD_WRITTEN.map((a) => ({ 'linkerd.io/inject': 'enabled', ...a }))
        : ISTIO_WRITTEN.map((a) => ({ 'sidecar.istio.io/inject': 'true', ...a }));
      return fc.record({ base, annotations }).map(({ base: b, annotations: a }) => manifest(b, a, [], []));
    }
    if (mesh === 'linkerd') {
      return fc.record({ base, config: linkerdConfig() }).map(({ base: b, config }) =>
        manifest(b, { 'linkerd.io/inject': 'enabled' },
          [{ name: 'linkerd-init', args: formatProxyInitArgs(config), securityContext: { runAsUser: 65534 } }],
          [{ name: 'linkerd-proxy', securityContext: { runAsUser: config.proxyUid } }]));
    }
    return fc.record({ base, config: istioConfig({ ipv6: family !== 4 }) }).map(({ base: b, config }) => {
      const { argv, env } = formatIstioIptablesArgs(config);
      const uid = Number(config.proxyUID.split(',')[0] || 1337);
      return manifest(b, { 'sidecar.istio.io/inject': 'true', 'sidecar.istio.io/status': '{"initContainers":["istio-init"],"containers":["istio-proxy"]}' },
        [{ name: 'istio-init', args: ['istio-iptables', ...argv], env: Object.entries(env).map(([n, value]) => ({ name: n, value })), securityContext: { runAsUser: 0 } }],
        [{ name: 'istio-proxy', args: ['proxy', 'sidecar'], securityContext: { runAsUser: uid, runAsGroup: uid } }]);
    });
  });
  return byMesh.length === 1 ? byMesh[0]! : fc.oneof(...byMesh);
}

interface PodBase {
  readonly podName: string;
  readonly namespace: string;
  readonly ips: readonly string[];
  readonly appPort: number;
}

type Container = PodManifestContainer;

function manifest(b: PodBase, annotations: Record<string, string>, initContainers: Container[], sidecars: Container[]): PodManifest {
  const app = { name: 'app', image: 'registry.example/app:1.0', ports: [{ containerPort: b.appPort }], securityContext: { runAsUser: 1000 } };
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: b.podName, namespace: b.namespace, labels: { app: b.podName.split('-')[0]! }, annotations },
    spec: {
      ...(initContainers.length > 0 ? { initContainers } : {}),
      containers: [app, ...sidecars],
    },
    status: { podIP: b.ips[0]!, podIPs: b.ips.map((ip) => ({ ip })) },
  };
}
