/**
 * linkerd-cni's ADD for one pod (`linkerd/linkerd2-proxy-init` `cni-plugin/main.go`, `cmdAdd`):
 * the decision to leave a pod alone, the proxy-init options it builds from the CNI configuration's
 * `linkerd` block, the pod's (then its namespace's) annotations and the control-plane label, and
 * then the same rules proxy-init writes (`BuildFirewallConfiguration` + `ConfigureFirewall`).
 *
 * @module
 */
import { NetfilterSimError, diagnostic } from '../../model/errors.js';
import { namespaceFromObject, podFromObject, serviceFromObject, type Namespace, type Pod, type Service } from '../pod.js';
import { formatProxyInitArgs, proxyInitConfig, type ProxyInitConfig } from './config.js';
import { IPTABLES_BINARIES, LINKERD_ANNOTATIONS, LINKERD_CONTAINERS } from './defaults.js';
import { formatNumError, goAtoi } from './go.js';
import { compileProxyInit, type ProxyInitError, type ProxyInitPass, type ProxyInitResult } from './proxy-init.js';
import { cniPluginFeatures } from './version.js';
import { expectArgument } from '../../model/guard.js';

/**
 * The `linkerd` block of linkerd-cni's network configuration (`ProxyInit` in `cni-plugin/main.go`),
 * by its JSON keys. A missing key is Go's zero value: port 0, uid/gid 0 (no owner rule), empty
 * lists, `false`, and an empty `iptables-mode`, which the plugin turns into `legacy`.
 *
 * @example
 * ```ts
 * const conf: LinkerdCniConf = { 'incoming-proxy-port': 4143, 'outgoing-proxy-port': 4140, 'proxy-uid': 2102, 'iptables-mode': 'nft' };
 * ```
 */
export interface LinkerdCniConf {
  readonly 'incoming-proxy-port'?: number;
  readonly 'outgoing-proxy-port'?: number;
  readonly 'proxy-uid'?: number;
  readonly 'proxy-gid'?: number;
  readonly 'ports-to-redirect'?: readonly number[];
  readonly 'inbound-ports-to-ignore'?: readonly string[];
  readonly 'outbound-ports-to-ignore'?: readonly string[];
  readonly 'subnets-to-ignore'?: readonly string[];
  readonly simulate?: boolean;
  readonly 'use-wait-flag'?: boolean;
  readonly 'iptables-mode'?: string;
  readonly ipv6?: boolean;
}

/**
 * What {@link compileLinkerdCni} takes.
 *
 * @example
 * ```ts
 * const input: CompileLinkerdCniInput = { conf: JSON.parse(confText), pod: readPod(podYaml), namespace: readNamespace(nsYaml) };
 * ```
 */
export interface CompileLinkerdCniInput {
  /**
   * The CNI network configuration: a `.conflist` (its `linkerd-cni` plugin is used), a `.conf`
   * with a `linkerd` block, or the `linkerd` block itself.
   */
  readonly conf: unknown;
  /** The pod as the plugin fetches it: a {@link Pod} or a Pod manifest object. */
  readonly pod: Pod | unknown;
  /** The pod's namespace (annotations are looked up there when the pod lacks them). */
  readonly namespace?: Namespace | unknown;
  /**
   * The `default/kubernetes` Service, read for control-plane pods: its `port`s and integer
   * `targetPort`s are skipped outbound. `null` or absent: the lookup failed, `443` and `6443` are used.
   */
  readonly kubernetesService?: Service | unknown | null;
  /** `CNI_NETNS`. When given, every command is written `nsenter --net=<netns> -- …` as the plugin runs it. */
  readonly netns?: string;
  /** The pod network namespace's nat table before ADD (normally empty: a new sandbox). */
  readonly existing?: string;
  readonly existing6?: string;
  /** A cni-plugin release (`v1.4.0` … `main`, the default). */
  readonly upstreamVersion?: string;
  /**
   * The iptables binaries on the node's PATH (`iptables-nft`, `iptables-nft-save`, …). Absent:
   * every one is there. When the configured pair is missing, cni-plugin v1.7+ falls back to the
   * first pair present (nft, plain, legacy); older releases fail on the first command.
   */
  readonly binaries?: readonly string[];
}

