/**
 * An Istio pod as it runs: injected as the sidecar injector would when written with
 * `sidecar.istio.io/inject: "true"` (or in an injection-enabled namespace), its rules from
 * `istio-init`'s arguments or from istio-cni, its start-up order (reference §8) and its proxy.
 *
 * @module
 */
import type { Namespace, Pod, PodContainer } from '../compile/pod.js';
import { parseGoBool } from '../compile/istio/args.js';
import { parseIstioIptablesCommandLine } from '../compile/istio/args.js';
import { compileIstioCni } from '../compile/istio/cni.js';
import { compileIstio, type IstioCompileResult } from '../compile/istio/compile.js';
import { detectEnableIPv6 } from '../compile/istio/config.js';
import { ISTIO_CNI_ANNOTATIONS, ISTIO_CNI_DEFAULTS, ISTIO_IPTABLES_DEFAULTS } from '../compile/istio/defaults.js';
import { istioRulesets } from '../compile/istio/format.js';
import { istioInitArgsForPod, istioInjectorSkip } from '../compile/istio/inject.js';
import type { Ruleset } from '../model/types.js';
import { container, hasRules, ruleNotes, startupSteps, type PrepareOptions, type RuleExplainer } from './common.js';
import type { MeshPod, MeshProxy, StartupStep } from './types.js';
import { ambientDecision, prepareAmbientPod } from './ambient.js';

/**
 * Istio's defaults the scenario relies on.
 *
 * @example
 * ```ts
 * ISTIO_SCENARIO_DEFAULTS.validator.exitCode; // 126
 * ```
 */
export const ISTIO_SCENARIO_DEFAULTS = {
  /**
   * Native sidecars: istiod's `ENABLE_NATIVE_SIDECARS` defaults to `auto`, which turns them on
   * only when the pod's node (or, for an unscheduled pod, every node) runs kubelet 1.33 or newer
   * (`DetectNativeSidecar`, `pkg/kube/inject/webhook.go`); `true`/`false` force it. The pod
   * annotation `sidecar.istio.io/nativeSidecar` overrides it. Here: on, as on current nodes.
   */
  nativeSidecar: true,
  /** The proxy image's user (`USER 1337:1337`). */
  proxyUid: 1337,
  /** `istio-validation` (CNI mode): its uid, probe and failure code (`tools/istio-iptables/pkg/validation`). */
  validator: { uid: 1337, probe4: '127.0.0.6:15002', probe6: '[::6]:15002', exitCode: 126 },
  /** Envoy's inbound passthrough binds this source when it connects to the application. */
  passthroughSource: { 4: '127.0.0.6', 6: '::6' },
} as const;

/** The annotation that chooses native sidecars per pod. */
const NATIVE_SIDECAR_ANNOTATION = 'sidecar.istio.io/nativeSidecar';
const PROXY = ISTIO_CNI_DEFAULTS.proxyContainer;
const INIT = ISTIO_CNI_DEFAULTS.initContainer;
const VALIDATION = 'istio-validation';

/** istio-iptables flag → the pod annotation the injector (or istio-cni) takes it from. */
const FLAG_ANNOTATIONS: Readonly<Record<string, string>> = {
  '-o': ISTIO_CNI_ANNOTATIONS.excludeOutboundPorts,
  '-q': ISTIO_CNI_ANNOTATIONS.includeOutboundPorts,
  '-x': ISTIO_CNI_ANNOTATIONS.excludeIPCidrs,
  '-i': ISTIO_CNI_ANNOTATIONS.includeIPCidrs,
  '-b': ISTIO_CNI_ANNOTATIONS.includeInboundPorts,
  '-d': ISTIO_CNI_ANNOTATIONS.excludeInboundPorts,
  '-k': ISTIO_CNI_ANNOTATIONS.rerouteVirtualInterfaces,
  '-c': ISTIO_CNI_ANNOTATIONS.excludeInterfaces,
  '-m': ISTIO_CNI_ANNOTATIONS.redirectMode,
};

