#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Packet offload fails closed: what the stack decided to protect leaves
# encrypted or not at all, whatever the block's own tables say and
# whatever the frame looks like. A packet-offload transport pair and its
# policies, the peer in software ESP; the peer's wire captured (no GRO,
# which would decrypt before the capture) and every case asserts that no
# ICMP or UDP of the protected addresses, and no datagram's "SECRET",
# went out in clear:
#  - the route to the peer through a VLAN device on ours: ping works,
#    ESP on the wire, tagged;
#  - the block's outbound policy hidden from its lookup (model debugfs
#    ipsec/hide): the host names the SA, the block encapsulates anyway;
#  - the SA hidden: the block drops what it cannot encrypt and counts it
#    (ipsec_out_drop, the model's tx_no_entry, and within a second
#    XfrmOutStateInvalid, where software would count a bad state);
#  - the inbound policy hidden and the peer sending in clear: the
#    driver's backstop drops it (ipsec_rx_backstop, XfrmInTmplMismatch),
#    none of it reaches ICMP or UDP;
#  - a packet-offload SA on ours whose route goes out another device (a
#    dummy): dropped by the stack (XfrmOutError), nothing on that device;
#  - states the block would not enforce as the stack does are refused:
#    reqid 0, a soft lifetime above the hard one;
#  - the backstop decides as the block does, by priority then age, not by
#    the order of insertion: an inbound allow for a UDP port of priority
#    10, added after a block of all UDP of priority 20, lets the port's
#    clear text in; the allow updated to priority 30, then to 20 (the
#    block older), and the block hidden from the block's table: dropped
#    (ipsec_rx_backstop, XfrmInPolBlock); an inbound IPsec policy at
#    priority 1000, then 500 block policies of better priority for other
#    sources: the one match, last, drops the clear text
#    (XfrmInTmplMismatch).

# shellcheck disable=SC2317 # functions called through check and wait_for
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/ipsec_lib.inc"
require_cmd ip ethtool tcpdump python3

VLAN_H=198.51.100.1
VLAN_P=198.51.100.2
DUM_H=203.0.113.1
DUM_P=203.0.113.2

ktap_plan 19

modprobe 8021q 2>/dev/null
modprobe dummy 2>/dev/null
ipsec_start
in_peer ethtool -K "$WIRE_IF" gro off

CAP=$(mktemp -d)
on_exit rm -rf "$CAP"
on_exit ip link del vl100
on_exit ip link del dum0

SEND_UDP='import socket, sys
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.sendto(b"SECRET", (sys.argv[1], 9))'

# clear_of FILE SRC DST [VLAN]: ICMP and UDP frames between SRC and DST in
# FILE, and whether SECRET shows in any of them.
clear_of()
{
	local f="host $2 and host $3 and (icmp or udp)" n secret=no

	[ -n "${4:-}" ] && f="vlan $4 and $f"
	n=$(frames "$1" "$f")
	tcpdump -r "$1" -n -A 2>/dev/null | grep -q SECRET && secret=yes
	echo "$n clear, SECRET seen: $secret"
}

# send DST: three pings and one UDP datagram carrying SECRET; prints the
# ping's summary.
send()
{
	ping -c 3 -i 0.2 -W 2 "$1" 2>&1 | grep "packets transmitted"
	python3 -c "$SEND_UDP" "$1"
}

# table_handle KIND DIR: the block's handle of its one KIND (flow or
# policy) of direction DIR.
table_handle()
{
	sim_read ipsec/table | awk -v k="$1" -v d="$2" \
		'$1 == k && $2 == d { print $3; exit }'
}

# vlan_round NAME: send() to the peer's VLAN address while capturing the
# peer's wire into NAME.pcap; sets PING (the ping's summary), CLEAR (what
# clear_of says) and ESP (the host's ESP frames, tagged).
vlan_round()
{
	capture "$WIRE_IF" "$CAP/$1.pcap"
	PING=$(send "$VLAN_P")
	cap_stop
	CLEAR=$(clear_of "$CAP/$1.pcap" "$VLAN_H" "$VLAN_P" 100)
	ESP=$(frames "$CAP/$1.pcap" "vlan 100 and esp and src $VLAN_H")
}

