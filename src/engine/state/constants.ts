/**
 * Numbers and orderings copied from the kernel, so the engine can hold its data next to
 * `ip_tables.c`, `netfilter_ipv4.h` and `nf_tables.h`.
 *
 * @module
 */
import type { HookName, TableName } from '../../model/types.js';

/** `enum nf_inet_hooks` (include/uapi/linux/netfilter.h). */
export const NF_INET = { PRE_ROUTING: 0, LOCAL_IN: 1, FORWARD: 2, LOCAL_OUT: 3, POST_ROUTING: 4 } as const;

/** Hook index by the name iptables gives the built-in chain. */
export const HOOK_INDEX: { readonly [H in HookName]: number } = {
  PREROUTING: NF_INET.PRE_ROUTING,
  INPUT: NF_INET.LOCAL_IN,
  FORWARD: NF_INET.FORWARD,
  OUTPUT: NF_INET.LOCAL_OUT,
  POSTROUTING: NF_INET.POST_ROUTING,
};

/** Hook names by index. */
export const HOOK_BY_INDEX: readonly HookName[] = ['PREROUTING', 'INPUT', 'FORWARD', 'OUTPUT', 'POSTROUTING'];

/**
 * `enum nf_ip_hook_priorities` (include/uapi/linux/netfilter_ipv4.h); ip6 uses the same values
 * (`nf_ip6_hook_priorities`).
 */
export const NF_IP_PRI = {
  CONNTRACK_DEFRAG: -400,
  RAW: -300,
  SELINUX_FIRST: -225,
  CONNTRACK: -200,
  MANGLE: -150,
  NAT_DST: -100,
  FILTER: 0,
  SECURITY: 50,
  NAT_SRC: 100,
  SELINUX_LAST: 225,
  CONNTRACK_HELPER: 300,
  CONNTRACK_CONFIRM: 0x7fffffff,
} as const;

/** What runs at a hook: an iptables table, or one of conntrack's own functions. */
export type HookStep =
  | { readonly kind: 'table'; readonly table: TableName; readonly priority: number }
  | { readonly kind: 'conntrack'; readonly priority: number }
  | { readonly kind: 'confirm'; readonly priority: number };

function table(t: TableName, priority: number): HookStep {
  return { kind: 'table', table: t, priority };
}

/**
 * The functions registered at each hook, in priority order (nf_hook_slow walks them in that
 * order). The nat table registers PREROUTING/OUTPUT at NAT_DST and INPUT/POSTROUTING at NAT_SRC
 * (`nf_nat_ipv4_ops`); conntrack enters at CONNTRACK in PREROUTING/OUTPUT and confirms at
 * CONNTRACK_CONFIRM in INPUT/POSTROUTING (`ipv4_conntrack_ops`).
 */
export const HOOK_STEPS: { readonly [H in HookName]: readonly HookStep[] } = {
  PREROUTING: [
    table('raw', NF_IP_PRI.RAW),
    { kind: 'conntrack', priority: NF_IP_PRI.CONNTRACK },
    table('mangle', NF_IP_PRI.MANGLE),
    table('nat', NF_IP_PRI.NAT_DST),
  ],
  INPUT: [
    table('mangle', NF_IP_PRI.MANGLE),
    table('filter', NF_IP_PRI.FILTER),
    table('security', NF_IP_PRI.SECURITY),
    table('nat', NF_IP_PRI.NAT_SRC),
    { kind: 'confirm', priority: NF_IP_PRI.CONNTRACK_CONFIRM },
  ],
  FORWARD: [
    table('mangle', NF_IP_PRI.MANGLE),
    table('filter', NF_IP_PRI.FILTER),
    table('security', NF_IP_PRI.SECURITY),
  ],
  OUTPUT: [
    table('raw', NF_IP_PRI.RAW),
    { kind: 'conntrack', priority: NF_IP_PRI.CONNTRACK },
    table('mangle', NF_IP_PRI.MANGLE),
    table('nat', NF_IP_PRI.NAT_DST),
    table('filter', NF_IP_PRI.FILTER),
    table('security', NF_IP_PRI.SECURITY),
  ],
  POSTROUTING: [
    table('mangle', NF_IP_PRI.MANGLE),
    table('nat', NF_IP_PRI.NAT_SRC),
    { kind: 'confirm', priority: NF_IP_PRI.CONNTRACK_CONFIRM },
  ],
};

/** `IPPROTO_*` numbers the engine needs itself. */
export const PROTO = { ICMP: 1, TCP: 6, UDP: 17, ICMPV6: 58, SCTP: 132, DCCP: 33, UDPLITE: 136 } as const;

/** Whether a protocol carries ports the engine reads. */
export function hasPorts(proto: number): boolean {
  return proto === PROTO.TCP || proto === PROTO.UDP || proto === PROTO.SCTP || proto === PROTO.DCCP || proto === PROTO.UDPLITE;
}
