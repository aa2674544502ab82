#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Mailbox timeouts (the model's mbox_timeout_next) neither stall nor leak:
# one device's timed-out deletes do not slow another device's adds; a
# flush whose deletes time out leaves no entry in the block once the
# fault clears (the driver's resync), with timeouts and orphans counted;
# adds and a read-only `ip xfrm state list` are not held up meanwhile;
# once a request has timed out, adds on that device are refused at once,
# with the reason, and left to the host (they would hold the xfrm
# configuration mutex for a timeout each) until the resync is answered;
# removing the driver under an active fault takes seconds, and what it
# had to leave behind is freed by the next probe.

source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/ipsec_lib.inc"
require_cmd ip ethtool

ktap_plan 24

ipsec_prepare
check "modules load" octep_load || ktap_finish
check "device 0" octep_new 0 1 || ktap_finish
IF0=$HOST_IF DBG0=$SIM_DBG DL0=$DL_DEV
check "device 1" octep_new 1 1 || ktap_finish
IF1=$HOST_IF DBG1=$SIM_DBG DL1=$DL_DEV
ip link set "$IF0" up
ip link set "$IF1" up

ms()
{
	local up

	read -r up _ </proc/uptime
	echo $((${up/./} * 10))
}

# sa_add IF SPI [DIR]: a crypto-offloaded transport state on IF.
sa_add()
{
	ip xfrm state add src 192.0.2.1 dst 192.0.2.2 proto esp spi "$2" \
		reqid 1 mode transport aead 'rfc4106(gcm(aes))' "$IPSEC_K128" \
		128 offload dev "$1" dir "${3:-out}"
}

flows()
{
	cat "$1/ipsec/flows"
}

# sa_del SPI: delete that state.
sa_del()
{
	ip xfrm state delete src 192.0.2.1 dst 192.0.2.2 proto esp spi "$1"
}

# sa_add_offloaded IF SPI: sa_add, true only if the block took it; a state
# the host was left to carry is deleted again.
sa_add_offloaded()
{
	sa_add "$1" "$2" || return 1
	ipsec_offloaded "$2" 192.0.2.1 192.0.2.2 && return 0
	sa_del "$2"
	return 1
}

# Four states on each device; device 0's next request (the delete of its
# four) goes unanswered; while it waits, device 1's four are deleted too,
# and then device 1 adds.
for i in 1 2 3 4; do
	sa_add "$IF0" $((0x100 + i)) && sa_add "$IF1" $((0x200 + i))
done
t0_to=$(stat "$IF0" mbox_timeouts)
echo 1 >"$DBG0/ipsec/mbox_timeout_next"
for i in 1 2 3 4; do
	sa_del $((0x100 + i))
done
sleep 0.5
for i in 1 2 3 4; do
	sa_del $((0x200 + i))
done
t0=$(ms)
sa_add "$IF1" 0x301
rc=$?
t1=$(ms)
ktap_diag "device 1's add: $((t1 - t0)) ms"
[ "$rc" = 0 ] && [ $((t1 - t0)) -lt 1000 ] &&
	ktap_ok "device 1's add is not held up by device 0's timeout" ||
	ktap_fail "device 1's add is not held up by device 0's timeout" \
		"exit $rc, $((t1 - t0)) ms"
t0=$(ms)
sa_add "$IF0" 0x302
rc=$?
t1=$(ms)
ktap_diag "device 0's own add: $((t1 - t0)) ms"
[ "$rc" = 0 ] && [ $((t1 - t0)) -lt 1000 ] &&
	ktap_ok "device 0's own add does not wait for its timed-out deletes" ||
	ktap_fail "device 0's own add does not wait for its timed-out deletes" \
		"exit $rc, $((t1 - t0)) ms"
t0=$(ms)
ip xfrm state list >/dev/null
t1=$(ms)
ktap_diag "ip xfrm state list: $((t1 - t0)) ms"
[ $((t1 - t0)) -lt 1000 ] &&
	ktap_ok "ip xfrm state list meanwhile returns within 1 s" ||
	ktap_fail "ip xfrm state list meanwhile returns within 1 s" "$((t1 - t0)) ms"
wait_for 10 grep -q "in 0 out 1" "$DBG1/ipsec/flows" &&
	ktap_ok "device 1's table holds only its new entry" ||
	ktap_fail "device 1's table holds only its new entry" "$(flows "$DBG1")"

