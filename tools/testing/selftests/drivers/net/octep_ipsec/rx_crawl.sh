#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The field report's crawl, reproduced at the watchdog's default period.
#
# The host is the gateway, as in the report: one TCP stream from the peer
# to a far end that is reached through the host. Both ends sit behind the
# model's wire (the far end on a macvlan of it, in its own namespace), so
# every data segment and every acknowledgement crosses the host: wire ->
# output ring -> the host forwards -> input ring -> wire. A capture at the
# far end is read by scripts/gaps.py. service=visit and service=pass
# alternate over ROUNDS rounds.
#
# With service=pass the watchdog's tick takes the ring's flag between two
# of the poll's passes, the poll reads the held ring as empty and leaves,
# and the segments and acknowledgements that arrive while the watchdog's
# one pass forwards what it found keep the count above the level: nothing
# crosses it, and the ring waits for the next tick - a window a period.
# The test asserts that pass shows it (stalls counted, time paused in
# gaps longer than 35 ms, those pauses near the 50 ms period), that visit
# does not, and the difference.
#
# Under -icount (OCTEP_ICOUNT=1, set by the boot that runs this under
# scripts/vm --icount), guest time counts instructions and QEMU gives
# each vCPU in turn a budget of the time to the next timer deadline,
# halved: the vCPUs interleave finely, and with the real-time setup below
# the watchdog seldom finds a ring to rescue (a run's first round: pass
# 84 Mbit/s, 1 rescue, 0 stalls; visit 85). So under icount the link is
# not capped (LINK=0): the host forwards as fast as the filters let it,
# the ring is seldom empty (the poll's visits ended on the bound,
# oq_bound, 3,200 to 3,800 times in 10 s with a 4,096-buffer ring) and
# ticks find it with nobody inside.
# The stream's window is the report's, 1 MB (WIN, iperf3 -w): with the
# window left to grow, a left ring of 1,024 buffers filled and the pauses
# were retransmission timeouts (median 207 ms). Still in episodes; the
# rate not halved. Single 10 s runs, 2026-12-01, FILTERS 2000:
#   LINK=0 WIN=1M   visit 411 Mbit/s, 0 stalls, 0 paused;
#                   pass 354, 19 stalls, 0.117 paused, worst 2 s 0.248,
#                   long pauses' median 81 ms
#   LINK=0          visit 416, 0, 0; pass 305, 12, 0.284 (median 207 ms)
#   LINK=0 -w 256K  visit 377, 0, 0; pass 337, 1, 0.083 (median 54 ms)
#   LINK=0 -G 4096  visit 419, 0, 0; pass 353, 12, 0.159 (median 96 ms)
#   LINK=0 F=500    visit 607, 0, 0; pass 564, 13, 0.063 (median 74 ms)
# This test under icount (ROUNDS 2, SECS 10), 2026-12-01, six runs
# (three at a time, on a shared two-core machine):
#   service=visit  404-417 Mbit/s, 0 stalls, 0 paused, in all 11 runs (a
#                  12th's setup failed: IPv6 DAD not done in OCTEP_WAIT)
#   service=pass   316-380 Mbit/s (0.76-0.93 of visit's)
#                  rxwd_stalls        24 20 | 24 16 | 22 17 | 20 22 |
#                                     28 21 | 34 7 (sums 39 to 49)
#                  paused, gaps>35ms  0.23 0.17 | 0.15 0.18 | 0.18 0.15 |
#                                     0.16 0.20 | 0.19 0.16 | 0.18 0.07
#                                     (sums 0.26 to 0.40)
#                  most paused 2 s    0.37 0.24 | 0.22 0.31 | 0.32 0.26 |
#                                     0.34 0.43 | 0.32 0.31 | 0.31 0.12
#                  long pauses' median, ms  100 87 | 79 86 | 88 112 |
#                                           90 103 | 80 84 | 93 81
# The medians are 1.6 to 2.2 periods, not the report's one (a left ring
# also holds the far end's acknowledgements, which may take a tick of
# their own: not established). So under icount: a visit run at most
# VISIT_STALLS_MAX stalls and VISIT_SHARE_MAX paused; the pass runs
# together at least PASS_STALLS_MIN stalls and PASS_SHARE_MIN paused, the
# most paused 2 s of one of them at least PASS_WINDOW_MIN (each about half
# the least seen); each run's long pauses' median at most PAUSE_HI,
# below TCP's 200 ms minimum retransmission timeout.
#
# In real time (without OCTEP_ICOUNT), three things make the setup:
#  - The host's per-packet work is made heavy (FILTERS u32 filters on its
#    ingress that match nothing), as the report's host decrypted every
#    packet. A ring is left only if packets arrive during the watchdog's
#    pass. Under QEMU's single-threaded TCG the other vCPU, where the
#    engine and the ends run, gets to run while one vCPU is busy only at a
#    timer event (an IPI to it waits), so the pass has to last
#    milliseconds. Without the filters (ad-hoc runs of this setup,
#    2026-11-30, 10 s) pass read 5, 4 and 2 stalls, 0.021, 0.026 and
#    0.007 of the time paused in gaps over 20 ms; software ESP in the
#    host (tunnel mode, the host decrypting) ran at 16-63 Mbit/s and left
#    1 ring in 10 s.
#  - The transmit side is steered (XPS) to the ring pair the stream does
#    not arrive on: a ring pair shares one interrupt, and the completions
#    of the forwarded packets would otherwise bring the poll back to a
#    left ring (one ring pair, with the filters: pass 0 and 0 stalls,
#    0.0075 and 0 paused).
#  - The model's link is held to LINK Mbit/s (the report's tunnel ran at
#    75), so that the two modes run at about the same rate.
#
# The crawl comes in episodes, as in the report's first row, not second
# after second: a left ring stays left only while each watchdog pass meets
# a timer event of the other vCPU, and one that does not ends the episode.
# So over a whole pass run the paused share is small, but its most paused
# 2 s are paused a seventh to a half of the time where visit's are paused
# at most a fortieth, and its long pauses sit at the period. The first second
# of every capture is left out (SKIP_S): each run of either mode paused
# 36-100 ms after the connection's fifth segment. Measured, three runs of
# this test (scripts/vm -- scripts/run-selftests rx_crawl.sh, Debian
# kernel, 2026-11-30 12:45-13:03, another VM running at times), per run of
# 20 s:
#   service=visit  rxwd_stalls        0 0 0 0 | 0 0 0 0 | 0 0 0 0
#                  paused, gaps>35ms  0 0 0 0 | 0 0.0019 0 0 |
#                                     0 0.0019 0 0.0024
#                  most paused 2 s    0 0 0 0 | 0 0.019 0 0 | 0 0.018 0 0.023
#   service=pass   rxwd_stalls        13 10 15 5 | 5 8 3 17 | 7 8 8 10
#                                     (sums 43, 33, 33)
#                  paused, gaps>35ms  0.065 0.037 0.071 0.022 |
#                                     0.029 0.033 0.039 0.066 |
#                                     0.031 0.034 0.041 0.034
#                                     (sums 0.195, 0.167, 0.140)
#                  most paused 2 s    0.44 0.14 0.32 0.21 |
#                                     0.18 0.25 0.16 0.55 |
#                                     0.21 0.16 0.22 0.26
#                  long pauses' median, ms  44 68 55 49 | 58 58 56 43 |
#                                           54 52 71 44
# With a second VM busy all through (three rounds, 12:32-12:38, the
# captures read with the same options): visit 0 stalls, at most 0.0018
# paused, 0.018 in its most paused 2 s; pass 9, 5, 3 stalls, 0.029, 0.014,
# 0.011 paused, 0.086, 0.074, 0.063 in its most paused 2 s. Before the
# first second was left out (09:44-09:58, three runs of three rounds)
# visit read at most 1 stall and 0.0028 paused a run; pass 21, 32 and 45
# stalls, 0.087 to 0.192 paused, on the sums.
# So: a visit run at most VISIT_STALLS_MAX stalls (six times the most
# seen, 1, before) and VISIT_SHARE_MAX paused (twelve times); the pass runs
# together at least PASS_STALLS_MIN stalls (the loaded run's three had
# twice it) and PASS_SHARE_MIN paused (1.4 times, loaded; 3.5 to 4.9
# times otherwise); the most paused WINDOW_S s of the pass runs at least
# PASS_WINDOW_MIN (1.4 times, loaded; 4.3 to 9 times otherwise) and twice
# visit's (at most 0.023 here; 0.055 in a CI run, 2026-11-30 14:20, from
# one 109 ms pause, where the pass runs' most paused 2 s read 0.28); each
# pass run with five or more long pauses has their median at most
# PAUSE_HI; and the differences, on sums.

