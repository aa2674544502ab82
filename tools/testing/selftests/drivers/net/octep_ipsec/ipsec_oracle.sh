#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The kernel's own ESP as the oracle of packet offload. The same outbound
# policies (transport mode, host -> peer, one SA) and the same probes run
# twice: in software ESP over a veth pair, then in packet offload on the
# device; the peer, in software, says for each probe whether it came
# encrypted, in clear or not at all (oracle_probe.py). oracle_cases.py
# gives the rounds: fixed cases (IP options, a datagram over the MTU, a
# policy replaced by an update, an optional template and the icmp flag,
# which the driver refuses, an allow or a block policy of higher priority
# added before the "any" IPsec one, ICMP errors quoting a flow a port
# selector protects), then ORACLE_ROUNDS (default 12, 2 on a debug kernel)
# random rounds of policies (priorities, actions, UDP port selectors) from
# ORACLE_SEED (default 1), each probed on six ports, with an echo request
# and with a port unreachable error quoting one of the ports. Inbound
# rounds do the same with the host's inbound policies and a second SA,
# peer -> host: the peer sends each probe through it or in clear, the
# host delivers it or drops it (fixed cases: an IPsec policy on all or
# one port, an allow or a block before it, a block that is the newest,
# then a quarter as many random rounds).
#
# Asserted: software does what its priority order says (a check of the
# oracle itself); packet offload does what software does except where
# 6.12 itself decides otherwise for packet offload (the newest matching
# policy, not the highest priority, xfrm_policy_insert_list(); no
# fragmentation, xfrm_dev_offload_ok()), and those differences are never
# a probe software encrypts or drops leaving in clear, nor an inbound
# probe software drops delivered.

# shellcheck disable=SC2317 # functions called through check and wait_for
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/ipsec_lib.inc"
require_cmd ip python3

SEED=${ORACLE_SEED:-1}
# Fewer by default on the debug kernel (kmemleak's file), 2-3 times slower.
ROUNDS=12
[ -e /sys/kernel/debug/kmemleak ] && ROUNDS=2
ROUNDS=${ORACLE_ROUNDS:-$ROUNDS}
ORA_H=10.77.0.1
ORA_P=10.77.0.2
SPI=0x1701
SPI_IN=0x1702
PROBE=$(dirname "$0")/oracle_probe.py
CASES=$(dirname "$0")/oracle_cases.py

ktap_plan 10

ipsec_start

W=$(mktemp -d)
on_exit rm -rf "$W"
: >"$W/notes"
on_exit ip link del vo0
python3 "$CASES" "$SEED" "$ROUNDS" >"$W/cases"
ktap_diag "seed $SEED, $ROUNDS random rounds, $(grep -c '^probe' "$W/cases") probes a phase"

# An error a probe: not one per second per peer.
rl=$(sysctl -n net.ipv4.icmp_ratelimit)
sysctl -qw net.ipv4.icmp_ratelimit=0
on_exit sysctl -qw "net.ipv4.icmp_ratelimit=$rl"

in_peer ip xfrm state add src "$ORA_H" dst "$ORA_P" proto esp spi "$SPI" \
	reqid 1 mode transport aead 'rfc4106(gcm(aes))' "$IPSEC_K128" 128
# Inbound probes: the peer's SA to the host, for what it sends from the
# port oracle_probe.py's encrypted probes come from.
in_peer ip xfrm state add src "$ORA_P" dst "$ORA_H" proto esp spi "$SPI_IN" \
	reqid 2 mode transport aead 'rfc4106(gcm(aes))' "$IPSEC_K128" 128
in_peer python3 "$XFRM_NL" policy out "$ORA_P/32" "$ORA_H/32" "$ORA_P" \
	"$ORA_H" 2 transport --proto udp --sport 40001

