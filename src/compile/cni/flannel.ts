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