source "$(dirname "$0")/lib.sh"
require_cmd ip iperf3 tcpdump python3 tc taskset sysctl

for m in macvlan sch_ingress cls_u32; do
	modprobe -q "$m" 2>/dev/null ||
		[ -d "/sys/module/$m" ] ||
		ktap_skip_all "no $m in this kernel: the far end and the filters need it"
done

FAR_NS=octep_far
FAR_IP4=198.51.100.2
GW_IP4=198.51.100.1
# The run's length, the link's rate, the filters and the window: settable
# for experiments; the thresholds below hold for these values.
PERIOD_MS=50		# the watchdog's default, not set here
LONG_MS=35		# a long gap: 0.7 of the period
SKIP_S=1		# the connection's start, left out of the analysis
WINDOW_S=2		# the most paused WINDOW_S seconds of a run...
FILTERS=${FILTERS:-2000}
if [ "${OCTEP_ICOUNT:-0}" = 1 ]; then
	# Under -icount (see above).
	SECS=${SECS:-10}
	LINK=${LINK:-0}
	WIN=${WIN:-1M}
	ROUNDS=${ROUNDS:-2}
	VISIT_STALLS_MAX=2
	VISIT_SHARE_MAX=0.02
	PASS_STALLS_MIN=20
	PASS_SHARE_MIN=0.12
	# ms: below TCP's 200 ms minimum RTO, so the pauses are the
	# watchdog's, not retransmissions. With the block's Toeplitz RSS
	# (2026-12-02) one pass run in two had a median of 158-174 ms
	# (the other 74-91): up to three periods.
	PAUSE_HI=195
	PASS_WINDOW_MIN=0.15
