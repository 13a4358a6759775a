/**
 * istio-init / istio-iptables: from the same configuration, the same `iptables-restore` input,
 * the same recorded commands and the same policy-routing commands. A step-for-step port of
 * `IptablesConfigurator.Run` (`tools/istio-iptables/pkg/capture/run.go`) and `ConfigureRoutes`
 * (`tools/common/tproxy/run_linux.go`).
 *
 * @module
 */
import { fail } from '../../model/errors.js';
import { type IstioRuleNote, IP_VERSION_SPECIFIC, IptablesRuleBuilder } from './builder.js';
import { type IstioConfig, istioConfig, resolveIstioConfig, splitIstioList } from './config.js';
import {
  ISTIO_AGENT_DNS_LISTENER_PORT,
  ISTIO_CHAINS,
  IPV6_LOOPBACK_CIDR,
  OUTBOUND_MARK,
  PASSTHROUGH_SOURCE,
} from './defaults.js';
import { formatGoPrefix, isGo4, isGoLoopback, parseGoPrefix } from './netip.js';
import { compileIstioNftables } from './compile-nft.js';
import { type IstioReleaseFeatures, type IstioShape, istioReleaseFeatures, istioShape, parseIstioVersion } from './version.js';
import { pushAll } from '../../model/limits.js';
import { expectArgument } from '../../model/guard.js';

const { ISTIO_OUTPUT, ISTIO_OUTPUT_DNS, ISTIO_INBOUND, ISTIO_DIVERT, ISTIO_TPROXY, ISTIO_REDIRECT, ISTIO_IN_REDIRECT, ISTIO_DROP } =
  ISTIO_CHAINS;
const V = IP_VERSION_SPECIFIC;

/**
 * Options that are not part of upstream's configuration.
 *
 * @example
 * ```ts
 * compileIstio({ inboundPortsInclude: '*' }, { upstreamVersion: '1.24' });
 * ```
 */
export interface IstioCompileOptions {
  /**
   * Reproduce what this Istio release wrote (`1.17`, `1.24.3`, …). Default: the current shape
   * (1.25 and later). See `IstioShape`.
   */
  readonly upstreamVersion?: string;
  /** The uid `ENVOY_USER` (`istio-proxy`) resolves to when `-u` is empty. Default `1337`. */
  readonly envoyUserUID?: string;
}

export type { IstioRestore, IstioRule } from './rule.js';
import type { IstioRestore, IstioRule } from './rule.js';

/**
 * What istio-iptables does for one configuration.
 *
 * @example
 * ```ts
 * const r: IstioCompileResult = compileIstio({ inboundPortsInclude: '*', outboundIPRangesInclude: '*' });
 * r.restore[0].text; // the iptables-restore input
 * ```
 */
export interface IstioCompileResult {
  /** The configuration after defaults (`-u` → 1337, `-g` → `-u`). */
  readonly config: IstioConfig;
  /**
   * The `iptables-restore --noflush` input, then the `ip6tables-restore --noflush` input when
   * IPv6 is enabled. (Upstream also runs `ip6tables-restore` with empty input on IPv4-only pods.)
   */
  readonly restore: readonly IstioRestore[];
  /**
   * The recorded commands and stdin lines, one per entry, as the sidecar-capture goldens lay them
   * out: `iptables-save`, `ip6tables-save` (the state check, 1.24+), the restore text(s), then the
   * final `iptables-save` (and `ip6tables-save` with IPv6). `commands.join('\n') + '\n'` is the
   * golden file.
   */
  readonly commands: readonly string[];
  /** Routing commands run after the rules (TPROXY policy routing, `::6` on `lo`), as `ip` argv. */
  readonly ipCommands: readonly (readonly string[])[];
  /** Every rule with its reason, IPv4 first. */
  readonly rules: readonly IstioRule[];
  /** What upstream would log as a warning (ignored CIDRs, DNS capture disabled, …). */
  readonly warnings: readonly string[];
  /**
   * With `--native-nftables`: the transaction handed to `nft -f` (then `commands` holds its
   * lines and `restore` is empty). Absent in iptables mode.
   */
  readonly nft?: string;
}

/**
 * Compiles what istio-iptables (the `istio-init` container, or istio-cni on the node) writes for
 * a configuration. Missing fields take upstream's defaults (`ISTIO_DEFAULT_CONFIG`); note
 * that `-b` and `-i` default to empty (no inbound capture, no catch-all outbound capture) as in
 * upstream, while the injector passes `-b '*' -i '*'` (`INJECTED_ISTIO_INIT_ARGS`).
 *
 * Throws a `NetfilterSimError` (`BAD_CONFIG`, `BAD_VALUE`, `UNSUPPORTED`) where upstream fails.
 *
 * @example
 * ```ts
 * const r = compileIstio(parseIstioIptablesArgs(['-p', '15001', '-z', '15006', '-u', '1337',
 *   '-m', 'REDIRECT', '-i', '*', '-x', '', '-b', '*', '-d', '15090,15021,15020']));
 * process.stdout.write(r.restore.map((x) => x.text).join(''));
 * ```
 */
