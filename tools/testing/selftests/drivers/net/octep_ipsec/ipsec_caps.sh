#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The block's GET_INFO feature bits decide what the driver offloads. For
# each of packet offload, its policy table, ESN, tunnel mode and IPv6, the
# model's flow
# table is made to announce it absent (debugfs ipsec/features, read by the
# driver at probe: the driver is unbound and bound again) and a state
# needing it is asked for: it is refused with the message naming the
# feature (crypto offload then falls back to software ESP, the state
# installed without offload; packet offload, and a packet-offload policy,
# fail), while a state that does not need it is still offloaded. ESP GSO:
# tx-esp-segmentation is on with every feature announced, and off and
# fixed without ESP_GSO.

source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/ipsec_lib.inc"
require_cmd ip ethtool python3

ALL=0xfff	# CRYPTO PACKET ESN TUNNEL IPV6 DEL_MANY LIST POLICY STATS_MANY NATT L2 ESP_GSO
ktap_plan 23

ipsec_prepare
check "modules load" octep_load || ktap_finish
check "device 0" octep_new 0 1 || ktap_finish

# crypto_sa FAM [ARGS...]: a crypto-offload outbound state on HOST_IF
# between the test addresses of FAM (4|6); prints ip's messages.
crypto_sa()
{
	local fam=$1 src=$HOST_IP4 dst=$PEER_IP4

	shift
	[ "$fam" = 6 ] && src=$HOST_IP6 dst=$PEER_IP6
	ip xfrm state add src "$src" dst "$dst" proto esp spi 0x3001 reqid 1 \
		aead 'rfc4106(gcm(aes))' "$IPSEC_K128" 128 "$@" \
		offload dev "$HOST_IF" dir out 2>&1
}

# sa_offloaded FAM: the state crypto_sa added is offloaded.
sa_offloaded()
{
	local src=$HOST_IP4 dst=$PEER_IP4

	[ "$1" = 6 ] && src=$HOST_IP6 dst=$PEER_IP6
	ipsec_offloaded 0x3001 "$src" "$dst"
}

# sa_present FAM: the state crypto_sa added exists (offloaded or not).
sa_present()
{
	local src=$HOST_IP4 dst=$PEER_IP4

	[ "$1" = 6 ] && src=$HOST_IP6 dst=$PEER_IP6
	ip xfrm state get src "$src" dst "$dst" proto esp spi 0x3001 >/dev/null 2>&1
}

# fallback NAME WHAT FAM ARGS...: crypto offload of a state needing WHAT
# falls back to software with the message.
fallback()
{
	local name=$1 what=$2 fam=$3 out

	shift 3
	ip xfrm state flush
	out=$(crypto_sa "$fam" "$@")
	if grep -q "does not offer $what" <<<"$out" && sa_present "$fam" &&
	   ! sa_offloaded "$fam"; then
		ktap_ok "$name: refused with the reason, software ESP instead"
	else
		ktap_fail "$name: refused with the reason, software ESP instead" \
			"ip said: $out; state: $(ip xfrm state)"
	fi
}

# offloads NAME FAM ARGS...: a crypto-offload state is offloaded.
offloads()
{
	local name=$1 fam=$2 out

	shift 2
	ip xfrm state flush
	out=$(crypto_sa "$fam" "$@")
	if sa_offloaded "$fam"; then
		ktap_ok "$name: offloaded"
	else
		ktap_fail "$name: offloaded" "ip said: $out"
	fi
}

check "every feature announced: the driver probes again" ipsec_features "$ALL"
offloads "all features, ESN tunnel IPv6" 6 mode tunnel flag esn \
	replay-window "$IPSEC_OUT_WINDOW"
if feature_is tx-esp-segmentation on; then
	ktap_ok "all features: tx-esp-segmentation on"
else
	ktap_fail "all features: tx-esp-segmentation on" "$(ethtool -k "$HOST_IF" | grep esp)"
fi

check "no packet offload announced: the driver probes again" ipsec_features 0x1fd
if feature_is tx-esp-segmentation "off \\[fixed\\]"; then
	ktap_ok "no ESP_GSO: tx-esp-segmentation off, fixed"
else
	ktap_fail "no ESP_GSO: tx-esp-segmentation off, fixed" "$(ethtool -k "$HOST_IF" | grep esp)"
fi
out=$(python3 "$XFRM_NL" state "$HOST_IP4" "$PEER_IP4" 0x3002 1 transport \
	"$IPSEC_K128" 128 --offload packet --dev "$HOST_IF" 2>&1)
if grep -q "does not offer packet offload" <<<"$out" &&
   ! ip xfrm state get src "$HOST_IP4" dst "$PEER_IP4" proto esp spi 0x3002 >/dev/null 2>&1; then
	ktap_ok "no packet offload: a packet-offload state fails with the reason"
else
	ktap_fail "no packet offload: a packet-offload state fails with the reason" "$out"
fi
out=$(python3 "$XFRM_NL" policy out "$HOST_IP4/32" "$PEER_IP4/32" "$HOST_IP4" \
	"$PEER_IP4" 1 transport --offload packet --dev "$HOST_IF" 2>&1)
if grep -q "does not offer packet offload" <<<"$out" &&
   [ -z "$(ip xfrm policy list dir out)" ]; then
	ktap_ok "no packet offload: a packet-offload policy fails with the reason"
else
	ktap_fail "no packet offload: a packet-offload policy fails with the reason" "$out"
fi
offloads "no packet offload: crypto offload" 4

check "no policy table announced: the driver probes again" ipsec_features 0x17f
out=$(python3 "$XFRM_NL" policy out "$HOST_IP4/32" "$PEER_IP4/32" "$HOST_IP4" \
	"$PEER_IP4" 1 transport --offload packet --dev "$HOST_IF" 2>&1)
if grep -q "has no policy table" <<<"$out" &&
   [ -z "$(ip xfrm policy list dir out)" ]; then
	ktap_ok "no policy table: a packet-offload policy fails with the reason"
else
	ktap_fail "no policy table: a packet-offload policy fails with the reason" "$out"
fi
out=$(python3 "$XFRM_NL" state "$HOST_IP4" "$PEER_IP4" 0x3003 1 transport \
	"$IPSEC_K128" 128 --offload packet --dev "$HOST_IF" 2>&1)
if ipsec_offloaded 0x3003 "$HOST_IP4" "$PEER_IP4"; then
	ktap_ok "no policy table: a packet-offload state is still offloaded"
else
	ktap_fail "no policy table: a packet-offload state is still offloaded" "$out"
fi
ip xfrm state flush

check "no ESN announced: the driver probes again" ipsec_features 0x1fb
fallback "no ESN: an ESN state" ESN 4 flag esn replay-window "$IPSEC_OUT_WINDOW"
offloads "no ESN: a state without ESN" 4

check "no tunnel mode announced: the driver probes again" ipsec_features 0x1f7
fallback "no tunnel mode: a tunnel-mode state" "tunnel mode" 4 mode tunnel
offloads "no tunnel mode: a transport-mode state" 4

check "no IPv6 announced: the driver probes again" ipsec_features 0x1ef
fallback "no IPv6: an IPv6 state" IPv6 6
offloads "no IPv6: an IPv4 state" 4

ip xfrm state flush
ipsec_features "$ALL"
kernel_log_clean "no kernel warnings"
ktap_finish
