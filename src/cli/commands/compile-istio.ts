/**
 * `netfilter-sim compile istio` and `netfilter-sim compile istio-cni`.
 *
 * @module
 */
import { NetfilterSimError } from '../../model/errors.js';
import { ISTIO_IPTABLES_FLAGS, parseIstioIptablesCommandLine } from '../../compile/istio/args.js';
import { compileIstioCni } from '../../compile/istio/cni.js';
import { compileIstio, type IstioCompileResult } from '../../compile/istio/compile.js';
import { detectEnableIPv6, type IstioConfig, parseResolvConf, splitDnsServers } from '../../compile/istio/config.js';
import { formatIstioAmbientResult, formatIstioResult, ISTIO_OUTPUT_FORMATS, type IstioOutputFormat } from '../../compile/istio/format.js';
import { readNamespace, readPod } from '../../compile/pod.js';
import { istioReleaseFeatures } from '../../compile/istio/version.js';
import { istioInitArgsForPod, istioInjectorNotes } from '../../compile/istio/inject.js';
import { istioValuesFromSet } from '../chart-values.js';
import { type AmbientConfig, type AmbientPodOverrides, ambientEnrolment, ambientPodOverrides, compileIstioAmbient } from '../../compile/istio/ambient.js';
import { type CliIO, EXIT_OK, SourceError, UsageError, reportCliError } from '../io.js';
import { pushAll } from '../../model/limits.js';

/**
 * `netfilter-sim compile istio --help`.
 *
 * @example
 * ```ts
 * io.stdout(COMPILE_ISTIO_HELP);
 * ```
 */
export const COMPILE_ISTIO_HELP = `Usage: netfilter-sim compile istio [istio-iptables flags] [options]

Prints what istio-iptables (the istio-init container) writes for the same flags.

istio-iptables flags, as upstream (also settable with --env NAME=VALUE as upstream's env vars):
  -p, --envoy-port PORT                      outbound listener (15001)
  -z, --inbound-capture-port PORT            inbound listener (15006)
  -e, --inbound-tunnel-port PORT             HBONE port, never captured (15008)
  -u, --proxy-uid UIDS  -g, --proxy-gid GIDS the proxy's ids (1337; -g defaults to -u)
  -m, --istio-inbound-interception-mode M    REDIRECT or TPROXY
  -b, --istio-inbound-ports PORTS|*          inbound capture ("" = none)
  -d, --istio-local-exclude-ports PORTS      inbound ports not captured (with -b '*')
  -i, --istio-service-cidr CIDRS|*           outbound capture ("" = none)
  -x, --istio-service-exclude-cidr CIDRS     outbound destinations not captured
  -q, --istio-outbound-ports PORTS           outbound ports always captured
  -o, --istio-local-outbound-ports-exclude PORTS
  -k, --kube-virt-interfaces IFACES          VM interfaces whose traffic counts as outbound
  -c, --istio-exclude-interfaces IFACES      interfaces never captured
  -t, --istio-inbound-tproxy-mark MARK  -r, --istio-inbound-tproxy-route-table TABLE
  --redirect-dns  --capture-all-dns  --drop-invalid  --dual-stack
  -n, --dry-run  --skip-rule-apply  --run-validation  --cleanup-only  --reconcile  --force-apply
  --network-namespace NS  --cni-mode  --force-iptables-binary B  --iptables-probe-port P  --probe-timeout D
  --native-nftables       the nftables rules of tools/istio-nftables (1.27+): --format commands
                          (and restore) print the nft -f input, save what nft list ruleset lists

What istio-iptables reads from the pod instead of flags:
  --dns-servers LIST      resolv.conf name servers (used with --redirect-dns)
  --resolv-conf FILE      read them from a resolv.conf file
  --ipv6                  the pod has IPv6 (emit the ip6tables-restore pass)
  --pod-ips LIST          decide IPv6 from the pod's addresses, as upstream (see --dual-stack)
  --env NAME=VALUE        an environment variable, e.g. ISTIO_OUTBOUND_OWNER_GROUPS=java,202

Or, instead of istio-iptables flags, the pod as written:
  --pod FILE              the istio-init args the sidecar injector writes for this Pod manifest
                          (its traffic.sidecar.istio.io/* annotations over the chart values;
                          IPv6 from status.podIPs). A pod the injector skips (host network,
                          sidecar.istio.io/inject: "false", kube-system and the other ignored
                          namespaces) exits 0 with the reason on stderr and nothing on stdout
  --set KEY=VALUE         with --pod: an istiod chart value, as helm --set (global.nativeNftables=true,
                          global.proxy.excludeIPRanges=10.0.0.0/8, pilot.cni.enabled=true, ...); repeatable

Options:
  --format FMT            save (default): what iptables-save prints afterwards (IPv4, then IPv6)
                          restore: the exact iptables-restore --noflush input(s)
                          commands: the recorded commands, as upstream's goldens lay them out
                          json: the loaded rule set(s)
  --json                  the same as --format json
  --upstream-version V    reproduce a release's rules (1.12 to 1.31, e.g. 1.24, 1.17; older and newer
                          versions are refused, not guessed)
  -h, --help              this help

The routing the tool sets up besides the rules (TPROXY: ip rule add fwmark … lookup 133 and
ip route add local default dev lo table 133; IPv6: ::6 on lo) is printed on stderr, one
"# also run in the pod: ip …" line each.

Examples:
  netfilter-sim compile istio -p 15001 -z 15006 -u 1337 -m REDIRECT -i '*' -x "" -b '*' -d 15090,15021,15020
  netfilter-sim compile istio -b '*' -i '*' --redirect-dns --dns-servers 10.96.0.10 --format restore
  netfilter-sim compile istio -m TPROXY -b '*' -i '*' --ipv6 --format commands
  netfilter-sim compile istio -b '*' -i '*' --upstream-version 1.17
  netfilter-sim compile istio --pod web.yaml --set global.nativeNftables=true --format commands
`;

