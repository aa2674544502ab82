#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The driver's netdev and the model's wire appear when a model device is
# created, the netdev and devlink name the driver (devlink dev info also
# the block's mailbox protocol), and IPv4 and IPv6 reach the peer
# namespace behind the wire, both ways, only while the link is up.
# ethtool shows the port's speed (the model's link_mbps cap, else the full
# 10000 Mb/s), which ethtool -s cannot change.

source "$(dirname "$0")/lib.sh"
require_cmd ip ethtool ping

ktap_plan 17

check "modules load" octep_load || ktap_finish
check "device 0 with 2 rings: netdev and wire appear" octep_new 0 2 || ktap_finish

drv=$(ethtool -i "$HOST_IF" | awk '$1 == "driver:" { print $2 }')
if [ "$drv" = octep_ipsec ]; then
	ktap_ok "ethtool -i $HOST_IF names the driver"
else
	ktap_fail "ethtool -i $HOST_IF names the driver" "driver: '$drv'"
fi
check "devlink instance $DL_DEV exists" devlink dev show "$DL_DEV"
# devlink dev info: the driver (the core's), and the control mailbox's
# protocol version as GET_INFO gave it (the model speaks 1.0).
info=$(devlink dev info "$DL_DEV")
if echo "$info" | grep -q "driver octep_ipsec" &&
   echo "$info" | grep -q "fw.mgmt.api 1.0"; then
	ktap_ok "devlink dev info: driver octep_ipsec, fw.mgmt.api 1.0"
else
	ktap_fail "devlink dev info: driver octep_ipsec, fw.mgmt.api 1.0" \
		"$(echo "$info" | tr '\n' ' ')"
fi

check "peer namespace behind the wire" peer_setup || ktap_finish

rx0=$(cat "/sys/class/net/$HOST_IF/statistics/rx_packets")
tx0=$(cat "/sys/class/net/$HOST_IF/statistics/tx_packets")
check "IPv4 ping host -> peer" ping -c 3 -i 0.2 -W 5 "$PEER_IP4"
check "IPv6 ping host -> peer" ping -6 -c 3 -i 0.2 -W 5 "$PEER_IP6"
check "IPv4 ping peer -> host" in_peer ping -c 3 -i 0.2 -W 5 "$HOST_IP4"
check "IPv6 ping peer -> host" in_peer ping -6 -c 3 -i 0.2 -W 5 "$HOST_IP6"

# 12 echo requests went out and 12 replies came back through the driver
# (plus ARP/ND): its netdev counters must show at least that.
rx=$(($(cat "/sys/class/net/$HOST_IF/statistics/rx_packets") - rx0))
tx=$(($(cat "/sys/class/net/$HOST_IF/statistics/tx_packets") - tx0))
if [ "$rx" -ge 12 ] && [ "$tx" -ge 12 ]; then
	ktap_ok "netdev counters count the pings" "rx +$rx tx +$tx"
else
	ktap_fail "netdev counters count the pings" "rx +$rx tx +$tx, want >= 12 each"
fi

# speed_is MBPS: ethtool shows the port at MBPS, full duplex.
speed_is()
{
	local out

	out=$(ethtool "$HOST_IF")
	if grep -q "Speed: $1Mb/s" <<<"$out" && grep -q "Duplex: Full" <<<"$out"; then
		echo ok
	else
		echo "ethtool: $(grep -E 'Speed|Duplex' <<<"$out" | tr -s ' \n' ' ')"
	fi
}
verdict "ethtool: the port's full rate, 10000 Mb/s, full duplex" speed_is 10000
sim_write link_mbps 20
verdict "ethtool: the block's rate cap (link_mbps 20): 20 Mb/s" speed_is 20
# The rate is the block's: ethtool -s cannot set it, and leaves it alone.
if ! ethtool -s "$HOST_IF" speed 100 duplex full autoneg off 2>/dev/null &&
   [ "$(sim_read link_mbps)" = 20 ] && [ "$(speed_is 20)" = ok ]; then
	ktap_ok "ethtool -s speed refused, the block's rate kept"
else
	ktap_fail "ethtool -s speed refused, the block's rate kept" \
		"link_mbps $(sim_read link_mbps); $(speed_is 20)"
fi
sim_write link_mbps 0
verdict "ethtool: the full rate again when the cap is lifted" speed_is 10000

# The packets really cross our netdev: with it down nothing gets through,
# and after it comes back up (open again) everything does.
# Keep the IPv6 addresses across the down (the default drops them).
sysctl -qw "net.ipv6.conf.$HOST_IF.keep_addr_on_down=1"
ip link set "$HOST_IF" down
if ping -c 2 -i 0.2 -W 1 "$PEER_IP4" >/dev/null 2>&1; then
	ktap_fail "no ping while $HOST_IF is down" "ping succeeded"
else
	ktap_ok "no ping while $HOST_IF is down"
fi
ip link set "$HOST_IF" up
wait_for "$OCTEP_WAIT" lib_no_tentative
check "IPv4 and IPv6 ping again after down/up" \
	sh -c "ping -c 2 -i 0.2 -W 5 $PEER_IP4 && ping -6 -c 2 -i 0.2 -W 5 $PEER_IP6"

ktap_finish
