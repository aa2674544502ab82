#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The counters of packet-offload states cost the mailbox by what changed,
# not by how many states there are: N idle packet-offload SA pairs (N=200,
# or OCTEP_STATS_PAIRS; capacity raised to fit) and one pair with traffic.
#  - With FLOW_STATS_MANY (the model's default), the driver's stats pass
#    over W seconds (W=3, or OCTEP_STATS_SECS) of idle sends at most one
#    request a second plus two, whatever N, and no FLOW_STATS; a pair's
#    pings show in `ip -s xfrm state` both ways within 3 s, after which
#    the passes are back to one request;
#  - without it (the block announces ipsec/features without STATS_MANY;
#    the driver probes again), the driver asks per state: at least N
#    FLOW_STATS over the same W seconds, and the pings still show within
#    3 s.
# Measured, as diagnostics: the stats requests a second each way, the add
# of N pairs, and the slowest of five state adds made meanwhile.

source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/ipsec_lib.inc"
require_cmd ip ethtool devlink python3

N=${OCTEP_STATS_PAIRS:-200}
W=${OCTEP_STATS_SECS:-3}
ALL=0xfff		# every feature, STATS_MANY 0x100 among them
NO_MANY=0xff
PINGS=5
ktap_plan 15

ipsec_start
ipsec_case transport 4

# now_ms: the time in ms (a builtin: no fork inside a measured window).
now_ms()
{
	local t=${EPOCHREALTIME/./}

	echo $((t / 1000))
}

# stats_cmds: sets S and M to the FLOW_STATS and FLOW_STATS_MANY requests
# the model has answered (read without a fork).
stats_cmds()
{
	local k v

	while read -r k v; do
		case $k in
		flow_stats) S=$v ;;
		flow_stats_many) M=$v ;;
		esac
	done <"$SIM_DBG/ipsec/mbox_cmds"
}

# rebind MASK: the block announces MASK; the driver probes again, and its
# new netdev gets the host's address back.
rebind()
{
	ipsec_features "$1" &&
	ip addr add "$HOST_IP4/24" dev "$HOST_IF" &&
	ip link set "$HOST_IF" up
}

# install LABEL: the traffic pair (ipsec_install) and N idle pairs of
# packet-offload states, with no policy (nothing is sent over them).
install()
{
	local label=$1 batch out rc t0 t1 i

	ipsec_flush
	sim_write ipsec/capacity_in $((N + 16))
	sim_write ipsec/capacity_out $((N + 16))
	out=$(ipsec_install transport packet 2 2>&1)
	batch=$(mktemp)
	for ((i = 0; i < N; i++)); do
		echo "state $PEER_IP4 $HOST_IP4 $((0x100000 + i)) $((i + 2))" \
		     "transport $IPSEC_K128 128 --dir in --offload packet" \
		     "--dev $HOST_IF"
		echo "state $HOST_IP4 $PEER_IP4 $((0x200000 + i)) $((i + 2))" \
		     "transport $IPSEC_K128 128 --dir out --offload packet" \
		     "--dev $HOST_IF"
	done >"$batch"
	t0=$(now_ms)
	out+=$(python3 "$XFRM_NL" batch <"$batch" 2>&1)
	rc=$?
	t1=$(now_ms)
	rm -f "$batch"
	ktap_diag "$label: $N idle pairs added in $((t1 - t0)) ms"
	# The block may still be deleting a previous round's entries.
	if [ "$rc" = 0 ] && ipsec_both_offloaded &&
	   wait_for 20 grep -qx "in $((N + 1)) out $((N + 1))" \
		"$SIM_DBG/ipsec/flows"; then
		ktap_ok "$label: $N idle pairs and the traffic pair in the block"
	else
		ktap_fail "$label: $N idle pairs and the traffic pair in the block" \
			"exit $rc, block $(sim_read ipsec/flows): $(head -3 <<<"$out")"
		return 1
	fi
}

# idle_requests: the stats requests (FLOW_STATS and FLOW_STATS_MANY) the
# block answers over W seconds of idle, in STATS and MANY; RATES says
# how many a second each.
idle_requests()
{
	local s0 m0 t0 ms

	stats_cmds
	s0=$S m0=$M t0=${EPOCHREALTIME/./}
	sleep "$W"
	stats_cmds
	ms=$(((${EPOCHREALTIME/./} - t0) / 1000))
	STATS=$((S - s0)) MANY=$((M - m0))
	RATES="$(per_s "$STATS" "$ms")/s and $(per_s "$MANY" "$ms")/s over $ms ms"
}

# per_s N MS: N in MS milliseconds, a second, to a tenth.
per_s()
{
	local t=$(($1 * 10000 / $2))

	echo "$((t / 10)).$((t % 10))"
}

