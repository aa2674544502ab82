#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# resend=1 (diagnostic): a completed visit writes OUT_CNTS RESEND (bit 59)
# after the count, as octeon_ep does. One TCP stream from the peer to the
# host runs clean, and the driver counts exactly the RESEND writes the
# block saw. With resend=0 no RESEND is written.

source "$(dirname "$0")/lib.sh"
require_cmd ip iperf3 ethtool python3

SECS=5
VISIT_STALLS_MAX=16	# as rx_visit_pass.sh, which measured it

ktap_plan 9

# stream: one stream peer -> host; prints the received Mbit/s.
stream()
{
	iperf3 -s -D -1 --logfile /dev/null
	wait_for 10 sh -c "ss -ltn | grep -q ':5201 '"
	in_peer timeout $((SECS + 30)) iperf3 -c "$HOST_IP4" -t "$SECS" -J \
		--connect-timeout 10000 2>/dev/null | iperf_rate
}

# counts: "driver block", the RESEND writes each counted, read so that
# no visit completes between them. A visit writes RESEND, then counts it;
# one completing between a lone pair of reads (a late ACK, neighbour
# traffic) made them differ by one. The block is read between two equal
# reads of the driver's count.
counts()
{
	local d1 b d2 i

	for ((i = 0; i < 50; i++)); do
		d1=$(stat "$HOST_IF" resend)
		b=$(sim_read ring0/resend_writes)
		d2=$(stat "$HOST_IF" resend)
		[ "$d1" = "$d2" ] && break
		sleep 0.1
	done
	echo "$d1 $b"
}

check "modules load with resend=1" octep_load resend=1 || ktap_finish
check "device 0 with 1 ring" octep_new 0 1 || ktap_finish
check "peer namespace behind the wire" peer_setup || ktap_finish
rate=$(stream)
[ "$rate" -gt 0 ] && ktap_ok "resend=1: the stream completes" "$rate Mbit/s" ||
	ktap_fail "resend=1: the stream completes" "${rate:-no} Mbit/s"
sleep 0.5
read -r drv blk <<<"$(counts)"
ktap_diag "driver resend $drv, block RESEND writes $blk, rxwd_stalls $(stat "$HOST_IF" rxwd_stalls), interrupts $(irq_count "$HOST_IF")"
[ "$drv" -gt 0 ] && ktap_ok "resend counted" "resend $drv" ||
	ktap_fail "resend counted" "resend $drv"
[ "$drv" -eq "$blk" ] && ktap_ok "the block saw every RESEND counted" "block $blk" ||
	ktap_fail "the block saw every RESEND counted" "driver $drv, block $blk"
s=$(stat "$HOST_IF" rxwd_stalls)
[ "$s" -le "$VISIT_STALLS_MAX" ] && ktap_ok "rxwd_stalls <= $VISIT_STALLS_MAX" "rxwd_stalls $s" ||
	ktap_fail "rxwd_stalls <= $VISIT_STALLS_MAX" "rxwd_stalls $s"

peer_teardown
octep_del 0
octep_unload
check "modules load with resend=0" octep_load resend=0 || ktap_finish
octep_new 0 1 && peer_setup
rate=$(stream)
blk=$(sim_read ring0/resend_writes)
[ "$rate" -gt 0 ] && [ "$blk" -eq 0 ] && [ "$(stat "$HOST_IF" resend)" -eq 0 ] &&
	ktap_ok "resend=0: no RESEND written" "$rate Mbit/s" ||
	ktap_fail "resend=0: no RESEND written" "block $blk, rate $rate"

ktap_finish
