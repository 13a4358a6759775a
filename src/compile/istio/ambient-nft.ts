/**
 * Istio ambient with istio-cni's nftables backend (Istio 1.28+): a port of
 * `cni/pkg/nftables/nftables.go` (`AppendInpodRules`, `CreateHostRulesForHealthChecks`,
 * `addIstioTableRules`). The output is the knftables transaction istio-cni hands to `nft -f`,
 * line for line; reading it back into a rule set needs the nft front end.
 *
 * @module
 */
import type { IstioRule } from './rule.js';
import type { AmbientConfig, AmbientPodOverrides } from './ambient-config.js';
import { AMBIENT, ambientRedirectDNS } from './ambient-config.js';
import type { IstioReleaseFeatures } from './version.js';
import { type NftChainSpec, type NftRuleSpec, nftTableTransaction } from './nft-transaction.js';

const NAT = 'istio-ambient-nat';
const MANGLE = 'istio-ambient-mangle';
const RAW = 'istio-ambient-raw';
const PRE = 'istio-prerouting';
const OUT = 'istio-output';
const COUNTER = 'counter';

/** The transaction lines and the rules with their reasons. @internal */
export interface AmbientNftOutput {
  readonly lines: readonly string[];
  readonly rules: readonly IstioRule[];
}

class RuleBuilder {
  readonly rules = new Map<string, (NftRuleSpec & { why: string })[]>([[NAT, []], [MANGLE, []], [RAW, []]]);
  readonly enableIPv6: boolean;
  constructor(enableIPv6: boolean) {
    this.enableIPv6 = enableIPv6;
  }
  append(chain: string, table: string, why: string, ...params: string[]): void {
    // knftables.Concat: the arguments joined with single spaces, as they are.
    this.rules.get(table)!.push({ chain, rule: params.join(' '), why });
  }
  appendV6(chain: string, table: string, why: string, ...params: string[]): void {
    if (this.enableIPv6) this.append(chain, table, why, ...params);
  }
}

const hex = (n: number): string => `0x${n.toString(16)}`;

/** @internal */
export function compileAmbientNftables(config: AmbientConfig, o: AmbientPodOverrides, host: boolean, features: IstioReleaseFeatures): AmbientNftOutput {
  // 1.28.0 wrote the IPv6 rules whatever the pod had.
  const rb = new RuleBuilder(config.enableIPv6 || features.ambientNftV6Always);
  const lines: string[] = [];
  if (host) {
    rb.append('postrouting', NAT, 'node: TCP from the kubelet (its uid) to an ambient pod (in the probe set) is SNATed to the probe address',
      'meta l4proto tcp', 'skuid', String(config.kubeletUID), 'ip', 'daddr', `@${AMBIENT.PROBE_IPSET}-v4`, COUNTER, 'snat', 'to', config.hostProbeSNATAddress);
    rb.appendV6('postrouting', NAT, 'node: the same for IPv6 pods',
      'meta l4proto tcp', 'skuid', String(config.kubeletUID), 'ip6', 'daddr', `@${AMBIENT.PROBE_IPSET}-v6`, COUNTER, 'snat', 'to', config.hostProbeV6SNATAddress);
    lines.push(...nftTableTransaction(NAT, [{ name: 'postrouting', type: 'nat', hook: 'postrouting', priority: 100 }], rb.rules.get(NAT)!));
  } else {
    appendInpodRules(config, o, rb, features);
    const chains = (type: string, outType: string, priority: number): NftChainSpec[] => [
      { name: 'prerouting', type, hook: 'prerouting', priority },
      { name: 'output', type: outType, hook: 'output', priority },
      { name: PRE },
      { name: OUT },
    ];
    lines.push(...nftTableTransaction(NAT, chains('nat', 'nat', -100), rb.rules.get(NAT)!));
    lines.push(...nftTableTransaction(MANGLE, chains('filter', 'route', -150), rb.rules.get(MANGLE)!));
    lines.push(...nftTableTransaction(RAW, chains('filter', 'filter', -300), rb.rules.get(RAW)!));
  }
  const rules: IstioRule[] = [];
  for (const [table, list] of rb.rules) {
    for (const r of list) {
      const family = /\bip6\b/.test(r.rule) ? 6 : 4;
      rules.push({ family, table: `inet ${table}`, chain: r.chain, text: `add rule inet ${table} ${r.chain} ${r.rule}`, why: r.why });
    }
  }
  return { lines, rules };
}

