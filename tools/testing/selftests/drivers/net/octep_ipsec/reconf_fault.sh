#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Reconfiguration that cannot get its memory (issue 17, item 6). ethtool -L
# and -G prepare the new rings before they free the old ones, so a failed
# allocation refuses the change and the old rings carry on; before, the old
# rings were freed first and a failure left an up but dead device.
#
# The failures come from the kernel's fail_function: on the driver's two
# ring allocators (octep_oq_mem_alloc, octep_iq_mem_alloc, marked
# ALLOW_ERROR_INJECTION) and on page_pool_alloc_pages for the refill. Only
# a kernel with CONFIG_FAIL_FUNCTION has it: the debug kernel (this test is
# in the debug tier); on Debian's kernel the whole test is skipped.
#
# Asserted, under a TCP stream each way through the device: a failed -L or
# -G is refused with ENOMEM, counted in reconf_refused, and leaves the
# rings as they were, carrying traffic; a failure after the first ring
# pair's output ring was prepared frees it (kmemleak, after the test, in the
# debug tier); a loop of changes with allocations failing at random ends on
# a working device, every change either applied or refused whole; refill
# failures are counted (alloc_fail, qstats rx-alloc-fail) and the rings
# fill again once they stop. Prints the loop's counts.

source "$(dirname "$0")/lib.sh"
require_cmd ip iperf3 ethtool python3

FF=/sys/kernel/debug/fail_function
[ -d "$FF" ] || ktap_skip_all "no $FF: a kernel with CONFIG_FAIL_FUNCTION (the debug kernel) is needed"
: "${FAULT_SECS:=10}"
RINGS=4

ktap_plan 15

# ff_set FUNC... : make FUNC... fail with -ENOMEM, FF_PROB percent (100) of
# every FF_INTERVAL-th call (1), FF_TIMES times (1; -1: no limit).
ff_set()
{
	local f

	echo >"$FF/inject"
	for f in "$@"; do
		echo "$f" >"$FF/inject" || return 1
		# page_pool_alloc_pages returns NULL: its retval stays 0.
		[ "$f" = page_pool_alloc_pages ] ||
			printf '%#x' -12 >"$FF/$f/retval" || return 1
	done
	echo 0 >"$FF/verbose"
	echo "${FF_INTERVAL:-1}" >"$FF/interval"
	echo "${FF_PROB:-100}" >"$FF/probability"
	echo "${FF_TIMES:-1}" >"$FF/times"
}

ff_off()
{
	echo 0 >"$FF/probability"
	echo 0 >"$FF/times"
	echo >"$FF/inject"
}

# pings: three pings to the peer, none lost.
pings()
{
	ping -q -c 3 -i 0.2 -W 3 "$PEER_IP4" 2>&1 | grep -q " 0% packet loss"
}

# channels: the current combined count; sizes: "RX TX" ring sizes.
channels()
{
	ethtool -l "$HOST_IF" | awk '/^Current/ { c = 1 } c && /^Combined:/ { print $2; exit }'
}

sizes()
{
	ethtool -g "$HOST_IF" | awk '/^Current/ { c = 1 } c && /^RX:/ { r = $2 } c && /^TX:/ { print r, $2; exit }'
}

# refused DESC FUNC CMD...: CMD, run with FUNC failing once, must fail with
# "Cannot allocate memory", count one reconf_refused, and leave the
# channels and sizes as they were and the device carrying pings.
refused()
{
	local desc=$1 f=$2 n0 c0 s0 out rc

	shift 2
	n0=$(stat "$HOST_IF" reconf_refused)
	c0=$(channels)
	s0=$(sizes)
	ff_set "$f"
	out=$("$@" 2>&1)
	rc=$?
	ff_off
	if [ "$rc" -ne 0 ] && [[ $out == *"Cannot allocate memory"* ]] &&
	   [ "$(stat "$HOST_IF" reconf_refused)" = $((n0 + 1)) ] &&
	   [ "$(channels)" = "$c0" ] && [ "$(sizes)" = "$s0" ] &&
	   pings; then
		ktap_ok "$desc: refused, the old rings ($c0 x $s0) carry on"
	else
		ktap_fail "$desc: refused, the old rings carry on" \
			"exit $rc: $out; reconf_refused $n0 -> $(stat "$HOST_IF" reconf_refused); channels $c0 -> $(channels), sizes $s0 -> $(sizes)"
	fi
}

check "modules load" octep_load || ktap_finish
check "device 0 with $RINGS rings" octep_new 0 "$RINGS" || ktap_finish
check "peer namespace behind the wire" peer_setup || ktap_finish