export function compileIstio(config: Partial<IstioConfig>, options: IstioCompileOptions = {}): IstioCompileResult {
  expectArgument(config, 'object', 'config');
  expectArgument(options, 'object', 'options');
  const cfg = resolveIstioConfig(istioConfig(config), options.envoyUserUID);
  const shape = istioShape(parseIstioVersion(options.upstreamVersion ?? 'latest'));
  const release = istioReleaseFeatures(options.upstreamVersion);
  if (cfg.forceIptablesBinary !== '') {
    if (!release.forceIptablesBinary) {
      fail('BAD_CONFIG', `unknown flag: --force-iptables-binary (added in Istio 1.28; asked for ${release.name})`, undefined, cfg.forceIptablesBinary);
    }
    // config.ValidateIptablesBinary (1.28+)
    if (cfg.forceIptablesBinary !== 'legacy' && cfg.forceIptablesBinary !== 'nft') {
      fail('BAD_CONFIG', `invalid FORCE_IPTABLES_BINARY value ${JSON.stringify(cfg.forceIptablesBinary)}`, undefined, cfg.forceIptablesBinary);
    }
  }
  if (cfg.nativeNftables) {
    if (!release.nativeNftables) fail('UNSUPPORTED', `--native-nftables exists from Istio 1.27 on (asked for ${release.name})`);
    if (cfg.skipRuleApply) return { config: cfg, restore: [], commands: [], ipCommands: [], rules: [], warnings: [], nft: '' };
    const nft = compileIstioNftables(cfg);
    return { config: cfg, restore: [], commands: nft.lines, ipCommands: routeCommands(cfg), rules: nft.rules, warnings: nft.warnings, nft: nft.lines.length === 0 ? '' : `${nft.lines.join('\n')}\n` };
  }
  const warnings: string[] = [];
  const b = new IptablesRuleBuilder({ enableIPv6: cfg.enableIPv6 });

  if (cfg.skipRuleApply) {
    return { config: cfg, restore: [], commands: [], ipCommands: [], rules: [], warnings };
  }
  generateRules(cfg, shape, release, b, warnings);

  const rules: IstioRule[] = [];
  for (const [family, list] of [[4, b.rulesV4], [6, b.rulesV6]] as const) {
    for (const r of list) {
      const note = r.note ?? { why: '' };
      const entry: IstioRule = { family, table: r.table, chain: r.chain, text: r.params.join(' '), why: note.why };
      rules.push(note.option === undefined ? entry : { ...entry, option: note.option });
    }
  }

  const finalSaves = cfg.enableIPv6 ? ['iptables-save', 'ip6tables-save'] : ['iptables-save'];
  const stateCheck = shape.stateCheck ? ['iptables-save', 'ip6tables-save'] : [];
  if (cfg.cleanupOnly) {
    const cleanup = [
      ...b.buildCleanupV4().map((a) => `iptables ${a.join(' ')}`),
      ...b.buildCleanupV6().map((a) => `ip6tables ${a.join(' ')}`),
    ];
    return { config: cfg, restore: [], commands: [...stateCheck, ...cleanup, ...finalSaves], ipCommands: [], rules: [], warnings };
  }

  const restore: IstioRestore[] = [{ family: 4, text: b.buildV4Restore() }];
  if (cfg.enableIPv6) restore.push({ family: 6, text: b.buildV6Restore() });
  const commands = [...stateCheck];
  for (const r of restore) pushAll(commands, r.text.split('\n').filter((l) => l !== ''));
  pushAll(commands, finalSaves);

  return { config: cfg, restore, commands, ipCommands: routeCommands(cfg), rules, warnings };
}

interface NetworkRange {
  readonly isWildcard: boolean;
  readonly cidrs: readonly string[];
  readonly hasLoopbackIP: boolean;
}

/** `separateV4V6` in `run.go`: unparsable entries are skipped "for bug compatibility". */
function separateV4V6(list: string, warnings: string[], fatal: boolean): [NetworkRange, NetworkRange] {
  if (list === '*') return [wildcard, wildcard];
  const v4: string[] = [];
  const v6: string[] = [];
  let loop4 = false;
  let loop6 = false;
  for (const item of splitIstioList(list)) {
    const p = parseGoPrefix(item);
    if (typeof p === 'string') {
      // 1.27+: config.SeparateV4V6 returns the error and Run() fails with it.
      if (fatal) fail('BAD_CONFIG', p, undefined, item);
      warnings.push(`Ignoring error for bug compatibility with istio-iptables: ${p}`);
      continue;
    }
    if (isGo4(p.addr)) {
      v4.push(formatGoPrefix(p));
      loop4 ||= isGoLoopback(p.addr);
    } else {
      v6.push(formatGoPrefix(p));
      loop6 ||= isGoLoopback(p.addr);
    }
  }
  return [
    { isWildcard: false, cidrs: v4, hasLoopbackIP: loop4 },
    { isWildcard: false, cidrs: v6, hasLoopbackIP: loop6 },
  ];
}
const wildcard: NetworkRange = { isWildcard: true, cidrs: [], hasLoopbackIP: false };

