"""Source ports and TIME_WAIT in a real namespace, for ports.differential.test.ts.

Run inside `unshare --net` as root: python3 ports.py CASE. Prints one JSON object.
  fill:   ip_local_port_range 40000 40002; five connect() to a listener, none closed
  fresh:  one connect() with the default range
  reuse:  range 40000 40001, REDIRECT 127.0.0.1:80 → 8080; two connections closed by the client,
          a third at once, a fourth in a later second (tcp_tw_reuse = 2 lets loopback reuse)
  noreuse: the same to 10.0.0.2, a local address that is not loopback (no reuse)
  snat:   SNAT to 127.0.0.1:50000-50001 for connections to 127.0.0.1:8080; three attempts
          (1 s timeout each), the source port the listener sees
"""
import errno, json, socket, subprocess, sys, time

case = sys.argv[1]
subprocess.run(['ip', 'link', 'set', 'lo', 'up'], check=True)
out = {'range': open('/proc/sys/net/ipv4/ip_local_port_range').read().split(), 'tw_reuse': int(open('/proc/sys/net/ipv4/tcp_tw_reuse').read())}

def set_range(r):
    open('/proc/sys/net/ipv4/ip_local_port_range', 'w').write(r)

def listener(addr, port):
    l = socket.socket()
    l.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    l.bind((addr, port))
    l.listen(64)
    return l

def attempt(dst, l, close):
    s = socket.socket()
    try:
        s.connect(dst)
    except OSError as e:
        s.close()
        return {'error': errno.errorcode[e.errno]}
    port = s.getsockname()[1]
    c, peer = l.accept()
    r = {'port': port, 'accepted': c.getsockname()[1]}
    if close:
        s.close()          # the client closes first: it ends in TIME_WAIT
        c.recv(1)          # EOF
        c.close()          # the server's FIN; the client's last ACK follows
        time.sleep(0.05)
    else:
        r['keep'] = (s, c)
    return r

def strip(rs):
    return [{k: v for k, v in r.items() if k != 'keep'} for r in rs]

if case == 'fill':
    set_range('40000 40002')
    l = listener('127.0.0.1', 8080)
    out['results'] = strip([attempt(('127.0.0.1', 8080), l, False) for _ in range(5)])
elif case == 'fresh':
    l = listener('127.0.0.1', 8080)
    out['results'] = strip([attempt(('127.0.0.1', 8080), l, False)])
elif case in ('reuse', 'noreuse'):
    if case == 'noreuse':
        subprocess.run(['ip', 'addr', 'add', '10.0.0.2/32', 'dev', 'lo'], check=True)
    addr = '127.0.0.1' if case == 'reuse' else '10.0.0.2'
    subprocess.run(['iptables-restore'], input=f'*nat\n-A OUTPUT -d {addr}/32 -p tcp -m tcp --dport 80 -j REDIRECT --to-ports 8080\nCOMMIT\n', text=True, check=True)
    set_range('40000 40001')
    l = listener('0.0.0.0', 8080)
    # Loopback reuse compares the kernel's monotonic seconds (ktime_get_seconds), so the timing
    # below follows CLOCK_MONOTONIC, not the wall clock. Start early in a second, so that the
    # closes and the third attempt share it.
    while time.monotonic() % 1 > 0.3:
        time.sleep(0.02)
    first = int(time.monotonic())
    rs = [attempt((addr, 80), l, True) for _ in range(2)]
    # The third attempt must fall in the same second as the two closes (loopback reuse waits for
    # the next second); a loaded machine can miss that window, which the caller then retries.
    out['window'] = int(time.monotonic()) == first
    rs.append(attempt((addr, 80), l, True))
    out['window'] = out['window'] and int(time.monotonic()) == first
    t = time.monotonic()
    time.sleep(1 - t % 1 + 0.4)
    # The fourth attempt must come in a later second than the closes.
    out['window'] = out['window'] and int(time.monotonic()) > first
    rs.append(attempt((addr, 80), l, False))
    out['results'] = strip(rs)
elif case == 'snat':
    subprocess.run(['iptables-restore'], input='*nat\n-A POSTROUTING -d 127.0.0.1/32 -p tcp -m tcp --dport 8080 -j SNAT --to-source 127.0.0.1:50000-50001\nCOMMIT\n', text=True, check=True)
    l = listener('127.0.0.1', 8080)
    l.settimeout(1.0)
    rs = []
    keep = []
    for _ in range(3):
        s = socket.socket()
        s.settimeout(1.0)
        try:
            s.connect(('127.0.0.1', 8080))
            c, peer = l.accept()
            keep.append((s, c))
            rs.append({'peer': peer[1]})
        except socket.timeout:
            rs.append({'error': 'timeout'})
    out['results'] = rs
print(json.dumps(out))
