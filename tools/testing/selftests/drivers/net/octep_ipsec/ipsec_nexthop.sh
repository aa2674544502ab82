#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# A router between the gateway and its tunnel peer. The peer namespace
# forwards to a third one behind a veth, the real tunnel endpoint: the
# host's route to it goes via the peer's wire address. In packet offload,
# tunnel mode, the block builds the whole frame, so the driver gives it
# the MACs (OCTEP_SDP_FEAT_L2): our netdev's as source, the next hop's
# neighbour as destination. Asserted on the wire (tcpdump -e in the
# router, GRO off, promiscuous: frames to any MAC are seen):
#  - every ESP frame from the host carries dst = the router's MAC, src =
#    our netdev's; the block's table shows the same; ping 5/5 through
#    the tunnel and the far end decrypted;
#  - the router's MAC changes (ip link set address, then ip neigh replace
#    on the host): the notifier sees the neighbour move, FLOW_L2 tells
#    the block, the ESP frames go to the new MAC and ping keeps working;
#  - the route to the far end moves, under traffic forwarded from a
#    namespace behind the host, to a next hop that does not answer ARP:
#    the entry follows and goes on HOLD, no ESP frame leaves; moved back,
#    the frames go to the router's MAC again;
#  - the far end's route via a next hop that does not answer ARP: the
#    entry is on HOLD; packets forwarded into the tunnel from a namespace
#    behind the host (the stack itself holds locally generated ones
#    behind an unresolved gateway) are dropped by the block (its
#    tx_no_neigh, ethtool -S ipsec_out_drop); no ESP frame, and nothing
#    but ARP to broadcast, leaves the host; once the address answers, the
#    entry is released and ping passes;
#  - a block that does not announce L2 gets no MACs (the table shows
#    none) and its frames go to the link's far end, as before.

# shellcheck disable=SC2317 # functions called through check and wait_for
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/ipsec_lib.inc"
require_cmd ip ethtool tcpdump python3

ktap_plan 18

ipsec_start
in_peer ethtool -K "$WIRE_IF" gro off
CAP=$(mktemp -d)
on_exit rm -rf "$CAP"

FAR_NS=nhfar
RT_IN=10.98.0.1		# the router's side of the veth
FAR=10.98.0.2		# the tunnel's far end
FAR_IN=198.51.100.3	# the network behind it
GHOST=192.0.2.77	# on the wire's subnet, answering nothing (yet)
LAN_NS=nhlan		# a network behind the host, forwarded into the tunnel
LAN_GW=10.97.0.1
LAN=10.97.0.2
FWD0=$(sysctl -n net.ipv4.ip_forward)
NEW_MAC=02:00:5e:10:00:77

in_far()
{
	ip netns exec "$FAR_NS" "$@"
}

# host_net VIA: the host's routes to the far end and its network via VIA.
host_net()
{
	ip route replace "$FAR/32" via "$1" dev "$HOST_IF" &&
	ip route replace "$FAR_IN/32" via "$1" dev "$HOST_IF" src "$IN4_H"
}

# far_setup: the far namespace behind the peer, the peer a router.
far_setup()
{
	ipsec_far_ns "$FAR_NS" vrt vfar "$RT_IN" "$FAR" "$FAR_IN" &&
	in_far ip route add default via "$RT_IN" &&
	ip addr replace "$IN4_H/32" dev lo &&
	host_net "$PEER_IP4" &&
	ip netns add "$LAN_NS" &&
	ip link add vnh type veth peer name vlan netns "$LAN_NS" &&
	ip addr add "$LAN_GW/24" dev vnh &&
	ip link set vnh up &&
	ip netns exec "$LAN_NS" ip link set lo up &&
	ip netns exec "$LAN_NS" ip addr add "$LAN/24" dev vlan &&
	ip netns exec "$LAN_NS" ip link set vlan up &&
	ip netns exec "$LAN_NS" ip route add default via "$LAN_GW" &&
	sysctl -qw net.ipv4.ip_forward=1
}

# The tunnel's ends and networks, for ipsec_lib.inc's helpers.
# shellcheck disable=SC2034
O_H=$HOST_IP4 O_P=$FAR I_H=$IN4_H I_P=$FAR_IN PL=32