/** `IptablesConfigurator.Run`, rule by rule. */
function generateRules(cfg: IstioConfig, shape: IstioShape, release: IstioReleaseFeatures, b: IptablesRuleBuilder, warnings: string[]): void {
  const [ipv4RangesExclude, ipv6RangesExclude] = separateV4V6(cfg.outboundIPRangesExclude, warnings, release.badCidrFatal);
  if (ipv4RangesExclude.isWildcard) fail('BAD_CONFIG', 'invalid value for OUTBOUND_IP_RANGES_EXCLUDE', undefined, '*');
  const [ipv4RangesInclude, ipv6RangesInclude] = separateV4V6(cfg.outboundIPRangesInclude, warnings, release.badCidrFatal);

  let redirectDNS = cfg.redirectDNS;
  if (redirectDNS && shape.dnsNeedsServers && !cfg.captureAllDNS && cfg.dnsServersV4.length === 0 && cfg.dnsServersV6.length === 0) {
    warnings.push('REDIRECT_DNS is set, but CAPTURE_ALL_DNS is false, and no DNS servers provided. DNS capture disabled.');
    redirectDNS = false;
  }
  const lo4 = cfg.hostIPv4LoopbackCidr;
  const tproxy = cfg.inboundInterceptionMode === 'TPROXY';

  // shortCircuitExcludeInterfaces
  for (const ifc of splitIstioList(cfg.excludeInterfaces)) {
    const n = note('traffic arriving on an excluded interface is never captured', '-c/--istio-exclude-interfaces');
    b.appendRule('PREROUTING', 'nat', ['-i', ifc, '-j', 'RETURN'], n);
    b.appendRule('OUTPUT', 'nat', ['-o', ifc, '-j', 'RETURN'], note('traffic leaving through an excluded interface is never captured', '-c/--istio-exclude-interfaces'));
  }
  if (tproxy) {
    for (const ifc of splitIstioList(cfg.excludeInterfaces)) {
      b.appendRule('PREROUTING', 'mangle', ['-i', ifc, '-j', 'RETURN'], note('excluded interface, TPROXY (mangle) side', '-c/--istio-exclude-interfaces'));
      b.appendRule('OUTPUT', 'mangle', ['-o', ifc, '-j', 'RETURN'], note('excluded interface, TPROXY (mangle) side', '-c/--istio-exclude-interfaces'));
    }
  }

  // shortCircuitKubeInternalInterface
  for (const ifc of splitIstioList(cfg.rerouteVirtualInterfaces)) {
    b.insertRule('PREROUTING', 'nat', 1, ['-i', ifc, '-j', 'RETURN'], note('inbound traffic from a VM interface is not treated as inbound', '-k/--kube-virt-interfaces'));
  }

  if (cfg.dropInvalid) {
    // run.go of 1.12 has no DropInvalid: the flag (and INVALID_DROP) came with 1.13.
    if (shape.dropInvalid === 'absent') fail('BAD_CONFIG', `unknown flag: --drop-invalid (added in Istio 1.13; asked for ${release.name})`, undefined, '--drop-invalid');
    const n = note('conntrack-INVALID packets (out of window) are dropped instead of answered with a reset', '--drop-invalid (INVALID_DROP)');
    if (shape.dropInvalid === 'chain') {
      b.appendRule('PREROUTING', 'mangle', ['-m', 'conntrack', '--ctstate', 'INVALID', '-j', ISTIO_DROP], n);
      b.appendRule(ISTIO_DROP, 'mangle', ['-j', 'DROP'], n);
    } else {
      b.appendRule('PREROUTING', 'mangle', ['-m', 'conntrack', '--ctstate', 'INVALID', '-j', 'DROP'], n);
    }
  }

  b.appendRule(ISTIO_INBOUND, 'nat', ['-p', 'tcp', '--dport', cfg.inboundTunnelPort, '-j', 'RETURN'],
    note('the HBONE tunnel port Envoy listens on is reached directly (emitted even when nothing jumps here)', '-e/--inbound-tunnel-port'));
  b.appendRule(ISTIO_REDIRECT, 'nat', ['-p', 'tcp', '-j', 'REDIRECT', '--to-ports', cfg.proxyPort],
    note("outbound capture: Envoy's outbound listener", '-p/--envoy-port'));
  b.appendRule(ISTIO_IN_REDIRECT, 'nat', ['-p', 'tcp', '-j', 'REDIRECT', '--to-ports', cfg.inboundCapturePort],
    note("inbound capture: Envoy's inbound listener (also used for app → own service via Envoy)", '-z/--inbound-capture-port'));

  handleInboundPortsInclude(cfg, shape, b);

  b.appendRule('OUTPUT', 'nat', shape.outputJumpTcpOnly ? ['-p', 'tcp', '-j', ISTIO_OUTPUT] : ['-j', ISTIO_OUTPUT],
    note('every locally generated packet (first of its connection) is checked by ISTIO_OUTPUT'));

  for (const port of splitIstioList(cfg.outboundPortsExclude)) {
    const n = note(`outbound port ${port} is never captured (checked before the self-redirect rules)`, '-o/--istio-local-outbound-ports-exclude');
    b.appendRule(ISTIO_OUTPUT, 'nat', ['-p', 'tcp', '--dport', port, '-j', 'RETURN'], n);
    if (shape.outboundExcludeUdp) b.appendRule(ISTIO_OUTPUT, 'nat', ['-p', 'udp', '--dport', port, '-j', 'RETURN'], n);
  }

  b.appendVersionedRule(PASSTHROUGH_SOURCE[4], PASSTHROUGH_SOURCE[6], ISTIO_OUTPUT, 'nat', ['-o', 'lo', '-s', V, '-j', 'RETURN'],
    note("Envoy's inbound passthrough connections to the app (source 127.0.0.6 / ::6) must not loop back into Envoy"));

  const loopbackInclude = ipv4RangesInclude.hasLoopbackIP || ipv6RangesInclude.hasLoopbackIP;
  const redirectNote = (kind: string, opt: string): IstioRuleNote =>
    note(`proxy ${kind} over lo to a non-localhost address (app → service VIP → own pod via Envoy) goes to the inbound listener`, opt);
  const bypassNote = (kind: string, opt: string): IstioRuleNote =>
    note(`a non-proxy process talking to itself over lo (localhost or own pod IP) bypasses Envoy (not ${kind})`, opt);
  const loopNote = (opt: string): IstioRuleNote =>
    note("loop prevention: the proxy's own traffic is never redirected back to it", opt);
  const ownerRules = (ownerOpt: '--uid-owner' | '--gid-owner', id: string, opt: string, isUid: boolean): void => {
    const kind = isUid ? `uid ${id}` : `gid ${id}`;
    if (shape.loopbackRedirectSkipsTunnel) {
      // Upstream asymmetry: only the per-UID rule excludes port 53 when DNS capture is on.
      const ports = redirectDNS && isUid ? ['-m', 'multiport', '!', '--dports', `53,${cfg.inboundTunnelPort}`] : ['!', '--dport', cfg.inboundTunnelPort];
      b.appendVersionedRule(lo4, IPV6_LOOPBACK_CIDR, ISTIO_OUTPUT, 'nat',
        ['-o', 'lo', '!', '-d', V, '-p', 'tcp', ...ports, '-m', 'owner', ownerOpt, id, '-j', ISTIO_IN_REDIRECT], redirectNote(kind, opt));
    } else {
      const ports = redirectDNS && isUid ? ['-p', 'tcp', '!', '--dport', '53'] : [];
      b.appendVersionedRule(lo4, IPV6_LOOPBACK_CIDR, ISTIO_OUTPUT, 'nat',
        ['-o', 'lo', '!', '-d', V, ...ports, '-m', 'owner', ownerOpt, id, '-j', ISTIO_IN_REDIRECT], redirectNote(kind, opt));
    }
    if (!loopbackInclude) {
      if (redirectDNS) {
        b.appendRule(ISTIO_OUTPUT, 'nat', ['-o', 'lo', '-p', 'tcp', '!', '--dport', '53', '-m', 'owner', '!', ownerOpt, id, '-j', 'RETURN'], bypassNote(kind, opt));
      } else {
        b.appendRule(ISTIO_OUTPUT, 'nat', ['-o', 'lo', '-m', 'owner', '!', ownerOpt, id, '-j', 'RETURN'], bypassNote(kind, opt));
      }
    }
    b.appendRule(ISTIO_OUTPUT, 'nat', ['-m', 'owner', ownerOpt, id, '-j', 'RETURN'], loopNote(opt));
  };
  for (const uid of splitIstioList(cfg.proxyUID)) ownerRules('--uid-owner', uid, '-u/--proxy-uid', true);
  for (const gid of splitIstioList(cfg.proxyGID)) ownerRules('--gid-owner', gid, '-g/--proxy-gid', false);

  const ownerGroups = parseInterceptFilter(cfg.ownerGroupsInclude, cfg.ownerGroupsExclude);
  if (ownerGroups.except) {
    for (const g of ownerGroups.values) {
      b.appendRule(ISTIO_OUTPUT, 'nat', ['-m', 'owner', '--gid-owner', g, '-j', 'RETURN'],
        note(`traffic of group ${g} is never captured`, 'ISTIO_OUTBOUND_OWNER_GROUPS_EXCLUDE'));
    }
  } else {
    const matchers = ownerGroups.values.flatMap((g) => ['-m', 'owner', '!', '--gid-owner', g]);
    b.appendRule(ISTIO_OUTPUT, 'nat', [...matchers, '-j', 'RETURN'],
      note('only traffic of the listed groups is captured', 'ISTIO_OUTBOUND_OWNER_GROUPS'));
  }

  if (redirectDNS && shape.dns === 'chains') setupDNSRedir(cfg, b);
  if (redirectDNS && shape.dns !== 'chains') legacyDNSTcp(cfg, b);

  b.appendVersionedRule(lo4, IPV6_LOOPBACK_CIDR, ISTIO_OUTPUT, 'nat', ['-d', V, '-j', 'RETURN'],
    note('traffic that explicitly targets localhost (Envoy-aware apps, container to container) is never captured', 'ISTIO_OUTBOUND_IPV4_LOOPBACK_CIDR'));
  for (const cidr of ipv4RangesExclude.cidrs) {
    b.appendRuleV4(ISTIO_OUTPUT, 'nat', ['-d', cidr, '-j', 'RETURN'], note(`${cidr} is never captured`, '-x/--istio-service-exclude-cidr'));
  }
  for (const cidr of ipv6RangesExclude.cidrs) {
    b.appendRuleV6(ISTIO_OUTPUT, 'nat', ['-d', cidr, '-j', 'RETURN'], note(`${cidr} is never captured`, '-x/--istio-service-exclude-cidr'));
  }

  for (const port of splitIstioList(cfg.outboundPortsInclude)) {
    b.appendRule(ISTIO_OUTPUT, 'nat', ['-p', 'tcp', '--dport', port, '-j', ISTIO_REDIRECT],
      note(`outbound TCP port ${port} is always captured`, '-q/--istio-outbound-ports'));
  }

  handleOutboundIncludeRules(cfg, shape, ipv4RangesInclude, 4, b);
  handleOutboundIncludeRules(cfg, shape, ipv6RangesInclude, 6, b);

  if (redirectDNS && shape.dns !== 'chains') legacyDNSUdp(cfg, shape, ownerGroups, b);

  if (tproxy) {
    const mark = cfg.inboundTProxyMark;
    b.appendRule('PREROUTING', 'mangle', ['-p', 'tcp', '-m', 'mark', '--mark', mark, '-j', 'CONNMARK', '--save-mark'],
      note('TPROXY: copy the packet mark 1337 (set by Envoy original_src) into the connection mark', '-t/--istio-inbound-tproxy-mark'));
    b.appendRule('OUTPUT', 'mangle', ['-p', 'tcp', '-o', 'lo', '-m', 'mark', '--mark', mark, '-j', 'RETURN'],
      note('TPROXY: Envoy → app packets already marked are not marked again', '-t/--istio-inbound-tproxy-mark'));
    const markOwn = (ownerOpt: string, id: string, opt: string): void => {
      b.appendVersionedRule(lo4, IPV6_LOOPBACK_CIDR, 'OUTPUT', 'mangle',
        ['!', '-d', V, '-p', 'tcp', '-o', 'lo', '-m', 'owner', ownerOpt, id, '-j', 'MARK', '--set-mark', OUTBOUND_MARK],
        note('TPROXY: mark the proxy\'s loopback traffic to the pod IP 1338 so ISTIO_INBOUND captures it on re-entry', opt));
    };
    for (const uid of splitIstioList(cfg.proxyUID)) markOwn('--uid-owner', uid, '-u/--proxy-uid');
    for (const gid of splitIstioList(cfg.proxyGID)) markOwn('--gid-owner', gid, '-g/--proxy-gid');
    b.appendRule('OUTPUT', 'mangle', ['-p', 'tcp', '-m', 'connmark', '--mark', mark, '-j', 'CONNMARK', '--restore-mark'],
      note('TPROXY: packets of a marked connection get mark 1337 back, so policy routing keeps them local', '-t/--istio-inbound-tproxy-mark'));
    b.insertRule(ISTIO_INBOUND, 'mangle', 1, ['-p', 'tcp', '-m', 'mark', '--mark', mark, '-j', 'RETURN'],
      note('TPROXY: prevent infinite redirect of packets already marked 1337', '-t/--istio-inbound-tproxy-mark'));
    b.insertRuleV4(ISTIO_INBOUND, 'mangle', 2, ['-p', 'tcp', '-s', PASSTHROUGH_SOURCE[4], '-i', 'lo', '-j', 'RETURN'],
      note('TPROXY: Envoy/pilot-agent → app passthrough from 127.0.0.6 is not captured'));
    b.insertRuleV6(ISTIO_INBOUND, 'mangle', 2, ['-p', 'tcp', '-s', PASSTHROUGH_SOURCE[6], '-i', 'lo', '-j', 'RETURN'],
      note('TPROXY: Envoy/pilot-agent → app passthrough from ::6 is not captured'));
    b.insertRule(ISTIO_INBOUND, 'mangle', 3, ['-p', 'tcp', '-i', 'lo', '-m', 'mark', '!', '--mark', OUTBOUND_MARK, '-j', 'RETURN'],
      note('TPROXY: app → own pod IP over lo (not marked 1338) is not captured'));
  }
}

