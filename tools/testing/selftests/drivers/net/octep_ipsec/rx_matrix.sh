#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The driver with its default settings on every block octep_sim can be:
# masked (latch|drop: what a raise while the ring's interrupt is disabled
# does) x resend_pending (level|nonzero|never: what RESEND takes for
# pending). None of these is established for the real SDP block (see the
# .rst, "What the driver assumes of the block").
#
# For each combination, on a fresh device with two ring pairs: one TCP
# stream from the peer to the host for SECS seconds at the watchdog's
# default period, with a quiesce and a resume (ethtool -C rx-usecs, there
# and back) in the middle, and every 20 ms the model's arrive_on_enable
# fault armed: the next enable of each ring is preceded by a packet, whose
# crossing finds the interrupt disabled (under TCG the engine and the poll
# seldom meet there on their own). Asserted for each:
#  - the window was exercised: such packets counted, their raises latched
#    or dropped as the setting says;
#  - the stream completes;
#  - the watchdog rescued no more rings than a healthy visit does
#    (rxwd_stalls at most VISIT_STALLS_MAX, as rx_visit_pass.sh measured;
#    a block that drops masked raises strands the old exit every few
#    milliseconds, each a stall at the next period);
#  - afterwards nothing is left in the rings, and every packet the block
#    wrote was taken by the host.
# The last combination is run again with resend=1 (the diagnostic that
# writes RESEND after every completion) under masked=drop.
#
# Time-judged (stalls per period): timed.txt, run under -icount.

source "$(dirname "$0")/lib.sh"
require_cmd ip iperf3 ethtool python3

SECS=4
VISIT_STALLS_MAX=16	# as rx_visit_pass.sh, which measured it
RINGS=2

ktap_plan 30

# sum_rings FILE: a model counter summed over the device's rings.
sum_rings()
{
	local r s=0

	for ((r = 0; r < RINGS; r++)); do
		s=$((s + $(sim_read "ring$r/$1")))
	done
	echo "$s"
}

taken()
{
	echo $(($(dev_stat "$HOST_IF" rx_packets) +
		$(rx_ring_drops "$HOST_IF") + $(stat "$HOST_IF" rx_resync)))
}

drained()
{
	[ "$(sum_rings out_count)" = 0 ] &&
	[ "$(taken)" = "$(sum_rings out_pkts)" ]
}

# combo ID MASKED PENDING: one device, one stream; prints KTAP cases
combo()
{
	local id=$1 masked=$2 pending=$3 name rate stalls client json poke r
	local win left

	name="masked=$masked resend_pending=$pending"
	if ! octep_new "$id" "$RINGS" || ! sim_write masked "$masked" ||
	   ! sim_write resend_pending "$pending" || ! peer_setup; then
		ktap_fail "$name: set up"
		return
	fi
	iperf3 -s -D -1 --logfile /dev/null
	wait_for 10 sh -c "ss -ltn | grep -q ':5201 '"
	json=$(mktemp)
	in_peer timeout $((SECS + 30)) iperf3 -c "$HOST_IP4" -t "$SECS" -J \
		--connect-timeout 10000 >"$json" 2>&1 &
	client=$!
	# a packet in the window before an enable, every 20 ms or so
	while kill -0 "$client" 2>/dev/null; do
		for ((r = 0; r < RINGS; r++)); do
			sim_write "ring$r/arrive_on_enable" 1
		done
		sleep 0.02
	done &
	poke=$!
	sleep $((SECS / 2))
	ethtool -C "$HOST_IF" rx-usecs 10 && ethtool -C "$HOST_IF" rx-usecs 0
	wait "$client"
	wait "$poke"
	for ((r = 0; r < RINGS; r++)); do
		sim_write "ring$r/arrive_on_enable" 0
	done
	rate=$(iperf_rate <"$json")
	rm -f "$json"
	# the counters are read one at a time: a late packet (the stream's
	# end, the peer's IPv6) can land between two reads, so drained is
	# judged by waiting for it, not by one reading
	left=0
	wait_for 5 drained || left=1
	stalls=$(stat "$HOST_IF" rxwd_stalls)
	ktap_diag "$name: $rate Mbit/s, rxwd_stalls $stalls, rxwd_rescues $(stat "$HOST_IF" rxwd_rescues), rxwd_early $(stat "$HOST_IF" rxwd_early), oq_rearm_resched $(stat "$HOST_IF" oq_rearm_resched), oq_declined $(stat "$HOST_IF" oq_declined), oq_handed $(stat "$HOST_IF" oq_handed), interrupts $(irq_count "$HOST_IF"), visits $(stat "$HOST_IF" visits), resend $(stat "$HOST_IF" resend), block arrived_on_enable $(sum_rings arrived_on_enable) irq_masked_dropped $(sum_rings irq_masked_dropped) irq_latched $(sum_rings irq_latched) irq_resend $(sum_rings irq_resend)"
	if [ "$masked" = drop ]; then
		win=$(sum_rings irq_masked_dropped)
	else
		win=$(sum_rings irq_latched)
	fi
	[ "$(sum_rings arrived_on_enable)" -gt 0 ] && [ "$win" -gt 0 ] &&
		ktap_ok "$name: packets in the window before the enable, raises $masked" \
			"arrived_on_enable $(sum_rings arrived_on_enable), $masked $win" ||
		ktap_fail "$name: packets in the window before the enable, raises $masked" \
			"arrived_on_enable $(sum_rings arrived_on_enable), $masked $win"
	[ "$rate" -gt 0 ] && ktap_ok "$name: the stream completes" "$rate Mbit/s" ||
		ktap_fail "$name: the stream completes" "${rate:-no} Mbit/s"
	[ "$stalls" -le "$VISIT_STALLS_MAX" ] &&
		ktap_ok "$name: rxwd_stalls <= $VISIT_STALLS_MAX" "rxwd_stalls $stalls" ||
		ktap_fail "$name: rxwd_stalls <= $VISIT_STALLS_MAX" "rxwd_stalls $stalls"
	[ "$left" = 0 ] && ktap_ok "$name: nothing left, every packet taken" ||
		ktap_fail "$name: nothing left, every packet taken" \
			"out_count $(sum_rings out_count), taken $(taken), block out_pkts $(sum_rings out_pkts)"
	peer_teardown
	octep_del "$id"
}

check "modules load with the defaults" octep_load || ktap_finish
id=0
for masked in latch drop; do
	for pending in level nonzero never; do
		combo $id $masked $pending
		id=$((id + 1))
	done
done
octep_unload
check "modules load with resend=1" octep_load resend=1 || ktap_finish
combo $id drop never
ktap_finish
