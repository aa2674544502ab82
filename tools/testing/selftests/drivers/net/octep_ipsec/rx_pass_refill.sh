#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# service=pass (the old servicing, a diagnostic) must be slow in the field
# report's way and safe in every other. Its watchdog makes a pass of its
# own, refilling the ring and writing its counters while it holds the
# ring's pass flag; the poll's refill of a ring a refill left short, and
# its counters, used to run without that flag: two lockless users of one
# page pool. Refill failures (the driver's fail_refill attribute, on a
# kernel with CONFIG_FAULT_INJECTION_DEBUG_FS: the debug tier) leave rings
# short, which sends the poll to that refill while the watchdog, at a
# 1 ms period, passes over the same ring.
#
# Asserted, under a TCP stream each way: refill failures happen and are
# counted; both streams flow after the faults stop (a ring whose page
# pool was corrupted does not fill again); the kernel log is clean (and
# the harness fails the test on a KASAN, lockdep or kmemleak report).

source "$(dirname "$0")/lib.sh"
require_cmd ip iperf3 ethtool devlink python3
ynl_require

FF=/sys/kernel/debug/octep_ipsec
: "${FAULT_SECS:=8}"

if ! octep_load >/dev/null 2>&1; then
	ktap_plan 1
	ktap_fail "modules load"
	ktap_finish
fi
[ -d "$FF/fail_refill" ] ||
	ktap_skip_all "no $FF: the kernel lacks CONFIG_FAULT_INJECTION_DEBUG_FS"

ktap_plan 8

check "device 0 with 2 rings" octep_new 0 2 || ktap_finish
check "its servicing: service=pass" octep_knob service pass || ktap_finish
check "peer namespace behind the wire" peer_setup || ktap_finish
check "the watchdog at 1 ms" devlink dev param set "$DL_DEV" \
	name rxwd_period_us value 1000 cmode runtime

refill_off()
{
	echo 0 >"$FF/fail_refill/probability"
	echo 0 >"$FF/fail_refill/times"
}
on_exit streams_stop
on_exit refill_off
check "a stream each way" streams_start || ktap_finish
sleep 2

a0=$(qstat "$HOST_IF" rx-alloc-fail)
echo 0 >"$FF/fail_refill/verbose"
echo 1 >"$FF/fail_refill/interval"
echo 30 >"$FF/fail_refill/probability"
echo -1 >"$FF/fail_refill/times"
sleep "$FAULT_SECS"
refill_off
a1=$(qstat "$HOST_IF" rx-alloc-fail)
if [ -n "$a0" ] && [ -n "$a1" ] && [ $((a1 - a0)) -gt 0 ]; then
	ktap_ok "refill failures counted" "rx-alloc-fail +$((a1 - a0)) in $FAULT_SECS s"
else
	ktap_fail "refill failures counted" "rx-alloc-fail ${a0:-?} -> ${a1:-?}"
fi

if out=$(streams_flowing 30); then
	ktap_ok "both streams flow after the faults" "$out"
else
	ktap_fail "both streams flow after the faults" "in 30 s no 3 s window with both flowing: $out"
fi
streams_stop
kernel_log_clean "no kernel warnings"
ktap_finish
