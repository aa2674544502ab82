#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""The cases of ipsec_oracle.sh, and what each probe should meet.

  oracle_cases.py SEED ROUNDS

Prints rounds of outbound policies (transport mode, host -> peer, /32 ends,
all through one SA of reqid 1) and probes, fixed ones first, then ROUNDS
random ones drawn from SEED:

  round NAME
  pol ACTION PRIO PROTO PORT [XFRM_NL-OPTION...]   added in this order
  ipol ACTION PRIO PROTO PORT                      inbound, peer -> host
  upd ACTION PRIO PROTO PORT                       XFRM_MSG_UPDPOLICY
  probe PROBE SW HW                                 oracle_probe.py's PROBE

ACTION is ipsec, allow or block; PROTO any or udp; PORT - or a number.
SW is what software ESP does with the probe: the matching policy of the
lowest priority decides (ipsec: enc, allow: clear, block: drop), none:
clear. HW is what packet offload must do, the same but where 6.12 itself
decides otherwise: xfrm_policy_insert_list() puts a packet-offload policy
at the head of its chain, so the stack takes the newest matching policy
whatever its priority; what it then protects goes to the block with its
SA, which encrypts it unless its own table (by priority) says block; what
the stack leaves clear the block classifies by priority. A datagram over
the MTU is dropped: xfrm_dev_offload_ok() does not fragment for packet
offload. Where the block cannot read the ports (a fragment, a UDP header
cut short) a policy naming a port that might outrank the match and is not
an allow makes it drop; a raw socket's UDP the stack sees with no ports,
the block with the frame's. HW "refused": the driver refuses the round's
policy. v6 policies and udp6 probes are IPv6, a second SA of reqid 1.

Inbound rounds (ipol, the host's inbound policies through a second SA,
peer -> host) probe with in:PORT:enc or in:PORT:clear, the peer sending
through its SA or in clear; the verdict is deliver or drop. Software: the
policy of the lowest priority decides (block drops; IPsec drops clear
text and takes the SA, whose template fits; allow and none take both, the
SA being in transport mode). Packet offload: what the block decrypted,
the block's table decides the same way, and 6.12 takes its word
(__xfrm_policy_check2()); clear text is dropped by the block's table and
the driver's backstop by priority as software does, and by the stack
when the newest matching policy blocks (xfrm_policy_insert_list() again):
an IPsec policy there lets it through, the driver having checked it.
An inbound policy from-q covers the peer's second address (spoof probes
come from it through the host's SA of reqid 2), from-net both; a
template of reqid 3 is another SA's, which such a probe does not fit.
"""
import random
import sys


def verdict(action):
    return {'ipsec': 'enc', 'allow': 'clear', 'block': 'drop', None: 'clear'}[action]


# The port a probe's selectors meet: the stack's (its flow: a raw socket
# gives none) and the block's (the frame: a fragment or a header cut short
# gives none). 'port', 'zero' or 'unknown'.
STACK_ZERO = ('raw', 'short')
BLOCK_UNKNOWN = ('big', 'short')


def port_view(probe, who):
    opt = probe[2] if len(probe) > 2 else ''
    if who == 'stack':
        return 'zero' if opt in STACK_ZERO else 'port'
    if opt in BLOCK_UNKNOWN or (probe[0] == 'in' and opt == 'bigclear'):
        return 'unknown'
    return 'port' if opt != 'short' else 'zero'


def source(probe):
    return 'q' if probe[0] == 'in' and probe[2] == 'spoof' else 'p'


def covers(pol, probe, view='port'):
    """Does pol cover probe, its port as view says (unknown: not;
    any: whatever the port)?"""
    kind, port = probe[0], probe[1]
    if pol['fam'] != (6 if kind == 'udp6' else 4):
        return False
    if kind == 'in' and pol['src'] not in ('net', source(probe)):
        return False
    if pol['proto'] == 'any':
        return True
    return kind in ('udp', 'udp6', 'in') and \
        (pol['port'] is None or view == 'any' or
         (view == 'port' and pol['port'] == port))


def by_priority(pols, probe, view='port'):
    best = None
    for p in pols:      # insertion order: the older wins a tie
        if covers(p, probe, view) and (best is None or p['prio'] < best['prio']):
            best = p
    return best


def action(pol):
    return pol['action'] if pol else None


def newest(pols, probe, view='port'):
    for p in reversed(pols):
        if covers(p, probe, view):
            return p['action']
    return None


def fail_closed(pols, probe):
    """The block's table for a frame whose ports it cannot see: a policy
    naming a port it might match, ranked before the best of the others
    and not an allow, drops it; else the best of the others decides."""
    best = by_priority(pols, probe, 'unknown')
    for p in pols:
        if covers(p, probe, 'any') and p['port'] is not None and \
           p['action'] != 'allow' and \
           (best is None or p['prio'] < best['prio'] or
                (p['prio'] == best['prio'] and pols.index(p) < pols.index(best))):
            return 'block'
    return action(best)


def table(pols, probe, named=False):
    """The block's table; for a frame the host named (ENCAP) a port it
    cannot see counts as none, the SA being the host's choice."""
    view = port_view(probe, 'block')
    if view == 'unknown':
        return action(by_priority(pols, probe, 'zero')) if named \
            else fail_closed(pols, probe)
    return action(by_priority(pols, probe, view))


