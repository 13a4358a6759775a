/**
 * istio-iptables' command line, read as its cobra/pflag parser reads it
 * (`tools/istio-iptables/pkg/cmd/root.go`), plus the environment variables it binds.
 *
 * @module
 */
import { fail } from '../../model/errors.js';
import { type IstioConfig, ISTIO_DEFAULT_CONFIG } from './config.js';
import { pushAll } from '../../model/limits.js';
import { expectArgv } from '../../model/guard.js';
import { expectArgument } from '../../model/guard.js';

type FieldOf<T> = { [K in keyof IstioConfig]: IstioConfig[K] extends T ? K : never }[keyof IstioConfig];

/** One istio-iptables flag: its names, value kind, the config field it sets and its environment variables. */
export interface FlagDef {
  readonly long: string;
  readonly short?: string;
  readonly kind: 'string' | 'bool' | 'uint16' | 'duration';
  readonly field: keyof IstioConfig;
  /** Environment variables bound to the flag, first wins (`flag.BindEnv`, `flag.AdditionalEnv`). */
  readonly env: readonly string[];
}

const envOf = (long: string): string => long.toUpperCase().replace(/-/g, '_');
const str = (long: string, short: string | undefined, field: FieldOf<string>, env = true): FlagDef =>
  short === undefined
    ? { long, kind: 'string', field, env: env ? [envOf(long)] : [] }
    : { long, short, kind: 'string', field, env: env ? [envOf(long)] : [] };
const bool = (long: string, field: FieldOf<boolean>, extraEnv: readonly string[] = [], short?: string): FlagDef =>
  short === undefined
    ? { long, kind: 'bool', field, env: [envOf(long), ...extraEnv] }
    : { long, short, kind: 'bool', field, env: [envOf(long), ...extraEnv] };

/**
 * Every flag istio-iptables accepts, with its short form, the config field it sets and the
 * environment variables bound to it (upper-cased flag name; `-p` has none).
 *
 * @example
 * ```ts
 * ISTIO_IPTABLES_FLAGS.find((f) => f.short === 'b')?.long; // 'istio-inbound-ports'
 * ```
 */
export const ISTIO_IPTABLES_FLAGS: readonly FlagDef[] = [
  str('envoy-port', 'p', 'proxyPort', false),
  str('inbound-capture-port', 'z', 'inboundCapturePort'),
  str('inbound-tunnel-port', 'e', 'inboundTunnelPort'),
  str('proxy-uid', 'u', 'proxyUID'),
  str('proxy-gid', 'g', 'proxyGID'),
  str('istio-inbound-interception-mode', 'm', 'inboundInterceptionMode'),
  str('istio-inbound-ports', 'b', 'inboundPortsInclude'),
  str('istio-local-exclude-ports', 'd', 'inboundPortsExclude'),
  str('istio-exclude-interfaces', 'c', 'excludeInterfaces'),
  str('istio-service-cidr', 'i', 'outboundIPRangesInclude'),
  str('istio-service-exclude-cidr', 'x', 'outboundIPRangesExclude'),
  str('istio-outbound-ports', 'q', 'outboundPortsInclude'),
  str('istio-local-outbound-ports-exclude', 'o', 'outboundPortsExclude'),
  str('kube-virt-interfaces', 'k', 'rerouteVirtualInterfaces'),
  str('istio-inbound-tproxy-mark', 't', 'inboundTProxyMark'),
  str('istio-inbound-tproxy-route-table', 'r', 'inboundTProxyRouteTable'),
  bool('dry-run', 'dryRun', [], 'n'),
  { long: 'iptables-probe-port', kind: 'uint16', field: 'iptablesProbePort', env: ['IPTABLES_PROBE_PORT'] },
  { long: 'probe-timeout', kind: 'duration', field: 'probeTimeout', env: ['PROBE_TIMEOUT'] },
  bool('skip-rule-apply', 'skipRuleApply'),
  bool('run-validation', 'runValidation'),
  bool('redirect-dns', 'redirectDNS', ['ISTIO_META_DNS_CAPTURE']),
  bool('drop-invalid', 'dropInvalid', ['INVALID_DROP']),
  bool('dual-stack', 'dualStack', ['ISTIO_DUAL_STACK']),
  bool('capture-all-dns', 'captureAllDNS'),
  str('network-namespace', undefined, 'networkNamespace'),
  bool('cni-mode', 'hostFilesystemPodNetwork'),
  bool('reconcile', 'reconcile'),
  bool('cleanup-only', 'cleanupOnly'),
  bool('force-apply', 'forceApply'),
  bool('native-nftables', 'nativeNftables'),
  str('force-iptables-binary', undefined, 'forceIptablesBinary'),
];

