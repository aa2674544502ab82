#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# What the flow table cannot do is refused with a precise extack message
# (checked word for word), and nothing is left in the block: an ICV other
# than 128 bits, AES-192, authenticated (non-AEAD) states, a replay window
# above 1024, UDP encapsulation, BEET mode. AES-256 and ESN are accepted.
# The mailbox: a command the coprocessor fails or never answers is refused
# with its own message and counted on both sides; a full table says so.

source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/ipsec_lib.inc"
require_cmd ip ethtool devlink python3

ktap_plan 18

ipsec_prepare
check "modules load" octep_load || ktap_finish
check "device 0" octep_new 0 1 || ktap_finish
check "peer namespace behind the wire" peer_setup || ktap_finish
ipsec_case transport 4
spi=0x3000

# refused MSG ARGS...: an offloaded outbound state with ARGS fails with
# "Error: octep_ipsec: MSG" and is not installed.
refused()
{
	local msg=$1 out

	shift
	spi=$((spi + 1))
	out=$(ip xfrm state add src "$O_H" dst "$O_P" proto esp spi "$spi" \
		reqid 1 "$@" offload dev "$HOST_IF" dir "${DIR:-out}" 2>&1)
	if [ $? -ne 0 ] && grep -qF "Error: octep_ipsec: $msg" <<<"$out" &&
	   ! ip xfrm state get src "$O_H" dst "$O_P" proto esp spi "$spi" \
		>/dev/null 2>&1; then
		ktap_ok "refused: $msg"
	else
		ktap_fail "refused: $msg" "$out"
	fi
}

GCM="aead rfc4106(gcm(aes))"
refused "ICV of 64 bits: only 128 can be offloaded" \
	mode transport $GCM "$IPSEC_K128" 64
refused "AES-192 key: only AES-128 and AES-256 (+ salt) can be offloaded" \
	mode transport $GCM 0x0123456789abcdef0123456789abcdef0123456789abcdef01234567 128
refused "Cannot offload authenticated xfrm states: use AEAD rfc4106(gcm(aes))" \
	mode transport enc 'cbc(aes)' 0x0123456789abcdef0123456789abcdef \
	auth 'hmac(sha256)' 0x0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef
DIR=in refused "Replay window of 2048 packets: the flow table allows 1024" \
	mode transport flag esn replay-window 2048 $GCM "$IPSEC_K128" 128
refused "Cannot offload UDP-encapsulated (NAT-T) ESP: the flow table carries plain ESP only" \
	mode transport encap espinudp 4500 4500 0.0.0.0 $GCM "$IPSEC_K128" 128
refused "Only transport and tunnel mode xfrm states can be offloaded" \
	mode beet $GCM "$IPSEC_K128" 128

out=$(ip xfrm state add src "$O_H" dst "$O_P" proto esp spi 0x3100 reqid 1 \
	mode transport flag esn replay-window 64 $GCM "$IPSEC_K256" 128 \
	offload dev "$HOST_IF" dir out 2>&1)
if ipsec_offloaded 0x3100 "$O_H" "$O_P" &&
   grep -q "in 0 out 1" "$SIM_DBG/ipsec/flows"; then
	ktap_ok "accepted: AES-256 with ESN, in the block"
else
	ktap_fail "accepted: AES-256 with ESN, in the block" "$out $(sim_read ipsec/flows)"
fi
ip xfrm state flush
wait_for 10 grep -q "in 0 out 0" "$SIM_DBG/ipsec/flows" &&
	ktap_ok "nothing refused is left in the block" ||
	ktap_fail "nothing refused is left in the block" "$(sim_read ipsec/flows)"

# --- the mailbox
sim_write ipsec/mbox_timeout_next 1
t0=$(stat "$HOST_IF" mbox_timeouts)
refused "The coprocessor did not answer the flow add within 3000 ms" \
	mode transport $GCM "$IPSEC_K128" 128
t1=$(stat "$HOST_IF" mbox_timeouts)
[ $((t1 - t0)) = 1 ] && [ "$(sim_read ipsec/mbox_timedout)" = 1 ] &&
	ktap_ok "the timeout is counted by driver and block" ||
	ktap_fail "the timeout is counted by driver and block" \
		"driver $((t1 - t0)), block $(sim_read ipsec/mbox_timedout)"
sim_write ipsec/mbox_fail_next 1
e0=$(stat "$HOST_IF" mbox_errors)
refused "The coprocessor refused the flow add (-5)" \
	mode transport $GCM "$IPSEC_K128" 128
e1=$(stat "$HOST_IF" mbox_errors)
[ $((e1 - e0)) = 1 ] && [ "$(sim_read ipsec/mbox_failed)" = 1 ] &&
	ktap_ok "the failure is counted by driver and block" ||
	ktap_fail "the failure is counted by driver and block" \
		"driver $((e1 - e0)), block $(sim_read ipsec/mbox_failed)"
sim_write ipsec/capacity_out 1
ip xfrm state add src "$O_H" dst "$O_P" proto esp spi 0x3200 reqid 1 \
	mode transport $GCM "$IPSEC_K128" 128 offload dev "$HOST_IF" dir out
refused "The coprocessor's flow table is full (flow add)" \
	mode transport $GCM "$IPSEC_K128" 128
sim_write ipsec/capacity_out 4096
ip xfrm state flush
wait_for 10 grep -q "in 0 out 0" "$SIM_DBG/ipsec/flows" &&
	ktap_ok "the table is empty after the flush" ||
	ktap_fail "the table is empty after the flush" "$(sim_read ipsec/flows)"
kernel_log_clean "no kernel warnings"
ktap_finish