# The deletes timed out (3 s); the resync after the retry frees them.
if wait_for 20 grep -q "in 0 out 1" "$DBG0/ipsec/flows"; then
	ktap_ok "device 0's table drains to its new entry after the fault (resync)"
else
	ktap_fail "device 0's table drains to its new entry after the fault (resync)" \
		"$(flows "$DBG0"); $(ethtool -S "$IF0" | grep -E 'ipsec_(del|orph|resync)')"
fi
to=$(($(stat "$IF0" mbox_timeouts) - t0_to))
[ "$to" = 1 ] && [ "$(cat "$DBG0/ipsec/mbox_timedout")" = 1 ] &&
	ktap_ok "the timeout is counted: mbox_timeouts 1" ||
	ktap_fail "the timeout is counted: mbox_timeouts 1" "mbox_timeouts +$to"
# The timed-out batch held one to four of the deletes (the others were
# queued behind it and went through after the fault).
orph=$(stat "$IF0" ipsec_orphans_total)
[ "${orph:-0}" -ge 1 ] && [ "$(stat "$IF0" ipsec_orphans)" = 0 ] &&
	ktap_ok "the timed-out deletes counted as orphans, none left" "ipsec_orphans_total $orph" ||
	ktap_fail "the timed-out deletes counted as orphans, none left" \
		"$(ethtool -S "$IF0" | grep -E 'ipsec_orph')"
[ "$(stat "$IF0" ipsec_resyncs)" -ge 1 ] &&
	[ "$(stat "$IF0" ipsec_resync_freed)" = "$orph" ] &&
	ktap_ok "a resync freed every orphan: ipsec_resync_freed = ipsec_orphans_total" ||
	ktap_fail "a resync freed every orphan: ipsec_resync_freed = ipsec_orphans_total" \
		"$(ethtool -S "$IF0" | grep -E 'ipsec_(orph|resync)')"
[ "$(stat "$IF1" mbox_timeouts)" = 0 ] &&
	[ "$(stat "$IF1" ipsec_orphans_total)" = 0 ] &&
	ktap_ok "device 1 saw no timeout and no orphan" ||
	ktap_fail "device 1 saw no timeout and no orphan" \
		"$(ethtool -S "$IF1" | grep -E 'mbox_timeouts|ipsec_orph')"

# reporter DL: "error recover" of DL's devlink health reporter "mbox".
reporter()
{
	devlink -j health show "$1" reporter mbox | python3 -c '
import json, sys
r = list(json.load(sys.stdin)["health"].values())[0][0]
print(r["error"], r["recover"])'
}
# The mailbox reporter: the timeout reported, recovered by a resync (the
# table drained above); the dump says which command failed and how.
r0=$(reporter "$DL0") r1=$(reporter "$DL1")
[ "$r0" = "1 1" ] && [ "$r1" = "0 0" ] &&
	ktap_ok "devlink health: device 0's mbox reporter has 1 error, recovered; device 1's none" ||
	ktap_fail "devlink health: device 0's mbox reporter has 1 error, recovered; device 1's none" \
		"device 0: error recover ${r0:-?}; device 1: ${r1:-?}"
dump=$(devlink health dump show "$DL0" reporter mbox 2>&1)
echo "$dump" | grep -q "error: timeout" && echo "$dump" | grep -q "timeouts: 1 " &&
	ktap_ok "the mbox dump names the failed request: a timeout" ||
	ktap_fail "the mbox dump names the failed request: a timeout" "$dump"
diag=$(devlink health diagnose "$DL1" reporter mbox 2>&1)
echo "$diag" | grep -q "last_failure: none" &&
	ktap_ok "device 1's mbox diagnose: no failure" ||
	ktap_fail "device 1's mbox diagnose: no failure" "$diag"

# A table that is full while its deletes are stuck in a timeout: the add
# waits for them at most 1 s, then says why it failed; once the fault is
# spent the resync makes room.
echo 3 >"$DBG1/ipsec/capacity_out"
sa_add "$IF1" 0x311 && sa_add "$IF1" 0x312
before=$(flows "$DBG1")
# Both deletes time out, and only deletes (FLOW_DEL_MANY, command 6): had
# the second gone through, a slow host could see its room made during the
# add's wait, and the add's own request must not be the one left.
echo 6 >"$DBG1/ipsec/mbox_fault_cmd"
echo 2 >"$DBG1/ipsec/mbox_timeout_next"
sa_del 0x311
sa_del 0x312
sleep 0.5
t0=$(ms)
out=$(sa_add "$IF1" 0x313 2>&1)
rc=$?
t1=$(ms)
# Less than the mailbox's 3 s timeout: it did not wait for the stuck delete.
ktap_diag "the add into a full table: $((t1 - t0)) ms"
if [ "$rc" != 0 ] && [ $((t1 - t0)) -lt 3000 ] &&
   grep -q "The flow table is full, [0-9]* deletes still queued" <<<"$out"; then
	ktap_ok "full table, deletes stuck: the add fails within 3 s, saying why"