/**
 * Why the plugin left a pod alone.
 *
 * @example
 * ```ts
 * compileLinkerdCni({ conf, pod: podWithLinkerdInit }).skipped;
 * // { reason: 'has-linkerd-init', message: 'linkerd-cni: linkerd-init initContainer is present, skipping.' }
 * ```
 */
export interface LinkerdCniSkip {
  readonly reason: 'has-linkerd-init' | 'no-linkerd-proxy';
  /** The plugin's (debug) log line. */
  readonly message: string;
}

/**
 * What {@link compileLinkerdCni} returns: a proxy-init result, or the reason no command ran.
 *
 * @example
 * ```ts
 * const r: LinkerdCniResult = compileLinkerdCni({ conf, pod });
 * if (r.skipped) console.log(r.skipped.message); else console.log(r.commands.join('\n'));
 * ```
 */
export interface LinkerdCniResult extends Omit<ProxyInitResult, 'config'> {
  /** The proxy-init options the plugin built (absent when the pod was skipped or ADD failed first). */
  readonly config?: ProxyInitConfig;
  /** proxy-init arguments that build the same firewall configuration. */
  readonly equivalentArgs?: readonly string[];
  readonly skipped?: LinkerdCniSkip;
  /** The prefix the plugin puts before every command: `nsenter --net=<CNI_NETNS> --`. */
  readonly netnsWrapper: string;
}

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);

function confError(message: string): never {
  throw new NetfilterSimError(diagnostic('BAD_CONFIG', message));
}

/**
 * Finds the `linkerd` block in a CNI configuration (see {@link CompileLinkerdCniInput.conf}) and
 * checks its types as Go's `json.Unmarshal` would. Throws {@link NetfilterSimError} (`BAD_CONFIG`).
 *
 * @example
 * ```ts
 * linkerdCniConf({ cniVersion: '0.3.1', plugins: [{ type: 'calico' }, { type: 'linkerd-cni', linkerd: { 'proxy-uid': 2102 } }] });
 * // { 'proxy-uid': 2102 }
 * ```
 */
export function linkerdCniConf(conf: unknown): LinkerdCniConf {
  if (!isObj(conf)) confError('the CNI configuration must be a JSON object');
  let block: unknown = conf;
  if (Array.isArray(conf['plugins'])) {
    const plugin = conf['plugins'].find((p) => isObj(p) && p['type'] === 'linkerd-cni');
    if (!isObj(plugin)) confError('the CNI configuration list has no plugin of type "linkerd-cni"');
    block = plugin['linkerd'] ?? {};
  } else if ('linkerd' in conf) {
    block = conf['linkerd'];
  }
  if (!isObj(block)) confError('the "linkerd" block must be a JSON object');
  const ints = ['incoming-proxy-port', 'outgoing-proxy-port', 'proxy-uid', 'proxy-gid'];
  const bools = ['simulate', 'use-wait-flag', 'ipv6'];
  for (const [k, v] of Object.entries(block)) {
    if (v === null) continue;
    const where = `Go struct field ProxyInit.linkerd.${k}`;
    if (ints.includes(k) && (typeof v !== 'number' || !Number.isInteger(v))) {
      confError(`json: cannot unmarshal ${jsonType(v)} into ${where} of type int`);
    }
    if (bools.includes(k) && typeof v !== 'boolean') confError(`json: cannot unmarshal ${jsonType(v)} into ${where} of type bool`);
    if (k === 'iptables-mode' && typeof v !== 'string') confError(`json: cannot unmarshal ${jsonType(v)} into ${where} of type string`);
    if (k === 'ports-to-redirect' && (!Array.isArray(v) || !v.every((x) => typeof x === 'number' && Number.isInteger(x)))) {
      confError(`json: cannot unmarshal ${jsonType(v)} into ${where} of type []int`);
    }
    if (['inbound-ports-to-ignore', 'outbound-ports-to-ignore', 'subnets-to-ignore'].includes(k)
      && (!Array.isArray(v) || !v.every((x) => typeof x === 'string'))) {
      confError(`json: cannot unmarshal ${jsonType(v)} into ${where} of type []string`);
    }
  }
  return block as LinkerdCniConf;
}

