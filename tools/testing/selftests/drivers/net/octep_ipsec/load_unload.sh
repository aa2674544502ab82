#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Both modules load and unload cleanly, twice in a row (the second time with
# the device still present, so the model's exit removes it), and once more
# while a ping flood and a TCP stream run through the device. The kernel log
# must stay free of warnings throughout.

source "$(dirname "$0")/lib.sh"
require_cmd ip ping iperf3

ktap_plan 15

modules_gone()
{
	[ ! -d /sys/module/octep_ipsec ] && [ ! -d /sys/module/octep_sim ]
}

# Round 1: explicit delete, then unload.
check "round 1: modules load" octep_load || ktap_finish
check "round 1: device with 2 rings" octep_new 0 2
check "round 1: device deleted" octep_del 0
check "round 1: modules unload" octep_unload
check "round 1: modules gone" modules_gone

# Round 2: unload with the device (and its netdevs) still there.
check "round 2: modules load" octep_load || ktap_finish
check "round 2: device with 4 rings" octep_new 0 4
dev_if=$HOST_IF
check "round 2: modules unload with the device present" octep_unload
check "round 2: modules and netdev gone" \
	sh -c "[ ! -d /sys/module/octep_sim ] && ! ip link show $dev_if"

# Round 3: unload while traffic runs through the device.
check "round 3: modules load" octep_load || ktap_finish
check "round 3: device and peer namespace" \
	eval 'octep_new 0 2 && peer_setup' || ktap_finish
in_peer iperf3 -s -D --logfile /dev/null 2>/dev/null
wait_for 10 in_peer sh -c "ss -ltn | grep -q ':5201 '"
ping -f -W 1 "$PEER_IP4" >/dev/null 2>&1 &
flood=$!
iperf3 -c "$PEER_IP4" -t 60 --connect-timeout 10000 >/dev/null 2>&1 &
stream=$!
on_exit "kill $flood $stream"

# Traffic must really be running when the modules go. Measured: ~680
# packets in 2 s under TCG on a loaded 2-core host; a stalled device gives
# next to none, so 100 separates the two with a wide margin.
rx0=$(cat "/sys/class/net/$HOST_IF/statistics/rx_packets")
sleep 2
rx1=$(cat "/sys/class/net/$HOST_IF/statistics/rx_packets")
if [ "$rx1" -gt $((rx0 + 100)) ]; then
	ktap_ok "round 3: traffic flowing" "$((rx1 - rx0)) packets in 2 s"
else
	ktap_fail "round 3: traffic flowing" "rx_packets $rx0 -> $rx1"
fi
check "round 3: modules unload under traffic" timeout 60 bash -c '
	rmmod octep_ipsec && rmmod octep_sim'
check "round 3: modules gone" modules_gone
kill "$flood" "$stream" 2>/dev/null
wait "$flood" "$stream" 2>/dev/null

kernel_log_clean "no kernel warning in all three rounds"

ktap_finish