/**
 * `netfilter-sim compile istio-cni --help`.
 *
 * @example
 * ```ts
 * io.stdout(COMPILE_ISTIO_CNI_HELP);
 * ```
 */
export const COMPILE_ISTIO_CNI_HELP = `Usage: netfilter-sim compile istio-cni --pod FILE [options]

Prints what the istio-cni plugin writes into the pod's network namespace, from the pod's
annotations (traffic.sidecar.istio.io/*, sidecar.istio.io/interceptionMode, …) and its
istio-proxy container (runAsUser/runAsGroup, ISTIO_META_DNS_CAPTURE, INVALID_DROP, …).

Options:
  --pod FILE              the Pod manifest, YAML or JSON (- for standard input)
  --format FMT            save (default), restore, commands or json (as compile istio)
  --json                  the same as --format json
  --ipv6, --no-ipv6       whether the pod has IPv6 (default: from status.podIPs)
  --env NAME=VALUE        the plugin's environment on the node (ISTIO_OUTBOUND_OWNER_GROUPS, …)
  --exclude-namespaces NS the CNI config's exclude_namespaces
  --native-nftables       the CNI config's native_nftables (chart global.nativeNftables, 1.27+):
                          the nftables rules (--format commands: the nft -f input)
  --upstream-version V    reproduce an older release's rules
  -h, --help              this help

A pod istio-cni leaves alone (no istio-proxy container, an istio-init container, an ambient
pod, …) exits 0 with the reason on stderr and nothing on stdout, as compile linkerd-cni does.

Examples:
  netfilter-sim compile istio-cni --pod pod.yaml
  kubectl get pod web -o json | netfilter-sim compile istio-cni --pod - --format restore
`;