else
	SECS=${SECS:-20}
	LINK=${LINK:-100}
	WIN=${WIN:-}
	ROUNDS=${ROUNDS:-4}
	VISIT_STALLS_MAX=6
	VISIT_SHARE_MAX=0.03
	PASS_STALLS_MIN=8
	PASS_SHARE_MIN=0.04
	PAUSE_HI=80		# ms: the long pauses' median, at most
	PASS_WINDOW_MIN=0.06	# ...of some pass run: paused at least this share
fi
GAPS="$LIB_REPO/scripts/gaps.py"
CAP=$(mktemp -d)
on_exit "rm -rf $CAP"
on_exit "ip netns del $FAR_NS"
FWD=$(sysctl -n net.ipv4.ip_forward)
REDIR=$(sysctl -n net.ipv4.conf.all.send_redirects)
on_exit "sysctl -qw net.ipv4.ip_forward=$FWD net.ipv4.conf.all.send_redirects=$REDIR"
if [ -n "$WIN" ]; then
	# iperf3 -w fails when the buffer it gets is smaller than asked.
	RMEM=$(sysctl -n net.core.rmem_max) WMEM=$(sysctl -n net.core.wmem_max)
	on_exit "sysctl -qw net.core.rmem_max=$RMEM net.core.wmem_max=$WMEM"
	sysctl -qw net.core.rmem_max=16777216 net.core.wmem_max=16777216
fi

ktap_plan $((ROUNDS * 4 + 6))

in_far()
{
	ip netns exec "$FAR_NS" "$@"
}

# far_setup: the far end on a macvlan of the wire, routed through the host.
far_setup()
{
	ip netns add "$FAR_NS" &&
	in_peer ip link add link "$WIRE_IF" name mv0 type macvlan mode bridge &&
	in_peer ip link set mv0 netns "$FAR_NS" &&
	in_far ip link set lo up &&
	in_far ip addr add "$FAR_IP4/24" dev mv0 &&
	in_far ip link set mv0 up &&
	in_far ip route add default via "$GW_IP4" &&
	in_peer ip route add "${FAR_IP4%.*}.0/24" via "$HOST_IP4" &&
	ip addr add "$GW_IP4/24" dev "$HOST_IF" &&
	sysctl -qw net.ipv4.ip_forward=1 &&
	sysctl -qw "net.ipv4.conf.$HOST_IF.send_redirects=0" &&
	sysctl -qw net.ipv4.conf.all.send_redirects=0
}

# filters: FILTERS ingress filters on the host that match nothing (u32
# takes at most 2047 on a device: one hash table each).
filters()
{
	local i

	tc qdisc add dev "$HOST_IF" clsact || return 1
	for ((i = 1; i <= FILTERS; i++)); do
		echo "filter add dev $HOST_IF ingress prio $i protocol ip u32 match ip dst 203.0.$((i / 250)).$((i % 250 + 1))/32 action drop"
	done | tc -batch -
}

