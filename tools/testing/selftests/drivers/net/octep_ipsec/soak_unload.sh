#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Soak: UNLOAD_CYCLES (default 2; `make check-soak` 100) removals of
# octep_ipsec under traffic with offloaded associations, crypto and packet
# offload in turn. Each cycle: the driver loaded on the model's device,
# transport-mode states (and, for packet offload, policies) offloaded both
# ways, a TCP stream each way through them, then rmmod while they run.
#
# Asserted, over all cycles: the block carried ESP in each before the
# removal; every removal finished within REMOVE_MAX (10) seconds; no
# offloaded state or policy was left; no splat and, in the debug tier, no
# leak (its kmemleak scan after the test). Prints each cycle's removal
# and the longest.
#
# A removal is timed around the delete_module() system call, made by an
# interpreter already running, not around rmmod: the streams hold both
# vCPUs, and the command's own start took most of its time (the Debian
# kernel, 2026-12-03: 3.8 s for rmmod, 0.73 s of it in delete_module()).
# On the debug kernel beside other guests, 4 of 100 rmmods took 10.0 to
# 14.8 s (the host's load, not the driver's: guest time runs with the
# host's clock there), so check-soak times this test under -icount
# (timed.txt), where the host cannot stretch guest time: the same
# kernel's removals there took at most 2.2 s in 4 cycles.

source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/ipsec_lib.inc"
require_cmd ip iperf3 ethtool python3

: "${UNLOAD_CYCLES:=2}"
REMOVE_MAX=10
REMOVE_GIVE_UP=40

ktap_plan 8

ipsec_prepare
check "modules load" octep_load || ktap_finish
check "device 0 with 2 rings" octep_new 0 2 || ktap_finish
check "peer namespace behind the wire" peer_setup || ktap_finish

on_exit streams_stop
REMOVED=$(mktemp)
on_exit "rm -f $REMOVED"

# remove_module NAME: delete_module(NAME) as rmmod makes it, timed around
# the call alone; prints "ERRNO SECONDS" (0 on success).
remove_module()
{
	python3 -c '
import ctypes, os, sys, time
libc = ctypes.CDLL(None, use_errno=True)
t0 = time.monotonic()
rc = libc.delete_module(sys.argv[1].encode(), os.O_NONBLOCK)
dt = time.monotonic() - t0
print(ctypes.get_errno() if rc else 0, "%.2f" % dt)' "$1"
}

# attach: the driver loaded (again) on device 0, the host's address on
# its netdev, the peer answering.
attach()
{
	local d=/sys/bus/octep_sim/devices/octep_sim0/octep_sim.sdp.0/net

	lsmod | grep -q '^octep_ipsec ' || lib_insmod octep_ipsec || return 1
	wait_for "$OCTEP_WAIT" lib_one_netdev "$d" || return 1
	HOST_IF=$(lib_one_netdev "$d")
	# The removal took the offloaded states, not the policies.
	ipsec_flush
	ip addr add "$HOST_IP4/24" dev "$HOST_IF" 2>/dev/null
	ip link set "$HOST_IF" up &&
	wait_for "$OCTEP_WAIT" ping -c 1 -W 1 "$PEER_IP4"
}

cycles=0 carried=0 quick=0 clean=0 attached=0 longest=0 why=""
for ((i = 0; i < UNLOAD_CYCLES; i++)); do
	mode=crypto
	[ $((i % 2)) = 1 ] && mode=packet
	attach || { why="cycle $i: the driver did not come back"; break; }
	attached=$((attached + 1))
	ipsec_case transport 4
	ipsec_install transport "$mode" 2 >/dev/null
	tx0=$(stat "$HOST_IF" ipsec_tx_packets)
	rx0=$(stat "$HOST_IF" ipsec_rx_packets)
	streams_start
	sleep 3
	tx=$(($(stat "$HOST_IF" ipsec_tx_packets) - tx0))
	rx=$(($(stat "$HOST_IF" ipsec_rx_packets) - rx0))
	if ipsec_both_offloaded && [ "$tx" -gt 0 ] && [ "$rx" -gt 0 ]; then
		carried=$((carried + 1))
	else
		why="$why; cycle $i ($mode): block tx +$tx rx +$rx"
	fi
	t0=$EPOCHREALTIME
	remove_module octep_ipsec >"$REMOVED" &
	pid=$!
	wait_for "$REMOVE_GIVE_UP" sh -c "! kill -0 $pid" || streams_stop
	wait "$pid"
	cmd=$(awk -v a="$t0" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.1f", b - a }')
	read -r rc dt <"$REMOVED"
	ktap_diag "cycle $i ($mode): delete_module ${dt:-?} s (returned ${rc:-?}), the whole command $cmd s"
	if [ "${rc:-}" != 0 ]; then
		why="$why; cycle $i ($mode): delete_module returned ${rc:-nothing}"
		dt=$cmd
	fi
	awk -v d="$dt" -v m="$longest" 'BEGIN { exit !(d > m) }' && longest=$dt
	if [ "${rc:-}" = 0 ] &&
	   awk -v d="$dt" -v m="$REMOVE_MAX" 'BEGIN { exit !(d < m) }'; then
		quick=$((quick + 1))
	else
		why="$why; cycle $i ($mode): removal took $dt s"
	fi
	streams_stop
	if ! ip xfrm state | grep -q "offload parameters" &&
	   ! ip xfrm policy | grep -q "offload parameters"; then
		clean=$((clean + 1))
	else
		why="$why; cycle $i ($mode): offloaded state or policy left"
	fi
	cycles=$((cycles + 1))
done
ktap_diag "$cycles cycles (crypto and packet in turn), longest removal $longest s${why:+: $why}"
[ "$cycles" = "$UNLOAD_CYCLES" ] && [ "$attached" = "$cycles" ] &&
	ktap_ok "$UNLOAD_CYCLES cycles ran" "$cycles of $UNLOAD_CYCLES" ||
	ktap_fail "$UNLOAD_CYCLES cycles ran" "$why"
# per_cycle N DESC [DIAG]: N of the cycles met DESC; with no cycle run,
# nothing was shown (the first failure above says why). DIAG: what was
# measured, printed before the ok line.
per_cycle()
{
	if [ "$cycles" = 0 ]; then
		ktap_fail "$2" "no cycle ran${why:+: $why}"
	elif [ "$1" = "$cycles" ]; then
		ktap_ok "$2" "${3:-}"
	else
		ktap_fail "$2" "$why"
	fi
}
per_cycle "$carried" "the block carried ESP both ways in each"
per_cycle "$quick" "every removal under traffic within $REMOVE_MAX s" "longest $longest s"
per_cycle "$clean" "no offloaded state or policy left after any"
ipsec_flush
kernel_log_clean "no kernel warnings"
ktap_finish
