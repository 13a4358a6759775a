/**
 * istio-iptables `--native-nftables` (Istio 1.27+): a port of `NftablesConfigurator.Run`
 * (`tools/istio-nftables/pkg/capture/run.go`). The output is the knftables transaction handed to
 * `nft -f` (tables `istio-proxy-nat`, `istio-proxy-mangle`, `istio-proxy-raw`, family inet), line
 * for line as upstream's goldens.
 *
 * @module
 */
import { fail } from '../../model/errors.js';
import type { IstioRule } from './rule.js';
import type { IstioConfig } from './config.js';
import { splitIstioList } from './config.js';
import { ISTIO_AGENT_DNS_LISTENER_PORT, OUTBOUND_MARK } from './defaults.js';
import { formatGoPrefix, isGo4, isGoLoopback, parseGoPrefix } from './netip.js';
import { type NftChainSpec, NftablesRuleBuilder, nftTableTransaction } from './nft-transaction.js';

const NAT = 'istio-proxy-nat';
const MANGLE = 'istio-proxy-mangle';
const RAW = 'istio-proxy-raw';
const PRE = 'prerouting';
const OUT = 'output';
const INBOUND = 'istio-inbound';
const OUTPUT = 'istio-output';
const OUTPUT_DNS = 'istio-output-dns';
const REDIRECT = 'istio-redirect';
const IN_REDIRECT = 'istio-in-redirect';
const DIVERT = 'istio-divert';
const TPROXY = 'istio-tproxy';
const DROP = 'istio-drop';
const C = 'counter';

interface Range {
  readonly wildcard: boolean;
  readonly cidrs: readonly string[];
  readonly loopback: boolean;
}

/** `config.SeparateV4V6` (1.27+: a bad entry is fatal). */
function separate(list: string): [Range, Range] {
  if (list === '*') return [{ wildcard: true, cidrs: [], loopback: false }, { wildcard: true, cidrs: [], loopback: false }];
  const v4: string[] = [];
  const v6: string[] = [];
  let l4 = false;
  let l6 = false;
  for (const item of splitIstioList(list)) {
    const p = parseGoPrefix(item);
    if (typeof p === 'string') fail('BAD_CONFIG', p, undefined, item);
    if (isGo4(p.addr)) {
      v4.push(formatGoPrefix(p));
      l4 ||= isGoLoopback(p.addr);
    } else {
      v6.push(formatGoPrefix(p));
      l6 ||= isGoLoopback(p.addr);
    }
  }
  return [{ wildcard: false, cidrs: v4, loopback: l4 }, { wildcard: false, cidrs: v6, loopback: l6 }];
}

/** The transaction lines and every rule with its reason. @internal */
export interface IstioNftOutput {
  readonly lines: readonly string[];
  readonly rules: readonly IstioRule[];
  readonly warnings: readonly string[];
}

