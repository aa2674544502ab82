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
# selector protects; frames the block parses where the stack reads its
# flow: UDP through a VLAN on ours, IP options, a fragment, a UDP header
# cut short and a raw socket's UDP under port selectors, IPv6 UDP behind
# hop-by-hop, destination options, routing and fragment headers), then
# ORACLE_ROUNDS (default 12, 2 on a debug kernel)
# random rounds of policies (priorities, actions, UDP port selectors) from
# ORACLE_SEED (default 1), each probed on six ports, with an echo request
# and with a port unreachable error quoting one of the ports. Inbound
# rounds do the same with the host's inbound policies and a second SA,
# peer -> host: the peer sends each probe through it or in clear, the
# host delivers it or drops it (fixed cases: an IPsec policy on all or
# one port, an allow or a block before it, a block that is the newest,
# clear fragments under port selectors, ESP of the host's SA from another
# source, which a policy of that source's own SA or a block covers or
# none does; then a quarter as many random rounds).
#
# Asserted: software does what its priority order says (a check of the
# oracle itself); packet offload does what software does except where
# 6.12 itself decides otherwise for packet offload (the newest matching
# policy, not the highest priority, xfrm_policy_insert_list(); no
# fragmentation, xfrm_dev_offload_ok()) or the block fails closed (TCP
# or UDP whose ports it cannot read dropped where a port selector might
# decide; a raw socket's UDP, which the stack's flow sees no ports of,
# classified by the frame's), and those differences are never
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
ORA_Q=10.77.0.3
ORA_H6=fd77::1
ORA_P6=fd77::2
SPI=0x1701
SPI_IN=0x1702
SPI6=0x1703
# The peer's mark for its second SA of SPI_IN, from ORA_Q (a state of
# another mark may share the SPI).
MARK_Q=7
# UDP to these ports goes through a VLAN (table 177).
VLAN_PORTS=20300-20399
PROBE=$(dirname "$0")/oracle_probe.py
CASES=$(dirname "$0")/oracle_cases.py

ktap_plan 11

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
in_peer ip xfrm state add src "$ORA_H6" dst "$ORA_P6" proto esp spi "$SPI6" \
	reqid 1 mode transport aead 'rfc4106(gcm(aes))' "$IPSEC_K128" 128
# Spoofed inbound probes: the host's SA of SPI_IN, sent from ORA_Q. The
# marked state first: one without a mark would take its lookup (EEXIST).
# Its sequence numbers start far ahead: the host's replay window would
# drop those the peer's own SA already used (oracle_cases.py's last round).
in_peer ip xfrm state add src "$ORA_Q" dst "$ORA_H" proto esp spi "$SPI_IN" \
	reqid 3 mode transport aead 'rfc4106(gcm(aes))' "$IPSEC_K128" 128 \
	mark "$MARK_Q" replay-oseq 100000
in_peer ip xfrm policy add src "$ORA_Q/32" dst "$ORA_H/32" proto udp \
	sport 40003 dir out mark "$MARK_Q" tmpl src "$ORA_Q" dst "$ORA_H" \
	proto esp reqid 3 mode transport
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
		"$IPSEC_K128" 128 --dir in "${off[@]}" &&
	python3 "$XFRM_NL" state "$ORA_H6" "$ORA_P6" "$SPI6" 1 transport \
		"$IPSEC_K128" 128 "${off[@]}"
}

# phase_net DEV PEER_DEV: the addresses on DEV and the peer's PEER_DEV,
# and vlo, VLAN 100 on each (no IPv6 there: only the probes cross it),
# the route of VLAN_PORTS, static neighbours.
phase_net()
{
	local mac

	ip addr add "$ORA_H/24" dev "$1" &&
	ip addr add "$ORA_H6/64" dev "$1" nodad &&
	in_peer ip addr add "$ORA_P/24" dev "$2" &&
	in_peer ip addr add "$ORA_Q/32" dev "$2" &&
	in_peer ip addr add "$ORA_P6/64" dev "$2" nodad &&
	in_peer sysctl -qw "net.ipv6.conf.$2.seg6_enabled=1" &&
	ip link add link "$1" name vlo type vlan id 100 &&
	in_peer ip link add link "$2" name vlo type vlan id 100 &&
	sysctl -qw net.ipv6.conf.vlo.disable_ipv6=1 &&
	in_peer sysctl -qw net.ipv6.conf.vlo.disable_ipv6=1 &&
	in_peer sysctl -qw net.ipv4.conf.vlo.rp_filter=0 &&
	ip link set vlo up && in_peer ip link set vlo up &&
	ip route add "$ORA_P/32" dev vlo table 177 &&
	mac=$(in_peer cat /sys/class/net/vlo/address) &&
	ip neigh replace "$ORA_P" lladdr "$mac" dev vlo
}

# vlan_rx: frames the peer's vlo received.
vlan_rx()
{
	in_peer cat /sys/class/net/vlo/statistics/rx_packets
}