def predict(pols, probe):
    sview = port_view(probe, 'stack')
    sw = verdict(action(by_priority(pols, probe, sview)))
    stack = newest(pols, probe, sview)
    if stack == 'block':
        hw = 'drop'
    elif stack == 'ipsec':
        hw = 'drop' if table(pols, probe, True) == 'block' else 'enc'
    else:
        hw = verdict(table(pols, probe))
    if stack == 'ipsec' and 'big' in probe[2:]:
        hw = 'drop'
    return sw, hw


def predict_in(ipols, probe):
    """Inbound: deliver or drop, software and packet offload."""
    clear = probe[2] in ('clear', 'bigclear')
    best = by_priority(ipols, probe)
    # The SA the probe came through has reqid 2; a template of another
    # (another peer's SA) does not take it.
    sw = 'drop' if action(best) == 'block' or \
        (action(best) == 'ipsec' and (clear or best['reqid'] != 2)) \
        else 'deliver'
    hw = sw
    if clear and newest(ipols, probe) == 'block':
        hw = 'drop'
    if port_view(probe, 'block') == 'unknown' and \
       fail_closed(ipols, probe) in ('block', 'ipsec'):
        hw = 'drop'
    return sw, hw


def words(p):
    """A policy's words after its kind; v6, from-SRC and reqid-N are
    ipsec_oracle.sh's, the rest xfrm_nl.py's."""
    w = [p['action'], p['prio'], p['proto'],
         p['port'] if p['port'] is not None else '-']
    w += ['v6'] if p['fam'] == 6 else []
    w += ['from-' + p['src']] if p['src'] != 'p' else []
    w += ['reqid-%d' % p['reqid']] if p['reqid'] != 2 else []
    return w + list(p['extra'])


def emit(name, pols, probes, upd=None, refuse=False, ipols=()):
    print('round', name)
    for p in pols:
        print('pol', *words(p))
    for p in ipols:
        print('ipol', *words(p))
    if upd:
        print('upd', *words(upd))
        pols = [upd if (p['proto'], p['port']) == (upd['proto'], upd['port'])
                else p for p in pols]
    for pr in probes:
        sw, hw = predict_in(ipols, pr) if pr[0] == 'in' else predict(pols, pr)
        if refuse:
            sw, hw = 'enc', 'refused'
        print('probe', ':'.join(str(x) for x in pr), sw, hw)


def pol(action, prio, proto='any', port=None, extra=(), fam=4, src='p',
        reqid=2):
    return {'action': action, 'prio': prio, 'proto': proto, 'port': port,
            'extra': extra, 'fam': fam, 'src': src, 'reqid': reqid}


