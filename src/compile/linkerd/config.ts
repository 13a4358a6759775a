/**
 * proxy-init's options, by their upstream flag names, and a parser for its command line that
 * follows spf13/pflag as cobra configures it for `proxy-init` (`proxy-init/cmd/root.go`).
 *
 * @module
 */
import { PROXY_INIT_DEFAULTS } from './defaults.js';
import { formatNumError, goParseBool, goParseInt, goAtoi, goQuote, goReadCsvRecord } from './go.js';
import {
  CURRENT_PROXY_INIT_VERSION,
  parseProxyInitVersion,
  isKnownProxyInitRelease,
  proxyInitFeatures,
  type ProxyInitFeatures,
} from './version.js';
import { pushAll } from '../../model/limits.js';
import { expectArgv, expectFieldsLike } from '../../model/guard.js';
import { expectArgument } from '../../model/guard.js';

/**
 * Every proxy-init option that affects what it runs, named after its flag (camel-cased). Types
 * follow the Go `RootOptions`: ints are numbers, string slices keep their entries exactly as given
 * (proxy-init validates ports late and drops invalid ones; subnets are trimmed and validated).
 *
 * @example
 * ```ts
 * const config: ProxyInitConfig = proxyInitConfig({ incomingProxyPort: 4143, outgoingProxyPort: 4140, proxyUid: 2102 });
 * ```
 */
export interface ProxyInitConfig {
  /** `--incoming-proxy-port` / `-p`: target of the inbound REDIRECT (mandatory: default -1 is invalid). */
  readonly incomingProxyPort: number;
  /** `--outgoing-proxy-port` / `-o`: target of the outbound REDIRECT (mandatory). */
  readonly outgoingProxyPort: number;
  /** `--proxy-uid` / `-u`: `-m owner --uid-owner` RETURN when > 0. */
  readonly proxyUid: number;
  /** `--proxy-gid` / `-g`: `-m owner --gid-owner` RETURN when > 0 (proxy-init v2.4.0+). */
  readonly proxyGid: number;
  /** `--ports-to-redirect` / `-r`: when non-empty, inbound redirects only these ports. */
  readonly portsToRedirect: readonly number[];
  /** `--inbound-ports-to-ignore`: ports / `L-U` ranges RETURNed in `PROXY_INIT_REDIRECT`. */
  readonly inboundPortsToIgnore: readonly string[];
  /** `--outbound-ports-to-ignore`: ports / ranges RETURNed in `PROXY_INIT_OUTPUT`. */
  readonly outboundPortsToIgnore: readonly string[];
  /** `--subnets-to-ignore`: CIDRs RETURNed by source address in `PROXY_INIT_REDIRECT` (inbound only). */
  readonly subnetsToIgnore: readonly string[];
  /** `--simulate`: log the commands, run none. */
  readonly simulate: boolean;
  /** `--netns`: run every command as `nsenter --net=<netns> -- …`. */
  readonly netns: string;
  /** `--use-wait-flag` / `-w`: append `-w` to every mutating command. */
  readonly useWaitFlag: boolean;
  /** `--timeout-close-wait-secs`: when non-zero, `sysctl -w net.netfilter.nf_conntrack_tcp_timeout_close_wait=N` first. */
  readonly timeoutCloseWaitSecs: number;
  /** `--log-format`: `plain` or `json` (anything else means plain). */
  readonly logFormat: string;
  /** `--log-level`: a logrus level; an unknown one is an error. */
  readonly logLevel: string;
  /** `--iptables-mode`: `legacy`, `nft`, `plain`, or empty to fall back on `--firewall-bin-path`. */
  readonly iptablesMode: string;
  /** `--ipv6`: run the same rules again with ip6tables after the IPv4 pass. */
  readonly ipv6: boolean;
  /** `--firewall-bin-path`: `iptables-legacy`, `iptables-nft` or `iptables` select a mode (when `--iptables-mode` is empty). */
  readonly firewallBinPath: string;
  /** `--firewall-save-bin-path`: accepted, not used to pick binaries. */
  readonly firewallSaveBinPath: string;
}

/**
 * Builds a full {@link ProxyInitConfig} from the fields given, the rest from
 * {@link PROXY_INIT_DEFAULTS}.
 *
 * @example
 * ```ts
 * proxyInitConfig({ incomingProxyPort: 4143, outgoingProxyPort: 4140 }).ipv6; // true
 * ```
 */