function injectRequested(pod: Pod, ns: Namespace | undefined): { inject: boolean; where: string } | null {
  const key = ISTIO_CNI_ANNOTATIONS.inject;
  const label = pod.labels[key];
  const ann = pod.annotations[key];
  const v = label ?? ann;
  if (v !== undefined) {
    const b = parseGoBool(v);
    return { inject: b === true, where: `${key}: "${v}" (${label !== undefined ? 'label' : 'annotation'}) on pod ${pod.name}` };
  }
  if (ns) {
    const l = ns.labels['istio-injection'];
    if (l !== undefined) return { inject: l === 'enabled', where: `istio-injection=${l} on namespace ${ns.name}` };
    if (ns.labels['istio.io/rev'] !== undefined) return { inject: true, where: `istio.io/rev=${ns.labels['istio.io/rev']} on namespace ${ns.name}` };
  }
  return null;
}

/**
 * Prepares an Istio pod: injects it if asked to (and not yet injected), computes its rules and
 * start-up order, and finds its proxy.
 * @internal
 */
export function prepareIstioPod(input: Pod, options: PrepareOptions): MeshPod {
  const ns = options.namespace;
  const settings: string[] = [];
  const warnings: string[] = [];
  const all = (p: Pod): PodContainer[] => [...p.initContainers, ...p.containers];
  const hasProxy = all(input).some((c) => c.name === PROXY);
  let pod = input;
  let source: MeshPod['source'] = 'plain';

  if (hasProxy) {
    source = 'running';
    settings.push(`${input.name}: already injected (has an ${PROXY} container): rules and start-up order are read from the manifest`);
  } else {
    const asked = injectRequested(input, ns);
    const skip = asked?.inject ? istioInjectorSkip(input) : null;
    const req = skip !== null ? { inject: false, where: `${asked!.where}, but the sidecar injector skips the pod: ${skip}` } : asked;
    if (req?.inject) {
      source = 'injected';
      const annNative = input.annotations[NATIVE_SIDECAR_ANNOTATION];
      const native = (annNative !== undefined ? parseGoBool(annNative) : undefined) ?? options.nativeSidecars ?? ISTIO_SCENARIO_DEFAULTS.nativeSidecar;
      const argv = istioInitArgsForPod(input);
      const proxy = container(PROXY, {
        args: ['proxy', 'sidecar'],
        ports: [{ containerPort: 15090, name: 'http-envoy-prom', protocol: 'TCP' }],
        runAsUser: ISTIO_SCENARIO_DEFAULTS.proxyUid,
        runAsGroup: ISTIO_SCENARIO_DEFAULTS.proxyUid,
        ...(native ? { restartPolicy: 'Always' } : {}),
      });
      const cni = options.cni === true;
      const init = argv === null
        ? null
        : cni
          ? container(VALIDATION, { args: ['istio-iptables', ...argv, '--run-validation', '--skip-rule-apply'], runAsUser: 1337, runAsGroup: 1337 })
          : container(INIT, { args: ['istio-iptables', ...argv], runAsUser: 0, runAsGroup: 0 });
      const inits = input.initContainers;
      let initContainers: PodContainer[];
      if (native) initContainers = [...(init ? [init] : []), proxy, ...inits];
      else if (cni) initContainers = [...(init ? [init] : []), ...inits];
      else initContainers = [...inits, ...(init ? [init] : [])];
      const status = JSON.stringify({ initContainers: initContainers.filter((c) => c === init || c === proxy).map((c) => c.name), containers: native ? [] : [PROXY] });
      pod = {
        ...input,
        annotations: { ...input.annotations, [ISTIO_CNI_ANNOTATIONS.status]: status },
        initContainers,
        containers: native ? [...input.containers] : [proxy, ...input.containers],
      };
      settings.push(
        `${input.name}: injected (${req.where}): ${native ? 'native sidecar (istio-proxy is an init container with restartPolicy: Always)' : 'istio-proxy as a regular container'}, ` +
          (init === null ? 'interception mode NONE: no rules' : cni ? `istio-cni writes the rules; ${VALIDATION} first among the init containers` : `istio-init ${native ? 'first' : 'last'} among the init containers`),
      );
      if (argv) settings.push(`${input.name}: istio-iptables ${argv.map((a) => (a === '' ? '""' : a)).join(' ')}`);
    } else {
      const amb = ambientDecision(input, ns, options.ambient === true);
      if (amb.ambient) return prepareAmbientPod(input, { ...options, reason: amb.reason });
      if (req) settings.push(`${input.name}: not meshed (${req.where}; not ambient: ${amb.reason})`);
      else settings.push(`${input.name}: not meshed (no ${PROXY} container, no ${ISTIO_CNI_ANNOTATIONS.inject} annotation or label, no injection label on its namespace; not ambient: ${amb.reason})`);
    }
  }

  const initC = pod.initContainers.find((c) => c.name === INIT);
  const validationC = pod.initContainers.find((c) => c.name === VALIDATION);
  const proxyC = all(pod).find((c) => c.name === PROXY);
  const cniMode = source !== 'plain' && (options.cni === true || (validationC !== undefined && initC === undefined));
  const cniNotReady = cniMode && initC === undefined && options.cniNotReady === true;

  let result: IstioCompileResult | null = null;
  let rulesBy: string | null = null;
  let install: MeshPod['install'] = 'none';
  let sandbox: StartupStep | null = null;
  let fromInit: Record<string, string> = {};
  if (initC) {
    install = 'init-container';
    rulesBy = INIT;
    const env: Record<string, string> = {};
    for (const e of initC.env) if (e.value !== undefined) env[e.name] = e.value;
    const argv = initC.args.length > 0 ? initC.args : initC.command.slice(1);
    const { config } = parseIstioIptablesCommandLine(argv, env);
    result = compileIstio({ ...config, enableIPv6: detectEnableIPv6(pod.podIPs, config.dualStack) });
    fromInit = flagValues(argv);
    if (cniMode) sandbox = { stage: 'sandbox', name: 'istio-cni', effect: 'rules', active: false, note: 'istio-cni leaves pods with an istio-init container alone' };
  } else if (cniMode) {
    install = 'cni';
    rulesBy = 'istio-cni';
    if (cniNotReady) {
      sandbox = { stage: 'sandbox', name: 'istio-cni', effect: 'rules', active: false, note: 'the istio-cni plugin was not ready on the node when the pod sandbox was created: no rules' };
      settings.push(`${pod.name}: istio-cni was not ready when the pod started: no rules were written`);
    } else {
      const r = compileIstioCni({ pod });
      if (r.skipped) {
        sandbox = { stage: 'sandbox', name: 'istio-cni', effect: 'rules', active: false, note: `istio-cni skips the pod: ${r.skipped}` };
      } else {
        result = r;
        sandbox = { stage: 'sandbox', name: 'istio-cni', effect: 'rules', active: true, note: 'istio-cni writes the rules when the pod sandbox is created, before any container' };
      }
      warnings.push(...r.warnings);
    }
  } else if (proxyC) {
    warnings.push(`pod ${pod.name} has ${PROXY} but no ${INIT} init container, and --cni was not given: no rules`);
  }

  let rules4: Ruleset | null = null;
  let rules6: Ruleset | null = null;
  if (result) {
    warnings.push(...result.warnings);
    const sets = istioRulesets(result);
    result.restore.forEach((r, i) => {
      const rs = sets[i]!;
      if (!hasRules(rs)) return;
      if (r.family === 4) rules4 = rs;
      else rules6 = rs;
    });
  }

  if (source === 'running' && proxyC && options.nativeSidecars !== undefined) {
    const native = pod.initContainers.includes(proxyC) && proxyC.restartPolicy === 'Always';
    if (native !== options.nativeSidecars) {
      warnings.push(`pod ${pod.name} is given as it runs: its proxy runs ${native ? 'as a native sidecar' : 'as a regular container'}, whatever the native-sidecars setting says`);
    }
  }
  let proxy: MeshProxy | null = null;
  if (proxyC) {
    const uid = proxyC.runAsUser ?? ISTIO_SCENARIO_DEFAULTS.proxyUid;
    const gid = proxyC.runAsGroup ?? uid;
    const cfg = result?.config;
    const outboundPort = Number(cfg?.proxyPort ?? ISTIO_IPTABLES_DEFAULTS.proxyPort);
    const inboundPort = Number(cfg?.inboundCapturePort ?? ISTIO_IPTABLES_DEFAULTS.inboundCapturePort);
    const dns = cfg?.redirectDNS === true;
    proxy = {
      container: PROXY,
      uid,
      gid,
      outboundPort,
      inboundPort,
      otherPorts: [
        { port: Number(cfg?.inboundTunnelPort ?? ISTIO_IPTABLES_DEFAULTS.inboundTunnelPort), role: 'HBONE tunnel', proto: 'tcp' },
        { port: 15090, role: 'Envoy Prometheus', proto: 'tcp' },
        { port: 15021, role: 'health', proto: 'tcp' },
        { port: 15020, role: 'pilot-agent status and merged metrics', proto: 'tcp' },
        { port: 15000, address: '127.0.0.1', role: 'Envoy admin', proto: 'tcp' },
        { port: 15004, address: '127.0.0.1', role: 'pilot-agent debug', proto: 'tcp' },
        ...(dns ? [{ port: 15053, address: '127.0.0.1', role: 'DNS proxy' }] : []),
      ],
      ipv6: pod.podIPs.some((ip) => ip.includes(':')),
      nativeSidecar: pod.initContainers.some((c) => c === proxyC) && proxyC.restartPolicy === 'Always',
    };
  }

  const startup = startupSteps(pod, sandbox, (c, stage) => {
    if (c.name === INIT) return { effect: 'rules', note: 'istio-init writes the rules (iptables-restore)' };
    if (c.name === VALIDATION) return { effect: 'validator', note: 'checks that 127.0.0.6:15002 is redirected to 15006 (exit 126 otherwise)' };
    if (c === proxyC) {
      return stage === 'init' && c.restartPolicy === 'Always'
        ? { effect: 'proxy', note: 'native sidecar: istio-proxy starts here and keeps running for the init containers after it' }
        : { effect: 'proxy', note: stage === 'init' ? 'istio-proxy as a plain init container runs to completion (it never serves)' : 'istio-proxy starts with the containers, after every init container' };
    }
    return { effect: 'none', note: stage === 'init' ? 'an application init container' : 'an application container' };
  });

  const annotations: Record<string, string> = { ...pod.annotations };
  const explain = istioExplainer(pod, rulesBy, fromInit);
  return {
    mesh: 'istio',
    name: pod.name,
    pod,
    source,
    install,
    rulesBy: rules4 || rules6 ? rulesBy : null,
    rules4,
    rules6,
    ruleNotes: ruleNotes([rules4, rules6], explain(result)),
    proxy,
    startup,
    apps: pod.containers.filter((c) => c !== proxyC),
    settings,
    annotations,
    opaquePorts: [],
    ipCommands: result?.ipCommands ?? [],
    cniNotReady,
    warnings,
  };
}

