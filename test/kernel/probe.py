#!/usr/bin/env python3
"""Real-kernel side of the connect harness (test/kernel/harness.ts).

One process per case. It reads one JSON request on stdin and writes one JSON reply on stdout.

It builds two anonymous network namespaces with unshare(CLONE_NEWNET), so nothing outlives the
process (no named namespace to delete, nothing to leak when it is killed):

  pod    lo 127.0.0.1/8 ::1, eth0 10.0.0.2/24 fd00::2/64, default routes via 10.0.0.1 / fd00::1
  world  eth0 10.0.0.1/24 fd00::1/64 (the veth peer), the remote probes' source addresses on lo,
         and nat PREROUTING -p tcp -j REDIRECT to one catch-all listener, which reads
         SO_ORIGINAL_DST to learn the destination the packet had when it left the pod.

The pod's rules are loaded with iptables-restore / ip6tables-restore, then the listeners are opened,
then the probes run in order. The process moves itself between the namespaces with setns(); a
socket stays in the namespace it was created in, so one single-threaded process can hold the pod's
listeners, the world's listener and the probing sockets at the same time. A probe's socket is
created with the probe's uid/gid as effective (hence fs) ids: xt_owner reads the credentials of the
socket's file, fixed at creation.

Modes: {"mode": "connect", ...} (see harness.ts KernelCase) and {"mode": "selftest"}. A connect
request may carry "debug": [["pod" or "world", argv...], ...]: commands run in those namespaces
after the probes, their output returned under "debug" (for investigating a case by hand).
"""

import errno
import json
import os
import select
import socket
import subprocess
import sys
import time
from netns_common import (SetupError, abort as _abort, fmt as _fmt, original_dst as _original_dst, parse_hostport as _parse_hostport, run as _run, setns as _setns, unshare_net as _unshare_net, write_sysctl as _write_sysctl, connect_within, recverr)

SO_MARK = 36  # <asm-generic/socket.h>
IP_TRANSPARENT = 19  # linux/in.h
IPV6_TRANSPARENT = 75  # linux/in6.h
WORLD_PORT = 9  # the world's catch-all listener, after its REDIRECT
IP_TRANSPARENT = 19  # linux/in.h
IPV6_TRANSPARENT = 75  # linux/in6.h


def _family_of(addr):
    return socket.AF_INET6 if ':' in addr else socket.AF_INET


def _transparent(sock, family):
    if family == socket.AF_INET6:
        sock.setsockopt(socket.IPPROTO_IPV6, IPV6_TRANSPARENT, 1)
    else:
        sock.setsockopt(socket.IPPROTO_IP, IP_TRANSPARENT, 1)


class Creds:
    """Temporarily take on a uid/gid as effective ids (kept as saved ids to switch back)."""

    def __init__(self, uid, gid, groups):
        self.uid, self.gid, self.groups = uid, gid, groups

    def __enter__(self):
        if self.uid is None:
            return self
        os.setgroups(self.groups)
        os.setresgid(-1, self.gid, -1)
        os.setresuid(-1, self.uid, -1)
        return self

    def __exit__(self, *exc):
        if self.uid is None:
            return False
        os.setresuid(-1, 0, -1)
        os.setresgid(-1, 0, -1)
        os.setgroups([])
        return False


