#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The field report's failure, caught. One TCP stream from the peer to the
# host (the receive path under test: wire -> output ring -> NAPI) for 10 s
# with the watchdog at a 5 ms period (see below), with service=visit (the
# driver's servicing) and service=pass (the old servicing, kept as a
# diagnostic), alternating over three rounds. A capture at the peer is
# read by scripts/gaps.py.
#
# With service=visit no ring is left: rxwd_stalls stays (about) 0, and
# the block's own record of rings left (out_left, octep_sim.rst) at 0.
# With service=pass the watchdog takes the ring's flag between two of the
# poll's passes, the poll leaves, and the ring waits for the next tick:
# stalls are counted. The test asserts each mode and the difference
# between them, so it proves it can tell the two apart. The block's
# record under pass is printed, not asserted: 1, 4 and 0 in three rounds
# (2026-12-03, against 20, 33 and 17 stalls), for most of pass's stalls
# are a tick that beat an already scheduled poll, and the shared vector's
# transmit completions cut most silences short of left_ns.
#
# The watchdog runs at PERIOD_US, 5 ms, not its default of 50 ms: the
# report's own experiment (a one-tick watchdog) for the same reason. The
# old servicing leaves a ring only when a tick falls between two of the
# poll's passes, so the failure shows in proportion to the ticks. At 50 ms
# on a quiet host (the make check run of 2026-11-29 22:10, 490-600 Mbit/s)
# pass read 3, 6 and 5 stalls against visit's 2, 2 and 0: too close to
# tell apart by chance-free thresholds. At 5 ms, same placement, same day:
#   service=visit: rxwd_stalls 0, 6, 0, 0, 9, 0
#                  (rxwd_runs 750, 308, 855, 870, 368, 924)
#   service=pass:  rxwd_stalls 564, 544, 71, 67, 75, 518
# VISIT_STALLS_MAX of 30 in a 10 s run is 1.5 % of the 2,000 ticks and
# three times the most seen; the proof is the difference, asserted on the sums.
# Earlier, at 50 ms and with the CPUs unplaced (load 4-9): visit 0-14,
# pass 14-51; placed: visit 3, 0, 1, 0, 0; pass 19, 7, 9, 12, 20.
# The visit stalls unplaced were rings found with 32 or more packets,
# nobody inside and their interrupt enabled 4-40 ms earlier: an interrupt
# sent to the other vCPU and waiting for QEMU's round robin (see run()).
# With the watchdog left to share CPU 1 with the poll, pass read 3 and 1
# (its timer and the poll are then both softirqs of one CPU and cannot
# interleave), which is why the test places the watchdog. So: visit at
# most VISIT_STALLS_MAX in any run, pass at least PASS_STALLS_MIN over
# three rounds (measured 1179 and 660), and pass at least twice visit plus
# DIFF_MIN over three rounds.
#
# The capture's paused share (gaps > 20 ms) is printed for both modes but
# not asserted there: on this emulated, shared machine a stream that takes
# all the CPU it can pauses in both modes (measured 0.52-0.70 with visit,
# 0.48-0.81 with pass, and 0.13 for veth in the same VM) because the guest
# itself is starved of CPU.
#
# So a last run asserts the report's healthy stream as the issue states it:
# service=visit at the watchdog's default period (50 ms), the model's link
# held to LINK_CAP so that the guest has CPU to spare, and then rxwd_stalls
# stays (about) 0 and almost no time is paused. Measured 2026-11-30 with a
# debug-kernel VM sharing the host (ad-hoc runs of this setup, one ring,
# 10 s): at 75, 100, 100, 100 and 200 Mbit/s, paused share 0.012, 0.012,
# 0.0, 0.002 and 0.0; stalls 0, 1, 0, 1, 1 (of about 200 ticks); in this
# test 0.009 and 1 stall. Not 0 stalls: the emulation's late interrupts
# (the .rst's open finding). CAP_SHARE_MAX of 0.10 is eight times the most
# seen; CAP_STALLS_MAX is 3 % of the ticks, six times the most seen (at a
# mean of 0.7 a run, 7 or more is about a chance in 10^5). The old
# servicing is not asserted against here: at a cap it paused as little
# (0.006 and 0.011) and ran at 74 and 152 Mbit/s, with 2 and 3 stalls:
# with the host as the receiving end the sender's next segments came
# after the watchdog's pass, so a left ring did not stay left. rx_crawl.sh
# shows the crawl with the host as the gateway (the .rst's "The crawl").