/**
 * `netfilter-sim compile istio [istio-iptables flags] [--dns-servers …] [--ipv6]
 * [--upstream-version V] [--format save|restore|commands|json]`. Returns the exit code: 0, 1 for
 * a configuration upstream rejects or an unreadable file, 2 for a usage error.
 *
 * @example
 * ```ts
 * await runCompileIstio(['-b', '*', '-i', '*', '--format', 'restore'], processIO());
 * ```
 */
export async function runCompileIstio(args: string[], io: CliIO): Promise<number> {
  return run(io, 'compile istio', () => {
    const own = extractOwnOptions(args, ['format', 'dns-servers', 'resolv-conf', 'pod-ips', 'upstream-version', 'env', 'pod', 'set'], ['ipv6', 'help', 'json']);
    if (own.flags.has('help')) return { help: COMPILE_ISTIO_HELP };
    const format = checkFormat(own.values.get('format'), own.flags.has('json'));
    const env = envPairs(own.values.get('env') ?? []);
    const version = last(own.values.get('upstream-version'));
    // ≤ 1.25 accepted --iptables-trace-logging (it wrote no rule); 1.26 removed the flag.
    const rest = istioReleaseFeatures(version).iptablesTraceLogging
      ? own.rest.filter((a) => a !== '--iptables-trace-logging' && !a.startsWith('--iptables-trace-logging='))
      : own.rest;
    const podFile = last(own.values.get('pod'));
    let argv = rest;
    let podIPs: readonly string[] = [];
    const podWarnings: string[] = [];
    if (podFile === undefined) {
      if (own.values.has('set')) throw new UsageError('--set goes with --pod');
    } else {
      if (rest.length > 0) throw new UsageError(`istio-iptables flags and --pod cannot be used together (with --pod the injector writes them): "${rest[0]}"`);
      const values = istioValuesFromSet(own.values.get('set') ?? []);
      const podText = io.readFile(podFile);
      let pod;
      try {
        pod = readPod(podText);
      } catch (e) {
        if (e instanceof NetfilterSimError) throw new SourceError(podFile, podText, e.diagnostics);
        throw e;
      }
      let injected: string[] | null;
      try {
        injected = istioInitArgsForPod(pod, values);
      } catch (e) {
        // As a pod istio-cni or the ambient agent leaves alone: nothing on stdout, the reason on stderr.
        if (e instanceof NetfilterSimError && e.diagnostics[0]?.code === 'NOT_INJECTED') return { skipped: `netfilter-sim compile istio: ${e.diagnostics[0].message}\n` };
        throw e;
      }
      if (injected === null) return { skipped: 'netfilter-sim compile istio: the sidecar injector adds no istio-init to this pod: interception mode NONE\n' };
      argv = injected;
      podIPs = pod.podIPs;
      podWarnings.push(...istioInjectorNotes(pod));
    }
    let line;
    try {
      line = parseIstioIptablesCommandLine(argv, env);
    } catch (e) {
      if (e instanceof NetfilterSimError) throw new UsageError(e.message);
      throw e;
    }
    const warnings = [...podWarnings, ...line.ignored.map((a) => `ignored argument "${a}" (istio-iptables takes no positional arguments)`)];
    const fields: { -readonly [K in keyof IstioConfig]?: IstioConfig[K] } = {};
    const servers: string[] = [];
    for (const list of own.values.get('dns-servers') ?? []) pushAll(servers, list.split(',').filter((s) => s !== ''));
    for (const file of own.values.get('resolv-conf') ?? []) {
      const r = parseResolvConf(io.readFile(file));
      pushAll(servers, r.dnsServersV4);
      pushAll(servers, r.dnsServersV6);
    }
    if (servers.length > 0) Object.assign(fields, splitDnsServers(servers));
    const podIPsFlag = own.values.get('pod-ips');
    if (podIPsFlag) fields.enableIPv6 = detectEnableIPv6(podIPsFlag.join(',').split(',').filter((s) => s !== ''), line.config.dualStack);
    else if (podIPs.length > 0) fields.enableIPv6 = detectEnableIPv6(podIPs, line.config.dualStack);
    if (own.flags.has('ipv6')) fields.enableIPv6 = true;
    const result = compileIstio({ ...line.config, ...fields }, version === undefined ? {} : { upstreamVersion: version });
    return { result, format, warnings };
  });
}

