#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# On-demand tunnels: packet-offload policies with no state yet (what an IKE
# daemon's trap policy is) and a key manager listening for acquires. The
# first packet makes the stack add a larval state on our device: it must
# be accepted with no key and nothing in the block, the acquire must reach
# the key manager and the packet must be dropped (counted), not sent in
# clear. The larval state expires without touching the block; the next
# packet asks again; the negotiated states then replace the larval one and
# traffic flows through the block. No splat anywhere (also run on the
# debug kernel).

source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/ipsec_lib.inc"
require_cmd ip ethtool devlink python3 sysctl

ktap_plan 15

ipsec_prepare
check "modules load" octep_load || ktap_finish
check "device 0" octep_new 0 1 || ktap_finish
check "peer namespace behind the wire" peer_setup || ktap_finish
ipsec_case transport 4

# A larval state lives xfrm_acq_expires seconds (30 by default): long
# enough to look at it and replace it under TCG, on the debug kernel on a
# loaded host too (10 s was not: gone before the look), short enough to
# wait for.
acq_expires=$(sysctl -n net.core.xfrm_acq_expires)
on_exit sysctl -qw "net.core.xfrm_acq_expires=$acq_expires"
sysctl -qw net.core.xfrm_acq_expires=20

# acquire_listening: a NETLINK_XFRM socket subscribed to a group exists.
acquire_listening()
{
	awk '$2 == 6 && $4 != "00000000" { found = 1 } END { exit !found }' \
		/proc/net/netlink
}

# acquired N: the key manager has printed N acquires (or more) for traffic
# to the peer (counted by their selector line: ip prints it after the
# "acquire" line, and may not have yet).
acquired()
{
	[ "$(grep -c "^  sel src $O_H/$PL dst $O_P/$PL " "$mon")" -ge "$1" ]
}

# larval: the host's state with no SPI yet, as ip(8) prints it.
larval()
{
	ip xfrm state | grep -A3 "^src $O_H dst $O_P" | grep -q "spi 0x00000000"
}

larval_gone()
{
	! larval
}

if out=$(ipsec_host_pol out transport packet 2>&1 &&
	 ipsec_host_pol in transport packet 2>&1); then
	ktap_ok "packet-offload policies with no state"
else
	ktap_fail "packet-offload policies with no state" "$out"
	ktap_finish
fi
ipsec_peer transport

mon=$(mktemp)
on_exit rm -f "$mon"
stdbuf -oL ip xfrm monitor acquire >"$mon" 2>&1 &
on_exit kill $!
wait_for 10 acquire_listening

ns0=$(xfrm_stat XfrmOutNoStates)
# The oops this guards against left ping in D state: bound the wait.
timeout 20 ping -q -c 1 -W 2 "$O_P" >/dev/null 2>&1 &
ping_pid=$!
if wait_for 15 acquired 1; then
	ktap_ok "the first packet sends the key manager an acquire"
else
	ktap_fail "the first packet sends the key manager an acquire" \
		"monitor: $(cat "$mon")"
fi
if larval && ip xfrm state | grep -q "dev $HOST_IF " &&
   [ "$(stat "$HOST_IF" ipsec_states)" = 0 ] &&
   grep -q "in 0 out 0" "$SIM_DBG/ipsec/flows"; then
	ktap_ok "the larval state is on the device, nothing in the block"
else
	ktap_fail "the larval state is on the device, nothing in the block" \
		"$(ip xfrm state; sim_read ipsec/flows)"
fi
wait "$ping_pid"
ping_rc=$?
ns1=$(xfrm_stat XfrmOutNoStates)
peer=$(peer_sa_packets "$IPSEC_SPI_OUT")
if [ "$ping_rc" -ne 0 ] && [ "$ns1" -gt "$ns0" ] && [ "$peer" = 0 ]; then
	ktap_ok "the packet is dropped and counted (XfrmOutNoStates), nothing reaches the peer"
else
	ktap_fail "the packet is dropped and counted (XfrmOutNoStates), nothing reaches the peer" \
		"ping exit $ping_rc, XfrmOutNoStates $ns0 -> $ns1, peer $peer"
fi

if wait_for 30 larval_gone; then
	ktap_ok "the unanswered acquire expires"
else
	ktap_fail "the unanswered acquire expires" "$(ip xfrm state)"
fi

timeout 20 ping -q -c 1 -W 2 "$O_P" >/dev/null 2>&1 &
if wait_for 15 acquired 2 && larval; then
	ktap_ok "the next packet asks again"
else
	ktap_fail "the next packet asks again" "$(cat "$mon"; ip xfrm state)"
fi

# What the key manager installs once negotiated.
if out=$(ipsec_host_sa in transport packet 2>&1 &&
	 ipsec_host_sa out transport packet 2>&1); then
	ktap_ok "the negotiated states are added"
else
	ktap_fail "the negotiated states are added" "$out"
fi
if ! larval && ipsec_offloaded "$IPSEC_SPI_OUT" "$O_H" "$O_P" &&
   wait_for 10 grep -q "in 1 out 1" "$SIM_DBG/ipsec/flows"; then
	ktap_ok "they replace the larval state and are in the block"
else
	ktap_fail "they replace the larval state and are in the block" \
		"$(ip xfrm state; sim_read ipsec/flows)"
fi

tx0=$(stat "$HOST_IF" ipsec_tx_packets)
check "ping 5/5 through the tunnel" ping_ok "$O_P" 5
tx1=$(stat "$HOST_IF" ipsec_tx_packets)
peer=$(peer_sa_packets "$IPSEC_SPI_OUT")
if [ $((tx1 - tx0)) -ge 5 ] && [ "$peer" -ge 5 ]; then
	ktap_ok "the block encapsulated them, the peer decrypted them"
else
	ktap_fail "the block encapsulated them, the peer decrypted them" \
		"ipsec_tx_packets +$((tx1 - tx0)), peer's state $peer packets"
fi

ipsec_flush
check "the block's table is empty after the flush" \
	wait_for 10 grep -q "in 0 out 0" "$SIM_DBG/ipsec/flows"
kernel_log_clean "no kernel warnings"
ktap_finish