# far_sas: the far end's software pair and the host's packet-offload one.
far_sas()
{
	local a=(proto esp reqid 1 mode tunnel aead 'rfc4106(gcm(aes))'
		 "$IPSEC_K128" 128)

	ipsec_tunnel_neigh
	ipsec_host_sa in tunnel packet &&
	ipsec_host_sa out tunnel packet &&
	ipsec_host_pol out tunnel packet &&
	ipsec_host_pol in tunnel packet &&
	in_far ip xfrm state add src "$HOST_IP4" dst "$FAR" \
		spi "$IPSEC_SPI_OUT" "${a[@]}" &&
	in_far ip xfrm state add src "$FAR" dst "$HOST_IP4" \
		spi "$IPSEC_SPI_IN" "${a[@]}" &&
	in_far ip xfrm policy add src "$I_H/32" dst "$FAR_IN/32" dir in \
		tmpl src "$HOST_IP4" dst "$FAR" proto esp reqid 1 mode tunnel &&
	in_far ip xfrm policy add src "$FAR_IN/32" dst "$I_H/32" dir out \
		tmpl src "$FAR" dst "$HOST_IP4" proto esp reqid 1 mode tunnel
}

sas_flush()
{
	ip xfrm policy flush
	ip xfrm state flush
	in_far ip xfrm policy flush
	in_far ip xfrm state flush
}

# out_l2: the outbound entry's addressing in the block's table ("l2 SRC
# DST", "l2 hold"; nothing for an entry the block addresses itself).
out_l2()
{
	sim_read ipsec/table |
		awk '$2 == "out" { for (i = 1; i <= NF; i++)
			if ($i == "l2") { $1 = ""; sub(/.* l2 /, ""); print; exit } }'
}

# l2_is WANT: the outbound entry shows WANT.
l2_is()
{
	[ "$(out_l2)" = "$1" ]
}

# esp_macs FILE: "SRC DST" of each ESP frame from the host, sorted, unique.
esp_macs()
{
	tcpdump -r "$1" -e -n "esp and src host $HOST_IP4" 2>/dev/null |
		awk '{ d = $4; sub(/,$/, "", d); print $2, d }' | sort -u
}

# far_decrypted: packets the far end's inbound state decrypted.
far_decrypted()
{
	in_far ip -s xfrm state | sa_count "$IPSEC_SPI_OUT" packets
}

# through NAME WANT_DST [WANT_SRC]: ping 5/5 through the tunnel while the
# wire is captured; every ESP frame from the host goes to WANT_DST, from
# WANT_SRC (our MAC; "any": not looked at).
through()
{
	local name=$1 dst=$2 mac=${3:-} rc f0 f1 n macs why

	[ -n "$mac" ] || mac=$(cat "/sys/class/net/$HOST_IF/address")
	f0=$(far_decrypted)
	capture "$WIRE_IF" "$CAP/$name.pcap"
	ping_ok "$FAR_IN" 5
	rc=$?
	cap_stop
	f1=$(far_decrypted)
	n=$(frames "$CAP/$name.pcap" "esp and src host $HOST_IP4")
	macs=$(esp_macs "$CAP/$name.pcap")
	[ "$mac" = any ] && macs=$(awk '{ print "any", $2 }' <<<"$macs" | sort -u)
	why="ping rc $rc; capture $CAP_OK: $n ESP frames, MACs: ${macs:-none}"
	why+=" (want $mac $dst); far end decrypted +$(( ${f1:-0} - ${f0:-0} ));"
	why+=" table: $(out_l2)"
	[ "$rc" -eq 0 ] && [ "$CAP_OK" = yes ] && [ "$n" -ge 5 ] &&
		[ "$macs" = "$mac $dst" ] &&
		[ $(( ${f1:-0} - ${f0:-0} )) -ge 5 ] &&
		ktap_ok "$name" "$why" || ktap_fail "$name" "$why"
}

on_exit ip netns del "$FAR_NS"
on_exit ip netns del "$LAN_NS"
on_exit sysctl -qw net.ipv4.ip_forward="$FWD0"
check "a router between the host and the tunnel's far end" far_setup ||
	ktap_finish

