#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Soak: ESP_FRAMES (default 1000; `make check-soak` 10,000) malformed
# ESP frames from the wire at an offloaded inbound state, while good
# traffic runs through it. Four kinds, in turn: truncated (SPI and
# sequence number only), garbage of 16-200 bytes under the state's SPI
# (its ICV cannot verify), the same under an SPI no state has, and old
# sequence numbers under the right SPI (garbage, so ICV or replay).
#
# Asserted: every frame the model put on the host's ring is accounted for
# by the block's verdict counters (ipsec_rx_malformed, _bad_icv, _replay,
# _no_entry) or a counted drop (the driver's rx_dropped, the model's
# wire_drops); good traffic flows during and after; no
# splat, no leak (the debug tier's kmemleak scan). Prints the counts.

source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/ipsec_lib.inc"
require_cmd ip ethtool python3

: "${ESP_FRAMES:=1000}"

ktap_plan 8

ipsec_prepare
check "modules load" octep_load || ktap_finish
check "device 0 with 2 rings" octep_new 0 2 || ktap_finish
check "peer namespace behind the wire" peer_setup || ktap_finish
ipsec_case transport 4
ipsec_host_sa out transport crypto >/dev/null
ipsec_host_sa in transport crypto replay-window 32 >/dev/null
ipsec_host_pol out transport none >/dev/null
ipsec_host_pol in transport none >/dev/null
ipsec_peer transport
check "good traffic: ping 5/5" ping_ok "$PEER_IP4" 5

# verdicts: the sum of the block's inbound verdict counters.
verdicts()
{
	local n=0 c

	for c in ipsec_rx_malformed ipsec_rx_bad_icv ipsec_rx_replay \
		 ipsec_rx_no_entry; do
		n=$((n + $(stat "$HOST_IF" "$c")))
	done
	echo "$n"
}

# ring_pkts: what the model put on the host's output rings.
ring_pkts()
{
	echo $(( $(sim_read ring0/out_pkts) + $(sim_read ring1/out_pkts) ))
}

# The raw frames go out past the peer's own policy (a bypass of priority
# 1 for ESP itself), while pings keep going through the associations.
in_peer ip xfrm policy add src "$O_P" dst "$O_H" proto esp dir out priority 1
on_exit "in_peer ip xfrm policy delete src $O_P dst $O_H proto esp dir out 2>/dev/null"
ping -q -i 0.2 -W 1 "$PEER_IP4" >/dev/null 2>&1 &
pinger=$!
on_exit "kill $pinger 2>/dev/null"

v0=$(verdicts)
d0=$(dev_stat "$HOST_IF" rx_dropped)
w0=$(sim_read wire_drops)
p0=$(ring_pkts)
t0=$SECONDS
sent=$(in_peer python3 - "$O_H" "$IPSEC_SPI_IN" "$ESP_FRAMES" <<'PY'
import os, socket, struct, sys, time
dst, spi, n = sys.argv[1], int(sys.argv[2], 0), int(sys.argv[3])
s = socket.socket(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_ESP)
sent = 0
for i in range(n):
    kind = i % 4
    rnd = os.urandom(16 + i % 185)
    if kind == 0:
        frame = struct.pack('>II', spi, 1000000 + i)
    elif kind == 1:
        frame = struct.pack('>II', spi, 1000000 + i) + rnd
    elif kind == 2:
        frame = struct.pack('>II', 0x7770000 + i, 1 + i) + rnd
    else:
        frame = struct.pack('>II', spi, 1 + i % 3) + rnd
    s.sendto(frame, (dst, 0))
    sent += 1
    if i % 32 == 31:
        time.sleep(0.005)	# what is tested is the count, not a flood
print(sent)
PY
)
# Until the host has seen them all: the verdicts stop moving.
prev=-1
while [ "$(verdicts)" != "$prev" ]; do
	prev=$(verdicts)
	sleep 2
done
kill "$pinger" 2>/dev/null
v=$(( $(verdicts) - v0 ))
d=$(( $(dev_stat "$HOST_IF" rx_dropped) - d0 ))
w=$(( $(sim_read wire_drops) - w0 ))
p=$(( $(ring_pkts) - p0 ))
ktap_diag "$sent malformed frames sent in $((SECONDS - t0)) s; on the host's rings $p frames (with the pings); verdicts +$v, rx_dropped +$d, wire_drops +$w"
if [ "${sent:-0}" -eq "$ESP_FRAMES" ] && [ $((v + d + w)) -ge "$sent" ]; then
	ktap_ok "$ESP_FRAMES malformed ESP frames: each counted" "$v verdicts, $d rx drops, $w wire drops"
else
	ktap_fail "$ESP_FRAMES malformed ESP frames: each counted" \
		"sent ${sent:-0}, verdicts +$v, rx_dropped +$d, wire_drops +$w"
fi
# No more verdicts than frames: the pings' good ESP is not among them.
if [ "$v" -le "$sent" ]; then
	ktap_ok "no good frame counted as bad"
else
	ktap_fail "no good frame counted as bad" "verdicts +$v > $sent sent"
fi
in_peer ip xfrm policy delete src "$O_P" dst "$O_H" proto esp dir out
check "good traffic after: ping 5/5" ping_ok "$PEER_IP4" 5
ipsec_flush
kernel_log_clean "no kernel warnings"
ktap_finish