# steer: once the stream has picked its ring, send on the other one.
steer()
{
	local p0=0 p1=0 rx tx deadline=$((SECONDS + 10))

	while [ $((p0 + p1)) -lt 1000 ] && [ "$SECONDS" -lt "$deadline" ]; do
		sleep 0.1
		p0=$(sim_read ring0/out_pkts) p1=$(sim_read ring1/out_pkts)
	done
	if [ "$p0" -ge "$p1" ]; then rx=0 tx=1; else rx=1 tx=0; fi
	echo 0 >"/sys/class/net/$HOST_IF/queues/tx-$rx/xps_cpus" &&
	echo 3 >"/sys/class/net/$HOST_IF/queues/tx-$tx/xps_cpus" || return 1
	ktap_diag "the stream on ring $rx ($p0, $p1 packets), transmit on ring $tx"
}

# run MODE: one stream with service=MODE, then everything taken down
# whether it ran or not; sets RATE STALLS RESCUES SHARE PAUSES PAUSE_MED
# WINDOW.
run()
{
	local rc

	RATE=0 STALLS=-1 RESCUES=-1 SHARE=-1 PAUSES=-1 PAUSE_MED=-1 WINDOW=-1
	run_one "$1"
	rc=$?
	[ "$rc" = 0 ] || ktap_diag "service=$1: the run's setup failed"
	{
		ip netns pids "$FAR_NS" | xargs -r kill
		ip netns del "$FAR_NS"
		peer_teardown
		octep_del 0
		octep_unload
	} >/dev/null 2>&1
	return "$rc"
}