/** `NftablesConfigurator.Run` for a resolved configuration. @internal */
export function compileIstioNftables(cfg: IstioConfig): IstioNftOutput {
  const warnings: string[] = [];
  const [ex4, ex6] = separate(cfg.outboundIPRangesExclude);
  if (ex4.wildcard) fail('BAD_CONFIG', 'invalid value for OUTBOUND_IP_RANGES_EXCLUDE', undefined, '*');
  const [in4, in6] = separate(cfg.outboundIPRangesInclude);
  let redirectDNS = cfg.redirectDNS;
  if (redirectDNS && !cfg.captureAllDNS && cfg.dnsServersV4.length === 0 && cfg.dnsServersV6.length === 0) {
    warnings.push('REDIRECT_DNS is set, but CAPTURE_ALL_DNS is false, and no DNS servers provided. DNS capture disabled.');
    redirectDNS = false;
  }
  const b = new NftablesRuleBuilder({ enableIPv6: cfg.enableIPv6 });
  const lo4 = cfg.hostIPv4LoopbackCidr;
  const tproxy = cfg.inboundInterceptionMode === 'TPROXY';

  // shortCircuitExcludeInterfaces
  b.why = 'traffic on an excluded interface is never captured (-c)';
  for (const ifc of splitIstioList(cfg.excludeInterfaces)) {
    b.appendRule(PRE, NAT, 'iifname', ifc, C, 'return');
    b.appendRule(OUT, NAT, 'oifname', ifc, C, 'return');
  }
  if (tproxy) {
    for (const ifc of splitIstioList(cfg.excludeInterfaces)) {
      b.appendRule(PRE, MANGLE, 'iifname', ifc, C, 'return');
      b.appendRule(OUT, MANGLE, 'oifname', ifc, C, 'return');
    }
  }
  // shortCircuitKubeInternalInterface
  b.why = 'inbound traffic from a VM interface is not treated as inbound (-k)';
  for (const ifc of splitIstioList(cfg.rerouteVirtualInterfaces)) b.insertRule(PRE, NAT, 0, 'iifname', ifc, C, 'return');

  if (cfg.dropInvalid) {
    b.why = 'conntrack-invalid TCP packets are dropped (--drop-invalid)';
    b.appendRule(PRE, MANGLE, 'meta l4proto tcp', 'ct state', 'invalid', C, 'jump', DROP);
    b.appendRule(DROP, MANGLE, C, 'drop');
  }
  b.why = 'the HBONE tunnel port is reached directly (-e)';
  b.appendRule(INBOUND, NAT, 'meta l4proto tcp', 'tcp dport', cfg.inboundTunnelPort, C, 'return');
  b.why = "outbound capture: Envoy's outbound listener (-p)";
  b.appendRule(REDIRECT, NAT, 'meta l4proto tcp', C, 'redirect to', `:${cfg.proxyPort}`);
  b.why = "inbound capture: Envoy's inbound listener (-z)";
  b.appendRule(IN_REDIRECT, NAT, 'meta l4proto tcp', C, 'redirect to', `:${cfg.inboundCapturePort}`);

  handleInboundPortsInclude(cfg, b);

  b.why = 'every locally generated connection is checked by istio-output';
  b.appendRule(OUT, NAT, C, 'jump', OUTPUT);
  b.why = 'an excluded outbound port is never captured (-o)';
  for (const port of splitIstioList(cfg.outboundPortsExclude)) {
    b.appendRule(OUTPUT, NAT, 'tcp dport', port, C, 'return');
    b.appendRule(OUTPUT, NAT, 'udp dport', port, C, 'return');
  }
  b.why = "Envoy's inbound passthrough (source 127.0.0.6 / ::6) does not loop back into Envoy";
  b.appendRule(OUTPUT, NAT, 'oifname', 'lo', 'ip saddr', '127.0.0.6/32', C, 'return');
  b.appendV6RuleIfSupported(OUTPUT, NAT, 'oifname', 'lo', 'ip6 saddr', '::6/128', C, 'return');

  const loopInclude = in4.loopback || in6.loopback;
  for (const [key, ids] of [['skuid', cfg.proxyUID], ['skgid', cfg.proxyGID]] as const) {
    for (const id of splitIstioList(ids)) {
      // Only the per-UID redirect excludes port 53 when DNS is captured (as upstream).
      const dports = redirectDNS && key === 'skuid' ? `{ 53, ${cfg.inboundTunnelPort} }` : cfg.inboundTunnelPort;
      b.why = `the proxy (${key} ${id}) over lo to a non-localhost address goes to the inbound listener`;
      b.appendRule(OUTPUT, NAT, 'oifname', 'lo', 'meta l4proto tcp', 'ip daddr', '!=', lo4, 'tcp dport', '!=', dports, key, id, C, 'jump', IN_REDIRECT);
      b.appendV6RuleIfSupported(OUTPUT, NAT, 'oifname', 'lo', 'meta l4proto tcp', 'ip6 daddr', '!=', '::1/128', 'tcp dport', '!=', dports, key, id, C, 'jump', IN_REDIRECT);
      if (!loopInclude) {
        b.why = `a non-proxy process talking to itself over lo bypasses Envoy (not ${key} ${id})`;
        if (redirectDNS) b.appendRule(OUTPUT, NAT, 'oifname', 'lo', 'meta l4proto tcp', 'tcp dport', '!=', '53', key, '!=', id, C, 'return');
        else b.appendRule(OUTPUT, NAT, 'oifname', 'lo', key, '!=', id, C, 'return');
      }
      b.why = `loop prevention: the proxy's own traffic (${key} ${id}) is never redirected`;
      b.appendRule(OUTPUT, NAT, key, id, C, 'return');
    }
  }
  // handleCaptureByOwnerGroup
  const groups = cfg.ownerGroupsInclude === '*' ? { except: true, values: splitIstioList(cfg.ownerGroupsExclude) } : { except: false, values: splitIstioList(cfg.ownerGroupsInclude) };
  if (groups.except) {
    for (const g of groups.values) {
      b.why = `traffic of group ${g} is never captured (ISTIO_OUTBOUND_OWNER_GROUPS_EXCLUDE)`;
      b.appendRule(OUTPUT, NAT, 'skgid', g, C, 'return');
    }
  } else {
    b.why = 'only traffic of the listed groups is captured (ISTIO_OUTBOUND_OWNER_GROUPS)';
    b.appendRule(OUTPUT, NAT, ...groups.values.flatMap((g) => ['skgid', '!=', g]), C, 'return');
  }
  if (redirectDNS) setupDNSRedir(cfg, b);

  b.why = 'localhost destinations are never captured';
  b.appendRule(OUTPUT, NAT, 'ip daddr', lo4, C, 'return');
  b.appendV6RuleIfSupported(OUTPUT, NAT, 'ip6 daddr', '::1/128', C, 'return');
  b.why = 'an excluded destination is never captured (-x)';
  for (const cidr of ex4.cidrs) b.appendRule(OUTPUT, NAT, 'ip daddr', cidr, C, 'return');
  for (const cidr of ex6.cidrs) b.appendV6RuleIfSupported(OUTPUT, NAT, 'ip6 daddr', cidr, C, 'return');
  b.why = 'an included outbound port is always captured (-q)';
  for (const port of splitIstioList(cfg.outboundPortsInclude)) b.appendRule(OUTPUT, NAT, 'tcp dport', port, C, 'jump', REDIRECT);

  // handleOutboundIncludeRules
  const virt = splitIstioList(cfg.rerouteVirtualInterfaces);
  if (in4.wildcard || in6.wildcard) {
    b.why = 'everything else goes to the outbound listener (-i *)';
    b.appendRule(OUTPUT, NAT, C, 'jump', REDIRECT);
    b.why = 'traffic from a VM interface is captured as outbound (-k)';
    for (const ifc of virt) b.insertRule(PRE, NAT, 0, 'iifname', ifc, C, 'jump', REDIRECT);
  } else if (in4.cidrs.length > 0 || in6.cidrs.length > 0) {
    for (const cidr of in4.cidrs) {
      b.why = `traffic from a VM interface to ${cidr} is captured as outbound (-k)`;
      for (const ifc of virt) b.insertRule(PRE, NAT, 0, 'iifname', ifc, 'ip daddr', cidr, C, 'jump', REDIRECT);
      b.why = `traffic to ${cidr} goes to the outbound listener (-i)`;
      b.appendRule(OUTPUT, NAT, 'ip daddr', cidr, C, 'jump', REDIRECT);
    }
    for (const cidr of in6.cidrs) {
      b.why = `traffic from a VM interface to ${cidr} is captured as outbound (-k)`;
      for (const ifc of virt) b.insertV6RuleIfSupported(PRE, NAT, 0, 'iifname', ifc, 'ip6 daddr', cidr, C, 'jump', REDIRECT);
      b.why = `traffic to ${cidr} goes to the outbound listener (-i)`;
      b.appendV6RuleIfSupported(OUTPUT, NAT, 'ip6 daddr', cidr, C, 'jump', REDIRECT);
    }
  }

  if (tproxy) {
    const mark = cfg.inboundTProxyMark;
    b.why = 'TPROXY: the connection of a marked packet keeps the mark';
    b.appendRule(PRE, MANGLE, 'meta l4proto tcp', 'mark', mark, C, 'ct mark set mark');
    b.why = 'TPROXY: Envoy → app packets already marked are not marked again';
    b.appendRule(OUT, MANGLE, 'oifname', 'lo', 'meta l4proto tcp', 'mark', mark, C, 'return');
    for (const [key, ids] of [['skuid', cfg.proxyUID], ['skgid', cfg.proxyGID]] as const) {
      for (const id of splitIstioList(ids)) {
        b.why = "TPROXY: the proxy's loopback traffic to the pod IP is marked 1338";
        b.appendRule(OUT, MANGLE, 'oifname', 'lo', 'meta l4proto tcp', 'ip daddr', '!=', lo4, key, id, C, 'meta mark set', OUTBOUND_MARK);
        b.appendV6RuleIfSupported(OUT, MANGLE, 'oifname', 'lo', 'meta l4proto tcp', 'ip6 daddr', '!=', '::1/128', key, id, C, 'meta mark set', OUTBOUND_MARK);
      }
    }
    b.why = 'TPROXY: packets of a marked connection get the mark back';
    b.appendRule(OUT, MANGLE, 'meta l4proto tcp', 'ct', 'mark', mark, C, 'meta mark set', 'ct', 'mark');
    b.why = 'TPROXY: packets already marked are not diverted again';
    b.insertRule(INBOUND, MANGLE, 0, 'meta l4proto tcp', 'mark', mark, C, 'return');
    b.why = 'TPROXY: the passthrough from 127.0.0.6 / ::6 is not captured';
    b.insertRule(INBOUND, MANGLE, 1, 'iifname', 'lo', 'meta l4proto tcp', 'ip saddr', '127.0.0.6/32', C, 'return');
    b.insertV6RuleIfSupported(INBOUND, MANGLE, 1, 'iifname', 'lo', 'meta l4proto tcp', 'ip6 saddr', '::6/128', C, 'return');
    b.why = 'TPROXY: app → own pod IP over lo (not marked 1338) is not captured';
    b.insertRule(INBOUND, MANGLE, 2, 'iifname', 'lo', 'meta l4proto tcp', 'mark', '!=', OUTBOUND_MARK, C, 'return');
  }

  const base = (type: string, outType: string, priority: number): NftChainSpec[] => [
    { name: PRE, type, hook: 'prerouting', priority },
    { name: OUT, type: outType, hook: 'output', priority },
  ];
  const regular = (...names: string[]): NftChainSpec[] => names.map((name) => ({ name }));
  const opts = { onlyChainsWithRules: true, indexPastEndAppends: true } as const;
  const lines: string[] = [];
  if (cfg.cleanupOnly) {
    for (const t of [NAT, MANGLE, RAW]) lines.push(`add table inet ${t}`, `delete table inet ${t}`);
  } else {
    lines.push(...nftTableTransaction(NAT, [...base('nat', 'nat', -100), ...regular(INBOUND, REDIRECT, IN_REDIRECT, OUTPUT, OUTPUT_DNS)], b.rulesOf(NAT), opts));
    lines.push(...nftTableTransaction(MANGLE, [...base('filter', 'route', -150), ...regular(DIVERT, TPROXY, INBOUND, DROP)], b.rulesOf(MANGLE), opts));
    lines.push(...nftTableTransaction(RAW, [...base('filter', 'filter', -300), ...regular(INBOUND, OUTPUT_DNS)], b.rulesOf(RAW), opts));
  }
  const rules: IstioRule[] = [];
  for (const [table, list] of [NAT, MANGLE, RAW].map((t) => [t, b.rulesOf(t)] as const)) {
    for (const r of list) {
      rules.push({ family: /\bip6\b/.test(r.rule) ? 6 : 4, table: `inet ${table}`, chain: r.chain, text: `${r.index === undefined ? 'add' : 'insert'} rule inet ${table} ${r.chain} ${r.index === undefined ? '' : `index ${r.index} `}${r.rule}`, why: r.why });
    }
  }
  return { lines, rules, warnings };
}

