/**
 * The command sequence proxy-init (linkerd-init) runs, reproduced from
 * `linkerd/linkerd2-proxy-init` `pkg/iptables/iptables.go` (`ConfigureFirewall`,
 * `addIncomingTrafficRules`, `addOutgoingTrafficRules`, the `make…` builders) and
 * `proxy-init/cmd/root.go` (`BuildFirewallConfiguration`, the IPv4-then-IPv6 passes).
 *
 * @module
 */
import { NetfilterSimError, diagnostic } from '../../model/errors.js';
import { flagForField, proxyInitConfig, type ProxyInitConfig } from './config.js';
import { IPTABLES_BINARIES, PROXY_INIT_CONSTANTS, PROXY_INIT_DEFAULTS } from './defaults.js';
import { goParseCidr, goQuote } from './go.js';
import { natSection, natStateFromSave, runIptablesCommand, type NatState } from './iptables-model.js';
import { isValidPort, makeMultiportDestinations } from './ports.js';
import {
  CURRENT_PROXY_INIT_VERSION,
  OLDEST_PROXY_INIT_VERSION,
  isKnownProxyInitRelease,
  isModelledVersion,
  parseProxyInitVersion,
  proxyInitFeatures,
  type ProxyInitFeatures,
} from './version.js';
import { pushAll } from '../../model/limits.js';
import { expectArgument, expectStrings, expectShape } from '../../model/guard.js';

/**
 * `iptables.FirewallConfiguration`: what one pass of `ConfigureFirewall` works from.
 *
 * @example
 * ```ts
 * const fc = buildFirewallConfiguration(proxyInitConfig({ incomingProxyPort: 4143, outgoingProxyPort: 4140 }), 4);
 * if (fc.ok) fc.value.binPath; // 'iptables-legacy'
 * ```
 */
export interface FirewallConfiguration {
  /** `redirect-all`, or `redirect-listed` when `--ports-to-redirect` is non-empty. */
  readonly mode: 'redirect-all' | 'redirect-listed';
  readonly portsToRedirectInbound: readonly number[];
  readonly inboundPortsToIgnore: readonly string[];
  readonly outboundPortsToIgnore: readonly string[];
  /** Trimmed and validated with Go's `net.ParseCIDR`, otherwise as given. */
  readonly subnetsToIgnore: readonly string[];
  readonly proxyInboundPort: number;
  readonly proxyOutgoingPort: number;
  readonly proxyUid: number;
  readonly proxyGid: number;
  readonly simulateOnly: boolean;
  readonly netNs: string;
  readonly useWaitFlag: boolean;
  readonly binPath: string;
  readonly saveBinPath: string;
}

/**
 * Options of {@link compileProxyInit}.
 *
 * @example
 * ```ts
 * compileProxyInit(config, { existing: readFileSync('nat-before.txt', 'utf8'), upstreamVersion: 'v2.3.0', timestamp: 1681263857 });
 * ```
 */
export interface CompileProxyInitOptions {
  /**
   * The re-run path: what the first `iptables-save -t nat` of the IPv4 pass returns (the nat table
   * a previous run, or anything else, left). proxy-init decides from it which chains to create
   * (`-N`) or flush (`-F`) and which jumps already exist. Omitted: a fresh network namespace.
   */
  readonly existing?: string;
  /** The same for the IPv6 pass (`ip6tables-save -t nat`). */
  readonly existing6?: string;
  /** The proxy-init release to reproduce, `v1.3.12` … `v2.4.9` (default) or `main`. */
  readonly upstreamVersion?: string;
  /** Unix seconds of process start: the comment suffix of releases before v2.4.0. Default: now. */
  readonly timestamp?: number;
  /** `FirewallConfiguration.ContinueOnError` (library only; the CLI and the CNI plugin never set it). */
  readonly continueOnError?: boolean;
}

/**
 * One address-family pass of `ConfigureFirewall`.
 *
 * @example
 * ```ts
 * const [v4] = compileProxyInit(config).runs;
 * v4.argv.map((a) => [v4.bin, ...a].join(' '));
 * ```
 */
