/**
 * A Linkerd pod as it runs: injected with the injector's view when written with
 * `linkerd.io/inject: enabled`, its rules from `linkerd-init`'s arguments or from linkerd-cni,
 * its start-up order (`charts/patch/templates/patch.json`, reference §3.4) and its proxy.
 *
 * @module
 */
import type { Namespace, Pod, PodContainer } from '../compile/pod.js';
import { compileLinkerdCni } from '../compile/linkerd/cni.js';
import { explainProxyInitComment } from '../compile/linkerd/comments.js';
import { parseProxyInitArgs } from '../compile/linkerd/config.js';
import { CNI_DEFAULT_CONF, INJECTOR_DEFAULTS, LINKERD_ANNOTATIONS, LINKERD_CONTAINERS } from '../compile/linkerd/defaults.js';
import { injectProxyInitArgs, linkerdInjectorSkip } from '../compile/linkerd/injector.js';
import { linkerdRulesets } from '../compile/linkerd/output.js';
import { compileProxyInit, type ProxyInitResult } from '../compile/linkerd/proxy-init.js';
import type { LinkerdCniResult } from '../compile/linkerd/cni.js';
import type { Ruleset } from '../model/types.js';
import {
  annotationSource,
  badPod,
  container,
  hasRules,
  parsePortList,
  ruleNotes,
  startupSteps,
  type PrepareOptions,
  type RuleExplainer,
} from './common.js';
import type { MeshPod, MeshProxy, StartupStep } from './types.js';

/**
 * Linkerd's defaults the scenario relies on, with their upstream sources.
 *
 * @example
 * ```ts
 * LINKERD_SCENARIO_DEFAULTS.nativeSidecar; // true (proxy.nativeSidecar, Linkerd 2.20)
 * ```
 */
export const LINKERD_SCENARIO_DEFAULTS = {
  /** `proxy.nativeSidecar` (`charts/linkerd-control-plane/values.yaml`; default since edge-26.5.2 / 2.20). */
  nativeSidecar: INJECTOR_DEFAULTS.proxy.nativeSidecar,
  /** `proxy.uid`. */
  proxyUid: INJECTOR_DEFAULTS.proxy.uid,
  /** `proxy.opaquePorts`: the ports every proxy treats as opaque unless `config.linkerd.io/opaque-ports` says otherwise. */
  opaquePorts: '25,587,3306,4444,5432,6379,9300,11211',
  /** `linkerd-network-validator` (`_network-validator.tpl`): its uid, what it connects to, its failure code. */
  validator: { uid: 65534, probe4: '1.1.1.1:20001', probe6: '[fd00::1]:20001', exitCode: 95 },
  /** `proxyInit.runAsUser`: linkerd-init runs as nobody with NET_ADMIN/NET_RAW. */
  initUid: 65534,
} as const;

const C = LINKERD_CONTAINERS;
const A = LINKERD_ANNOTATIONS;
const CNI_ANNOTATIONS: ReadonlySet<string> = new Set([A.skipOutboundPorts, A.skipInboundPorts, A.skipSubnets, A.proxyUid, A.proxyGid]);

function injectRequested(pod: Pod, ns: Namespace | undefined): { inject: boolean; where: string } | null {
  const src = annotationSource(pod, ns, A.inject);
  if (!src) return null;
  return { inject: src.value === 'enabled' || src.value === 'ingress', where: `${A.inject}: ${src.value} on ${src.where}` };
}

function envPort(c: PodContainer | undefined, names: readonly string[]): number | undefined {
  for (const n of names) {
    const v = c?.env.find((e) => e.name === n)?.value;
    if (v === undefined) continue;
    const m = /:(\d+)\s*(,|$)/.exec(v);
    if (m) return Number(m[1]);
  }
  return undefined;
}

function intAnnotation(pod: Pod, ns: Namespace | undefined, key: string): number | undefined {
  const s = annotationSource(pod, ns, key);
  if (!s || !/^\d+$/.test(s.value.trim())) return undefined;
  return Number(s.value.trim());
}

/**
 * Prepares a Linkerd pod: injects it if written with the inject annotation (and not yet
 * injected), computes its rules and start-up order, and finds its proxy.
 * @internal
 */