function jsonType(v: unknown): string {
  if (Array.isArray(v)) return 'array';
  if (typeof v === 'number') return Number.isInteger(v) ? 'number' : `number ${v}`;
  return typeof v === 'object' ? 'object' : typeof v;
}

function asPod(v: unknown): Pod {
  if (isObj(v) && Array.isArray(v['containers']) && !('spec' in v)) return v as unknown as Pod;
  return podFromObject(v);
}

function asNamespace(v: unknown): Namespace | undefined {
  if (v === undefined || v === null) return undefined;
  if (isObj(v) && isObj(v['annotations']) && !('metadata' in v)) return v as unknown as Namespace;
  return namespaceFromObject(v);
}

function asService(v: unknown): Service | undefined {
  if (v === undefined || v === null) return undefined;
  if (isObj(v) && Array.isArray(v['ports']) && !('spec' in v)) {
    return { name: 'kubernetes', clusterIPs: [], ...(v as object), ports: (v['ports'] as unknown[]).map((p) => ({ protocol: 'TCP', ...(p as object) })) } as unknown as Service;
  }
  return serviceFromObject(v);
}

/**
 * Compiles what linkerd-cni does at CNI ADD for a pod: nothing when the pod has a `linkerd-init`
 * init container or no `linkerd-proxy` container (in `containers` or, as a native sidecar, in
 * `initContainers`); otherwise the proxy-init run built from the configuration, with
 * `config.linkerd.io/skip-outbound-ports` (replaces), `skip-inbound-ports` (appended),
 * `skip-subnets` (replaces), `proxy-uid`/`proxy-gid` (a value `strconv.Atoi` rejects fails ADD)
 * read from the pod, else its namespace, and the control-plane label's kube-apiserver ports.
 *
 * @example
 * ```ts
 * const r = compileLinkerdCni({
 *   conf: { linkerd: { 'incoming-proxy-port': 4143, 'outgoing-proxy-port': 4140, 'proxy-uid': 2102,
 *                      'inbound-ports-to-ignore': ['4191', '4190'], 'iptables-mode': 'nft' } },
 *   pod: { kind: 'Pod', metadata: { name: 'web' }, spec: { containers: [{ name: 'linkerd-proxy' }, { name: 'web' }] } },
 * });
 * r.commands[2]; // 'iptables-nft -t nat -A PROXY_INIT_REDIRECT -p tcp --match multiport --dports 4191,4190 …'
 * ```
 */
