#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# ipsec_nexthop.sh with IPv6 outer addresses: the driver finds a
# packet-offload tunnel's next hop through ndisc (nd_tbl) and follows the
# IPv6 routes. The peer namespace is a router to a third one, the far
# end; a macvlan of the wire in the peer, with its own MAC, is a second
# router, reached through its link-local address. Asserted on the wire
# (tcpdump -e in the peer, GRO off):
#  - every ESP frame from the host carries dst = the router's MAC (route
#    via its global address), src = ours; the block's table shows them;
#  - the router's MAC changes: the ESP frames follow it;
#  - the route moves to the second router (via fe80::88): the frames go
#    to its MAC, ping passes;
#  - under traffic forwarded from a namespace behind the host, the
#    route to the far end moves onto another netdev (a dummy): replaced,
#    or deleted under a wider one through the dummy (a delete leaves the
#    netns's fib6_sernum alone): the entry goes on hold, no ESP frame
#    leaves and nothing in clear, on the wire or on the dummy; the route
#    back through the router, the frames go to its MAC again;
#  - a next hop that answers no solicitation: the entry is added on hold,
#    the block drops and counts what comes; nothing but neighbour
#    solicitations leaves to a multicast address; once the address
#    answers, the entry is released and ping passes.

# shellcheck disable=SC2317 # functions called through check and wait_for
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/ipsec_lib.inc"
source "$(dirname "$0")/nexthop_lib.inc"
require_cmd ip ethtool tcpdump python3

modprobe -q dummy 2>/dev/null
modprobe -q macvlan 2>/dev/null

ktap_plan 19

ipsec_start
in_peer ethtool -K "$WIRE_IF" gro off
CAP=$(mktemp -d)
on_exit rm -rf "$CAP"

FAR_NS=nh6far
RT_IN=2001:db8:98::1	# the router's side of the veth
FAR=2001:db8:98::2	# the tunnel's far end
WIDE=2001:db8:98::/64	# its network, through the dummy in one case
FAR_IN=2001:db8:99::3	# the network behind it
GHOST=2001:db8::77	# on the wire's subnet, answering nothing (yet)
RT2_LL=fe80::88		# the second router's link-local address
RT2_MAC=02:00:5e:10:00:88
LAN_NS=nh6lan		# a network behind the host, forwarded into the tunnel
LAN_GW=2001:db8:97::1
LAN=2001:db8:97::2
DUM=nh6dum		# a netdev of the host's that is not ours
FWD0=$(sysctl -n net.ipv6.conf.all.forwarding)
NEW_MAC=02:00:5e:10:00:77

in_far()
{
	ip netns exec "$FAR_NS" "$@"
}

in_lan()
{
	ip netns exec "$LAN_NS" "$@"
}

# host_net VIA: the host's routes to the far end and its network via VIA.
host_net()
{
	ip -6 route replace "$FAR/128" via "$1" dev "$HOST_IF" &&
	ip -6 route replace "$FAR_IN/128" via "$1" dev "$HOST_IF" src "$IN6_H"
}

# far_setup: the far namespace behind the peer, the peer a router (and
# its macvlan a second one), the LAN behind the host, the dummy.
far_setup()
{
	ip netns add "$FAR_NS" &&
	ip link add vrt6 netns "$PEER_NS" type veth peer name vfar6 \
		netns "$FAR_NS" &&
	in_peer sysctl -qw net.ipv6.conf.all.forwarding=1 &&
	in_peer sysctl -qw "net.ipv6.conf.$WIRE_IF.keep_addr_on_down=1" &&
	in_peer ip addr add "$RT_IN/64" dev vrt6 nodad &&
	in_peer ip link set vrt6 up &&
	in_far ip link set lo up &&
	in_far ip addr add "$FAR/64" dev vfar6 nodad &&
	in_far ip link set vfar6 up &&
	in_far ip addr add "$FAR_IN/128" dev lo &&
	in_far ip -6 route add default via "$RT_IN" &&
	in_peer ip link add link "$WIRE_IF" name rt2 address "$RT2_MAC" \
		type macvlan mode bridge &&
	in_peer ip link set rt2 addrgenmode none &&
	in_peer ip addr add "$RT2_LL/64" dev rt2 nodad &&
	in_peer ip link set rt2 up &&
	ip addr replace "$IN6_H/128" dev lo &&
	host_net "$PEER_IP6" &&
	ip link add "$DUM" type dummy &&
	ip link set "$DUM" up &&
	ip netns add "$LAN_NS" &&
	ip link add vnh6 type veth peer name vlan6 netns "$LAN_NS" &&
	ip addr add "$LAN_GW/64" dev vnh6 nodad &&
	ip link set vnh6 up &&
	in_lan ip link set lo up &&
	in_lan ip addr add "$LAN/64" dev vlan6 nodad &&
	in_lan ip link set vlan6 up &&
	in_lan ip -6 route add default via "$LAN_GW" &&
	sysctl -qw net.ipv6.conf.all.forwarding=1
}