export function prepareLinkerdPod(input: Pod, options: PrepareOptions): MeshPod {
  const ns = options.namespace;
  const settings: string[] = [];
  const warnings: string[] = [];
  const all = (p: Pod): PodContainer[] => [...p.initContainers, ...p.containers];
  const hasProxy = all(input).some((c) => c.name === C.proxy);
  let pod = input;
  let source: MeshPod['source'] = 'plain';

  if (hasProxy) {
    source = 'running';
    settings.push(`${input.name}: already injected (has a ${C.proxy} container): rules and start-up order are read from the manifest`);
  } else {
    const asked = injectRequested(input, ns);
    const skip = asked?.inject ? linkerdInjectorSkip(input, ns, 'webhook') : null;
    const req = skip !== null ? { inject: false, where: `${asked!.where}, but the proxy injector skips the pod: ${skip}` } : asked;
    if (req?.inject) {
      source = 'injected';
      const nativeDefault = options.nativeSidecars ?? LINKERD_SCENARIO_DEFAULTS.nativeSidecar;
      const inj = injectProxyInitArgs({
        pod: input,
        ...(ns ? { namespace: ns } : {}),
        values: { cniEnabled: options.cni ?? false, proxy: { nativeSidecar: nativeDefault } },
      });
      if (inj.error) badPod(`the injector cannot render linkerd-init for pod ${input.name}: ${inj.error}`);
      warnings.push(...inj.warnings);
      const v = inj.values;
      const proxy = container(C.proxy, {
        ports: [
          { containerPort: v.proxy.ports.inbound, name: 'linkerd-proxy', protocol: 'TCP' },
          { containerPort: v.proxy.ports.admin, name: 'linkerd-admin', protocol: 'TCP' },
        ],
        runAsUser: v.proxy.uid,
        ...(v.proxy.gid >= 0 ? { runAsGroup: v.proxy.gid } : {}),
        ...(inj.nativeSidecar ? { restartPolicy: 'Always' } : {}),
      });
      const init = inj.args
        ? container(C.init, { args: [...inj.args], runAsUser: LINKERD_SCENARIO_DEFAULTS.initUid })
        : container(C.networkValidator, { runAsUser: LINKERD_SCENARIO_DEFAULTS.validator.uid });
      pod = inj.nativeSidecar
        ? { ...input, initContainers: [init, proxy, ...input.initContainers], containers: [...input.containers] }
        : { ...input, initContainers: [...input.initContainers, init], containers: [proxy, ...input.containers] };
      settings.push(
        `${input.name}: injected (${req.where}) with the injector's defaults: ${inj.nativeSidecar ? 'native sidecar (linkerd-proxy is an init container with restartPolicy: Always, inserted at initContainers/1)' : 'proxy as a regular container'}` +
          `, ${inj.args ? `linkerd-init ${inj.placement === 'first' ? 'first' : 'appended last'} among the init containers` : `linkerd-cni writes the rules; ${C.networkValidator} ${inj.placement === 'first' ? 'first' : 'appended last'} among the init containers`}`,
      );
      if (inj.args) settings.push(`${input.name}: linkerd-init ${inj.args.join(' ')}`);
    } else if (req) {
      settings.push(`${input.name}: not meshed (${req.where})`);
    } else {
      settings.push(`${input.name}: not meshed (no ${C.proxy} container, no ${A.inject} annotation on the pod or its namespace)`);
    }
  }

  const initC = pod.initContainers.find((c) => c.name === C.init);
  const validatorC = pod.initContainers.find((c) => c.name === C.networkValidator);
  const proxyC = all(pod).find((c) => c.name === C.proxy);
  const cniMode = source !== 'plain' && (options.cni === true || (validatorC !== undefined && initC === undefined));
  if (source === 'running' && options.cni !== true && cniMode) {
    settings.push(`${pod.name}: has ${C.networkValidator} and no ${C.init}: its rules come from linkerd-cni`);
  }

  let rules4: Ruleset | null = null;
  let rules6: Ruleset | null = null;
  let rulesBy: string | null = null;
  let install: MeshPod['install'] = 'none';
  let result: ProxyInitResult | LinkerdCniResult | null = null;
  let sandbox: StartupStep | null = null;
  const cniNotReady = cniMode && options.cniNotReady === true;

  if (initC) {
    install = 'init-container';
    rulesBy = C.init;
    const parsed = parseProxyInitArgs(initC.args.length > 0 ? initC.args : initC.command.slice(1));
    if (!parsed.ok) badPod(`linkerd-init in pod ${pod.name} would fail: Error: ${parsed.error}`);
    result = compileProxyInit(parsed.config);
    if (result.error) warnings.push(`linkerd-init in pod ${pod.name} fails: ${result.error.stderrFirstLine} (the pod does not start)`);
    if (cniMode) {
      sandbox = { stage: 'sandbox', name: 'linkerd-cni', effect: 'rules', active: false, note: 'linkerd-cni leaves pods with a linkerd-init init container alone' };
    }
  } else if (cniMode) {
    install = 'cni';
    rulesBy = 'linkerd-cni';
    if (cniNotReady) {
      sandbox = { stage: 'sandbox', name: 'linkerd-cni', effect: 'rules', active: false, note: 'the linkerd-cni plugin was not installed on the node yet when the pod sandbox was created: no rules' };
      settings.push(`${pod.name}: linkerd-cni was not ready when the pod started: no rules were written`);
    } else {
      const cni = compileLinkerdCni({ conf: { linkerd: CNI_DEFAULT_CONF }, pod, ...(ns ? { namespace: ns } : {}) });
      if (cni.skipped) {
        sandbox = { stage: 'sandbox', name: 'linkerd-cni', effect: 'rules', active: false, note: cni.skipped.message };
      } else if (cni.error) {
        sandbox = { stage: 'sandbox', name: 'linkerd-cni', effect: 'rules', active: false, note: `CNI ADD fails: ${cni.error.message}` };
        warnings.push(`linkerd-cni fails for pod ${pod.name}: ${cni.error.message} (the sandbox is not created)`);
      } else {
        result = cni;
        sandbox = { stage: 'sandbox', name: 'linkerd-cni', effect: 'rules', active: true, note: 'linkerd-cni writes the rules when the pod sandbox is created, before any container' };
        if (cni.equivalentArgs) settings.push(`${pod.name}: linkerd-cni configuration ≡ proxy-init ${cni.equivalentArgs.join(' ')}`);
      }
    }
  } else if (proxyC) {
    warnings.push(`pod ${pod.name} has ${C.proxy} but no ${C.init} init container, and --cni was not given: no rules`);
  }
  if (result) {
    for (const r of linkerdRulesets(result)) {
      if (!hasRules(r.ruleset)) continue;
      if (r.family === 4) rules4 = r.ruleset;
      else rules6 = r.ruleset;
    }
  }

  if (source === 'running' && proxyC && options.nativeSidecars !== undefined) {
    const native = pod.initContainers.includes(proxyC) && proxyC.restartPolicy === 'Always';
    if (native !== options.nativeSidecars) {
      warnings.push(`pod ${pod.name} is given as it runs: its proxy runs ${native ? 'as a native sidecar' : 'as a regular container'}, whatever the native-sidecars setting says`);
    }
  }
  let proxy: MeshProxy | null = null;
  if (proxyC) {
    const cfgUid = result?.config?.proxyUid;
    const uid = proxyC.runAsUser ?? intAnnotation(pod, ns, A.proxyUid) ?? (cfgUid !== undefined && cfgUid > 0 ? cfgUid : LINKERD_SCENARIO_DEFAULTS.proxyUid);
    const gid = proxyC.runAsGroup ?? uid;
    const nativeSidecar = pod.initContainers.some((c) => c === proxyC) && proxyC.restartPolicy === 'Always';
    const port = (env: readonly string[], ann: string, fallback: number): number => envPort(proxyC, env) ?? intAnnotation(pod, ns, ann) ?? fallback;
    const d = INJECTOR_DEFAULTS.proxy.ports;
    proxy = {
      container: C.proxy,
      uid,
      gid,
      outboundPort: port(['LINKERD2_PROXY_OUTBOUND_LISTEN_ADDRS', 'LINKERD2_PROXY_OUTBOUND_LISTEN_ADDR'], A.outboundPort, d.outbound),
      inboundPort: port(['LINKERD2_PROXY_INBOUND_LISTEN_ADDR'], A.inboundPort, d.inbound),
      otherPorts: [
        { port: port(['LINKERD2_PROXY_ADMIN_LISTEN_ADDR'], A.adminPort, d.admin), role: 'admin (metrics, probes)' },
        { port: port(['LINKERD2_PROXY_CONTROL_LISTEN_ADDR'], A.controlPort, d.control), role: 'control (tap)' },
      ],
      ipv6: rules6 !== null,
      nativeSidecar,
    };
  }

  const annotations: Record<string, string> = { ...(ns?.annotations ?? {}), ...pod.annotations };
  const opaqueSrc = annotationSource(pod, ns, A.opaquePorts);
  const opaquePorts = proxy ? parsePortList(opaqueSrc?.value ?? LINKERD_SCENARIO_DEFAULTS.opaquePorts) : [];

  const startup = startupSteps(pod, sandbox, (c, stage) => {
    if (c.name === C.init) return { effect: 'rules', note: 'linkerd-init writes the rules' + (result && 'error' in result && result.error ? ' (and fails)' : '') };
    if (c.name === C.networkValidator) return { effect: 'validator', note: 'checks that the rules redirect its own connection to its listener on 4140 (exit 95 otherwise)' };
    if (c === proxyC) {
      return stage === 'init' && c.restartPolicy === 'Always'
        ? { effect: 'proxy', note: 'native sidecar: linkerd-proxy starts here and keeps running for the init containers after it' }
        : { effect: 'proxy', note: stage === 'init' ? 'linkerd-proxy as a plain init container runs to completion (it never serves)' : 'linkerd-proxy starts with the containers, after every init container' };
    }
    return { effect: 'none', note: c.restartPolicy === 'Always' && stage === 'init' ? 'a native sidecar of the application' : stage === 'init' ? 'an application init container' : 'an application container' };
  });

  const explain = linkerdExplainer(pod, ns, rulesBy);
  const apps = pod.containers.filter((c) => c !== proxyC);
  return {
    mesh: 'linkerd',
    name: pod.name,
    pod,
    source,
    install,
    rulesBy: rules4 || rules6 ? rulesBy : null,
    rules4,
    rules6,
    ruleNotes: ruleNotes([rules4, rules6], explain),
    proxy,
    startup,
    apps,
    settings,
    annotations,
    opaquePorts,
    ipCommands: [],
    cniNotReady,
    warnings,
  };
}

