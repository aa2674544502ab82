#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# ESN: both directions offloaded (crypto, then packet offload), sequence
# numbers started just below 2^32, so that 20 pings each way cross into
# the next 2^32 (the high half, never on the wire, is in the ICV): every
# ping is answered and the peer's software states, which checked every
# ICV, end with seq-hi 1 both ways (its in state's seq-hi is the block's
# out). The host's window moving (advance_esn, on every packet received
# with crypto offload) costs the mailbox no request per packet: only the
# new high half is the block's news.

source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/ipsec_lib.inc"
require_cmd ip ethtool devlink python3

START=$((0xfffffff6))	# 10 packets below the boundary
ktap_plan 11

ipsec_prepare
check "modules load" octep_load || ktap_finish
check "device 0" octep_new 0 1 || ktap_finish
check "peer namespace behind the wire" peer_setup || ktap_finish
ipsec_case transport 4

esn=(flag esn replay-window 32)
for type in crypto packet; do
	ipsec_flush
	if [ "$type" = crypto ]; then
		ipsec_host_sa in transport crypto "${esn[@]}" replay-seq "$START" >/dev/null
		ipsec_host_sa out transport crypto "${esn[@]}" replay-oseq "$START" >/dev/null
	else
		ipsec_host_sa in transport packet --esn --replay 32 --seq "$START" >/dev/null
		ipsec_host_sa out transport packet --esn --replay 32 --oseq "$START" >/dev/null
	fi
	ipsec_host_pol out transport "$type" >/dev/null
	ipsec_host_pol in transport "$type" >/dev/null
	ipsec_peer transport "${esn[@]}" replay-seq "$START" replay-oseq "$START"
	if ipsec_offloaded "$IPSEC_SPI_OUT" "$O_H" "$O_P" &&
	   ipsec_offloaded "$IPSEC_SPI_IN" "$O_P" "$O_H"; then
		ktap_ok "$type: ESN states offloaded both ways"
	else
		ktap_fail "$type: ESN states offloaded both ways" "$(ip xfrm state)"
	fi
	req0=$(stat "$HOST_IF" mbox_requests)
	check "$type: 20 pings across 2^32, all answered" ping_ok "$PEER_IP4" 20
	# Packet offload's counters are read over the mailbox every second.
	if [ "$type" = crypto ]; then
		req=$(($(stat "$HOST_IF" mbox_requests) - req0))
		[ "$req" -le 2 ] &&
			ktap_ok "$type: at most 2 mailbox requests for 20 packets received" ||
			ktap_fail "$type: at most 2 mailbox requests for 20 packets received" \
				"$req requests"
	fi
	# The peer's software states moved to the next 2^32 both ways.
	hi=$(in_peer ip xfrm state | grep -cE "^\s*seq-hi 0x1,|oseq-hi 0x1,")
	[ "$hi" = 2 ] && ktap_ok "$type: the peer's ESN moved to seq-hi 1 both ways" ||
		ktap_fail "$type: the peer's ESN moved to seq-hi 1 both ways" \
			"$(in_peer ip xfrm state | grep -i esn)"
done
ipsec_flush
kernel_log_clean "no kernel warnings"
ktap_finish