/**
 * `netfilter-sim compile istio-cni --pod FILE [--format …]`. Returns the exit code: 0 (also for
 * a pod istio-cni leaves alone: the reason goes to stderr, nothing to stdout), 1 for a bad
 * manifest, 2 for a usage error.
 *
 * @example
 * ```ts
 * await runCompileIstioCni(['--pod', 'pod.yaml', '--format', 'restore'], processIO());
 * ```
 */
export async function runCompileIstioCni(args: string[], io: CliIO): Promise<number> {
  return run(io, 'compile istio-cni', () => {
    const own = extractOwnOptions(args, ['pod', 'format', 'env', 'exclude-namespaces', 'upstream-version'], ['ipv6', 'no-ipv6', 'help', 'json', 'native-nftables']);
    if (own.flags.has('help')) return { help: COMPILE_ISTIO_CNI_HELP };
    if (own.rest.length > 0) throw new UsageError(`unexpected argument "${own.rest[0]}"`);
    const format = checkFormat(own.values.get('format'), own.flags.has('json'));
    const podFile = last(own.values.get('pod'));
    if (podFile === undefined) throw new UsageError('--pod FILE is required');
    const podText = io.readFile(podFile);
    let pod;
    try {
      pod = readPod(podText);
    } catch (e) {
      if (e instanceof NetfilterSimError) throw new SourceError(podFile, podText, e.diagnostics);
      throw e;
    }
    const version = last(own.values.get('upstream-version'));
    const excludeNamespaces = (own.values.get('exclude-namespaces') ?? []).flatMap((l) => l.split(',')).filter((s) => s !== '');
    const result = compileIstioCni({
      pod,
      env: envPairs(own.values.get('env') ?? []),
      excludeNamespaces,
      ...(own.flags.has('native-nftables') ? { nativeNftables: true } : {}),
      ...(own.flags.has('ipv6') ? { enableIPv6: true } : own.flags.has('no-ipv6') ? { enableIPv6: false } : {}),
      ...(version === undefined ? {} : { upstreamVersion: version }),
    });
    // As compile linkerd-cni: the plugin leaving a pod alone is a success (nothing written), and says why.
    if (result.skipped !== null) return { skipped: `netfilter-sim compile istio-cni: istio-cni does not program this pod: ${result.skipped}\n` };
    return { result, format, warnings: [] };
  });
}

type Outcome = { help: string } | { skipped: string } | { result: IstioCompileResult; format: IstioOutputFormat; warnings: string[] };

async function run(io: CliIO, name: string, body: () => Outcome): Promise<number> {
  try {
    const outcome = body();
    if ('help' in outcome) {
      io.stdout(outcome.help);
      return EXIT_OK;
    }
    if ('skipped' in outcome) {
      io.stderr(outcome.skipped);
      return EXIT_OK;
    }
    for (const w of [...outcome.warnings, ...outcome.result.warnings]) io.stderr(`netfilter-sim ${name}: warning: ${w}\n`);
    const text = formatIstioResult(outcome.result, outcome.format);
    // The routing istio-iptables sets up besides the rules (TPROXY policy routing, ::6 on lo).
    for (const c of outcome.result.ipCommands) io.stderr(`# also run in the pod: ${c.join(' ')}\n`);
    io.stdout(text);
    return EXIT_OK;
  } catch (e) {
    return reportCliError(e, io, name, (err) => `netfilter-sim ${name}: ${err.message}\n`);
  }
}