# no_clear: the capture ran (CAP_OK) and CLEAR says nothing left in clear.
no_clear()
{
	[ "$CAP_OK" = yes ] && [ "${CLEAR%% *}" = 0 ] && [ "${CLEAR##* }" = no ]
}

# a. The VLAN device's route. The block finds IP behind the tag, and the
# host named the SA: encrypted, and the peer's answers come back through it.
ip link add link "$HOST_IF" name vl100 type vlan id 100 &&
ip addr add "$VLAN_H/24" dev vl100 && ip link set vl100 up &&
in_peer ip link add link "$WIRE_IF" name vl100 type vlan id 100 &&
in_peer ip addr add "$VLAN_P/24" dev vl100 && in_peer ip link set vl100 up
# shellcheck disable=SC2034 # read by ipsec_lib.inc
O_H=$VLAN_H O_P=$VLAN_P I_H=$VLAN_H I_P=$VLAN_P PL=32
ipsec_host_sa in transport packet >/dev/null
ipsec_host_sa out transport packet >/dev/null
ipsec_host_pol out transport packet >/dev/null
ipsec_host_pol in transport packet >/dev/null
ipsec_peer transport >/dev/null 2>&1
check "a packet-offloaded transport pair over vl100, a VLAN on ours" \
	ipsec_both_offloaded || ktap_finish
in_peer ip neigh replace "$VLAN_H" lladdr "$(cat "/sys/class/net/$HOST_IF/address")" dev vl100
ip neigh replace "$VLAN_P" lladdr "$(in_peer cat "/sys/class/net/$WIRE_IF/address")" dev vl100

vlan_round vlan
why="$CLEAR; $ESP ESP frames from the host, tagged; ping: $PING"
if no_clear && [ "$ESP" -ge 4 ]; then
	ktap_ok "through a VLAN on ours nothing leaves in clear, all 4 go as ESP" "$why"
else
	ktap_fail "through a VLAN on ours nothing leaves in clear, all 4 go as ESP" \
		"$why; $(tcpdump -r "$CAP/vlan.pcap" -n -e 2>&1 | head -n 6)"
fi
if grep -q " 0% packet loss" <<<"$PING"; then
	ktap_ok "ping through the VLAN works both ways under packet offload"
else
	ktap_fail "ping through the VLAN works both ways under packet offload" \
		"$PING; peer: $(in_peer ip -s xfrm state | grep -A1 -i lifetime | head -n 4)"
fi

# b. The block's outbound policy hidden: it would classify the frames as
# covered by nothing. The host names the SA: still ESP.
pol=$(table_handle policy out)
sim_write ipsec/hide "${pol:-0}"
vlan_round hidepol
why="hidden policy ${pol:-none}; $CLEAR; $ESP ESP frames; ping: $PING"
if [ -n "$pol" ] && no_clear && [ "$ESP" -ge 4 ]; then
	ktap_ok "the block's policy hidden: the named SA still encrypts, 0 clear" "$why"
else
	ktap_fail "the block's policy hidden: the named SA still encrypts, 0 clear" \
		"$why; table: $(sim_read ipsec/table | tr '\n' ';')"
fi

# c. The SA hidden: the block cannot encrypt, so it drops, and says so.
sa=$(table_handle flow out)
sim_write ipsec/hide "${sa:-0}"
d0=$(stat "$HOST_IF" ipsec_out_drop) n0=$(sim_read ipsec/tx_no_entry)
x0=$(xfrm_stat XfrmOutStateInvalid)
vlan_round hidesa
sim_write ipsec/hide 0
drop=$(($(stat "$HOST_IF" ipsec_out_drop) - d0))
noent=$(($(sim_read ipsec/tx_no_entry) - n0))
# The block's drops reach the stack's MIB with the next stats poll (1 s).
mib_moved() { [ $(($(xfrm_stat XfrmOutStateInvalid) - x0)) -ge 4 ]; }
wait_for 5 mib_moved
mib=$(($(xfrm_stat XfrmOutStateInvalid) - x0))
why="hidden SA ${sa:-none}; $CLEAR; $ESP ESP frames; ipsec_out_drop +$drop, tx_no_entry +$noent, XfrmOutStateInvalid +$mib"
if [ -n "$sa" ] && no_clear && [ "$ESP" = 0 ] && [ "$drop" -ge 4 ] &&
   [ "$noent" -ge 4 ] && [ "$mib" -ge 4 ]; then
	ktap_ok "the block's SA hidden: all 4 dropped and counted, 0 clear" "$why"