/** istio's logging flags (`pkg/log`, attached to every istio command); accepted and ignored. */
const LOG_FLAGS: ReadonlyMap<string, 'string' | 'bool'> = new Map([
  ['log_as_json', 'bool'],
  ['log_caller', 'string'],
  ['log_output_level', 'string'],
  ['log_stacktrace_level', 'string'],
  ['log_target', 'string'],
  ['log_rotate', 'string'],
  ['log_rotate_max_age', 'string'],
  ['log_rotate_max_backups', 'string'],
  ['log_rotate_max_size', 'string'],
] as const);

/** Environment-only settings (`constants.go`: "variables that deliberately have no flags"). */
const ENV_ONLY: readonly [string, FieldOf<string>][] = [
  ['ISTIO_OUTBOUND_OWNER_GROUPS', 'ownerGroupsInclude'],
  ['ISTIO_OUTBOUND_OWNER_GROUPS_EXCLUDE', 'ownerGroupsExclude'],
  ['ISTIO_OUTBOUND_IPV4_LOOPBACK_CIDR', 'hostIPv4LoopbackCidr'],
];

/**
 * The outcome of reading an istio-iptables command line: the configuration and the positional
 * arguments cobra accepted and ignored.
 *
 * @example
 * ```ts
 * const { config, ignored } = parseIstioIptablesCommandLine(['-b', '*', 'extra']);
 * ignored; // ['extra']
 * ```
 */
export interface IstioCommandLine {
  readonly config: IstioConfig;
  readonly ignored: readonly string[];
}

/**
 * Reads istio-iptables arguments (`istio-iptables` itself, or `pilot-agent istio-iptables`, may
 * be the first word) the way pflag does: `-p 15001`, `-p15001`, `-p=15001`, `--envoy-port 15001`,
 * `--envoy-port=15001`, boolean flags without a value or with `=true|false`, combined short
 * booleans, `--` ending the flags. A flag's value is taken even if it starts with `-`.
 * `env` supplies the environment variables upstream binds (the command line wins over them).
 * `EnableIPv6` and the DNS servers are not flags; set them on the result.
 * Throws `UNKNOWN_OPTION`, `MISSING_ARGUMENT` or `BAD_VALUE`.
 *
 * @example
 * ```ts
 * const cfg = parseIstioIptablesArgs(['-p', '15001', '-z', '15006', '-u', '1337', '-m', 'REDIRECT',
 *   '-i', '*', '-x', '', '-b', '*', '-d', '15090,15021,15020']);
 * cfg.inboundPortsExclude; // '15090,15021,15020'
 * ```
 */
export function parseIstioIptablesArgs(
  argv: readonly string[],
  env: Readonly<Record<string, string | undefined>> = {},
): IstioConfig {
  return parseIstioIptablesCommandLine(argv, env).config;
}

/**
 * As {@link parseIstioIptablesArgs}, also returning the ignored positional arguments.
 *
 * @example
 * ```ts
 * parseIstioIptablesCommandLine(['--redirect-dns'], { ISTIO_OUTBOUND_OWNER_GROUPS: 'java,202' }).config.ownerGroupsInclude;
 * // 'java,202'
 * ```
 */