source "$(dirname "$0")/lib.sh"
require_cmd ip iperf3 tcpdump python3 ethtool

SECS=10
# On the debug kernel (KASAN, lockdep, kmemleak) the stream runs at 13-73
# Mbit/s instead of 500-1400, so a ring left for a tick holds fewer than
# the 32 packets a stall needs more often. There each run lasts 20 s: the
# same rate of stalls, twice the sample. On a quiet machine, 2026-11-30,
# 5 ms: at 10 s a run, visit 7, 5, 5 and pass 8, 32, 28 (68: too near
# PASS_STALLS_MIN); at 20 s, visit 15, 13, 9 and pass 80, 68, 43 (191).
# A 20 ms period was worse (fewer ticks): visit 2, 5, 6; pass 13, 15, 4.
DEBUG_KERNEL=0
[ -e /sys/kernel/debug/kmemleak ] && DEBUG_KERNEL=1 SECS=20
# make check runs this test under -icount (timed.txt, OCTEP_ICOUNT=1),
# where the guest's clock counts its instructions: the stream runs at
# 1354-1383 Mbit/s of guest time, the watchdog's ticks come at the same
# pace whatever the host does, and 10 s runs read (2026-12-01, host load
# 8-10): visit 0, 0, 1 stalls, pass 51, 59 and 40 (150 over three
# rounds); capped visit 1 stall, paused share 0.0. Half the time there
# gives half the stalls, still twice PASS_STALLS_MIN, and halves the
# streams' cost: a busy guest's second takes the host several.
[ "${OCTEP_ICOUNT:-0}" = 1 ] && [ "$DEBUG_KERNEL" = 0 ] && SECS=5
PERIOD_US=${PERIOD_US:-5000}
# 1.5 % of the ticks: 30 in a 10 s run (see above), 60 in 20 s.
VISIT_STALLS_MAX=$((3 * SECS))
PASS_STALLS_MIN=40
DIFF_MIN=5
LINK_CAP=100
CAP_RATE_MIN=50		# Mbit/s: the capped stream ran at 98-99
CAP_SHARE_MAX=0.10
if [ "$DEBUG_KERNEL" = 1 ]; then
	# Below the 13-73 Mbit/s the debug kernel carries uncapped. There the
	# sender's frames leave about 8 ms apart at any cap (median gap 7-8.5
	# ms, 90th percentile 14-16), so some of the gaps pass 20 ms with no
	# stall: paused share 0.043, 0.097, 0.108, 0.109 and 0.157 at 9-19
	# Mbit/s with CI sharing the host (2026-11-30, 0 stalls in each), and
	# the control below read 0.19. The paused share tells nothing there
	# and is not asserted (reported as skipped); the stall counts are.
	LINK_CAP=10
	CAP_RATE_MIN=5
	CAP_SHARE_MAX=
fi
CAP_STALLS_MAX=$((6 * SECS / 10))	# 3 % of 20 ticks a second
GAPS="$LIB_REPO/scripts/gaps.py"
CAP=$(mktemp -d)
on_exit "rm -rf $CAP"

ktap_plan 22

RX_USECS_MAX=1073741823	# 2^30-1 us: about 18 minutes

