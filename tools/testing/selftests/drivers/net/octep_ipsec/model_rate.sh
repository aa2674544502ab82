#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The model's link rate: with link_mbps set, a TCP stream each way is held
# to the rate (a token bucket per direction in the engine), and with it set
# back to 0 the cap is gone.
#
# Thresholds: the model helper measured 18.6 Mbit/s down and 16.6 up at
# link_mbps=20 (2026-11-29, host load ~8). The cap must hold: at most
# RATE_MAX_PCT of it (TCP adds headers the bucket counts, so the goodput
# sits below the cap, never above). It must not be a wall either: at least
# RATE_MIN_PCT of it, a third of what was measured under load, since a
# starved guest can fall short of 20 Mbit/s but a broken bucket (one that
# never refills) falls to nothing.

source "$(dirname "$0")/lib.sh"
require_cmd ip iperf3 python3

SECS=4
CAP=20
RATE_MAX_PCT=110
RATE_MIN_PCT=30

ktap_plan 6

check "modules load" octep_load || ktap_finish
check "device 0 with 1 ring" octep_new 0 1 || ktap_finish
check "peer namespace behind the wire" peer_setup || ktap_finish

# rate ARGS...: one iperf3 stream host -> peer (or -R), received Mbit/s.
rate()
{
	local json

	in_peer iperf3 -s -D -1 --logfile /dev/null 2>/dev/null
	wait_for 10 in_peer sh -c "ss -ltn | grep -q ':5201 '"
	json=$(timeout $((SECS + 30)) iperf3 -c "$PEER_IP4" -t "$SECS" -J \
		--connect-timeout 10000 "$@" 2>&1)
	python3 -c 'import json, sys
print(int(json.load(sys.stdin)["end"]["sum_received"]["bits_per_second"]) // 1000000)' \
		<<<"$json" 2>/dev/null || echo -1
}

echo "$CAP" >"$SIM_DBG/link_mbps"
for dir in "host -> peer" "peer -> host"; do
	arg=
	[ "$dir" = "peer -> host" ] && arg=-R
	r=$(rate $arg)
	if [ "$r" -ge $((CAP * RATE_MIN_PCT / 100)) ] &&
	   [ "$r" -le $((CAP * RATE_MAX_PCT / 100)) ]; then
		ktap_ok "link_mbps=$CAP, $dir: $r Mbit/s"
	else
		ktap_fail "link_mbps=$CAP, $dir: $r Mbit/s" \
			"want $((CAP * RATE_MIN_PCT / 100))..$((CAP * RATE_MAX_PCT / 100))"
	fi
done

# Lifted: the same stream goes past the old cap (veth-class paths read
# 100-460 Mbit/s in this VM under load; twice the cap is far below that).
echo 0 >"$SIM_DBG/link_mbps"
r=$(rate -R)
if [ "$r" -gt $((CAP * 2)) ]; then
	ktap_ok "link_mbps=0, peer -> host: $r Mbit/s, uncapped"
else
	ktap_fail "link_mbps=0, peer -> host: $r Mbit/s, uncapped" "want > $((CAP * 2))"
fi

ktap_finish
