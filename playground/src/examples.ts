// The examples of the README and docs/, one click away: each sets the part of the state its
// command gives (rules, namespace flags, connection), read from the same files under examples/.
import linkerdRules from '../../examples/linkerd-default.rules?raw';
import nodeRules from '../../examples/kube-proxy/node.rules?raw';
import brokenRules from '../../examples/kube-proxy/broken.rules?raw';
import podNft from '../../examples/nftables/pod.nft?raw';
import brokenNft from '../../examples/nftables/broken.nft?raw';
import web from '../../examples/mesh/web.yaml?raw';
import api from '../../examples/mesh/api.yaml?raw';
import istioWeb from '../../examples/mesh/istio-web.yaml?raw';
import istioApi from '../../examples/mesh/istio-api.yaml?raw';
import ambientWeb from '../../examples/mesh/ambient-web.yaml?raw';
import ambientApi from '../../examples/mesh/ambient-api.yaml?raw';
import type { PlaygroundState } from '../../src/playground/state.js';

/** An example: where it comes from, and what it changes in a state. */
export interface Example {
  readonly id: string;
  readonly title: string;
  /** The document and the command it reproduces. */
  readonly source: string;
  readonly apply: (s: PlaygroundState) => PlaygroundState;
}

const QUICK_START = `*nat
:OUTPUT ACCEPT [0:0]
-A OUTPUT -p tcp -m owner ! --uid-owner 2102 -j REDIRECT --to-ports 4140
COMMIT
`;

const MUTLIPORT = '*filter\n-A INPUT -p tcp -m mutliport --dports 80,443 -j ACCEPT\nCOMMIT\n';

const kubeNode = { listen: '', ifaces: 'eth0=192.168.0.2/24\ncbr0=10.244.0.1/24', gateway: '192.168.0.1', routes: '', ipRules: '', routeLocalnet: false, ipForward: true };
const pod = (listen: string): PlaygroundState['ns'] => ({ listen, ifaces: '', gateway: '', routes: '', ipRules: '', routeLocalnet: false, ipForward: false });

