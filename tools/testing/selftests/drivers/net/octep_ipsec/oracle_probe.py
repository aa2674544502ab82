#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""Send probes from this namespace to a peer's and say how each arrived.

  oracle_probe.py NETNS SRC DST SPI [--in-spi SPI] [--v6 SRC DST SPI]
                  [--spoof SRC MARK] PROBE...

PROBE is udp:PORT (a small datagram), udp:PORT:big (3000 bytes: the stack
fragments it), udp:PORT:opts (with IP options), udp:PORT:vlan (the same
as udp:PORT: the caller routes these ports through a VLAN), udp:PORT:raw
(a raw socket's UDP: the stack's flow has no ports, the frame has them),
udp:PORT:short (a raw socket's UDP header cut to 3 bytes, the source port
PORT: no ports either side), udp6:PORT (over --v6's addresses and SA;
:hbh, :dst, :rth add a hop-by-hop, destination options or segment routing
header, none left, and :big is 3000 bytes), icmp:ID (an echo request)
or icmperr:PORT (the peer sends a datagram from PORT to PORT, which nothing
on this side listens to: the probe is the port unreachable error that
quotes it). Each probe goes alone; the peer's namespace NETNS receives on raw
sockets, and the packet count of its state SRC -> DST of SPI (the peer's
inbound SA) tells whether the probe came encrypted. One line a probe:
"PROBE enc", "PROBE clear" or "PROBE drop" (nothing within a second).

in:PORT:enc and in:PORT:clear go the other way: the peer sends a datagram
to PORT on this side from port IN_ENC_SPORT, which its policy sends
through its SA of --in-spi (DST -> SRC), or from IN_CLEAR_SPORT, which
none covers; a raw socket here says whether it was delivered (the policy
check runs before it). "PROBE deliver" or "PROBE drop"; "PROBE wrong" if
the peer's SA counted a clear probe or missed an encrypted one.
in:PORT:bigclear is a clear datagram of 3000 bytes (fragments);
in:PORT:spoof comes from --spoof's address, port IN_SPOOF_SPORT, through
the peer's SA of that source, the SPI of --in-spi and mark MARK: ESP of
the host's SA from a source other than its peer's.
"""
import ctypes
import os
import re
import select
import socket
import struct
import subprocess
import sys
import time

CLONE_NEWNET = 0x40000000
IP_MTU_DISCOVER = 10
IP_PMTUDISC_DONT = 0
IP_OPTIONS = 4
IN_ENC_SPORT = 40001
IN_CLEAR_SPORT = 40002
IN_SPOOF_SPORT = 40003
IPV6_HOPOPTS = 54
IPV6_RTHDR = 57
IPV6_DSTOPTS = 59
SO_MARK = 36


def setns(fd):
    """os.setns() is Python 3.12's; Debian 12 has 3.11."""
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.setns(fd, CLONE_NEWNET):
        err = ctypes.get_errno()
        raise OSError(err, os.strerror(err))


def sa_packets(ns, src, dst, spi, marked=False):
    # A get of a marked state may find an unmarked one of its SPI (a
    # state of mark 0 matches any lookup): list by source instead.
    out = subprocess.run(['ip', '-n', ns, '-s', 'xfrm', 'state',
                          'list' if marked else 'get', 'src', src, 'dst', dst,
                          'proto', 'esp', 'spi', spi],
                         capture_output=True, text=True).stdout
    # "lifetime current:" then "  N(bytes), M(packets)"; the config's
    # limits print as "(INF)(packets)".
    m = re.search(r'(\d+)\(bytes\), (\d+)\(packets\)', out)
    if not m:
        print('no state', src, dst, spi, file=sys.stderr)
    return int(m.group(2)) if m else -1