RT_MAC=$(in_peer cat "/sys/class/net/$WIRE_IF/address")
HOST_MAC=$(cat "/sys/class/net/$HOST_IF/address")
out=$(far_sas 2>&1)
ipsec_both_offloaded &&
	wait_for 10 l2_is "$HOST_MAC $RT_MAC" &&
	ktap_ok "packet offload via the router: the block has our MAC and the router's" ||
	ktap_fail "packet offload via the router: the block has our MAC and the router's" \
		"$out; offloaded: $(ipsec_both_offloaded && echo yes || echo no); table: $(out_l2)"

through "ESP frames go to the router's MAC from ours" "$RT_MAC"

# The router's MAC changes; the host learns it (as a gratuitous ARP would
# tell it): the neighbour moves, the block must follow.
n0=$(sim_read ipsec/mbox_cmds | awk '$1 == "flow_l2" { print $2 }')
in_peer ip link set "$WIRE_IF" down
in_peer ip link set "$WIRE_IF" address "$NEW_MAC"
in_peer ip link set "$WIRE_IF" up
wait_for 10 grep -qx 1 "/sys/class/net/$HOST_IF/carrier"
ip neigh replace "$PEER_IP4" lladdr "$NEW_MAC" dev "$HOST_IF" nud reachable
wait_for 10 l2_is "$HOST_MAC $NEW_MAC"
n1=$(sim_read ipsec/mbox_cmds | awk '$1 == "flow_l2" { print $2 }')
ktap_expect "the router's new MAC reaches the block (FLOW_L2)" \
	"table: $(out_l2); flow_l2 +$((n1 - n0))" \
	test "$(out_l2)" = "$HOST_MAC $NEW_MAC" -a $((n1 - n0)) -ge 1
through "ESP frames follow the router's new MAC, ping keeps working" "$NEW_MAC"

# The route moves under forwarded traffic (the LAN's, whose frames the
# block addresses): to a next hop that answers nothing, then back. The
# driver sees the route generation change in transmit and looks the
# route up again: the entry goes on hold, then back to the router's MAC.
lan_ping()
{
	ip netns exec "$LAN_NS" ping -q -c "$1" -i 0.2 -W 1 "$FAR_IN" >/dev/null 2>&1
}
# lan_l2 WANT: a ping from the LAN, then the outbound entry shows WANT.
lan_l2()
{
	lan_ping 1
	l2_is "$1"
}
sas_flush
I_H=$LAN
out=$(far_sas 2>&1)
wait_for 10 lan_ping 1
ip route replace "$FAR/32" via "$GHOST" dev "$HOST_IF"
wait_for 15 lan_l2 hold
capture "$WIRE_IF" "$CAP/moved.pcap"
lan_ping 5
rc=$?
cap_stop
esp=$(frames "$CAP/moved.pcap" "esp and src host $HOST_IP4")
why="$out; table: $(out_l2); ping rc $rc; capture $CAP_OK: ESP $esp"
[ "$(out_l2)" = hold ] && [ "$rc" -ne 0 ] && [ "$CAP_OK" = yes ] &&
	[ "$esp" -eq 0 ] &&
	ktap_ok "route moved to a silent next hop: the entry follows, on hold" "$why" ||
	ktap_fail "route moved to a silent next hop: the entry follows, on hold" "$why"
host_net "$PEER_IP4"
wait_for 15 lan_l2 "$HOST_MAC $NEW_MAC"
capture "$WIRE_IF" "$CAP/back.pcap"
lan_ping 5
rc=$?
cap_stop
macs=$(esp_macs "$CAP/back.pcap")
why="table: $(out_l2); ping rc $rc; capture $CAP_OK: MACs ${macs:-none}"
why+=" (want $HOST_MAC $NEW_MAC)"
[ "$(out_l2)" = "$HOST_MAC $NEW_MAC" ] && [ "$rc" -eq 0 ] &&
	[ "$CAP_OK" = yes ] && [ "$macs" = "$HOST_MAC $NEW_MAC" ] &&
	ktap_ok "route moved back: ESP frames to the router's MAC, ping passes" "$why" ||
	ktap_fail "route moved back: ESP frames to the router's MAC, ping passes" "$why"

# The far end's route via a next hop that answers nothing: the entry is
# held, nothing leaves. Locally generated packets take the stack's L2
# path, which holds them itself behind the unresolved gateway: the
# tunnel here carries the LAN's, forwarded (xfrm_dev_direct_output()).
sas_flush
ip route replace "$FAR/32" via "$GHOST" dev "$HOST_IF"
I_H=$LAN
out=$(far_sas 2>&1)
ktap_expect "an unresolved next hop: the entry is added on hold" \
	"$out; table: $(out_l2)" l2_is hold
