/**
 * Capture setups for the mesh compilers, and the re-run law: what Linkerd's proxy-init and
 * istio-iptables write for a configuration, and what that configuration says should be
 * captured.
 *
 * @module
 */
import { diagnostic, NetfilterSimError } from '../model/errors.js';
import { compileIstio, type IstioCompileOptions } from '../compile/istio/compile.js';
import { splitIstioList, type IstioConfig } from '../compile/istio/config.js';
import { compileProxyInit, type CompileProxyInitOptions } from '../compile/linkerd/proxy-init.js';
import { proxyInitConfig, type ProxyInitConfig } from '../compile/linkerd/config.js';
import { parsePortRange } from '../compile/linkerd/ports.js';
import type { Family, Ruleset } from '../model/types.js';
import { printIptablesSave } from '../iptables/print/save.js';
import { applyIptablesCommands } from '../iptables/syntax/apply.js';
import { parseCidr } from '../model/address.js';
import { parseIptablesSave } from '../iptables/syntax/save.js';
import type { CaptureSetup, LawPortRange } from './capture.js';
import type { Counterexample } from './counterexample.js';
import { expectArgument } from '../model/guard.js';

function configError(what: string, message: string): never {
  throw new NetfilterSimError(diagnostic('BAD_CONFIG', `${what}: ${message}`));
}

function linkerdPorts(entries: readonly string[]): LawPortRange[] {
  const out: LawPortRange[] = [];
  for (const e of entries) {
    const r = parsePortRange(e);
    if (r.ok) out.push({ min: r.value.lowerBound, max: r.value.upperBound });
  }
  return out;
}

/**
 * The capture setup of a proxy-init configuration: the rules it writes (IPv4, and IPv6 when it
 * runs an IPv6 pass), the proxy (its UID, or Linkerd's 2102 when none is given; its GID when
 * above 0; ports 4140/4143 or as configured), the outbound and inbound ports it ignores (the
 * valid entries: proxy-init drops the others), the subnets it ignores and the listed inbound
 * ports. Throws a `BAD_CONFIG` error when proxy-init itself fails.
 *
 * @example
 * ```ts
 * const setup = linkerdCapture({ incomingProxyPort: 4143, outgoingProxyPort: 4140, proxyUid: 2102, ipv6: false });
 * appTrafficReachesProxy(setup, { from: 'local', uid: 1000, dst: '10.96.0.10:80' }); // undefined: the law holds
 * ```
 */
export function linkerdCapture(config: Partial<ProxyInitConfig>, options: CompileProxyInitOptions = {}): CaptureSetup {
  expectArgument(config, 'object', 'config');
  expectArgument(options, 'object', 'options');
  const cfg = proxyInitConfig(config);
  const r = compileProxyInit(cfg, options);
  if (r.error) configError('proxy-init failed', r.error.message + (r.error.toolStderr ? ` (${r.error.toolStderr.trim()})` : ''));
  const apply = (family: Family): Ruleset | undefined => {
    const run = r.runs.find((x) => x.family === family);
    if (!run || !run.executed || run.skipped) return undefined;
    return applyIptablesCommands(undefined, run.argv, { family });
  };
  const rules = apply(4);
  const rules6 = apply(6);
  const portsToRedirect = cfg.portsToRedirect.map((p) => ({ min: p, max: p }));
  return {
    ...(rules ? { rules } : {}),
    ...(rules6 ? { rules6 } : {}),
    proxy: {
      uids: [cfg.proxyUid > 0 ? cfg.proxyUid : cfg.proxyUid === 0 ? 0 : 2102],
      gids: cfg.proxyGid > 0 ? [cfg.proxyGid] : [],
      outboundPort: cfg.outgoingProxyPort,
      inboundPort: cfg.incomingProxyPort,
    },
    outbound: { excludedPorts: linkerdPorts(cfg.outboundPortsToIgnore) },
    inbound: {
      excludedPorts: linkerdPorts(cfg.inboundPortsToIgnore),
      excludedSources: cfg.subnetsToIgnore.map((s) => s.trim()),
      includedPorts: portsToRedirect.length > 0 ? portsToRedirect : '*',
    },
    config: cfg,
  };
}

function numbers(list: string): number[] {
  return splitIstioList(list).filter((x) => /^\d+$/.test(x)).map(Number);
}

function validCidrs(list: string): string[] {
  return splitIstioList(list).filter((c) => parseCidr(c, c.includes(':') ? 6 : 4) !== null && c.includes('/'));
}