# host_state PHASE: the host's SAs, out and in, offloaded in phase hw.
host_state()
{
	local off=()

	[ "$1" = hw ] && off=(--offload packet --dev "$HOST_IF")
	python3 "$XFRM_NL" state "$ORA_H" "$ORA_P" "$SPI" 1 transport \
		"$IPSEC_K128" 128 "${off[@]}" &&
	python3 "$XFRM_NL" state "$ORA_P" "$ORA_H" "$SPI_IN" 2 transport \
		"$IPSEC_K128" 128 --dir in "${off[@]}"
}

# pol_line PHASE DIR ACTION PRIO PROTO PORT [OPTION...]: xfrm_nl.py's
# words for a policy host -> peer (DIR out) or peer -> host (in).
pol_line()
{
	local phase=$1 dir=$2 action=$3 prio=$4 proto=$5 port=$6 sel=() tmpl
	local ends="$ORA_H/32 $ORA_P/32" ta="$ORA_H $ORA_P 1"

	shift 6
	[ "$dir" = in ] && ends="$ORA_P/32 $ORA_H/32" ta="$ORA_P $ORA_H 2"
	[ "$proto" = udp ] && sel=(--proto udp)
	[ "$port" != - ] && sel+=(--dport "$port")
	case $action in
	ipsec) tmpl="$ta transport" ;;
	allow) tmpl="- - - - --no-tmpl" ;;
	block) tmpl="- - - - --no-tmpl --action block" ;;
	esac
	echo "policy $dir $ends $tmpl --priority $prio ${sel[*]} $*" \
		"$([ "$phase" = hw ] && echo "--offload packet --dev $HOST_IF")"
}

# block_pols IN OUT: the block holds that many policies each way.
block_pols()
{
	[ "$(sim_read ipsec/policies)" = "in $1 out $2" ]
}

# run_round PHASE NAME: add the round's policies ($W/pols), probe, print
# "NAME PROBE VERDICT" lines; flush.
run_round()
{
	local phase=$1 name=$2 n ni rc v

	n=$(grep -c '^policy out' "$W/pols")
	ni=$(grep -c '^policy in' "$W/pols")
	python3 "$XFRM_NL" batch <"$W/pols" >"$W/add.out" 2>&1
	rc=$?
	if [ "$rc" != 0 ]; then
		v=refused
		grep -q "Error: octep_ipsec" "$W/add.out" || v="error"
		echo "$phase $name: $(head -n 2 "$W/add.out" | tr '\n' ' ')" \
			>>"$W/notes"
		sed "s/^/$name /; s/\$/ $v/" "$W/probes"
	else
		[ "$phase" = hw ] && wait_for 10 block_pols "$ni" "$n"
		# shellcheck disable=SC2046 # the probes, one word each
		python3 "$PROBE" "$PEER_NS" "$ORA_H" "$ORA_P" "$SPI" \
			--in-spi "$SPI_IN" $(cat "$W/probes") | sed "s/^/$name /"
	fi
	ip xfrm policy flush
	[ "$phase" = hw ] && wait_for 10 block_pols 0 0
}

# run_phase PHASE: every round; "ROUND PROBE VERDICT" lines on stdout.
run_phase()
{
	local phase=$1 kind a b c d rest name=

	: >"$W/pols"
	: >"$W/probes"
	while read -r kind a b c d rest; do
		case $kind in
		round)
			[ -n "$name" ] && run_round "$phase" "$name"
			name=$a
			: >"$W/pols"
			: >"$W/probes"
			;;
		pol)
			# shellcheck disable=SC2086 # options, one word each
			pol_line "$phase" out "$a" "$b" "$c" "$d" $rest \
				>>"$W/pols" ;;
		ipol)
			pol_line "$phase" in "$a" "$b" "$c" "$d" >>"$W/pols" ;;
		upd)
			pol_line "$phase" out "$a" "$b" "$c" "$d" --update \
				>>"$W/pols" ;;
		probe)
			echo "$a" >>"$W/probes" ;;
		esac
	done <"$W/cases"
	[ -n "$name" ] && run_round "$phase" "$name"
}