else
	ktap_fail "the block's SA hidden: all 4 dropped and counted, 0 clear" "$why"
fi
if ping_ok "$VLAN_P" 3; then
	ktap_ok "the SA back in the block: ping works again"
else
	ktap_fail "the SA back in the block: ping works again" \
		"$(sim_read ipsec/table | tr '\n' ';')"
fi

# e. The block's inbound policy hidden, and the peer sending in clear
# (its policies gone): 6.12 takes clear text under a packet-offload policy
# unchecked, so the driver's backstop must drop it, tagged as it comes.
# snmp GROUP FIELD: /proc/net/snmp's FIELD of GROUP (a header line, then
# the values).
snmp()
{
	awk -v p="$1:" -v f="$2" '
		$1 == p && !h { for (i = 2; i <= NF; i++) c[$i] = i; h = 1; next }
		$1 == p { print $c[f]; exit }' /proc/net/snmp
}
pin=$(table_handle policy in)
sim_write ipsec/hide "${pin:-0}"
in_peer ip xfrm policy flush
b0=$(stat "$HOST_IF" ipsec_rx_backstop) e0=$(snmp Icmp InEchos)
u0=$(snmp Udp NoPorts) t0=$(xfrm_stat XfrmInTmplMismatch)
in_peer ping -c 3 -i 0.2 -W 1 "$VLAN_H" >/dev/null 2>&1
in_peer python3 -c "$SEND_UDP" "$VLAN_H"
sleep 1
sim_write ipsec/hide 0
back=$(($(stat "$HOST_IF" ipsec_rx_backstop) - b0))
echos=$(($(snmp Icmp InEchos) - e0)) noports=$(($(snmp Udp NoPorts) - u0))
tmpl=$(($(xfrm_stat XfrmInTmplMismatch) - t0))
why="hidden policy ${pin:-none}; ipsec_rx_backstop +$back, IcmpInEchos +$echos, UdpNoPorts +$noports, XfrmInTmplMismatch +$tmpl"
if [ -n "$pin" ] && [ "$back" -ge 4 ] && [ "$echos" = 0 ] &&
   [ "$noports" = 0 ] && [ "$tmpl" -ge 4 ]; then
	ktap_ok "the block's inbound policy hidden: clear text dropped, counted" "$why"
else
	ktap_fail "the block's inbound policy hidden: clear text dropped, counted" "$why"
fi
ipsec_flush

# d. A packet-offload SA on ours, the route to its peer out of a dummy:
# 6.12 does not ask packet offload for a route through the device, so
# the driver must, or the frames leave the dummy as they are.
ip link add dum0 type dummy && ip addr add "$DUM_H/24" dev dum0 &&
ip link set dum0 up
# shellcheck disable=SC2034 # the ends ipsec_lib.inc reads
O_H=$DUM_H O_P=$DUM_P I_H=$DUM_H I_P=$DUM_P PL=32
ipsec_host_sa out transport packet >/dev/null
ipsec_host_pol out transport packet >/dev/null
e0=$(xfrm_stat XfrmOutError)
if ipsec_offloaded "$IPSEC_SPI_OUT" "$DUM_H" "$DUM_P"; then
	capture host:dum0 "$CAP/dummy.pcap"
	# The datagram's send fails: the stack dropped it.
	send "$DUM_P" >/dev/null 2>&1
	cap_stop
	CLEAR=$(clear_of "$CAP/dummy.pcap" "$DUM_H" "$DUM_P")
	all=$(frames "$CAP/dummy.pcap" "host $DUM_P")
	err=$(($(xfrm_stat XfrmOutError) - e0))
	why="$CLEAR, $all frames to $DUM_P on dum0; XfrmOutError +$err"
	if no_clear && [ "$all" = 0 ] && [ "$err" -ge 4 ]; then
		ktap_ok "routed out of another device: dropped by the stack, nothing on it" "$why"
	else
		ktap_fail "routed out of another device: dropped by the stack, nothing on it" \
			"$why"
	fi