export function parseIstioIptablesCommandLine(
  argv: readonly string[],
  env: Readonly<Record<string, string | undefined>> = {},
): IstioCommandLine {
  expectArgument(env, 'object', 'env');
  expectArgv(argv, 'argv');
  let args = argv;
  const isProgram = (a: string | undefined, name: string): boolean => a === name || (a ?? '').endsWith(`/${name}`);
  if (isProgram(args[0], 'pilot-agent') && args[1] === 'istio-iptables') args = args.slice(2);
  else if (isProgram(args[0], 'istio-iptables')) args = args.slice(1);

  const values = new Map<keyof IstioConfig, unknown>();
  // Environment first; flags given on the command line override it.
  for (const def of ISTIO_IPTABLES_FLAGS) {
    for (const name of def.env) {
      const v = env[name];
      if (v === undefined) continue;
      const parsed = convert(def, v, `$${name}`, true);
      if (parsed !== undefined) {
        values.set(def.field, parsed);
        break;
      }
    }
  }
  for (const [name, field] of ENV_ONLY) {
    const v = env[name];
    if (v !== undefined) values.set(field, v);
  }

  const ignored: string[] = [];
  const byLong = new Map(ISTIO_IPTABLES_FLAGS.map((d) => [d.long, d]));
  const byShort = new Map(ISTIO_IPTABLES_FLAGS.filter((d) => d.short !== undefined).map((d) => [d.short!, d]));
  const set = (def: FlagDef, raw: string, written: string): void => {
    values.set(def.field, convert(def, raw, written, false));
  };

  let next = 0;
  while (next < args.length) {
    const a = args[next++]!;
    if (a === '--') {
      pushAll(ignored, args.slice(next));
      break;
    }
    if (a.startsWith('--')) {
      const body = a.slice(2);
      const eq = body.indexOf('=');
      const name = eq >= 0 ? body.slice(0, eq) : body;
      const logKind = LOG_FLAGS.get(name);
      if (logKind !== undefined) {
        if (eq < 0 && logKind === 'string') next++;
        continue;
      }
      const def = byLong.get(name);
      if (!def) fail('UNKNOWN_OPTION', `unknown flag: --${name}`, undefined, a);
      if (eq >= 0) set(def, body.slice(eq + 1), `--${name}`);
      else if (def.kind === 'bool') set(def, 'true', `--${name}`);
      else {
        if (next >= args.length) fail('MISSING_ARGUMENT', `flag needs an argument: --${name}`, undefined, a);
        set(def, args[next++]!, `--${name}`);
      }
      continue;
    }
    if (a.startsWith('-') && a.length > 1) {
      let rest = a.slice(1);
      while (rest.length > 0) {
        const c = rest[0]!;
        const def = byShort.get(c);
        if (!def) fail('UNKNOWN_OPTION', `unknown shorthand flag: '${c}' in ${a}`, undefined, a);
        if (rest.length > 2 && rest[1] === '=') {
          set(def, rest.slice(2), `-${c}`);
          break;
        }
        if (def.kind === 'bool') {
          set(def, 'true', `-${c}`);
          rest = rest.slice(1);
          continue;
        }
        if (rest.length > 1) {
          set(def, rest.slice(1), `-${c}`);
        } else {
          if (next >= args.length) fail('MISSING_ARGUMENT', `flag needs an argument: '${c}' in -${c}`, undefined, a);
          set(def, args[next++]!, `-${c}`);
        }
        break;
      }
      continue;
    }
    ignored.push(a);
  }

  const config = { ...ISTIO_DEFAULT_CONFIG } as Record<keyof IstioConfig, unknown>;
  for (const [k, v] of values) config[k] = v;
  return { config: config as unknown as IstioConfig, ignored };
}

/** Converts a flag or env value; env values that do not parse are ignored (undefined). */
function convert(def: FlagDef, raw: string, written: string, fromEnv: boolean): unknown {
  switch (def.kind) {
    case 'string':
      return raw;
    case 'bool': {
      const b = parseGoBool(raw);
      if (b === undefined) {
        if (fromEnv) return undefined;
        fail('BAD_VALUE', `invalid argument "${raw}" for "${written}" flag: strconv.ParseBool: parsing "${raw}": invalid syntax`, undefined, raw);
      }
      return b;
    }
    case 'uint16': {
      if (!/^[0-9]+$/.test(raw) || Number(raw) > 65535) {
        if (fromEnv) return undefined;
        fail('BAD_VALUE', `invalid argument "${raw}" for "${written}" flag: value out of range or not a number`, undefined, raw);
      }
      return Number(raw);
    }
    case 'duration': {
      if (!/^([0-9]+(\.[0-9]+)?(ns|us|µs|ms|s|m|h))+$|^0$/.test(raw)) {
        if (fromEnv) return undefined;
        fail('BAD_VALUE', `invalid argument "${raw}" for "${written}" flag: time: invalid duration "${raw}"`, undefined, raw);
      }
      return raw;
    }
  }
}

/**
 * Go's `strconv.ParseBool`.
 * @internal
 */
export function parseGoBool(s: string): boolean | undefined {
  if (['1', 't', 'T', 'TRUE', 'true', 'True'].includes(s)) return true;
  if (['0', 'f', 'F', 'FALSE', 'false', 'False'].includes(s)) return false;
  return undefined;
}

/**
 * Writes a configuration back as the istio-iptables arguments that produce it (every field that
 * differs from upstream's defaults), plus the environment-only settings. The inverse of
 * {@link parseIstioIptablesArgs} for the fields flags and env can set.
 *
 * @example
 * ```ts
 * formatIstioIptablesArgs(istioConfig({ inboundPortsInclude: '*' }));
 * // { argv: ['-b', '*'], env: {} }
 * ```
 */
export function formatIstioIptablesArgs(config: IstioConfig): { argv: string[]; env: Record<string, string> } {
  expectArgument(config, 'object', 'config');
  const argv: string[] = [];
  for (const def of ISTIO_IPTABLES_FLAGS) {
    const v = config[def.field];
    if (v === ISTIO_DEFAULT_CONFIG[def.field]) continue;
    const flag = def.short !== undefined ? `-${def.short}` : `--${def.long}`;
    if (def.kind === 'bool') argv.push(v ? flag : `--${def.long}=false`);
    else argv.push(flag, String(v));
  }
  const env: Record<string, string> = {};
  for (const [name, field] of ENV_ONLY) {
    if (config[field] !== ISTIO_DEFAULT_CONFIG[field]) env[name] = config[field];
  }
  return { argv, env };
}