export interface ProxyInitRun {
  readonly family: 4 | 6;
  /** The binary the rule commands run (`iptables-nft`, `ip6tables-legacy`, …). */
  readonly bin: string;
  /** The save binary (`iptables-nft-save`, …). */
  readonly saveBin: string;
  /** Every rule command of the pass, as run: the argv after the binary name (with `-w` when set). */
  readonly argv: readonly (readonly string[])[];
  /** `false` under `--simulate`: the commands were only logged. */
  readonly executed: boolean;
  /** Index in `argv` of each command that failed (at most one unless `continueOnError`). */
  readonly failed: readonly number[];
  /** What each failing command printed and returned, in the order of `failed`. */
  readonly failures: readonly { readonly index: number; readonly exitCode: number; readonly stderr: string }[];
  /** The nat table the pass started from (`existing`/`existing6`), or `undefined` for a fresh namespace. */
  readonly existing: string | undefined;
  /** Releases before v2.2.0 skip a pass whose save output has `-A PROXY_INIT_…` rules. */
  readonly skipped: boolean;
}

/**
 * A pass the configuration asks for: the family and the binaries it uses.
 *
 * @example
 * ```ts
 * compileProxyInit({ ...config, iptablesMode: 'nft' }).passes.map((p) => p.saveBin); // ['iptables-nft-save', 'ip6tables-nft-save']
 * ```
 */
export interface ProxyInitPass {
  readonly family: 4 | 6;
  readonly bin: string;
  readonly saveBin: string;
  /** The nat table before the run (`existing`/`existing6`); `undefined`: a fresh namespace. */
  readonly existing?: string;
}

/**
 * Why proxy-init failed, as it would have.
 *
 * @example
 * ```ts
 * const { error } = compileProxyInit({ outgoingProxyPort: 4140 });
 * error?.stderrFirstLine; // 'Error: --incoming-proxy-port must be a valid TCP port number'
 * ```
 */
export interface ProxyInitError {
  /**
   * `config`: rejected before any iptables command (`BuildFirewallConfiguration`, log level, an
   * option the release does not have); `iptables`: a command failed; `cni-annotation`,
   * `cni-conf`: linkerd-cni's ADD failed before any command.
   */
  readonly stage: 'config' | 'iptables' | 'cni-annotation' | 'cni-conf';
  /** The Go error (`--incoming-proxy-port must be a valid TCP port number`, `exit status 2`). */
  readonly message: string;
  /** proxy-init's exit status (1). */
  readonly exitCode: number;
  /** The first line upstream prints on stderr: `Error: <message>`. */
  readonly stderrFirstLine: string;
  /** `iptables` stage: the pass that failed. */
  readonly pass?: 'ipv4' | 'ipv6';
  /** `iptables` stage: 1-based line of `commands` that failed (its last line). */
  readonly failingCommandLine?: number;
  /** `iptables` stage: the failing tool's exit status and output. */
  readonly toolExitCode?: number;
  readonly toolStderr?: string;
}

/**
 * What {@link compileProxyInit} returns.
 *
 * @example
 * ```ts
 * const parsed = parseProxyInitArgs(argv);
 * const r: ProxyInitResult | undefined = parsed.ok ? compileProxyInit(parsed.config) : undefined;
 * if (r?.error) process.exitCode = r.error.exitCode;
 * ```
 */