def main():
    seed, rounds = int(sys.argv[1]), int(sys.argv[2])
    emit('ip-options', [pol('ipsec', 100)],
         [('udp', 20031, 'opts'), ('icmp', 31)])
    emit('fragments', [pol('ipsec', 100, 'udp', 20041)],
         [('udp', 20041, 'big'), ('udp', 20042)])
    emit('update', [pol('ipsec', 100, 'udp', 20071)], [('udp', 20071)],
         upd=pol('block', 100, 'udp', 20071))
    emit('optional', [pol('ipsec', 100, extra=('--optional',))],
         [('udp', 20081)], refuse=True)
    emit('icmp-flag', [pol('ipsec', 100, extra=('--icmp',))],
         [('udp', 20091)], refuse=True)
    emit('allow-before-ipsec', [pol('allow', 10, 'udp', 20101),
                                pol('ipsec', 100)],
         [('udp', 20101), ('udp', 20102), ('icmp', 101)])
    emit('block-before-ipsec', [pol('block', 10, 'udp', 20111),
                                pol('ipsec', 100)],
         [('udp', 20111), ('udp', 20112)])
    # An ICMP error goes by its own selector (proto icmp), not by the
    # flow it quotes: that takes the icmp flag, which the driver refuses.
    emit('icmp-error', [pol('ipsec', 100, 'udp', 20121)],
         [('udp', 20121), ('icmperr', 20121)])
    emit('icmp-error-any', [pol('allow', 10, 'udp', 20131),
                            pol('ipsec', 100)],
         [('udp', 20131), ('icmperr', 20131)])
    # Inbound: the peer sends each probe through its SA or in clear.
    emit('in-ipsec', [], [('in', 23011, 'enc'), ('in', 23011, 'clear')],
         ipols=[pol('ipsec', 100)])
    emit('in-port', [], [('in', 23021, 'enc'), ('in', 23021, 'clear'),
                         ('in', 23022, 'enc'), ('in', 23022, 'clear')],
         ipols=[pol('ipsec', 100, 'udp', 23021)])
    emit('in-allow-before-ipsec', [],
         [('in', 23031, 'enc'), ('in', 23031, 'clear'),
          ('in', 23032, 'clear')],
         ipols=[pol('allow', 10, 'udp', 23031), pol('ipsec', 100)])
    emit('in-block-before-ipsec', [],
         [('in', 23041, 'enc'), ('in', 23041, 'clear'),
          ('in', 23042, 'enc')],
         ipols=[pol('block', 10, 'udp', 23041), pol('ipsec', 100)])
    emit('in-block-newest', [],
         [('in', 23051, 'enc'), ('in', 23051, 'clear'),
          ('in', 23052, 'clear')],
         ipols=[pol('allow', 10, 'udp', 23051), pol('block', 100)])
    # Frames the block parses, not the stack's flow. Through a VLAN on
    # ours (ipsec_oracle.sh routes ports 20300-20399 there): the stack
    # leaves them to the table, which must look behind the tag.
    emit('vlan', [pol('ipsec', 10, 'udp', 20301), pol('block', 20, 'udp', 20302),
                  pol('allow', 100)],
         [('udp', 20301, 'vlan'), ('udp', 20302, 'vlan'),
          ('udp', 20303, 'vlan')])
    # Ports the block cannot see (a fragment, a UDP header cut short) or
    # the stack does not (a raw socket's UDP), under port selectors.
    emit('frag-port', [pol('ipsec', 10, 'udp', 20251), pol('allow', 100)],
         [('udp', 20251, 'opts'), ('udp', 20251, 'big'),
          ('udp', 20251, 'short'), ('udp', 20251, 'raw')])
    # IPv6 extension headers before UDP: hop-by-hop, destination options,
    # a routing header (segment routing, none left), a fragment header;
    # 20281 the stack's IPsec policy, 20291 the table's.
    emit('v6-exthdr', [pol('ipsec', 10, 'udp', 20291, fam=6),
                       pol('allow', 100, fam=6),
                       pol('ipsec', 10, 'udp', 20281, fam=6)],
         [('udp6', 20281, 'hbh'), ('udp6', 20281, 'rth'),
          ('udp6', 20291, 'dst'),
          ('udp6', 20291, 'rth'), ('udp6', 20291, 'big'),
          ('udp6', 20292, 'hbh')])
    # Clear fragments in, under port selectors.
    emit('in-frag-port', [],
         [('in', 23071, 'bigclear'), ('in', 23081, 'bigclear'),
          ('in', 23071, 'enc')],
         ipols=[pol('block', 10, 'udp', 23081), pol('ipsec', 50, 'udp', 23071),
                pol('allow', 100)])
    rnd = random.Random(seed)
    # A quarter as many as outbound: half their probes are drops, each a
    # second's wait.
    for r in range(max(1, rounds // 4)):
        base = 25000 + 10 * r
        ipols, seen = [], set()
        for prio in rnd.sample(range(1, 200), rnd.randint(1, 4)):
            proto = 'any' if rnd.random() < 0.3 else 'udp'
            port = base + rnd.randrange(4) if proto == 'udp' else None
            if (proto, port) in seen:
                continue
            seen.add((proto, port))
            ipols.append(pol(rnd.choice(('ipsec', 'ipsec', 'allow',
                                         'block')), prio, proto, port))
        probes = [('in', base + i, m) for i in range(4)
                  for m in ('enc', 'clear')]
        emit('in-random-%d-%d' % (seed, r), [], probes, ipols=ipols)
    for r in range(rounds):
        base = 21000 + 10 * (r % 90)
        prios = rnd.sample(range(1, 200), rnd.randint(1, 5))
        pols, seen = [], set()
        for prio in prios:
            proto = 'any' if rnd.random() < 0.3 else 'udp'
            port = base + rnd.randrange(6) if proto == 'udp' else None
            # The stack takes one policy a selector (EEXIST).
            if (proto, port) in seen:
                continue
            seen.add((proto, port))
            pols.append(pol(rnd.choice(('ipsec', 'ipsec', 'allow', 'block')),
                            prio, proto, port))
        probes = [('udp', base + i) for i in range(6)] + [('icmp', r)] + \
            [('icmperr', base + rnd.randrange(6))]
        emit('random-%d-%d' % (seed, r), pols, probes)
    # ESP of the host's SA from another address (the peer's second, q):
    # what no policy of q covers, what one of q's own SA (reqid 3) or a
    # block does. Last: its sequence numbers, far ahead of the peer's own
    # SA's, move the host's replay window past what that SA sends.
    emit('in-spoof', [], [('in', 23091, 'enc'), ('in', 23091, 'spoof'),
                          ('in', 23101, 'spoof'), ('in', 23111, 'spoof')],
         ipols=[pol('ipsec', 100),
                pol('ipsec', 100, 'udp', 23101, src='q', reqid=3),
                pol('block', 10, 'udp', 23111, src='net')])
    return 0


if __name__ == '__main__':
    sys.exit(main())