function note(why: string, option?: string): IstioRuleNote {
  return option === undefined ? { why } : { why, option };
}

/** `handleInboundPortsInclude` in `run.go`. */
function handleInboundPortsInclude(cfg: IstioConfig, shape: IstioShape, b: IptablesRuleBuilder): void {
  if (cfg.inboundPortsInclude === '') return;
  const tproxy = cfg.inboundInterceptionMode === 'TPROXY';
  const opt = '-b/--istio-inbound-ports';
  let table: string;
  if (tproxy) {
    b.appendRule(ISTIO_DIVERT, 'mangle', ['-j', 'MARK', '--set-mark', cfg.inboundTProxyMark],
      note('TPROXY: packets of established inbound connections get mark 1337 (routed to lo by policy routing)', '-t/--istio-inbound-tproxy-mark'));
    b.appendRule(ISTIO_DIVERT, 'mangle', ['-j', 'ACCEPT'], note('TPROXY: and are accepted'));
    b.appendVersionedRule(cfg.hostIPv4LoopbackCidr, IPV6_LOOPBACK_CIDR, ISTIO_TPROXY, 'mangle',
      ['!', '-d', V, '-p', 'tcp', '-j', 'TPROXY', '--tproxy-mark', `${cfg.inboundTProxyMark}/0xffffffff`, '--on-port', cfg.inboundCapturePort],
      note("TPROXY: new inbound TCP connections go to Envoy's inbound listener, addresses preserved", '-z/--inbound-capture-port'));
    table = 'mangle';
  } else {
    table = 'nat';
  }
  b.appendRule('PREROUTING', table, ['-p', 'tcp', '-j', ISTIO_INBOUND], note('inbound capture happens for TCP only', opt));

  if (cfg.inboundPortsInclude === '*') {
    if (shape.excludeSsh) {
      b.appendRule(ISTIO_INBOUND, table, ['-p', 'tcp', '--dport', '22', '-j', 'RETURN'], note('SSH is never redirected (Istio ≤ 1.12)'));
    }
    for (const port of splitIstioList(cfg.inboundPortsExclude)) {
      b.appendRule(ISTIO_INBOUND, table, ['-p', 'tcp', '--dport', port, '-j', 'RETURN'],
        note(`inbound port ${port} is reached directly, not through Envoy`, '-d/--istio-local-exclude-ports'));
    }
    if (tproxy) {
      b.appendRule(ISTIO_INBOUND, 'mangle', ['-p', 'tcp', '-m', 'conntrack', '--ctstate', 'RELATED,ESTABLISHED', '-j', ISTIO_DIVERT],
        note('TPROXY: packets of established connections are diverted to the local socket', opt));
      b.appendRule(ISTIO_INBOUND, 'mangle', ['-p', 'tcp', '-j', ISTIO_TPROXY], note('TPROXY: every other inbound TCP connection is captured', opt));
    } else {
      b.appendRule(ISTIO_INBOUND, 'nat', ['-p', 'tcp', '-j', ISTIO_IN_REDIRECT], note('every other inbound TCP connection goes to Envoy', opt));
    }
  } else {
    for (const port of splitIstioList(cfg.inboundPortsInclude)) {
      if (tproxy) {
        b.appendRule(ISTIO_INBOUND, 'mangle', ['-p', 'tcp', '--dport', port, '-m', 'conntrack', '--ctstate', 'RELATED,ESTABLISHED', '-j', ISTIO_DIVERT],
          note(`TPROXY: established connections to port ${port} are diverted to the local socket`, opt));
        b.appendRule(ISTIO_INBOUND, 'mangle', ['-p', 'tcp', '--dport', port, '-j', ISTIO_TPROXY], note(`TPROXY: inbound port ${port} is captured`, opt));
      } else {
        b.appendRule(ISTIO_INBOUND, 'nat', ['-p', 'tcp', '--dport', port, '-j', ISTIO_IN_REDIRECT], note(`inbound port ${port} is captured`, opt));
      }
    }
  }
}