TMPD=$(mktemp -d)
on_exit "rm -rf $TMPD"
on_exit "pkill -x iperf3; in_peer pkill -x iperf3"
on_exit "[ -d $FF ] && { echo 0 >$FF/probability; echo >$FF/inject; }"
iperf3 -s -D --logfile /dev/null
in_peer iperf3 -s -D --logfile /dev/null
wait_for 10 sh -c "ss -ltn | grep -q ':5201 '"
wait_for 10 in_peer sh -c "ss -ltn | grep -q ':5201 '"
secs=$((FAULT_SECS + 40))
timeout $((secs + 60)) iperf3 -c "$PEER_IP4" -t "$secs" -J \
	--connect-timeout 10000 >"$TMPD/up.json" 2>&1 &
up=$!
in_peer timeout $((secs + 60)) iperf3 -c "$HOST_IP4" -t "$secs" -J \
	--connect-timeout 10000 >"$TMPD/down.json" 2>&1 &
down=$!
sleep 2

refused "-L 2, the output ring allocation fails" octep_oq_mem_alloc \
	ethtool -L "$HOST_IF" combined 2
# Ring pair 0's output ring is prepared when its input ring fails: the
# unwind frees it (a leak would be kmemleak's report after the test).
refused "-G, the input ring allocation fails" octep_iq_mem_alloc \
	ethtool -G "$HOST_IF" rx 512 tx 512
check "-L 2 without a fault is applied" ethtool -L "$HOST_IF" combined 2
check "and carries pings" pings
refused "-L $RINGS, growing, fails" octep_oq_mem_alloc \
	ethtool -L "$HOST_IF" combined "$RINGS"
check "-L $RINGS without a fault is applied" ethtool -L "$HOST_IF" combined "$RINGS"

# The loop: every 11th allocation fails (a change makes 2 a ring pair, so
# some changes fail, each at another ring, and some go through) while
# reconf_loop.py changes -L and -G; a refused change is an error for it,
# so it is run again from where it stopped.
n0=$(stat "$HOST_IF" reconf_refused)
FF_INTERVAL=11 FF_TIMES=-1 ff_set octep_oq_mem_alloc octep_iq_mem_alloc
end=$((SECONDS + FAULT_SECS))
applied=0
other=""
while [ "$SECONDS" -lt "$end" ]; do
	out=$(python3 "$(dirname "$0")/reconf_loop.py" "$HOST_IF" 2)
	read -r nch nrp _ <<<"$out"
	applied=$((applied + nch + nrp))
	case $out in
	*"Cannot allocate memory"* | *"Errno 12"*) ;;
	*"("*) other="$out"; break ;;
	esac
done
ff_off
refused_n=$(( $(stat "$HOST_IF" reconf_refused) - n0 ))
ktap_diag "fault loop: $applied changes applied, $refused_n refused (ENOMEM) in $FAULT_SECS s"
if [ -z "$other" ] && [ "$applied" -gt 0 ] && [ "$refused_n" -gt 0 ]; then
	ktap_ok "fault loop: every change applied or refused whole ($applied applied, $refused_n refused)"
else
	ktap_fail "fault loop: every change applied or refused whole" \
		"applied $applied, refused $refused_n, other error: ${other:-none}"
fi
# reconf_loop.py may have been cut between its changes: back to the start.
ethtool -L "$HOST_IF" combined "$RINGS" 2>/dev/null
ethtool -G "$HOST_IF" rx 1024 tx 1024 2>/dev/null
if [ "$(channels)" = "$RINGS" ] && [ "$(sizes)" = "1024 1024" ] && pings; then
	ktap_ok "after the loop: $RINGS rings of 1024, pings"
else
	ktap_fail "after the loop: $RINGS rings of 1024, pings" "channels $(channels), sizes $(sizes)"
fi

# Refill: half the page pool's allocations fail for 3 s under the streams.
a0=$(stat "$HOST_IF" rx_alloc_fail)
r0=$(stat "$HOST_IF" rx_packets)
FF_PROB=50 FF_TIMES=-1 ff_set page_pool_alloc_pages
sleep 3
ff_off
a1=$(stat "$HOST_IF" rx_alloc_fail)
if [ $((a1 - a0)) -gt 0 ]; then
	ktap_ok "refill failures counted (rx_alloc_fail +$((a1 - a0)))"
else
	ktap_fail "refill failures counted" "rx_alloc_fail $a0 -> $a1, rx_packets $r0 -> $(stat "$HOST_IF" rx_packets)"
fi
check "the rings fill again: pings after" pings

wait "$up" "$down"
u=$(iperf_rate <"$TMPD/up.json")
d=$(iperf_rate <"$TMPD/down.json")
if [ "$u" -gt 0 ] && [ "$d" -gt 0 ]; then
	ktap_ok "both streams lived through it ($u and $d Mbit/s)"
else
	ktap_fail "both streams lived through it" "up $u, down $d Mbit/s"
fi
kernel_log_clean "no kernel warnings"
ktap_finish
