#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# A block that drops a raise while the ring's interrupt is disabled
# (octep_sim masked=drop) instead of latching it.
#
# A completing poll re-enables the interrupt after napi_complete_done().
# A packet counted between the poll's last zero read and that enable
# crosses the level with the interrupt off; under drop nothing is ever
# sent for it, and at level 1 the count never crosses again: the ring is
# left until the watchdog's period. With the period at 0 (no periodic
# tick) it is left for good.
#
# The window is short, and under QEMU's TCG the model's engine and the
# poll seldom run at the same moment (runs of this test with floods and
# with paced UDP streams, with and without -icount, saw no raise dropped
# at all), so the packet is placed there deterministically: the model's
# arrive_on_enable fault counts one synthetic packet in the instant before
# the enable lands.
#
# The host is silent (no addresses, IPv6 off): a transmit completion's
# interrupt would otherwise bring a poll to a left ring. For each of
#  rearm=none, masked=latch   the control: the latched crossing is sent
#  rearm=none, masked=drop    the old exit: the ring is left, later packets
#                             pile up behind it, nobody takes them; the
#                             watchdog's period, set back, rescues it
#  rearm=reread, masked=drop  the default: the re-read finds the packet
# one packet is injected to make a poll run and complete. The rx_stall
# health reporter's recovery, which would also bring a poll to a left
# ring within a second, is turned off (auto_recover false).

source "$(dirname "$0")/lib.sh"
require_cmd ip ethtool devlink

STILL=1		# seconds a left ring is watched for progress
MORE=10		# packets injected behind a left ring
PERIOD_DEF=50000

ktap_plan 14

# setup REARM MASKED: one silent ring pair, the watchdog's periodic tick off
setup()
{
	octep_load && octep_new 0 1 && octep_knob rearm "$1" || return 1
	sysctl -qw "net.ipv6.conf.$HOST_IF.disable_ipv6=1" || return 1
	ip link set "$HOST_IF" up || return 1
	sim_write masked "$2" || return 1
	devlink dev param set "$DL_DEV" name rxwd_period_us value 0 \
		cmode runtime || return 1
	# The rx_stall health check would find a left ring within 1 s and
	# recover it: report only, so that what the exit does is what shows.
	devlink health set "$DL_DEV" reporter rx_stall auto_recover false ||
		return 1
	# the poll the link's resume scheduled has completed
	wait_for 5 sh -c "[ \"\$(cat $SIM_DBG/ring0/out_int_ena)\" = 1 ]"
}

teardown()
{
	octep_del 0
	octep_unload
}

# taken: packets the host has taken from the ring (to the stack or dropped)
taken()
{
	echo $(($(dev_stat "$HOST_IF" rx_packets) +
		$(rx_ring_drops "$HOST_IF") + $(stat "$HOST_IF" rx_resync)))
}

ring_empty()
{
	[ "$(sim_read ring0/out_count)" = 0 ] &&
	[ "$(taken)" = "$(sim_read ring0/out_pkts)" ]
}

# trigger: arm the fault, inject one packet; waits until the block has
# written both (the injected one, and the one before the enable)
trigger()
{
	local want=$(($(sim_read ring0/out_pkts) + 2))

	sim_write ring0/arrive_on_enable 1 &&
	echo 1 >"$SIM_DBG/ring0/inject" &&
	wait_for 5 sh -c "[ \$(cat $SIM_DBG/ring0/out_pkts) -ge $want ]"
}

diag()
{
	ktap_diag "$1: model out_pkts $(sim_read ring0/out_pkts) out_count $(sim_read ring0/out_count) arrived_on_enable $(sim_read ring0/arrived_on_enable) irq_masked_dropped $(sim_read ring0/irq_masked_dropped) irq_latched $(sim_read ring0/irq_latched); driver taken $(taken), interrupts $(irq_count "$HOST_IF"), oq_rearm_resched $(stat "$HOST_IF" oq_rearm_resched), rxwd_rescues $(stat "$HOST_IF" rxwd_rescues)"
}

# ---------------------------------------------------------------- control

