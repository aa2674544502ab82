#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Coalescing (ethtool -C, receive and transmit), ring sizes (-G) and
# channels (-L) changed under traffic: two TCP streams from the peer to the
# host through a device with two ring pairs. Each change is applied
# through a quiesce, reads back, and the streams complete. Bad values are
# refused with an error and change nothing. -G and -L reallocate the
# rings: packets the block had counted in the old rings are dropped and
# counted (rx_dropped), TCP recovers.

source "$(dirname "$0")/lib.sh"
require_cmd ip iperf3 ethtool python3 ping

ktap_plan 22

check "modules load" octep_load || ktap_finish
check "device 0 with 2 rings" octep_new 0 2 || ktap_finish
check "peer namespace behind the wire" peer_setup || ktap_finish

# The defaults: the appliance's packet level 1, no time threshold, and
# an interrupt for each transmit completion.
check "default coalescing is rx-frames 1 rx-usecs 0 tx-frames 1 tx-usecs 0" \
	sh -c "ethtool -c $HOST_IF | grep -q '^rx-frames: *1$' &&
	       ethtool -c $HOST_IF | grep -q '^rx-usecs: *0$' &&
	       ethtool -c $HOST_IF | grep -q '^tx-frames: *1$' &&
	       ethtool -c $HOST_IF | grep -q '^tx-usecs: *0$'"

# Refused, with nothing changed.
check "rx-frames 0 is refused" sh -c "! ethtool -C $HOST_IF rx-frames 0"
# A level above 1 with no time threshold would leave packets below the
# level to the watchdog: refused with a message that names rx-usecs, and
# the settings stay as they were.
msg=$(ethtool -C "$HOST_IF" rx-frames 8 rx-usecs 0 2>&1)
rc=$?
[ "$rc" -ne 0 ] && grep -q "rx-usecs" <<<"$msg" &&
	ktap_ok "rx-frames 8 rx-usecs 0 is refused, with a message" ||
	ktap_fail "rx-frames 8 rx-usecs 0 is refused, with a message" \
		"exit $rc: $msg"
# The same for transmit completions: below the level, none would be
# reaped until something else schedules the poll.
msg=$(ethtool -C "$HOST_IF" tx-frames 8 tx-usecs 0 2>&1)
rc=$?
[ "$rc" -ne 0 ] && grep -q "tx-usecs" <<<"$msg" &&
	ktap_ok "tx-frames 8 tx-usecs 0 is refused, with a message" ||
	ktap_fail "tx-frames 8 tx-usecs 0 is refused, with a message" \
		"exit $rc: $msg"
check "after the refusals, -c still reads 1 / 0 / 1 / 0" \
	sh -c "ethtool -c $HOST_IF | grep -q '^rx-frames: *1$' &&
	       ethtool -c $HOST_IF | grep -q '^rx-usecs: *0$' &&
	       ethtool -c $HOST_IF | grep -q '^tx-frames: *1$' &&
	       ethtool -c $HOST_IF | grep -q '^tx-usecs: *0$'"
check "rx ring of 100 (not a power of two) is refused" \
	sh -c "! ethtool -G $HOST_IF rx 100"
check "3 channels on a 2-ring device are refused" \
	sh -c "! ethtool -L $HOST_IF combined 3"
# A transmit ring smaller than the completion level would never interrupt.
ethtool -C "$HOST_IF" tx-frames 128 tx-usecs 10
msg=$(ethtool -G "$HOST_IF" tx 64 2>&1)
rc=$?
[ "$rc" -ne 0 ] && grep -q "tx-frames" <<<"$msg" &&
	ktap_ok "with tx-frames 128, a tx ring of 64 is refused, with a message" ||
	ktap_fail "with tx-frames 128, a tx ring of 64 is refused, with a message" \
		"exit $rc: $msg"
ethtool -C "$HOST_IF" tx-frames 1 tx-usecs 0

TMPD=$(mktemp -d)
on_exit "rm -rf $TMPD"
iperf3 -s -D -1 --logfile /dev/null
wait_for 10 sh -c "ss -ltn | grep -q ':5201 '"
q0=$(stat "$HOST_IF" quiesce_cycles)
in_peer timeout 60 iperf3 -c "$HOST_IP4" -P 2 -t 12 -J \
	--connect-timeout 10000 >"$TMPD/iperf.json" 2>&1 &
client=$!
sleep 2

