#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""reconf_loop.py IFNAME SECS: reallocate the rings for SECS seconds.

Steps the channel count (ethtool -L combined) round 1 .. the device's
maximum, and after every fourth step also swaps the ring sizes (ethtool
-G rx/tx) between the ones it found and half of them, with the
ETHTOOL_SCHANNELS and ETHTOOL_SRINGPARAM ioctls from one process (as
coal_loop.py does for the coalescing). Every call is a change, so each
frees and rebuilds the rings. It ends on the channel count and sizes it
found. Prints "CHANNEL-CHANGES RING-CHANGES" and exits 1 on the first
failed call (its error after the counts).
"""

import array
import os
import socket
import sys
import time

# No __pycache__ left beside the tests.
sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from coal_loop import ethtool  # noqa: E402

ETHTOOL_GRINGPARAM = 0x10
ETHTOOL_SRINGPARAM = 0x11
ETHTOOL_GCHANNELS = 0x3C
ETHTOOL_SCHANNELS = 0x3D
# struct ethtool_channels: cmd, max_rx, max_tx, max_other, max_combined,
# rx_count, tx_count, other_count, combined_count.
CH_MAX, CH_COMBINED = 4, 8
# struct ethtool_ringparam: cmd, rx_max, rx_mini_max, rx_jumbo_max, tx_max,
# rx_pending, rx_mini_pending, rx_jumbo_pending, tx_pending.
RP_RX, RP_TX = 5, 8


def get(sock, ifname, cmd):
    buf = array.array("I", [cmd] + [0] * 8)
    ethtool(sock, ifname, buf)
    return buf


def put(sock, ifname, buf, cmd, what):
    buf[0] = cmd
    try:
        ethtool(sock, ifname, buf)
    except OSError as err:
        return f" ({what}: {err})"
    return ""


def main():
    ifname, secs = sys.argv[1], float(sys.argv[2])
    sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    ch = get(sock, ifname, ETHTOOL_GCHANNELS)
    rp = get(sock, ifname, ETHTOOL_GRINGPARAM)
    first, top = ch[CH_COMBINED], ch[CH_MAX]
    sizes = [(rp[RP_RX], rp[RP_TX]), (rp[RP_RX] // 2, rp[RP_TX] // 2)]
    if top < 2:
        print("0 0 (one ring pair: no channel count to change to)")
        return 1
    cur, small, n_ch, n_rp, err = first, False, 0, 0, ""
    end = time.monotonic() + secs
    while not err:
        over = time.monotonic() >= end
        if over and cur == first and not small:
            break
        if not over or cur != first:
            cur = cur % top + 1
            ch[CH_COMBINED] = cur
            err = put(sock, ifname, ch, ETHTOOL_SCHANNELS,
                      f"-L combined {cur}")
            n_ch += not err
        if not err and ((not over and n_ch % 4 == 0) or (over and small)):
            small = not small
            rp[RP_RX], rp[RP_TX] = sizes[small]
            err = put(sock, ifname, rp, ETHTOOL_SRINGPARAM,
                      f"-G rx {rp[RP_RX]} tx {rp[RP_TX]}")
            n_rp += not err
    print(f"{n_ch} {n_rp}{err}")
    return 1 if err else 0


if __name__ == "__main__":
    sys.exit(main())
