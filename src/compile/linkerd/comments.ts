/**
 * Why a proxy-init rule exists: its `proxy-init/…` comment mapped back to the option, annotation
 * and chart value behind it, for traces and diagnoses ("which setting put this RETURN here?").
 *
 * @module
 */
import { LINKERD_ANNOTATIONS } from './defaults.js';
import { expectArgument } from '../../model/guard.js';

/**
 * The rule kinds proxy-init writes, named by their comment text.
 *
 * @example
 * ```ts
 * const kind: ProxyInitRuleKind | undefined = explainProxyInitComment('proxy-init/ignore-loopback')?.kind; // 'ignore-loopback'
 * ```
 */
export type ProxyInitRuleKind =
  | 'install-proxy-init-prerouting'
  | 'install-proxy-init-output'
  | 'ignore-proxy-user-id'
  | 'ignore-proxy-group-id'
  | 'ignore-loopback'
  | 'ignore-port'
  | 'ignore-subnet'
  | 'redirect-all-incoming-to-proxy-port'
  | 'redirect-port-to-proxy-port'
  | 'redirect-all-outgoing-to-proxy-port'
  | 'redirect-common-chain'
  | 'redirect-non-loopback-local-traffic';

/**
 * What {@link explainProxyInitComment} tells about a rule.
 *
 * @example
 * ```ts
 * const why: ProxyInitRuleExplanation | undefined = explainProxyInitComment('proxy-init/ignore-port-4567,4568', 'PROXY_INIT_OUTPUT');
 * if (why?.annotation) console.log(`set by ${why.option} / ${why.annotation}`);
 * ```
 */
export interface ProxyInitRuleExplanation {
  readonly kind: ProxyInitRuleKind;
  /** `inbound` rules live in `PROXY_INIT_REDIRECT` (PREROUTING), `outbound` in `PROXY_INIT_OUTPUT` (OUTPUT). */
  readonly direction: 'inbound' | 'outbound';
  /** The proxy-init flag behind the rule, if any (`always` rules have none). */
  readonly option?: string;
  /** The linkerd-cni configuration key. */
  readonly cniKey?: string;
  /** The pod/namespace annotation that changes it. */
  readonly annotation?: string;
  /** The linkerd-control-plane chart value. */
  readonly chartValue?: string;
  /** The value carried by the comment: the port list (`443,1000:2000`), the subnet, the port. */
  readonly value?: string;
  /** The `/<unix seconds>` suffix of proxy-init releases before v2.4.0. */
  readonly timestamp?: number;
  /** One sentence for people. */
  readonly summary: string;
}

/**
 * Explains a proxy-init rule from its comment (with or without the `proxy-init/` prefix and the
 * old timestamp suffix). `chain` tells inbound from outbound `ignore-port` rules; without it the
 * direction is guessed as inbound. Returns `undefined` for comments proxy-init does not write.
 *
 * @example
 * ```ts
 * explainProxyInitComment('proxy-init/ignore-port-4567,4568', 'PROXY_INIT_OUTPUT');
 * // { kind: 'ignore-port', direction: 'outbound', option: '--outbound-ports-to-ignore',
 * //   annotation: 'config.linkerd.io/skip-outbound-ports', value: '4567,4568', … }
 * ```
 */
