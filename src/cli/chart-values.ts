/**
 * Injector chart values from repeatable `--set KEY=VALUE` options, as helm takes them (dotted
 * paths of the chart's values.yaml), for the Istio sidecar injector and Linkerd's proxy injector.
 * Only the values the injectors' templates read for the init container are known; any other key
 * is a usage error naming the known ones.
 *
 * @module
 */
import type { IstioInjectorValues } from '../compile/istio/inject.js';
import type { InjectorValuesInput } from '../compile/linkerd/injector.js';
import { UsageError } from './io.js';

type Kind = 'string' | 'bool' | 'int' | 'ports';
interface Key {
  readonly path: readonly string[];
  readonly kind: Kind;
}

/** Istio chart paths → {@link IstioInjectorValues} fields. */
const ISTIO_KEYS: Readonly<Record<string, Key>> = {
  'meshConfig.defaultConfig.proxyListenPort': { path: ['proxyListenPort'], kind: 'string' },
  'meshConfig.defaultConfig.proxyInboundListenPort': { path: ['proxyInboundListenPort'], kind: 'string' },
  'meshConfig.defaultConfig.interceptionMode': { path: ['interceptionMode'], kind: 'string' },
  'global.proxy.includeIPRanges': { path: ['includeIPRanges'], kind: 'string' },
  'global.proxy.excludeIPRanges': { path: ['excludeIPRanges'], kind: 'string' },
  'global.proxy.includeInboundPorts': { path: ['includeInboundPorts'], kind: 'string' },
  'global.proxy.excludeInboundPorts': { path: ['excludeInboundPorts'], kind: 'string' },
  'global.proxy.statusPort': { path: ['statusPort'], kind: 'string' },
  'global.proxy.includeOutboundPorts': { path: ['includeOutboundPorts'], kind: 'string' },
  'global.proxy.excludeOutboundPorts': { path: ['excludeOutboundPorts'], kind: 'string' },
  'global.nativeNftables': { path: ['nativeNftables'], kind: 'bool' },
  'pilot.cni.enabled': { path: ['cniEnabled'], kind: 'bool' },
  'global.proxy_init.forceApplyIptables': { path: ['forceApplyIptables'], kind: 'bool' },
};

/** Linkerd control-plane chart paths → {@link InjectorValuesInput} fields. */
const LINKERD_KEYS: Readonly<Record<string, Key>> = {
  disableIPv6: { path: ['disableIPv6'], kind: 'bool' },
  cniEnabled: { path: ['cniEnabled'], kind: 'bool' },
  'proxy.ports.admin': { path: ['proxy', 'ports', 'admin'], kind: 'int' },
  'proxy.ports.control': { path: ['proxy', 'ports', 'control'], kind: 'int' },
  'proxy.ports.inbound': { path: ['proxy', 'ports', 'inbound'], kind: 'int' },
  'proxy.ports.outbound': { path: ['proxy', 'ports', 'outbound'], kind: 'int' },
  'proxy.uid': { path: ['proxy', 'uid'], kind: 'int' },
  'proxy.gid': { path: ['proxy', 'gid'], kind: 'int' },
  'proxy.nativeSidecar': { path: ['proxy', 'nativeSidecar'], kind: 'bool' },
  'proxyInit.iptablesMode': { path: ['proxyInit', 'iptablesMode'], kind: 'string' },
  'proxyInit.ignoreInboundPorts': { path: ['proxyInit', 'ignoreInboundPorts'], kind: 'ports' },
  'proxyInit.ignoreOutboundPorts': { path: ['proxyInit', 'ignoreOutboundPorts'], kind: 'ports' },
  'proxyInit.kubeAPIServerPorts': { path: ['proxyInit', 'kubeAPIServerPorts'], kind: 'ports' },
  'proxyInit.skipSubnets': { path: ['proxyInit', 'skipSubnets'], kind: 'string' },
  'proxyInit.closeWaitTimeoutSecs': { path: ['proxyInit', 'closeWaitTimeoutSecs'], kind: 'int' },
  'proxyInit.logFormat': { path: ['proxyInit', 'logFormat'], kind: 'string' },
  'proxyInit.logLevel': { path: ['proxyInit', 'logLevel'], kind: 'string' },
  'proxyInit.runAsRoot': { path: ['proxyInit', 'runAsRoot'], kind: 'bool' },
};

function parseSets(pairs: readonly string[], keys: Readonly<Record<string, Key>>, chart: string): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const pair of pairs) {
    const eq = pair.indexOf('=');
    if (eq <= 0) throw new UsageError(`--set expects KEY=VALUE, got "${pair}"`);
    const name = pair.slice(0, eq);
    const text = pair.slice(eq + 1);
    const key = keys[name];
    if (key === undefined) throw new UsageError(`--set: unknown ${chart} value "${name}" (known: ${Object.keys(keys).join(', ')})`);
    let value: unknown = text;
    if (key.kind === 'bool') {
      // helm --set reads true/false as booleans
      if (text !== 'true' && text !== 'false') throw new UsageError(`--set ${name}: expected true or false, got "${text}"`);
      value = text === 'true';
    } else if (key.kind === 'int') {
      if (!/^-?\d+$/.test(text)) throw new UsageError(`--set ${name}: expected an integer, got "${text}"`);
      value = Number(text);
    } else if (key.kind === 'ports' && /^\d+$/.test(text)) {
      value = Number(text);
    }
    let node = out;
    for (const p of key.path.slice(0, -1)) node = (node[p] ??= {}) as Record<string, unknown>;
    node[key.path[key.path.length - 1]!] = value;
  }
  return out;
}

/**
 * The Istio injector values given by `--set` (istiod chart paths, e.g.
 * `global.nativeNftables=true`, `global.proxy.excludeIPRanges=10.0.0.0/8`). @internal
 *
 * @example
 * ```ts
 * istioValuesFromSet(['global.nativeNftables=true']); // { nativeNftables: true }
 * ```
 */
export function istioValuesFromSet(pairs: readonly string[]): IstioInjectorValues {
  return parseSets(pairs, ISTIO_KEYS, 'istiod chart') as IstioInjectorValues;
}

/**
 * The Linkerd injector values given by `--set` (linkerd-control-plane chart paths, e.g.
 * `proxyInit.ignoreOutboundPorts=3306`, `disableIPv6=false`). @internal
 *
 * @example
 * ```ts
 * linkerdValuesFromSet(['proxy.uid=2103']); // { proxy: { uid: 2103 } }
 * ```
 */
export function linkerdValuesFromSet(pairs: readonly string[]): InjectorValuesInput {
  return parseSets(pairs, LINKERD_KEYS, 'linkerd-control-plane chart') as InjectorValuesInput;
}