function checkFormat(values: string[] | undefined, json = false): IstioOutputFormat {
  const given = last(values);
  if (json && given !== undefined && given !== 'json') throw new UsageError(`--json and --format ${given} cannot be used together`);
  const f = given ?? (json ? 'json' : 'save');
  if (!(ISTIO_OUTPUT_FORMATS as readonly string[]).includes(f)) {
    throw new UsageError(`unknown format "${f}" (expected ${ISTIO_OUTPUT_FORMATS.join(', ')})`);
  }
  return f as IstioOutputFormat;
}

function envPairs(pairs: readonly string[]): Record<string, string> {
  const env: Record<string, string> = {};
  for (const p of pairs) {
    const eq = p.indexOf('=');
    if (eq <= 0) throw new UsageError(`--env expects NAME=VALUE, got "${p}"`);
    env[p.slice(0, eq)] = p.slice(eq + 1);
  }
  return env;
}

function last<T>(list: readonly T[] | undefined): T | undefined {
  return list === undefined ? undefined : list[list.length - 1];
}

/** Whether an istio-iptables argument takes the next argument as its value (pflag rules). */
function consumesNext(arg: string): boolean {
  if (arg.startsWith('--')) {
    if (arg.includes('=')) return false;
    const name = arg.slice(2);
    const def = ISTIO_IPTABLES_FLAGS.find((d) => d.long === name);
    if (def) return def.kind !== 'bool';
    return ['log_caller', 'log_output_level', 'log_stacktrace_level', 'log_target', 'log_rotate', 'log_rotate_max_age',
      'log_rotate_max_backups', 'log_rotate_max_size'].includes(name);
  }
  if (arg.startsWith('-') && arg.length > 1) {
    for (let i = 1; i < arg.length; i++) {
      const def = ISTIO_IPTABLES_FLAGS.find((d) => d.short === arg[i]);
      if (!def) return false;
      if (def.kind === 'bool') continue;
      return i === arg.length - 1;
    }
  }
  return false;
}

/**
 * Separates our own options from the istio-iptables arguments, without mistaking the value of an
 * istio-iptables flag (`-x --format`) for one of ours.
 */
function extractOwnOptions(
  args: readonly string[],
  withValue: readonly string[],
  booleans: readonly string[],
): { values: Map<string, string[]>; flags: Set<string>; rest: string[] } {
  const values = new Map<string, string[]>();
  const flags = new Set<string>();
  const rest: string[] = [];
  for (let i = 0; i < args.length; i++) {
    const a = args[i]!;
    if (a === '--') {
      pushAll(rest, args.slice(i));
      break;
    }
    if (a === '-h' || a === '--help') {
      if (booleans.includes('help')) flags.add('help');
      else rest.push(a);
      continue;
    }
    if (a.startsWith('--')) {
      const eq = a.indexOf('=');
      const name = a.slice(2, eq < 0 ? undefined : eq);
      if (withValue.includes(name)) {
        let v: string;
        if (eq >= 0) v = a.slice(eq + 1);
        else {
          if (i + 1 >= args.length) throw new UsageError(`--${name} needs a value`);
          v = args[++i]!;
        }
        values.set(name, [...(values.get(name) ?? []), v]);
        continue;
      }
      if (booleans.includes(name) && eq < 0) {
        flags.add(name);
        continue;
      }
    }
    rest.push(a);
    if (consumesNext(a) && i + 1 < args.length) rest.push(args[++i]!);
  }
  return { values, flags, rest };
}

/**
 * `netfilter-sim compile istio-ambient --help`.
 *
 * @example
 * ```ts
 * io.stdout(COMPILE_ISTIO_AMBIENT_HELP);
 * ```
 */
