#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""coal_loop.py IFNAME SECS FIRST [MAX]: change rx-usecs for SECS seconds.

Alternates rx-usecs between FIRST and the other of 1 and 2 with the
ETHTOOL_SCOALESCE ioctl, from one process, so that the loop runs as fast as
the driver's quiesce and resume allow (an `ethtool` process per change
costs far more than the change under emulation). Every call changes the
value, so each is one quiesce. With MAX it also stops after MAX changes.
Prints "CYCLES LAST" (LAST: the value the loop ended on) and exits 1 on
the first failed call.
"""

import array
import fcntl
import socket
import struct
import sys
import time

SIOCETHTOOL = 0x8946
ETHTOOL_GCOALESCE = 0x0E
ETHTOOL_SCOALESCE = 0x0F
N_WORDS = 23  # struct ethtool_coalesce: cmd and 22 u32 fields


def ethtool(sock, ifname, buf):
    ifr = struct.pack("16sP", ifname.encode(), buf.buffer_info()[0])
    fcntl.ioctl(sock, SIOCETHTOOL, ifr)


def main():
    ifname, secs, value = sys.argv[1], float(sys.argv[2]), int(sys.argv[3])
    most = int(sys.argv[4]) if len(sys.argv) > 4 else None
    sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    buf = array.array("I", [ETHTOOL_GCOALESCE] + [0] * (N_WORDS - 1))
    ethtool(sock, ifname, buf)
    cycles = 0
    end = time.monotonic() + secs
    while time.monotonic() < end and cycles != most:
        buf[0] = ETHTOOL_SCOALESCE
        buf[1] = value  # rx_coalesce_usecs
        try:
            ethtool(sock, ifname, buf)
        except OSError as err:
            print(f"{cycles} {value} (rx-usecs {value}: {err})")
            return 1
        cycles += 1
        value = 3 - value
    print(f"{cycles} {3 - value}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
