#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Ring reallocation under crypto-offloaded ESP: while
# four TCP streams run each way through transport-mode associations whose
# both directions the block carries, reconf_loop.py changes the channel
# count (-L) and now and then the ring sizes (-G) for RECONF_SECS (40)
# seconds, each change freeing every ring and building the new ones. A
# transmit queue woken while its rings were being freed or rebuilt sent
# into a freed ring: a NULL dereference in octep_start_xmit(), a panic.
#
# Asserted: every change is accepted; the block encrypted and decrypted
# during the loop; afterwards the device is back on its four rings and
# carries ESP both ways (ping through the associations, a stream each way
# counted by the block); the kernel log is clean. Prints the cycles.

source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/ipsec_lib.inc"
require_cmd ip iperf3 ethtool devlink python3

: "${RECONF_SECS:=40}"
RINGS=4

ktap_plan 11

ipsec_prepare
check "modules load" octep_load || ktap_finish
check "device 0 with $RINGS rings" octep_new 0 "$RINGS" || ktap_finish
check "peer namespace behind the wire" peer_setup || ktap_finish

ipsec_crypto_pair transport 4

TMPD=$(mktemp -d)
on_exit "rm -rf $TMPD"
on_exit "pkill -x iperf3; in_peer pkill -x iperf3"

tx0=$(stat "$HOST_IF" ipsec_tx_packets)
rx0=$(stat "$HOST_IF" ipsec_rx_packets)
# Four streams each way for the whole loop; a server on each side.
iperf3 -s -D -1 --logfile /dev/null
in_peer iperf3 -s -D -1 --logfile /dev/null
wait_for 10 sh -c "ss -ltn | grep -q ':5201 '"
wait_for 10 in_peer sh -c "ss -ltn | grep -q ':5201 '"
secs=$((RECONF_SECS + 4))
timeout $((secs + 60)) iperf3 -c "$PEER_IP4" -P 4 -t "$secs" -J \
	--connect-timeout 10000 >"$TMPD/up.json" 2>&1 &
up=$!
in_peer timeout $((secs + 60)) iperf3 -c "$HOST_IP4" -P 4 -t "$secs" -J \
	--connect-timeout 10000 >"$TMPD/down.json" 2>&1 &
down=$!
sleep 2

t0=$SECONDS
out=$(python3 "$(dirname "$0")/reconf_loop.py" "$HOST_IF" "$RECONF_SECS")
rc=$?
read -r nch nrp _ <<<"$out"
if [ "$rc" -eq 0 ] && [ "${nch:-0}" -gt 0 ]; then
	ktap_ok "-L/-G loop under ESP: each change accepted" \
		"$nch -L and $nrp -G changes in $((SECONDS - t0)) s"
else
	ktap_fail "-L/-G loop under ESP: each change accepted" "$out"
fi
wait "$up" "$down"
tx1=$(stat "$HOST_IF" ipsec_tx_packets)
rx1=$(stat "$HOST_IF" ipsec_rx_packets)
ktap_diag "$((nch + nrp)) cycles (-L $nch, -G $nrp); during them: up $(iperf_rate <"$TMPD/up.json") Mbit/s, down $(iperf_rate <"$TMPD/down.json") Mbit/s; block ESP tx $((tx1 - tx0)) rx $((rx1 - rx0)) packets; tx_dropped $(dev_stat "$HOST_IF" tx_dropped) rx_dropped $(dev_stat "$HOST_IF" rx_dropped)"
[ $((tx1 - tx0)) -gt 0 ] && [ $((rx1 - rx0)) -gt 0 ] &&
	ktap_ok "the block encrypted and decrypted during the loop" ||
	ktap_fail "the block encrypted and decrypted during the loop" \
		"ipsec_tx_packets +$((tx1 - tx0)), ipsec_rx_packets +$((rx1 - rx0))"

check "back on $RINGS channels" \
	sh -c "[ \"\$(ethtool -l $HOST_IF | awk '/^Current/ { c = 1 } c && /^Combined:/ { print \$2; exit }')\" = $RINGS ]"
check "ping through the associations 5/5 after the loop" ping_ok "$PEER_IP4" 5

# after_stream DIR DST: a 3 s stream after the loop, carried by the block.
after_stream()
{
	local dir=$1 dst=$2 c=ipsec_tx_packets a b rate bytes

	[ "$dir" = down ] && c=ipsec_rx_packets
	a=$(stat "$HOST_IF" "$c")
	read -r rate bytes <<<"$(ipsec_iperf "$dir" "$dst" 3 1)"
	b=$(stat "$HOST_IF" "$c")
	if [ "$bytes" -gt 0 ] && [ $((b - a)) -gt 0 ]; then
		ktap_ok "a stream $dir after the loop" "$rate Mbit/s, $c +$((b - a))"
	else
		ktap_fail "a stream $dir after the loop" \
			"$rate Mbit/s, $bytes bytes, $c +$((b - a))"
	fi
}
after_stream up "$PEER_IP4"
after_stream down "$HOST_IP4"

ipsec_flush
kernel_log_clean "no kernel warnings"
ktap_finish