/** `handleOutboundIncludeRules` in `run.go`, for one family. */
function handleOutboundIncludeRules(cfg: IstioConfig, shape: IstioShape, range: NetworkRange, family: 4 | 6, b: IptablesRuleBuilder): void {
  const append = family === 4 ? b.appendRuleV4.bind(b) : b.appendRuleV6.bind(b);
  const insert = family === 4 ? b.insertRuleV4.bind(b) : b.insertRuleV6.bind(b);
  const virt = splitIstioList(cfg.rerouteVirtualInterfaces);
  if (range.isWildcard) {
    append(ISTIO_OUTPUT, 'nat', ['-j', ISTIO_REDIRECT], note('everything else goes to the outbound listener', '-i/--istio-service-cidr'));
    for (const ifc of virt) {
      insert('PREROUTING', 'nat', 1, ['-i', ifc, '-j', ISTIO_REDIRECT], note(`traffic from VM interface ${ifc} is captured as outbound`, '-k/--kube-virt-interfaces'));
    }
  } else {
    for (const cidr of range.cidrs) {
      for (const ifc of virt) {
        insert('PREROUTING', 'nat', 1, ['-i', ifc, '-d', cidr, '-j', ISTIO_REDIRECT],
          note(`traffic from VM interface ${ifc} to ${cidr} is captured as outbound`, '-k/--kube-virt-interfaces'));
      }
      append(ISTIO_OUTPUT, 'nat', ['-d', cidr, '-j', ISTIO_REDIRECT], note(`traffic to ${cidr} goes to the outbound listener`, '-i/--istio-service-cidr'));
    }
    if (shape.outboundIncludeReturn && range.cidrs.length > 0) {
      append(ISTIO_OUTPUT, 'nat', ['-j', 'RETURN'], note('all other traffic is not redirected (Istio ≤ 1.22)', '-i/--istio-service-cidr'));
    }
  }
}