export const EXAMPLES: readonly Example[] = [
  {
    id: 'linkerd',
    title: 'Linkerd: the app connects to a Service',
    source: 'README: netfilter-sim connect --rules linkerd.rules --listen 4140,4143,8080 --uid 1000 --dst 10.96.0.10:80',
    apply: (s) => ({ ...s, view: 'connect', rules: linkerdRules, syntax: 'auto', strict: true, ns: pod('4140,4143,8080'), conn: { ...s.conn, from: 'local', uid: '1000', gid: '', src: '', sport: '', iface: '', mark: '', proto: 'tcp', dst: '10.96.0.10:80' } }),
  },
  {
    id: 'quick-start',
    title: 'Library quick start: REDIRECT unless uid 2102',
    source: 'README: examples/quick-start.mjs',
    apply: (s) => ({ ...s, view: 'connect', rules: QUICK_START, syntax: 'auto', strict: true, ns: pod('4140'), conn: { ...s.conn, from: 'local', uid: '1000', gid: '', src: '', sport: '', iface: '', mark: '', proto: 'tcp', dst: '10.96.0.10:80' } }),
  },
  {
    id: 'linkerd-inbound',
    title: 'Linkerd: a packet arriving for the app',
    source: "docs/reading-a-trace.md: netfilter-sim trace --rules examples/linkerd-default.rules --listen 4143 --packet 'tcp 10.1.0.7:40000 > 10.0.0.2:8080'",
    apply: (s) => ({ ...s, view: 'packet', rules: linkerdRules, syntax: 'auto', strict: true, ns: pod('4143'), packet: 'tcp 10.1.0.7:40000 > 10.0.0.2:8080' }),
  },
  {
    id: 'kube-nodeport',
    title: 'kube-proxy: a NodePort from outside the node',
    source: 'docs/checking-a-node-dump.md: connect --rules examples/kube-proxy/node.rules … --from remote --src 192.168.0.50 --dst 192.168.0.2:30080',
    apply: (s) => ({ ...s, view: 'connect', rules: nodeRules, syntax: 'auto', strict: true, ns: kubeNode, conn: { ...s.conn, from: 'remote', uid: '', gid: '', src: '192.168.0.50', sport: '', iface: '', mark: '', proto: 'tcp', dst: '192.168.0.2:30080' } }),
  },
  {
    id: 'kube-no-endpoints',
    title: 'kube-proxy: a Service without endpoints',
    source: 'docs/checking-a-node-dump.md: connect --rules examples/kube-proxy/node.rules … --from remote --src 10.244.0.5 --dst 10.96.0.20:5432',
    apply: (s) => ({ ...s, view: 'connect', rules: nodeRules, syntax: 'auto', strict: true, ns: kubeNode, conn: { ...s.conn, from: 'remote', uid: '', gid: '', src: '10.244.0.5', sport: '', iface: '', mark: '', proto: 'tcp', dst: '10.96.0.20:5432' } }),
  },
  {
    id: 'kube-broken',
    title: 'kube-proxy: a dump with an error',
    source: 'docs/checking-a-node-dump.md: netfilter-sim check examples/kube-proxy/broken.rules',
    apply: (s) => ({ ...s, view: 'connect', rules: brokenRules, syntax: 'auto', strict: true }),
  },
  {
    id: 'mutliport',
    title: 'A typo: -m mutliport',
    source: "README: printf '…-m mutliport…' | netfilter-sim fmt -",
    apply: (s) => ({ ...s, rules: MUTLIPORT, syntax: 'auto', strict: true }),
  },
  {
    id: 'explore-linkerd',
    title: 'explore: every connection from the Linkerd pod',
    source: 'docs/explore.md: netfilter-sim explore --rules examples/linkerd-default.rules --listen 4140,4143,8080 --from local -4',
    apply: (s) => ({ ...s, view: 'explore', rules: linkerdRules, syntax: 'auto', strict: true, ns: pod('4140,4143,8080'), explore: { ...s.explore, from: 'local', proto: 'tcp', family: '4', uid: '1000' } }),
  },
  {
    id: 'nft-pod',
    title: 'nftables: a pod in nft',
    source: 'docs/explore.md: netfilter-sim explore --rules examples/nftables/pod.nft --listen 15001,8080 --from local -4',
    apply: (s) => ({ ...s, view: 'explore', rules: podNft, syntax: 'auto', strict: true, ns: pod('15001,8080'), explore: { ...s.explore, from: 'local', proto: 'tcp', family: '4', uid: '1000' } }),
  },
  {
    id: 'nft-broken',
    title: 'nftables: a rule set nft refuses',
    source: 'docs/nftables.md: netfilter-sim check examples/nftables/broken.nft',
    apply: (s) => ({ ...s, rules: brokenNft, syntax: 'auto', strict: true }),
  },
  {
    id: 'mesh-linkerd',
    title: 'mesh: two Linkerd pods',
    source: 'README: netfilter-sim mesh linkerd --client examples/mesh/web.yaml --server examples/mesh/api.yaml',
    apply: (s) => ({ ...s, view: 'mesh', mesh: { mesh: 'linkerd', client: web, server: api, dst: '', cni: false, nativeSidecars: 'default', phase: 'app', ambient: false } }),
  },
  {
    id: 'mesh-linkerd-init',
    title: 'mesh: an init container before the proxy (linkerd-cni)',
    source: 'README: netfilter-sim mesh linkerd … --cni --native-sidecars off --phase init:fetch-config',
    apply: (s) => ({ ...s, view: 'mesh', mesh: { mesh: 'linkerd', client: web, server: api, dst: '', cni: true, nativeSidecars: 'off', phase: 'init:fetch-config', ambient: false } }),
  },
  {
    id: 'mesh-istio',
    title: 'mesh: two Istio sidecar pods',
    source: 'docs/debugging-a-meshed-pod.md: netfilter-sim mesh istio --client examples/mesh/istio-web.yaml --server examples/mesh/istio-api.yaml',
    apply: (s) => ({ ...s, view: 'mesh', mesh: { mesh: 'istio', client: istioWeb, server: istioApi, dst: '', cni: false, nativeSidecars: 'default', phase: 'app', ambient: false } }),
  },
  {
    id: 'mesh-ambient',
    title: 'mesh: two Istio ambient pods',
    source: 'docs/debugging-a-meshed-pod.md: netfilter-sim mesh istio --client examples/mesh/ambient-web.yaml --server examples/mesh/ambient-api.yaml',
    apply: (s) => ({ ...s, view: 'mesh', mesh: { mesh: 'istio', client: ambientWeb, server: ambientApi, dst: '', cni: false, nativeSidecars: 'default', phase: 'app', ambient: false } }),
  },
  {
    id: 'compile-linkerd',
    title: 'compile: what linkerd-init writes',
    source: 'README: netfilter-sim compile linkerd --firewall-bin-path iptables-nft … --outbound-ports-to-ignore 4567,4568',
    apply: (s) => ({ ...s, view: 'compile', compile: { mesh: 'linkerd', input: 'flags', flags: '--firewall-bin-path iptables-nft --firewall-save-bin-path iptables-nft-save --ipv6=false --incoming-proxy-port 4143 --outgoing-proxy-port 4140 --proxy-uid 2102 --inbound-ports-to-ignore 4190,4191,4567,4568 --outbound-ports-to-ignore 4567,4568', pod: '', format: 'save' } }),
  },
  {
    id: 'compile-istio',
    title: 'compile: what istio-init writes',
    source: "docs/cli.md: netfilter-sim compile istio -p 15001 -z 15006 -u 1337 -m REDIRECT -i '*' -b '*' --format restore",
    apply: (s) => ({ ...s, view: 'compile', compile: { mesh: 'istio', input: 'flags', flags: "-p 15001 -z 15006 -u 1337 -m REDIRECT -i '*' -b '*'", pod: '', format: 'restore' } }),
  },
  {
    id: 'compile-istio-pod',
    title: 'compile: istio-init for a Pod',
    source: 'docs/cli.md: netfilter-sim compile istio --pod web.yaml',
    apply: (s) => ({ ...s, view: 'compile', compile: { mesh: 'istio', input: 'pod', flags: '', pod: istioWeb, format: 'save' } }),
  },
];
