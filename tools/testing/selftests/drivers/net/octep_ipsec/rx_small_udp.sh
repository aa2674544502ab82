#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Small datagrams are charged what they take, not a page. A receiver that
# is not reading, with the default socket buffer (net.core.rmem_default),
# must still hold a burst of 100 small UDP datagrams whole: a frame up to
# rx-copybreak (512 bytes by default) is copied into a small skb
# (rx_copybreak) and its page goes back to the pool. With a page charged
# per datagram the default buffer holds about 45 of them and the rest are
# dropped at the socket.
#
# Then the same burst of 1000-byte datagrams, which keep the page: the
# test reports how many arrive and checks that every one that did not is
# counted (UDP RcvbufErrors), so no loss goes uncounted.
#
# Last, the ethtool tunable rx-copybreak moves the line: above its
# maximum it is refused; at 1024 a burst of 600-byte datagrams (a page
# each, about 45 held, at the default) is copied and held whole; at 0
# nothing is copied.

source "$(dirname "$0")/lib.sh"
require_cmd ip ethtool python3 nstat

N=100
PORT=5598

ktap_plan 11

check "modules load" octep_load || ktap_finish
check "device 0 with 1 ring" octep_new 0 1 || ktap_finish
check "peer namespace behind the wire" peer_setup || ktap_finish

# burst SIZE: N datagrams of SIZE bytes from the peer into a host socket
# that reads nothing until the burst is over; prints the count received.
burst()
{
	local out

	out=$(mktemp)
	# The receiver reads once the sender says it is done (a file both
	# see), plus 1 s for the last frames: no fixed wait a busy host
	# could outlast.
	python3 - "$PORT" "$out" <<'EOF' &
import os, socket, sys, time
port, out = int(sys.argv[1]), sys.argv[2]
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.bind(("0.0.0.0", port))
open(out, "w").write("ready\n")
deadline = time.time() + 60
while not os.path.exists(out + ".sent") and time.time() < deadline:
    time.sleep(0.1)
time.sleep(1)
s.setblocking(False)
got = 0
try:
    while True:
        s.recv(4096)
        got += 1
except BlockingIOError:
    pass
open(out, "w").write("%d\n" % got)
EOF
	local rcv=$!

	wait_for 30 grep -q ready "$out"
	in_peer python3 - "$HOST_IP4" "$PORT" "$N" "$1" <<'EOF'
import socket, sys
host, port, n, size = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
for i in range(n):
    s.sendto(b"x" * size, (host, port))
EOF
	touch "$out.sent"
	wait "$rcv"
	cat "$out"
	rm -f "$out.sent"
	rm -f "$out"
}

rcvbuf_errors()
{
	nstat -az UdpRcvbufErrors | awk '$1 == "UdpRcvbufErrors" { print $2 }'
}

# counted_burst SIZE: burst SIZE; sets GOT (held), and what moved meanwhile:
# COPIED (rx_copybreak), RCVERR (UdpRcvbufErrors), DROPS (rx_dropped).
counted_burst()
{
	local c0 e0 d0

	c0=$(stat "$HOST_IF" rx_copybreak)
	e0=$(rcvbuf_errors)
	d0=$(dev_stat "$HOST_IF" rx_dropped)
	GOT=$(burst "$1")
	COPIED=$(($(stat "$HOST_IF" rx_copybreak) - c0))
	RCVERR=$(($(rcvbuf_errors) - e0))
	DROPS=$(($(dev_stat "$HOST_IF" rx_dropped) - d0))
}

ktap_diag "net.core.rmem_default $(sysctl -n net.core.rmem_default)"
counted_burst 64
ktap_diag "64-byte datagrams: $GOT of $N held, rx_copybreak +$COPIED, UdpRcvbufErrors +$RCVERR"
if [ "$GOT" = "$N" ]; then
	ktap_ok "100 64-byte datagrams held whole at the default socket buffer"
else
	ktap_fail "100 64-byte datagrams held whole at the default socket buffer" \
		"$GOT of $N, UdpRcvbufErrors +$RCVERR"
fi
if [ "$COPIED" -ge "$N" ]; then
	ktap_ok "each was copied" "rx_copybreak +$COPIED"
else
	ktap_fail "each was copied" "rx_copybreak +$COPIED < $N"
fi

got=$(burst 200)
ktap_diag "200-byte datagrams: $got of $N held"
if [ "$got" = "$N" ]; then
	ktap_ok "100 200-byte datagrams held whole at the default socket buffer"
else
	ktap_fail "100 200-byte datagrams held whole at the default socket buffer" "$got of $N"
fi

counted_burst 1000
ktap_diag "1000-byte datagrams: $GOT of $N held, rx_copybreak +$COPIED, UdpRcvbufErrors +$RCVERR, rx_dropped +$DROPS"
if [ "$((GOT + RCVERR + DROPS))" -ge "$N" ] && [ "$COPIED" -lt "$N" ]; then
	ktap_ok "1000-byte datagrams keep their page; each one not held is counted" \
		"$GOT held, $RCVERR RcvbufErrors"
else
	ktap_fail "1000-byte datagrams keep their page; each one not held is counted" \
		"$GOT held + $RCVERR RcvbufErrors + $DROPS rx_dropped < $N, or rx_copybreak +$COPIED"
fi

# Refused as out of range (EINVAL), not as a tunable the driver lacks.
if ! out=$(ethtool --set-tunable "$HOST_IF" rx-copybreak 1025 2>&1) &&
   [[ $out == *"Invalid argument"* ]]; then
	ktap_ok "rx-copybreak above 1024 is refused"
else
	ktap_fail "rx-copybreak above 1024 is refused" "${out:-accepted}"
fi
ethtool --set-tunable "$HOST_IF" rx-copybreak 1024
cb=$(ethtool --get-tunable "$HOST_IF" rx-copybreak 2>&1)
[[ $cb == *"rx-copybreak: 1024"* ]] && ktap_ok "rx-copybreak 1024 is set" ||
	ktap_fail "rx-copybreak 1024 is set" "$cb"
counted_burst 600
if [ "$GOT" = "$N" ] && [ "$COPIED" -ge "$N" ]; then
	ktap_ok "at rx-copybreak 1024, 600-byte datagrams are copied and held whole"
else
	ktap_fail "at rx-copybreak 1024, 600-byte datagrams are copied and held whole" \
		"$GOT of $N held, rx_copybreak +$COPIED"
fi
ethtool --set-tunable "$HOST_IF" rx-copybreak 0
counted_burst 64
# Each datagram arrived (held, or counted where it was not): a burst that
# never came would copy nothing too.
if [ "$COPIED" = 0 ] && [ "$((GOT + RCVERR + DROPS))" -ge "$N" ]; then
	ktap_ok "at rx-copybreak 0 nothing is copied" "$GOT of $N held, $RCVERR RcvbufErrors"
else
	ktap_fail "at rx-copybreak 0 nothing is copied" \
		"rx_copybreak +$COPIED; $GOT held + $RCVERR RcvbufErrors + $DROPS rx_dropped of $N"
fi
ethtool --set-tunable "$HOST_IF" rx-copybreak 512	# the default

ktap_finish