interface InterceptFilter {
  readonly values: readonly string[];
  readonly except: boolean;
}

/** `config.ParseInterceptFilter` (`tools/common/config/types.go`). */
function parseInterceptFilter(include: string, exclude: string): InterceptFilter {
  if (include === '*') return { values: splitIstioList(exclude), except: true };
  return { values: splitIstioList(include), except: false };
}

/** `SetupDNSRedir` and `addDNSConntrackZones` in `run.go` (1.25+). */
function setupDNSRedir(cfg: IstioConfig, b: IptablesRuleBuilder): void {
  const all = cfg.captureAllDNS;
  const port = ISTIO_AGENT_DNS_LISTENER_PORT;
  const opt = all ? '--capture-all-dns' : '--redirect-dns (servers from resolv.conf)';
  b.appendRule('OUTPUT', 'raw', ['-j', ISTIO_OUTPUT_DNS], note('DNS: conntrack zones for UDP DNS', '--redirect-dns'));
  if (all || cfg.dnsServersV4.length > 0) {
    b.appendRuleV4(ISTIO_OUTPUT, 'nat', ['-j', ISTIO_OUTPUT_DNS], note('DNS: DNS capture (after the proxy-owner rules, so the agent itself is not captured)', '--redirect-dns'));
  }
  if (all || cfg.dnsServersV6.length > 0) {
    b.appendRuleV6(ISTIO_OUTPUT, 'nat', ['-j', ISTIO_OUTPUT_DNS], note('DNS: DNS capture (after the proxy-owner rules, so the agent itself is not captured)', '--redirect-dns'));
  }
  const tcpNote = note('DNS over TCP goes to the istio-agent DNS proxy on 15053', opt);
  const udpNote = note('DNS over UDP goes to the istio-agent DNS proxy on 15053', opt);
  if (all) {
    b.appendRule(ISTIO_OUTPUT_DNS, 'nat', ['-p', 'tcp', '--dport', '53', '-j', 'REDIRECT', '--to-ports', port], tcpNote);
  } else {
    for (const s of cfg.dnsServersV4) b.appendRuleV4(ISTIO_OUTPUT_DNS, 'nat', ['-p', 'tcp', '--dport', '53', '-d', `${s}/32`, '-j', 'REDIRECT', '--to-ports', port], tcpNote);
    for (const s of cfg.dnsServersV6) b.appendRuleV6(ISTIO_OUTPUT_DNS, 'nat', ['-p', 'tcp', '--dport', '53', '-d', `${s}/128`, '-j', 'REDIRECT', '--to-ports', port], tcpNote);
  }
  if (all) {
    b.appendRule(ISTIO_OUTPUT_DNS, 'nat', ['-p', 'udp', '--dport', '53', '-j', 'REDIRECT', '--to-port', port], udpNote);
  } else {
    for (const s of cfg.dnsServersV4) b.appendRuleV4(ISTIO_OUTPUT_DNS, 'nat', ['-p', 'udp', '--dport', '53', '-d', `${s}/32`, '-j', 'REDIRECT', '--to-port', port], udpNote);
    for (const s of cfg.dnsServersV6) b.appendRuleV6(ISTIO_OUTPUT_DNS, 'nat', ['-p', 'udp', '--dport', '53', '-d', `${s}/128`, '-j', 'REDIRECT', '--to-port', port], udpNote);
  }
  addDNSConntrackZones(cfg, b, ISTIO_OUTPUT_DNS, ISTIO_INBOUND, { jumps: true, responseSource: true });
}