function linkerdExplainer(pod: Pod, ns: Namespace | undefined, rulesBy: string | null): RuleExplainer {
  return ({ chain, comment, text }) => {
    if (comment === null) return { why: 'not written by proxy-init', setting: null };
    const e = explainProxyInitComment(comment, chain);
    if (!e) return { why: `comment "${comment}" is not one proxy-init writes`, setting: null };
    const parts: string[] = [];
    // linkerd-cni reads only these annotations (cni-plugin/main.go); the port annotations are the injector's.
    const annotation = rulesBy === 'linkerd-cni' && e.annotation && !CNI_ANNOTATIONS.has(e.annotation) ? undefined : e.annotation;
    const ann = annotation ? annotationSource(pod, ns, annotation) : undefined;
    const value = e.value?.replace(/:/g, '-') ?? /--to-ports (\d+)/.exec(text)?.[1] ?? /--uid-owner (\d+)/.exec(text)?.[1] ?? /--gid-owner (\d+)/.exec(text)?.[1];
    if (e.option) parts.push(`${rulesBy === 'linkerd-cni' ? `linkerd-cni "${e.cniKey}"` : `linkerd-init ${e.option}`}${value ? ` ${value}` : ''}`);
    if (ann) parts.push(`from ${annotation}: "${ann.value}" on ${ann.where}`);
    else if (annotation && rulesBy === 'linkerd-init' && e.chartValue) parts.push(`chart value ${e.chartValue}, or the ${annotation} annotation`);
    else if (annotation && rulesBy === 'linkerd-cni' && e.cniKey) parts.push(`the linkerd-cni configuration, or the ${annotation} annotation`);
    else if (rulesBy === 'linkerd-cni' && e.cniKey) parts.push('the linkerd-cni configuration');
    return { why: e.summary, setting: parts.length > 0 ? parts.join(', ') : null };
  };
}