class Case:
    def __init__(self, req):
        self.req = req
        self.tools = req['tools']
        self.timeout = float(req.get('connectTimeoutMs', 400)) / 1000.0
        self.accept_wait = float(req.get('acceptWaitMs', 250)) / 1000.0
        self.pod_listeners = []  # (sock, family)
        # Both ends of the connections of probes with "keep": open until the case ends.
        self.kept = []
        self.world_listeners = []
        self.pod = self.world = None

    # --- topology -------------------------------------------------------------------------

    def build(self):
        ip = self.tools['ip']
        self.pod = _unshare_net()
        self._no_dad()
        self.world = _unshare_net()
        self._no_dad()
        remote_srcs = sorted({p['src'] for p in self.req['probes'] if p['from'] == 'remote'} - {'10.0.0.1', 'fd00::1'})
        world_cmds = [
            'link set lo up',
            'addr add 10.0.0.1/24 dev eth0',
            'addr add fd00::1/64 dev eth0 nodad',
            'link set eth0 up',
        ]
        # Routes of the world toward the pod (TPROXY of destinations the pod does not own).
        for r in self.req.get('worldRoutes', []):
            world_cmds.append('route add ' + r)
        # Optional: more world configuration, run after its own setup (a route to the pod for an
        # address it does not own, routes back to extra pod addresses).
        world_cmds_extra = list(self.req.get('worldBatch') or [])
        for a in remote_srcs:
            if ':' in a:
                world_cmds.append('addr add %s/128 dev lo nodad' % a)
            else:
                world_cmds.append('addr add %s/32 dev lo' % a)
        _setns(self.pod)
        _run([ip, '-batch', '-'], 'pod-setup', '\n'.join([
            'link set lo up',
            # Distinct ifindexes: a veth whose peer has its own ifindex gets no urgent linkwatch
            # event, and then carrier (and the qdisc) come up to a second late.
            'link add eth0 index 2 type veth peer name eth0 index 3 netns /proc/%d/fd/%d'
            % (os.getpid(), self.world),
            'addr add 10.0.0.2/24 dev eth0',
            'addr add fd00::2/64 dev eth0 nodad',
            'link set eth0 up',
            'route add default via 10.0.0.1 dev eth0',
            'route add default via fd00::1 dev eth0',
        ]) + '\n')
        # The world: its addresses, and every TCP connection to it lands on WORLD_PORT.
        _setns(self.world)
        catch_all = ('*nat\n:PREROUTING ACCEPT [0:0]\n'
                     '-A PREROUTING -p tcp -j REDIRECT --to-ports %d\nCOMMIT\n' % WORLD_PORT)
        procs = [
            ('world-setup', [ip, '-batch', '-'], '\n'.join(world_cmds + world_cmds_extra) + '\n'),
            ('world-rules4', [self.tools['iptablesRestore']], catch_all),
            ('world-rules6', [self.tools['ip6tablesRestore']], catch_all),
        ]
        self._run_parallel(procs)
        for fam, addr in ((socket.AF_INET, '0.0.0.0'), (socket.AF_INET6, '::')):
            self.world_listeners.append((self._listen(fam, addr, WORLD_PORT, None), fam))
        # The pod's rules, as its init container would load them.
        _setns(self.pod)
        # Optional: ipsets the rules name (ipset restore input), and policy routing (ip -batch).
        if self.req.get('ipsets'):
            _run([self.tools.get('ipset') or 'ipset', 'restore'], 'ipsets', self.req['ipsets'])
        if self.req.get('ipBatch'):
            # `ip -batch` takes no options per line: lines starting with `-6 ` go to `ip -6 -batch`.
            lines = self.req['ipBatch']
            plain = [l for l in lines if not l.startswith('-6 ')]
            six = [l[3:] for l in lines if l.startswith('-6 ')]
            if plain:
                _run([ip, '-batch', '-'], 'ip-batch', '\n'.join(plain) + '\n')
            if six:
                _run([ip, '-6', '-batch', '-'], 'ip-batch', '\n'.join(six) + '\n')
        procs = []
        if self.req.get('rules4'):
            procs.append(('rules4', [self.tools['iptablesRestore']], self.req['rules4']))
        if self.req.get('rules6'):
            procs.append(('rules6', [self.tools['ip6tablesRestore']], self.req['rules6']))
        self._run_parallel(procs)
        # Native nftables tables, after the iptables ones (the order Netns registers them in).
        if self.req.get('nft'):
            self._run_parallel([('nft', [self.req['nftBinary'], '-f', '-'], self.req['nft'])])
        for l in self.req.get('listeners', []):
            addrs = [l['address']] if l.get('address') else ['0.0.0.0', '::']
            for a in addrs:
                fam = _family_of(a)
                self.pod_listeners.append((self._listen(fam, a, l['port'], l.get('uid'), l.get('transparent', False)), fam))

    def _no_dad(self):
        for k in ('all', 'default'):
            _write_sysctl('ipv6/conf/%s/accept_dad' % k, '0')

    def _run_parallel(self, procs):
        running = []
        for stage, argv, data in procs:
            p = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                 stderr=subprocess.PIPE)
            running.append((stage, argv, data, p))
        errors = []
        for stage, argv, data, p in running:
            try:
                _, err = p.communicate(data.encode(), timeout=20)
            except subprocess.TimeoutExpired:
                p.kill()
                p.communicate()
                errors.append(SetupError(stage, -1, 'timeout: ' + ' '.join(argv)))
                continue
            if p.returncode != 0:
                errors.append(SetupError(stage, p.returncode, err.decode(errors='replace')))
        if errors:
            raise errors[0]

    def _listen(self, family, addr, port, uid, transparent=False):
        with Creds(uid, uid, []):
            s = socket.socket(family, socket.SOCK_STREAM)
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        if transparent:
            _transparent(s, family)
        if family == socket.AF_INET6:
            s.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 1)
        if transparent:
            # IP_TRANSPARENT (needs CAP_NET_ADMIN): TPROXY may hand it connections to any address.
            if family == socket.AF_INET6:
                s.setsockopt(socket.IPPROTO_IPV6, IPV6_TRANSPARENT, 1)
            else:
                s.setsockopt(socket.IPPROTO_IP, IP_TRANSPARENT, 1)
        s.bind((addr, port))
        s.listen(64)
        s.setblocking(False)
        return s

    # --- probes ---------------------------------------------------------------------------

    def probe(self, p):
        if p.get('waitMs'):
            # Time passes before this probe (rate estimators tick, timers run).
            time.sleep(float(p['waitMs']) / 1000.0)
        fam, host, port = _parse_hostport(p['dst'])
        if p['from'] == 'local':
            _setns(self.pod)
            uid = p.get('uid', 0)
            gid = p.get('gid', uid)
            with Creds(uid, gid, list(p.get('groups', []))):
                s = socket.socket(fam, socket.SOCK_STREAM)
            if p.get('mark') is not None:
                # SO_MARK (needs CAP_NET_ADMIN, which root keeps here).
                s.setsockopt(socket.SOL_SOCKET, SO_MARK, int(p['mark']))
            if p.get('transparent'):
                _transparent(s, fam)
            bind_addr = p.get('src') or ('::' if fam == socket.AF_INET6 else '0.0.0.0')
        else:
            _setns(self.world)
            s = socket.socket(fam, socket.SOCK_STREAM)
            bind_addr = p['src']
            _setns(self.pod)
        keep = bool(p.get('keep'))
        try:
            return self._connect(s, fam, bind_addr, p.get('sport', 0), host, port, keep)
        finally:
            if keep:
                self.kept.append(s)
            else:
                _abort(s)

    def _connect(self, s, fam, bind_addr, sport, host, port, keep=False):
        result = {'outcome': None, 'address': None, 'port': None, 'originalDestination': None}
        try:
            s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            recverr(s, fam)
            s.bind((bind_addr, sport or 0))
        except OSError as e:
            result.update(outcome='refused', error='bind: ' + errno.errorcode.get(e.errno, str(e)))
            return result
        failed = connect_within(s, host, port, self.timeout)
        if failed is not None:
            result.update(failed)
            return result
        result['source'] = self._sockname(s)
        return self._who_accepted(result, keep)

    def _sockname(self, s):
        a = s.getsockname()
        return _fmt(s.family, a[0], a[1])

    def _who_accepted(self, result, keep=False):
        listeners = [(l, f, 'local') for l, f in self.pod_listeners]
        listeners += [(l, f, 'remote') for l, f in self.world_listeners]
        by_fd = {l.fileno(): (l, f, kind) for l, f, kind in listeners}
        r, _, _ = select.select(list(by_fd), [], [], self.accept_wait)
        for fd in r:
            l, fam, kind = by_fd[fd]
            try:
                conn, peer = l.accept()
            except BlockingIOError:
                continue
            try:
                odst = _original_dst(conn, fam)
                result['peer'] = _fmt(fam, peer[0], peer[1])
                if kind == 'local':
                    local = conn.getsockname()
                    result.update(outcome='local', address=local[0], port=local[1],
                                  originalDestination=odst)
                else:
                    if odst is None:
                        result.update(outcome='remote', error='world: no SO_ORIGINAL_DST')
                    else:
                        _, h, pt = _parse_hostport(odst)
                        result.update(outcome='remote', address=h, port=pt)
            finally:
                if keep:
                    self.kept.append(conn)
                else:
                    _abort(conn)
            self._drain()
            return result
        # connect() completed but no listener finished the handshake (its final ACK was lost).
        result.update(outcome='dropped', error='connected, but no listener accepted')
        return result

    def debug(self, commands):
        """Run diagnostic commands in the namespaces after the probes: [["pod"|"world", argv...]]."""
        out = []
        for where, *argv in commands:
            _setns(self.pod if where == 'pod' else self.world)
            r = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=20)
            out.append({'where': where, 'argv': argv, 'output': r.stdout.decode(errors='replace')})
        _setns(self.pod)
        return out

    def _drain(self):
        """Accept and drop anything else that is queued (there should be nothing)."""
        for l, _ in self.pod_listeners + self.world_listeners:
            while True:
                try:
                    c, _ = l.accept()
                except (BlockingIOError, OSError):
                    break
                _abort(c)


