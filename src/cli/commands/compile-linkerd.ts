/**
 * `netfilter-sim compile linkerd [proxy-init flags]` and
 * `netfilter-sim compile linkerd-cni --conf FILE --pod FILE`.
 *
 * @module
 */
import { NetfilterSimError } from '../../model/errors.js';
import { readNamespace, readPod, readService } from '../../compile/pod.js';
import { PROXY_INIT_FLAGS, parseProxyInitArgs } from '../../compile/linkerd/config.js';
import { compileLinkerdCni, type LinkerdCniResult } from '../../compile/linkerd/cni.js';
import { compileProxyInit, type ProxyInitResult } from '../../compile/linkerd/proxy-init.js';
import { injectProxyInitArgs } from '../../compile/linkerd/injector.js';
import { linkerdValuesFromSet } from '../chart-values.js';
import type { LinkerdOutputFormat } from '../../compile/linkerd/output.js';
import { EXIT_INPUT, EXIT_OK, SourceError, UsageError, type CliIO, reportCliError } from '../io.js';
import { pushAll } from '../../model/limits.js';

const FORMATS: readonly LinkerdOutputFormat[] = ['save', 'restore', 'commands', 'json'];

/**
 * `compile linkerd --help`. @internal
 *
 * @example
 * ```ts
 * io.stdout(COMPILE_LINKERD_HELP);
 * ```
 */
export const COMPILE_LINKERD_HELP = `Usage: netfilter-sim compile linkerd [proxy-init flags] [options]

Prints what Linkerd's proxy-init (the linkerd-init container) writes, from the same
flags it takes: the exact commands it runs, or the nat table iptables-save shows after.

proxy-init flags (as upstream, proxy-init v2.4.9):
  -p, --incoming-proxy-port N     inbound REDIRECT target (required)
  -o, --outgoing-proxy-port N     outbound REDIRECT target (required)
  -u, --proxy-uid N               RETURN the proxy's own traffic (when N > 0)
  -g, --proxy-gid N               RETURN traffic of this group (when N > 0)
  -r, --ports-to-redirect P,...   redirect only these inbound ports
      --inbound-ports-to-ignore P,L-U,...
      --outbound-ports-to-ignore P,L-U,...
      --subnets-to-ignore CIDR,...  (inbound, by source address)
      --iptables-mode legacy|nft|plain
      --firewall-bin-path iptables-legacy|iptables-nft|iptables
      --firewall-save-bin-path PATH
      --ipv6[=true|false]         IPv6 pass with ip6tables (default true)
  -w, --use-wait-flag             append -w to every mutating command
      --netns PATH                run each command through nsenter --net=PATH --
      --simulate                  log the commands, run none
      --timeout-close-wait-secs N, --log-format F, --log-level L

Options:
      --format save|restore|commands|json   output (default: save)
            save      the nat table(s) as iptables-save -t nat prints them after the run
                      (IPv4, then IPv6 when the IPv6 pass is on)
            restore   the same as iptables-restore input (proxy-init itself never uses
                      iptables-restore; this is the equivalent)
            commands  every command line proxy-init runs, in order
            json      the resulting rule set(s)
      --json                      the same as --format json
      --existing FILE             iptables-save -t nat output before the run (re-run path:
                                  existing chains are flushed and reused)
      --existing6 FILE            the same for the IPv6 pass
      --upstream-version V        reproduce an older proxy-init (v1.3.12 ... v2.4.9)
      --timestamp N               comment suffix of releases before v2.4.0 (default: now)
      --pod FILE                  instead of proxy-init flags: the linkerd-init args the proxy
                                  injector writes for this Pod manifest (its config.linkerd.io/*
                                  annotations over the chart values). A pod the injector skips
                                  (host network, a linkerd-proxy/istio-proxy container or
                                  linkerd-init/istio-init init container already there,
                                  linkerd.io/inject: disabled) exits 0 with the reason on stderr
      --namespace FILE            with --pod: its Namespace, whose annotations the pod lacks apply
      --set KEY=VALUE             with --pod: a linkerd-control-plane chart value, as helm --set
                                  (proxyInit.ignoreOutboundPorts=3306, disableIPv6=false,
                                  proxy.uid=2103, proxy.nativeSidecar=false, ...); repeatable
      --linkerd-version V         with --pod: the Linkerd release whose injector to reproduce
                                  (2.18, 2.19, 2.20; also stable-2.19.3); others are refused
  -h, --help

When proxy-init would fail, its error goes to stderr (the failing iptables command's
output, then "Error: ..."), what it ran or left goes to stdout, and the exit status is 1.

Examples:
  netfilter-sim compile linkerd --firewall-bin-path iptables-nft --firewall-save-bin-path iptables-nft-save \\
      --ipv6=false -p 4143 -o 4140 --proxy-uid 2102 \\
      --inbound-ports-to-ignore 4190,4191,4567,4568 --outbound-ports-to-ignore 4567,4568
  netfilter-sim compile linkerd -p 4143 -o 4140 -u 2102 --format commands
  netfilter-sim compile linkerd -p 8080 -o 8080 -u 2102 --ipv6=false --existing nat-before.txt
  netfilter-sim compile linkerd --pod web.yaml --set proxyInit.ignoreOutboundPorts=3306 --linkerd-version 2.19
`;

