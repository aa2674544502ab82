#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Soak (make check-soak): a hostile block (hostile.sh's kinds, all of them) under a TCP
# stream each way over ESP, crypto and packet offload in turn, with -L
# and -G changes, until HOSTILE_FAULTS faults were injected (default 1000;
# `make check-soak` 100000) or HOSTILE_SECS passed (default 120; 6600
# there), and each kind at least once (up to twice as long). A round:
# offload a transport pair; 20 offloaded states added and deleted and
# HOSTILE_PHASE seconds (default 5; 30 there) of bad lengths, odd
# checksum results and stray mailbox responses at one opportunity in
# HOSTILE_RATE (default 16; 4 there); HOSTILE_PHASE seconds of bad counts
# at one in HOSTILE_COUNT_RATE (default 20; each costs a reset); -L and
# -G toggled; the pair flushed. Seeded (HOSTILE_SEED, printed).
#
# Asserted, per kind: some were injected; the driver never counted more
# than the block injected; a bad buffer it did not count was one freed
# unread at a reset or reconfiguration (injected - caught <= rx_dropped
# gained); every stray mailbox response was counted. Then, the faults
# off: both streams flow, the peer answers pings over an offloaded pair;
# no splat, and on the debug kernel no leak. Prints the counts.

source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/ipsec_lib.inc"
source "$(dirname "$0")/hostile_lib.inc"
require_cmd ip iperf3 ethtool python3

: "${HOSTILE_FAULTS:=1000}"
: "${HOSTILE_SECS:=120}"
: "${HOSTILE_PHASE:=5}"
: "${HOSTILE_RATE:=16}"
: "${HOSTILE_COUNT_RATE:=20}"
: "${HOSTILE_SEED:=$(( (RANDOM << 15) | RANDOM ))}"

KINDS="rx_len rx_ext rx_count tx_count mbox"
declare -A STAT=([rx_len]=rx_resync [rx_ext]=rx_bad_ext
		 [rx_count]=rx_bad_count [tx_count]=tx_bad_count
		 [mbox]=mbox_stray)

injected_total()
{
	awk '{ n += $2 } END { print n + 0 }' "$SIM_DBG/hostile/injected"
}

# churn N: N offloaded states added and deleted, for mailbox answers.
churn()
{
	local i spi

	for ((i = 0; i < $1; i++)); do
		spi=$((0x3000 + i))
		sa_add "$spi" >/dev/null
		ip xfrm state delete src "$O_H" dst "$O_P" proto esp \
			spi "$spi" 2>/dev/null
	done
}

# hostile MASK RATE
hostile()
{
	sim_write hostile/rate "$2"
	sim_write hostile/kinds "$1"
}

ktap_plan 12
ipsec_prepare
check "modules load" octep_load || ktap_finish
check "device 0 with 2 rings" octep_new 0 2 || ktap_finish
check "peer namespace behind the wire" peer_setup || ktap_finish
check "ipsec_flows 2: both directions in the block" ipsec_flows 2 ||
	ktap_finish
on_exit streams_stop
ktap_diag "HOSTILE_SEED=$HOSTILE_SEED"
sim_write hostile/seed "$HOSTILE_SEED"

declare -A I0 D0
for k in $KINDS; do
	I0[$k]=$(injected "$k") D0[$k]=$(stat "$HOST_IF" "${STAT[$k]}")
done
drops0=$(dev_stat "$HOST_IF" rx_dropped)
streams_start
t0=$SECONDS rounds=0 noffl=0
# all_seen: every kind injected at least once.
all_seen()
{
	local k

	for k in $KINDS; do
		[ "$(injected "$k")" -gt "${I0[$k]}" ] || return 1
	done
}

# more: another round? Until HOSTILE_FAULTS within HOSTILE_SECS; a kind
# not yet injected gets up to twice that.
more()
{
	local t=$((SECONDS - t0))

	if [ "$(injected_total)" -lt "$HOSTILE_FAULTS" ] &&
	   [ "$t" -lt "$HOSTILE_SECS" ]; then
		return 0
	fi
	! all_seen && [ "$t" -lt $((2 * HOSTILE_SECS)) ]
}

while more; do
	rounds=$((rounds + 1))
	type=crypto
	[ $((rounds % 2)) = 0 ] && type=packet
	ipsec_case transport 4
	ipsec_install transport "$type" 2 >/dev/null 2>&1
	ipsec_both_offloaded || noffl=$((noffl + 1))
	hostile 19 "$HOSTILE_RATE"	# rx_len, rx_ext, mbox
	churn 20
	sleep "$HOSTILE_PHASE"
	hostile 12 "$HOSTILE_COUNT_RATE"	# rx_count, tx_count
	sleep "$HOSTILE_PHASE"
	hostile 0 0
	ethtool -L "$HOST_IF" combined $((rounds % 2 + 1)) 2>/dev/null
	ethtool -G "$HOST_IF" rx $((256 << (rounds % 2))) 2>/dev/null
	ipsec_flush
done
# The counts are final once the faults are off and -L has rebuilt the
# rings (a bad buffer left in one was freed unread) and the flush's
# mailbox requests were answered after any stray response: read once.
# A wait for "caught == injected" never ends for the kinds that may lose
# some at a reset, and each of its tries forks ethtool on a guest busy
# with both streams (2.7 s a try on the debug kernel: minutes a kind).
hostile 0 0
ethtool -L "$HOST_IF" combined 2 2>/dev/null
secs=$((SECONDS - t0))
drops=$(($(dev_stat "$HOST_IF" rx_dropped) - drops0))

summary="" bad=""
for k in $KINDS; do
	i=$(($(injected "$k") - I0[$k]))
	d=$(($(stat "$HOST_IF" "${STAT[$k]}") - D0[$k]))
	summary="$summary $k $d/$i"
	case $k in
	rx_len|rx_ext) ok=$((d <= i && i - d <= drops)) ;;
	mbox) ok=$((d == i)) ;;
	*) ok=$((d <= i)) ;;
	esac
	[ "$i" -gt 0 ] || ok=0
	[ "$ok" = 1 ] || bad="$bad $k"
	if [ "$ok" = 1 ]; then
		ktap_ok "$k: injected, and caught as it may be" "${STAT[$k]} +$d, injected $i"
	else
		ktap_fail "$k: injected, and caught as it may be" \
			"${STAT[$k]} +$d, injected $i, rx_dropped +$drops"
	fi
done
ktap_diag "$rounds rounds in $secs s, caught/injected:$summary; rx_dropped +$drops; ring_resets $(stat "$HOST_IF" ring_resets)"
if [ "$noffl" = 0 ]; then
	ktap_ok "every round's pair offloaded" "$rounds rounds"
else
	ktap_fail "every round's pair offloaded" "$noffl of $rounds were not"
fi
check "both streams flow after it" streams_flowing 60
ipsec_case transport 4
ipsec_install transport crypto 2 >/dev/null 2>&1
check "pings over an offloaded pair after it" \
	wait_for 20 ping -q -c 1 -W 1 "$PEER_IP4"
ipsec_flush
ktap_finish
