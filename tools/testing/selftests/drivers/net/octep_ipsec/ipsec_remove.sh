#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Removal with packet offload and live TCP flows: with
# packet-offload states and policies for both directions and two TCP
# streams each way running through them, `rmmod octep_ipsec`, then (the
# driver loaded again) `del_device` of the model's device, then on a second
# device a surprise removal (the block reads all ones, then del_device; no
# mailbox request waits out its timeout). Each used to
# block in unregister_netdevice ("waiting for eth0 to become free") for
# 30 s to minutes, until the flows' sockets were closed.
#
# Asserted, for each: the states were offloaded and the flows ran through
# the block; the removal finished within REMOVE_MAX (10) seconds (25 on
# the debug kernel); the flows' sockets were still open when it had
# (else the case would prove nothing); no offloaded state or policy is
# left. And a clean kernel log,
# which dmesg-scan holds to no "unregister_netdevice: waiting" line.

source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/ipsec_lib.inc"
require_cmd ip iperf3 ethtool devlink python3

REMOVE_MAX=10
# The debug kernel (KASAN, kmemleak) under TCG took 7.6 to 17.8 s for
# these removals beside two other guests: what this bound catches, a
# removal that waits for the flows' sockets, still meets REMOVE_GIVE_UP.
[ -e /sys/kernel/debug/kmemleak ] && REMOVE_MAX=25
# Past this a removal counts as hung: the flows are killed to let it end.
REMOVE_GIVE_UP=40

ktap_plan 20

ipsec_prepare
check "modules load" octep_load || ktap_finish
check "device 0 with 2 rings" octep_new 0 2 || ktap_finish
check "peer namespace behind the wire" peer_setup || ktap_finish

TMPD=$(mktemp -d)
on_exit "rm -rf $TMPD"
on_exit "pkill -x iperf3; in_peer pkill -x iperf3"

# flows_start: two TCP streams each way through the associations, for
# longer than the test runs; sets CLIENTS.
flows_start()
{
	iperf3 -s -D --logfile /dev/null
	in_peer iperf3 -s -D --logfile /dev/null
	wait_for 10 sh -c "ss -ltn | grep -q ':5201 '"
	wait_for 10 in_peer sh -c "ss -ltn | grep -q ':5201 '"
	iperf3 -c "$PEER_IP4" -P 2 -t 600 --connect-timeout 10000 \
		>/dev/null 2>&1 &
	CLIENTS=$!
	in_peer iperf3 -c "$HOST_IP4" -P 2 -t 600 --connect-timeout 10000 \
		>/dev/null 2>&1 &
	CLIENTS="$CLIENTS $!"
}

flows_stop()
{
	pkill -x iperf3
	in_peer pkill -x iperf3
	# shellcheck disable=SC2086 # two pids
	wait $CLIENTS 2>/dev/null
}

# host_tcp: the host's established TCP connections to or from the peer.
host_tcp()
{
	ss -Htn state established dst "$PEER_IP4" | wc -l
}

# removal WHAT CMD...: packet offload both ways, the flows, then CMD timed.
removal()
{
	local what=$1 out pid t0 dt tx0 rx0 tx rx hung=0 n

	shift
	ipsec_flush
	ipsec_case transport 4
	out=$(ipsec_install transport packet 2)
	tx0=$(stat "$HOST_IF" ipsec_tx_packets)
	rx0=$(stat "$HOST_IF" ipsec_rx_packets)
	flows_start
	sleep 4
	tx=$(($(stat "$HOST_IF" ipsec_tx_packets) - tx0))
	rx=$(($(stat "$HOST_IF" ipsec_rx_packets) - rx0))
	if ipsec_both_offloaded && [ "$tx" -gt 0 ] && [ "$rx" -gt 0 ]; then
		ktap_ok "$what: packet offload both ways, flows through the block" "block tx +$tx rx +$rx"
	else
		ktap_fail "$what: packet offload both ways, flows through the block" \
			"block tx +$tx rx +$rx; $out"
	fi

	t0=$EPOCHREALTIME
	"$@" &
	pid=$!
	if ! wait_for "$REMOVE_GIVE_UP" sh -c "! kill -0 $pid"; then
		hung=1
		n=$(host_tcp)
		flows_stop
	fi
	wait "$pid"
	dt=$(awk -v a="$t0" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.1f", b - a }')
	[ "$hung" = 0 ] && n=$(host_tcp)
	if [ "$hung" = 0 ] && awk -v d="$dt" -v m="$REMOVE_MAX" 'BEGIN { exit !(d < m) }'; then
		ktap_ok "$what under live flows took < $REMOVE_MAX s" "$dt s"
	else
		ktap_fail "$what under live flows took < $REMOVE_MAX s" \
			"$dt s$([ "$hung" = 1 ] && echo ", still blocked after $REMOVE_GIVE_UP s: the flows were killed")"
	fi
	[ "$n" -gt 0 ] && ktap_ok "$what: the flows' sockets outlived the device" "$n connections" ||
		ktap_fail "$what: the flows' sockets outlived the device" \
			"no established connection left: the case did not test a removal under live sockets"
	flows_stop
	if ! ip xfrm state | grep -q "offload parameters" &&
	   ! ip xfrm policy | grep -q "offload parameters"; then
		ktap_ok "$what: no offloaded state or policy is left"
	else
		ktap_fail "$what: no offloaded state or policy is left" \
			"$(ip xfrm state; ip xfrm policy)"
	fi
}

removal "rmmod octep_ipsec" rmmod octep_ipsec

# The driver back on the same device, the host's address on its netdev.
rebind()
{
	local d=/sys/bus/octep_sim/devices/octep_sim0/octep_sim.sdp.0/net

	lib_insmod octep_ipsec &&
	wait_for "$OCTEP_WAIT" lib_one_netdev "$d" || return 1
	HOST_IF=$(lib_one_netdev "$d")
	ipsec_flush
	ip addr add "$HOST_IP4/24" dev "$HOST_IF" &&
	ip link set "$HOST_IF" up &&
	wait_for "$OCTEP_WAIT" ping -c 1 -W 1 "$PEER_IP4"
}
check "octep_ipsec loaded again, ping" rebind || ktap_finish

removal "del_device" octep_del 0

# A surprise removal: the block drops off the bus under the flows (the
# model's surprise fault: the host reads all ones, nothing answers), a
# second later the device goes away. The mailbox fails at once when it
# reads all ones, so no request is left to time out (each of the deletes
# and stats polls did: 7.8 s, three "got no response").
surprise()
{
	echo 1 >"$SIM_DBG/surprise" && sleep 1 && octep_del 1
}
# mbox_log WHAT: kernel log lines of device 1's mailbox saying WHAT.
mbox_log()
{
	dmesg | grep -c "octep_sim.sdp.1: mailbox.*$1"
}
peer_teardown
check "device 1 with 2 rings" octep_new 1 2 || ktap_finish
check "peer namespace behind its wire" peer_setup || ktap_finish
t0=$(mbox_log "got no response")
removal "surprise removal" surprise
timeouts=$(($(mbox_log "got no response") - t0))
if [ "$timeouts" = 0 ] && [ "$(mbox_log "reads all ones")" -ge 1 ]; then
	ktap_ok "surprise removal: the mailbox saw the device gone, no request timed out"
else
	ktap_fail "surprise removal: the mailbox saw the device gone, no request timed out" \
		"$timeouts request(s) waited out the timeout; $(dmesg | grep 'sdp.1: mailbox' | tail -n 4)"
fi

ipsec_flush
kernel_log_clean "no kernel warnings"
ktap_finish