/**
 * `compile linkerd-cni --help`. @internal
 *
 * @example
 * ```ts
 * io.stdout(COMPILE_LINKERD_CNI_HELP);
 * ```
 */
export const COMPILE_LINKERD_CNI_HELP = `Usage: netfilter-sim compile linkerd-cni --conf FILE --pod FILE [options]

Prints what the linkerd-cni plugin writes into a pod's network namespace at CNI ADD.

  --conf FILE                the CNI network configuration (a .conflist with a linkerd-cni
                             plugin, a .conf, or just its "linkerd" block), JSON
  --pod FILE                 the Pod (YAML or JSON) as the plugin fetches it
  --namespace FILE           its Namespace: annotations the pod lacks are read there
  --kubernetes-service FILE  the default/kubernetes Service (control-plane pods skip its ports;
                             without it: 443 and 6443)
  --netns PATH               write the commands as the plugin runs them (nsenter --net=PATH --)
  --format save|restore|commands|json   output (default: save), as for compile linkerd
  --json                     the same as --format json
  --existing FILE, --existing6 FILE     the pod's nat table before ADD (default: empty)
  --upstream-version V       a cni-plugin release (v1.4.0 ... main)
  -h, --help

A pod with a linkerd-init init container, or without a linkerd-proxy container, is left
alone: nothing on stdout, "linkerd-cni does not program this pod: REASON" on stderr and
exit status 0, as compile istio-cni.

Examples:
  netfilter-sim compile linkerd-cni --conf /etc/cni/net.d/10-calico.conflist --pod web.yaml
  netfilter-sim compile linkerd-cni --conf linkerd.json --pod web.yaml --namespace ns.yaml --format commands
`;

interface OwnFlags {
  readonly values: Map<string, string>;
  /** Every `--set` given, in order. */
  readonly sets: string[];
  readonly help: boolean;
  readonly json: boolean;
  readonly rest: string[];
}

// Separates this command's own flags from the ones passed through to proxy-init.
function takeOwnFlags(args: readonly string[], own: readonly string[], passValueFlags: ReadonlySet<string>, passShorts: ReadonlySet<string>): OwnFlags {
  const values = new Map<string, string>();
  const rest: string[] = [];
  let help = false;
  let json = false;
  const sets: string[] = [];
  for (let i = 0; i < args.length; i++) {
    const a = args[i]!;
    if (a === '--') {
      pushAll(rest, args.slice(i));
      break;
    }
    if (a === '-h' || a === '--help') {
      help = true;
      continue;
    }
    if (a === '--json') {
      json = true;
      continue;
    }
    const m = /^--([^=]+)(?:=(.*))?$/s.exec(a);
    if (m && own.includes(m[1]!)) {
      const name = m[1]!;
      let value = m[2];
      if (value === undefined) {
        if (i + 1 >= args.length) throw new UsageError(`flag needs an argument: --${name}`);
        value = args[++i]!;
      }
      if (name === 'set') sets.push(value);
      else values.set(name, value);
      continue;
    }
    rest.push(a);
    if (m && m[2] === undefined && passValueFlags.has(m[1]!) && i + 1 < args.length) rest.push(args[++i]!);
    else if (/^-[A-Za-z]+$/.test(a) && passShorts.has(a[a.length - 1]!) && i + 1 < args.length) rest.push(args[++i]!);
  }
  return { values, sets, help, json, rest };
}

