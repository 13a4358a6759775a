# What the kernel suites' socket scripts (probe.py, cluster-probe.py, netpol-node.py) share:
# entering network namespaces, running the tools that load rules, reading SO_ORIGINAL_DST, and one
# nonblocking connect() with a deadline. Imported from the scripts' own folder (python puts a
# script's directory first on sys.path).
import ctypes
import errno
import os
import select
import socket
import struct
import subprocess
import time

CLONE_NEWNET = 0x40000000
SO_ORIGINAL_DST = 80  # linux/netfilter_ipv4.h; IP6T_SO_ORIGINAL_DST has the same number
IP_RECVERR = 11  # linux/in.h
IPV6_RECVERR = 25  # linux/in6.h

_libc = ctypes.CDLL(None, use_errno=True)


def unshare_net():
    """A new network namespace for this process; returns a descriptor to come back to it."""
    if _libc.unshare(CLONE_NEWNET) != 0:
        e = ctypes.get_errno()
        raise OSError(e, 'unshare(CLONE_NEWNET): ' + os.strerror(e))
    return os.open('/proc/self/ns/net', os.O_RDONLY | os.O_CLOEXEC)


def setns(fd):
    if _libc.setns(fd, CLONE_NEWNET) != 0:
        e = ctypes.get_errno()
        raise OSError(e, 'setns: ' + os.strerror(e))


def write_sysctl(path, value):
    # /proc/sys/net resolves against the opener's network namespace.
    with open('/proc/sys/net/' + path, 'w') as f:
        f.write(value)


class SetupError(Exception):
    def __init__(self, stage, status, stderr):
        super().__init__(stage)
        self.stage, self.status, self.stderr = stage, status, stderr


def run(argv, stage, data=None, timeout=20):
    """Runs a tool in the current namespace; a failure or a timeout is a SetupError of `stage`."""
    try:
        r = subprocess.run(argv, input=(data or '').encode(), stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, timeout=timeout)
    except subprocess.TimeoutExpired:
        raise SetupError(stage, -1, 'timeout: ' + ' '.join(argv))
    if r.returncode != 0:
        raise SetupError(stage, r.returncode, r.stderr.decode(errors='replace'))
    return r


def fmt(family, host, port):
    return ('[%s]:%d' if family == socket.AF_INET6 else '%s:%d') % (host, port)


def parse_hostport(s):
    """'10.0.0.2:80' or '[fd00::2]:80' -> (family, host, port)."""
    if s.startswith('['):
        host, _, port = s[1:].partition(']:')
        return socket.AF_INET6, host, int(port)
    host, _, port = s.rpartition(':')
    return socket.AF_INET, host, int(port)


def original_dst(sock, family):
    try:
        if family == socket.AF_INET6:
            raw = sock.getsockopt(socket.IPPROTO_IPV6, SO_ORIGINAL_DST, 28)
            return fmt(family, socket.inet_ntop(socket.AF_INET6, raw[8:24]), struct.unpack('!H', raw[2:4])[0])
        raw = sock.getsockopt(socket.IPPROTO_IP, SO_ORIGINAL_DST, 16)
        return fmt(family, socket.inet_ntop(socket.AF_INET, raw[4:8]), struct.unpack('!H', raw[2:4])[0])
    except OSError:
        return None


def abort(sock):
    """Close without FIN/TIME_WAIT, so a later probe can reuse the same 4-tuple."""
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack('ii', 1, 0))
    except OSError:
        pass
    sock.close()


def recverr(sock, family):
    # IPv6 TCP only records the first ICMPv6 error of a SYN_SENT socket as a soft error and fails
    # connect() at the SYN retransmission, a second later; with IPV6_RECVERR (IP_RECVERR) it fails
    # at once. Same outcome (refused), without waiting for the retransmission.
    if family == socket.AF_INET6:
        sock.setsockopt(socket.IPPROTO_IPV6, IPV6_RECVERR, 1)
    else:
        sock.setsockopt(socket.IPPROTO_IP, IP_RECVERR, 1)


def connect_within(sock, host, port, timeout):
    """A nonblocking connect() waited on until `timeout` seconds: None when it connected, else
    {'outcome': 'refused', 'error': errno name} or {'outcome': 'dropped', 'error': 'timeout'}."""
    sock.setblocking(False)
    err = sock.connect_ex((host, port))
    if err not in (0, errno.EINPROGRESS):
        return {'outcome': 'refused', 'error': errno.errorcode.get(err, str(err))}
    deadline = time.monotonic() + timeout
    while True:
        left = deadline - time.monotonic()
        _, w, _ = select.select([], [sock], [], max(left, 0))
        if w:
            err = sock.getsockopt(socket.SOL_SOCKET, socket.SO_ERROR)
            break
        if left <= 0:
            return {'outcome': 'dropped', 'error': 'timeout'}
    if err != 0:
        return {'outcome': 'refused', 'error': errno.errorcode.get(err, str(err))}
    return None
