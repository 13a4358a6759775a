/**
 * flannel's node rules (flannel-io/flannel v0.28, pkg/trafficmngr/iptables): `FLANNEL-POSTRTG`,
 * which masquerades pod traffic leaving the flannel network (but not kube-proxy's marked
 * traffic, nor traffic within the network), and `FLANNEL-FWD`, which accepts forwarding to and
 * from the network. Both are jumped to from the end of POSTROUTING and FORWARD.
 *
 * @internal
 * @module
 */

/** One family's flannel rules as flannel writes them with iptables-restore (`-A CHAIN args`). */
export interface FlannelRules {
  readonly nat: readonly string[];
  readonly filter: readonly string[];
}

const KUBE_PROXY_MARK = '0x4000/0x4000';

/**
 * `masqRules` / `masqIP6Rules` and `forwardRules` for a cluster network (`Network` of flannel's
 * net-conf) and this node's lease (its pod CIDR).
 */
export function flannelRules(network: string, lease: string, family: 4 | 6, randomFully: boolean): FlannelRules {
  const c = ['-m', 'comment', '--comment', '"flanneld masq"'];
  const masq = randomFully ? ['-j', 'MASQUERADE', '--random-fully'] : ['-j', 'MASQUERADE'];
  const mcast = family === 4 ? '224.0.0.0/4' : 'ff00::/8';
  const line = (...w: readonly (string | readonly string[])[]): string => w.flat().join(' ');
  const nat = [
    line('-A', 'POSTROUTING', c, '-j', 'FLANNEL-POSTRTG'),
    line('-A', 'FLANNEL-POSTRTG', '-m', 'mark', '--mark', KUBE_PROXY_MARK, c, '-j', 'RETURN'),
    line('-A', 'FLANNEL-POSTRTG', '-s', lease, '-d', network, c, '-j', 'RETURN'),
    line('-A', 'FLANNEL-POSTRTG', '-s', network, '-d', lease, c, '-j', 'RETURN'),
    line('-A', 'FLANNEL-POSTRTG', '!', '-s', network, '-d', lease, c, '-j', 'RETURN'),
    line('-A', 'FLANNEL-POSTRTG', '-s', network, '!', '-d', mcast, c, masq),
    line('-A', 'FLANNEL-POSTRTG', '!', '-s', network, '-d', network, c, masq),
  ];
  const f = ['-m', 'comment', '--comment', '"flanneld forward"'];
  const filter = [
    line('-A', 'FORWARD', f, '-j', 'FLANNEL-FWD'),
    line('-A', 'FLANNEL-FWD', '-s', network, f, '-j', 'ACCEPT'),
    line('-A', 'FLANNEL-FWD', '-d', network, f, '-j', 'ACCEPT'),
  ];
  return { nat, filter };
}

/**
 * flanneld's nftables backend (`EnableNFTables` in its net-conf; pkg/trafficmngr/nftables) as the
 * commands of its transactions, in the order flanneld runs them at start: both tables made (each
 * with its comment), then for each family with a network the masquerade chain (`postrtg`, nat at
 * `srcnat`) when the node has a lease of that family, then the forward chain (filter at
 * `forward`). `randomFully` false is `--ip-masq-random-fully-disable` (or a kernel without it).
 */
export function flannelNftTransaction(nets: { readonly 4?: { readonly network: string; readonly lease: string | null }; readonly 6?: { readonly network: string; readonly lease: string | null } }, randomFully: boolean): string[] {
  const out: string[] = [];
  const TABLES = { 4: ['ip', 'flannel-ipv4'], 6: ['ip6', 'flannel-ipv6'] } as const;
  for (const f of [4, 6] as const) out.push(`add table ${TABLES[f][0]} ${TABLES[f][1]} { comment "rules for ${TABLES[f][1]}" ; }`);
  const masq = randomFully ? 'masquerade fully-random' : 'masquerade';
  for (const f of [4, 6] as const) {
    const n = nets[f];
    if (n === undefined || n.lease === null) continue;
    const [fam, table] = TABLES[f];
    const chain = `${fam} ${table} postrtg`;
    const mcast = f === 4 ? '224.0.0.0/4' : 'ff00::/8';
    out.push(
      `add chain ${chain} { type nat hook postrouting priority srcnat ; comment "chain to manage traffic masquerading by flannel" ; }`,
      `flush chain ${chain}`,
      `add rule ${chain} meta mark 0x4000 return`,
      `add rule ${chain} ${fam} saddr ${n.lease} ${fam} daddr ${n.network} return`,
      `add rule ${chain} ${fam} saddr ${n.network} ${fam} daddr ${n.lease} return`,
      `add rule ${chain} ${fam} saddr != ${n.lease} ${fam} daddr ${n.network} return`,
      `add rule ${chain} ${fam} saddr ${n.network} ${fam} daddr != ${mcast} ${masq}`,
      `add rule ${chain} ${fam} saddr != ${n.network} ${fam} daddr ${n.network} ${masq}`,
    );
  }
  for (const f of [4, 6] as const) {
    const n = nets[f];
    if (n === undefined) continue;
    const [fam, table] = TABLES[f];
    const chain = `${fam} ${table} forward`;
    out.push(
      `add chain ${chain} { type filter hook forward priority filter ; comment "chain to accept flannel traffic" ; }`,
      `flush chain ${chain}`,
      `add rule ${chain} ${fam} saddr ${n.network} accept`,
      `add rule ${chain} ${fam} daddr ${n.network} accept`,
    );
  }
  return out;
}