function parseFormat(v: string | undefined, json = false): LinkerdOutputFormat {
  if (json && v !== undefined && v !== 'json') throw new UsageError(`--json and --format ${v} cannot be used together`);
  const f = (v ?? (json ? 'json' : 'save')) as LinkerdOutputFormat;
  if (!FORMATS.includes(f)) throw new UsageError(`unknown --format ${JSON.stringify(v)} (expected ${FORMATS.join(', ')})`);
  return f;
}

async function render(result: ProxyInitResult | LinkerdCniResult, format: LinkerdOutputFormat): Promise<string> {
  if (format === 'commands') return result.commands.map((l) => `${l}\n`).join('');
  // The printer is only loaded when a rule set is needed.
  const { renderLinkerd } = await import('../../compile/linkerd/output.js');
  return renderLinkerd(result, format);
}

async function finish(io: CliIO, result: ProxyInitResult | LinkerdCniResult, format: LinkerdOutputFormat, prefix: string): Promise<number> {
  for (const line of result.log) io.stderr(`${prefix}: ${line}\n`);
  for (const line of result.warnings) io.stderr(`${prefix}: warning: ${line}\n`);
  const error = result.error;
  if (error && error.stage !== 'iptables') {
    io.stderr(error.stage === 'config' ? `${error.stderrFirstLine}\n` : `${prefix}: ${error.message}\n`);
    return EXIT_INPUT;
  }
  io.stdout(await render(result, format));
  if (error) {
    if (error.toolStderr) io.stderr(error.toolStderr);
    io.stderr(`${error.stderrFirstLine}\n`);
    return EXIT_INPUT;
  }
  return EXIT_OK;
}

function readOptional(io: CliIO, path: string | undefined): string | undefined {
  return path === undefined ? undefined : io.readFile(path);
}

/** Reads a manifest, turning its errors into ones that name the file and show the line. */
function readManifestFile<T>(io: CliIO, path: string, read: (text: string) => T): T {
  const text = io.readFile(path);
  try {
    return read(text);
  } catch (e) {
    if (e instanceof NetfilterSimError) throw new SourceError(path, text, e.diagnostics);
    throw e;
  }
}

async function guard(io: CliIO, command: string, body: () => Promise<number>): Promise<number> {
  try {
    return await body();
  } catch (e) {
    return reportCliError(e, io, command, (err) => `netfilter-sim ${command}: ${err.message}\n`);
  }
}

/**
 * Runs `netfilter-sim compile linkerd [proxy-init flags] [--existing FILE] [--existing6 FILE]
 * [--upstream-version V] [--timestamp N] [--format save|restore|commands|json]`. `args` are the
 * arguments after `compile linkerd`. Returns the exit status: 0, 1 (proxy-init would fail: its
 * messages on stderr), 2 (usage).
 *
 * @example
 * ```ts
 * const io = memoryIO();
 * await runCompileLinkerd(['-p', '4143', '-o', '4140', '--ipv6=false', '--format', 'commands'], io); // 0
 * io.out.split('\n')[1]; // 'iptables-legacy -t nat -N PROXY_INIT_REDIRECT'
 * ```
 */
