#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""Add xfrm states and policies over netlink, packet offload included.

Debian 12's iproute2 (6.1) knows only crypto offload ("offload dev D dir
DIR") for states and no offload for policies, so the tests ask for packet
offload with this. It prints the kernel's extack message the way ip(8)
does ("Error: ..." or "Warning: ...") and exits 2 on error.

  xfrm_nl.py state SRC DST SPI REQID MODE KEY ICV_BITS
             [--dir in|out] [--offload crypto|packet] [--dev IF]
             [--replay N] [--esn] [--oseq-hi N] [--oseq N] [--seq-hi N]
             [--encap SPORT DPORT] [--encap-type N]
             --encap: ESP in UDP (XFRMA_ENCAP, espinudp unless
             --encap-type says another type), original address 0
  xfrm_nl.py policy in|out|fwd SRC/PL DST/PL TSRC TDST REQID MODE
             [--offload packet] [--dev IF] [--priority N]
             [--action allow|block] [--proto tcp|udp|icmp|N]
             [--sport P] [--dport P] [--no-tmpl] [--optional]
             [--tmpl-spi SPI] [--icmp] [--update]
             --no-tmpl: no template (a bypass, or a block policy); TSRC,
             TDST, REQID and MODE are then ignored. --sport/--dport match
             the port exactly (mask 0xffff) and need --proto.
             --optional, --tmpl-spi: the template's; --icmp: the policy's
             XFRM_POLICY_ICMP flag; --update: XFRM_MSG_UPDPOLICY.
  xfrm_nl.py acquire in|out|fwd SRC/PL DST/PL TSRC TDST REQID MODE
             [--offload packet] [--dev IF] [policy's other options]
             XFRM_MSG_ACQUIRE, as a key manager's test of its listeners:
             the kernel builds the policy (offloading it if asked), sends
             an acquire per template to the key managers and frees it.
  xfrm_nl.py batch < FILE     one "state ..." or "policy ..." a line, over
                              one socket (thousands of adds in seconds);
                              exits 2 if any failed
"""
import argparse
import ipaddress
import shlex
import socket
import struct
import sys

NETLINK_XFRM = 6
SOL_NETLINK = 270
NETLINK_EXT_ACK = 11
NLM_F_REQUEST, NLM_F_ACK, NLM_F_EXCL, NLM_F_CREATE = 1, 4, 0x200, 0x400
NLMSG_ERROR = 2
NLMSGERR_ATTR_MSG = 1
NLM_F_CAPPED, NLM_F_ACK_TLVS = 0x100, 0x200
XFRM_MSG_NEWSA, XFRM_MSG_NEWPOLICY, XFRM_MSG_UPDPOLICY = 16, 19, 25
XFRM_MSG_ACQUIRE = 23
XFRMA_ENCAP, XFRMA_TMPL, XFRMA_REPLAY_VAL = 4, 5, 10
UDP_ENCAP_ESPINUDP = 2
XFRMA_ALG_AEAD, XFRMA_REPLAY_ESN_VAL = 18, 23
XFRMA_OFFLOAD_DEV = 28
XFRM_OFFLOAD_IPV6, XFRM_OFFLOAD_INBOUND, XFRM_OFFLOAD_PACKET = 1, 2, 4
XFRM_STATE_ESN = 128
XFRM_POLICY_ICMP = 2
XFRM_INF = (1 << 64) - 1
MODES = {'transport': 0, 'tunnel': 1}
ACTIONS = {'allow': 0, 'block': 1}
DIRS = {'in': 0, 'out': 1, 'fwd': 2}
PROTOS = {'tcp': socket.IPPROTO_TCP, 'udp': socket.IPPROTO_UDP,
          'icmp': socket.IPPROTO_ICMP}


def addr(a):
    ip = ipaddress.ip_address(a)
    fam = socket.AF_INET if ip.version == 4 else socket.AF_INET6
    return fam, ip.packed.ljust(16, b'\0')


def attr(atype, payload):
    hdr = struct.pack('=HH', 4 + len(payload), atype)
    pad = b'\0' * ((4 - len(payload) % 4) % 4)
    return hdr + payload + pad


def selector(dst=None, src=None, fam=0, proto=0, sport=None, dport=None):
    """struct xfrm_selector, 56 bytes; a port given matches exactly."""
    d, pd = (b'\0' * 16, 0) if dst is None else dst
    s, ps = (b'\0' * 16, 0) if src is None else src
    dp, dm = (0, 0) if dport is None else (socket.htons(dport), 0xffff)
    sp, sm = (0, 0) if sport is None else (socket.htons(sport), 0xffff)
    return struct.pack('=16s16sHHHHHBBBxxxiI', d, s, dp, dm, sp, sm, fam,
                       pd, ps, proto, 0, 0)


def lifetime_cfg(a=None):
    """struct xfrm_lifetime_cfg: byte and packet limits from a's options."""
    lim = [XFRM_INF] * 4
    if a is not None:
        for i, v in enumerate((a.soft_bytes, a.hard_bytes, a.soft_packets,
                               a.hard_packets)):
            if v is not None:
                lim[i] = v
    return struct.pack('=8Q', *lim, 0, 0, 0, 0)


SOCK = None


def send(msg_type, body, attrs):
    global SOCK
    payload = body + b''.join(attrs)
    flags = NLM_F_REQUEST | NLM_F_ACK | NLM_F_CREATE | NLM_F_EXCL
    msg = struct.pack('=IHHII', 16 + len(payload), msg_type, flags, 1, 0)
    if SOCK is None:
        SOCK = socket.socket(socket.AF_NETLINK, socket.SOCK_RAW,
                             NETLINK_XFRM)
        SOCK.setsockopt(SOL_NETLINK, NETLINK_EXT_ACK, 1)
        SOCK.bind((0, 0))
    sock = SOCK
    sock.send(msg + payload)
    data = sock.recv(65536)
    _, mtype, mflags, _, _ = struct.unpack_from('=IHHII', data)
    if mtype != NLMSG_ERROR:
        return 0
    err = struct.unpack_from('=i', data, 16)[0]
    text = None
    if mflags & NLM_F_ACK_TLVS:
        # The request follows the error, whole unless capped: skip it.
        off = 20 + 16
        if not mflags & NLM_F_CAPPED:
            off = 20 + ((struct.unpack_from('=I', data, 20)[0] + 3) & ~3)
        while off + 4 <= len(data):
            alen, atype = struct.unpack_from('=HH', data, off)
            if alen < 4:
                break
            if atype == NLMSGERR_ATTR_MSG:
                text = data[off + 4:off + alen].split(b'\0')[0].decode()
            off += (alen + 3) & ~3
    if err:
        print('Error: %s' % (text or ('errno %d' % -err)))
        return 2
    if text:
        print('Warning: %s' % text)
    return 0


def offload_attr(kind, dev, inbound, fam):
    """XFRMA_OFFLOAD_DEV; fam None for a policy (only _PACKET allowed)."""
    flags = XFRM_OFFLOAD_INBOUND if inbound and fam else 0
    if kind == 'packet':
        flags |= XFRM_OFFLOAD_PACKET
    if fam == socket.AF_INET6:
        flags |= XFRM_OFFLOAD_IPV6
    return attr(XFRMA_OFFLOAD_DEV,
                struct.pack('=iBxxx', socket.if_nametoindex(dev), flags))


def cmd_state(a):
    fam, src = addr(a.src)
    _, dst = addr(a.dst)
    xid = struct.pack('=16sIBxxx', dst, socket.htonl(int(a.spi, 0)), 50)
    flags = XFRM_STATE_ESN if a.esn else 0
    window = 0 if a.esn else a.replay
    body = (selector() + xid + src + lifetime_cfg(a) + b'\0' * 32 +
            b'\0' * 12 +
            struct.pack('=IIHBBBxxxxxxx', 0, int(a.reqid), fam,
                        MODES[a.mode], window, flags))
    assert len(body) == 224
    key = bytes.fromhex(a.key[2:] if a.key.startswith('0x') else a.key)
    aead = struct.pack('=64sII', b'rfc4106(gcm(aes))', len(key) * 8,
                       int(a.icv)) + key
    attrs = [attr(XFRMA_ALG_AEAD, aead)]
    if a.esn:
        words = max(1, (a.replay + 31) // 32)
        attrs.append(attr(XFRMA_REPLAY_ESN_VAL,
                          struct.pack('=6I', words, a.oseq, a.seq,
                                      a.oseq_hi, a.seq_hi, a.replay) +
                          b'\0' * 4 * words))
    elif a.oseq or a.seq:
        # struct xfrm_replay_state: oseq, seq, bitmap.
        attrs.append(attr(XFRMA_REPLAY_VAL,
                          struct.pack('=3I', a.oseq, a.seq, 0)))
    if a.encap:
        # struct xfrm_encap_tmpl: type, the ports (network order), oa.
        attrs.append(attr(XFRMA_ENCAP,
                          struct.pack('=H', a.encap_type) +
                          struct.pack('!HH', *a.encap) + b'\0' * 18))
    if a.offload:
        attrs.append(offload_attr(a.offload, a.dev, a.dir == 'in', fam))
    return send(XFRM_MSG_NEWSA, body, attrs)


def prefix(p):
    net = ipaddress.ip_network(p, strict=False)
    fam = socket.AF_INET if net.version == 4 else socket.AF_INET6
    return fam, (net.network_address.packed.ljust(16, b'\0'),
                 net.prefixlen)


def proto_num(p):
    return PROTOS[p] if p in PROTOS else int(p, 0)


def policy_parts(a):
    """struct xfrm_userpolicy_info and its attributes, or None on error."""
    fam, s = prefix(a.src)
    _, d = prefix(a.dst)
    proto = proto_num(a.proto) if a.proto is not None else 0
    if (a.sport is not None or a.dport is not None) and not proto:
        print('Error: --sport and --dport need --proto')
        return None
    sel = selector(d, s, fam, proto, a.sport, a.dport)
    body = (sel + lifetime_cfg() + b'\0' * 32 +
            struct.pack('=IIBBBBxxxx', a.priority, 0, DIRS[a.dir],
                        ACTIONS[a.action],
                        XFRM_POLICY_ICMP if a.icmp else 0, 0))
    assert len(body) == 168
    attrs = []
    if not a.no_tmpl:
        tfam, tsrc = addr(a.tsrc)
        _, tdst = addr(a.tdst)
        tmpl = (struct.pack('=16sIBxxx', tdst,
                            socket.htonl(int(a.tmpl_spi, 0)), 50) +
                struct.pack('=Hxx16sIBBBxIII', tfam, tsrc, int(a.reqid),
                            MODES[a.mode], 0, 1 if a.optional else 0,
                            0xffffffff, 0xffffffff, 0xffffffff))
        assert len(tmpl) == 64
        attrs.append(attr(XFRMA_TMPL, tmpl))
    if a.offload:
        attrs.append(offload_attr(a.offload, a.dev, a.dir == 'in', None))
    return sel, body, attrs


def cmd_policy(a):
    parts = policy_parts(a)
    if parts is None:
        return 2
    _, body, attrs = parts
    return send(XFRM_MSG_UPDPOLICY if a.update else XFRM_MSG_NEWPOLICY,
                body, attrs)


def cmd_acquire(a):
    """struct xfrm_user_acquire: id, saddr, sel, policy (at 96: it holds
    __u64s), aalgos, ealgos, calgos, seq; 280 bytes."""
    parts = policy_parts(a)
    if parts is None:
        return 2
    sel, pol, attrs = parts
    _, tsrc = addr(a.tsrc)
    _, tdst = addr(a.tdst)
    xid = struct.pack('=16sIBxxx', tdst, 0, 50)
    body = (xid + tsrc + sel + pol +
            struct.pack('=IIII', 0xffffffff, 0xffffffff, 0xffffffff, 0))
    assert len(body) == 280
    return send(XFRM_MSG_ACQUIRE, body, attrs)


def main():
    p = argparse.ArgumentParser()
    sub = p.add_subparsers(dest='what', required=True)
    s = sub.add_parser('state')
    for n in ('src', 'dst', 'spi', 'reqid', 'mode', 'key', 'icv'):
        s.add_argument(n)
    s.add_argument('--dir', default='out')
    s.add_argument('--offload', choices=('crypto', 'packet'))
    s.add_argument('--dev')
    s.add_argument('--replay', type=int, default=32)
    s.add_argument('--esn', action='store_true')
    s.add_argument('--oseq-hi', type=int, default=0)
    s.add_argument('--oseq', type=int, default=0)
    s.add_argument('--seq-hi', type=int, default=0)
    s.add_argument('--seq', type=int, default=0)
    s.add_argument('--encap', type=int, nargs=2)
    s.add_argument('--encap-type', type=int, default=UDP_ENCAP_ESPINUDP)
    for n in ('--soft-bytes', '--hard-bytes', '--soft-packets',
              '--hard-packets'):
        s.add_argument(n, type=int)
    s.set_defaults(fn=cmd_state)
    for what, fn in (('policy', cmd_policy), ('acquire', cmd_acquire)):
        q = sub.add_parser(what)
        q.add_argument('dir', choices=tuple(DIRS))
        for n in ('src', 'dst', 'tsrc', 'tdst', 'reqid', 'mode'):
            q.add_argument(n)
        q.add_argument('--offload', choices=('packet',))
        q.add_argument('--dev')
        q.add_argument('--priority', type=int, default=0)
        q.add_argument('--action', choices=tuple(ACTIONS), default='allow')
        q.add_argument('--proto')
        q.add_argument('--sport', type=int)
        q.add_argument('--dport', type=int)
        q.add_argument('--no-tmpl', action='store_true')
        q.add_argument('--optional', action='store_true')
        q.add_argument('--tmpl-spi', default='0')
        q.add_argument('--icmp', action='store_true')
        q.add_argument('--update', action='store_true')
        q.set_defaults(fn=fn)
    sub.add_parser('batch')
    a = p.parse_args()
    if a.what != 'batch':
        return a.fn(a)
    rc = 0
    for line in sys.stdin:
        if line.strip():
            b = p.parse_args(shlex.split(line))
            rc = max(rc, b.fn(b))
    return rc


if __name__ == '__main__':
    sys.exit(main())