export function compileLinkerdCni(input: CompileLinkerdCniInput): LinkerdCniResult {
  expectArgument(input, 'object', 'input');
  const plugin = cniPluginFeatures(input.upstreamVersion ?? 'main');
  if (!plugin) {
    throw new NetfilterSimError(diagnostic('BAD_CONFIG', `unknown or unmodelled cni-plugin version "${input.upstreamVersion}" (a release from v1.4.0 to v1.7.0-alpha.1, or main)`));
  }
  const netnsWrapper = `nsenter --net=${input.netns ?? '<CNI_NETNS>'} --`;
  const conf = linkerdCniConf(input.conf);
  const fallback = binaryFallback(conf, input.binaries, plugin.iptablesBinFallback);
  const mode = fallback.mode;
  const bins = mode === 'legacy' || mode === 'nft' || mode === 'plain' ? IPTABLES_BINARIES[mode] : undefined;
  const pass = (family: 4 | 6, existing: string | undefined): ProxyInitPass =>
    ({ family, ...bins![family], ...(existing !== undefined ? { existing } : {}) });
  const passes: ProxyInitPass[] = !bins ? [] : conf.ipv6 === true ? [pass(4, input.existing), pass(6, input.existing6)] : [pass(4, input.existing)];
  const empty = { upstreamVersion: plugin.proxyInit, commands: [], runs: [], ipv6: false, passes: passes.filter((p) => p.family === 4), log: [], warnings: [], netnsWrapper };
  const pod = asPod(input.pod);
  const namespace = asNamespace(input.namespace);

  let hasProxy = pod.containers.some((c) => c.name === LINKERD_CONTAINERS.proxy);
  let hasInit = false;
  for (const c of pod.initContainers) {
    if (c.name === LINKERD_CONTAINERS.init) hasInit = true;
    if (c.name === LINKERD_CONTAINERS.proxy && plugin.nativeSidecarDetection) hasProxy = true;
  }
  if (!hasProxy || hasInit) {
    const skipped: LinkerdCniSkip = hasInit
      ? { reason: 'has-linkerd-init', message: 'linkerd-cni: linkerd-init initContainer is present, skipping.' }
      : { reason: 'no-linkerd-proxy', message: 'linkerd-cni: linkerd-proxy is not present, skipping.' };
    return { ...empty, ipv6: conf.ipv6 === true, passes, skipped };
  }

  // getAnnotationOverride: the pod's annotation if present (even empty), else the namespace's.
  const override = (key: string): string => {
    if (Object.prototype.hasOwnProperty.call(pod.annotations, key)) return pod.annotations[key]!;
    return namespace?.annotations[key] ?? '';
  };
  let outbound = [...(conf['outbound-ports-to-ignore'] ?? [])];
  let inbound = [...(conf['inbound-ports-to-ignore'] ?? [])];
  let subnets = [...(conf['subnets-to-ignore'] ?? [])];
  let proxyUid = conf['proxy-uid'] ?? 0;
  let proxyGid = conf['proxy-gid'] ?? 0;
  const log: string[] = [];

  const skipOutbound = override(LINKERD_ANNOTATIONS.skipOutboundPorts);
  if (skipOutbound !== '') outbound = skipOutbound.split(',');
  const skipInbound = override(LINKERD_ANNOTATIONS.skipInboundPorts);
  if (skipInbound !== '') inbound = [...inbound, ...skipInbound.split(',')];
  const skipSubnets = override(LINKERD_ANNOTATIONS.skipSubnets);
  if (skipSubnets !== '') subnets = skipSubnets.split(',');
  for (const [key, set] of [
    [LINKERD_ANNOTATIONS.proxyUid, (v: number) => (proxyUid = v)],
    [LINKERD_ANNOTATIONS.proxyGid, (v: number) => (proxyGid = v)],
  ] as const) {
    const text = override(key);
    if (text === '') continue;
    const r = goAtoi(text);
    if ('error' in r) {
      const message = formatNumError(r.error);
      const error: ProxyInitError = { stage: 'cni-annotation', message, exitCode: 1, stderrFirstLine: message };
      return { ...empty, error };
    }
    set(r.value);
  }
  if ((pod.labels[LINKERD_ANNOTATIONS.controlPlaneComponentLabel] ?? '') !== '') {
    const service = asService(input.kubernetesService);
    if (service) {
      for (const p of service.ports) {
        outbound.push(String(p.port));
        if (typeof p.targetPort === 'number') outbound.push(String(p.targetPort));
      }
    } else {
      outbound.push('443', '6443');
    }
    log.push('linkerd-cni: control plane component: kube-apiserver ports added to OutboundPortsToIgnore');
  }

  const config = proxyInitConfig({
    incomingProxyPort: conf['incoming-proxy-port'] ?? 0,
    outgoingProxyPort: conf['outgoing-proxy-port'] ?? 0,
    proxyUid,
    proxyGid,
    portsToRedirect: conf['ports-to-redirect'] ?? [],
    inboundPortsToIgnore: inbound,
    outboundPortsToIgnore: outbound,
    subnetsToIgnore: subnets,
    simulate: conf.simulate ?? false,
    netns: input.netns ?? '',
    useWaitFlag: conf['use-wait-flag'] ?? false,
    // Backwards compatibility: an empty mode is legacy.
    iptablesMode: mode,
    ipv6: conf.ipv6 ?? false,
  });
  if (fallback.error) return { ...empty, ipv6: conf.ipv6 === true, passes, warnings: fallback.warnings, error: fallback.error };
  const result = compileProxyInit(config, {
    upstreamVersion: plugin.proxyInit,
    ...(input.existing !== undefined ? { existing: input.existing } : {}),
    ...(input.existing6 !== undefined ? { existing6: input.existing6 } : {}),
  });
  return {
    ...result,
    warnings: [...fallback.warnings, ...result.warnings],
    log: [...log, ...result.log],
    equivalentArgs: formatProxyInitArgs({ ...config, netns: '' }),
    netnsWrapper,
  };
}

