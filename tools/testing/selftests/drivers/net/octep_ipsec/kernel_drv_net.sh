#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The kernel's own driver selftests (tools/testing/selftests/drivers/net in
# linux-source: ping.py, stats.py, queues.py) against our netdev, as NIPA
# runs them against a new driver: NETIF is the driver's netdev, the remote
# end the peer namespace behind the model's wire (REMOTE_TYPE=netns). Each
# of their cases becomes one case here; their SKIP and XFAIL (a feature the
# device does not have) are reported as skipped, never as passed.

source "$(dirname "$0")/lib.sh"
require_cmd ip ethtool ping socat python3

KSRC=${KSRC:-/usr/src/linux-source-6.12}
KDIR=$KSRC/tools/testing/selftests/drivers/net
TESTS="ping.py stats.py queues.py"

if [ ! -f "$KDIR/stats.py" ] || ! python3 -c 'import yaml' 2>/dev/null; then
	ktap_skip_all "no kernel selftests: $KDIR and python3-yaml are needed"
fi

LIB_TMPDIR=$(mktemp -d)
on_exit "rm -rf $LIB_TMPDIR"

# The setup first, its cases counted after: the plan needs the number of
# cases the kernel's scripts report, known only once they ran.
setup_ok=1
{
	octep_load && echo "ok modules load" || { echo "not ok modules load"; setup_ok=0; }
	[ $setup_ok = 1 ] && { octep_new 0 4 && echo "ok device 0 with 4 rings" ||
		{ echo "not ok device 0 with 4 rings"; setup_ok=0; }; }
	[ $setup_ok = 1 ] && { peer_setup && echo "ok peer namespace behind the wire" ||
		{ echo "not ok peer namespace behind the wire"; setup_ok=0; }; }
} >"$LIB_TMPDIR/setup" 2>&1

if [ $setup_ok = 1 ]; then
	for t in $TESTS; do
		# Their Python writes no cache into the read-only source tree.
		PYTHONDONTWRITEBYTECODE=1 NETIF=$HOST_IF \
		LOCAL_V4=$HOST_IP4 REMOTE_V4=$PEER_IP4 \
		LOCAL_V6=$HOST_IP6 REMOTE_V6=$PEER_IP6 \
		REMOTE_TYPE=netns REMOTE_ARGS=$PEER_NS \
			timeout 300 python3 "$KDIR/$t" >"$LIB_TMPDIR/$t.out" 2>&1
		echo "$?" >"$LIB_TMPDIR/$t.rc"
	done
fi

# cases T: the "ok N name [# SKIP|XFAIL why]" lines of T's KTAP output.
cases()
{
	grep -E '^(not )?ok [0-9]+ ' "$LIB_TMPDIR/$1.out" 2>/dev/null
}

n=$(grep -c '^' "$LIB_TMPDIR/setup")
if [ $setup_ok = 1 ]; then
	for t in $TESTS; do
		c=$(cases "$t" | wc -l)
		# A script that reported no case at all is one failed case.
		[ "$c" -gt 0 ] || c=1
		n=$((n + c + 1))
	done
fi
ktap_plan "$n"

while read -r line; do
	case $line in
	"ok "*) ktap_ok "${line#ok }" ;;
	*) ktap_fail "${line#not ok }" "see the log" ;;
	esac
done <"$LIB_TMPDIR/setup"
[ $setup_ok = 1 ] || ktap_finish

for t in $TESTS; do
	sed 's/^/# /' "$LIB_TMPDIR/$t.out" | grep -vE '^# (not )?ok [0-9]+ '
	if [ "$(cases "$t" | wc -l)" -eq 0 ]; then
		ktap_fail "$t: ran its cases" "no KTAP result, exit $(cat "$LIB_TMPDIR/$t.rc")"
	fi
	while read -r line; do
		name=$(echo "$line" | sed -E 's/^(not )?ok [0-9]+ //; s/ # .*//')
		why=$(echo "$line" | sed -nE 's/.* # (SKIP|XFAIL) ?(.*)/\1 \2/p')
		if [ -n "$why" ]; then
			ktap_skip "$name" "$why"
		elif [ "${line#not }" = "$line" ]; then
			ktap_ok "$name"
		else
			ktap_fail "$name" "see its output above"
		fi
	done < <(cases "$t")
	# A failing case or a crash after the last case shows in the exit code.
	rc=$(cat "$LIB_TMPDIR/$t.rc")
	if [ "$rc" = 0 ]; then
		ktap_ok "$t: exit 0"
	else
		ktap_fail "$t: exit 0" "exit $rc"
	fi
done

ktap_finish