def csum(data):
    if len(data) % 2:
        data += b'\0'
    s = sum(struct.unpack('!%dH' % (len(data) // 2), data))
    s = (s >> 16) + (s & 0xffff)
    s += s >> 16
    return ~s & 0xffff


def matches(pkt, src, kind, key, opt=''):
    """Is this IPv4 packet (from a raw socket) the probe? For udp6 pkt
    is the UDP datagram and its source address, as recvfrom() gives."""
    if kind == 'udp6':
        pkt, frm = pkt
        return frm[0] == src and len(pkt) >= 4 and \
            struct.unpack('!H', pkt[2:4])[0] == key
    ihl = (pkt[0] & 0xf) * 4
    if socket.inet_ntoa(pkt[12:16]) != src:
        return False
    if kind == 'udp' and opt == 'short':
        return pkt[9] == socket.IPPROTO_UDP and len(pkt) == ihl + 3 and \
            struct.unpack('!H', pkt[ihl:ihl + 2])[0] == key
    if kind == 'udp':
        return pkt[9] == socket.IPPROTO_UDP and \
            struct.unpack('!H', pkt[ihl + 2:ihl + 4])[0] == key
    if pkt[9] != socket.IPPROTO_ICMP:
        return False
    if kind == 'icmp':
        return pkt[ihl] == 8 and \
            struct.unpack('!H', pkt[ihl + 4:ihl + 6])[0] == key
    # The error quotes the datagram's IP header, then its ports.
    q = ihl + 8
    if pkt[ihl] != 3 or len(pkt) < q + 20 or pkt[q + 9] != socket.IPPROTO_UDP:
        return False
    qp = q + (pkt[q] & 0xf) * 4
    return len(pkt) >= qp + 4 and \
        struct.unpack('!H', pkt[qp + 2:qp + 4])[0] == key


def send_in(key, opt, src, dst, home, peer, spoof):
    """An inbound probe, from the peer."""
    setns(peer)
    tx = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    setns(home)
    with tx:
        tx.setsockopt(socket.IPPROTO_IP, IP_MTU_DISCOVER, IP_PMTUDISC_DONT)
        if opt == 'spoof':
            tx.setsockopt(socket.SOL_SOCKET, SO_MARK, int(spoof[1], 0))
            tx.bind((spoof[0], IN_SPOOF_SPORT))
        else:
            tx.bind((dst, IN_ENC_SPORT if opt == 'enc' else IN_CLEAR_SPORT))
        tx.sendto(b'p' * (3000 if opt == 'bigclear' else 32), (src, key))


def send6(key, opt, v6):
    """An IPv6 probe: extension headers of one PadN, or none left."""
    tx = socket.socket(socket.AF_INET6, socket.SOCK_DGRAM)
    pad = bytes([0, 0, 1, 4, 0, 0, 0, 0])
    if opt == 'hbh':
        tx.setsockopt(socket.IPPROTO_IPV6, IPV6_HOPOPTS, pad)
    elif opt == 'dst':
        tx.setsockopt(socket.IPPROTO_IPV6, IPV6_DSTOPTS, pad)
    elif opt == 'rth':
        # Segment routing (type 4), one segment, the destination itself.
        srh = bytes([0, 2, 4, 0, 0, 0, 0, 0]) + socket.inet_pton(
            socket.AF_INET6, v6[1])
        tx.setsockopt(socket.IPPROTO_IPV6, IPV6_RTHDR, srh)
    with tx:
        tx.bind((v6[0], 0))
        tx.sendto(b'p' * (3000 if opt == 'big' else 32), (v6[1], key))


def send(kind, key, opt, src, dst, home, peer):
    """One probe; raises OSError when the stack refuses it."""
    if kind == 'icmperr':
        setns(peer)
        tx = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        setns(home)
        with tx:
            tx.bind((dst, key))
            tx.sendto(b'quoted', (src, key))
        return
    if kind == 'udp' and opt in ('raw', 'short'):
        tx = socket.socket(socket.AF_INET, socket.SOCK_RAW,
                           socket.IPPROTO_UDP)
        data = struct.pack('!HHHH', 40010, key, 8 + 32, 0) + b'p' * 32
        if opt == 'short':
            data = struct.pack('!H', key) + b'p'
        to = (dst, 0)
    elif kind == 'udp':
        tx = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        tx.setsockopt(socket.IPPROTO_IP, IP_MTU_DISCOVER, IP_PMTUDISC_DONT)
        if opt == 'opts':
            tx.setsockopt(socket.IPPROTO_IP, IP_OPTIONS, b'\x01\x01\x01\x00')
        data, to = b'p' * (3000 if opt == 'big' else 32), (dst, key)
    else:
        tx = socket.socket(socket.AF_INET, socket.SOCK_RAW,
                           socket.IPPROTO_ICMP)
        data = struct.pack('!BBHHH', 8, 0, 0, key, 1) + b'probe'
        data = data[:2] + struct.pack('!H', csum(data)) + data[4:]
        to = (dst, 0)
    with tx:
        tx.bind((src, 0))
        tx.sendto(data, to)


def arrived(sock, src, kind, key, opt=''):
    """Did the probe reach the peer within a second?"""
    end = time.monotonic() + 1.0
    while time.monotonic() < end:
        r, _, _ = select.select([sock], [], [], max(0, end - time.monotonic()))
        if not r:
            return False
        try:
            while True:
                pkt = sock.recvfrom(65536) if kind == 'udp6' else \
                    sock.recv(65536)
                if matches(pkt, src, kind, key, opt):
                    return True
        except BlockingIOError:
            pass
    return False


def main():
    ns, src, dst, spi = sys.argv[1:5]
    probes = sys.argv[5:]
    in_spi = v6 = spoof = None
    while probes and probes[0].startswith('--'):
        if probes[0] == '--in-spi':
            in_spi, probes = probes[1], probes[2:]
        elif probes[0] == '--v6':
            v6, probes = probes[1:4], probes[4:]
        elif probes[0] == '--spoof':
            spoof, probes = probes[1:3], probes[3:]
        else:
            raise SystemExit('unknown option ' + probes[0])
    home = os.open('/proc/self/ns/net', os.O_RDONLY)
    peer = os.open('/run/netns/' + ns, os.O_RDONLY)
    setns(peer)
    rx = {'udp': socket.socket(socket.AF_INET, socket.SOCK_RAW,
                               socket.IPPROTO_UDP),
          'icmp': socket.socket(socket.AF_INET, socket.SOCK_RAW,
                                socket.IPPROTO_ICMP),
          'udp6': socket.socket(socket.AF_INET6, socket.SOCK_RAW,
                                socket.IPPROTO_UDP)}
    setns(home)
    rx['icmperr'] = rx['icmp']
    rx['in'] = socket.socket(socket.AF_INET, socket.SOCK_RAW,
                             socket.IPPROTO_UDP)
    for s in rx.values():
        s.setblocking(False)
    for p in probes:
        f = p.split(':')
        kind, key = f[0], int(f[1])
        opt = f[2] if len(f) > 2 else ''
        for s in set(rx.values()):
            try:
                while s.recv(65536):
                    pass
            except BlockingIOError:
                pass
        if kind == 'in':
            # The peer's own outbound SA: software, counted at once.
            sa = (dst, src, in_spi) if opt != 'spoof' else \
                (spoof[0], src, in_spi, True)
            c0 = sa_packets(ns, *sa)
            send_in(key, opt, src, dst, home, peer, spoof)
            got = arrived(rx[kind], sa[0], 'udp', key)
            enc = sa_packets(ns, *sa) > c0
            verdict = 'wrong' if enc != (opt in ('enc', 'spoof')) else \
                'deliver' if got else 'drop'
            print(p, verdict, flush=True)
            continue
        sa = (src, dst, spi) if kind != 'udp6' else (v6[0], v6[1], v6[2])
        c0 = sa_packets(ns, *sa)
        try:
            if kind == 'udp6':
                send6(key, opt, v6)
            else:
                send(kind, key, opt, src, dst, home, peer)
        except OSError:
            # A block policy, or no state: the stack refused it.
            print(p, 'drop', flush=True)
            continue
        got = arrived(rx[kind], sa[0], kind, key, opt)
        c1 = sa_packets(ns, *sa)
        verdict = 'drop' if not got else 'enc' if c1 > c0 else 'clear'
        print(p, verdict, flush=True)
    return 0


if __name__ == '__main__':
    sys.exit(main())
