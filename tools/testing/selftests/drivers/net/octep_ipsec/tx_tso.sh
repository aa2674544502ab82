#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Transmit TSO and scatter-gather. The netdev offers and enables both. A
# TCP upload host -> peer (a deterministic pseudo-random stream, checked
# byte for byte at the receiver), IPv4 and IPv6, at MTU 1500 and at a small
# MTU set on both ends (576 IPv4, 1280 IPv6): the bytes arrive intact; the
# driver sent TSO frames with gather lists (qstats' tx-hw-gso-packets and
# -wire-packets, and tx_gather moved, the per-ring counts add up to the
# device's totals); the model
# took as many TSO instructions, made as many segments and gather
# instructions as the driver counted, and dropped nothing; and at the peer
# (GRO off, so a capture sees frames as the wire delivered them) every
# frame of the stream is at most MTU + 14 bytes, no IPv4 header or TCP
# checksum is wrong, and there are at least as many frames with a correct
# TCP checksum as the stream needs segments of the largest possible size.
# `ethtool -K tso off`, then `sg off`: uploads still arrive intact with no
# TSO frame (and with sg off no gather list); both on again afterwards.
# Last, packet offload (ipsec_flows 2, transport, IPv4) with TSO on: the
# upload arrives intact, the driver sent TSO frames, and the peer's
# software ESP state decrypted at least as many packets as there were
# segments: the block encapsulated each segment, not the frame.

source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/ipsec_lib.inc"
require_cmd ip ethtool devlink python3 tcpdump
# The TSO counts are queue statistics (qstats) only, read with YNL.
ynl_require

# Plain uploads: 4 MB, ~2,900 wire segments at MTU 1500 and ~8,000 at 576
# (measured: 81 to 306 TSO frames, 4 to 8 s an upload with Python's start
# in the TCG VM on the shared host; 13 to 22 s on the debug kernel).
# Through ESP, which the model and the peer run in software, 2 MB (3 to 4
# s; 13 s on the debug kernel). The whole test: 97 to 101 s; 430 s on the
# debug kernel.
UP_BYTES=$((4 << 20))
ESP_BYTES=$((2 << 20))
PORT=5600

ktap_plan 26