def do_connect(req):
    case = Case(req)
    t0 = time.monotonic()
    try:
        case.build()
    except SetupError as e:
        return {'ok': False, 'stage': e.stage, 'status': e.status, 'stderr': e.stderr}
    except OSError as e:
        return {'ok': False, 'stage': 'listen', 'status': -1, 'stderr': str(e)}
    t1 = time.monotonic()
    results = [case.probe(p) for p in req['probes']]
    t2 = time.monotonic()
    out = {'ok': True, 'results': results,
           'timing': {'setupMs': round((t1 - t0) * 1000, 1), 'probesMs': round((t2 - t1) * 1000, 1)}}
    if req.get('debug'):
        out['debug'] = case.debug(req['debug'])
    return out


def do_selftest(req):
    req = dict(req)
    req.update(rules4='', rules6='', listeners=[{'port': 8080}],
               probes=[{'from': 'local', 'uid': 0, 'dst': '10.0.0.2:8080'},
                       {'from': 'local', 'uid': 0, 'dst': '[fd00::2]:8080'}])
    out = do_connect(req)
    if not out['ok']:
        return out
    if [r['outcome'] for r in out['results']] != ['local', 'local']:
        return {'ok': False, 'stage': 'selftest', 'status': -1, 'stderr': json.dumps(out['results'])}
    return {'ok': True}


def main():
    req = json.load(sys.stdin)
    mode = req.get('mode')
    if mode == 'connect':
        out = do_connect(req)
    elif mode == 'selftest':
        out = do_selftest(req)
    else:
        out = {'ok': False, 'stage': 'request', 'status': -1, 'stderr': 'unknown mode %r' % mode}
    sys.stdout.write(json.dumps(out))
    sys.stdout.flush()


if __name__ == '__main__':
    main()