# Software: the SA and policies in software, the peer behind a veth.
ip link add vo0 type veth peer name vo1 netns "$PEER_NS" &&
ip addr add "$ORA_H/24" dev vo0 && ip link set vo0 up &&
in_peer ip addr add "$ORA_P/24" dev vo1 && in_peer ip link set vo1 up
if out=$(host_state sw 2>&1) && ping -q -c 1 -W 3 "$ORA_P" >/dev/null; then
	ktap_ok "software: the SA, the peer behind a veth"
else
	ktap_fail "software: the SA, the peer behind a veth" "$out"
fi
run_phase sw >"$W/sw"
ip xfrm state flush
ip link del vo0

# Packet offload: the same on the device.
ip addr add "$ORA_H/24" dev "$HOST_IF"
in_peer ip addr add "$ORA_P/24" dev "$WIRE_IF"
if out=$(host_state hw 2>&1) &&
   ipsec_offloaded "$SPI" "$ORA_H" "$ORA_P"; then
	ktap_ok "packet offload: the SA in the block"
else
	ktap_fail "packet offload: the SA in the block" "$out"
fi
run_phase hw >"$W/hw"

while read -r line; do
	ktap_diag "$line"
done <"$W/notes"

# One line a probe: round probe sw-predicted hw-predicted sw hw.
awk '$1 == "round" { r = $2 } $1 == "probe" { print r, $2, $3, $4 }' \
	"$W/cases" >"$W/pred"
# Joined on round and probe: a probe with no verdict reads "none".
awk 'FILENAME == ARGV[1] { sw[$1 " " $2] = $3; next }
     FILENAME == ARGV[2] { hw[$1 " " $2] = $3; next }
     { k = $1 " " $2
       print $0, (k in sw ? sw[k] : "none"), (k in hw ? hw[k] : "none") }' \
	"$W/sw" "$W/hw" "$W/pred" >"$W/all"
n=$(grep -c . "$W/pred")
got_sw=$(grep -c . "$W/sw") got_hw=$(grep -c . "$W/hw")
bad_sw=$(awk '$3 != $5' "$W/all")
bad_hw=$(awk '$4 != $6' "$W/all")
differ=$(awk '$5 != $6' "$W/all" | grep -c .)
leak=$(awk '($5 == "enc" || $5 == "drop") && $6 == "clear" ||
	    $5 == "drop" && $6 == "deliver"' "$W/all")
ktap_diag "$n probes a phase; offload and software differ on $differ, all where 6.12 or a refusal says so"

if [ "$got_sw" = "$n" ] && [ -z "$bad_sw" ]; then
	ktap_ok "software ESP follows priority order on all probes (the oracle holds)" "$n probes"
else
	ktap_fail "software ESP follows priority order on all probes (the oracle holds)" \
		"$n probes, seed $SEED; $got_sw verdicts; round probe predicted(sw hw) got(sw hw): $(head -n 8 <<<"$bad_sw" | tr '\n' ';')"
fi
if [ "$got_hw" = "$n" ] && [ -z "$bad_hw" ]; then
	ktap_ok "packet offload agrees with software on all probes, but where 6.12 decides otherwise" \
		"$n probes, $differ where 6.12 decides otherwise"
else
	ktap_fail "packet offload agrees with software on all probes, but where 6.12 decides otherwise" \
		"$n probes, seed $SEED; $got_hw verdicts; round probe predicted(sw hw) got(sw hw): $(head -n 8 <<<"$bad_hw" | tr '\n' ';')"
fi
if [ "$got_hw" = "$n" ] && [ -z "$leak" ]; then
	ktap_ok "nothing software encrypts or drops passes in clear under packet offload"
else
	ktap_fail "nothing software encrypts or drops passes in clear under packet offload" \
		"seed $SEED: $(head -n 8 <<<"$leak" | tr '\n' ';')"
fi
ipsec_flush
ip addr del "$ORA_H/24" dev "$HOST_IF"
kernel_log_clean "no kernel warnings"
ktap_finish
