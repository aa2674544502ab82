#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Unit test of the block's rules (drivers/net/octep_sim/rules.c, shared by
# octep_sim and octep-vfu), compiled natively as octep-vfu compiles them,
# through its stand-in kernel headers: scripts/tests/rules.c drives them
# through crossing, the timer, RESEND under each resend_pending, latch and
# drop, and the record of rings left. Then the same test against mutants
# of rules.c, each breaking one rule: every mutant must fail it, so the
# test can tell a rule kept from a rule broken.
set -u

top=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
rules=$top/drivers/net/octep_sim/rules.c
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# shellcheck source=tap.inc
. "$top/scripts/tests/tap.inc"

# build SRC OUT: the test against the rules in SRC, with octep-vfu's
# warnings (the Makefile's VFU flags) and the stand-in headers; rules.c's
# own includes are found from the octep_sim directory wherever SRC is.
build()
{
	cc -O2 -Wall -Wextra -Wno-unused-parameter -Werror \
		-I"$top/drivers/net/octep_sim/vfu/include" \
		-I"$top/drivers/net/octep_sim" \
		-o "$2" "$top/scripts/tests/rules.c" "$1" 2>"$tmp/cc.log"
}

build "$rules" "$tmp/rules"
rc=$?
t "the test and rules.c build without a warning" '[ $rc -eq 0 ]' \
	"$(head -c 600 "$tmp/cc.log")"
"$tmp/rules" >"$tmp/out" 2>&1
rc=$?
sed 's/^/# /' "$tmp/out"
t "every rule holds" '[ $rc -eq 0 ] && grep -q "^# [1-9][0-9]* tests, 0 failed" "$tmp/out"' \
	"$(grep "^not ok" "$tmp/out" | head -n 5)"

# mutant NAME FROM TO: rules.c with the line FROM (fixed string) replaced
# by TO must build and fail the test.
mutant()
{
	local name=$1 from=$2 to=$3 m=$tmp/mutant.c

	FROM=$from TO=$to perl -pe \
		'BEGIN { $n = 0 } $n += s/\Q$ENV{FROM}\E/$ENV{TO}/; END { exit($n != 1) }' \
		"$rules" >"$m"
	rc=$?
	t "mutant '$name' made" '[ $rc -eq 0 ]' "'$from' not found once in rules.c"
	[ $rc -eq 0 ] || return
	build "$m" "$tmp/mutant"
	rc=$?
	t "mutant '$name' builds" '[ $rc -eq 0 ]' "$(head -c 600 "$tmp/cc.log")"
	[ $rc -eq 0 ] || return
	"$tmp/mutant" >"$tmp/mout" 2>&1
	rc=$?
	t "mutant '$name' fails the test" '[ $rc -ne 0 ]'
	grep "^not ok" "$tmp/mout" | head -n 3 | sed 's/^/#   /'
}

mutant "raise at or above the level, not on crossing" \
	'if (old < level && new >= level) {' 'if (new >= level) {'
mutant "timer restarted by every packet below the level" \
	'} else if (!old && new) {' '} else if (new < level) {'
mutant "the timer's threshold taken as ns" \
	'r->timer_expires = now + (u64)r->time_us * NSEC_PER_USEC;' \
	'r->timer_expires = now + r->time_us;'
mutant "a new level or threshold does not restart the timer" \
	'act = osim_rules_rearm(r, now);' 'act = 0;'
mutant "resend_pending level taken as nonzero" \
	'return r->count >= osim_rules_level(r);' 'return r->count != 0;'
mutant "resend_pending never ignored" \
	'		return false;' '		return true;'
mutant "any silence is a ring left" \
	'if (ns >= cfg->left_ns)' 'if (ns)'
mutant "masked=drop latches" \
	'if (cfg->masked == OSIM_MASKED_DROP) {' 'if (0) {'
mutant "the enable sends with nothing latched" \
	'if (ena && r->latched) {' 'if (ena) {'
mutant "a lost send is owed" \
	'if ((act & OSIM_RULES_SEND) && sent)' 'if (act & OSIM_RULES_SEND)'
mutant "an ack that leaves packets does not restart the timer" \
	'act = osim_rules_rearm(r, now) | OSIM_RULES_LOOKED;' \
	'act = osim_rules_disarm(r) | OSIM_RULES_LOOKED;'

tap_end