/**
 * The capture setup of an istio-iptables configuration: the `iptables-restore` input (and the
 * `ip6tables-restore` one with IPv6) loaded into an empty namespace; the proxy's UIDs and GIDs;
 * ports 15001/15006 or as configured; outbound port, CIDR, group and interface exclusions and
 * inclusions; the inbound ports (`-b`, `-d`) with the tunnel port always skipped; DNS capture;
 * TPROXY's policy routing and transparent listener.
 *
 * @example
 * ```ts
 * import { istioConfig } from 'netfilter-sim';
 * const setup = istioCapture(istioConfig({ inboundPortsInclude: '*', outboundIPRangesInclude: '*' }));
 * inboundReachesProxy(setup, { from: 'remote', src: '10.1.0.5', dst: '10.0.0.2:8080' }); // undefined
 * ```
 */
export function istioCapture(config: Partial<IstioConfig>, options: IstioCompileOptions = {}): CaptureSetup {
  expectArgument(config, 'object', 'config');
  expectArgument(options, 'object', 'options');
  const r = compileIstio(config, options);
  const cfg = r.config;
  const load = (family: Family): Ruleset | undefined => {
    const restore = r.restore.find((x) => x.family === family);
    if (!restore) return undefined;
    const p = parseIptablesSave(restore.text, { family, mode: 'strict' });
    const error = p.diagnostics.find((d) => d.severity === 'error');
    if (error) configError(`the IPv${family} restore input istio-iptables wrote does not load`, error.message);
    return p.ruleset;
  };
  const rules = load(4);
  const rules6 = load(6);
  const tproxy = cfg.inboundInterceptionMode === 'TPROXY' && cfg.inboundPortsInclude !== '';
  const dnsOn = cfg.redirectDNS && (cfg.captureAllDNS || cfg.dnsServersV4.length > 0 || cfg.dnsServersV6.length > 0);
  const include = cfg.outboundIPRangesInclude === '*' ? '*' : validCidrs(cfg.outboundIPRangesInclude);
  const tunnel = Number(cfg.inboundTunnelPort);
  const inboundExcluded = cfg.inboundPortsInclude === '*' ? numbers(cfg.inboundPortsExclude) : [];
  const ipRules = tproxy ? [{ fwmark: Number(cfg.inboundTProxyMark), table: Number(cfg.inboundTProxyRouteTable) }] : [];
  const routes = tproxy
    ? [
      { dst: '0.0.0.0/0', dev: 'lo', type: 'local' as const, table: Number(cfg.inboundTProxyRouteTable) },
      { dst: '::/0', dev: 'lo', type: 'local' as const, table: Number(cfg.inboundTProxyRouteTable) },
    ]
    : [];
  const groupsInclude = cfg.ownerGroupsInclude === '*' || cfg.ownerGroupsInclude === '' ? '*' : numbers(cfg.ownerGroupsInclude);
  return {
    ...(rules ? { rules } : {}),
    ...(rules6 ? { rules6 } : {}),
    // --native-nftables: the transaction handed to `nft -f`, for the families istio-iptables covers.
    ...(r.nft !== undefined ? { nft: r.nft, nftFamilies: cfg.enableIPv6 ? [4, 6] as const : [4] as const } : {}),
    proxy: {
      uids: numbers(cfg.proxyUID),
      gids: numbers(cfg.proxyGID),
      outboundPort: Number(cfg.proxyPort),
      inboundPort: Number(cfg.inboundCapturePort),
      transparentInbound: tproxy,
    },
    outbound: {
      excludedPorts: numbers(cfg.outboundPortsExclude).map((p) => ({ min: p, max: p })),
      excludedDestinations: validCidrs(cfg.outboundIPRangesExclude),
      includedDestinations: include,
      includedPorts: numbers(cfg.outboundPortsInclude),
      excludedGids: groupsInclude === '*' ? numbers(cfg.ownerGroupsExclude) : [],
      includedGids: groupsInclude,
      excludedInterfaces: splitIstioList(cfg.excludeInterfaces),
    },
    ...(cfg.inboundPortsInclude === ''
      ? {}
      : {
        inbound: {
          includedPorts: cfg.inboundPortsInclude === '*' ? '*' as const : numbers(cfg.inboundPortsInclude).map((p) => ({ min: p, max: p })),
          excludedPorts: [...inboundExcluded, tunnel].map((p) => ({ min: p, max: p })),
          excludedInterfaces: splitIstioList(cfg.excludeInterfaces),
          reroutedInterfaces: splitIstioList(cfg.rerouteVirtualInterfaces),
        },
      }),
    ...(dnsOn ? { dns: { port: 53, listenPort: 15053 } } : {}),
    ...(tproxy ? { netns: { ipRules, routes } } : {}),
    config: cfg,
  };
}

// ---------------------------------------------------------------------------------------------
// Re-runs

/**
 * The name of {@link rerunChangesNothing} and {@link linkerdRerunIsIdempotent}, as counterexamples
 * carry it in `law`.
 *
 * @example
 * ```ts
 * linkerdRerunIsIdempotent(config)?.law === RERUN_CHANGES_NOTHING;
 * ```
 */
