#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The watchdog's period, devlink runtime parameter rxwd_period_us, changed
# while a stream runs into the host: the default is 50000; a period of 1 ms
# makes the watchdog tick many times more often than the default; 0 stops
# the periodic tick; a value above the limit is refused with a message; and
# the stream completes through all of it with the kernel log clean (the
# debug tier runs this one under KASAN and lockdep).
#
# Thresholds: in 2 s the watchdog ticks 40 times at 50 ms and up to 2000
# at 1 ms; emulation slows hrtimers down, so "many times more" is asked as
# at least 3x the ticks of the same time at the default. With the period
# at 0 only tick requests (rule 3, unseen buffers or failed refills) arm
# it: with no fault injected there are none, and at most TICKS_OFF_MAX are
# allowed for a refill that failed under memory pressure.
#
# The stream is capped (STREAM_RATE): the test is about the period, not the
# rate. Under emulation an uncapped stream keeps NET_RX always pending, and a
# watchdog ticking every millisecond then enters softirq at every interrupt
# exit: the vCPU spent seconds there (an RCU stall report in one -icount
# run), which real CPUs, a thousand times faster per guest microsecond, never
# see at this period.

source "$(dirname "$0")/lib.sh"
require_cmd ip iperf3 python3 devlink

TICKS_OFF_MAX=5
STREAM_RATE=100M

ktap_plan 9

check "modules load" octep_load || ktap_finish
check "device 0 with 1 ring" octep_new 0 1 || ktap_finish
check "peer namespace behind the wire" peer_setup || ktap_finish

period() { devlink dev param show "$DL_DEV" name rxwd_period_us |
	awk '{ for (i = 1; i < NF; i++) if ($i == "value") print $(i + 1) }'; }
set_period() { devlink dev param set "$DL_DEV" name rxwd_period_us \
	value "$1" cmode runtime; }
ticks_in_2s() { local a; a=$(stat "$HOST_IF" rxwd_ticks); sleep 2
	echo $(($(stat "$HOST_IF" rxwd_ticks) - a)); }

[ "$(period)" = 50000 ] && ktap_ok "rxwd_period_us defaults to 50000" ||
	ktap_fail "rxwd_period_us defaults to 50000" "read $(period)"

iperf3 -s -D -1 --logfile /dev/null
wait_for 10 sh -c "ss -ltn | grep -q ':5201 '"
in_peer timeout 40 iperf3 -c "$HOST_IP4" -t 12 -b "$STREAM_RATE" \
	--connect-timeout 10000 >/dev/null 2>&1 &
client=$!
sleep 1

t_def=$(ticks_in_2s)
set_period 1000
t_fast=$(ticks_in_2s)
if [ "$t_fast" -ge $((3 * t_def)) ] && [ "$t_def" -gt 0 ]; then
	ktap_ok "1 ms period under traffic: 3 times the default's ticks or more" \
		"$t_fast ticks in 2 s (default: $t_def)"
else
	ktap_fail "1 ms period under traffic: 3 times the default's ticks or more" \
		"$t_fast ticks in 2 s (default: $t_def)"
fi
set_period 0
sleep 0.2
t_off=$(ticks_in_2s)
if [ "$t_off" -le "$TICKS_OFF_MAX" ]; then
	ktap_ok "period 0 under traffic: at most $TICKS_OFF_MAX ticks in 2 s" "$t_off ticks in 2 s"
else
	ktap_fail "period 0 under traffic: at most $TICKS_OFF_MAX ticks in 2 s" "$t_off ticks in 2 s"
fi
msg=$(set_period 4000000000 2>&1)
if [ $? -ne 0 ] && grep -q "rxwd_period_us is 100 to 10000000" <<<"$msg"; then
	ktap_ok "a period over the limit is refused with a message"
else
	ktap_fail "a period over the limit is refused with a message" "$msg"
fi
set_period 50000
t_back=$(ticks_in_2s)
if [ "$t_back" -gt 0 ] && [ "$(period)" = 50000 ]; then
	ktap_ok "back to 50000 under traffic: it ticks" "$t_back ticks in 2 s"
else
	ktap_fail "back to 50000 under traffic: it ticks" "$t_back ticks in 2 s, period $(period)"
fi
if wait "$client"; then
	ktap_ok "the stream completed through the changes"
else
	ktap_fail "the stream completed through the changes"
fi

ktap_finish