# pol_line PHASE DIR ACTION PRIO PROTO PORT [OPTION...]: xfrm_nl.py's
# words for a policy host -> peer (DIR out) or peer -> host (in).
pol_line()
{
	local phase=$1 dir=$2 action=$3 prio=$4 proto=$5 port=$6 sel=() tmpl
	local ends="$ORA_H/32 $ORA_P/32" ta="$ORA_H $ORA_P 1" src=$ORA_P/32
	local reqid=2 rest=() w

	shift 6
	# oracle_cases.py's words: the family, the peer's source, the reqid.
	for w; do
		case $w in
		v6) ends="$ORA_H6/128 $ORA_P6/128" ta="$ORA_H6 $ORA_P6 1" ;;
		from-q) src=$ORA_Q/32 ;;
		from-net) src=${ORA_P%.*}.0/24 ;;
		reqid-*) reqid=${w#reqid-} ;;
		*) rest+=("$w") ;;
		esac
	done
	[ "$dir" = in ] && ends="$src $ORA_H/32" ta="${src%/*} $ORA_H $reqid"
	[ "$proto" = udp ] && sel=(--proto udp)
	[ "$port" != - ] && sel+=(--dport "$port")
	case $action in
	ipsec) tmpl="$ta transport" ;;
	allow) tmpl="- - - - --no-tmpl" ;;
	block) tmpl="- - - - --no-tmpl --action block" ;;
	esac
	echo "policy $dir $ends $tmpl --priority $prio ${sel[*]} ${rest[*]}" \
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
			--in-spi "$SPI_IN" --v6 "$ORA_H6" "$ORA_P6" "$SPI6" \
			--spoof "$ORA_Q" "$MARK_Q" $(cat "$W/probes") 2>>"$W/notes" |
			sed "s/^/$name /"
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
			# shellcheck disable=SC2086 # options, one word each
			pol_line "$phase" in "$a" "$b" "$c" "$d" $rest \
				>>"$W/pols" ;;
		upd)
			pol_line "$phase" out "$a" "$b" "$c" "$d" --update \
				>>"$W/pols" ;;
		probe)
			echo "$a" >>"$W/probes" ;;
		esac
	done <"$W/cases"
	[ -n "$name" ] && run_round "$phase" "$name"
}

modprobe 8021q 2>/dev/null
# The VLAN probes' route (CONFIG_IP_MULTIPLE_TABLES): without it they
# would take the plain one and the VLAN case would judge nothing.
rule=$(ip rule add pref 177 ipproto udp dport "$VLAN_PORTS" lookup 177 2>&1) &&
	rule=ok
on_exit ip rule del pref 177
in_peer sysctl -qw net.ipv4.conf.all.rp_filter=0 net.ipv6.conf.all.seg6_enabled=1

# Software: the SA and policies in software, the peer behind a veth.
ip link add vo0 type veth peer name vo1 netns "$PEER_NS" &&
ip link set vo0 up && in_peer ip link set vo1 up &&
out=$(phase_net vo0 vo1 2>&1)
if out=$(echo "$out; ip rule for the VLAN probes: $rule" && host_state sw 2>&1) &&
   [ "$rule" = ok ] && ping -q -c 1 -W 3 "$ORA_P" >/dev/null; then
	ktap_ok "software: the SA, the peer behind a veth"
else
	ktap_fail "software: the SA, the peer behind a veth" "$out"
fi
v0=$(vlan_rx)
run_phase sw >"$W/sw"
vlan_sw=$(($(vlan_rx) - v0))
ip xfrm state flush
# vlo goes with it, and the peer's with vo1.
ip link del vo0

# Packet offload: the same on the device.
on_exit ip link del vlo
if out=$(phase_net "$HOST_IF" "$WIRE_IF" 2>&1 && host_state hw 2>&1) &&
   ipsec_offloaded "$SPI" "$ORA_H" "$ORA_P" &&
   ipsec_offloaded "$SPI6" "$ORA_H6" "$ORA_P6"; then
	ktap_ok "packet offload: the SAs in the block"
else
	ktap_fail "packet offload: the SAs in the block" "$out"
fi
v0=$(vlan_rx)
run_phase hw >"$W/hw"
vlan_hw=$(($(vlan_rx) - v0))

while read -r line; do
	ktap_diag "$line"
done <"$W/notes"

# The VLAN probes that arrived came through the VLAN.
vlan_got()
{
	awk '$2 ~ /:vlan$/ && ($3 == "enc" || $3 == "clear")' "$1" | grep -c .
}
why="software: $(vlan_got "$W/sw") VLAN probes arrived, the peer's vlo got $vlan_sw frames; offload: $(vlan_got "$W/hw") and $vlan_hw"
if [ "$(vlan_got "$W/sw")" -gt 0 ] && [ "$vlan_sw" -ge "$(vlan_got "$W/sw")" ] &&
   [ "$(vlan_got "$W/hw")" -gt 0 ] && [ "$vlan_hw" -ge "$(vlan_got "$W/hw")" ]; then
	ktap_ok "the VLAN probes went through VLAN 100, in software and offload" "$why"
else
	ktap_fail "the VLAN probes went through VLAN 100, in software and offload" "$why"
fi

# One line a probe: round probe sw-predicted hw-predicted sw hw.
awk '$1 == "round" { r = $2 } $1 == "probe" { print r, $2, $3, $4 }' \
	"$W/cases" >"$W/pred"
# Joined on round and probe: a probe with no verdict reads "none".
awk 'FILENAME == ARGV[1] { sw[$1 " " $2] = $3; next }
     FILENAME == ARGV[2] { hw[$1 " " $2] = $3; next }
     { k = $1 " " $2
       print $0, (k in sw ? sw[k] : "none"), (k in hw ? hw[k] : "none") }' \
	"$W/sw" "$W/hw" "$W/pred" >"$W/all"
# The fixed rounds' verdicts (the random ones only where they fail).
awk '$1 !~ /^(in-)?random-/ { print "verdict", $1, $2, "sw", $5, "hw", $6, "predicted", $3, $4 }' \
	"$W/all" | while read -r line; do ktap_diag "$line"; done
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
ip addr del "$ORA_H6/64" dev "$HOST_IF"
kernel_log_clean "no kernel warnings"
ktap_finish
