#!/usr/bin/env python3
"""Real-kernel side of the cluster harness (test/kernel/cluster-harness.ts).

One process per case: it reads one JSON request on stdin and writes one JSON reply on stdout.

It builds every namespace of a cluster with unshare(CLONE_NEWNET) (anonymous: nothing outlives the
process): the nodes, the pods, the outside router, a switch joining the nodes' eth0s and the
router's lan0 (a plain bridge, bridge netfilter off), and the world behind the router, whose
nat PREROUTING REDIRECTs every TCP connection to one catch-all listener that reads
SO_ORIGINAL_DST. Links are veth pairs made between namespaces; each namespace is then set up with
its sysctls, `ip -batch` lines (bridges, ports, addresses, routes) and rules (iptables-restore,
ip6tables-restore, nft -f). Listeners are opened in the pods and nodes, then the probes run in
order: a socket in the probe's namespace connects, and whichever listener accepts (in whichever
namespace) reports the address it accepted on, SO_ORIGINAL_DST and the peer it saw.

Request: {"mode": "cluster", "tools": {...}, "namespaces": [{"name", "sysctls": {path: value},
"ip": [lines], "ip6": [lines], "ipsets" (ipset restore input), "rules4": [texts], "rules6": [texts], "nft",
"listeners": [{"port", "proto"}]}],
"links": [{"a", "aName", "aIndex", "b", "bName", "bIndex"}], "probes": [{"from", "dst", "uid",
"gid"}], "connectTimeoutMs", "debug": [[namespace, argv...]]}.
"""

import errno
import json
import os
import select
import socket
import struct
import subprocess
import sys
import time
from netns_common import (SetupError, abort as _abort, fmt as _fmt, original_dst as _original_dst, parse_hostport as _parse_hostport, run as _run, setns as _setns, unshare_net as _unshare_net, connect_within, recverr)

WORLD_PORT = 9
IP_RECVORIGDSTADDR = 20  # linux/in.h (IP_ORIGDSTADDR)
IPV6_RECVORIGDSTADDR = 74  # linux/in6.h (IPV6_ORIGDSTADDR)