check "-C rx-frames 8 rx-usecs 20 tx-frames 16 tx-usecs 50 under traffic" \
	ethtool -C "$HOST_IF" rx-frames 8 rx-usecs 20 tx-frames 16 tx-usecs 50
check "-c reads back 8 / 20 / 16 / 50" \
	sh -c "ethtool -c $HOST_IF | grep -q '^rx-frames: *8$' &&
	       ethtool -c $HOST_IF | grep -q '^rx-usecs: *20$' &&
	       ethtool -c $HOST_IF | grep -q '^tx-frames: *16$' &&
	       ethtool -c $HOST_IF | grep -q '^tx-usecs: *50$'"
levels=$(for r in 0 1; do
	for f in out_level out_time_us in_level in_time_us; do
		printf '%s ' "$(sim_read "ring$r/$f")"
	done
done)
[ "$levels" = "8 20 16 50 8 20 16 50 " ] &&
	ktap_ok "the block's rings hold the levels (out 8/20, in 16/50)" ||
	ktap_fail "the block's rings hold the levels (out 8/20, in 16/50)" \
		"read $levels"
sleep 1
check "-G rx 512 tx 256 under traffic" ethtool -G "$HOST_IF" rx 512 tx 256
cur_ring() # IF RX|TX: the current ring size
{
	ethtool -g "$1" | awk -v k="$2:" '/^Current/ { c = 1 } c && $1 == k { print $2 }'
}
check "-g reads back 512 / 256" \
	test "$(cur_ring "$HOST_IF" RX)/$(cur_ring "$HOST_IF" TX)" = 512/256
sleep 1
check "-L combined 1 under traffic" ethtool -L "$HOST_IF" combined 1
# The block spreads flows over the rings the host enabled: no packet goes
# to the ring -L took away (drops counted there) while ring 0 takes them.
# A flood from the peer makes sure there are some: the streams may be
# recovering from the reconfiguration, or over, on a slow kernel.
p0=$(sim_read ring0/out_pkts) d0=$(sim_read ring1/drop_disabled)
in_peer ping -q -f -c 300 -W 1 "$HOST_IP4" >/dev/null 2>&1
p1=$(sim_read ring0/out_pkts) d1=$(sim_read ring1/drop_disabled)
num='^[0-9]+$'
if ! [[ $p0 =~ $num && $p1 =~ $num && $d0 =~ $num && $d1 =~ $num ]]; then
	ktap_fail "no packet steered to the disabled ring" \
		"the model's counters read '$p0' '$p1' '$d0' '$d1'"
elif [ "$p1" -le "$p0" ]; then
	ktap_fail "no packet steered to the disabled ring" \
		"ring 0 took no packet during a flood from the peer (out_pkts $p0)"
elif [ "$d1" != "$d0" ]; then
	ktap_fail "no packet steered to the disabled ring" "drop_disabled $d0 -> $d1"
else
	ktap_ok "no packet steered to the disabled ring"
	ktap_diag "ring 0 took $((p1 - p0)) packets meanwhile"
fi
check "-L combined 2, -G 1024/1024, -C rx-frames 1 rx-usecs 0 tx-frames 1 tx-usecs 0 back" \
	sh -c "ethtool -L $HOST_IF combined 2 && ethtool -G $HOST_IF rx 1024 tx 1024 &&
	       ethtool -C $HOST_IF rx-frames 1 rx-usecs 0 tx-frames 1 tx-usecs 0"

wait "$client"
rate=$(iperf_rate <"$TMPD/iperf.json")
[ "$rate" -gt 0 ] && ktap_ok "the streams complete" "$rate Mbit/s" ||
	ktap_fail "the streams complete" "$(tail -5 "$TMPD/iperf.json")"

# -C twice (two quiesces), -G twice and -L twice (a quiesce each).
dq=$(($(stat "$HOST_IF" quiesce_cycles) - q0))
[ "$dq" -eq 6 ] && ktap_ok "each change went through one quiesce" "quiesce_cycles +$dq" ||
	ktap_fail "each change went through one quiesce" "quiesce_cycles +$dq, expected 6"
ktap_diag "rx_dropped $(dev_stat "$HOST_IF" rx_dropped), tx_dropped $(dev_stat "$HOST_IF" tx_dropped), rxwd_stalls $(stat "$HOST_IF" rxwd_stalls)"
check "ping still answers" ping -c 2 -W 5 "$PEER_IP4"

ktap_finish