export const COMPILE_ISTIO_AMBIENT_HELP = `Usage: netfilter-sim compile istio-ambient [options]

Prints what istio-cni's ambient node agent writes for ztunnel: in a pod's network namespace
(marks 0x539/0x111, redirects to ztunnel's 15001, 15006 and 15053, HBONE 15008 never captured),
or with --host on the node (the kubelet health-probe SNAT).

Node agent settings (the istio-cni chart's ambient.* values):
  --ipv6                  the pod has IPv6 (ambient.ipv6 with an IPv6 pod): the ip6tables pass too
  --redirect-dns          ambient.dnsCapture: capture DNS to ztunnel's 15053 (the chart's default
                          is true; without this flag DNS is not captured)
  --nftables              the nftables backend (ambient.enableNativeNftables, Istio 1.28+)
  --probe-snat ADDR       the kubelet probe SNAT address (default 169.254.7.127)
  --probe-snat6 ADDR      its IPv6 form (default fd16:9254:7127:1337:ffff:ffff:ffff:ffff)
  --host                  the node's rules instead of a pod's
  --kubelet-uid N         with --host --nftables: the kubelet's uid (default 0)
  --upstream-version V    reproduce an Istio release (1.25 to 1.31)

The pod (its annotations, as istio-cni reads them):
  --pod FILE              a Pod manifest, YAML or JSON: enrolment (istio.io/dataplane-mode,
                          sidecar, host network, excluded namespace) and the annotations below
  --namespace FILE        its Namespace (for a namespace-level istio.io/dataplane-mode label)
  --exclude-namespaces NS the chart's excludeNamespaces (default kube-system)
  --ingress               ambient.istio.io/bypass-inbound-capture: "true" (no inbound capture)
  --pod-dns enabled|disabled   ambient.istio.io/dns-capture (overrides --redirect-dns)
  --virtual-interfaces IF,…    istio.io/reroute-virtual-interfaces

Options:
  --format FMT            save (default): what iptables-save / ip6tables-save print afterwards
                          restore: the iptables-restore input(s) (nftables: the nft -f input)
                          commands: the recorded commands, as upstream's goldens lay them out
                          json: the loaded rule set(s)
                          (nftables: commands and restore are the nft -f input, save is what
                          nft list ruleset lists, json the nft rule set)
  --json                  the same as --format json
  -h, --help              this help

The agent also adds, in the pod: ip route replace local 0.0.0.0/0 dev lo table 100 and
ip rule add fwmark 0x111/0xfff pref 32764 lookup 100 (printed on stderr as comments).
A pod the agent does not enrol exits 0 with the reason on stderr and nothing on stdout.

Examples:
  netfilter-sim compile istio-ambient --redirect-dns --format commands
  netfilter-sim compile istio-ambient --host --format save
  netfilter-sim compile istio-ambient --pod pod.yaml --redirect-dns --nftables --format commands
`;

/**
 * `netfilter-sim compile istio-ambient [options]`. Returns the exit code: 0 (also for a pod the
 * agent does not enrol), 1 for bad input or an output that cannot be produced, 2 for a usage error.
 *
 * @example
 * ```ts
 * await runCompileIstioAmbient(['--redirect-dns', '--format', 'commands'], processIO());
 * ```
 */