export async function runCompileLinkerd(args: string[], io: CliIO): Promise<number> {
  return guard(io, 'compile linkerd', async () => {
    const valueFlags = new Set(PROXY_INIT_FLAGS.filter((f) => f.kind !== 'bool').map((f) => f.name));
    const shorts = new Set(PROXY_INIT_FLAGS.filter((f) => f.kind !== 'bool' && f.shorthand).map((f) => f.shorthand!));
    const own = takeOwnFlags(args, ['format', 'existing', 'existing6', 'upstream-version', 'timestamp', 'pod', 'namespace', 'set', 'linkerd-version'], valueFlags, shorts);
    if (own.help) {
      io.stdout(COMPILE_LINKERD_HELP);
      return EXIT_OK;
    }
    const format = parseFormat(own.values.get('format'), own.json);
    const upstreamVersion = own.values.get('upstream-version');
    const timestampText = own.values.get('timestamp');
    if (timestampText !== undefined && !/^\d+$/.test(timestampText)) throw new UsageError(`--timestamp must be unix seconds, got ${JSON.stringify(timestampText)}`);
    const podPath = own.values.get('pod');
    const linkerdVersion = own.values.get('linkerd-version');
    let argv = own.rest;
    if (podPath === undefined) {
      if (own.sets.length > 0 || linkerdVersion !== undefined || own.values.has('namespace')) throw new UsageError('--set, --namespace and --linkerd-version go with --pod');
    } else {
      if (own.rest.length > 0) throw new UsageError(`proxy-init flags and --pod cannot be used together (with --pod the injector writes them): ${JSON.stringify(own.rest[0])}`);
      const values = linkerdValuesFromSet(own.sets);
      const nsPath = own.values.get('namespace');
      let inj;
      try {
        inj = injectProxyInitArgs({
          pod: readManifestFile(io, podPath, readPod),
          ...(nsPath !== undefined ? { namespace: readManifestFile(io, nsPath, readNamespace) } : {}),
          values,
          ...(linkerdVersion !== undefined ? { linkerdVersion } : {}),
        });
      } catch (e) {
        // As a pod linkerd-cni leaves alone: nothing written, the reason on stderr, success.
        if (e instanceof NetfilterSimError && e.diagnostics[0]?.code === 'NOT_INJECTED') {
          io.stderr(`netfilter-sim compile linkerd: ${e.diagnostics[0].message}\n`);
          return EXIT_OK;
        }
        throw e;
      }
      if (inj.error !== undefined) {
        io.stderr(`netfilter-sim compile linkerd: the proxy injector fails for this pod: ${inj.error}\n`);
        return EXIT_INPUT;
      }
      for (const w of inj.warnings) io.stderr(`netfilter-sim compile linkerd: warning: ${w}\n`);
      if (inj.args === null) {
        // As a pod the CNI plugins skip: nothing written, the reason on stderr, success.
        io.stderr(`netfilter-sim compile linkerd: the proxy injector adds no linkerd-init to this pod: cniEnabled (${inj.container} only)\n`);
        return EXIT_OK;
      }
      io.stderr(`# injector${linkerdVersion !== undefined ? ` (Linkerd ${linkerdVersion})` : ''}: linkerd-proxy runs ${inj.nativeSidecar ? 'as a native sidecar' : 'as a regular container'}; linkerd-init ${inj.args.join(' ')}\n`);
      argv = [...inj.args];
    }
    const parsed = parseProxyInitArgs(argv, upstreamVersion !== undefined ? { upstreamVersion } : {});
    if (!parsed.ok) throw new UsageError(parsed.error);
    if (parsed.help) {
      io.stdout(COMPILE_LINKERD_HELP);
      return EXIT_OK;
    }
    for (const arg of parsed.positional) {
      io.stderr(`proxy-init: ignoring argument ${JSON.stringify(arg)} (proxy-init takes no arguments; bool flags need --flag=false)\n`);
    }
    const existing = readOptional(io, own.values.get('existing'));
    const existing6 = readOptional(io, own.values.get('existing6'));
    const result = compileProxyInit(parsed.config, {
      ...(existing !== undefined ? { existing } : {}),
      ...(existing6 !== undefined ? { existing6 } : {}),
      ...(upstreamVersion !== undefined ? { upstreamVersion } : {}),
      ...(timestampText !== undefined ? { timestamp: Number(timestampText) } : {}),
    });
    return finish(io, result, format, 'proxy-init');
  });
}