/**
 * cni-plugin's binary resolution: the configured mode's pair when it is on the PATH; otherwise,
 * from v1.7 (`resolveBinFallback`), the first pair present of nft, plain, legacy for the family,
 * with upstream's warning; before v1.7 the first command (the save) fails.
 */
function binaryFallback(
  conf: LinkerdCniConf,
  binaries: readonly string[] | undefined,
  fallbackEnabled: boolean,
): { mode: string; warnings: string[]; error?: ProxyInitError } {
  const mode = conf['iptables-mode'] || 'legacy';
  if (binaries === undefined || (mode !== 'legacy' && mode !== 'nft' && mode !== 'plain')) return { mode, warnings: [] };
  const has = (b: { bin: string; saveBin: string }): boolean => binaries.includes(b.bin) && binaries.includes(b.saveBin);
  const families: (4 | 6)[] = conf.ipv6 === true ? [4, 6] : [4];
  const configured = IPTABLES_BINARIES[mode];
  if (families.every((f) => has(configured[f]))) return { mode, warnings: [] };
  const first = families.find((f) => !has(configured[f]))!;
  if (!fallbackEnabled) {
    const missing = binaries.includes(configured[first].saveBin) ? configured[first].bin : configured[first].saveBin;
    const message = `exec: "${missing}": executable file not found in $PATH`;
    return { mode, warnings: [], error: { stage: 'iptables', message, exitCode: 1, stderrFirstLine: `Error: ${message}`, pass: first === 4 ? 'ipv4' : 'ipv6' } };
  }
  const picks = families.map((f) => (has(configured[f]) ? mode : (['nft', 'plain', 'legacy'] as const).find((m) => has(IPTABLES_BINARIES[m][f]))));
  const warnings: string[] = [];
  families.forEach((f, i) => {
    const pick = picks[i];
    const want = configured[f];
    if (pick === undefined) {
      warnings.push(`iptables: no suitable binaries found on PATH; commands may fail (binPath ${want.bin}, saveBinPath ${want.saveBin})`);
    } else if (pick !== mode) {
      const got = IPTABLES_BINARIES[pick][f];
      warnings.push(`iptables: configured binaries not found; applying fallback to available binaries (requested ${want.bin} and ${want.saveBin}, fallback ${got.bin} and ${got.saveBin})`);
    }
  });
  if (picks.some((p) => p === undefined)) {
    const f = families[picks.findIndex((p) => p === undefined)]!;
    const message = `exec: "${binaries.includes(configured[f].saveBin) ? configured[f].bin : configured[f].saveBin}": executable file not found in $PATH`;
    return { mode, warnings, error: { stage: 'iptables', message, exitCode: 1, stderrFirstLine: `Error: ${message}`, pass: f === 4 ? 'ipv4' : 'ipv6' } };
  }
  if (picks[0] !== picks[picks.length - 1]) {
    throw new NetfilterSimError(diagnostic('UNSUPPORTED', `the IPv4 and IPv6 passes fall back to different iptables binaries (${picks.join(', ')}): not modelled`));
  }
  return { mode: picks[0]!, warnings };
}
