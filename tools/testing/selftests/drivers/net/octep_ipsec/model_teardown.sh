#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# octep_sim goes away cleanly under traffic with the driver bound: first
# del_device, then rmmod octep_sim itself with octep_ipsec still loaded.
# The model deletes its auxiliary device first (the driver quiesces), then
# stops its engine, then frees. No splat, no leftover netdev.

source "$(dirname "$0")/lib.sh"

require_cmd ip ping iperf3

ID=74
RINGS=2

ktap_plan 10

# traffic_start: a ping flood and a TCP stream up, through the device.
traffic_start()
{
	in_peer iperf3 -s -D --logfile /dev/null 2>/dev/null
	wait_for 10 in_peer sh -c "ss -ltn | grep -q ':5201 '"
	ping -f -W 1 "$PEER_IP4" >/dev/null 2>&1 &
	FLOOD=$!
	iperf3 -c "$PEER_IP4" -t 60 --connect-timeout 10000 >/dev/null 2>&1 &
	STREAM=$!
	on_exit "kill $FLOOD $STREAM"
}

traffic_stop()
{
	kill "$FLOOD" "$STREAM" 2>/dev/null
	wait "$FLOOD" "$STREAM" 2>/dev/null
}

# flowing DESC: traffic really runs through the device. Measured (see
# load_unload.sh): ~680 packets in 2 s under TCG; a stalled device gives
# next to none, so 100 separates the two.
flowing()
{
	local rx0 rx1

	rx0=$(cat "/sys/class/net/$HOST_IF/statistics/rx_packets")
	sleep 2
	rx1=$(cat "/sys/class/net/$HOST_IF/statistics/rx_packets")
	if [ "$rx1" -gt $((rx0 + 100)) ]; then
		ktap_ok "$1" "$((rx1 - rx0)) packets in 2 s"
	else
		ktap_fail "$1" "rx_packets $rx0 -> $rx1"
	fi
}

gone()
{
	! ip link show "$1" >/dev/null 2>&1 &&
	! in_peer ip link show "$2" >/dev/null 2>&1 &&
	! ip link show "$2" >/dev/null 2>&1
}

check "driver and model load" octep_load || ktap_finish
check "device and peer" eval "octep_new $ID $RINGS && peer_setup" ||
	ktap_finish
traffic_start
flowing "round 1: traffic flowing"
host=$HOST_IF wire=$WIRE_IF
check "del_device under traffic" octep_del "$ID"
check "both netdevs gone" gone "$host" "$wire"
traffic_stop
peer_teardown

check "device and peer again" eval "octep_new $ID $RINGS && peer_setup" ||
	ktap_finish
traffic_start
flowing "round 2: traffic flowing"
host=$HOST_IF wire=$WIRE_IF
check "rmmod octep_sim under traffic, driver bound" timeout 60 rmmod octep_sim
check "model gone, driver still loaded, netdevs gone" sh -c "
	[ ! -d /sys/module/octep_sim ] && [ -d /sys/module/octep_ipsec ] &&
	! ip link show $host >/dev/null 2>&1"
traffic_stop
kernel_log_clean "no kernel warning"

ktap_finish