/**
 * Runs `netfilter-sim compile linkerd-cni --conf FILE --pod FILE [--namespace FILE]
 * [--kubernetes-service FILE] [--netns PATH] [--existing FILE] [--format …]`. A pod the plugin
 * skips exits 0 with the reason on stderr; an ADD failure exits 1.
 *
 * @example
 * ```ts
 * const io = memoryIO({ 'conf.json': '{"linkerd":{"incoming-proxy-port":4143,"outgoing-proxy-port":4140}}', 'pod.yaml': podYaml });
 * await runCompileLinkerdCni(['--conf', 'conf.json', '--pod', 'pod.yaml', '--format', 'commands'], io);
 * ```
 */
export async function runCompileLinkerdCni(args: string[], io: CliIO): Promise<number> {
  return guard(io, 'compile linkerd-cni', async () => {
    const own = takeOwnFlags(
      args,
      ['conf', 'pod', 'namespace', 'kubernetes-service', 'netns', 'format', 'existing', 'existing6', 'upstream-version'],
      new Set(),
      new Set(),
    );
    if (own.help) {
      io.stdout(COMPILE_LINKERD_CNI_HELP);
      return EXIT_OK;
    }
    if (own.rest.length > 0) throw new UsageError(`unexpected argument ${JSON.stringify(own.rest[0])}`);
    const format = parseFormat(own.values.get('format'), own.json);
    const confPath = own.values.get('conf');
    const podPath = own.values.get('pod');
    if (confPath === undefined) throw new UsageError('--conf FILE is required');
    if (podPath === undefined) throw new UsageError('--pod FILE is required');
    const stdinReaders = ['conf', 'pod', 'namespace', 'kubernetes-service', 'existing', 'existing6'].filter((k) => own.values.get(k) === '-');
    if (stdinReaders.length > 1) throw new UsageError(`only one of ${stdinReaders.map((k) => `--${k}`).join(', ')} can read standard input`);
    let conf: unknown;
    try {
      conf = JSON.parse(io.readFile(confPath));
    } catch (e) {
      if (e instanceof SyntaxError) {
        io.stderr(`netfilter-sim compile linkerd-cni: ${confPath}: ${e.message}\n`);
        return EXIT_INPUT;
      }
      throw e;
    }
    const pod = readManifestFile(io, podPath, readPod);
    const nsPath = own.values.get('namespace');
    const svcPath = own.values.get('kubernetes-service');
    const netns = own.values.get('netns');
    const existing = readOptional(io, own.values.get('existing'));
    const existing6 = readOptional(io, own.values.get('existing6'));
    const upstreamVersion = own.values.get('upstream-version');
    const result = compileLinkerdCni({
      conf,
      pod,
      ...(nsPath !== undefined ? { namespace: readManifestFile(io, nsPath, readNamespace) } : {}),
      ...(svcPath !== undefined ? { kubernetesService: readManifestFile(io, svcPath, readService) } : {}),
      ...(netns !== undefined ? { netns } : {}),
      ...(existing !== undefined ? { existing } : {}),
      ...(existing6 !== undefined ? { existing6 } : {}),
      ...(upstreamVersion !== undefined ? { upstreamVersion } : {}),
    });
    // The same shape as compile istio-cni for a pod the plugin leaves alone (exit 0, nothing on stdout).
    if (result.skipped) {
      const why = result.skipped.message.replace(/^linkerd-cni: /, '').replace(/, skipping\.$/, '');
      io.stderr(`netfilter-sim compile linkerd-cni: linkerd-cni does not program this pod: ${why}\n`);
      return EXIT_OK;
    }
    return finish(io, result, format, 'linkerd-cni');
  });
}