/** The value of each flag on an istio-iptables command line (short form). */
function flagValues(argv: readonly string[]): Record<string, string> {
  const out: Record<string, string> = {};
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    const m = /^(-[a-z])(?:=(.*))?$/.exec(a);
    if (!m) continue;
    out[m[1]!] = m[2] ?? argv[i + 1] ?? '';
    if (m[2] === undefined) i++;
  }
  return out;
}

function istioExplainer(pod: Pod, rulesBy: string | null, fromInit: Record<string, string>): (result: IstioCompileResult | null) => RuleExplainer {
  return (result) => ({ family, table, chain, source }) => {
    const r = result?.rules.find((x) => x.family === family && x.table === table && x.chain === chain && x.text === source);
    if (!r) return { why: 'not written by istio-iptables', setting: null };
    if (r.option === undefined) return { why: r.why, setting: null };
    const flag = r.option.split('/')[0]!;
    const ann = FLAG_ANNOTATIONS[flag];
    const parts: string[] = [r.option];
    if (rulesBy === INIT && fromInit[flag] !== undefined) parts[0] = `istio-init ${flag} ${fromInit[flag] === '' ? '""' : fromInit[flag]}`;
    if (ann && pod.annotations[ann] !== undefined) parts.push(`from ${ann}: "${pod.annotations[ann]}" on pod ${pod.name}`);
    else if (ann) parts.push(`${rulesBy === 'istio-cni' ? 'istio-cni' : 'the injector'}'s default, or the ${ann} annotation`);
    if (flag === '-u' || flag === '-g') parts.push(`the ${PROXY} container's ${flag === '-u' ? 'runAsUser' : 'runAsGroup'} (1337 by default)`);
    return { why: r.why, setting: parts.join(', ') };
  };
}
