#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Soak: REKEYS (default 5; `make check-soak` 100) rekeys of a
# crypto-offloaded transport-mode pair under a TCP stream each way, the
# way an IKE daemon makes them: make before break. Each rekey adds the new
# inbound states on both sides, then the new outbound ones (the stack
# prefers the newest), then deletes the old outbound and inbound states.
#
# Asserted: every new state was offloaded; both streams lived through all
# the rekeys and the block carried them; after the last, the block holds
# exactly the one pair (none of the deleted entries left behind); no splat
# and, in the debug tier, no leak. Prints the rekeys and the block's
# counts.

source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/ipsec_lib.inc"
require_cmd ip iperf3 ethtool python3

: "${REKEYS:=5}"

ktap_plan 9

ipsec_prepare
check "modules load" octep_load || ktap_finish
check "device 0 with 2 rings" octep_new 0 2 || ktap_finish
check "peer namespace behind the wire" peer_setup || ktap_finish
ipsec_crypto_pair transport 4

on_exit streams_stop

# sa SIDE SRC DST SPI [OFFLOAD DIR]: one transport-mode state on SIDE
# (host or peer), offloaded to the host's device in DIR when asked.
sa()
{
	local side=$1 src=$2 dst=$3 spi=$4 off=() ns=()

	[ -n "${5:-}" ] && off=(offload dev "$HOST_IF" dir "$6")
	[ "$side" = peer ] && ns=(in_peer)
	"${ns[@]}" ip xfrm state add src "$src" dst "$dst" proto esp \
		spi "$spi" reqid 1 mode transport \
		aead 'rfc4106(gcm(aes))' "$IPSEC_K128" 128 "${off[@]}"
}

# rekey OLD_OUT OLD_IN NEW_OUT NEW_IN: make before break.
rekey()
{
	sa host "$O_P" "$O_H" "$4" offload in &&
	sa peer "$O_H" "$O_P" "$3" &&
	sa host "$O_H" "$O_P" "$3" offload out &&
	sa peer "$O_P" "$O_H" "$4" || return 1
	ipsec_offloaded "$3" "$O_H" "$O_P" &&
	ipsec_offloaded "$4" "$O_P" "$O_H" || return 1
	ip xfrm state delete src "$O_H" dst "$O_P" proto esp spi "$1" &&
	in_peer ip xfrm state delete src "$O_P" dst "$O_H" proto esp spi "$2" &&
	sleep 0.5 &&
	ip xfrm state delete src "$O_P" dst "$O_H" proto esp spi "$2" &&
	in_peer ip xfrm state delete src "$O_H" dst "$O_P" proto esp spi "$1"
}

streams_start
sleep 3

tx0=$(stat "$HOST_IF" ipsec_tx_packets)
rx0=$(stat "$HOST_IF" ipsec_rx_packets)
o=$IPSEC_SPI_OUT i=$IPSEC_SPI_IN done_n=0 why=""
t0=$SECONDS
for ((k = 1; k <= REKEYS; k++)); do
	no=$((0x10000 + k)) ni=$((0x20000 + k))
	if ! out=$(rekey "$o" "$i" "$no" "$ni" 2>&1); then
		why="rekey $k: $out"
		break
	fi
	o=$no i=$ni done_n=$k
	sleep 1
done
ktap_diag "$done_n rekeys in $((SECONDS - t0)) s${why:+; $why}"
[ "$done_n" = "$REKEYS" ] && ktap_ok "$REKEYS rekeys, each new state offloaded" ||
	ktap_fail "$REKEYS rekeys, each new state offloaded" "$why"
tx=$(($(stat "$HOST_IF" ipsec_tx_packets) - tx0))
rx=$(($(stat "$HOST_IF" ipsec_rx_packets) - rx0))
# Still flowing after the last rekey: both clients alive, ESP both ways.
a=$(stat "$HOST_IF" ipsec_tx_packets) b=$(stat "$HOST_IF" ipsec_rx_packets)
sleep 3
a=$(($(stat "$HOST_IF" ipsec_tx_packets) - a))
b=$(($(stat "$HOST_IF" ipsec_rx_packets) - b))
ktap_diag "block ESP during the rekeys: tx +$tx rx +$rx; in 3 s after: tx +$a rx +$b"
if streams_alive &&
   [ "$a" -gt 0 ] && [ "$b" -gt 0 ]; then
	ktap_ok "both streams lived through the rekeys, still flowing after"
else
	ktap_fail "both streams lived through the rekeys" \
		"clients alive: $(streams_alive && echo both || echo not both); ESP in 3 s tx +$a rx +$b"
fi
[ "$tx" -gt 0 ] && [ "$rx" -gt 0 ] &&
	ktap_ok "the block carried them both ways during the rekeys" ||
	ktap_fail "the block carried them both ways during the rekeys" "tx +$tx rx +$rx"
streams_stop
if wait_for 10 grep -q "in 1 out 1" "$SIM_DBG/ipsec/flows"; then
	ktap_ok "the block holds the one pair left" "$(sim_read ipsec/flows)"
else
	ktap_fail "the block holds the one pair left" "$(sim_read ipsec/flows)"
fi
ipsec_flush
kernel_log_clean "no kernel warnings"
ktap_finish