export interface ProxyInitResult {
  /** The config compiled (defaults filled in). */
  readonly config: ProxyInitConfig;
  /** The release reproduced. */
  readonly upstreamVersion: string;
  /**
   * Every command line proxy-init runs, in order, binary first, arguments POSIX-shell quoted
   * where needed: the `*-save -t nat` state check, the rule commands, the closing save, per pass;
   * `nsenter --net=… --` in front under `--netns`; a `sysctl -w …` first with
   * `--timeout-close-wait-secs`. An error ends the list with the command that failed.
   */
  readonly commands: readonly string[];
  /** The iptables passes, IPv4 first. */
  readonly runs: readonly ProxyInitRun[];
  /** Whether the configuration asks for an IPv6 pass (the save output then has both tables). */
  readonly ipv6: boolean;
  /** The passes the configuration asks for, with their binaries, whether or not they ran. */
  readonly passes: readonly ProxyInitPass[];
  /** proxy-init's log messages that matter (dropped port entries, skipped runs). */
  readonly log: readonly string[];
  /** Failures upstream logs but survives (an ip6tables failure before v2.4.1). */
  readonly warnings: readonly string[];
  readonly error?: ProxyInitError;
}

const LOG_LEVELS = new Set(['panic', 'fatal', 'error', 'warn', 'warning', 'info', 'debug', 'trace']);

/**
 * `BuildFirewallConfiguration` for one family: mode and binaries (`--iptables-mode`, else
 * `--firewall-bin-path`), proxy ports, subnets. Returns upstream's error text on failure.
 *
 * @example
 * ```ts
 * buildFirewallConfiguration(proxyInitConfig({ outgoingProxyPort: 4140 }), 4);
 * // { ok: false, error: '--incoming-proxy-port must be a valid TCP port number' }
 * ```
 */
export function buildFirewallConfiguration(
  config: ProxyInitConfig,
  family: 4 | 6,
  options: { readonly upstreamVersion?: string } = {},
): { readonly ok: true; readonly value: FirewallConfiguration } | { readonly ok: false; readonly error: string } {
  expectArgument(config, 'object', 'config');
  expectArgument(options, 'object', 'options');
  const features = featuresOf(options.upstreamVersion);
  let bin: string;
  let saveBin: string;
  if (features.iptablesMode) {
    let mode = config.iptablesMode;
    if (mode !== '' && mode !== 'legacy' && mode !== 'nft' && mode !== 'plain') {
      return { ok: false, error: '--iptables-mode valid values are only "legacy", "nft" and "plain"' };
    }
    if (mode === '') {
      switch (config.firewallBinPath) {
        case '': case 'iptables-legacy': mode = 'legacy'; break;
        case 'iptables-nft': mode = 'nft'; break;
        case 'iptables': mode = 'plain'; break;
        default:
          return { ok: false, error: '--firewall-bin-path valid values are only "iptables-legacy", "iptables-nft" and "iptables"' };
      }
    }
    ({ bin, saveBin } = IPTABLES_BINARIES[mode as 'legacy' | 'nft' | 'plain'][family]);
  } else if (features.firewallBinPath) {
    // v1.6.0–v2.2.x: the flags name the binaries themselves (defaults iptables / iptables-save).
    bin = config.firewallBinPath || 'iptables';
    saveBin = config.firewallSaveBinPath || 'iptables-save';
  } else {
    bin = 'iptables';
    saveBin = 'iptables-save';
  }
  if (!isValidPort(config.incomingProxyPort)) {
    return { ok: false, error: '--incoming-proxy-port must be a valid TCP port number' };
  }
  if (!isValidPort(config.outgoingProxyPort)) {
    return { ok: false, error: '--outgoing-proxy-port must be a valid TCP port number' };
  }
  const subnets: string[] = [];
  for (const raw of config.subnetsToIgnore) {
    const subnet = raw.trim();
    if (!goParseCidr(subnet)) return { ok: false, error: `${subnet} is not a valid CIDR address` };
    subnets.push(subnet);
  }
  return {
    ok: true,
    value: {
      mode: config.portsToRedirect.length > 0 ? 'redirect-listed' : 'redirect-all',
      portsToRedirectInbound: config.portsToRedirect,
      inboundPortsToIgnore: config.inboundPortsToIgnore,
      outboundPortsToIgnore: config.outboundPortsToIgnore,
      subnetsToIgnore: subnets,
      proxyInboundPort: config.incomingProxyPort,
      proxyOutgoingPort: config.outgoingProxyPort,
      proxyUid: config.proxyUid,
      proxyGid: features.proxyGid ? config.proxyGid : -1,
      simulateOnly: config.simulate,
      netNs: config.netns,
      useWaitFlag: config.useWaitFlag,
      binPath: bin,
      saveBinPath: saveBin,
    },
  };
}

