#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# ESP GSO: crypto offload with TSO. The block announces it, the netdev
# offers tx-esp-segmentation, on by default, and the stack hands the
# driver a TCP frame of up to 64 KB with one ESP header; the block cuts it
# at the MSS and sends every segment as an ESP packet of its own. The
# peer runs software ESP with no offload and a replay window, so each
# segment must come with its own sequence number, IV, trailer and ICV.
#
# For transport and tunnel mode over IPv4 and IPv6, and transport mode
# with ESN started 1,000 packets below 2^32 (the frames after it carry the
# next high half, which only the ICV holds; the one frame whose segments
# would straddle it the stack cuts, as the driver asks): a byte-checked upload
# host -> peer arrives intact; the driver sent ESP GSO frames (ethtool -S
# tx_esp_gso, tx_esp_gso_segs), the model cut as many frames into as many
# segments and refused none; the peer's state decrypted at least as many
# packets as there were segments, with no replay or integrity failure
# (its state's counters, XfrmInStateSeqError and XfrmInStateProtoError).
# In the first case, also: a ping between uploads (packets the stack
# numbers one at a time), then `ethtool -K tx-esp-segmentation off` (the
# stack segments and the block encrypts each) and on again: the uploads
# arrive, no ESP GSO frame while off, and the peer's capture of the whole
# case holds no sequence number twice.

source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/ipsec_lib.inc"
require_cmd ip ethtool python3 tcpdump

# 2 MB through ESP, which the model and the peer run in software: 3 to
# 5 s an upload in the TCG VM.
ESP_BYTES=$((2 << 20))
ESN_START=$((0xfffffc18))	# 1,000 below 2^32

ktap_plan 26

# snap ARRAY: the driver's ESP GSO totals, the model's ESP TSO sums over
# its rings and refusals, the peer's inbound state (packets; replay plus
# integrity failures) and its xfrm_stat errors.
snap()
{
	local -n _s=$1
	local v f

	_s=()
	for f in tx_esp_gso tx_esp_gso_segs; do
		v=$(ethtool -S "$HOST_IF" | awk -v k="$f:" '$1 == k { print $2 }')
		[ -n "$v" ] && _s["$f"]=$v
	done
	snap_sim "$1" in_esp_tso in_esp_tso_segs in_drop_bad
	v=$(peer_sa_packets "$IPSEC_SPI_OUT") && [ -n "$v" ] && _s["peer_pk"]=$v
	v=$(in_peer ip -s xfrm state get src "$O_H" dst "$O_P" proto esp \
		spi "$IPSEC_SPI_OUT" 2>/dev/null |
	    awk '$1 == "replay-window" && $3 == "replay" && $5 == "failed" {
		print $4 + $6; exit
	    }')
	[ -n "$v" ] && _s["peer_fail"]=$v
	for f in XfrmInStateSeqError XfrmInStateProtoError; do
		v=$(in_peer awk -v n="$f" '$1 == n { print $2 }' /proc/net/xfrm_stat)
		[ -n "$v" ] && _s["$f"]=$v
	done
}

# deltas: one line of every counter's movement, for diagnostics.
deltas()
{
	local k out=""

	for k in tx_esp_gso tx_esp_gso_segs sim_in_esp_tso \
		 sim_in_esp_tso_segs sim_in_drop_bad peer_pk peer_fail \
		 XfrmInStateSeqError XfrmInStateProtoError; do
		out+="$k +$(d "$k") "
	done
	echo "$out"
}

# accepted: the peer decrypted at least SEGS packets (the segments the
# block sent, or with ESP GSO off the driver's packets) and refused none.
accepted()
{
	is "$(d peer_pk)" -ge "$1" && is "$(d peer_fail)" -eq 0 &&
	is "$(d XfrmInStateSeqError)" -eq 0 &&
	is "$(d XfrmInStateProtoError)" -eq 0
}

# gso_counted: ESP GSO frames sent, the model agrees and refused none,
# and the peer accepted every segment.
gso_counted()
{
	local n segs

	n=$(d tx_esp_gso) segs=$(d tx_esp_gso_segs)
	is "$n" -gt 0 && is "$segs" -gt "$n" &&
	is "$(d sim_in_esp_tso)" -eq "$n" &&
	is "$(d sim_in_esp_tso_segs)" -eq "$segs" &&
	is "$(d sim_in_drop_bad)" -eq 0 && accepted "$segs"
}