export const RERUN_CHANGES_NOTHING = 'compiling twice over existing rules changes nothing';

function firstDifference(a: string, b: string): string {
  const x = a.split('\n');
  const y = b.split('\n');
  for (let i = 0; i < Math.max(x.length, y.length); i++) {
    if (x[i] !== y[i]) return `line ${i + 1}:\n  first:  ${x[i] ?? '(end)'}\n  second: ${y[i] ?? '(end)'}`;
  }
  return '(no difference)';
}

/**
 * Law: running a generator a second time, over the rules its first run left, changes nothing.
 * `run` takes the rule set in place (`undefined` for a fresh namespace) and returns the rule set
 * after the run. Returns a counterexample when the two rule sets print differently, or when the
 * second run fails.
 *
 * @example
 * ```ts
 * const cx = rerunChangesNothing((existing) => applyIptablesCommands(existing, myGenerator(config), { family: 4 }), 4);
 * ```
 */
export function rerunChangesNothing(run: (existing: Ruleset | undefined) => Ruleset, family: Family, config?: unknown): Counterexample | undefined {
  expectArgument(run, 'function', 'run');
  const first = run(undefined);
  const once = printIptablesSave(first);
  let twice: string;
  try {
    twice = printIptablesSave(run(first));
  } catch (e) {
    return {
      law: RERUN_CHANGES_NOTHING, family, rules: once,
      message: `the second run failed over the rules of the first: ${(e as Error).message}`,
      ...(config !== undefined ? { config } : {}),
    };
  }
  if (once === twice) return undefined;
  return {
    law: RERUN_CHANGES_NOTHING, family, rules: once,
    message: 'the second run left different rules than the first',
    details: `After the second run (iptables-save):\n${twice}\nFirst difference, ${firstDifference(once, twice)}`,
    ...(config !== undefined ? { config } : {}),
  };
}

/**
 * Law: proxy-init run twice (the second time over what the first left, through its re-run path:
 * existing chains flushed and reused, existing jumps kept) leaves the same nat table, for each
 * address family it writes.
 *
 * @example
 * ```ts
 * import * as fc from 'fast-check';
 * import { linkerdConfig } from 'netfilter-sim/arbitraries';
 * fc.assert(fc.property(linkerdConfig(), (config) => linkerdRerunIsIdempotent(config) === undefined));
 * ```
 */
export function linkerdRerunIsIdempotent(config: Partial<ProxyInitConfig>, options: CompileProxyInitOptions = {}): Counterexample | undefined {
  expectArgument(config, 'object', 'config');
  expectArgument(options, 'object', 'options');
  const cfg = proxyInitConfig(config);
  const first = compileProxyInit(cfg, options);
  if (first.error) configError('proxy-init failed', first.error.message);
  const after = (family: Family, result: typeof first, initial: Ruleset | undefined): Ruleset | undefined => {
    const run = result.runs.find((x) => x.family === family);
    if (!run || !run.executed || run.skipped) return initial;
    return applyIptablesCommands(initial, run.argv, { family });
  };
  const once4 = after(4, first, undefined);
  const once6 = after(6, first, undefined);
  const save4 = once4 ? printIptablesSave(once4) : '';
  const save6 = once6 ? printIptablesSave(once6) : '';
  const second = compileProxyInit(cfg, { ...options, existing: save4, ...(once6 ? { existing6: save6 } : {}) });
  if (second.error) {
    return {
      law: RERUN_CHANGES_NOTHING, family: second.error.pass === 'ipv6' ? 6 : 4, rules: second.error.pass === 'ipv6' ? save6 : save4, config: cfg,
      message: `proxy-init failed when run again over its own rules: ${second.error.message}${second.error.toolStderr ? ` (${second.error.toolStderr.trim()})` : ''}`,
      details: `Commands of the second run:\n${second.commands.join('\n')}`,
    };
  }
  for (const [family, once, save] of [[4, once4, save4], [6, once6, save6]] as const) {
    if (!once) continue;
    let twice: string;
    try {
      twice = printIptablesSave(after(family, second, once)!);
    } catch (e) {
      return { law: RERUN_CHANGES_NOTHING, family, rules: save, config: cfg, message: `the second run's commands fail over the first run's rules: ${(e as Error).message}` };
    }
    if (twice !== save) {
      return {
        law: RERUN_CHANGES_NOTHING, family, rules: save, config: cfg,
        message: `running proxy-init again changed the IPv${family} rules`,
        details: `After the second run (iptables-save):\n${twice}\nFirst difference, ${firstDifference(save, twice)}\n\nCommands of the second run:\n${second.commands.join('\n')}`,
      };
    }
  }
  return undefined;
}
