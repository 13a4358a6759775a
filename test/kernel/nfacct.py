#!/usr/bin/env python3
"""Creates nfacct accounting objects in the current network namespace (what kube-proxy does
through netlink before it writes `-m nfacct --nfacct-name NAME` rules): one per argument.
NFNL_SUBSYS_ACCT (7), NFNL_MSG_ACCT_NEW (0), attribute NFACCT_NAME (1). Exits non-zero with the
kernel's errno when a request fails."""
import socket
import struct
import sys

NETLINK_NETFILTER = 12
NLM_F_REQUEST, NLM_F_ACK, NLM_F_CREATE = 1, 4, 0x400


def attr(kind, data):
    length = 4 + len(data)
    return struct.pack('=HH', length, kind) + data + b'\0' * ((4 - length % 4) % 4)


def main():
    s = socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, NETLINK_NETFILTER)
    s.bind((0, 0))
    for seq, name in enumerate(sys.argv[1:], 1):
        payload = struct.pack('=BBH', socket.AF_UNSPEC, 0, 0) + attr(1, name.encode() + b'\0')
        header = struct.pack('=IHHII', 16 + len(payload), (7 << 8) | 0, NLM_F_REQUEST | NLM_F_ACK | NLM_F_CREATE, seq, 0)
        s.send(header + payload)
        reply = s.recv(4096)
        error = struct.unpack('=i', reply[16:20])[0]
        if error != 0:
            sys.stderr.write('nfacct %s: errno %d\n' % (name, -error))
            return 1
    return 0


if __name__ == '__main__':
    sys.exit(main())
