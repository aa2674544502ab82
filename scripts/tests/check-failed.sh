#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Unit test of scripts/check's failed_cases(): from a boot's output, each
# failed case with the test it belongs to and the last diagnostic lines it
# printed before its "not ok" (what CI's tail of make check then shows),
# from a console log's CRLF lines too.
set -u

top=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
eval "$(sed -n '/^failed_cases()$/,/^}$/p' "$top/scripts/check")"

cat >"$tmp/selftests-debug-2.out" <<'OUT'
# ---- dead_ring (timeout 900s)
# TAP version 13
# # a diagnostic of a case that passed
# ok 6 IN_ENABLE cleared: ping works again
# # tx_timeouts 0 -> 0; tx_stops 3
# not ok 7 in_hang, queue stopped: NETDEV WATCHDOG
# # one
# # two
# # three
# # four
# not ok 8 a second failure
# ok 9 fine
# dead_ring: kernel splat during the test
# not ok dead_ring: clean finish
# dead_ring: 104 s
not ok 5 selftests: octep_ipsec: dead_ring
# ---- soak_esp (timeout 900s)
# ok 1 modules load
OUT
want="selftests-debug-2: dead_ring: not ok 7 in_hang, queue stopped: NETDEV WATCHDOG
> tx_timeouts 0 -> 0; tx_stops 3
selftests-debug-2: dead_ring: not ok 8 a second failure
> two
> three
> four
selftests-debug-2: dead_ring: not ok dead_ring: clean finish
> dead_ring: kernel splat during the test"
got=$(failed_cases "$tmp/selftests-debug-2")
echo "TAP version 13"
echo "1..2"
if [ "$got" = "$want" ]; then
	echo "ok 1 failed cases named with their test and last diagnostics"
else
	echo "not ok 1 failed cases named with their test and last diagnostics"
	diff <(echo "$want") <(echo "$got") | sed 's/^/# /'
fi
printf '# ---- ok_test (timeout 60s)\n# ok 1 fine\nok 1 selftests\n' >"$tmp/clean.out"
if [ -z "$(failed_cases "$tmp/clean")" ]; then
	echo "ok 2 a boot with no failure lists nothing"
else
	echo "not ok 2 a boot with no failure lists nothing"
fi
[ "$got" = "$want" ] && [ -z "$(failed_cases "$tmp/clean")" ]