# The add's own ARP probes first run out (FAILED, or the entry collected):
# an ARP seen below was asked for by the held entry's dropped packets,
# however long the capture took to start.
ghost_settled()
{
	local st

	st=$(ip neigh show "$GHOST" dev "$HOST_IF")
	[ -z "$st" ] || [[ $st == *FAILED* ]]
}
ARP_GHOST="arp and ether src $HOST_MAC and arp[24:4] = 0xc000024d"
ghost_arp()
{
	[ "$(frames "$CAP/hold.pcap" "$ARP_GHOST")" -ge 1 ]
}
wait_for 20 ghost_settled
settled=$(ip neigh show "$GHOST" dev "$HOST_IF" | awk '{ print $NF }')
settled="neighbour before: ${settled:-none}"
d0=$(stat "$HOST_IF" ipsec_out_drop)
h0=$(sim_read ipsec/tx_no_neigh)
capture "$WIRE_IF" "$CAP/hold.pcap"
ip netns exec "$LAN_NS" ping -q -c 5 -i 0.2 -W 1 "$FAR_IN" >/dev/null 2>&1
rc=$?
wait_for 10 ghost_arp
cap_stop
d1=$(stat "$HOST_IF" ipsec_out_drop)
h1=$(sim_read ipsec/tx_no_neigh)
esp=$(frames "$CAP/hold.pcap" "esp and src host $HOST_IP4")
bcast=$(frames "$CAP/hold.pcap" "ether src $HOST_MAC and ether broadcast and not arp")
arp=$(frames "$CAP/hold.pcap" "$ARP_GHOST")
why="$settled; ping rc $rc; capture $CAP_OK: ESP $esp, non-ARP broadcast $bcast,"
why+=" ARP for $GHOST $arp; tx_no_neigh +$((h1 - h0)),"
why+=" ipsec_out_drop +$((d1 - d0)); table: $(out_l2)"
[ "$rc" -ne 0 ] && [ "$CAP_OK" = yes ] && [ "$esp" -eq 0 ] &&
	[ "$bcast" -eq 0 ] && [ "$arp" -ge 1 ] && [ $((h1 - h0)) -ge 5 ] &&
	[ $((d1 - d0)) -ge 5 ] &&
	ktap_ok "on hold: dropped and counted by the block, nothing sent but ARP" "$why" ||
	ktap_fail "on hold: dropped and counted by the block, nothing sent but ARP" "$why"

# The host's own tunnel again, still on hold; the address appears on the
# router, the neighbour becomes valid, the notifier releases the entry.
sas_flush
I_H=$IN4_H
far_sas >/dev/null 2>&1
in_peer ip addr add "$GHOST/24" dev "$WIRE_IF"
ghost_up()
{
	ping -q -c 1 -W 1 "$FAR_IN" >/dev/null 2>&1
}
wait_for 20 ghost_up
ktap_expect "the next hop answers: the entry is released" \
	"table: $(out_l2); neighbour: $(ip neigh show "$GHOST" dev "$HOST_IF")" \
	l2_is "$HOST_MAC $NEW_MAC"
through "ESP frames go to the released next hop, ping passes" "$NEW_MAC"
in_peer ip addr del "$GHOST/24" dev "$WIRE_IF"

# A block without L2: the driver gives no MACs, the block addresses the
# link's far end as before (the router, there).
sas_flush
check "no L2 announced: the driver probes again" ipsec_features 0xbff
ip addr add "$HOST_IP4/24" dev "$HOST_IF"
ip link set "$HOST_IF" up
wait_for 10 ip route get "$PEER_IP4" oif "$HOST_IF"
host_net "$PEER_IP4"
out=$(far_sas 2>&1)
ipsec_both_offloaded && [ -z "$(out_l2)" ] &&
	ktap_ok "no L2: offloaded, the block's entry has no MACs" ||
	ktap_fail "no L2: offloaded, the block's entry has no MACs" \
		"$out; table: $(sim_read ipsec/table)"
through "no L2: ESP frames go to the link's far end" "$NEW_MAC" any

ktap_finish
