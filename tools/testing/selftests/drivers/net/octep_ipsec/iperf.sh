#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# One TCP stream each way between the host and the peer behind the wire
# completes, for a few seconds, at a nonzero rate. This is a functional
# test: the rate is printed, not judged (speed belongs in scripts/bench*).

source "$(dirname "$0")/lib.sh"
require_cmd ip iperf3 python3

SECS=3

ktap_plan 5

check "modules load" octep_load || ktap_finish
check "device 0 with 2 rings" octep_new 0 2 || ktap_finish
check "peer namespace behind the wire" peer_setup || ktap_finish

in_peer iperf3 -s -D -1 --logfile /dev/null 2>/dev/null
on_exit "ip netns pids $PEER_NS | xargs -r kill"
wait_for 10 in_peer sh -c "ss -ltn | grep -q ':5201 '"

# stream DESC IPERF-ARGS...: run one client, read the received rate.
stream()
{
	local desc=$1 json rate

	shift
	json=$(timeout $((SECS + 30)) iperf3 -c "$PEER_IP4" -t "$SECS" -J \
		--connect-timeout 10000 "$@" 2>&1)
	rate=$(iperf_rate 1 <<<"$json")
	if [ -n "$rate" ] && [ "$rate" -gt 0 ]; then
		ktap_ok "$desc: $((rate / 1000000)) Mbit/s"
	else
		ktap_fail "$desc" "$(tail -n 20 <<<"$json")"
	fi
	# -1: the server serves one client and exits; start it again.
	in_peer iperf3 -s -D -1 --logfile /dev/null 2>/dev/null
	wait_for 10 in_peer sh -c "ss -ltn | grep -q ':5201 '"
}

stream "TCP host -> peer for ${SECS}s"
stream "TCP peer -> host for ${SECS}s" -R

ktap_finish
