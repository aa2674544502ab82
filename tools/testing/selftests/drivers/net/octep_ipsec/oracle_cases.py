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
offload. HW "refused": the driver refuses the round's policy.

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
"""
import random
import sys


def verdict(action):
    return {'ipsec': 'enc', 'allow': 'clear', 'block': 'drop', None: 'clear'}[action]


def covers(pol, probe):
    kind, port = probe[0], probe[1]
    if pol['proto'] == 'any':
        return True
    return kind in ('udp', 'in') and (pol['port'] is None or
                                      pol['port'] == port)


def by_priority(pols, probe):
    best = None
    for p in pols:      # insertion order: the older wins a tie
        if covers(p, probe) and (best is None or p['prio'] < best['prio']):
            best = p
    return best['action'] if best else None


def newest(pols, probe):
    for p in reversed(pols):
        if covers(p, probe):
            return p['action']
    return None


def predict(pols, probe):
    sw = verdict(by_priority(pols, probe))
    stack = newest(pols, probe)
    table = by_priority(pols, probe)
    if stack == 'block':
        hw = 'drop'
    elif stack == 'ipsec':
        hw = 'drop' if table == 'block' else 'enc'
    else:
        hw = verdict(table)
    if stack == 'ipsec' and 'big' in probe[2:]:
        hw = 'drop'
    return sw, hw


def predict_in(ipols, probe):
    """Inbound: deliver or drop, software and packet offload."""
    clear = probe[2] == 'clear'
    best = by_priority(ipols, probe)
    sw = 'drop' if best == 'block' or (best == 'ipsec' and clear) \
        else 'deliver'
    hw = sw
    if clear and newest(ipols, probe) == 'block':
        hw = 'drop'
    return sw, hw


def emit(name, pols, probes, upd=None, refuse=False, ipols=()):
    print('round', name)
    for p in pols:
        print('pol', p['action'], p['prio'], p['proto'],
              p['port'] if p['port'] is not None else '-', *p.get('extra', ()))
    for p in ipols:
        print('ipol', p['action'], p['prio'], p['proto'],
              p['port'] if p['port'] is not None else '-')
    if upd:
        print('upd', upd['action'], upd['prio'], upd['proto'],
              upd['port'] if upd['port'] is not None else '-')
        pols = [upd if (p['proto'], p['port']) == (upd['proto'], upd['port'])
                else p for p in pols]
    for pr in probes:
        sw, hw = predict_in(ipols, pr) if pr[0] == 'in' else predict(pols, pr)
        if refuse:
            sw, hw = 'enc', 'refused'
        print('probe', ':'.join(str(x) for x in pr), sw, hw)


def pol(action, prio, proto='any', port=None, extra=()):
    return {'action': action, 'prio': prio, 'proto': proto, 'port': port,
            'extra': extra}


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
    return 0


if __name__ == '__main__':
    sys.exit(main())