else
	ktap_fail "routed out of another device: dropped by the stack, nothing on it" \
		"the SA is not offloaded: $(ip xfrm state)"
fi
ipsec_flush

# e. States the block would hold differently from the stack: refused.
O_H=$HOST_IP4 O_P=$PEER_IP4
refuse_sa()
{
	local what=$1 want=$2 out rc

	shift 2
	out=$(python3 "$XFRM_NL" state "$O_H" "$O_P" "$IPSEC_SPI_OUT" "$@" 2>&1)
	rc=$?
	if [ "$rc" != 0 ] && grep -q "$want" <<<"$out" &&
	   [ -z "$(ip xfrm state)" ]; then
		ktap_ok "refused: $what" "$out"
	else
		ktap_fail "refused: $what" "exit $rc: $out; $(ip xfrm state)"
	fi
}
refuse_sa "a packet-offload state of reqid 0" "reqid 0" \
	0 transport "$IPSEC_K128" 128 --offload packet --dev "$HOST_IF"
refuse_sa "a soft packet limit above the hard one" "Soft lifetime" \
	1 transport "$IPSEC_K128" 128 --offload packet --dev "$HOST_IF" \
	--soft-packets 100 --hard-packets 10
ipsec_flush

# f. The backstop's order is the block's: the lowest priority, then the
# oldest, whatever the order of insertion. The peer sends clear UDP to
# P_ORDER; the host's inbound policies cover it. The stack's own lookup
# takes the newest packet-offload policy (its hash chain's head), the
# allow or the IPsec policy each time, and lets the datagrams in: only
# the backstop drops them, where the block's table passed them (its best
# match an allow, or the policy that would drop them hidden).
P_ORDER=5010
N=10
MANY_IN=500

# in_pol SRC ARGS...: xfrm_nl.py's inbound policy from SRC to the host's
# address, offloaded (packet); ARGS from the template's outer source on.
in_pol()
{
	local src=$1

	shift
	python3 "$XFRM_NL" policy in "$src" "$HOST_IP4/32" "$@" \
		--offload packet --dev "$HOST_IF"
}

# in_pols N: the block holds N inbound policies and no outbound one.
in_pols()
{
	[ "$(sim_read ipsec/policies)" = "in $1 out 0" ]
}

# pol_handle PRIORITY ACTION: the block's handle of its inbound policy of
# PRIORITY and ACTION (0 allow, 1 block, 2 IPsec).
pol_handle()
{
	sim_read ipsec/table | awk -v p="$1" -v a="$2" '
		$1 == "policy" && $2 == "in" && $5 == p && $7 == a { print $3; exit }'
}

# order_round: the peer sends N clear datagrams to P_ORDER. Sets GOT (how
# many the host's socket got) and BACK, BLOCK and TMPL, how much
# ipsec_rx_backstop, XfrmInPolBlock and XfrmInTmplMismatch moved; WHY
# says it all.
order_round()
{
	local b0 k0 t0

	b0=$(stat "$HOST_IF" ipsec_rx_backstop)
	k0=$(xfrm_stat XfrmInPolBlock) t0=$(xfrm_stat XfrmInTmplMismatch)
	GOT=$(udp_probe "$PEER_IP4" "$HOST_IP4" "$P_ORDER" "$N")
	BACK=$(($(stat "$HOST_IF" ipsec_rx_backstop) - b0))
	BLOCK=$(($(xfrm_stat XfrmInPolBlock) - k0))
	TMPL=$(($(xfrm_stat XfrmInTmplMismatch) - t0))
	WHY="host received $GOT of $N; ipsec_rx_backstop +$BACK, XfrmInPolBlock +$BLOCK, XfrmInTmplMismatch +$TMPL; block's policies $(sim_read ipsec/policies), hidden ${HIDDEN:-none}"
}

# The allow of priority 10 after the block of 20: appending in insertion
# order would find the block first. The block's table passes them itself.
HIDDEN=
out=$(in_pol "$PEER_IP4/32" - - - - --no-tmpl --action block --proto udp \
	--priority 20 2>&1 &&
      in_pol "$PEER_IP4/32" - - - - --no-tmpl --proto udp \
	--dport "$P_ORDER" --priority 10 2>&1)