/**
 * `addDNSConntrackZones` (1.25+, chains `ISTIO_OUTPUT_DNS`/`ISTIO_INBOUND` in raw, entered by
 * jumps) and its ≤ 1.24 form `addConntrackZoneDNSUDP` (rules in raw OUTPUT — 1.23–1.24: raw
 * ISTIO_OUTPUT — and PREROUTING; ≤ 1.19 the response rule matched `-d` where `-s` was meant).
 */
function addDNSConntrackZones(
  cfg: IstioConfig,
  b: IptablesRuleBuilder,
  out: string,
  pre: string,
  shape: { readonly jumps: boolean; readonly responseSource: boolean },
): void {
  const current = shape.jumps;
  const zone1 = note('DNS: the proxy\'s queries to upstream resolvers use conntrack zone 1', '--redirect-dns');
  const zone2 = note('DNS: the agent\'s answers to applications use conntrack zone 2', '--redirect-dns');
  for (const [ownerOpt, ids] of [['--uid-owner', cfg.proxyUID], ['--gid-owner', cfg.proxyGID]] as const) {
    for (const id of splitIstioList(ids)) {
      b.appendRule(out, 'raw', ['-p', 'udp', '--dport', '53', '-m', 'owner', ownerOpt, id, '-j', 'CT', '--zone', '1'], zone1);
      b.appendRule(out, 'raw', ['-p', 'udp', '--sport', '15053', '-m', 'owner', ownerOpt, id, '-j', 'CT', '--zone', '2'], zone2);
    }
  }
  const appZone = note('DNS: application queries to the resolver use conntrack zone 2', '--redirect-dns');
  const respZone = note('DNS: resolver responses use conntrack zone 1', '--redirect-dns');
  const respAddr = shape.responseSource ? '-s' : '-d';
  if (cfg.captureAllDNS) {
    if (current) b.appendRule('PREROUTING', 'raw', ['-j', pre], note('DNS: conntrack zones for DNS responses', '--redirect-dns'));
    b.appendRule(out, 'raw', ['-p', 'udp', '--dport', '53', '-j', 'CT', '--zone', '2'], appZone);
    b.appendRule(pre, 'raw', ['-p', 'udp', '--sport', '53', '-j', 'CT', '--zone', '1'], respZone);
    return;
  }
  if (current && cfg.dnsServersV4.length > 0) b.appendRuleV4('PREROUTING', 'raw', ['-j', pre], note('DNS: conntrack zones for DNS responses', '--redirect-dns'));
  for (const s of cfg.dnsServersV4) {
    b.appendRuleV4(out, 'raw', ['-p', 'udp', '--dport', '53', '-d', `${s}/32`, '-j', 'CT', '--zone', '2'], appZone);
    b.appendRuleV4(pre, 'raw', ['-p', 'udp', '--sport', '53', respAddr, `${s}/32`, '-j', 'CT', '--zone', '1'], respZone);
  }
  if (current && cfg.dnsServersV6.length > 0) b.appendRuleV6('PREROUTING', 'raw', ['-j', pre], note('DNS: conntrack zones for DNS responses', '--redirect-dns'));
  for (const s of cfg.dnsServersV6) {
    b.appendRuleV6(out, 'raw', ['-p', 'udp', '--dport', '53', '-d', `${s}/128`, '-j', 'CT', '--zone', '2'], appZone);
    b.appendRuleV6(pre, 'raw', ['-p', 'udp', '--sport', '53', respAddr, `${s}/128`, '-j', 'CT', '--zone', '1'], respZone);
  }
}