else
	ktap_fail "full table, deletes stuck: the add fails within 3 s, saying why" \
		"table before: $before; exit $rc, $((t1 - t0)) ms: $out"
fi
echo 0 >"$DBG1/ipsec/mbox_fault_cmd"
wait_for 20 sa_add_offloaded "$IF1" 0x313 &&
	wait_for 20 grep -q "in 0 out 2" "$DBG1/ipsec/flows" &&
	ktap_ok "after the fault the add goes in, the stuck entries freed" ||
	ktap_fail "after the fault the add goes in, the stuck entries freed" \
		"$(flows "$DBG1"); $(ethtool -S "$IF1" | grep -E 'ipsec_(del|orph|resync)')"

# A request times out: until one is answered again, adds on that device
# are refused without a request (the model counts none), with the reason,
# and the host carries the crypto offload state; once the fault is spent
# the resync is answered and adds are offloaded again. Counted, not timed.
echo 1000 >"$DBG1/ipsec/mbox_timeout_next"
sa_add "$IF1" 0x321
req0=$(cat "$DBG1/ipsec/mbox_requests")
out=$(sa_add "$IF1" 0x322 2>&1)
rc=$?
req1=$(cat "$DBG1/ipsec/mbox_requests")
if [ "$rc" = 0 ] && grep -q "mailbox is not answering: offload refused" <<<"$out" &&
   ! ipsec_offloaded 0x322 192.0.2.1 192.0.2.2; then
	ktap_ok "mailbox down: the next add is refused with the reason, left to the host"
else
	ktap_fail "mailbox down: the next add is refused with the reason, left to the host" \
		"exit $rc: $out"
fi
# The resync (the reporter's recover) may send its own requests meanwhile:
# not more than it, and the add's refusal sent none of its own.
[ $((req1 - req0)) -le 1 ] &&
	ktap_ok "the refused add sent no request" "$((req1 - req0)) in the meantime" ||
	ktap_fail "the refused add sent no request" "mbox_requests $req0 -> $req1"
echo 0 >"$DBG1/ipsec/mbox_timeout_next"
wait_for 30 sa_add_offloaded "$IF1" 0x323 &&
	ktap_ok "once the resync is answered, adds are offloaded again" ||
	ktap_fail "once the resync is answered, adds are offloaded again" \
		"$(ethtool -S "$IF1" | grep -E 'mbox_|ipsec_resync')"
for s in 0x321 0x322 0x323; do
	sa_del "$s" 2>/dev/null
done

# Removal with states installed and device 0's mailbox dead.
for i in 1 2 3 4 5; do
	sa_add "$IF0" $((0x400 + i))
done
echo 1000 >"$DBG0/ipsec/mbox_timeout_next"
t0=$(ms)
rmmod octep_ipsec
rc=$?
t1=$(ms)
ktap_diag "rmmod: $((t1 - t0)) ms"
[ "$rc" = 0 ] && [ $((t1 - t0)) -lt 10000 ] &&
	ktap_ok "rmmod under the fault with 6 states takes under 10 s" ||
	ktap_fail "rmmod under the fault with 6 states takes under 10 s" \
		"exit $rc, $((t1 - t0)) ms"
grep -q "in 0 out 6" "$DBG0/ipsec/flows" &&
	ktap_ok "the 6 entries it could not delete are left in device 0's block" ||
	ktap_fail "the 6 entries it could not delete are left in device 0's block" \
		"$(flows "$DBG0")"
echo 0 >"$DBG0/ipsec/mbox_timeout_next"
lib_insmod octep_ipsec
wait_for 10 grep -q "in 0 out 0" "$DBG0/ipsec/flows" &&
	ktap_ok "the next probe's resync frees them" ||
	ktap_fail "the next probe's resync frees them" "$(flows "$DBG0")"
kernel_log_clean "no kernel warnings"
ktap_finish