rc=$?
wait_for 10 in_pols 2
order_round
if [ "$rc" = 0 ] && in_pols 2 && [ "$GOT" = "$N" ] && [ "$BACK" = 0 ] &&
   [ "$BLOCK" = 0 ]; then
	ktap_ok "backstop order: an inbound allow of priority 10 added after a block of 20 lets clear UDP in" "$WHY"
else
	ktap_fail "backstop order: an inbound allow of priority 10 added after a block of 20 lets clear UDP in" \
		"$WHY; exit $rc: $out"
fi

# allow_dropped PRIORITY DESC: the allow updated to PRIORITY (a new
# policy, linked after the older block), the block hidden from the
# block's table: the backstop must find the block first, and drop.
allow_dropped()
{
	local out rc

	out=$(in_pol "$PEER_IP4/32" - - - - --no-tmpl --proto udp \
		--dport "$P_ORDER" --priority "$1" --update 2>&1)
	rc=$?
	wait_for 10 in_pols 2
	order_round
	if [ "$rc" = 0 ] && [ -n "$HIDDEN" ] && [ "$GOT" = 0 ] &&
	   [ "$BACK" -ge "$N" ] && [ "$BLOCK" -ge "$N" ] && [ "$TMPL" = 0 ]; then
		ktap_ok "$2" "$WHY"
	else
		ktap_fail "$2" \
			"$WHY; exit $rc: $out; $(sim_read ipsec/table | tr '\n' ';')"
	fi
}

# The allow updated to priority 30, then to the block's 20: the block
# comes first by its priority, then by its age. Newest first would take
# the allow both times.
HIDDEN=$(pol_handle 20 1)
sim_write ipsec/hide "${HIDDEN:-0}"
allow_dropped 30 "backstop order: the allow updated to priority 30, the block's 20 hidden in the block: dropped, XfrmInPolBlock"
allow_dropped 20 "backstop order: the allow updated to the block's priority 20, the block older: dropped"
sim_write ipsec/hide 0
ip xfrm policy flush
wait_for 10 in_pols 0

# The IPsec policy over P_ORDER at priority 1000 first, then MANY_IN
# block policies for other sources at 100 and up, each linked ahead of
# it: the one match is the last of MANY_IN + 1.
pols=$(mktemp)
on_exit rm -f "$pols"
for ((i = 0; i < MANY_IN; i++)); do
	echo "policy in 10.5.$((i / 250)).$((i % 250 + 1))/32 $HOST_IP4/32" \
	     "- - - - --no-tmpl --action block --proto udp" \
	     "--priority $((100 + i)) --offload packet --dev $HOST_IF"
done >"$pols"
out=$(in_pol "$PEER_IP4/32" "$PEER_IP4" "$HOST_IP4" 1 transport \
	--proto udp --dport "$P_ORDER" --priority 1000 2>&1 &&
      python3 "$XFRM_NL" batch <"$pols" 2>&1)
rc=$?
wait_for 10 in_pols $((MANY_IN + 1))
HIDDEN=$(pol_handle 1000 2)
sim_write ipsec/hide "${HIDDEN:-0}"
order_round
sim_write ipsec/hide 0
if [ "$rc" = 0 ] && in_pols $((MANY_IN + 1)) && [ -n "$HIDDEN" ] &&
   [ "$GOT" = 0 ] && [ "$BACK" -ge "$N" ] && [ "$TMPL" -ge "$N" ] &&
   [ "$BLOCK" = 0 ]; then
	ktap_ok "backstop order: the one match last of $((MANY_IN + 1)) inbound policies drops clear UDP, XfrmInTmplMismatch" "$WHY"
else
	ktap_fail "backstop order: the one match last of $((MANY_IN + 1)) inbound policies drops clear UDP, XfrmInTmplMismatch" \
		"$WHY; exit $rc: $(head -n 5 <<<"$out")"
fi
ipsec_flush
wait_for 30 in_pols 0
kernel_log_clean "no kernel warnings"
ktap_finish