/** ≤ 1.24: TCP DNS redirect directly in ISTIO_OUTPUT. */
function legacyDNSTcp(cfg: IstioConfig, b: IptablesRuleBuilder): void {
  const port = ISTIO_AGENT_DNS_LISTENER_PORT;
  const n = note('DNS over TCP goes to the istio-agent DNS proxy on 15053', '--redirect-dns');
  if (cfg.captureAllDNS) {
    b.appendRule(ISTIO_OUTPUT, 'nat', ['-p', 'tcp', '--dport', '53', '-j', 'REDIRECT', '--to-ports', port], n);
    return;
  }
  for (const s of cfg.dnsServersV4) b.appendRuleV4(ISTIO_OUTPUT, 'nat', ['-p', 'tcp', '--dport', '53', '-d', `${s}/32`, '-j', 'REDIRECT', '--to-ports', port], n);
  for (const s of cfg.dnsServersV6) b.appendRuleV6(ISTIO_OUTPUT, 'nat', ['-p', 'tcp', '--dport', '53', '-d', `${s}/128`, '-j', 'REDIRECT', '--to-ports', port], n);
}

/**
 * ≤ 1.24: `HandleDNSUDP`, the UDP DNS rules, then the raw zones. ≤ 1.22 they sit directly in
 * nat/raw OUTPUT; 1.23–1.24 in ISTIO_OUTPUT of nat and raw, which OUTPUT reaches through
 * `-p udp -j ISTIO_OUTPUT` (#50915).
 */
function legacyDNSUdp(cfg: IstioConfig, shape: IstioShape, groups: InterceptFilter, b: IptablesRuleBuilder): void {
  const port = ISTIO_AGENT_DNS_LISTENER_PORT;
  const chain = shape.dns === 'output' ? ISTIO_OUTPUT : 'OUTPUT';
  if (shape.dns === 'output') {
    const jump = note('UDP reaches ISTIO_OUTPUT for DNS capture (Istio 1.23–1.24)', '--redirect-dns');
    b.appendRule('OUTPUT', 'nat', ['-p', 'udp', '-j', ISTIO_OUTPUT], jump);
    b.appendRule('OUTPUT', 'raw', ['-p', 'udp', '-j', ISTIO_OUTPUT], jump);
  }
  const ret = note("DNS: the proxy's own UDP DNS is not captured", '--redirect-dns');
  for (const uid of splitIstioList(cfg.proxyUID)) b.appendRule(chain, 'nat', ['-p', 'udp', '--dport', '53', '-m', 'owner', '--uid-owner', uid, '-j', 'RETURN'], ret);
  for (const gid of splitIstioList(cfg.proxyGID)) b.appendRule(chain, 'nat', ['-p', 'udp', '--dport', '53', '-m', 'owner', '--gid-owner', gid, '-j', 'RETURN'], ret);
  if (groups.except) {
    for (const g of groups.values) b.appendRule(chain, 'nat', ['-p', 'udp', '--dport', '53', '-m', 'owner', '--gid-owner', g, '-j', 'RETURN'], ret);
  } else {
    const matchers = groups.values.flatMap((g) => ['-m', 'owner', '!', '--gid-owner', g]);
    b.appendRule(chain, 'nat', ['-p', 'udp', '--dport', '53', ...matchers, '-j', 'RETURN'], ret);
  }
  const n = note('DNS over UDP goes to the istio-agent DNS proxy on 15053', '--redirect-dns');
  if (cfg.captureAllDNS) {
    b.appendRule(chain, 'nat', ['-p', 'udp', '--dport', '53', '-j', 'REDIRECT', '--to-port', port], n);
  } else {
    for (const s of cfg.dnsServersV4) b.appendRuleV4(chain, 'nat', ['-p', 'udp', '--dport', '53', '-d', `${s}/32`, '-j', 'REDIRECT', '--to-port', port], n);
    for (const s of cfg.dnsServersV6) b.appendRuleV6(chain, 'nat', ['-p', 'udp', '--dport', '53', '-d', `${s}/128`, '-j', 'REDIRECT', '--to-port', port], n);
  }
  addDNSConntrackZones(cfg, b, chain, 'PREROUTING', { jumps: false, responseSource: shape.dnsResponseSource });
}

/**
 * `ConfigureRoutes` (`tools/common/tproxy/run_linux.go`): `::6` on `lo` for IPv6 pods, and for
 * TPROXY with inbound capture, `ip rule add fwmark MARK lookup TABLE` and
 * `ip route add local default dev lo table TABLE` per family.
 */
function routeCommands(cfg: IstioConfig): string[][] {
  const out: string[][] = [];
  if (cfg.enableIPv6) out.push(['ip', '-6', 'addr', 'add', '::6/128', 'dev', 'lo']);
  if (cfg.inboundPortsInclude === '' || cfg.inboundInterceptionMode !== 'TPROXY') return out;
  const table = goAtoi(cfg.inboundTProxyRouteTable, 'InboundTProxyRouteTable');
  const mark = goAtoi(cfg.inboundTProxyMark, 'InboundTProxyMark');
  const families = cfg.enableIPv6 ? (['-4', '-6'] as const) : (['-4'] as const);
  for (const f of families) out.push(['ip', f, 'rule', 'add', 'fwmark', String(mark), 'lookup', String(table)]);
  for (const f of families) {
    out.push(['ip', f, 'route', 'add', 'local', f === '-4' ? '0.0.0.0/0' : '::/0', 'dev', 'lo', 'table', String(table)]);
  }
  return out;
}

function goAtoi(s: string, field: string): number {
  if (!/^[+-]?[0-9]+$/.test(s)) fail('BAD_CONFIG', `failed to parse ${field}: strconv.Atoi: parsing ${JSON.stringify(s)}: invalid syntax`, undefined, s);
  return Number(s);
}
