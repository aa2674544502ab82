#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The field report's failure, caught. One TCP stream from the peer to the
# host (the receive path under test: wire -> output ring -> NAPI) for 10 s
# with the watchdog at its default period (50 ms), first with
# service=visit (the driver's servicing), then with service=pass (the old
# servicing, kept as a diagnostic). A capture at the peer is read by
# scripts/gaps.py.
#
# With service=visit no ring is left: rxwd_stalls stays (about) 0. With
# service=pass the watchdog takes the ring's flag between two of the poll's
# passes, the poll leaves, and the ring waits for the next tick: stalls are
# counted. The test asserts each mode and the difference between them, so
# it proves it can tell the two apart.
#
# Thresholds, from runs in the VM on 2026-11-29 (host shared with other
# builds and VMs, load 7-8 on 2 cores), rxwd_stalls in 10 s:
#   service=visit: 5, 0, 0, 0, 3, 14
#   service=pass:  18, 17, 14, 18, 24
# So: visit at most VISIT_STALLS_MAX, pass at least PASS_STALLS_MIN, and
# pass at least DIFF_MIN above visit. The visit runs that count stalls are
# rings found with 32 or more packets, nobody inside and their interrupt
# enabled for more than a tick (rxwd_early excludes the rest): either
# interrupts the model delivered late or lost, or a ring left in a way not
# yet understood - an open finding (see the .rst). With the watchdog at
# 1 s instead of 50 ms the same visit stream counted no rescue at all.
#
# The capture's paused share (gaps > 20 ms) is printed for both modes but
# not asserted: on this emulated, shared machine the stream pauses in both
# modes (measured 0.52-0.70 with visit, 0.48-0.81 with pass, and 0.13 for
# veth in the same VM) because the guest itself is starved of CPU.

source "$(dirname "$0")/lib.sh"
require_cmd ip iperf3 tcpdump python3 ethtool

SECS=10
VISIT_STALLS_MAX=16
PASS_STALLS_MIN=10
DIFF_MIN=5
GAPS="$LIB_REPO/scripts/gaps.py"
CAP=$(mktemp -d)
on_exit "rm -rf $CAP"

ktap_plan 7

# run MODE: one stream with service=MODE; sets RATE STALLS RESCUES SHARE.
run()
{
	local mode=$1 json

	RATE=0 STALLS=-1 RESCUES=-1 SHARE=-1
	octep_load "service=$mode" && octep_new 0 1 && peer_setup || return 1
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
	RATE=$(python3 -c 'import json,sys
print(int(json.load(sys.stdin)["end"]["sum_received"]["bits_per_second"]) // 1000000)' \
		<<<"$json" 2>/dev/null || echo 0)
	STALLS=$(stat "$HOST_IF" rxwd_stalls)
	RESCUES=$(stat "$HOST_IF" rxwd_rescues)
	ktap_diag "service=$mode: ${RATE} Mbit/s, rxwd_rescues $RESCUES, rxwd_stalls $STALLS, rxwd_early $(stat "$HOST_IF" rxwd_early), rxwd_runs $(stat "$HOST_IF" rxwd_runs), oq_declined $(stat "$HOST_IF" oq_declined), oq_handed $(stat "$HOST_IF" oq_handed)"
	ktap_diag "$(python3 "$GAPS" --port 5201 "$CAP/$mode.pcap" | sed "s/^/$mode capture: /")"
	SHARE=$(python3 "$GAPS" --port 5201 --json "$CAP/$mode.pcap" |
		python3 -c 'import json,sys; print(json.load(sys.stdin)["paused_share"])')
	peer_teardown
	octep_del 0
	octep_unload
}

run visit
V_RATE=$RATE V_STALLS=$STALLS
if [ "$V_RATE" -gt 0 ]; then
	ktap_ok "service=visit: the stream completes ($V_RATE Mbit/s)"
else
	ktap_fail "service=visit: the stream completes"
fi
if [ "$V_STALLS" -ge 0 ] && [ "$V_STALLS" -le "$VISIT_STALLS_MAX" ]; then
	ktap_ok "service=visit: rxwd_stalls $V_STALLS <= $VISIT_STALLS_MAX"
else
	ktap_fail "service=visit: rxwd_stalls $V_STALLS <= $VISIT_STALLS_MAX"
fi
V_SHARE=$SHARE

run pass
P_RATE=$RATE P_STALLS=$STALLS P_RESCUES=$RESCUES
if [ "$P_RATE" -gt 0 ]; then
	ktap_ok "service=pass: the stream completes ($P_RATE Mbit/s)"
else
	ktap_fail "service=pass: the stream completes"
fi
if [ "$P_STALLS" -ge "$PASS_STALLS_MIN" ]; then
	ktap_ok "service=pass: rxwd_stalls $P_STALLS >= $PASS_STALLS_MIN (rings left)"
else
	ktap_fail "service=pass: rxwd_stalls $P_STALLS >= $PASS_STALLS_MIN (rings left)"
fi
if [ "$P_RESCUES" -ge "$P_STALLS" ]; then
	ktap_ok "service=pass: every stall is a rescue ($P_RESCUES >= $P_STALLS)"
else
	ktap_fail "service=pass: every stall is a rescue ($P_RESCUES >= $P_STALLS)"
fi
# The difference: the old servicing leaves rings the new one does not.
if [ "$P_STALLS" -ge $((V_STALLS + DIFF_MIN)) ]; then
	ktap_ok "pass leaves rings visit does not: stalls $P_STALLS vs $V_STALLS"
else
	ktap_fail "pass leaves rings visit does not: stalls $P_STALLS vs $V_STALLS"
fi
ktap_diag "paused share (gaps > 20 ms): visit $V_SHARE, pass $SHARE"
if [ "$V_SHARE" != -1 ] && [ "$SHARE" != -1 ]; then
	ktap_ok "both captures analysed"
else
	ktap_fail "both captures analysed"
fi

ktap_finish