# The tunnel's ends and networks, for the helpers.
# shellcheck disable=SC2034
O_H=$HOST_IP6 O_P=$FAR I_H=$IN6_H I_P=$FAR_IN PL=128

# local_l2 WANT: a ping from the host, then the entry shows WANT.
local_l2()
{
	ping -q -c 1 -W 1 "$FAR_IN" >/dev/null 2>&1
	l2_is "$1"
}

# off_us NAME N: the route to the far end leaves through the dummy: the
# entry goes on hold; five pings from the LAN fail, and neither the wire
# nor the dummy sees an ESP frame or the LAN's packets in clear.
off_us()
{
	local name=$1 f=$CAP/off$2 rc esp clear dum why wire_ok wire_pid

	wait_for 15 lan_l2 hold
	capture "$WIRE_IF" "$f.pcap"
	wire_ok=$CAP_OK wire_pid=$CAP_PID
	capture "host:$DUM" "$f-dum.pcap"
	lan_ping 5
	rc=$?
	cap_stop
	CAP_PID=$wire_pid
	cap_stop
	esp=$(frames "$f.pcap" "esp and src host $O_H")
	clear=$(frames "$f.pcap" "src host $LAN")
	dum=$(frames "$f-dum.pcap" "esp or src host $LAN")
	why="table: $(out_l2); ping rc $rc; capture $wire_ok/$CAP_OK: ESP $esp,"
	why+=" clear $clear on the wire, $dum frames on $DUM"
	[ "$(out_l2)" = hold ] && [ "$rc" -ne 0 ] && [ "$wire_ok" = yes ] &&
		[ "$CAP_OK" = yes ] && [ "$esp" -eq 0 ] && [ "$clear" -eq 0 ] &&
		[ "$dum" -eq 0 ] &&
		ktap_ok "$name" "$why" || ktap_fail "$name" "$why"
}

on_exit ip netns del "$FAR_NS"
on_exit ip netns del "$LAN_NS"
on_exit ip link del "$DUM"
on_exit sysctl -qw net.ipv6.conf.all.forwarding="$FWD0"
check "a router between the host and the tunnel's far end" far_setup ||
	ktap_finish

nh_first "IPv6 packet offload via the router: the block has our MAC and the router's"
nh_mac_change "$PEER_IP6"

# The route moves to the second router, through its link-local address:
# transmit sees the route generation move, the driver looks again.
host_net "$RT2_LL"
wait_for 15 local_l2 "$HOST_MAC $RT2_MAC"
ktap_expect "route via the second router's link-local address: the block has its MAC" \
	"table: $(out_l2); neighbour: $(ip -6 neigh show "$RT2_LL" dev "$HOST_IF")" \
	l2_is "$HOST_MAC $RT2_MAC"
through "ESP frames go to the second router's MAC, ping passes" "$RT2_MAC"

# Forwarded traffic from the LAN (xfrm_dev_direct_output() sends it to
# our netdev whatever the route says) while the route leaves through the
# dummy: replaced, then deleted from under a wider route through it.
sas_flush
host_net "$PEER_IP6"
# shellcheck disable=SC2034 # read by nexthop_lib.inc's far_sas
I_H=$LAN
far_sas >/dev/null 2>&1
wait_for 10 lan_ping 1
ip -6 route replace "$FAR/128" dev "$DUM"
off_us "route replaced onto another netdev: on hold, nothing leaves" 1
ip -6 route replace "$FAR/128" via "$PEER_IP6" dev "$HOST_IF"
back_to "$NEW_MAC" "route back through the router: ESP frames to its MAC"
# The wider route first, then the /128 moved to the second router: the
# entry showing its MAC has seen both. Then the delete alone, which only
# the netns's rt6_stats counts (fib6_sernum stays).
ip -6 route add "$WIDE" dev "$DUM" metric 1
ip -6 route replace "$FAR/128" via "$RT2_LL" dev "$HOST_IF"
wait_for 15 lan_l2 "$HOST_MAC $RT2_MAC"
ip -6 route del "$FAR/128" via "$RT2_LL" dev "$HOST_IF"
off_us "route deleted, a wider one through another netdev wins: on hold" 2
ip -6 route add "$FAR/128" via "$PEER_IP6" dev "$HOST_IF"
ip -6 route del "$WIDE" dev "$DUM" metric 1
back_to "$NEW_MAC" "route added back: ESP frames to the router's MAC"

# The far end's route via a next hop that answers nothing: held, nothing
# but neighbour solicitations (ICMPv6 135) for it leave (MLD reports
# carry a hop-by-hop header, ip6 proto 0); once it answers, released.
nh_held "on hold: dropped and counted by the block, nothing sent but NS" \
	"ether src $HOST_MAC and icmp6 and ip6[40] = 135 and ip6[48:4] = 0x20010db8 and ip6[60:4] = 0x77" \
	"ether src $HOST_MAC and ether multicast and not icmp6 and not ip6 proto 0"
nh_release "$IN6_H" "$GHOST/64" nodad

ktap_finish
