#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# A block that counts more transmit completions than it was given
# instructions (the model's in_excess fault). The driver must take the
# excess back and count it (tx<N>_excess): left in IN_CNTS it never falls,
# and the re-read after each completed poll (rearm=reread, the default)
# found it there and scheduled the ring again, for ever.
#
# Asserted: the excess is counted whole; afterwards the ring pair is not
# polled for nothing (over 2 s idle, fewer than 50 re-reads that found
# work: 0 with the fix, 836,360 with the livelock, in the VM under TCG,
# 2026-12-04); and the ring pair still carries pings.

source "$(dirname "$0")/lib.sh"
require_cmd ip ethtool ping

ktap_plan 7

check "modules load" octep_load || ktap_finish
check "device 0 with 1 ring" octep_new 0 1 || ktap_finish
check "peer namespace behind the wire" peer_setup || ktap_finish

check "ping before the fault" ping -q -c 3 -i 0.2 -W 3 "$PEER_IP4"
e0=$(stat "$HOST_IF" tx0_excess)
sim_write ring0/in_excess 5
wait_for "$OCTEP_WAIT" test "$(stat "$HOST_IF" tx0_excess)" -ge $((e0 + 5))
e1=$(stat "$HOST_IF" tx0_excess)
if [ "$e1" = $((e0 + 5)) ]; then
	ktap_ok "5 completions never given counted" "tx0_excess $e0 -> $e1"
else
	ktap_fail "5 completions never given counted" "tx0_excess $e0 -> $e1"
fi

r0=$(stat "$HOST_IF" rx0_oq_rearm_resched)
sleep 2
r1=$(stat "$HOST_IF" rx0_oq_rearm_resched)
if [ $((r1 - r0)) -lt 50 ]; then
	ktap_ok "no polls for nothing after it" "$((r1 - r0)) re-reads found work in 2 s"
else
	ktap_fail "no polls for nothing after it" \
		"rx0_oq_rearm_resched $r0 -> $r1 in 2 s idle"
fi
check "ping after the fault" ping -q -c 3 -i 0.2 -W 3 "$PEER_IP4"
ktap_finish