export function proxyInitConfig(fields: Partial<ProxyInitConfig> = {}): ProxyInitConfig {
  expectFieldsLike(fields, PROXY_INIT_DEFAULTS, 'config', { portsToRedirect: 'integer' });
  const d = PROXY_INIT_DEFAULTS;
  return {
    incomingProxyPort: fields.incomingProxyPort ?? d.incomingProxyPort,
    outgoingProxyPort: fields.outgoingProxyPort ?? d.outgoingProxyPort,
    proxyUid: fields.proxyUid ?? d.proxyUid,
    proxyGid: fields.proxyGid ?? d.proxyGid,
    portsToRedirect: [...(fields.portsToRedirect ?? d.portsToRedirect)],
    inboundPortsToIgnore: [...(fields.inboundPortsToIgnore ?? d.inboundPortsToIgnore)],
    outboundPortsToIgnore: [...(fields.outboundPortsToIgnore ?? d.outboundPortsToIgnore)],
    subnetsToIgnore: [...(fields.subnetsToIgnore ?? d.subnetsToIgnore)],
    simulate: fields.simulate ?? d.simulate,
    netns: fields.netns ?? d.netns,
    useWaitFlag: fields.useWaitFlag ?? d.useWaitFlag,
    timeoutCloseWaitSecs: fields.timeoutCloseWaitSecs ?? d.timeoutCloseWaitSecs,
    logFormat: fields.logFormat ?? d.logFormat,
    logLevel: fields.logLevel ?? d.logLevel,
    iptablesMode: fields.iptablesMode ?? d.iptablesMode,
    ipv6: fields.ipv6 ?? d.ipv6,
    firewallBinPath: fields.firewallBinPath ?? d.firewallBinPath,
    firewallSaveBinPath: fields.firewallSaveBinPath ?? d.firewallSaveBinPath,
  };
}

type FlagKind = 'int' | 'intSlice' | 'stringSlice' | 'string' | 'bool';

/**
 * One proxy-init flag. @internal
 *
 * @example
 * ```ts
 * PROXY_INIT_FLAGS.find((f: ProxyInitFlag) => f.shorthand === 'p')?.name; // 'incoming-proxy-port'
 * ```
 */
export interface ProxyInitFlag {
  readonly name: string;
  readonly shorthand?: string;
  readonly kind: FlagKind;
  readonly field: keyof ProxyInitConfig | 'help';
  /** The release feature that introduced the flag, when it is not in every modelled release. */
  readonly feature?: keyof ProxyInitFeatures;
}

/**
 * proxy-init's flags, in the order `NewRootCmd` declares them, plus cobra's `--help`.
 * @internal
 *
 * @example
 * ```ts
 * PROXY_INIT_FLAGS.filter((f) => f.kind === 'bool').map((f) => f.name); // ['simulate', 'use-wait-flag', 'ipv6', 'help']
 * ```
 */
export const PROXY_INIT_FLAGS: readonly ProxyInitFlag[] = [
  { name: 'incoming-proxy-port', shorthand: 'p', kind: 'int', field: 'incomingProxyPort' },
  { name: 'outgoing-proxy-port', shorthand: 'o', kind: 'int', field: 'outgoingProxyPort' },
  { name: 'proxy-uid', shorthand: 'u', kind: 'int', field: 'proxyUid' },
  { name: 'proxy-gid', shorthand: 'g', kind: 'int', field: 'proxyGid', feature: 'proxyGid' },
  { name: 'ports-to-redirect', shorthand: 'r', kind: 'intSlice', field: 'portsToRedirect' },
  { name: 'inbound-ports-to-ignore', kind: 'stringSlice', field: 'inboundPortsToIgnore' },
  { name: 'outbound-ports-to-ignore', kind: 'stringSlice', field: 'outboundPortsToIgnore' },
  { name: 'subnets-to-ignore', kind: 'stringSlice', field: 'subnetsToIgnore', feature: 'subnetsToIgnore' },
  { name: 'simulate', kind: 'bool', field: 'simulate' },
  { name: 'netns', kind: 'string', field: 'netns' },
  { name: 'use-wait-flag', shorthand: 'w', kind: 'bool', field: 'useWaitFlag' },
  { name: 'timeout-close-wait-secs', kind: 'int', field: 'timeoutCloseWaitSecs' },
  { name: 'log-format', kind: 'string', field: 'logFormat' },
  { name: 'log-level', kind: 'string', field: 'logLevel' },
  { name: 'iptables-mode', kind: 'string', field: 'iptablesMode', feature: 'iptablesMode' },
  { name: 'ipv6', kind: 'bool', field: 'ipv6', feature: 'ipv6' },
  { name: 'firewall-bin-path', kind: 'string', field: 'firewallBinPath', feature: 'firewallBinPath' },
  { name: 'firewall-save-bin-path', kind: 'string', field: 'firewallSaveBinPath', feature: 'firewallBinPath' },
  { name: 'help', shorthand: 'h', kind: 'bool', field: 'help' },
];