/** `handleInboundPortsInclude` / `handleInboundTProxyMode`. */
function handleInboundPortsInclude(cfg: IstioConfig, b: NftablesRuleBuilder): void {
  if (cfg.inboundPortsInclude === '') return;
  if (cfg.inboundInterceptionMode === 'TPROXY') {
    const mark = cfg.inboundTProxyMark;
    b.why = 'TPROXY: packets of established inbound connections get the mark and are accepted';
    b.appendRule(DIVERT, MANGLE, C, 'meta mark set', mark);
    b.appendRule(DIVERT, MANGLE, C, 'accept');
    b.why = "TPROXY: new inbound TCP connections go to Envoy's inbound listener, addresses preserved";
    b.appendRule(TPROXY, MANGLE, 'meta l4proto tcp', 'ip daddr', '!=', cfg.hostIPv4LoopbackCidr, 'tproxy ip to', `:${cfg.inboundCapturePort}`, 'meta mark set', mark, C, 'accept');
    b.appendV6RuleIfSupported(TPROXY, MANGLE, 'meta l4proto tcp', 'ip6 daddr', '!=', '::1/128', 'tproxy ip6 to', `:${cfg.inboundCapturePort}`, 'meta mark set', mark, C, 'accept');
    b.why = 'inbound capture happens for TCP only (-b)';
    b.appendRule(PRE, MANGLE, 'meta l4proto tcp', C, 'jump', INBOUND);
    if (cfg.inboundPortsInclude === '*') {
      b.why = 'an excluded inbound port is reached directly (-d)';
      for (const port of splitIstioList(cfg.inboundPortsExclude)) b.appendRule(INBOUND, MANGLE, 'meta l4proto tcp', 'tcp dport', port, C, 'return');
      b.why = 'TPROXY: established connections are diverted to the local socket';
      b.appendRule(INBOUND, MANGLE, 'meta l4proto tcp', 'ct state', 'related,established', C, 'jump', DIVERT);
      b.why = 'TPROXY: every other inbound TCP connection is captured';
      b.appendRule(INBOUND, MANGLE, 'meta l4proto tcp', C, 'jump', TPROXY);
    } else {
      for (const port of splitIstioList(cfg.inboundPortsInclude)) {
        b.why = `TPROXY: inbound port ${port} is captured (-b)`;
        b.appendRule(INBOUND, MANGLE, 'meta l4proto tcp', 'ct state', 'related,established', 'tcp dport', port, C, 'jump', DIVERT);
        b.appendRule(INBOUND, MANGLE, 'meta l4proto tcp', 'tcp dport', port, C, 'jump', TPROXY);
      }
    }
    return;
  }
  b.why = 'inbound capture happens for TCP only (-b)';
  b.appendRule(PRE, NAT, 'meta l4proto tcp', C, 'jump', INBOUND);
  if (cfg.inboundPortsInclude === '*') {
    b.why = 'an excluded inbound port is reached directly (-d)';
    for (const port of splitIstioList(cfg.inboundPortsExclude)) b.appendRule(INBOUND, NAT, 'meta l4proto tcp', 'tcp dport', port, C, 'return');
    b.why = 'every other inbound TCP connection goes to Envoy (-b *)';
    b.appendRule(INBOUND, NAT, 'meta l4proto tcp', C, 'jump', IN_REDIRECT);
  } else {
    for (const port of splitIstioList(cfg.inboundPortsInclude)) {
      b.why = `inbound port ${port} is captured (-b)`;
      b.appendRule(INBOUND, NAT, 'meta l4proto tcp', 'tcp dport', port, C, 'jump', IN_REDIRECT);
    }
  }
}