# run MODE [CAP [LEVEL]]: one stream with service=MODE; sets RATE STALLS
# RESCUES SHARE PAUSE_MED. With CAP: the model's link held to CAP Mbit/s
# and the watchdog at its default period; else no cap and the watchdog at
# PERIOD_US. LEVEL "ring": the packet level (rx-frames) at the ring size.
run()
{
	local mode=$1 cap=${2:-0} level=${3:-} json

	RATE=0 STALLS=-1 RESCUES=-1 SHARE=-1 PAUSE_MED=-1 LEFT=-1
	octep_load && octep_new 0 1 && octep_knob service "$mode" &&
		peer_setup || return 1
	# The engine and the ring's interrupt on CPU 1, the watchdog on CPU 0
	# (lib.sh says why); the receiving iperf3 free to run on either.
	sim_write link_mbps "$cap" && split_cpus || return 1
	wait_for 10 ping -c1 -W1 "$PEER_IP4" >/dev/null || return 1
	# The period set from CPU 0 too, or the watchdog may move to the poll.
	[ "$cap" -gt 0 ] ||
		taskset -c 0 devlink dev param set "$DL_DEV" \
			name rxwd_period_us value "$PERIOD_US" cmode runtime ||
		return 1
	if [ "$level" = ring ]; then
		level=$(ethtool -g "$HOST_IF" |
			awk '/^Current/ { c = 1 } c && $1 == "RX:" { print $2 }')
		# A level above 1 needs a time threshold (ethtool -C refuses
		# one without): the longest, which never runs out in a run.
		ethtool -C "$HOST_IF" rx-frames "$level" \
			rx-usecs "$RX_USECS_MAX" || return 1
	fi
	iperf3 -s -D -1 --logfile /dev/null
	wait_for 10 sh -c "ss -ltn | grep -q ':5201 '" || return 1
	in_peer tcpdump -i "$WIRE_IF" -s 128 -U -w "$CAP/$mode.pcap" \
		tcp port 5201 2>/dev/null &
	local dump=$!
	sleep 1
	json=$(in_peer timeout $((SECS + 30)) iperf3 -c "$HOST_IP4" -t "$SECS" \
		-J --connect-timeout 10000 2>&1)
	sleep 0.5
	kill "$dump"; wait "$dump" 2>/dev/null
	RATE=$(iperf_rate <<<"$json")
	STALLS=$(stat "$HOST_IF" rxwd_stalls)
	RESCUES=$(stat "$HOST_IF" rxwd_rescues)
	LEFT=$(sim_read ring0/out_left)
	ktap_diag "service=$mode: ${RATE} Mbit/s, rxwd_rescues $RESCUES, rxwd_stalls $STALLS, block out_left $LEFT (longest silence $(sim_read ring0/out_left_max_ns) ns), rxwd_early $(stat "$HOST_IF" rxwd_early), rxwd_runs $(stat "$HOST_IF" rxwd_runs), oq_declined $(stat "$HOST_IF" oq_declined), oq_handed $(stat "$HOST_IF" oq_handed), tick_requests $(stat "$HOST_IF" tick_requests)"
	ktap_diag "$(python3 "$GAPS" --port 5201 "$CAP/$mode.pcap" | sed "s/^/$mode capture: /")"
	read -r SHARE PAUSE_MED < <(python3 "$GAPS" --port 5201 --json \
		"$CAP/$mode.pcap" | python3 -c 'import json,sys
j = json.load(sys.stdin); print(j["paused_share"], j["pause_median_ms"])')
	SHARE=${SHARE:--1} PAUSE_MED=${PAUSE_MED:--1}
	peer_teardown
	octep_del 0
	octep_unload
}

# Two rounds, the modes alternating, so that a burst of load on the host
# falls on both modes rather than on one.
V_SUM=0 P_SUM=0 SHARES=
for round in 1 2 3; do
	for mode in visit pass; do
		run "$mode"
		if [ "$RATE" -gt 0 ]; then
			ktap_ok "round $round, service=$mode: the stream completes" "$RATE Mbit/s"
		else
			ktap_fail "round $round, service=$mode: the stream completes" "$RATE Mbit/s"
		fi
		SHARES="$SHARES $mode=$SHARE"
		if [ "$mode" = visit ]; then
			V_SUM=$((V_SUM + STALLS))
			if [ "$STALLS" -ge 0 ] && [ "$STALLS" -le "$VISIT_STALLS_MAX" ]; then
				ktap_ok "round $round, service=visit: rxwd_stalls <= $VISIT_STALLS_MAX" \
					"rxwd_stalls $STALLS"
			else
				ktap_fail "round $round, service=visit: rxwd_stalls <= $VISIT_STALLS_MAX" \
					"rxwd_stalls $STALLS"
			fi
			if [ "$LEFT" = 0 ]; then
				ktap_ok "round $round, service=visit: the block counted no ring left"
			else
				ktap_fail "round $round, service=visit: the block counted no ring left" \
					"out_left $LEFT"
			fi
		else
			P_SUM=$((P_SUM + STALLS))
			# -1: the round never read its counters.
			if [ "$STALLS" -ge 0 ] && [ "$RESCUES" -ge "$STALLS" ]; then
				ktap_ok "round $round, service=pass: each stall is a rescue" \
					"$STALLS stalls, $RESCUES rescues"
			else
				ktap_fail "round $round, service=pass: each stall is a rescue" \
					"$STALLS stalls, $RESCUES rescues"
			fi
		fi
	done
done
# The old servicing leaves rings, and leaves more than the new one does.
if [ "$P_SUM" -ge "$PASS_STALLS_MIN" ]; then
	ktap_ok "service=pass leaves rings: stalls >= $PASS_STALLS_MIN over three rounds" "stalls $P_SUM"
else
	ktap_fail "service=pass leaves rings: stalls >= $PASS_STALLS_MIN over three rounds" "stalls $P_SUM"
fi
if [ "$P_SUM" -ge $((2 * V_SUM + DIFF_MIN)) ]; then
	ktap_ok "pass leaves rings visit does not: stalls over three rounds" \
		"stalls $P_SUM vs $V_SUM"
else
	ktap_fail "pass leaves rings visit does not: stalls over three rounds" \
		"stalls $P_SUM vs $V_SUM, want pass >= 2 * visit + $DIFF_MIN"
fi
ktap_diag "paused share (gaps > 20 ms):$SHARES"
case "$SHARES" in
*=-1*) ktap_fail "all six captures analysed" ;;
*) ktap_ok "all six captures analysed" ;;
esac