/**
 * The flag behind a config field. @internal
 *
 * @example
 * ```ts
 * flagForField('proxyGid').name; // 'proxy-gid'
 * ```
 */
export function flagForField(field: keyof ProxyInitConfig): ProxyInitFlag {
  return PROXY_INIT_FLAGS.find((f) => f.field === field)!;
}

/**
 * What {@link parseProxyInitArgs} returns.
 *
 * @example
 * ```ts
 * const r: ParsedProxyInitArgs = parseProxyInitArgs(process.argv.slice(2));
 * if (!r.ok) console.error(`Error: ${r.error}`);
 * ```
 */
export type ParsedProxyInitArgs =
  | {
      readonly ok: true;
      readonly config: ProxyInitConfig;
      /** Flags that were given (long names), in order of first appearance. */
      readonly given: readonly string[];
      /** Arguments that are not flags: cobra accepts and ignores them on proxy-init's root command. */
      readonly positional: readonly string[];
      /** `-h`/`--help` was given: upstream prints its usage and exits 0. */
      readonly help: boolean;
    }
  | {
      readonly ok: false;
      /** pflag's message, as cobra prints it after `Error: `. */
      readonly error: string;
    };

/**
 * Options of {@link parseProxyInitArgs}.
 *
 * @example
 * ```ts
 * parseProxyInitArgs(['--proxy-gid', '2102'], { upstreamVersion: 'v2.3.0' }); // { ok: false, error: 'unknown flag: --proxy-gid' }
 * ```
 */
export interface ParseProxyInitArgsOptions {
  /** A proxy-init release (`v2.4.9`, the default): flags it does not have are unknown. */
  readonly upstreamVersion?: string;
}

/**
 * Parses proxy-init's argument vector as its cobra/pflag command line does: `--flag value`,
 * `--flag=value`, shorthands (`-p 4143`, `-p4143`, `-p=4143`), bool flags (`--ipv6`,
 * `--ipv6=false`; `--ipv6 false` leaves `false` as an ignored argument), ints in Go syntax
 * (`0x10`, `010` is octal), repeated slice flags append (`-r 80 -r 81`), string slices are one
 * CSV record each (no trimming), `--` ends the flags. Errors carry pflag's message.
 *
 * @example
 * ```ts
 * const r = parseProxyInitArgs(['-p', '4143', '-o', '4140', '--ipv6=false', '--inbound-ports-to-ignore', '4190,4191']);
 * if (r.ok) r.config.inboundPortsToIgnore; // ['4190', '4191']
 * parseProxyInitArgs(['--nope']); // { ok: false, error: 'unknown flag: --nope' }
 * ```
 */
