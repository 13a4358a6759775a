# Creates nfacct accounting objects in the current network namespace, as `nfacct add NAME` does
# (the nfacct tool is not needed): one NFNL_MSG_ACCT_NEW request per name on a NETLINK_NETFILTER
# socket, each acknowledged. Exits non-zero with the errno when the kernel refuses one.
import socket
import struct
import sys

NETLINK_NETFILTER = 12
NFNL_SUBSYS_ACCT = 7
NFNL_MSG_ACCT_NEW = 0
NFACCT_NAME = 1
NLM_F_REQUEST, NLM_F_ACK, NLM_F_CREATE = 0x1, 0x4, 0x400


def add(sock, seq, name):
    value = name.encode() + b'\0'
    attr = struct.pack('=HH', 4 + len(value), NFACCT_NAME) + value
    attr += b'\0' * (-len(attr) % 4)
    body = struct.pack('=BBH', socket.AF_UNSPEC, 0, 0) + attr
    header = struct.pack('=IHHII', 16 + len(body), (NFNL_SUBSYS_ACCT << 8) | NFNL_MSG_ACCT_NEW, NLM_F_REQUEST | NLM_F_ACK | NLM_F_CREATE, seq, 0)
    sock.send(header + body)
    reply = sock.recv(4096)
    err = struct.unpack('=i', reply[16:20])[0]
    if err != 0:
        sys.stderr.write(f'nfacct add {name}: errno {-err}\n')
        sys.exit(1)


def main():
    sock = socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, NETLINK_NETFILTER)
    sock.bind((0, 0))
    for seq, name in enumerate(sys.argv[1:], 1):
        add(sock, seq, name)


main()