# snap ARRAY: the driver's TX offload counters (totals: ethtool -S's
# tx_gather, tx_linearize, and qstats' device hw-gso packets and wire
# packets as dev_tso, dev_tso_segs; per-ring sums as ring_*: ethtool -S's,
# and qstats' of every queue) and the model's (sums over its rings) into
# ARRAY.
snap()
{
	local -n _s=$1
	local k v

	_s=()
	while read -r k v; do
		_s["$k"]=$v
	done < <(ethtool -S "$HOST_IF" | awk '
		{ k = $1; sub(/:$/, "", k) }
		k ~ /^tx_(gather|linearize)$/ { print k, $2 }
		k ~ /^tx[0-9]+_(gather|linearize)$/ {
			sub(/^tx[0-9]+_/, "ring_", k); r[k] += $2
		}
		END { for (k in r) print k, r[k] }')
	while read -r k v; do
		_s["$k"]=$v
	done < <(ynl_dump qstats-get \
		"{\"ifindex\": $(cat "/sys/class/net/$HOST_IF/ifindex"), \"scope\": \"queue\"}" |
		python3 -c '
import json, sys
q = [x for x in json.load(sys.stdin) if x.get("queue-type") == "tx"]
if q:
    print("ring_tso", sum(x.get("tx-hw-gso-packets", 0) for x in q))
    print("ring_tso_segs", sum(x.get("tx-hw-gso-wire-packets", 0) for x in q))')
	v=$(qstat "$HOST_IF" tx-hw-gso-packets) && _s["dev_tso"]=$v
	v=$(qstat "$HOST_IF" tx-hw-gso-wire-packets) && _s["dev_tso_segs"]=$v
	snap_sim "$1" in_tso in_tso_segs in_gather in_drop_bad in_drop_link
	v=$(sim_read wire_drops 2>/dev/null) && _s["wire_drops"]=$v
}


# deltas: one line of every counter's movement, for diagnostics.
deltas()
{
	local k out=""

	for k in dev_tso dev_tso_segs tx_gather tx_linearize ring_tso \
		 ring_tso_segs ring_gather sim_in_tso sim_in_tso_segs \
		 sim_in_gather sim_in_drop_bad sim_in_drop_link wire_drops; do
		out+="$k +$(d "$k") "
	done
	echo "$out"
}

# tso_counted: the driver sent TSO frames with gather lists, its rings add
# up to its totals, and the model agrees frame for frame and dropped
# nothing.
tso_counted()
{
	local tso segs gather

	tso=$(d dev_tso) segs=$(d dev_tso_segs) gather=$(d tx_gather)
	is "$tso" -gt 0 && is "$segs" -gt "$tso" && is "$gather" -gt 0 &&
	is "$(d ring_tso)" -eq "$tso" && is "$(d ring_tso_segs)" -eq "$segs" &&
	is "$(d ring_gather)" -eq "$gather" &&
	is "$(d sim_in_tso)" -eq "$tso" &&
	is "$(d sim_in_tso_segs)" -eq "$segs" &&
	is "$(d sim_in_gather)" -eq "$gather" &&
	is "$(d sim_in_drop_bad)" -eq 0 && is "$(d sim_in_drop_link)" -eq 0 &&
	is "$(d wire_drops)" -eq 0
}

# capture_start FAM: tcpdump at the peer, frames of this stream received
# by the wire (the next PORT), into CAP_FILE.
capture_start()
{
	CAP_FILE=$(mktemp) CAP_ERR=$(mktemp)
	# Not through in_peer: $! must be tcpdump itself (ip netns exec execs).
	ip netns exec "$PEER_NS" tcpdump -i "$WIRE_IF" -Q in -n -s 2048 -B 65536 -Z root \
		--immediate-mode \
		-U -w "$CAP_FILE" "ip$([ "$1" = 6 ] && echo 6) and tcp port $((PORT + 1))" \
		2>"$CAP_ERR" &
	CAP_PID=$!
	wait_for 10 grep -q "listening on" "$CAP_ERR"
}

# capture_check MTU LEN PAYLOAD_MAX: stop the capture and judge it (see
# the top). PAYLOAD_MAX: the most TCP payload one frame can carry at MTU.
capture_check()
{
	local mtu=$1 len=$2 pmax=$3 txt big bad good sum need desc why

	cap_drain "$CAP_PID" "$CAP_FILE"
	# One pass over the decode: frames longer than MTU + 14 (the length
	# on the -e line, "ethertype IPv4 (0x0800), length N:"), wrong
	# checksums, data frames with a correct TCP checksum and their bytes;
	# then the first wrong lines.
	txt=$(tcpdump -r "$CAP_FILE" -n -vv -e 2>/dev/null |
	      awk -v max=$((mtu + 14)) '
		match($0, /ethertype [^,]*, length [0-9]+/) {
			n = split(substr($0, RSTART, RLENGTH), a, " ")
			if (a[n] + 0 > max) big++
		}
		/incorrect|bad cksum/ { if (bad++ < 5) lines = lines $0 "\n" }
		/cksum 0x[0-9a-f]+ \(correct\)/ && match($0, /, length [0-9]+$/) {
			l = substr($0, RSTART + 9) + 0
			sum += l
			if (l > 0) good++
		}
		END { print big + 0, bad + 0, good + 0, sum + 0; printf "%s", lines }')
	read -r big bad good sum <<<"$txt"
	need=$(((len + pmax - 1) / pmax))
	desc="the peer's capture at MTU $mtu: frames <= $((mtu + 14)) bytes, checksums right"
	why="$big frames longer than $((mtu + 14)), $bad wrong checksums, $good data frames with a correct TCP checksum (need >= $need) carrying $sum bytes (need >= $len); tcpdump: $(tr '\n' ' ' <"$CAP_ERR")"
	if [ "$big" = 0 ] && [ "$bad" = 0 ] && [ "$good" -ge "$need" ] &&
	   [ "$sum" -ge "$len" ]; then
		ktap_ok "$desc" "$why"
	else
		ktap_fail "$desc" "$why
$(tail -n +2 <<<"$txt")"
	fi
	rm -f "$CAP_FILE" "$CAP_ERR"
}

# set_mtu MTU: on both ends of the link.
set_mtu()
{
	ip link set dev "$HOST_IF" mtu "$1" &&
	in_peer ip link set dev "$WIRE_IF" mtu "$1"
}

# tso_run FAM MTU: an upload with TSO on at MTU: intact, counted, and
# segments on the wire (three cases).
tso_run()
{
	local fam=$1 mtu=$2 dst=$PEER_IP4 pmax name t0=$SECONDS

	# The most payload a frame can carry: MTU less the IP and TCP headers
	# without options (the stream's frames carry timestamps: fewer).
	pmax=$((mtu - 40))
	if [ "$fam" = 6 ]; then
		dst=$PEER_IP6 pmax=$((mtu - 60))
	fi
	name="IPv$fam MTU $mtu"
	if ! set_mtu "$mtu"; then
		ktap_fail "$name: upload of $UP_BYTES bytes arrives intact" "cannot set MTU $mtu"
		ktap_skip "$name: TSO frames counted, the model agrees, no drops" "no upload"
		ktap_skip "$name: the peer's capture" "no upload"
		return
	fi
	snap S0
	capture_start "$fam"
	if upload "$dst" "$UP_BYTES"; then
		ktap_ok "$name: upload of $UP_BYTES bytes arrives intact" "$UP_WHY"
	else
		ktap_fail "$name: upload of $UP_BYTES bytes arrives intact" "$UP_WHY"
	fi
	snap S1
	if tso_counted; then
		ktap_ok "$name: TSO frames counted, the model agrees, no drops" "$(deltas)"
	else
		ktap_fail "$name: TSO frames counted, the model agrees, no drops" "$(deltas)"
	fi
	capture_check "$mtu" "$UP_BYTES" "$pmax"
	set_mtu 1500
	ktap_diag "$name: $((SECONDS - t0)) s"
}

ipsec_prepare
check "modules load" octep_load || ktap_finish
check "device 0 with 2 rings" octep_new 0 2 || ktap_finish
check "peer namespace behind the wire" peer_setup || ktap_finish
in_peer ethtool -K "$WIRE_IF" gro off >/dev/null
if in_peer ethtool -k "$WIRE_IF" | grep -qx "generic-receive-offload: off"; then
	ktap_ok "GRO off on the peer's $WIRE_IF (its capture sees wire frames)"
else
	ktap_fail "GRO off on the peer's $WIRE_IF" "$(in_peer ethtool -k "$WIRE_IF" | grep receive-offload)"
fi

if feature_is scatter-gather on && feature_is tcp-segmentation-offload on &&
   feature_is tx-tcp-segmentation on && feature_is tx-tcp6-segmentation on &&
   feature_is tx-tcp-ecn-segmentation on; then
	ktap_ok "$HOST_IF: scatter-gather and TSO (IPv4, IPv6, ECN) on by default"
else
	ktap_fail "$HOST_IF: scatter-gather and TSO (IPv4, IPv6, ECN) on by default" \
		"$(ethtool -k "$HOST_IF" | grep -E 'scatter|segmentation')"
fi

tso_run 4 1500
tso_run 6 1500
tso_run 6 1280
# Last: below 1280 the kernel drops the links' IPv6 addresses for good.
tso_run 4 576

# off_run FEATURE NAME COUNTERS...: `ethtool -K HOST_IF FEATURE off`, which
# `ethtool -k` shows as NAME off; then an upload arrives intact, through
# the driver, and none of COUNTERS moves (two cases).
off_run()
{
	local feat=$1 name=$2 k ok=1 txb0 desc="$1 off: upload of $UP_BYTES bytes arrives intact"

	shift 2
	ethtool -K "$HOST_IF" "$feat" off >/dev/null
	if ! feature_is "$name" off; then
		ktap_fail "$desc" "ethtool -K $HOST_IF $feat off did not: $(ethtool -k "$HOST_IF" | grep "$name")"
		ktap_skip "$feat off: no $* moved, the upload went through $HOST_IF" "$feat still on"
		return
	fi
	txb0=$(cat "/sys/class/net/$HOST_IF/statistics/tx_bytes")
	snap S0
	if upload "$PEER_IP4" "$UP_BYTES"; then
		ktap_ok "$desc" "$UP_WHY"
	else
		ktap_fail "$desc" "$UP_WHY"
	fi
	snap S1
	for k in "$@"; do
		is "$(d "$k")" -eq 0 || ok=0
	done
	[ "$(cat "/sys/class/net/$HOST_IF/statistics/tx_bytes")" -ge \
	  $((txb0 + UP_BYTES)) ] || ok=0
	if [ "$ok" = 1 ]; then
		ktap_ok "$feat off: no $* moved, the upload went through $HOST_IF" "$(deltas)"
	else
		ktap_fail "$feat off: no $* moved, the upload went through $HOST_IF" \
			"$(deltas); tx_bytes +$(($(cat "/sys/class/net/$HOST_IF/statistics/tx_bytes") - txb0))"
	fi
}

on_exit "ethtool -K $HOST_IF sg on tso on"
off_run tso tcp-segmentation-offload dev_tso dev_tso_segs sim_in_tso \
	sim_in_tso_segs
# sg off takes TSO with it (no TSO without SG).
off_run sg scatter-gather tx_gather dev_tso sim_in_gather sim_in_tso
ethtool -K "$HOST_IF" sg on tso on >/dev/null
if feature_is scatter-gather on && feature_is tcp-segmentation-offload on; then
	ktap_ok "sg and tso on again"
else
	ktap_fail "sg and tso on again" "$(ethtool -k "$HOST_IF" | grep -E 'scatter|segmentation')"
fi

# Packet offload, both directions in the block, transport mode, IPv4.
ipsec_flows 2
ipsec_case transport 4
out=$(ipsec_install transport packet 2)
if ipsec_offloaded "$IPSEC_SPI_OUT" "$O_H" "$O_P" &&
   ipsec_offloaded "$IPSEC_SPI_IN" "$O_P" "$O_H"; then
	ktap_ok "packet offload: both transport states offloaded"
else
	ktap_fail "packet offload: both transport states offloaded" "$out"
fi
on_exit ipsec_flush
snap S0
if upload "$I_P" "$ESP_BYTES"; then
	ktap_ok "packet offload: upload of $ESP_BYTES bytes arrives intact" "$UP_WHY"
else
	ktap_fail "packet offload: upload of $ESP_BYTES bytes arrives intact" "$UP_WHY"
fi
snap S1
pk=$(peer_sa_packets "$IPSEC_SPI_OUT")
why="peer's state $IPSEC_SPI_OUT decrypted ${pk:-?} packets; $(deltas)"
segs=$(d dev_tso_segs)
if tso_counted && is "$pk" -ge "$segs"; then
	ktap_ok "packet offload: TSO frames, each segment encapsulated" "$why"
else
	ktap_fail "packet offload: TSO frames, each segment encapsulated" "$why"
fi
ipsec_flush
kernel_log_clean "no kernel warnings"
ktap_finish
