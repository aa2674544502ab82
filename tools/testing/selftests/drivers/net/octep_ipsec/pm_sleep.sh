#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# System sleep: the driver's suspend frees the rings of
# a running device and detaches it, its resume brings them back. The VM
# cannot take a real test sleep (/sys/power/pm_test "devices"): its root
# is on virtio-9p, which does not come back from one, and the guest hangs.
# So the model's host_sleep calls the driver's suspend and resume
# callbacks as the PM core does (under the device lock), with the block
# running on meanwhile, as a coprocessor does while its host sleeps.
#
# Asserted: a sleep of 2 s with a TCP stream and a crypto-offloaded ESP
# pair on a running device succeeds and detaches the netdev meanwhile;
# after it the device is up with its rings and carrier, the stream
# completes, and ESP still goes through the block; a device that was down
# stays down and opens afterwards, carrying traffic; the log is clean.

source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/ipsec_lib.inc"
require_cmd ip iperf3 ethtool python3

ktap_plan 15

# sleep_once MS: the driver's suspend, MS ms, its resume (host_sleep).
sleep_once()
{
	sim_write host_sleep "$1"
}

ipsec_prepare
check "modules load" octep_load || ktap_finish
check "device 0 with 2 rings" octep_new 0 2 || ktap_finish
check "peer namespace behind the wire" peer_setup || ktap_finish
ipsec_crypto_pair transport 4

TMPD=$(mktemp -d)
on_exit "rm -rf $TMPD"
on_exit "pkill -x iperf3; in_peer pkill -x iperf3"
in_peer iperf3 -s -D -1 --logfile /dev/null
wait_for 10 in_peer sh -c "ss -ltn | grep -q ':5201 '"
timeout 90 iperf3 -c "$PEER_IP4" -t 20 -J --connect-timeout 10000 \
	>"$TMPD/up.json" 2>&1 &
up=$!
sleep 3

sleep_once 2000 &
sl=$!
# The netdev is detached while asleep: not present, and ethtool says so.
if wait_for 5 sh -c "! ethtool -l $HOST_IF >/dev/null 2>&1"; then
	ktap_ok "asleep: the netdev is detached"
else
	ktap_fail "asleep: the netdev is detached" "ethtool -l still answers"
fi
if wait "$sl"; then
	ktap_ok "a sleep of 2 s under traffic"
else
	ktap_fail "a sleep of 2 s under traffic" "host_sleep failed"
fi
check "awake: the device is up with carrier" \
	sh -c "ip link show $HOST_IF | grep -q 'state UP'"
check "its rings back: ethtool -l answers 2" \
	sh -c "[ \"\$(ethtool -l $HOST_IF | awk '/^Current/ { c = 1 } c && /^Combined:/ { print \$2; exit }')\" = 2 ]"
wait "$up"
rate=$(iperf_rate <"$TMPD/up.json")
if [ "$rate" -gt 0 ]; then
	ktap_ok "the stream lived through the sleep" "$rate Mbit/s"
else
	ktap_fail "the stream lived through the sleep" "$(tail -5 "$TMPD/up.json")"
fi
a=$(stat "$HOST_IF" ipsec_tx_packets)
check "ping through the associations 5/5 after it" ping_ok "$PEER_IP4" 5
b=$(stat "$HOST_IF" ipsec_tx_packets)
if [ $((b - a)) -ge 5 ]; then
	ktap_ok "the block encrypted them" "ipsec_tx_packets +$((b - a))"
else
	ktap_fail "the block encrypted them" "ipsec_tx_packets $a -> $b"
fi

# A device going down takes its offloaded states with it (the xfrm core's
# NETDEV_DOWN flush): from here on, plain traffic.
ipsec_flush
ip link set "$HOST_IF" down
check "a sleep with the device down" sleep_once 500
if ip link show "$HOST_IF" | grep -q 'state DOWN'; then
	ktap_ok "it stays down"
else
	ktap_fail "it stays down" "$(ip link show "$HOST_IF")"
fi
ip link set "$HOST_IF" up
# The first answer may wait for the neighbour entry the down flushed.
wait_for 10 ping -q -c 1 -W 1 "$PEER_IP4" >/dev/null
check "and opens afterwards, pings" ping_ok "$PEER_IP4" 5
kernel_log_clean "no kernel warnings"
ktap_finish