function appendInpodRules(config: AmbientConfig, o: AmbientPodOverrides, rb: RuleBuilder, features: IstioReleaseFeatures): void {
  const redirectDNS = ambientRedirectDNS(config, o);
  const mark = hex(AMBIENT.INPOD_MARK);
  const mask = hex(AMBIENT.INPOD_MASK);
  const tmark = hex(AMBIENT.INPOD_TPROXY_MARK);
  const tmask = hex(AMBIENT.INPOD_TPROXY_MASK);
  rb.append('prerouting', MANGLE, 'arriving packets of ztunnel-marked connections get their connmark here', 'jump', PRE);
  rb.append('output', MANGLE, 'leaving packets get the connmark restored as packet mark', 'jump', OUT);
  rb.append('output', NAT, 'outbound capture: every locally generated connection is checked by istio-output', 'jump', OUT);
  if (redirectDNS) {
    rb.append('prerouting', RAW, 'DNS: conntrack zone for answers from upstream resolvers', 'jump', PRE);
    rb.append('output', RAW, "DNS: conntrack zone for ztunnel's queries", 'jump', OUT);
  }
  rb.append('prerouting', NAT, 'inbound capture: every arriving connection is checked by istio-prerouting', 'jump', PRE);
  for (const ifc of o.virtualInterfaces) {
    rb.append(PRE, NAT, `TCP arriving on virtual interface ${ifc} goes to ztunnel's outbound port 15001`,
      'iifname', ifc, 'meta l4proto tcp', COUNTER, 'redirect to', `:${AMBIENT.ZTUNNEL_OUTBOUND_PORT}`);
    rb.append(PRE, NAT, `and leaves istio-prerouting (virtual interface ${ifc})`, 'iifname', ifc, 'meta l4proto tcp', COUNTER, 'return');
  }
  if (!o.ingressMode || features.ambientIngressConnmark) {
    rb.append(PRE, MANGLE, "a packet with ztunnel's mark 0x539 marks its connection 0x111",
      'meta mark & 0xfff ==', mark, COUNTER, 'ct mark set ct mark & 0xfffff000 | ', tmark);
  }
  if (!o.ingressMode) {
    rb.append(PRE, NAT, 'kubelet health probes (SNATed to the probe address) reach the app directly',
      'meta l4proto tcp', 'ip saddr', config.hostProbeSNATAddress, COUNTER, 'accept');
    rb.appendV6(PRE, NAT, 'kubelet health probes (SNATed to the probe address) reach the app directly',
      'meta l4proto tcp', 'ip6 saddr', config.hostProbeV6SNATAddress, COUNTER, 'accept');
  }
  rb.append(OUT, NAT, 'answers to kubelet health probes are not captured', 'meta l4proto tcp', 'ip daddr', config.hostProbeSNATAddress, COUNTER, 'accept');
  rb.appendV6(OUT, NAT, 'answers to kubelet health probes are not captured', 'meta l4proto tcp', 'ip6 daddr', config.hostProbeV6SNATAddress, COUNTER, 'accept');
  if (!o.ingressMode) {
    const why = "inbound plaintext TCP (not HBONE 15008, not ztunnel's own) goes to ztunnel's port 15006";
    // Upstream writes "mark and 0xfff " (with a trailing space) in the IPv4 rule only.
    rb.append(PRE, NAT, why, 'ip daddr', '!=', '127.0.0.1/32', 'tcp dport', '!=', String(AMBIENT.ZTUNNEL_INBOUND_PORT),
      'mark and 0xfff ', '!=', mark, COUNTER, 'redirect to', `:${AMBIENT.ZTUNNEL_INBOUND_PLAINTEXT_PORT}`);
    rb.appendV6(PRE, NAT, why, 'ip6 daddr', '!=', '::1/128', 'tcp dport', '!=', String(AMBIENT.ZTUNNEL_INBOUND_PORT),
      'mark and 0xfff', '!=', mark, COUNTER, 'redirect to', `:${AMBIENT.ZTUNNEL_INBOUND_PLAINTEXT_PORT}`);
  }
  rb.append(OUT, MANGLE, 'packets of a connection ztunnel accepted carry its connmark as packet mark',
    'ct mark and', tmask, '==', tmark, COUNTER, 'meta mark set ct mark');
  if (redirectDNS) {
    const port = `:${AMBIENT.DNS_CAPTURE_PORT}`;
    rb.append(OUT, NAT, "DNS over UDP goes to ztunnel's DNS proxy on 15053", 'oifname', '!=', 'lo', 'mark and', mask, '!=', mark, 'udp dport', '53', COUNTER, 'redirect to', port);
    rb.append(OUT, NAT, "DNS over TCP goes to ztunnel's DNS proxy on 15053", 'ip daddr', '!=', '127.0.0.1/32', 'tcp dport', '53', 'mark and', mask, '!=', mark, COUNTER, 'redirect to', port);
    rb.appendV6(OUT, NAT, "DNS over TCP goes to ztunnel's DNS proxy on 15053", 'ip6 daddr', '!=', '::1/128', 'tcp dport', '53', 'mark and', mask, '!=', mark, COUNTER, 'redirect to', port);
    rb.append(OUT, RAW, "DNS: ztunnel's queries use conntrack zone 1", 'udp dport', '53', 'meta mark and', mask, '==', mark, COUNTER, 'ct zone set', '1');
    rb.append(PRE, RAW, 'DNS: answers from resolvers use conntrack zone 1', 'udp sport', '53', 'meta mark and', mask, '!=', mark, COUNTER, 'ct zone set', '1');
  }
  rb.append(OUT, NAT, 'replies on connections ztunnel accepted (mark 0x111) are not captured', 'meta l4proto tcp', 'mark and', tmask, '==', tmark, COUNTER, 'accept');
  rb.append(OUT, NAT, 'the app calling its own pod address over lo is not captured', 'oifname', 'lo', 'ip daddr', '!=', '127.0.0.1/32', COUNTER, 'accept');
  rb.appendV6(OUT, NAT, 'the app calling its own pod address over lo is not captured', 'oifname', 'lo', 'ip6 daddr', '!=', '::1/128', COUNTER, 'accept');
  const out = `:${AMBIENT.ZTUNNEL_OUTBOUND_PORT}`;
  rb.append(OUT, NAT, "outbound TCP not from ztunnel goes to ztunnel's outbound port 15001", 'meta l4proto tcp', 'ip daddr', '!=', '127.0.0.1/32', 'mark and', mask, '!=', mark, COUNTER, 'redirect to', out);
  rb.appendV6(OUT, NAT, "outbound TCP not from ztunnel goes to ztunnel's outbound port 15001", 'meta l4proto tcp', 'ip6 daddr', '!=', '::1/128', 'mark and', mask, '!=', mark, COUNTER, 'redirect to', out);
}