function featuresOf(upstreamVersion: string | undefined): ProxyInitFeatures {
  const text = upstreamVersion ?? CURRENT_PROXY_INIT_VERSION;
  const v = parseProxyInitVersion(text);
  if (!v) {
    throw new NetfilterSimError(diagnostic('BAD_CONFIG', `unknown proxy-init version "${text}" (expected e.g. v2.4.9 or main)`, undefined, text));
  }
  if (!isKnownProxyInitRelease(v)) {
    throw new NetfilterSimError(diagnostic('BAD_CONFIG', `proxy-init ${text} is not a release (releases: v1.0.0 … ${CURRENT_PROXY_INIT_VERSION}, or main)`, undefined, text));
  }
  if (!isModelledVersion(v)) {
    throw new NetfilterSimError(
      diagnostic('UNSUPPORTED', `proxy-init ${text} is older than the oldest modelled release (${OLDEST_PROXY_INIT_VERSION})`, undefined, text),
    );
  }
  return proxyInitFeatures(v);
}

const SAFE_ARG = /^[A-Za-z0-9_./:,=@%+-]+$/;

/**
 * Writes an argument vector as one POSIX shell line: arguments that are empty or hold a character
 * outside `A-Za-z0-9_./:,=@%+-` are single-quoted (the format of the `.commands` vectors).
 *
 * @example
 * ```ts
 * formatCommandLine(['iptables-legacy', '-t', 'nat', '--dports', '']); // "iptables-legacy -t nat --dports ''"
 * ```
 */
