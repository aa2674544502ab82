#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The kernel's own driver selftests (tools/testing/selftests/drivers/net in
# linux-source: ping.py, stats.py, queues.py, hw/csum.py, hw/rss_ctx.py)
# against our netdev, as NIPA runs them against a new driver: NETIF is the
# driver's netdev, the remote end the peer namespace behind the model's
# wire (REMOTE_TYPE=netns). Each of their cases becomes one case here;
# their SKIP and XFAIL (a feature the device does not have) are reported as
# skipped, never as passed. So is a case that failed only because Debian
# 12's ethtool 6.1 has no --json for the command it ran (rss_ctx.py's
# "ethtool --json -x"), or only on a wall-clock bound (rss_ctx.py's 0.2 s
# for one ethtool -X under traffic, which an emulated CPU cannot judge):
# the reason and the measured time are printed with it.
#
# 6.12's copies need two things their tree does not give: the csum binary
# (built here from net/lib/csum.c into an overlay over that read-only
# directory, behind a wrapper that widens its receive window) and
# cfg.remote_ifname, which hw/csum.py reads and 6.12's NetDrvEpEnv does
# not set (a shim sets it to the peer's end of the wire, and gives
# wait_port_listen() 60 s where it had 5).
# hw/pp_alloc_fail.py is not run: its fail_function injection of
# page_pool_alloc_pages trips a lockdep report in 6.12 itself, it wants
# 15,000 received packets a second and ethtool --json -g. The driver's own
# fault attribute covers rx-alloc-fail (reconf_fault.sh).

source "$(dirname "$0")/lib.sh"
require_cmd ip ethtool ping socat python3 gcc

KSRC=${KSRC:-/usr/src/linux-source-6.12}
KSFT=$KSRC/tools/testing/selftests
KDIR=$KSFT/drivers/net
# KDN_TESTS: a subset of them (make check's Debian 13 boot: rss_ctx.py).
TESTS=${KDN_TESTS:-ping.py stats.py queues.py hw/csum.py hw/rss_ctx.py}

if [ ! -f "$KDIR/stats.py" ] || [ ! -f "$KDIR/hw/csum.py" ] ||
   ! python3 -c 'import yaml' 2>/dev/null; then
	ktap_skip_all "no kernel selftests: $KDIR and python3-yaml are needed"
fi

LIB_TMPDIR=$(mktemp -d)
on_exit "rm -rf $LIB_TMPDIR"
mkdir -p "$LIB_TMPDIR/up" "$LIB_TMPDIR/work"
if mount -t overlay overlay -o "lowerdir=$KSFT/net/lib,upperdir=$LIB_TMPDIR/up,workdir=$LIB_TMPDIR/work" \
	"$KSFT/net/lib" 2>"$LIB_TMPDIR/mount.err"; then
	on_exit "umount $KSFT/net/lib"
	# The receiver counts for a fixed window from its own start (1 s
	# for hw/csum.py's transmit cases, 2 s by default) while Python
	# polls for its socket, then starts the sender: on an emulated CPU
	# under a loaded host, that alone took over 5 s. So the window is
	# at least 20 s, and a copy of csum.c ends it early once every
	# packet was seen: at the packet socket, and at the UDP socket too
	# when the checksums are good; when they are bad, after a last
	# look at the UDP socket half a second later, where one must not
	# have arrived. What the receiver must see is unchanged. Were the
	# copy not to patch (another csum.c), it runs unpatched: 20 s a
	# case.
	sed -e '/^static void do_rx(int fdp, int fdr)$/i\
static int rx_done(unsigned long pkts, unsigned long udps)\
{\
	if (pkts < cfg_num_pkt)\
		return 0;\
	return cfg_proto != IPPROTO_UDP || cfg_bad_csum || udps;\
}\
' -e 's/^\t} while (tleft > 0);$/\t} while (tleft > 0 \&\& !rx_done(count_pkt, count_udp));\
\tif (cfg_proto == IPPROTO_UDP \&\& cfg_bad_csum) {\
\t\tusleep(500000);\
\t\tcount_udp += recv_udp(fdr);\
\t}/' "$KSFT/net/lib/csum.c" >"$LIB_TMPDIR/csum.c"
	[ "$(grep -c rx_done "$LIB_TMPDIR/csum.c")" -eq 2 ] ||
		cp "$KSFT/net/lib/csum.c" "$LIB_TMPDIR/csum.c"
	gcc -O2 -I "$KSFT" -o "$KSFT/net/lib/csum.bin" "$LIB_TMPDIR/csum.c" \
		>"$LIB_TMPDIR/csum.err" 2>&1
	cat >"$KSFT/net/lib/csum" <<'SH'