export async function runCompileIstioAmbient(args: string[], io: CliIO): Promise<number> {
  const name = 'compile istio-ambient';
  try {
    const own = extractOwnOptions(
      args,
      ['format', 'pod', 'namespace', 'exclude-namespaces', 'pod-dns', 'virtual-interfaces', 'kubelet-uid', 'probe-snat', 'probe-snat6', 'upstream-version'],
      ['ipv6', 'redirect-dns', 'nftables', 'host', 'ingress', 'help', 'json'],
    );
    if (own.flags.has('help')) {
      io.stdout(COMPILE_ISTIO_AMBIENT_HELP);
      return EXIT_OK;
    }
    if (own.rest.length > 0) throw new UsageError(`unexpected argument "${own.rest[0]}"`);
    const format = checkFormat(own.values.get('format'), own.flags.has('json'));
    const host = own.flags.has('host');
    const config: { -readonly [K in keyof AmbientConfig]?: AmbientConfig[K] } = {
      enableIPv6: own.flags.has('ipv6'),
      redirectDNS: own.flags.has('redirect-dns'),
      nativeNftables: own.flags.has('nftables'),
    };
    const snat = last(own.values.get('probe-snat'));
    if (snat !== undefined) config.hostProbeSNATAddress = snat;
    const snat6 = last(own.values.get('probe-snat6'));
    if (snat6 !== undefined) config.hostProbeV6SNATAddress = snat6;
    const kubelet = last(own.values.get('kubelet-uid'));
    if (kubelet !== undefined) {
      if (!/^\d+$/.test(kubelet) || Number(kubelet) > 0xffffffff) throw new UsageError(`--kubelet-uid needs a uid, not "${kubelet}"`);
      config.kubeletUID = Number(kubelet);
    }
    const warnings: string[] = [];
    let pod: Partial<AmbientPodOverrides> = {};
    const podFile = last(own.values.get('pod'));
    if (podFile !== undefined) {
      if (host) throw new UsageError('--pod and --host exclude each other (the host rules are per node)');
      const readManifest = <T>(file: string, read: (text: string) => T): T => {
        const text = io.readFile(file);
        try {
          return read(text);
        } catch (e) {
          if (e instanceof NetfilterSimError) throw new SourceError(file, text, e.diagnostics);
          throw e;
        }
      };
      const p = readManifest(podFile, readPod);
      const nsFile = last(own.values.get('namespace'));
      const namespace = nsFile === undefined ? undefined : readManifest(nsFile, readNamespace);
      const exclude = own.values.get('exclude-namespaces');
      const enrol = ambientEnrolment(p, {
        ...(namespace ? { namespace } : {}),
        ...(exclude ? { excludeNamespaces: exclude.flatMap((l) => l.split(',')).filter((s) => s !== '') } : {}),
      });
      if (!enrol.enrolled) {
        io.stderr(`netfilter-sim ${name}: istio-cni does not enrol this pod in ambient: ${enrol.reason}\n`);
        return EXIT_OK;
      }
      pod = ambientPodOverrides(p, warnings);
      if (!own.flags.has('ipv6') && p.podIPs.some((a) => a.includes(':'))) config.enableIPv6 = true;
    }
    if (own.flags.has('ingress')) pod = { ...pod, ingressMode: true };
    const dns = last(own.values.get('pod-dns'));
    if (dns !== undefined) {
      if (dns !== 'enabled' && dns !== 'disabled') throw new UsageError(`--pod-dns is enabled or disabled, not "${dns}"`);
      pod = { ...pod, dnsProxy: dns };
    }
    const virt = own.values.get('virtual-interfaces');
    if (virt) pod = { ...pod, virtualInterfaces: virt.flatMap((l) => l.split(',')).map((s) => s.trim()).filter((s) => s !== '') };
    if (host && (pod.ingressMode || pod.dnsProxy !== undefined || pod.virtualInterfaces)) {
      throw new UsageError('--ingress, --pod-dns and --virtual-interfaces are pod settings; the --host rules do not use them');
    }
    const version = last(own.values.get('upstream-version'));
    const result = compileIstioAmbient({ config, pod, host, ...(version === undefined ? {} : { upstreamVersion: version }) });
    for (const w of [...warnings, ...result.warnings]) io.stderr(`netfilter-sim ${name}: warning: ${w}\n`);
    const out = formatIstioAmbientResult(result, format);
    for (const c of result.ipCommands) io.stderr(`# also run in the pod: ${c.join(' ')}\n`);
    io.stdout(out);
    return EXIT_OK;
  } catch (e) {
    return reportCliError(e, io, name, (err) => `netfilter-sim ${name}: ${err.message}\n`);
  }
}
