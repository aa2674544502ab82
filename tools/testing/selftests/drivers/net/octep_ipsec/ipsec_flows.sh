#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# devlink ipsec_flows: 0, the host carries every association (offload is
# refused with a message: crypto requests fall back to software ESP over
# our netdev, packet requests fail); a value above 2 is refused. The
# clear-text probe: with a policy that requires ESP inbound, clear-text
# datagrams from the peer reach no socket on the host in any setting (and
# without the policy they all do: the probe can tell). Changing the setting
# with states installed strands nothing: they keep working in the block
# until deleted, and deleting them empties the block's table.

source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/ipsec_lib.inc"
require_cmd ip ethtool devlink python3

PROBES=20
ktap_plan 23

ipsec_prepare
check "modules load" octep_load || ktap_finish
check "device 0" octep_new 0 1 || ktap_finish
check "peer namespace behind the wire" peer_setup || ktap_finish
ipsec_case transport 4

out=$(ipsec_flows 3 2>&1)
if [ $? -ne 0 ] && grep -q "ipsec_flows is 0 (the host carries every association)" <<<"$out"; then
	ktap_ok "ipsec_flows=3 refused with a message"
else
	ktap_fail "ipsec_flows=3 refused with a message" "$out"
fi

n=$(udp_probe "$PEER_IP4" "$HOST_IP4" 5555 "$PROBES")
[ "$n" = "$PROBES" ] && ktap_ok "control: without policies the clear datagrams arrive" "got $n/$PROBES" ||
	ktap_fail "control: without policies the clear datagrams arrive" "got $n/$PROBES"

# --- flows 0: refused with a message, software ESP over our netdev
ipsec_flows 0
out=$(ipsec_host_sa out transport crypto)
if grep -q "Warning: octep_ipsec: ipsec_flows=0: the host carries all states, no offload" <<<"$out" &&
   ! ipsec_offloaded "$IPSEC_SPI_OUT" "$O_H" "$O_P" &&
   ip xfrm state get src "$O_H" dst "$O_P" proto esp spi "$IPSEC_SPI_OUT" >/dev/null 2>&1; then
	ktap_ok "flows=0: crypto offload refused with a message, state in software"
else
	ktap_fail "flows=0: crypto offload refused with a message, state in software" "$out"
fi
out=$(ipsec_host_sa in transport packet)
if grep -q "Error: octep_ipsec: ipsec_flows=0: the host carries all states, no offload" <<<"$out" &&
   ! ip xfrm state get src "$O_P" dst "$O_H" proto esp spi "$IPSEC_SPI_IN" >/dev/null 2>&1; then
	ktap_ok "flows=0: packet offload refused with a message"
else
	ktap_fail "flows=0: packet offload refused with a message" "$out"
fi
out=$(ipsec_host_pol out transport packet)
grep -q "Error: octep_ipsec: ipsec_flows=0: the host carries all policies, no offload" <<<"$out" &&
	ktap_ok "flows=0: policy offload refused with a message" ||
	ktap_fail "flows=0: policy offload refused with a message" "$out"
ipsec_host_sa in transport none >/dev/null
ipsec_host_pol out transport none >/dev/null
ipsec_host_pol in transport none >/dev/null
ipsec_peer transport
tx0=$(stat "$HOST_IF" ipsec_tx_packets) rx0=$(stat "$HOST_IF" ipsec_rx_packets)
check "flows=0: ping 5/5 over software ESP" ping_ok "$PEER_IP4" 5
tx1=$(stat "$HOST_IF" ipsec_tx_packets) rx1=$(stat "$HOST_IF" ipsec_rx_packets)
pk=$(peer_sa_packets "$IPSEC_SPI_OUT")
if [ -n "$tx0" ] && [ -n "$rx0" ] && [ "$tx1" = "$tx0" ] &&
   [ "$rx1" = "$rx0" ] && [ "${pk:-0}" -ge 5 ]; then
	ktap_ok "flows=0: the block carried nothing" "the peer's ESP state $pk packets"