#!/bin/bash
args=()
win=0
while [ $# -gt 0 ]; do
	if [ "$1" = -L ]; then
		win=$2
		shift 2
		continue
	fi
	args+=("$1")
	shift
done
[ "$win" -ge 20 ] 2>/dev/null || win=20
exec "$(dirname "$0")/csum.bin" -L "$win" "${args[@]}"
SH
	chmod +x "$KSFT/net/lib/csum"
fi
cat >"$LIB_TMPDIR/shim.py" <<'PY'
import os
import runpy
import sys

script = sys.argv[1]
sys.argv = sys.argv[1:]
sys.path.insert(0, os.path.dirname(script))
import lib.py as ksft_lib

env_init = ksft_lib.NetDrvEpEnv.__init__


def init(self, *args, **kwargs):
    env_init(self, *args, **kwargs)
    self.remote_ifname = os.environ["REMOTE_IFNAME"]


ksft_lib.NetDrvEpEnv.__init__ = init

# Its 5 s for a receiver's socket to show up, in which an emulated CPU on
# a loaded host was seen to fall short: 60 s.
wait_port_listen = ksft_lib.wait_port_listen


def wait_port_listen_long(*args, **kwargs):
    kwargs["deadline"] = max(kwargs.get("deadline", 5), 60)
    return wait_port_listen(*args, **kwargs)


ksft_lib.wait_port_listen = wait_port_listen_long
runpy.run_path(script, run_name="__main__")
PY

# The setup first, its cases counted after: the plan needs the number of
# cases the kernel's scripts report, known only once they ran.
setup_ok=1
{
	octep_load && echo "ok modules load" || { echo "not ok modules load"; setup_ok=0; }
	# rss_ctx.py's queue case sets 4 channels, then 5.
	[ $setup_ok = 1 ] && { octep_new 0 8 && echo "ok device 0 with 8 rings" ||
		{ echo "not ok device 0 with 8 rings"; setup_ok=0; }; }
	[ $setup_ok = 1 ] && { peer_setup && echo "ok peer namespace behind the wire" ||
		{ echo "not ok peer namespace behind the wire"; setup_ok=0; }; }
} >"$LIB_TMPDIR/setup" 2>&1

if [ $setup_ok = 1 ]; then
	# stats.py's check_down takes the link down, which drops the IPv6
	# addresses by default; hw/csum.py, after it, binds to them.
	sysctl -qw "net.ipv6.conf.$HOST_IF.keep_addr_on_down=1"
	# csum's receiver asks for a 4 MB SO_RCVBUF to hold its 100 frames
	# until it reads them; rmem_max (208 KB by default) cuts that to
	# 416 KB, which 100 frames in pages of the wire's pool fill while an
	# emulated CPU prints the ones before (seen: 96 of 100 at the packet
	# socket, every one delivered by IPv6). Its 4 MB, then.
	rmem_max=$(sysctl -n net.core.rmem_max)
	on_exit "sysctl -qw net.core.rmem_max=$rmem_max"
	sysctl -qw net.core.rmem_max=$((4 << 20))
	for t in $TESTS; do
		# Their Python writes no cache into the read-only source tree.
		PYTHONDONTWRITEBYTECODE=1 NETIF=$HOST_IF \
		LOCAL_V4=$HOST_IP4 REMOTE_V4=$PEER_IP4 \
		LOCAL_V6=$HOST_IP6 REMOTE_V6=$PEER_IP6 \
		REMOTE_TYPE=netns REMOTE_ARGS=$PEER_NS REMOTE_IFNAME=$WIRE_IF \
			timeout 300 python3 "$LIB_TMPDIR/shim.py" "$KDIR/$t" \
			>"$LIB_TMPDIR/${t##*/}.out" 2>&1
		echo "$?" >"$LIB_TMPDIR/${t##*/}.rc"
	done
fi

# cases T: the "ok N name [# SKIP|XFAIL why]" lines of T's KTAP output.
cases()
{
	grep -E '^(not )?ok [0-9]+ ' "$LIB_TMPDIR/${1##*/}.out" 2>/dev/null
}

# verdicts T: one line per case of T, "ok NAME", "not ok NAME", "skip NAME
# # WHY", "nojson NAME" for a case whose output since the case before
# shows a failed "ethtool --json" that this ethtool does not parse, or
# "slow NAME # WHAT" for one whose only failed checks are wall-clock
# bounds on total_seconds() (WHAT: their "X >= BOUND").
verdicts()
{
	awk '
	/^# Check\|.*total_seconds\(\)/ { timed++ }
	/^# Check failed / { failed++; what = what " " $4 " s >= " $6 " s" }
	/^# Exception\|/ { exc = 1 }
	/^(not )?ok [0-9]+ / {
		name = $0
		sub(/^(not )?ok [0-9]+ /, "", name)
		why = ""
		if (match(name, / # (SKIP|XFAIL).*/)) {
			why = substr(name, RSTART + 3)
			name = substr(name, 1, RSTART - 1)
		}
		if (why != "")
			print "skip " name " # " why
		else if ($1 == "ok")
			print "ok " name
		else if (block ~ /ethtool --json/ && block ~ /bad command line argument/)
			print "nojson " name
		else if (!exc && failed > 0 && failed == timed)
			print "slow " name " #" what
		else
			print "not ok " name
		block = ""; what = ""; failed = 0; timed = 0; exc = 0
		next
	}
	{ block = block "\n" $0 }' "$LIB_TMPDIR/${1##*/}.out" 2>/dev/null
}

n=$(grep -c '^' "$LIB_TMPDIR/setup")
if [ $setup_ok = 1 ]; then
	for t in $TESTS; do
		c=$(cases "$t" | wc -l)
		# A script that reported no case at all is one failed case.
		[ "$c" -gt 0 ] || c=1
		n=$((n + c + 1))
	done
	n=$((n + 1))	# pp_alloc_fail.py, not run
fi
ktap_plan "$n"

while read -r line; do
	case $line in
	"ok "*) ktap_ok "${line#ok }" ;;
	*) ktap_fail "${line#not ok }" "see the log" ;;
	esac