export function parseProxyInitArgs(argv: readonly string[], options: ParseProxyInitArgsOptions = {}): ParsedProxyInitArgs {
  expectArgument(options, 'object', 'options');
  const version = parseProxyInitVersion(options.upstreamVersion ?? CURRENT_PROXY_INIT_VERSION);
  if (!version || !isKnownProxyInitRelease(version)) return { ok: false, error: `unknown proxy-init version ${goQuote(options.upstreamVersion ?? '')}` };
  const features = proxyInitFeatures(version);
  const flags = PROXY_INIT_FLAGS.filter((f) => f.feature === undefined || features[f.feature]);
  const byName = new Map(flags.map((f) => [f.name, f]));
  const byShort = new Map(flags.filter((f) => f.shorthand).map((f) => [f.shorthand!, f]));

  const fields: { -readonly [K in keyof ProxyInitConfig]?: ProxyInitConfig[K] } = {};
  const changed = new Set<string>();
  const given: string[] = [];
  const positional: string[] = [];
  let help = false;

  const set = (flag: ProxyInitFlag, value: string): string | undefined => {
    const flagName = flag.shorthand ? `-${flag.shorthand}, --${flag.name}` : `--${flag.name}`;
    const invalid = (why: string): string => `invalid argument ${goQuote(value)} for ${goQuote(flagName)} flag: ${why}`;
    if (!given.includes(flag.name)) given.push(flag.name);
    switch (flag.kind) {
      case 'bool': {
        const b = goParseBool(value);
        if (b === undefined) return invalid(`strconv.ParseBool: parsing ${goQuote(value)}: invalid syntax`);
        if (flag.field === 'help') help = b;
        else (fields as Record<string, unknown>)[flag.field] = b;
        break;
      }
      case 'int': {
        const r = goParseInt(value, 0, 'ParseInt');
        if ('error' in r) return invalid(formatNumError(r.error));
        (fields as Record<string, unknown>)[flag.field] = r.value;
        break;
      }
      case 'string':
        (fields as Record<string, unknown>)[flag.field] = value;
        break;
      case 'intSlice': {
        const out: number[] = [];
        for (const d of value.split(',')) {
          const r = goAtoi(d);
          if ('error' in r) return invalid(formatNumError(r.error));
          out.push(r.value);
        }
        // Repeated flags append (pflag's intSlice after the first Set); in place, so n flags cost n.
        const prev = changed.has(flag.name) ? (fields as Record<string, number[]>)[flag.field] : undefined;
        if (prev) pushAll(prev, out);
        else (fields as Record<string, unknown>)[flag.field] = out;
        break;
      }
      case 'stringSlice': {
        let out: string[] = [];
        if (value !== '') {
          const r = goReadCsvRecord(value);
          if ('error' in r) return invalid(r.error);
          out = r.fields;
        }
        const prev = changed.has(flag.name) ? (fields as Record<string, string[]>)[flag.field] : undefined;
        if (prev) pushAll(prev, out);
        else (fields as Record<string, unknown>)[flag.field] = out;
        break;
      }
    }
    changed.add(flag.name);
    return undefined;
  };

  expectArgv(argv, 'argv');
  const args = argv;
  let next = 0;
  while (next < args.length) {
    const s = args[next++]!;
    if (s.length === 0 || s[0] !== '-' || s.length === 1) {
      positional.push(s);
      continue;
    }
    if (s[1] === '-') {
      if (s.length === 2) {
        pushAll(positional, args.slice(next));
        break;
      }
      let name = s.slice(2);
      if (name.length === 0 || name[0] === '-' || name[0] === '=') return { ok: false, error: `bad flag syntax: ${s}` };
      const eq = name.indexOf('=');
      const inline = eq >= 0 ? name.slice(eq + 1) : undefined;
      if (eq >= 0) name = name.slice(0, eq);
      const flag = byName.get(name);
      if (!flag) return { ok: false, error: `unknown flag: --${name}` };
      let value: string;
      if (inline !== undefined) value = inline;
      else if (flag.kind === 'bool') value = 'true';
      else if (next < args.length) value = args[next++]!;
      else return { ok: false, error: `flag needs an argument: ${s}` };
      const err = set(flag, value);
      if (err) return { ok: false, error: err };
      continue;
    }
    // shorthands: "-wp4143", "-p=4143", "-p 4143"
    let shorthands = s.slice(1);
    while (shorthands.length > 0) {
      const c = shorthands[0]!;
      const flag = byShort.get(c);
      if (!flag) return { ok: false, error: `unknown shorthand flag: '${c}' in -${shorthands}` };
      let value: string;
      let rest = shorthands.slice(1);
      if (shorthands.length > 2 && shorthands[1] === '=') {
        value = shorthands.slice(2);
        rest = '';
      } else if (flag.kind === 'bool') {
        value = 'true';
      } else if (shorthands.length > 1) {
        value = shorthands.slice(1);
        rest = '';
      } else if (next < args.length) {
        value = args[next++]!;
      } else {
        return { ok: false, error: `flag needs an argument: '${c}' in -${shorthands}` };
      }
      const err = set(flag, value);
      if (err) return { ok: false, error: err };
      shorthands = rest;
    }
  }
  return { ok: true, config: proxyInitConfig(fields), given, positional, help };
}

/**
 * Writes a config back as proxy-init arguments (only the fields that differ from
 * {@link PROXY_INIT_DEFAULTS}), in flag declaration order. Parsing the result gives the config back.
 *
 * @example
 * ```ts
 * formatProxyInitArgs(proxyInitConfig({ incomingProxyPort: 4143, outgoingProxyPort: 4140, ipv6: false }));
 * // ['--incoming-proxy-port', '4143', '--outgoing-proxy-port', '4140', '--ipv6=false']
 * ```
 */
export function formatProxyInitArgs(config: ProxyInitConfig): string[] {
  expectArgument(config, 'object', 'config');
  const out: string[] = [];
  const d = PROXY_INIT_DEFAULTS as unknown as Record<string, unknown>;
  for (const flag of PROXY_INIT_FLAGS) {
    if (flag.field === 'help') continue;
    const v = config[flag.field];
    const dv = d[flag.field];
    if (Array.isArray(v)) {
      if (v.length === 0) continue;
      if (flag.kind === 'stringSlice') out.push(`--${flag.name}`, (v as string[]).map(csvField).join(','));
      else out.push(`--${flag.name}`, (v as number[]).join(','));
    } else if (v !== dv) {
      if (typeof v === 'boolean') out.push(`--${flag.name}=${v}`);
      else out.push(`--${flag.name}`, String(v));
    }
  }
  return out;
}

function csvField(f: string): string {
  return /[",\r\n]/.test(f) || f.startsWith(' ') ? `"${f.replace(/"/g, '""')}"` : f;
}