check "rearm=none, masked=latch: one silent ring, no periodic tick" \
	setup none latch || ktap_finish
check "the block counts a packet just before the enable" trigger
wait_for 5 ring_empty
diag "rearm=none masked=latch"
ring_empty && [ "$(sim_read ring0/irq_latched)" -gt 0 ] &&
	ktap_ok "rearm=none, masked=latch: the latched crossing is sent, the ring emptied" ||
	ktap_fail "rearm=none, masked=latch: the latched crossing is sent, the ring emptied"
teardown

# ---------------------------------------------------------------- old exit

check "rearm=none, masked=drop: the same" setup none drop || ktap_finish
check "the block counts a packet just before the enable" trigger
sleep "$STILL"
diag "rearm=none masked=drop"
c0=$(sim_read ring0/out_count) t0=$(taken)
[ "$c0" -gt 0 ] && [ "$(sim_read ring0/irq_masked_dropped)" -gt 0 ] &&
	ktap_ok "rearm=none, masked=drop: its crossing is dropped, the ring is left" \
		"$c0 counted" ||
	ktap_fail "rearm=none, masked=drop: its crossing is dropped, the ring is left" \
		"out_count $c0, irq_masked_dropped $(sim_read ring0/irq_masked_dropped)"
echo "$MORE" >"$SIM_DBG/ring0/inject"
sleep "$STILL"
c1=$(sim_read ring0/out_count) t1=$(taken)
[ "$c1" = $((c0 + MORE)) ] && [ "$t1" = "$t0" ] &&
	ktap_ok "rearm=none, masked=drop: $MORE more packets pile up, nobody takes them" ||
	ktap_fail "rearm=none, masked=drop: $MORE more packets pile up, nobody takes them" \
		"out_count $c0 -> $c1, taken $t0 -> $t1"
r0=$(stat "$HOST_IF" rxwd_rescues)
devlink dev param set "$DL_DEV" name rxwd_period_us value "$PERIOD_DEF" \
	cmode runtime
if wait_for 5 ring_empty && [ "$(stat "$HOST_IF" rxwd_rescues)" -gt "$r0" ]; then
	ktap_ok "rearm=none, masked=drop: only the watchdog's period rescues it"
else
	ktap_fail "rearm=none, masked=drop: only the watchdog's period rescues it" \
		"out_count $(sim_read ring0/out_count), rxwd_rescues $r0 -> $(stat "$HOST_IF" rxwd_rescues)"
fi
teardown

# ---------------------------------------------------------------- default

check "default (rearm=reread), masked=drop: the same" \
	setup reread drop || ktap_finish
check "debugfs: rearm is reread" grep -qx reread "$DRV_DBG/rearm"
check "the block counts a packet just before the enable" trigger
wait_for 5 ring_empty
diag "rearm=reread masked=drop"
[ "$(sim_read ring0/irq_masked_dropped)" -gt 0 ] &&
	ktap_ok "the block dropped its crossing" ||
	ktap_fail "the block dropped its crossing" "irq_masked_dropped 0"
ring_empty && [ "$(stat "$HOST_IF" oq_rearm_resched)" -gt 0 ] &&
	ktap_ok "rearm=reread: the re-read finds it, the ring is emptied" ||
	ktap_fail "rearm=reread: the re-read finds it, the ring is emptied" \
		"out_count $(sim_read ring0/out_count), oq_rearm_resched $(stat "$HOST_IF" oq_rearm_resched)"
want=$(($(sim_read ring0/out_pkts) + MORE))
echo "$MORE" >"$SIM_DBG/ring0/inject"
wait_for 5 sh -c "[ \$(cat $SIM_DBG/ring0/out_pkts) -ge $want ]"
wait_for 5 ring_empty &&
	ktap_ok "rearm=reread: later packets are taken too, with no watchdog" ||
	ktap_fail "rearm=reread: later packets are taken too, with no watchdog" \
		"out_count $(sim_read ring0/out_count), taken $(taken), out_pkts $(sim_read ring0/out_pkts)"
teardown

ktap_finish