# pair NAME MODE FAM [STATE-ARGS...]: crypto offload of both directions
# (the states with STATE-ARGS), the peer's with a replay window (or the
# ESN arguments given), as one case; false if it failed.
pair()
{
	local name=$1 mode=$2 fam=$3 out peer=(replay-window 64)

	shift 3
	[ $# -gt 0 ] && peer=("$@")
	ipsec_flush
	ipsec_case "$mode" "$fam"
	out=$(ipsec_host_sa in "$mode" crypto "$@"
	      ipsec_host_sa out "$mode" crypto "$@"
	      ipsec_host_pol out "$mode" crypto
	      ipsec_host_pol in "$mode" crypto
	      ipsec_peer "$mode" "${peer[@]}" 2>&1)
	if ipsec_both_offloaded; then
		ktap_ok "$name: crypto offload of both directions"
		return 0
	fi
	ktap_fail "$name: crypto offload of both directions" "$out"
	ktap_skip "$name: upload of $ESP_BYTES bytes arrives intact" "no states"
	ktap_skip "$name: ESP GSO frames, every segment accepted by the peer" "no states"
	return 1
}

# gso_upload NAME: an upload through the case's states, intact and sent
# as ESP GSO frames (two cases).
gso_upload()
{
	snap S0
	if upload "$I_P" "$ESP_BYTES"; then
		ktap_ok "$1: upload of $ESP_BYTES bytes arrives intact" "$UP_WHY"
	else
		ktap_fail "$1: upload of $ESP_BYTES bytes arrives intact" "$UP_WHY"
	fi
	snap S1
	if gso_counted; then
		ktap_ok "$1: ESP GSO frames, every segment accepted by the peer" "$(deltas)"
	else
		ktap_fail "$1: ESP GSO frames, every segment accepted by the peer" \
			"$(deltas); the peer's xfrm_stat: $(in_peer awk '$2 != 0' /proc/net/xfrm_stat | tr '\n' ' ')"
	fi
}

ipsec_prepare
check "modules load" octep_load || ktap_finish
check "device 0 with 2 rings" octep_new 0 2 || ktap_finish
check "peer namespace behind the wire" peer_setup || ktap_finish
on_exit ipsec_flush

if feature_is tx-esp-segmentation on && feature_is esp-hw-offload on &&
   feature_is tcp-segmentation-offload on; then
	ktap_ok "$HOST_IF: tx-esp-segmentation on by default"
else
	ktap_fail "$HOST_IF: tx-esp-segmentation on by default" \
		"$(ethtool -k "$HOST_IF" | grep -E 'esp|segmentation')"
fi

# Transport, IPv4, with the wire captured at the peer throughout.
if pair "transport IPv4" transport 4; then
	CAP=$(mktemp -d)
	on_exit rm -rf "$CAP"
	in_peer ethtool -K "$WIRE_IF" gro off
	ip netns exec "$PEER_NS" tcpdump -i "$WIRE_IF" -Q in -n -s 96 \
		-B 65536 -U -w "$CAP/esp.pcap" "esp" 2>"$CAP/err" &
	dump=$!
	wait_for 10 grep -q "listening on" "$CAP/err"
	gso_upload "transport IPv4"
	ping_ok "$I_P" 5 || ktap_diag "ping between uploads: lost some"

	on_exit "ethtool -K $HOST_IF tx-esp-segmentation on"
	ethtool -K "$HOST_IF" tx-esp-segmentation off >/dev/null
	desc="tx-esp-segmentation off: upload arrives intact, no ESP GSO frame, the peer accepted all"
	if ! feature_is tx-esp-segmentation off; then
		ktap_fail "$desc" "still on: $(ethtool -k "$HOST_IF" | grep esp)"
	else
		snap S0
		upload "$I_P" "$ESP_BYTES"
		rc=$? why=$UP_WHY
		snap S1
		# Each packet the stack made is one the block encrypted.
		if [ "$rc" = 0 ] && is "$(d tx_esp_gso)" -eq 0 &&
		   is "$(d sim_in_esp_tso)" -eq 0 &&
		   accepted $((ESP_BYTES / 1500)); then
			ktap_ok "$desc" "$why; $(deltas)"
		else
			ktap_fail "$desc" "$why; $(deltas)"
		fi
	fi
	ethtool -K "$HOST_IF" tx-esp-segmentation on >/dev/null
	if feature_is tx-esp-segmentation on; then
		ktap_ok "tx-esp-segmentation on again"
	else
		ktap_fail "tx-esp-segmentation on again" "$(ethtool -k "$HOST_IF" | grep esp)"
	fi
	gso_upload "transport IPv4, on again"

	cap_drain "$dump" "$CAP/esp.pcap"
	seqs=$(tcpdump -r "$CAP/esp.pcap" -n 2>/dev/null |
	       sed -n "s/.*$O_H > $O_P: ESP(spi=0x0*${IPSEC_SPI_OUT#0x},seq=\\(0x[0-9a-f]*\\)).*/\\1/p")
	n=$(grep -c . <<<"$seqs")
	dups=$(sort <<<"$seqs" | uniq -d | head -n 10 | tr '\n' ' ')
	desc="the peer's capture: ESP GSO, single packets and software segments, no sequence number (no IV) twice"
	if is "$n" -ge $((3 * ESP_BYTES / 1500)) && [ -z "$dups" ]; then
		ktap_ok "$desc" "$n frames"
	else
		ktap_fail "$desc" "$n frames (need >= $((3 * ESP_BYTES / 1500))), twice: ${dups:-none}; tcpdump: $(tr '\n' ' ' <"$CAP/err")"
	fi
else
	for c in "off" "on again" "transport IPv4, on again: upload" \
		 "transport IPv4, on again: ESP GSO" "capture"; do
		ktap_skip "$c" "no states"
	done
fi

for c in "tunnel 4" "transport 6" "tunnel 6"; do
	read -r mode fam <<<"$c"
	pair "$mode IPv$fam" "$mode" "$fam" && gso_upload "$mode IPv$fam"
done

# ESN: ESP GSO frames on both sides of 2^32, and the peer's inbound state
# (the block's out) ends in high half 1.
name="transport IPv4, ESN across 2^32"
if pair "$name" transport 4 flag esn replay-window 32 \
	replay-seq "$ESN_START" replay-oseq "$ESN_START"; then
	gso_upload "$name"
	st=$(in_peer ip xfrm state get src "$O_H" dst "$O_P" proto esp \
		spi "$IPSEC_SPI_OUT" 2>&1)
	if grep -qE "^\s*seq-hi 0x1," <<<"$st"; then
		ktap_ok "$name: the peer's inbound state moved to seq-hi 1"
	else
		ktap_fail "$name: the peer's inbound state moved to seq-hi 1" "$st"
	fi
else
	ktap_skip "$name: the peer's inbound state moved to seq-hi 1" "no states"
fi

ipsec_flush
kernel_log_clean "no kernel warnings"
ktap_finish
