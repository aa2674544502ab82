#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Gap analysis of a TCP stream in a tcpdump capture, as the field report.

  scripts/gaps.py [--pause-ms 20] [--port 5201] [--skip S] [--window S]
                  [--json] CAPTURE.pcap

Reads a classic pcap (Ethernet, or Linux cooked v1/v2), takes the TCP
segments that carry data to or from PORT (default: all), less those of
the first --skip seconds (a connection's start), and prints:

  segments       data segments seen
  span_s         first to last data segment
  gap_median_ms  median gap between consecutive data segments
  gap_p90_ms     90th percentile gap
  pauses         gaps longer than --pause-ms
  pause_median_ms, pause_p90_ms   median and 90th percentile of those
  paused_s       their sum, and paused_share = paused_s / span_s

With --window S, also the worst S seconds of the capture, as the report's
captures were taken while the stream crawled:

  window_s       S
  window_start_s where that window starts, from the first data segment
                 read (after --skip)
  window_paused_share   the share of it paused in gaps longer than
                 --pause-ms (0 if the capture spans less than S)

With --json, one JSON object with the same keys. Standard library only.
"""
import argparse
import json
import struct
import sys


def packets(path):
    """Yield (timestamp seconds, link type, frame bytes) from a pcap."""
    with open(path, 'rb') as f:
        hdr = f.read(24)
        if len(hdr) < 24:
            raise ValueError('not a pcap file')
        magic = struct.unpack('<I', hdr[:4])[0]
        if magic in (0xa1b2c3d4, 0xa1b23c4d):
            end = '<'
        elif magic in (0xd4c3b2a1, 0x4d3cb2a1):
            end = '>'
        else:
            raise ValueError('not a classic pcap file (pcapng? use tcpdump -w)')
        nano = magic in (0xa1b23c4d, 0x4d3cb2a1)
        linktype = struct.unpack(end + 'I', hdr[20:24])[0] & 0xffff
        rec = struct.Struct(end + 'IIII')
        n = 0
        while True:
            r = f.read(16)
            if len(r) < 16:
                return
            sec, frac, incl, _ = rec.unpack(r)
            if not incl:
                raise ValueError(f'record {n}: nothing captured (a damaged file?)')
            data = f.read(incl)
            if len(data) < incl:
                return
            n += 1
            yield sec + frac / (1e9 if nano else 1e6), linktype, data


def l3(linktype, data):
    """Return (ethertype, offset of the network header) or None."""
    if len(data) < 20:                      # a runt, or cut short
        return None
    if linktype == 1:                       # Ethernet
        off, et = 14, struct.unpack('>H', data[12:14])[0]
        while et in (0x8100, 0x88a8) and len(data) >= off + 4:
            et = struct.unpack('>H', data[off + 2:off + 4])[0]
            off += 4
        return et, off
    if linktype == 113:                     # Linux cooked v1
        return struct.unpack('>H', data[14:16])[0], 16
    if linktype == 276:                     # Linux cooked v2
        return struct.unpack('>H', data[0:2])[0], 20
    return None


def tcp_payload(linktype, data, port):
    """Bytes of TCP payload in the frame (0 if none or not ours)."""
    r = l3(linktype, data)
    if not r:
        return 0
    et, off = r
    if et == 0x0800 and len(data) >= off + 20:
        ihl = (data[off] & 0x0f) * 4
        if data[off + 9] != 6:
            return 0
        ip_len = struct.unpack('>H', data[off + 2:off + 4])[0]
        t = off + ihl
        payload_total = ip_len - ihl
    elif et == 0x86dd and len(data) >= off + 40:
        if data[off + 6] != 6:
            return 0
        payload_total = struct.unpack('>H', data[off + 4:off + 6])[0]
        t = off + 40
    else:
        return 0
    if len(data) < t + 14:
        return 0
    sport, dport = struct.unpack('>HH', data[t:t + 4])
    if port and port not in (sport, dport):
        return 0
    doff = (data[t + 12] >> 4) * 4
    return max(0, payload_total - doff)


def percentile(sorted_vals, p):
    if not sorted_vals:
        return 0.0
    k = (len(sorted_vals) - 1) * p
    lo = int(k)
    hi = min(lo + 1, len(sorted_vals) - 1)
    return sorted_vals[lo] + (sorted_vals[hi] - sorted_vals[lo]) * (k - lo)


def worst_window(times, pause_ms, width):
    """Return (start, paused share) of the most paused WIDTH seconds."""
    if len(times) < 2 or times[-1] - times[0] < width:
        return 0.0, 0.0
    long_gaps = [(a, b) for a, b in zip(times, times[1:])
                 if (b - a) * 1000 > pause_ms]
    # The paused time in [t, t + width] is piecewise linear in t: its
    # maximum is where an edge of the window meets an edge of a gap.
    best, best_t = 0.0, times[0]
    for t in [a for a, _ in long_gaps] + [b - width for _, b in long_gaps]:
        t = min(max(t, times[0]), times[-1] - width)
        paused = sum(max(0.0, min(b, t + width) - max(a, t))
                     for a, b in long_gaps)
        if paused > best:
            best, best_t = paused, t
    return best_t - times[0], best / width


def analyse(path, port, pause_ms, width=0.0, skip=0.0):
    times = [ts for ts, lt, d in packets(path) if tcp_payload(lt, d, port)]
    if times and skip > 0:
        times = [t for t in times if t >= times[0] + skip]
    gaps = sorted(b - a for a, b in zip(times, times[1:]))
    pauses = [g for g in gaps if g * 1000 > pause_ms]
    span = times[-1] - times[0] if len(times) > 1 else 0.0
    paused = sum(pauses)
    r = {
        'segments': len(times),
        'span_s': round(span, 4),
        'gap_median_ms': round(percentile(gaps, 0.5) * 1000, 3),
        'gap_p90_ms': round(percentile(gaps, 0.9) * 1000, 3),
        'pauses': len(pauses),
        'pause_median_ms': round(percentile(pauses, 0.5) * 1000, 2),
        'pause_p90_ms': round(percentile(pauses, 0.9) * 1000, 2),
        'paused_s': round(paused, 4),
        'paused_share': round(paused / span, 4) if span else 0.0,
    }
    if width > 0:
        start, share = worst_window(times, pause_ms, width)
        r['window_s'] = width
        r['window_start_s'] = round(start, 3)
        r['window_paused_share'] = round(share, 4)
    return r


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('capture')
    ap.add_argument('--port', type=int, default=0)
    ap.add_argument('--pause-ms', type=float, default=20.0)
    ap.add_argument('--skip', type=float, default=0.0)
    ap.add_argument('--window', type=float, default=0.0)
    ap.add_argument('--json', action='store_true')
    a = ap.parse_args()
    try:
        r = analyse(a.capture, a.port, a.pause_ms, a.window, a.skip)
    except (OSError, ValueError) as e:
        print(f'gaps.py: {a.capture}: {e}', file=sys.stderr)
        return 2
    if a.json:
        print(json.dumps(r))
    else:
        for k, v in r.items():
            print(f'{k:16} {v}')
    return 0


if __name__ == '__main__':
    sys.exit(main())