class Cluster:
    def __init__(self, req):
        self.req = req
        self.tools = req['tools']
        self.timeout = float(req.get('connectTimeoutMs', 400)) / 1000.0
        self.accept_wait = float(req.get('acceptWaitMs', 250)) / 1000.0
        self.fds = {}
        self.listeners = []  # (sock, family, namespace)
        self.udp_listeners = []

    def build(self):
        ip = self.tools['ip']
        names = [n['name'] for n in self.req['namespaces']]
        for name in names:
            self.fds[name] = _unshare_net()
            for k in ('all', 'default'):
                with open('/proc/sys/net/ipv6/conf/%s/accept_dad' % k, 'w') as f:
                    f.write('0')
        pid = os.getpid()
        # Links: made in namespace a, the peer moved into b.
        by_a = {}
        for l in self.req['links']:
            by_a.setdefault(l['a'], []).append(l)
        for a, links in by_a.items():
            _setns(self.fds[a])
            lines = ['link add %s index %d type veth peer name %s index %d netns /proc/%d/fd/%d'
                     % (l['aName'], l['aIndex'], l['bName'], l['bIndex'], pid, self.fds[l['b']]) for l in links]
            _run([ip, '-batch', '-'], 'links in ' + a, '\n'.join(lines) + '\n')
        for n in self.req['namespaces']:
            _setns(self.fds[n['name']])
            for path, value in n.get('sysctls', {}).items():
                with open('/proc/sys/net/' + path, 'w') as f:
                    f.write(str(value))
            if n.get('ip'):
                _run([ip, '-batch', '-'], 'ip in ' + n['name'], '\n'.join(n['ip']) + '\n')
            if n.get('ip6'):
                _run([ip, '-6', '-batch', '-'], 'ip -6 in ' + n['name'], '\n'.join(n['ip6']) + '\n')
            # Sysctls of devices made by the ip lines (bridge ports, veths).
            for path, value in n.get('lateSysctls', {}).items():
                with open('/proc/sys/net/' + path, 'w') as f:
                    f.write(str(value))
            # The sets the rules name exist before the rules load.
            if n.get('ipsets'):
                _run([self.tools['ipset'], 'restore'], 'ipsets in ' + n['name'], n['ipsets'])
            if n.get('nfacct'):
                _run([sys.executable, self.tools['nfacctPy']] + n['nfacct'], 'nfacct in ' + n['name'])
            # Each dump on top of the ones before, as the components that write them apply them.
            for i, text in enumerate(n.get('rules4', [])):
                _run([self.tools['iptablesRestore'], '--noflush'], 'rules4[%d] in %s' % (i, n['name']), text)
            for i, text in enumerate(n.get('rules6', [])):
                _run([self.tools['ip6tablesRestore'], '--noflush'], 'rules6[%d] in %s' % (i, n['name']), text)
            if n.get('nft'):
                _run([self.tools['nft'], '-f', '-'], 'nft in ' + n['name'], n['nft'])
            for l in n.get('listeners', []):
                udp = l.get('proto') == 'udp'
                for fam, addr in ((socket.AF_INET, '0.0.0.0'), (socket.AF_INET6, '::')):
                    s = socket.socket(fam, socket.SOCK_DGRAM if udp else socket.SOCK_STREAM)
                    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
                    if fam == socket.AF_INET6:
                        s.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 1)
                    if udp:
                        # The address and port each datagram was delivered to (after any NAT).
                        if fam == socket.AF_INET6:
                            s.setsockopt(socket.IPPROTO_IPV6, IPV6_RECVORIGDSTADDR, 1)
                        else:
                            s.setsockopt(socket.IPPROTO_IP, IP_RECVORIGDSTADDR, 1)
                    s.bind((addr, l['port']))
                    if not udp:
                        s.listen(64)
                    s.setblocking(False)
                    (self.udp_listeners if udp else self.listeners).append((s, fam, n['name']))

    def probe_udp(self, p):
        """One datagram: a listener that receives it, an ICMP error on the client (ECONNREFUSED), or nothing."""
        fam, host, port = _parse_hostport(p['dst'])
        _setns(self.fds[p['from']])
        s = socket.socket(fam, socket.SOCK_DGRAM)
        result = {'outcome': None}
        try:
            s.setblocking(False)
            try:
                s.connect((host, port))
            except OSError as e:
                result.update(outcome='refused', error=errno.errorcode.get(e.errno, str(e)))
                return result
            a = s.getsockname()
            result['client'] = _fmt(fam, a[0], a[1])
            s.send(b'x')
            by_fd = {l.fileno(): (l, f, ns) for l, f, ns in self.udp_listeners}
            deadline = time.monotonic() + self.timeout
            while True:
                left = deadline - time.monotonic()
                if left <= 0:
                    result.update(outcome='dropped', error='timeout')
                    return result
                r, _, _ = select.select(list(by_fd) + [s.fileno()], [], [], left)
                if s.fileno() in r:
                    try:
                        s.recv(64)
                    except OSError as e:
                        result.update(outcome='refused', error=errno.errorcode.get(e.errno, str(e)))
                        return result
                for fd in r:
                    if fd not in by_fd:
                        continue
                    l, lfam, ns = by_fd[fd]
                    try:
                        data, anc, _, peer = l.recvmsg(64, 256)
                    except BlockingIOError:
                        continue
                    local = None
                    for level, kind, raw in anc:
                        if lfam == socket.AF_INET and kind == IP_RECVORIGDSTADDR:
                            local = (socket.inet_ntop(socket.AF_INET, raw[4:8]), struct.unpack('!H', raw[2:4])[0])
                        elif lfam == socket.AF_INET6 and kind == IPV6_RECVORIGDSTADDR:
                            local = (socket.inet_ntop(socket.AF_INET6, raw[8:24]), struct.unpack('!H', raw[2:4])[0])
                    result.update(outcome='local', namespace=ns, peer=_fmt(lfam, peer[0], peer[1]),
                                  address=local[0] if local else None, port=local[1] if local else None, originalDestination=None)
                    return result
        finally:
            s.close()

    def probe(self, p):
        if p.get('proto') == 'udp':
            return self.probe_udp(p)
        fam, host, port = _parse_hostport(p['dst'])
        _setns(self.fds[p['from']])
        uid, gid = p.get('uid', 0), p.get('gid', 0)
        os.setresgid(-1, gid, -1)
        os.setresuid(-1, uid, -1)
        try:
            s = socket.socket(fam, socket.SOCK_STREAM)
        finally:
            os.setresuid(-1, 0, -1)
            os.setresgid(-1, 0, -1)
        result = {'outcome': None}
        try:
            recverr(s, fam)
            failed = connect_within(s, host, port, self.timeout)
            if failed is not None:
                result.update(failed)
                return result
            a = s.getsockname()
            result['client'] = _fmt(fam, a[0], a[1])
            return self._who_accepted(result)
        finally:
            _abort(s)

    def _who_accepted(self, result):
        by_fd = {l.fileno(): (l, f, ns) for l, f, ns in self.listeners}
        r, _, _ = select.select(list(by_fd), [], [], self.accept_wait)
        for fd in r:
            l, fam, ns = by_fd[fd]
            try:
                conn, peer = l.accept()
            except BlockingIOError:
                continue
            try:
                local = conn.getsockname()
                result.update(namespace=ns, peer=_fmt(fam, peer[0], peer[1]), originalDestination=_original_dst(conn, fam))
                if ns == 'world':
                    result['outcome'] = 'remote'
                else:
                    result.update(outcome='local', address=local[0], port=local[1])
            finally:
                _abort(conn)
            self._drain()
            return result
        result.update(outcome='dropped', error='connected, but no listener accepted')
        return result

    def _drain(self):
        for l, _, _ in self.listeners:
            while True:
                try:
                    c, _ = l.accept()
                except (BlockingIOError, OSError):
                    break
                _abort(c)

    def debug(self, commands):
        out = []
        for where, *argv in commands:
            _setns(self.fds[where])
            r = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=20)
            out.append({'where': where, 'argv': argv, 'output': r.stdout.decode(errors='replace')})
        return out


def main():
    req = json.load(sys.stdin)
    c = Cluster(req)
    t0 = time.monotonic()
    try:
        c.build()
    except SetupError as e:
        out = {'ok': False, 'stage': e.stage, 'status': e.status, 'stderr': e.stderr}
        sys.stdout.write(json.dumps(out))
        return
    except OSError as e:
        sys.stdout.write(json.dumps({'ok': False, 'stage': 'setup', 'status': -1, 'stderr': str(e)}))
        return
    t1 = time.monotonic()
    results = [c.probe(p) for p in req['probes']]
    t2 = time.monotonic()
    out = {'ok': True, 'results': results, 'timing': {'setupMs': round((t1 - t0) * 1000, 1), 'probesMs': round((t2 - t1) * 1000, 1)}}
    if req.get('debug'):
        out['debug'] = c.debug(req['debug'])
    sys.stdout.write(json.dumps(out))
    sys.stdout.flush()


if __name__ == '__main__':
    main()