export function explainProxyInitComment(comment: string, chain?: string): ProxyInitRuleExplanation | undefined {
  expectArgument(comment, 'string', 'comment');
  expectArgument(chain, ['string', 'undefined'], 'chain');
  let text = comment.startsWith('proxy-init/') ? comment.slice('proxy-init/'.length) : comment;
  let timestamp: number | undefined;
  // Releases before v2.4.0: `/<unix seconds>`. A prefix length never has nine digits.
  const ts = /^(.*)\/(\d{9,})$/.exec(text);
  if (ts) {
    text = ts[1]!;
    timestamp = Number(ts[2]);
  }
  const outbound = chain === 'PROXY_INIT_OUTPUT' || chain === 'OUTPUT';
  const withTs = (o: ProxyInitRuleExplanation): ProxyInitRuleExplanation => (timestamp !== undefined ? { ...o, timestamp } : o);
  const A = LINKERD_ANNOTATIONS;
  switch (text) {
    case 'install-proxy-init-prerouting':
      return withTs({ kind: text, direction: 'inbound', summary: 'Sends every arriving connection through PROXY_INIT_REDIRECT (always written).' });
    case 'install-proxy-init-output':
      return withTs({ kind: text, direction: 'outbound', summary: 'Sends every locally generated connection through PROXY_INIT_OUTPUT (always written).' });
    case 'ignore-proxy-user-id':
      return withTs({ kind: text, direction: 'outbound', option: '--proxy-uid', cniKey: 'proxy-uid', annotation: A.proxyUid, chartValue: 'proxy.uid',
        summary: "The proxy's own connections (its UID) are not redirected back to it; written only when the uid is > 0." });
    case 'ignore-proxy-group-id':
      return withTs({ kind: text, direction: 'outbound', option: '--proxy-gid', cniKey: 'proxy-gid', annotation: A.proxyGid, chartValue: 'proxy.gid',
        summary: 'Connections of processes in the proxy\'s group are not redirected; written only when the gid is > 0.' });
    case 'ignore-loopback':
      return withTs({ kind: text, direction: 'outbound',
        summary: 'Connections leaving on lo (to 127.0.0.0/8 and to the pod\'s own addresses) are not redirected (always written).' });
    case 'redirect-all-incoming-to-proxy-port':
      return withTs({ kind: text, direction: 'inbound', option: '--incoming-proxy-port', cniKey: 'incoming-proxy-port', annotation: A.inboundPort, chartValue: 'proxy.ports.inbound',
        summary: 'Every other arriving TCP connection goes to the proxy\'s inbound port (no --ports-to-redirect given).' });
    case 'redirect-all-outgoing-to-proxy-port':
      return withTs({ kind: text, direction: 'outbound', option: '--outgoing-proxy-port', cniKey: 'outgoing-proxy-port', annotation: A.outboundPort, chartValue: 'proxy.ports.outbound',
        summary: 'Every other outgoing TCP connection goes to the proxy\'s outbound port.' });
    case 'redirect-common-chain':
      return withTs({ kind: text, direction: outbound ? 'outbound' : 'inbound', summary: 'The comment of the chain creation of proxy-init releases before v2.2.0.' });
    case 'redirect-non-loopback-local-traffic':
      return withTs({ kind: text, direction: 'outbound', option: '--proxy-uid',
        summary: "Before v1.4: the proxy's connections to the pod's own non-loopback address were sent through PROXY_INIT_REDIRECT." });
    default:
      break;
  }
  if (text.startsWith('ignore-port-')) {
    const value = text.slice('ignore-port-'.length);
    return withTs(outbound
      ? { kind: 'ignore-port', direction: 'outbound', option: '--outbound-ports-to-ignore', cniKey: 'outbound-ports-to-ignore',
          annotation: A.skipOutboundPorts, chartValue: 'proxyInit.ignoreOutboundPorts', value,
          summary: `Outgoing TCP connections to ports ${value} bypass the proxy.` }
      : { kind: 'ignore-port', direction: 'inbound', option: '--inbound-ports-to-ignore', cniKey: 'inbound-ports-to-ignore',
          annotation: A.skipInboundPorts, chartValue: 'proxy.ports.control,proxy.ports.admin,proxyInit.ignoreInboundPorts', value,
          summary: `Arriving TCP connections to ports ${value} bypass the proxy.` });
  }
  if (text.startsWith('ignore-subnet-')) {
    const value = text.slice('ignore-subnet-'.length);
    return withTs({ kind: 'ignore-subnet', direction: 'inbound', option: '--subnets-to-ignore', cniKey: 'subnets-to-ignore',
      annotation: A.skipSubnets, chartValue: 'proxyInit.skipSubnets', value,
      summary: `Arriving connections from ${value} bypass the proxy (by source address; outbound traffic to it is still redirected).` });
  }
  const port = /^redirect-port-(-?\d+)-to-proxy-port$/.exec(text);
  if (port) {
    return withTs({ kind: 'redirect-port-to-proxy-port', direction: 'inbound', option: '--ports-to-redirect', cniKey: 'ports-to-redirect',
      value: port[1]!, summary: `Arriving TCP connections to port ${port[1]} go to the proxy (only listed ports are redirected).` });
  }
  return undefined;
}