done <"$LIB_TMPDIR/setup"
[ $setup_ok = 1 ] || ktap_finish

ethtool_v=$(ethtool --version | awk '{ print $3; exit }')
for t in $TESTS; do
	b=${t##*/}
	sed 's/^/# /' "$LIB_TMPDIR/$b.out" | grep -vE '^# (not )?ok [0-9]+ '
	[ "$b" = csum.py ] && [ -s "$LIB_TMPDIR/csum.err" ] &&
		sed 's/^/# csum build: /' "$LIB_TMPDIR/csum.err" "$LIB_TMPDIR/mount.err"
	if [ "$(cases "$t" | wc -l)" -eq 0 ]; then
		ktap_fail "$t: ran its cases" "no KTAP result, exit $(cat "$LIB_TMPDIR/$b.rc")"
	fi
	failed=0
	while read -r v name; do
		case $v in
		ok) ktap_ok "$name" ;;
		skip)
			why=${name#* # }
			ktap_skip "${name%% # *}" "${why#SKIP }" ;;
		nojson)
			failed=1
			ktap_skip "$name" "ethtool $ethtool_v has no --json for the command it ran (6.8 and later do)" ;;
		slow)
			failed=1
			ktap_skip "${name%% # *}" "only its wall-clock bound failed (${name#* # }), not judged under an emulated CPU; its other checks passed" ;;
		*)
			failed=1
			name=${name#ok }
			ktap_fail "$name" "see its output above" ;;
		esac
	done < <(verdicts "$t")
	# Its exit code agrees with its cases: a crash after the last case
	# shows here.
	rc=$(cat "$LIB_TMPDIR/$b.rc")
	if { [ "$failed" = 0 ] && [ "$rc" = 0 ]; } || { [ "$failed" = 1 ] && [ "$rc" = 1 ]; }; then
		ktap_ok "$t: exit as its cases say" "exit $rc"
	else
		ktap_fail "$t: exit as its cases say" "exit $rc"
	fi
done
ktap_skip "hw/pp_alloc_fail.py" "not run: it needs fail_function (a lockdep report in 6.12), 15,000 rx packets/s (more than TCG carries) and ethtool --json -g; reconf_fault.sh tests rx-alloc-fail"

ktap_finish
