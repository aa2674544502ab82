#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Unit test of scripts/gaps.py on captures written here, whose gaps are
known: the selftests' verdicts on the crawl rest on its numbers. KTAP
output; exit 0 when every case passes."""
import json
import os
import struct
import subprocess
import sys
import tempfile

GAPS = os.path.join(os.path.dirname(os.path.abspath(__file__)), '..',
                    'gaps.py')
PORT = 5201


def frame(payload, sport=40000, dport=PORT, ethertype=0x0800):
    """An Ethernet, IPv4, TCP frame with PAYLOAD bytes of data."""
    tcp = struct.pack('>HHIIBBHHH', sport, dport, 1, 1, 5 << 4, 0x18,
                      65535, 0, 0)
    ip = struct.pack('>BBHHHBBH4s4s', 0x45, 0, 20 + len(tcp) + payload, 0,
                     0, 64, 6, 0, bytes([192, 0, 2, 2]),
                     bytes([198, 51, 100, 2]))
    eth = b'\x02' * 6 + b'\x04' * 6 + struct.pack('>H', ethertype)
    return eth + ip + tcp + b'x' * payload


def pcap(path, records):
    """Write RECORDS, (seconds, frame) pairs, as a classic pcap."""
    with open(path, 'wb') as f:
        f.write(struct.pack('<IHHiIII', 0xa1b2c3d4, 2, 4, 0, 0, 65535, 1))
        for t, fr in records:
            sec = int(t)
            usec = int(round((t - sec) * 1e6))
            f.write(struct.pack('<IIII', sec, usec, len(fr), len(fr)) + fr)


def gaps(path, *args):
    """Run gaps.py --json; return (exit code, parsed output or stderr)."""
    p = subprocess.run([sys.executable, GAPS, '--port', str(PORT), '--json',
                        *args, path], capture_output=True, text=True,
                       check=False)
    if p.returncode:
        return p.returncode, p.stderr
    return 0, json.loads(p.stdout)


class Ktap:
    def __init__(self, plan):
        self.n = 0
        self.failed = 0
        print('TAP version 13')
        print(f'1..{plan}')

    def check(self, desc, cond, detail=''):
        self.n += 1
        if cond:
            print(f'ok {self.n} {desc}')
        else:
            self.failed += 1
            print(f'not ok {self.n} {desc}')
            if detail:
                print(f'# {detail}')


def near(a, b, eps=1e-3):
    return abs(a - b) <= eps


def main():
    k = Ktap(13)
    tmp = tempfile.mkdtemp()

    # A stream of 1 ms gaps with a 50 ms pause every 100 ms (from 2 s to
    # 4 s), and a 500 ms pause at 0.1 s, a connection's start; ACKs and
    # another port's data in between must not count.
    recs, t = [], 0.0
    recs.append((t, frame(1400)))
    t += 0.001
    recs.append((t, frame(1400)))
    t += 0.5
    while t < 6.0:
        recs.append((t, frame(1400)))
        recs.append((t + 0.0002, frame(0, sport=PORT, dport=40000)))
        recs.append((t + 0.0003, frame(1400, dport=22)))
        t += 0.05 if 2.0 <= t < 4.0 and int(round(t * 1000)) % 100 == 0 \
            else 0.001
    path = os.path.join(tmp, 'a.pcap')
    pcap(path, recs)
    data = [r for r in recs if r[1][36:38] == struct.pack('>H', PORT) and
            len(r[1]) > 54]
    span = data[-1][0] - data[0][0]

    rc, r = gaps(path, '--pause-ms', '20')
    k.check('reads the capture', rc == 0, r if rc else '')
    if rc:
        r = {}
    k.check('counts only data segments to the port',
            r.get('segments') == len(data), f"{r.get('segments')} vs {len(data)}")
    k.check('finds the 20 pauses and the start', r.get('pauses') == 21,
            f"pauses {r.get('pauses')}")
    k.check('the pauses\' median is 50 ms',
            near(r.get('pause_median_ms', 0), 50.0, 0.01),
            f"{r.get('pause_median_ms')}")
    paused = 0.5 + 20 * 0.05
    k.check('paused share is paused time over the span',
            near(r.get('paused_share', 0), round(paused / span, 4)),
            f"{r.get('paused_share')} vs {paused / span:.4f}")

    rc, r = gaps(path, '--pause-ms', '20', '--skip', '1')
    r = r if not rc else {}
    k.check('--skip 1 leaves the start out', r.get('pauses') == 20 and
            near(r.get('paused_s', 0), 1.0), f'{r}')

    rc, r = gaps(path, '--pause-ms', '60')
    r = r if not rc else {}
    k.check('--pause-ms 60 counts only the start', r.get('pauses') == 1,
            f"pauses {r.get('pauses')}")

    rc, r = gaps(path, '--pause-ms', '20', '--skip', '1', '--window', '1')
    r = r if not rc else {}
    # Within 2-4 s every 100 ms holds a 50 ms pause: half of any second
    # there is paused. The start is from the first segment left, at 1 s.
    k.check('--window 1 finds the worst second, half paused',
            0.49 <= r.get('window_paused_share', 0) <= 0.51 and
            0.9 <= r.get('window_start_s', 0) <= 2.1, f'{r}')

    rc, r = gaps(path, '--pause-ms', '20', '--window', '10')
    r = r if not rc else {}
    k.check('a window longer than the capture reads 0',
            r.get('window_paused_share') == 0.0, f'{r}')

    # Steady 1 ms gaps: nothing paused.
    steady = os.path.join(tmp, 'b.pcap')
    pcap(steady, [(i * 0.001, frame(1000)) for i in range(2000)])
    rc, r = gaps(steady, '--window', '1')
    r = r if not rc else {}
    k.check('a steady stream has no pause', r.get('pauses') == 0 and
            r.get('paused_share') == 0.0 and
            r.get('window_paused_share') == 0.0, f'{r}')

    # A record that captured nothing: an error, not a number.
    bad = os.path.join(tmp, 'c.pcap')
    pcap(bad, [(0.0, frame(100)), (0.001, b'')])
    rc, err = gaps(bad)
    k.check('a damaged capture is an error (exit 2)', rc == 2 and
            'nothing captured' in err, f'rc {rc}: {err}')

    # A runt frame among the data is skipped.
    runt = os.path.join(tmp, 'd.pcap')
    pcap(runt, [(0.0, frame(100)), (0.001, b'\x00' * 10),
                (0.002, frame(100))])
    rc, r = gaps(runt)
    k.check('a runt frame is skipped', rc == 0 and r.get('segments') == 2,
            f'{rc} {r}')

    # Not a pcap at all.
    junk = os.path.join(tmp, 'e.pcap')
    with open(junk, 'wb') as f:
        f.write(b'not a capture at all, not at all')
    rc, err = gaps(junk)
    k.check('not a pcap: exit 2 with a reason', rc == 2 and
            'not a classic pcap' in err, f'rc {rc}: {err}')

    for name in os.listdir(tmp):
        os.unlink(os.path.join(tmp, name))
    os.rmdir(tmp)
    print(f'# {k.n - k.failed} passed, {k.failed} failed')
    return 1 if k.failed else 0


if __name__ == '__main__':
    sys.exit(main())
