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
source "$(dirname "$0")/nexthop_lib.inc"
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

# The tunnel's ends and networks, for the helpers.
# shellcheck disable=SC2034
O_H=$HOST_IP4 O_P=$FAR I_H=$IN4_H I_P=$FAR_IN PL=32

on_exit ip netns del "$FAR_NS"
on_exit ip netns del "$LAN_NS"
on_exit sysctl -qw net.ipv4.ip_forward="$FWD0"
check "a router between the host and the tunnel's far end" far_setup ||
	ktap_finish

nh_first "packet offload via the router: the block has our MAC and the router's"
nh_mac_change "$PEER_IP4"

# The route moves under forwarded traffic (the LAN's, whose frames the
# block addresses): to a next hop that answers nothing, then back. The
# driver sees the route generation change in transmit and looks the
# route up again: the entry goes on hold, then back to the router's MAC.
sas_flush
# shellcheck disable=SC2034 # read by nexthop_lib.inc's far_sas
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
back_to "$NEW_MAC" "route moved back: ESP frames to the router's MAC, ping passes"

# The far end's route via a next hop that answers nothing: held, nothing
# but ARP for it leaves; once it answers, released.
nh_held "on hold: dropped and counted by the block, nothing sent but ARP" \
	"arp and ether src $HOST_MAC and arp[24:4] = 0xc000024d" \
	"ether src $HOST_MAC and ether broadcast and not arp"
nh_release "$IN4_H" "$GHOST/24"

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
