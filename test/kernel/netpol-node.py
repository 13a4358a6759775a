#!/usr/bin/env python3
"""Real-kernel side of the NetworkPolicy node harness (test/kernel/netpol-harness.ts).

One process per case; one JSON request on stdin, one JSON reply on stdout. It builds anonymous
network namespaces with unshare(CLONE_NEWNET), so nothing outlives the process:

  node   lo, holding the node address (192.168.0.1N/32); ip_forward on; per pod a veth
         (vethN, no address, MAC ee:ee:ee:ee:ee:ee as Calico's), a /32 route to the pod through
         it and a permanent neighbour entry; the enforcer's ipsets (ipset restore), iptables rules
         (iptables-restore) and nft table (nft -f)
  pod N  lo; eth0 with the pod address/32, MAC 02:00:00:00:00:NN; default via 169.254.1.1
         onlink, whose neighbour entry is the node's veth (the ptp / Calico shape, no ARP)

Every pod listens on every port of "ports" (TCP). A probe connects from a pod's namespace (or the
node's, for "from": "node") to a pod's address and port and reports "reached" (the listener
accepted it), "refused" (an error: RST or ICMP unreachable) or "dropped" (no answer in time).
"""

import json
import os
import select
import socket
import sys
import time
from netns_common import (SetupError, abort as _abort, run, setns as _setns, unshare_net as _unshare_net, write_sysctl as _sysctl, connect_within, recverr)


def _run(argv, stage, data=None):
    # Setting up many pods in one batch can take a while on a loaded machine.
    return run(argv, stage, data, timeout=30)


class Case:
    def __init__(self, req):
        self.req = req
        self.tools = req['tools']
        self.timeout = float(req.get('connectTimeoutMs', 400)) / 1000.0
        self.accept_wait = float(req.get('acceptWaitMs', 250)) / 1000.0
        self.node = None
        self.pods = {}  # key -> (nsfd, ip)
        self.listeners = {}  # key -> [sockets]

    def build(self):
        ip = self.tools['ip']
        self.node = _unshare_net()
        # The node's own address on lo (this kernel may lack dummy devices): the source of the
        # node's connections to its pods, which route through the veths.
        node_cmds = ['link set lo up', 'addr add %s/32 dev lo' % self.req['nodeAddress']]
        _sysctl('ipv4/ip_forward', '1')
        pods = self.req['pods']
        for i, p in enumerate(pods):
            fd = _unshare_net()
            self.pods[p['key']] = (fd, p['ip'])
            mac = '02:00:00:00:%02x:%02x' % ((i + 1) >> 8, (i + 1) & 255)
            # Create the pair in the pod, move the peer into the node (distinct ifindexes: see probe.py).
            _run([ip, '-batch', '-'], 'pod-setup', '\n'.join([
                'link set lo up',
                'link add eth0 index 2 address %s type veth peer name %s index %d address ee:ee:ee:ee:ee:ee netns /proc/%d/fd/%d'
                % (mac, p['veth'], 10 + i, os.getpid(), self.node),
                'addr add %s/32 dev eth0' % p['ip'],
                'link set eth0 up',
                'neigh add 169.254.1.1 lladdr ee:ee:ee:ee:ee:ee dev eth0 nud permanent',
                'route add default via 169.254.1.1 dev eth0 onlink',
            ]) + '\n')
            node_cmds += ['link set %s up' % p['veth'], 'route add %s/32 dev %s' % (p['ip'], p['veth']),
                          'neigh add %s lladdr %s dev %s nud permanent' % (p['ip'], mac, p['veth'])]
        _setns(self.node)
        _run([ip, '-batch', '-'], 'node-setup', '\n'.join(node_cmds) + '\n')
        self._wait_carrier(ip, len(pods))
        if self.req.get('ipsets'):
            _run([self.tools.get('ipset') or 'ipset', 'restore'], 'ipsets', self.req['ipsets'])
        if self.req.get('rules4'):
            _run([self.tools['iptablesRestore']], 'rules4', self.req['rules4'])
        if self.req.get('nft'):
            _run([self.req['nftBinary'], '-f', '-'], 'nft', self.req['nft'])
        for key, (fd, addr) in self.pods.items():
            _setns(fd)
            socks = []
            for port in self.req['ports']:
                s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
                s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
                s.bind((addr, port))
                s.listen(64)
                s.setblocking(False)
                socks.append(s)
            self.listeners[key] = socks
        _setns(self.node)

    def _wait_carrier(self, ip, n):
        """Until every veth of the node has carrier (LOWER_UP): a veth's carrier can come up
        through a deferred linkwatch event, and a SYN sent before it is lost."""
        deadline = time.monotonic() + 5
        while True:
            out = _run([ip, '-o', 'link', 'show'], 'carrier').stdout.decode()
            up = sum(1 for l in out.splitlines() if ': veth' in l and 'LOWER_UP' in l and 'state UP' in l)
            if up >= n or time.monotonic() > deadline:
                return
            time.sleep(0.01)

    def probe(self, p):
        to_fd, to_ip = self.pods[p['to']]
        if p['from'] == 'node':
            _setns(self.node)
        else:
            _setns(self.pods[p['from']][0])
        s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        _setns(self.node)
        try:
            recverr(s, socket.AF_INET)
            failed = connect_within(s, to_ip, p['port'], self.timeout)
            if failed is not None:
                return failed
            listeners = [l for l in self.listeners[p['to']] if l.getsockname()[1] == p['port']]
            r, _, _ = select.select(listeners, [], [], self.accept_wait)
            for l in r:
                try:
                    c, peer = l.accept()
                except BlockingIOError:
                    continue
                _abort(c)
                return {'outcome': 'reached', 'peer': '%s:%d' % peer}
            return {'outcome': 'dropped', 'error': 'connected, but no listener accepted'}
        finally:
            _abort(s)


def main():
    req = json.load(sys.stdin)
    case = Case(req)
    t0 = time.monotonic()
    try:
        case.build()
    except SetupError as e:
        out = {'ok': False, 'stage': e.stage, 'status': e.status, 'stderr': e.stderr}
    except OSError as e:
        out = {'ok': False, 'stage': 'setup', 'status': -1, 'stderr': str(e)}
    else:
        t1 = time.monotonic()
        results = [case.probe(p) for p in req['probes']]
        out = {'ok': True, 'results': results, 'timing': {'setupMs': round((t1 - t0) * 1000, 1), 'probesMs': round((time.monotonic() - t1) * 1000, 1)}}
    sys.stdout.write(json.dumps(out))
    sys.stdout.flush()


if __name__ == '__main__':
    main()
