#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# One TCP stream each way between the host and the peer behind the wire
# completes, for a few seconds, at a nonzero rate, and no ring is left: the
# block's own record (out_left, in_left: a count silent for 2 ms with its
# interrupt on, octep_sim.rst "Rings left") does not move on either ring,
# receive or transmit completion, in either direction. This is a
# functional test: the rate is printed, not judged (speed belongs in
# scripts/bench*).

source "$(dirname "$0")/lib.sh"
require_cmd ip iperf3 python3

SECS=3

ktap_plan 7

check "modules load" octep_load || ktap_finish
check "device 0 with 2 rings" octep_new 0 2 || ktap_finish
check "peer namespace behind the wire" peer_setup || ktap_finish

in_peer iperf3 -s -D -1 --logfile /dev/null 2>/dev/null
on_exit "ip netns pids $PEER_NS | xargs -r kill"
wait_for 10 in_peer sh -c "ss -ltn | grep -q ':5201 '"

# left: the block's counts of rings left, out and in, summed over the rings.
left()
{
	local r n=0

	for r in 0 1; do
		n=$((n + $(sim_read "ring$r/out_left") + $(sim_read "ring$r/in_left")))
	done
	echo "$n"
}

# left_detail: each ring's counts of rings left and the longest silences.
left_detail()
{
	local r

	for r in 0 1; do
		echo "ring$r out_left $(sim_read "ring$r/out_left")" \
			"in_left $(sim_read "ring$r/in_left")" \
			"longest $(sim_read "ring$r/out_left_max_ns")" \
			"/ $(sim_read "ring$r/in_left_max_ns") ns"
	done
}

# stream DESC IPERF-ARGS...: run one client, read the received rate, and
# the rings left meanwhile.
stream()
{
	local desc=$1 json rate l0 l

	shift
	l0=$(left)
	json=$(timeout $((SECS + 30)) iperf3 -c "$PEER_IP4" -t "$SECS" -J \
		--connect-timeout 10000 "$@" 2>&1)
	rate=$(iperf_rate 1 <<<"$json")
	if [ -n "$rate" ] && [ "$rate" -gt 0 ]; then
		ktap_ok "$desc" "$((rate / 1000000)) Mbit/s"
	else
		ktap_fail "$desc" "$(tail -n 20 <<<"$json")"
	fi
	l=$(($(left) - l0))
	if [ "$l" = 0 ]; then
		ktap_ok "$desc: no ring left (block out_left, in_left +0)"
	else
		ktap_fail "$desc: no ring left (block out_left, in_left +0)" \
			"$(left_detail)"
	fi
	# -1: the server serves one client and exits; start it again.
	in_peer iperf3 -s -D -1 --logfile /dev/null 2>/dev/null
	wait_for 10 in_peer sh -c "ss -ltn | grep -q ':5201 '"
}

stream "TCP host -> peer for ${SECS}s"
stream "TCP peer -> host for ${SECS}s" -R

ktap_finish