run_one()
{
	local mode=$1 json ipf dump

	octep_load && octep_new 0 2 && octep_knob service "$mode" &&
		peer_setup || return 1
	# The engine and the rings' interrupts on CPU 1, the watchdog on CPU 0
	# (lib.sh says why).
	sim_write link_mbps "$LINK" && split_cpus && far_setup || return 1
	wait_for 10 in_peer ping -c1 -W1 "$FAR_IP4" || return 1
	filters || return 1
	in_far iperf3 -s -D -1 --logfile /dev/null
	wait_for 10 in_far sh -c "ss -ltn | grep -q ':5201 '" || return 1
	in_far tcpdump -i mv0 -s 128 -U -w "$CAP/$mode.pcap" tcp port 5201 \
		2>/dev/null &
	dump=$!
	sleep 1
	in_peer timeout $((SECS + 30)) iperf3 -c "$FAR_IP4" -t "$SECS" -J \
		${WIN:+-w "$WIN"} --connect-timeout 10000 >"$CAP/$mode.json" 2>&1 &
	ipf=$!
	steer || return 1
	wait "$ipf"
	sleep 0.5
	kill "$dump"; wait "$dump" 2>/dev/null
	json=$(cat "$CAP/$mode.json")
	RATE=$(iperf_rate <<<"$json")
	STALLS=$(stat "$HOST_IF" rxwd_stalls)
	RESCUES=$(stat "$HOST_IF" rxwd_rescues)
	ktap_diag "service=$mode: ${RATE} Mbit/s, per second $(python3 -c 'import json,sys
print(*[int(i["sum"]["bits_per_second"]) // 1000000 for i in json.load(sys.stdin)["intervals"]])' <<<"$json" 2>/dev/null)"
	ktap_diag "service=$mode: rxwd_rescues $RESCUES, rxwd_stalls $STALLS, rxwd_runs $(stat "$HOST_IF" rxwd_runs), rxwd_ticks $(stat "$HOST_IF" rxwd_ticks), oq_declined $(stat "$HOST_IF" oq_declined)"
	ktap_diag "$(python3 "$GAPS" --port 5201 "$CAP/$mode.pcap" | sed "s/^/$mode capture: /")"
	ktap_diag "$(python3 "$GAPS" --port 5201 --pause-ms "$LONG_MS" \
		--skip "$SKIP_S" --window "$WINDOW_S" "$CAP/$mode.pcap" |
		grep -E 'pause|window' |
		sed "s/^/$mode, after ${SKIP_S} s, gaps > $LONG_MS ms: /")"
	read -r SHARE PAUSES PAUSE_MED WINDOW < <(python3 "$GAPS" --port 5201 \
		--json --pause-ms "$LONG_MS" --skip "$SKIP_S" \
		--window "$WINDOW_S" "$CAP/$mode.pcap" | python3 -c 'import json,sys
j = json.load(sys.stdin)
print(j["paused_share"], j["pauses"], j["pause_median_ms"], j["window_paused_share"])')
	SHARE=${SHARE:--1} PAUSES=${PAUSES:--1} PAUSE_MED=${PAUSE_MED:--1}
	WINDOW=${WINDOW:--1}
}

# in_range X LO HI: LO <= X <= HI (floats); LO or HI may be empty.
in_range()
{
	python3 -c 'import sys
x = float(sys.argv[1]); lo, hi = sys.argv[2], sys.argv[3]
sys.exit(not ((lo == "" or x >= float(lo)) and (hi == "" or x <= float(hi))))' "$@"
}

# expect DESC X LO HI [DIAG]: DIAG, what was measured, is printed before
# the case's line.
expect()
{
	if in_range "$2" "$3" "$4"; then
		ktap_ok "$1" "${5:-}"
	else
		ktap_fail "$1" "${5:-}"
	fi
}

V_STALLS=0 P_STALLS=0 P_SHARE=0 V_SHARE=0 P_MEDS='' RUNS_OK=1
P_WINDOW=0 V_WINDOW=0
for round in $(seq "$ROUNDS"); do
	for mode in visit pass; do
		run "$mode" || RUNS_OK=0
		expect "round $round, service=$mode: the stream completes" \
			"$RATE" 1 "" "$RATE Mbit/s"
		if [ "$mode" = visit ]; then
			V_STALLS=$((V_STALLS + STALLS))
			V_SHARE=$(python3 -c "print(round($V_SHARE + $SHARE, 4))")
			V_WINDOW=$(python3 -c "print(max($V_WINDOW, $WINDOW))")
			expect "round $round, service=visit: rxwd_stalls <= $VISIT_STALLS_MAX" \
				"$STALLS" 0 "$VISIT_STALLS_MAX" "rxwd_stalls $STALLS"
			expect "round $round, service=visit: paused in long gaps <= $VISIT_SHARE_MAX" \
				"$SHARE" 0 "$VISIT_SHARE_MAX" "paused in long gaps $SHARE"
		else
			P_STALLS=$((P_STALLS + STALLS))
			P_SHARE=$(python3 -c "print(round($P_SHARE + $SHARE, 4))")
			P_WINDOW=$(python3 -c "print(max($P_WINDOW, $WINDOW))")
			[ "$PAUSES" -ge 5 ] && P_MEDS="$P_MEDS $PAUSE_MED"
		fi
	done
done
# A run whose setup failed has no numbers to sum: the sums fail with it.
[ "$RUNS_OK" = 1 ] || P_STALLS=-999 P_SHARE=-999 P_WINDOW=-999

# The old servicing, over the rounds: a left ring is not found every run
# (see above), so its failure is asserted on the sums, and on its worst
# stretch, as the report's captures were taken while the stream crawled.
expect "service=pass leaves rings: rxwd_stalls >= $PASS_STALLS_MIN over $ROUNDS runs" \
	"$P_STALLS" "$PASS_STALLS_MIN" "" "rxwd_stalls $P_STALLS"
expect "service=pass pauses the stream: paused in long gaps >= $PASS_SHARE_MIN over $ROUNDS runs" \
	"$P_SHARE" "$PASS_SHARE_MIN" "" "paused in long gaps $P_SHARE"
ktap_diag "service=pass: long pauses' medians (runs with 5 or more):${P_MEDS:- none}"
if [ -z "$P_MEDS" ]; then
	ktap_fail "service=pass: the long pauses are near the $PERIOD_MS ms period"
else
	ok=1
	for m in $P_MEDS; do
		in_range "$m" "" "$PAUSE_HI" || ok=0
	done
	if [ "$ok" = 1 ]; then
		ktap_ok "service=pass: the long pauses are near the $PERIOD_MS ms period" \
			"medians$P_MEDS <= $PAUSE_HI"
	else
		ktap_fail "service=pass: the long pauses are near the $PERIOD_MS ms period" \
			"medians$P_MEDS, want each <= $PAUSE_HI"
	fi
fi
expect "service=pass crawls: its most paused $WINDOW_S s paused >= $PASS_WINDOW_MIN and >= 2 * visit's" \
	"$(python3 -c "print(min($P_WINDOW - $PASS_WINDOW_MIN, $P_WINDOW - 2 * $V_WINDOW))")" 0 "" \
	"pass $P_WINDOW, visit $V_WINDOW"
expect "pass pauses the stream, visit does not: paused in long gaps, pass >= 4 * visit + 0.02" \
	"$(python3 -c "print($P_SHARE - 4 * $V_SHARE - 0.02)")" 0 "" \
	"pass $P_SHARE, visit $V_SHARE"
expect "pass leaves rings, visit does not: rxwd_stalls, pass >= 2 * visit + 6" \
	"$((P_STALLS - 2 * V_STALLS - 6))" 0 "" "pass $P_STALLS, visit $V_STALLS"

ktap_finish