export function formatCommandLine(argv: readonly string[]): string {
  expectArgument(argv, 'array', 'argv');
  expectStrings(argv, 'argv');
  return argv.map((a) => (SAFE_ARG.test(a) ? a : `'${a.replace(/'/g, `'\\''`)}'`)).join(' ');
}

/**
 * Compiles a proxy-init configuration into exactly what proxy-init runs, including its failures:
 * config errors before any command, and the first iptables command that fails (the vectors'
 * `error-*` cases) with iptables' own exit status and message. With `existing`, the re-run path:
 * existing chains are flushed (`-F`) and reused, existing jumps are not added again.
 *
 * @example
 * ```ts
 * const r = compileProxyInit({ incomingProxyPort: 4143, outgoingProxyPort: 4140, proxyUid: 2102, ipv6: false });
 * r.commands[0]; // 'iptables-legacy-save -t nat'
 * r.commands[1]; // 'iptables-legacy -t nat -N PROXY_INIT_REDIRECT'
 * ```
 */
export function compileProxyInit(
  config: Partial<ProxyInitConfig> | ProxyInitConfig,
  options: CompileProxyInitOptions = {},
): ProxyInitResult {
  expectArgument(config, 'object', 'config');
  expectShape(options, { kind: 'object', fields: { existing: ['string', 'undefined'], existing6: ['string', 'undefined'], upstreamVersion: ['string', 'undefined'], timestamp: ['number', 'undefined'], continueOnError: ['boolean', 'undefined'] } }, 'options');
  const cfg = proxyInitConfig(config);
  const upstreamVersion = options.upstreamVersion ?? CURRENT_PROXY_INIT_VERSION;
  const features = featuresOf(upstreamVersion);
  const timestamp = options.timestamp ?? Math.floor(Date.now() / 1000);
  const commands: string[] = [];
  const runs: ProxyInitRun[] = [];
  const log: string[] = [];
  const warnings: string[] = [];
  const passes: ProxyInitPass[] = [];
  const done = (error?: ProxyInitError, ipv6 = false): ProxyInitResult => ({
    config: cfg,
    upstreamVersion,
    commands,
    runs,
    ipv6,
    passes: ipv6 ? passes : passes.filter((p) => p.family === 4),
    log,
    warnings,
    ...(error ? { error } : {}),
  });
  const configError = (message: string): ProxyInitResult =>
    done({ stage: 'config', message, exitCode: 1, stderrFirstLine: `Error: ${message}` });

  // A flag the release does not have: upstream's command line rejects it. (`ipv6` is let through:
  // a release without the IPv6 pass behaves as `--ipv6=false`, whatever the field says.)
  const defaults = PROXY_INIT_DEFAULTS as unknown as Record<string, unknown>;
  for (const field of Object.keys(cfg) as (keyof ProxyInitConfig)[]) {
    const flag = flagForField(field);
    if (flag.feature && !features[flag.feature] && field !== 'ipv6') {
      const v = cfg[field];
      const isDefault = Array.isArray(v) ? v.length === 0 : v === defaults[field];
      if (!isDefault) return configError(`unknown flag: --${flag.name}`);
    }
  }

  // RunE: the conntrack sysctl comes first, then the log level, then the configuration.
  if (cfg.timeoutCloseWaitSecs !== 0) {
    commands.push(formatCommandLine(['sysctl', '-w', `net.netfilter.nf_conntrack_tcp_timeout_close_wait=${cfg.timeoutCloseWaitSecs}`]));
  }
  if (!LOG_LEVELS.has(cfg.logLevel.toLowerCase())) {
    return configError(`not a valid logrus Level: ${goQuote(cfg.logLevel)}`);
  }
  const fc4 = buildFirewallConfiguration(cfg, 4, { upstreamVersion });
  if (!fc4.ok) return configError(fc4.error);

  const ipv6 = features.ipv6 && cfg.ipv6;
  const pass = (family: 4 | 6, fc: FirewallConfiguration, existing: string | undefined): ProxyInitPass =>
    ({ family, bin: fc.binPath, saveBin: fc.saveBinPath, ...(existing !== undefined ? { existing } : {}) });
  passes.push(pass(4, fc4.value, options.existing));
  const fc6 = buildFirewallConfiguration(cfg, 6, { upstreamVersion });
  if (fc6.ok) passes.push(pass(6, fc6.value, options.existing6));
  const ctx: PassContext = { features, timestamp, continueOnError: options.continueOnError ?? false, commands, log };
  const run4 = configureFirewall(fc4.value, 4, options.existing, ctx);
  runs.push(run4.run);
  if (run4.error) return done({ ...run4.error, pass: 'ipv4' }, ipv6);
  if (!ipv6) return done(undefined, false);

  if (!fc6.ok) return configError(fc6.error);
  const run6 = configureFirewall(fc6.value, 6, options.existing6, ctx);
  runs.push(run6.run);
  if (run6.error) {
    if (features.ipv6FailureFatal) return done({ ...run6.error, pass: 'ipv6' }, true);
    warnings.push(`IPv6 pass failed: ${run6.error.message} (${run6.error.toolStderr?.split('\n')[0] ?? ''})`);
  }
  return done(undefined, true);
}

interface PassContext {
  readonly features: ProxyInitFeatures;
  readonly timestamp: number;
  readonly continueOnError: boolean;
  readonly commands: string[];
  readonly log: string[];
}

const C = PROXY_INIT_CONSTANTS;
const preroutingRuleRegex = /^-A PREROUTING (.+ )?-j PROXY_INIT_REDIRECT/m;
const outputRuleRegex = /^-A OUTPUT (.+ )?-j PROXY_INIT_OUTPUT/m;
const redirectChainRegex = /^:PROXY_INIT_REDIRECT /m;
const outputChainRegex = /^:PROXY_INIT_OUTPUT /m;
// Releases before v2.2.0: `chainRegex`, unanchored.
const existingRulesRegex = /-A (PROXY_INIT_OUTPUT|PROXY_INIT_REDIRECT).*/;

// ConfigureFirewall, one family.
function configureFirewall(
  fc: FirewallConfiguration,
  family: 4 | 6,
  existing: string | undefined,
  ctx: PassContext,
): { run: ProxyInitRun; error?: Omit<ProxyInitError, 'pass'> } {
  const { features } = ctx;
  const wrap = (argv: readonly string[]): string =>
    formatCommandLine(fc.netNs !== '' ? ['nsenter', `--net=${fc.netNs}`, '--', ...argv] : argv);
  const argvList: string[][] = [];
  const failed: number[] = [];
  const failures: { index: number; exitCode: number; stderr: string }[] = [];
  const run = (skipped: boolean): ProxyInitRun => ({
    family,
    bin: fc.binPath,
    saveBin: fc.saveBinPath,
    argv: argvList,
    executed: !fc.simulateOnly,
    failed,
    failures,
    existing,
    skipped,
  });

  const showAllRules = [fc.saveBinPath, '-t', 'nat'];
  ctx.commands.push(wrap(showAllRules));
  // Under --simulate nothing runs: the save "returns" nothing.
  const existingRules = fc.simulateOnly || existing === undefined ? '' : natSection(existing);
  const state: NatState = natStateFromSave(existing);

  if (features.skipIfRulesExist && existingRulesRegex.test(existingRules)) {
    ctx.log.push('skipping iptables setup: found 1 existing chains');
    return { run: run(true) };
  }

  const b = new RuleBuilder(fc, features, ctx.timestamp, ctx.log);
  const rules = [...b.incoming(existingRules), ...b.outgoing(existingRules)];
  for (const argv of rules) {
    const full = fc.useWaitFlag ? [...argv, '-w'] : argv;
    argvList.push(full);
    ctx.commands.push(wrap([fc.binPath, ...full]));
    if (fc.simulateOnly) continue;
    const failure = runIptablesCommand(family, fc.binPath, full, state);
    if (failure) {
      failed.push(argvList.length - 1);
      failures.push({ index: argvList.length - 1, exitCode: failure.exitCode, stderr: failure.stderr });
      const message = `exit status ${failure.exitCode}`;
      if (!ctx.continueOnError) {
        return {
          run: run(false),
          error: {
            stage: 'iptables',
            message,
            exitCode: 1,
            stderrFirstLine: `Error: ${message}`,
            failingCommandLine: ctx.commands.length,
            toolExitCode: failure.exitCode,
            toolStderr: failure.stderr,
          },
        };
      }
      ctx.log.push(`continuing despite error: ${message}`);
    }
  }
  ctx.commands.push(wrap(showAllRules));
  return { run: run(false) };
}

// The make… builders of pkg/iptables/iptables.go, argv after the binary.
class RuleBuilder {
  private readonly fc: FirewallConfiguration;
  private readonly features: ProxyInitFeatures;
  private readonly timestamp: number;
  private readonly log: string[];

  constructor(fc: FirewallConfiguration, features: ProxyInitFeatures, timestamp: number, log: string[]) {
    this.fc = fc;
    this.features = features;
    this.timestamp = timestamp;
    this.log = log;
  }

  private comment(text: string): string {
    return this.features.timestampedComments
      ? `${C.commentPrefix}${text}/${this.timestamp}`
      : `${C.commentPrefix}${text}`;
  }

  private createOrFlush(name: string, chainRegex: RegExp, existingRules: string): string[] {
    if (!this.features.flushAndReuse) {
      return ['-t', 'nat', '-N', name, '-m', 'comment', '--comment', this.comment('redirect-common-chain')];
    }
    return chainRegex.test(existingRules) ? ['-t', 'nat', '-F', name] : ['-t', 'nat', '-N', name];
  }

  private jump(chain: string, target: string, comment: string): string[] {
    return ['-t', 'nat', '-A', chain, '-j', target, '-m', 'comment', '--comment', this.comment(comment)];
  }

  private ignoredPorts(ports: readonly string[], chain: string): string[][] {
    const { chunks, invalid } = makeMultiportDestinations(ports);
    pushAll(this.log, invalid);
    return chunks.map((destinations) => {
      const list = destinations.join(',');
      return ['-t', 'nat', '-A', chain, '-p', 'tcp', '--match', 'multiport', '--dports', list, '-j', 'RETURN',
        '-m', 'comment', '--comment', this.comment(`ignore-port-${list}`)];
    });
  }

  private redirectToPort(chain: string, port: number, comment: string): string[] {
    return ['-t', 'nat', '-A', chain, '-p', 'tcp', '-j', 'REDIRECT', '--to-port', `${port}`,
      '-m', 'comment', '--comment', this.comment(comment)];
  }

  incoming(existingRules: string): string[][] {
    const fc = this.fc;
    const out: string[][] = [this.createOrFlush(C.redirectChainName, redirectChainRegex, existingRules)];
    pushAll(out, this.ignoredPorts(fc.inboundPortsToIgnore, C.redirectChainName));
    for (const subnet of fc.subnetsToIgnore) {
      out.push(['-t', 'nat', '-A', C.redirectChainName, '-p', 'all', '-j', 'RETURN', '-s', subnet,
        '-m', 'comment', '--comment', this.comment(`ignore-subnet-${subnet}`)]);
    }
    if (fc.mode === 'redirect-all') {
      out.push(this.redirectToPort(C.redirectChainName, fc.proxyInboundPort, 'redirect-all-incoming-to-proxy-port'));
    } else {
      for (const port of fc.portsToRedirectInbound) {
        out.push(['-t', 'nat', '-A', C.redirectChainName, '-p', 'tcp', '--destination-port', `${port}`,
          '-j', 'REDIRECT', '--to-port', `${fc.proxyInboundPort}`,
          '-m', 'comment', '--comment', this.comment(`redirect-port-${port}-to-proxy-port`)]);
      }
    }
    if (!this.features.flushAndReuse || !preroutingRuleRegex.test(existingRules)) {
      out.push(this.jump(C.IptablesPreroutingChainName, C.redirectChainName, 'install-proxy-init-prerouting'));
    }
    return out;
  }

  outgoing(existingRules: string): string[][] {
    const fc = this.fc;
    const out: string[][] = [this.createOrFlush(C.outputChainName, outputChainRegex, existingRules)];
    if (this.features.redirectNonLoopbackLocalTraffic && fc.proxyUid > 0) {
      // Before v1.4: the proxy's own connections to a local, non-loopback address go inbound.
      out.push(['-t', 'nat', '-A', C.outputChainName, '-m', 'owner', '--uid-owner', `${fc.proxyUid}`,
        '-o', 'lo', '!', '-d', '127.0.0.1/32', '-j', C.redirectChainName,
        '-m', 'comment', '--comment', this.comment('redirect-non-loopback-local-traffic')]);
    }
    if (fc.proxyUid > 0) {
      out.push(['-t', 'nat', '-A', C.outputChainName, '-m', 'owner', '--uid-owner', `${fc.proxyUid}`, '-j', 'RETURN',
        '-m', 'comment', '--comment', this.comment('ignore-proxy-user-id')]);
    }
    if (fc.proxyGid > 0) {
      out.push(['-t', 'nat', '-A', C.outputChainName, '-m', 'owner', '--gid-owner', `${fc.proxyGid}`, '-j', 'RETURN',
        '-m', 'comment', '--comment', this.comment('ignore-proxy-group-id')]);
    }
    out.push(['-t', 'nat', '-A', C.outputChainName, '-o', 'lo', '-j', 'RETURN',
      '-m', 'comment', '--comment', this.comment('ignore-loopback')]);
    pushAll(out, this.ignoredPorts(fc.outboundPortsToIgnore, C.outputChainName));
    out.push(this.redirectToPort(C.outputChainName, fc.proxyOutgoingPort, 'redirect-all-outgoing-to-proxy-port'));
    if (!this.features.flushAndReuse || !outputRuleRegex.test(existingRules)) {
      out.push(this.jump(C.IptablesOutputChainName, C.outputChainName, 'install-proxy-init-output'));
    }
    return out;
  }
}