else
	ktap_fail "flows=0: the block carried nothing" "block tx $((tx1 - tx0)) rx $((rx1 - rx0)), peer $pk"
fi

# --- the clear-text probe, in every setting
probe()
{
	local n

	n=$(udp_probe "$PEER_IP4" "$HOST_IP4" 5555 "$PROBES")
	[ "$n" = 0 ] && ktap_ok "$1: clear-text probe: 0/$PROBES got through" ||
		ktap_fail "$1: clear-text probe: 0/$PROBES got through" "got $n"
}
probe "flows=0"
for flows in 1 2; do
	ipsec_flush
	ipsec_flows "$flows"
	in=crypto
	[ "$flows" = 1 ] && in=none
	ipsec_host_sa out transport crypto >/dev/null
	ipsec_host_sa in transport "$in" >/dev/null
	ipsec_host_pol out transport none >/dev/null
	ipsec_host_pol in transport none >/dev/null
	ipsec_peer transport
	check "flows=$flows crypto: ping 5/5" ping_ok "$PEER_IP4" 5
	probe "flows=$flows crypto"
done
ipsec_flush
for h in out in; do ipsec_host_sa $h transport packet >/dev/null; done
for h in out in; do ipsec_host_pol $h transport packet >/dev/null; done
ipsec_peer transport
check "flows=2 packet: ping 5/5" ping_ok "$PEER_IP4" 5
probe "flows=2 packet"

# --- a change with states installed strands nothing
ipsec_flush
ipsec_flows 2
ipsec_host_sa out transport crypto >/dev/null
ipsec_host_sa in transport crypto >/dev/null
ipsec_host_pol out transport none >/dev/null
ipsec_host_pol in transport none >/dev/null
ipsec_peer transport
ping_ok "$PEER_IP4" 2
ipsec_flows 0
tx0=$(stat "$HOST_IF" ipsec_tx_packets) rx0=$(stat "$HOST_IF" ipsec_rx_packets)
check "2 -> 0 with states installed: ping 5/5" ping_ok "$PEER_IP4" 5
tx1=$(stat "$HOST_IF" ipsec_tx_packets) rx1=$(stat "$HOST_IF" ipsec_rx_packets)
if [ $((tx1 - tx0)) -ge 5 ] && [ $((rx1 - rx0)) -ge 5 ] &&
   ipsec_offloaded "$IPSEC_SPI_OUT" "$O_H" "$O_P" &&
   ipsec_offloaded "$IPSEC_SPI_IN" "$O_P" "$O_H"; then
	ktap_ok "2 -> 0: the installed states stay in the block" "tx $((tx1 - tx0)) rx $((rx1 - rx0))"
else
	ktap_fail "2 -> 0: the installed states stay in the block" "tx $((tx1 - tx0)) rx $((rx1 - rx0))"
fi
out=$(IPSEC_SPI_OUT=0x1002 ipsec_host_sa out transport crypto)
grep -q "Warning: octep_ipsec: ipsec_flows=0" <<<"$out" &&
	ktap_ok "2 -> 0: a new request is refused with a message" ||
	ktap_fail "2 -> 0: a new request is refused with a message" "$out"
[ "$(stat "$HOST_IF" ipsec_states)" = 2 ] && ktap_ok "2 -> 0: two states offloaded" ||
	ktap_fail "2 -> 0: two states offloaded" "ipsec_states $(stat "$HOST_IF" ipsec_states)"
ipsec_flush
wait_for 10 sh -c "grep -q 'in 0 out 0' $SIM_DBG/ipsec/flows" &&
[ "$(stat "$HOST_IF" ipsec_states)" = 0 ] &&
	ktap_ok "deleting them empties the block's table" ||
	ktap_fail "deleting them empties the block's table" "$(sim_read ipsec/flows)"
kernel_log_clean "no kernel warnings"
ktap_finish
