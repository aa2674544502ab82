#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The quiesce, taken and lifted in a loop for 8 s under load: one TCP
# stream, then four, from the peer to the host through a device with four
# ring pairs. Each change of the coalescing (rx-usecs) runs
# octep_quiesce() (watchdog stopped, the gate closed - waiting for a poll
# inside to leave at its next packet - interrupts off) and octep_resume()
# (the gate opened, every ring scheduled once), with the rings in place. Like the report's table, it
# prints the cycles, the stream, the frames received during them, how often
# the quiesce had to wait for a visit and the longest wait.
#
# Asserted: the streams complete; one quiesce per change; nothing the block
# counted is dropped (rx_dropped 0: the rings stay in place and the resume
# pays every ring a visit); frames keep coming during the loop; and the
# watchdog found a ring left on fewer than a quarter of its ticks. A resume
# that failed to visit a ring would leave it for the watchdog at every
# tick (a share near 1). Measured 2026-11-29 (about 200 ticks a loop):
# rxwd_stalls +2, +2, +6, +7, +3 with one stream, +0, +7, +5, +17, +3 with
# four (of 239-294 ticks),
# on a par with the same streams without any quiesce (rx_visit_pass.sh:
# 0-14 in 10 s on one ring) - the report's 0 is not reached under this
# emulation (open finding, see the .rst).
#
# Cycles: coal_loop.py changes rx-usecs with the ETHTOOL_SCOALESCE ioctl
# from one process (an `ethtool` process per change, started over 9p in a
# starved guest, managed 2-8 cycles in 8 s).

source "$(dirname "$0")/lib.sh"
require_cmd ip iperf3 ethtool python3

LOOP_SECS=8
LAST=2		# rx-usecs starts at 0: the first write, 1, is a change

ktap_plan 12

check "modules load" octep_load || ktap_finish
check "device 0 with 4 rings" octep_new 0 4 || ktap_finish
check "peer namespace behind the wire" peer_setup || ktap_finish

# loop STREAMS: quiesce/resume for LOOP_SECS under STREAMS streams.
loop()
{
	local n=$1 c0 w0 p0 d0 s0 t0 cycles=0 rate desc
	desc="$n stream(s)"

	iperf3 -s -D -1 --logfile /dev/null
	wait_for 10 sh -c "ss -ltn | grep -q ':5201 '"
	c0=$(stat "$HOST_IF" quiesce_cycles)
	w0=$(stat "$HOST_IF" quiesce_waits)
	p0=$(dev_stat "$HOST_IF" rx_packets)
	d0=$(dev_stat "$HOST_IF" rx_dropped)
	s0=$(stat "$HOST_IF" rxwd_stalls)
	t0=$(stat "$HOST_IF" rxwd_ticks)
	in_peer timeout $((LOOP_SECS + 40)) iperf3 -c "$HOST_IP4" -P "$n" \
		-t $((LOOP_SECS + 2)) -J --connect-timeout 10000 \
		>"$TMPD/iperf.json" 2>&1 &
	local client=$!
	sleep 1
	# One process, one ioctl per change (coal_loop.py): as fast as
	# the quiesce and resume go. It alternates 1 and 2 across both
	# loops, so every call is a change.
	read -r cycles LAST < <(python3 "$(dirname "$0")/coal_loop.py" \
		"$HOST_IF" "$LOOP_SECS" $((3 - LAST)))
	wait "$client"
	rate=$(iperf_rate <"$TMPD/iperf.json")
	local dc=$(($(stat "$HOST_IF" quiesce_cycles) - c0))
	local dw=$(($(stat "$HOST_IF" quiesce_waits) - w0))
	local dp=$(($(dev_stat "$HOST_IF" rx_packets) - p0))
	local dd=$(($(dev_stat "$HOST_IF" rx_dropped) - d0))
	local ds=$(($(stat "$HOST_IF" rxwd_stalls) - s0))
	local dt=$(($(stat "$HOST_IF" rxwd_ticks) - t0))
	local longest
	longest=$(stat "$HOST_IF" quiesce_wait_max_us)
	ktap_diag "$desc: cycles in ${LOOP_SECS}s $dc, the stream $rate Mbit/s, frames received $dp, had to wait $dw times, longest wait (so far) ${longest} us, stalls $ds in $dt ticks, rxwd_early $(stat "$HOST_IF" rxwd_early)"

	[ "$rate" -gt 0 ] && ktap_ok "$desc: the stream completes" "$rate Mbit/s" ||
		ktap_fail "$desc: the stream completes" "$(tail -5 "$TMPD/iperf.json")"
	[ "$dc" -eq "$cycles" ] && [ "$dc" -gt 0 ] &&
		ktap_ok "$desc: one quiesce per change" "quiesce_cycles +$dc" ||
		ktap_fail "$desc: one quiesce per change" "changes $cycles, quiesces $dc"
	[ $((4 * ds)) -lt "$dt" ] &&
		ktap_ok "$desc: rings left on few ticks" "rxwd_stalls +$ds of $dt ticks" ||
		ktap_fail "$desc: rings left on few ticks" "rxwd_stalls +$ds of $dt ticks"
	[ "$dd" -eq 0 ] && [ "$dp" -gt 0 ] &&
		ktap_ok "$desc: frames received, none dropped" "rx_packets +$dp" ||
		ktap_fail "$desc: frames received, none dropped" "rx_packets +$dp rx_dropped +$dd"
}

TMPD=$(mktemp -d)
on_exit "rm -rf $TMPD"

loop 1
loop 4

# The longest wait is bounded by one packet and a poll's end. Under
# -icount (make check's timed boot) that is guest time: four runs read
# 244 to 372 us, so the bound is the report's order, 1 ms. In real time a
# wait holds the host's load (11.9 ms measured beside a spin run), and a
# debug kernel's packet (kmemleak, KASAN) costs several times as much:
# 1 s.
longest=$(stat "$HOST_IF" quiesce_wait_max_us)
if [ "${OCTEP_ICOUNT:-0}" = 1 ] && [ ! -e /sys/kernel/debug/kmemleak ]; then
	bound=1000 unit="1 ms (guest time)"
else
	bound=1000000 unit="1 s"
fi
[ "$longest" -lt "$bound" ] &&
	ktap_ok "longest wait for a poll to leave < $unit" "${longest} us" ||
	ktap_fail "longest wait for a poll to leave < $unit" "${longest} us"

ktap_finish