# idle_many DESC: over W seconds of idle, one FLOW_STATS_MANY a second at
# most (and two more: the passes at either end), at least one, no
# FLOW_STATS.
idle_many()
{
	local desc="$1, at most $((W + 2)) stats requests in $W s"

	if [ "$STATS" = 0 ] && [ "$MANY" -ge 1 ] &&
	   [ "$MANY" -le $((W + 2)) ]; then
		ktap_ok "$desc"
	else
		ktap_fail "$desc" "FLOW_STATS_MANY $MANY, FLOW_STATS $STATS"
	fi
}

# add_latency: the slowest of five crypto-offload adds (each a FLOW_ADD)
# made while the pairs are installed, in ms; the states deleted again.
add_latency()
{
	local i t0 t1 max=0

	for i in 1 2 3 4 5; do
		t0=$(now_ms)
		ip xfrm state add src "$HOST_IP4" dst "$PEER_IP4" proto esp \
			spi $((0x3000 + i)) reqid 9 mode transport \
			aead 'rfc4106(gcm(aes))' "$IPSEC_K128" 128 \
			offload dev "$HOST_IF" dir out || return 1
		t1=$(now_ms)
		[ $((t1 - t0)) -gt "$max" ] && max=$((t1 - t0))
	done
	for i in 1 2 3 4 5; do
		ip xfrm state delete src "$HOST_IP4" dst "$PEER_IP4" proto esp \
			spi $((0x3000 + i))
	done
	echo "$max"
}

# shown SPI SRC DST N: ip -s shows at least N packets on that host state.
shown()
{
	[ "$(host_sa_packets "$1" "$2" "$3")" -ge "$4" ] 2>/dev/null
}

# traffic LABEL: PINGS pings over the traffic pair; both host states show
# them in ip -s within 3 s of the last answer.
traffic()
{
	local label=$1 t0 t1 out0 in0

	out0=$(host_sa_packets "$IPSEC_SPI_OUT" "$O_H" "$O_P")
	in0=$(host_sa_packets "$IPSEC_SPI_IN" "$O_P" "$O_H")
	if ! ping_ok "$O_P" "$PINGS"; then
		ktap_fail "$label: $PINGS pings counted both ways within 3 s" \
			"the pings were not all answered"
		return 1
	fi
	t0=$(now_ms)
	if wait_for 3 shown "$IPSEC_SPI_OUT" "$O_H" "$O_P" \
			$((${out0:-0} + PINGS)) &&
	   wait_for 3 shown "$IPSEC_SPI_IN" "$O_P" "$O_H" \
			$((${in0:-0} + PINGS)) &&
	   t1=$(now_ms) && [ $((t1 - t0)) -le 3000 ]; then
		ktap_diag "$label: the pings showed in ip -s after $((t1 - t0)) ms"
		ktap_ok "$label: $PINGS pings counted both ways within 3 s"
	else
		ktap_fail "$label: $PINGS pings counted both ways within 3 s" \
			"out $(host_sa_packets "$IPSEC_SPI_OUT" "$O_H" "$O_P") (was ${out0:-0}), in $(host_sa_packets "$IPSEC_SPI_IN" "$O_P" "$O_H") (was ${in0:-0})"
	fi
}

# --- FLOW_STATS_MANY
install "many" || ktap_finish
sleep 2
idle_requests
lat=$(add_latency)
ktap_diag "many: $N idle pairs: FLOW_STATS_MANY $MANY, FLOW_STATS $STATS" \
	  "in $W s (FLOW_STATS, FLOW_STATS_MANY: $RATES);" \
	  "slowest of 5 adds meanwhile ${lat:-?} ms"
idle_many "many: idle"
traffic "many"
idle_requests
ktap_diag "many: idle again: FLOW_STATS_MANY $MANY, FLOW_STATS $STATS in $W s" \
	  "($RATES)"
idle_many "many: idle after the pings"
[ "$(stat "$HOST_IF" mbox_timeouts)" = 0 ] &&
	[ "$(stat "$HOST_IF" mbox_errors)" = 0 ] &&
	ktap_ok "many: no mailbox request failed" ||
	ktap_fail "many: no mailbox request failed" \
		"$(ethtool -S "$HOST_IF" | grep mbox_)"

# --- one FLOW_STATS a state
ipsec_flush
check "per state: a block without FLOW_STATS_MANY, the driver probes again" \
	rebind "$NO_MANY" || ktap_finish
install "per state" || ktap_finish
sleep 2
idle_requests
lat=$(add_latency)
ktap_diag "per state: $N idle pairs: FLOW_STATS $STATS, FLOW_STATS_MANY" \
	  "$MANY in $W s (FLOW_STATS, FLOW_STATS_MANY: $RATES);" \
	  "slowest of 5 adds meanwhile ${lat:-?} ms"
if [ "$MANY" = 0 ] && [ "$STATS" -ge "$N" ]; then
	ktap_ok "per state: idle, at least $N FLOW_STATS in $W s"
else
	ktap_fail "per state: idle, at least $N FLOW_STATS in $W s" \
		"FLOW_STATS $STATS, FLOW_STATS_MANY $MANY"
fi
traffic "per state"

ipsec_flush
check "the block announces every feature again" rebind "$ALL"
kernel_log_clean "no kernel warnings"
ktap_finish
