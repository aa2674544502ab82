#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# What the flow table cannot do is refused with a precise extack message
# (checked word for word), and nothing is left in the block: an ICV other
# than 128 bits, AES-192, authenticated (non-AEAD) states, a replay window
# above 1024, UDP encapsulation (NAT-T) over IPv6, BEET mode. Software ESP can do all of
# these: a crypto-offload request falls back to it (the state is added
# without offload, the message a warning, as ip(8) and an IKE daemon's
# hw_offload=auto expect) and carries traffic; a packet-offload request
# fails with the message. AES-256 and ESN are accepted.
# The mailbox: a command the coprocessor fails or never answers is refused
# with its own message and counted on both sides; a full table says so.

source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/ipsec_lib.inc"
require_cmd ip ethtool devlink python3

ktap_plan 22

ipsec_prepare
check "modules load" octep_load || ktap_finish
check "device 0" octep_new 0 1 || ktap_finish
check "peer namespace behind the wire" peer_setup || ktap_finish
ipsec_case transport 4
spi=0x3000

K192=0x0123456789abcdef0123456789abcdef0123456789abcdef01234567

# offload_add ARGS...: add an outbound (DIR) crypto-offload state with ARGS
# and the next SPI; sets out (what ip printed) and rc (its status).
offload_add()
{
	spi=$((spi + 1))
	out=$(ip xfrm state add src "$O_H" dst "$O_P" proto esp spi "$spi" \
		reqid 1 "$@" offload dev "$HOST_IF" dir "${DIR:-out}" 2>&1)
	rc=$?
}

# added: the state offload_add asked for is installed.
added()
{
	ip xfrm state get src "$O_H" dst "$O_P" proto esp spi "$spi" \
		>/dev/null 2>&1
}

# refused MSG ARGS...: an offloaded outbound state with ARGS fails with
# "Error: octep_ipsec: MSG" and is not installed.
refused()
{
	local msg=$1

	shift
	offload_add "$@"
	if [ "$rc" -ne 0 ] && grep -qF "Error: octep_ipsec: $msg" <<<"$out" &&
	   ! added; then
		ktap_ok "refused: $msg"
	else
		ktap_fail "refused: $msg" "$out"
	fi
}

# fallback MSG ARGS...: the kernel falls back to software ESP: the state is
# installed without offload and ip prints "Warning: octep_ipsec: MSG".
fallback()
{
	local msg=$1

	shift
	offload_add "$@"
	if [ "$rc" -eq 0 ] && grep -qF "Warning: octep_ipsec: $msg" <<<"$out" &&
	   added && ! ipsec_offloaded "$spi" "$O_H" "$O_P"; then
		ktap_ok "software fallback: $msg"
	else
		ktap_fail "software fallback: $msg" \
			"exit $rc: $out; $(ip xfrm state get src "$O_H" \
				dst "$O_P" proto esp spi "$spi" 2>&1)"
	fi
}

# packet_refused MSG KEY ICV [XFRM_NL-OPTIONS...]: a packet-offload state
# (there is no fallback for it) fails with "Error: octep_ipsec: MSG".
packet_refused()
{
	local msg=$1

	shift
	spi=$((spi + 1))
	out=$(python3 "$XFRM_NL" state "$O_H" "$O_P" "$spi" 1 transport "$@" \
		--offload packet --dev "$HOST_IF" 2>&1)
	rc=$?
	if [ "$rc" -ne 0 ] && grep -qF "Error: octep_ipsec: $msg" <<<"$out" &&
	   ! added; then
		ktap_ok "packet offload refused: $msg"
	else
		ktap_fail "packet offload refused: $msg" "exit $rc: $out"
	fi
}

GCM="aead rfc4106(gcm(aes))"
fallback "ICV of 64 bits: only 128 can be offloaded" \
	mode transport $GCM "$IPSEC_K128" 64
fallback "AES-192 key: only AES-128 and AES-256 (+ salt) can be offloaded" \
	mode transport $GCM "$K192" 128
fallback "Cannot offload authenticated xfrm states: use AEAD rfc4106(gcm(aes))" \
	mode transport enc 'cbc(aes)' 0x0123456789abcdef0123456789abcdef \
	auth 'hmac(sha256)' 0x0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef
DIR=in fallback "Replay window of 2048 packets: the flow table allows 1024" \
	mode transport flag esn replay-window 2048 $GCM "$IPSEC_K128" 128
O_H=$HOST_IP6 O_P=$PEER_IP6 fallback \
	"Cannot offload NAT-T over IPv6: ESP in UDP/IPv6 needs a UDP checksum the block does not compute" \
	mode transport encap espinudp 4500 4500 :: $GCM "$IPSEC_K128" 128
fallback "Only transport and tunnel mode xfrm states can be offloaded" \
	mode beet $GCM "$IPSEC_K128" 128
packet_refused "AES-192 key: only AES-128 and AES-256 (+ salt) can be offloaded" \
	"$K192" 128
packet_refused "ICV of 64 bits: only 128 can be offloaded" "$IPSEC_K128" 64
packet_refused "Replay window of 2048 packets: the flow table allows 1024" \
	"$IPSEC_K128" 128 --dir in --esn --replay 2048

out=$(ip xfrm state add src "$O_H" dst "$O_P" proto esp spi 0x3100 reqid 1 \
	mode transport flag esn replay-window "$IPSEC_OUT_WINDOW" \
	$GCM "$IPSEC_K256" 128 offload dev "$HOST_IF" dir out 2>&1)
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

# A pair that fell back carries traffic in software ESP, none in the block.
out=$(IPSEC_KEY=$K192 ipsec_install transport crypto 2 2>&1)
tx0=$(stat "$HOST_IF" ipsec_tx_packets)
ping_ok "$O_P" 5
ping_rc=$?
tx1=$(stat "$HOST_IF" ipsec_tx_packets)
peer=$(peer_sa_packets "$IPSEC_SPI_OUT")
if [ "$ping_rc" = 0 ] && [ "$peer" -ge 5 ] && [ "$tx1" = "$tx0" ] &&
   ! ipsec_offloaded "$IPSEC_SPI_OUT" "$O_H" "$O_P" &&
   ! ipsec_offloaded "$IPSEC_SPI_IN" "$O_P" "$O_H"; then
	ktap_ok "AES-192 fallen back: ping 5/5 in software ESP"
else
	ktap_fail "AES-192 fallen back: ping 5/5 in software ESP" \
		"$out; ping exit $ping_rc, peer $peer packets, ipsec_tx_packets $tx0 -> $tx1"
fi
ipsec_flush

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
# Adds are refused at once until the resync after the timeout is answered.
wait_for 20 mbox_answering
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
