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
#    reqid 0, a soft lifetime above the hard one.

# shellcheck disable=SC2317 # functions called through check and wait_for
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/ipsec_lib.inc"
require_cmd ip ethtool tcpdump python3

VLAN_H=198.51.100.1
VLAN_P=198.51.100.2
DUM_H=203.0.113.1
DUM_P=203.0.113.2

ktap_plan 15

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

# capture IF FILE: start capturing IF in the peer (or, with IF host:X, X
# on the host) into FILE; cap_stop ends it.
capture()
{
	local dev=$1 ns=(in_peer)

	if [ "${dev#host:}" != "$dev" ]; then
		dev=${dev#host:} ns=()
	fi
	"${ns[@]}" tcpdump -i "$dev" -n -U -w "$2" 2>"$2.err" &
	CAP_PID=$!
	# Capturing once it says so: a frame sent before would go unseen,
	# and a capture that never started must not read as "0 clear".
	CAP_OK=no
	wait_for 10 grep -q "listening on" "$2.err" && CAP_OK=yes
}

cap_stop()
{
	sleep 1
	kill "$CAP_PID" 2>/dev/null
	wait "$CAP_PID" 2>/dev/null
}

# frames FILE FILTER: how many frames of FILE match FILTER.
frames()
{
	tcpdump -r "$1" -n "$2" 2>/dev/null | grep -c .
}

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
kernel_log_clean "no kernel warnings"
ktap_finish