# The healthy stream, at the default watchdog, the link capped.
run visit "$LINK_CAP"
if [ "$RATE" -ge "$CAP_RATE_MIN" ]; then
	ktap_ok "capped at $LINK_CAP, default watchdog, service=visit: the stream runs (>= $CAP_RATE_MIN Mbit/s)" \
		"$RATE Mbit/s"
else
	ktap_fail "capped at $LINK_CAP, default watchdog, service=visit: the stream runs (>= $CAP_RATE_MIN Mbit/s)" \
		"$RATE Mbit/s"
fi
if [ "$STALLS" -ge 0 ] && [ "$STALLS" -le "$CAP_STALLS_MAX" ]; then
	ktap_ok "capped, service=visit: rxwd_stalls <= $CAP_STALLS_MAX" "rxwd_stalls $STALLS"
else
	ktap_fail "capped, service=visit: rxwd_stalls <= $CAP_STALLS_MAX" "rxwd_stalls $STALLS"
fi
if [ -z "$CAP_SHARE_MAX" ]; then
	ktap_diag "paused share $SHARE"
	ktap_skip "capped, service=visit: paused share" \
		"debug kernel: its own pacing pauses a healthy stream 0.04-0.16"
elif python3 -c 'import sys; sys.exit(not 0 <= float(sys.argv[1]) <= float(sys.argv[2]))' \
	"$SHARE" "$CAP_SHARE_MAX"; then
	ktap_ok "capped, service=visit: paused share <= $CAP_SHARE_MAX" "paused share $SHARE"
else
	ktap_fail "capped, service=visit: paused share <= $CAP_SHARE_MAX" "paused share $SHARE"
fi

# The control: the same run with the packet level at the ring's size, so
# that the ring raises no interrupt before it is full and the watchdog
# alone brings a servicer - the report's failure in effect. The stall
# bound above must catch it. Measured (Debian kernel, cap 100): 198 and
# 200 stalls in 10 s (the bound is 6), paused share 0.22, 0.19, 0.03, the
# pauses' median 42 and 46 ms (the period is 50); debug kernel (cap 10,
# 20 s, the bound 12): 171 stalls, and 40 with CI sharing the host (the
# stream at 8 Mbit/s brings about 35 packets a tick, near the 32 a stall
# needs; rescues 182 against the healthy run's 5).
CTL_STALLS_MIN=$CAP_STALLS_MAX
run visit "$LINK_CAP" ring
ktap_diag "control: paused share $SHARE, pause median $PAUSE_MED ms"
if [ "$STALLS" -gt "$CTL_STALLS_MIN" ]; then
	ktap_ok "control, rx-frames at the ring size: over the healthy bound (stalls > $CTL_STALLS_MIN)" \
		"$STALLS stalls"
else
	ktap_fail "control, rx-frames at the ring size: over the healthy bound (stalls > $CTL_STALLS_MIN)" \
		"$STALLS stalls"
fi

ktap_finish
