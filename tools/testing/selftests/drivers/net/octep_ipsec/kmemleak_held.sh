#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# What the model's wire delivers, held by a socket on the peer, read by
# kmemleak: nothing reads as unreferenced while it is still held. A
# capture on the peer that never reads (a packet socket with a large
# buffer) keeps the skbs GRO built from a TCP stream; two scans past
# kmemleak's minimum age must report nothing.
#
# GRO chains the segments it cannot merge as page fragments through
# frag_list, a pointer in the head skb's shared info. kmemleak scans slab
# memory, not pages: when the head is in a page, the skbs on that chain
# look unreferenced although a socket holds them. The model's wire once
# built its frames that way, and a stream cut by a removal under traffic
# left the peer's socket holding such chains (an orphan with data out of
# order) past the test: the debug tier's scan reported them as leaks.
#
# The peer's side only. The driver builds its skbs over page-pool pages
# (napi_build_skb(), as upstream drivers do), so a host socket holding GRO
# chains reads the same way: a limit of kmemleak, not a leak.
#
# Needs kmemleak (the debug kernel); skipped elsewhere.

source "$(dirname "$0")/lib.sh"

KMEMLEAK=/sys/kernel/debug/kmemleak
[ -w "$KMEMLEAK" ] || ktap_skip_all "no kmemleak on this kernel"
require_cmd ip iperf3 python3

ktap_plan 7

# held: bytes (truesize) the peer's packet sockets hold, /proc/net/packet.
held()
{
	# shellcheck disable=SC2016 # awk's own fields
	in_peer awk 'NR > 1 { n += $7 } END { print n + 0 }' /proc/net/packet
}

check "modules load" octep_load || ktap_finish
check "device 0 with 1 ring" octep_new 0 1 || ktap_finish
check "peer namespace behind the wire" peer_setup || ktap_finish
in_peer iperf3 -s -D --logfile /dev/null
check "iperf3 server in the peer" \
	wait_for 10 in_peer sh -c "ss -ltn | grep -q ':5201 '" || ktap_finish

# The capture: every frame the wire hands up, kept (64 MB of buffer).
in_peer python3 -c '
import socket, sys, time
s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(3))
s.setsockopt(socket.SOL_SOCKET, 33, 64 << 20)	# SO_RCVBUFFORCE
s.bind((sys.argv[1], 0))
time.sleep(600)
' "$WIRE_IF" &
capture=$!
on_exit "kill $capture"
# shellcheck disable=SC2317 # called through wait_for
capturing() { [ "$(in_peer cat /proc/net/packet | wc -l)" -gt 1 ]; }
check "a capture on the peer's wire" wait_for 10 capturing

# Host to peer: the model's wire builds the frames the capture holds.
iperf3 -c "$PEER_IP4" -t 5 --connect-timeout 10000 >/dev/null 2>&1
q=$(held)
echo clear >"$KMEMLEAK"
echo scan >"$KMEMLEAK"
sleep 6
echo scan >"$KMEMLEAK"
rep=$(cat "$KMEMLEAK")
n=$(grep -c 'unreferenced object' <<<"$rep")
desc="the peer's capture holding the wire's frames: kmemleak reports none"
if [ "$q" -lt $((1 << 20)) ]; then
	ktap_fail "$desc" "the capture held $q bytes: not enough to tell"
elif [ "$n" -eq 0 ]; then
	ktap_ok "$desc" "held $q bytes"
else
	ktap_diag "$(head -n 40 <<<"$rep")"
	ktap_fail "$desc" "held $q bytes; kmemleak: $n unreferenced object(s)"
fi
echo clear >"$KMEMLEAK"
kill "$capture"
wait "$capture" 2>/dev/null

kernel_log_clean "no kernel warnings"

ktap_finish