/** `SetupDNSRedir` and `addDNSConntrackZones`. */
function setupDNSRedir(cfg: IstioConfig, b: NftablesRuleBuilder): void {
  const all = cfg.captureAllDNS;
  const port = `:${ISTIO_AGENT_DNS_LISTENER_PORT}`;
  b.why = 'DNS: conntrack zones for UDP DNS (--redirect-dns)';
  b.appendRule(OUT, RAW, C, 'jump', OUTPUT_DNS);
  b.why = 'DNS capture, after the proxy-owner rules (--redirect-dns)';
  if (all || cfg.dnsServersV4.length > 0 || cfg.dnsServersV6.length > 0) b.appendRule(OUTPUT, NAT, C, 'jump', OUTPUT_DNS);
  b.why = 'DNS over TCP goes to the istio-agent DNS proxy on 15053';
  if (all) b.appendRule(OUTPUT_DNS, NAT, 'meta l4proto tcp', 'tcp dport', '53', C, 'redirect', 'to', port);
  else {
    for (const s of cfg.dnsServersV4) b.appendRule(OUTPUT_DNS, NAT, 'ip daddr', `${s}/32`, 'tcp dport', '53', C, 'redirect', 'to', port);
    for (const s of cfg.dnsServersV6) b.appendV6RuleIfSupported(OUTPUT_DNS, NAT, 'ip6 daddr', `${s}/128`, 'tcp dport', '53', C, 'redirect', 'to', port);
  }
  b.why = 'DNS over UDP goes to the istio-agent DNS proxy on 15053';
  if (all) b.appendRule(OUTPUT_DNS, NAT, 'udp dport', '53', C, 'redirect', 'to', port);
  else {
    for (const s of cfg.dnsServersV4) b.appendRule(OUTPUT_DNS, NAT, 'ip daddr', `${s}/32`, 'udp dport', '53', C, 'redirect', 'to', port);
    for (const s of cfg.dnsServersV6) b.appendV6RuleIfSupported(OUTPUT_DNS, NAT, 'ip6 daddr', `${s}/128`, 'udp dport', '53', C, 'redirect', 'to', port);
  }
  for (const [key, ids] of [['skuid', cfg.proxyUID], ['skgid', cfg.proxyGID]] as const) {
    for (const id of splitIstioList(ids)) {
      b.why = "DNS: the proxy's queries to upstream resolvers use conntrack zone 1";
      b.appendRule(OUTPUT_DNS, RAW, 'udp dport', '53', 'meta', key, id, C, 'ct', 'zone', 'set', '1');
      b.why = "DNS: the agent's answers to applications use conntrack zone 2";
      b.appendRule(OUTPUT_DNS, RAW, 'udp sport', '15053', 'meta', key, id, C, 'ct', 'zone', 'set', '2');
    }
  }
  if (all) {
    b.why = 'DNS: conntrack zones for DNS responses';
    b.appendRule(PRE, RAW, C, 'jump', INBOUND);
    b.why = 'DNS: application queries use conntrack zone 2';
    b.appendRule(OUTPUT_DNS, RAW, 'udp dport', '53', C, 'ct', 'zone', 'set', '2');
    b.why = 'DNS: resolver responses use conntrack zone 1';
    b.appendRule(INBOUND, RAW, 'udp sport', '53', C, 'ct', 'zone', 'set', '1');
    return;
  }
  b.why = 'DNS: conntrack zones for DNS responses';
  if (cfg.dnsServersV4.length > 0 || cfg.dnsServersV6.length > 0) b.appendRule(PRE, RAW, C, 'jump', INBOUND);
  for (const s of cfg.dnsServersV4) {
    b.why = 'DNS: application queries use conntrack zone 2, resolver responses zone 1';
    b.appendRule(OUTPUT_DNS, RAW, 'udp dport', '53', 'ip daddr', `${s}/32`, C, 'ct', 'zone', 'set', '2');
    b.appendRule(INBOUND, RAW, 'udp sport', '53', 'ip saddr', `${s}/32`, C, 'ct', 'zone', 'set', '1');
  }
  for (const s of cfg.dnsServersV6) {
    b.why = 'DNS: application queries use conntrack zone 2, resolver responses zone 1';
    b.appendV6RuleIfSupported(OUTPUT_DNS, RAW, 'udp dport', '53', 'ip6 daddr', `${s}/128`, C, 'ct', 'zone', 'set', '2');
    b.appendV6RuleIfSupported(INBOUND, RAW, 'udp sport', '53', 'ip6 saddr', `${s}/128`, C, 'ct', 'zone', 'set', '1');
  }
}
