#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Shared helpers for the octep_ipsec selftests. A test is a bash script in
# this directory that does `source "$(dirname "$0")/lib.sh"`, runs as root,
# prints KTAP through the ktap_* helpers and ends with ktap_finish.
#
# Exit codes (kselftest): 0 pass, 1 fail, 4 skip. ktap_finish exits 1 when any
# case failed or fewer cases ran than planned, 4 when every case that ran was
# a skip, else 0. A skip is never counted as a pass.
#
# Cleanup: lib.sh owns the EXIT trap. It deletes the devices octep_new made,
# removes the peer netns and unloads the modules octep_load loaded, so the
# next test starts with no module loaded. Register extra cleanup with
# `on_exit CMD...` (run in reverse order, before lib.sh's own); do not set
# your own EXIT trap.
#
# Environment:
#   OCTEP_KO_DIR  where octep_sim.ko and octep_ipsec.ko are: either directly
#                 in it or under drivers/... below it (default: the repo's
#                 build tree, found from this file's path). When neither
#                 exists, the modules are loaded with modprobe (installed
#                 kernel tree).
#   OCTEP_WAIT    seconds to wait for devices/addresses to appear (default 20;
#                 the VM runs under TCG, everything is slow).
#   OCTEP_KSYMS   a file to keep the loaded modules' symbols in, for reports
#                 printed after they are gone (scripts/ksym-decode); unset:
#                 none kept (scripts/run-selftests and scripts/vm set it).

KSFT_PASS=0
KSFT_FAIL=1
KSFT_SKIP=4

LIB_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# The repo root is six levels up: tools/testing/selftests/drivers/net/octep_ipsec.
LIB_REPO=$(cd "$LIB_DIR/../../../../../.." 2>/dev/null && pwd)
: "${OCTEP_KO_DIR:=$LIB_REPO}"
: "${OCTEP_WAIT:=20}"

PEER_NS=peer
HOST_IP4=192.0.2.1
PEER_IP4=192.0.2.2
HOST_IP6=2001:db8::1
PEER_IP6=2001:db8::2

KTAP_PLANNED=0
KTAP_NUM=0
KTAP_PASS=0
KTAP_FAIL=0
KTAP_SKIP=0

# ---------------------------------------------------------------- KTAP

# ktap_plan N: print the KTAP header and the plan of N cases.
ktap_plan()
{
	KTAP_PLANNED=$1
	echo "TAP version 13"
	echo "1..$1"
}

# ktap_diag TEXT...: a diagnostic line (or several, one per input line).
ktap_diag()
{
	local line

	while IFS= read -r line; do
		echo "# $line"
	done <<<"$*"
}

# ktap_ok DESC [DIAG]: DESC is the case's name and stays the same from run
# to run (CI tracks a case by it); what was measured (counts, times, rates,
# counter deltas) goes in DIAG, printed as a diagnostic before the ok line.
ktap_ok()
{
	KTAP_NUM=$((KTAP_NUM + 1))
	KTAP_PASS=$((KTAP_PASS + 1))
	[ -n "${2:-}" ] && ktap_diag "$2"
	echo "ok $KTAP_NUM $1"
}

# ktap_fail DESC [WHY]
ktap_fail()
{
	KTAP_NUM=$((KTAP_NUM + 1))
	KTAP_FAIL=$((KTAP_FAIL + 1))
	[ -n "${2:-}" ] && ktap_diag "$2"
	echo "not ok $KTAP_NUM $1"
}

# ktap_skip DESC WHY
ktap_skip()
{
	KTAP_NUM=$((KTAP_NUM + 1))
	KTAP_SKIP=$((KTAP_SKIP + 1))
	echo "ok $KTAP_NUM $1 # SKIP ${2:-}"
}

# ktap_expect DESC WHY TEST...: one KTAP case, its description written once:
# ok DESC if TEST... (a command, often `[ ... ]`) succeeds, else not ok
# DESC with the diagnostic WHY.
ktap_expect()
{
	local desc=$1 why=$2

	shift 2
	if "$@"; then
		ktap_ok "$desc"
	else
		ktap_fail "$desc" "$why"
	fi
}

# check DESC CMD...: run CMD in this shell (so octep_new etc. set their
# variables); ok if it exits 0, else not ok with its output. Returns CMD's
# status so a test can stop early: `check "..." octep_new 0 1 || ktap_finish`.
check()
{
	local desc=$1 out rc tmp

	shift
	tmp=$(mktemp)
	"$@" >"$tmp" 2>&1
	rc=$?
	out=$(cat "$tmp")
	rm -f "$tmp"
	if [ "$rc" -eq 0 ]; then
		ktap_ok "$desc"
	else
		ktap_fail "$desc" "$(printf '%s: exit %d\n%s' "$*" "$rc" "$out")"
	fi
	return "$rc"
}

# verdict DESC CMD...: one KTAP case from CMD's verdict: its output is
# "ok", or what is wrong (the reason), which also fails the case when CMD
# prints nothing. CMD's stderr passes through (diagnostics).
verdict()
{
	local desc=$1 r

	shift
	r=$("$@")
	if [ "$r" = ok ]; then
		ktap_ok "$desc"
	else
		ktap_fail "$desc" "${r:-$1: no verdict}"
	fi
}

# ktap_finish: print totals and exit with the kselftest code. Cases planned
# but never reported count as failures.
ktap_finish()
{
	local missing=0

	if [ "$KTAP_NUM" -lt "$KTAP_PLANNED" ]; then
		missing=$((KTAP_PLANNED - KTAP_NUM))
		ktap_diag "$missing planned case(s) did not run"
	fi
	echo "# Totals: pass:$KTAP_PASS fail:$((KTAP_FAIL + missing)) xfail:0 xpass:0 skip:$KTAP_SKIP error:0"
	if [ "$KTAP_FAIL" -gt 0 ] || [ "$missing" -gt 0 ] ||
	   [ "$KTAP_NUM" -gt "$KTAP_PLANNED" ]; then
		exit $KSFT_FAIL
	fi
	if [ "$KTAP_PASS" -eq 0 ] && [ "$KTAP_SKIP" -gt 0 ]; then
		exit $KSFT_SKIP
	fi
	exit $KSFT_PASS
}

# ktap_skip_all WHY: the whole test cannot run here (missing tool, ...).
ktap_skip_all()
{
	echo "TAP version 13"
	echo "1..0 # SKIP $1"
	exit $KSFT_SKIP
}

# require_cmd CMD...: skip the whole test unless every CMD is available.
require_cmd()
{
	local c

	for c in "$@"; do
		command -v "$c" >/dev/null 2>&1 || ktap_skip_all "$c not installed"
	done
}

[ "$(id -u)" -eq 0 ] || ktap_skip_all "must run as root"

# ------------------------------------------------------------- cleanup

LIB_EXIT_CMDS=()
LIB_DEVICES=()
LIB_LOADED=0
LIB_PEER=0

# on_exit CMD...: run CMD (eval'd) when the test exits, newest first.
on_exit()
{
	LIB_EXIT_CMDS+=("$*")
}

lib_exit()
{
	local rc=$? i id peer=$LIB_PEER

	trap - EXIT
	for ((i = ${#LIB_EXIT_CMDS[@]} - 1; i >= 0; i--)); do
		eval "${LIB_EXIT_CMDS[i]}" >/dev/null 2>&1
	done
	# peer_teardown clears LIB_PEER: judged on the value from before.
	[ "$peer" -eq 1 ] && peer_teardown >/dev/null 2>&1
	# The host's IPsec policies outlive the test that made them, and
	# would hold the next test's traffic to the same peer addresses.
	if [ "$peer" -eq 1 ]; then
		ip xfrm policy flush >/dev/null 2>&1
		ip xfrm state flush >/dev/null 2>&1
	fi
	for id in "${LIB_DEVICES[@]}"; do
		octep_del "$id" >/dev/null 2>&1
	done
	[ "$LIB_LOADED" -eq 1 ] && octep_unload >/dev/null 2>&1
	exit "$rc"
}
trap lib_exit EXIT
# A timeout (SIGTERM from the harness) or ^C still cleans up.
trap 'exit $KSFT_FAIL' TERM INT HUP

# wait_for SECS CMD...: poll CMD every 0.1 s until it succeeds; 1 on timeout.
wait_for()
{
	local deadline=$((SECONDS + $1)) tries=$(($1 * 10))

	shift
	# Not before SECS have passed and SECS * 10 tries were made: under
	# -icount with sleep=off (the timed tests' boot) the guest's clock
	# races ahead while the guest waits idle for the host's 9p, and a
	# command's first run from 9p can take seconds of guest time.
	while ! "$@" >/dev/null 2>&1; do
		tries=$((tries - 1))
		[ "$SECONDS" -ge "$deadline" ] && [ "$tries" -le 0 ] && return 1
		sleep 0.1
	done
	return 0
}

# udp_bound PORT [NETNS]: true once a UDP socket is bound to PORT, in
# NETNS if given. A receiver started in the background is waited for with
# this, not a fixed sleep a busy host can outlast.
udp_bound()
{
	if [ -n "${2:-}" ]; then
		ip netns exec "$2" ss -Hlun "sport = :$1" | grep -q .
	else
		ss -Hlun "sport = :$1" | grep -q .
	fi
}

# overlay_dirs DIR...: an overlay on each DIR, its writes in a directory
# under /tmp (LIB_OVL, which the test may use for its own files), all gone
# at exit: the guest's host-shared directories (the kernel's modules,
# /usr/src) are read-only, and what a test installs there must not
# outlive it. The whole test is skipped when one cannot be mounted.
overlay_dirs()
{
	local d u

	LIB_OVL=$(mktemp -d)
	LIB_OVL_MOUNTED=()
	on_exit "rm -rf $LIB_OVL"
	on_exit 'for m in "${LIB_OVL_MOUNTED[@]}"; do umount -l "$m"; done'
	for d in "$@"; do
		mkdir -p "$d" 2>/dev/null
		u=$LIB_OVL/ovl$(echo "$d" | tr / _)
		mkdir -p "$u/u" "$u/w"
		mount -t overlay -o "lowerdir=$d,upperdir=$u/u,workdir=$u/w" overlay "$d" ||
			ktap_skip_all "cannot mount an overlay on $d"
		LIB_OVL_MOUNTED=("$d" "${LIB_OVL_MOUNTED[@]}")
	done
}

# ------------------------------------------------------------- modules

# lib_ko NAME: path of NAME.ko under OCTEP_KO_DIR, or nothing.
lib_ko()
{
	local f

	for f in "$OCTEP_KO_DIR/$1.ko" \
		 "$OCTEP_KO_DIR/drivers/net/ethernet/octep_ipsec/$1.ko" \
		 "$OCTEP_KO_DIR/drivers/net/octep_sim/$1.ko"; do
		[ -f "$f" ] && { echo "$f"; return 0; }
	done
	return 1
}

# lib_insmod NAME [PARAMS...]: insmod from the build tree (after modprobing
# what the module depends on), or modprobe when it is not built here.
lib_insmod()
{
	local name=$1 ko dep

	shift
	if ko=$(lib_ko "$name"); then
		for dep in $(modinfo -F depends "$ko" | tr ',' ' '); do
			modprobe "$dep" || return 1
		done
		insmod "$ko" "$@" || return
	else
		modprobe "$name" "$@" || return
	fi
	lib_save_syms "$name"
	return 0
}

# lib_save_syms NAME: keep NAME's symbols from /proc/kallsyms in
# OCTEP_KSYMS (when set), replacing an earlier load's: a kernel report
# printed after the module is gone shows its frames as bare addresses, and
# scripts/ksym-decode names them from this file.
lib_save_syms()
{
	local f=${OCTEP_KSYMS:-}

	[ -n "$f" ] || return 0
	{
		[ -f "$f" ] && grep -v "\[$1\]\$" "$f"
		grep "\[$1\]\$" /proc/kallsyms
	} >"$f.new" 2>/dev/null && mv "$f.new" "$f"
}

# octep_load [DRIVER-PARAMS...]: load octep_sim, then octep_ipsec with PARAMS.
octep_load()
{
	mountpoint -q /sys/kernel/debug || mount -t debugfs none /sys/kernel/debug
	LIB_LOADED=1
	lib_insmod octep_sim || return 1
	lib_insmod octep_ipsec "$@"
}

# octep_unload: remove both modules (driver first). Fails if either stays.
octep_unload()
{
	local rc=0 m

	for m in octep_ipsec octep_sim; do
		if [ -d "/sys/module/$m" ]; then
			rmmod "$m" || rc=1
		fi
	done
	LIB_LOADED=0
	LIB_DEVICES=()
	return $rc
}

# mbox_answering: true once the mailbox of DL_DEV answers again after a
# timeout (adds are refused at once while it does not).
mbox_answering()
{
	devlink health diagnose "$DL_DEV" reporter mbox | grep -q "answering: true"
}

# ------------------------------------------------------------- devices

lib_one_netdev()
{
	local d=$1 n

	[ -d "$d" ] || return 1
	for n in "$d"/*; do
		[ -e "$n" ] || return 1
		basename "$n"
		return 0
	done
	return 1
}

# octep_new ID [RINGS]: create model device ID with RINGS ring pairs; wait for
# the wire and the driver's netdev. Sets HOST_IF, WIRE_IF, SIM_DBG, DRV_DBG
# (the driver's debugfs directory for the device: octep_knob), DL_DEV.
octep_new()
{
	local id=$1 rings=${2:-1} dev

	dev=/sys/bus/octep_sim/devices/octep_sim$id
	echo "$id $rings" >/sys/bus/octep_sim/new_device || return 1
	LIB_DEVICES+=("$id")
	if ! wait_for "$OCTEP_WAIT" lib_one_netdev "$dev/net"; then
		echo "octep_new: no wire netdev under $dev/net" >&2
		return 1
	fi
	if ! wait_for "$OCTEP_WAIT" lib_one_netdev "$dev/octep_sim.sdp.$id/net"; then
		echo "octep_new: no driver netdev under $dev/octep_sim.sdp.$id/net" >&2
		return 1
	fi
	WIRE_IF=$(lib_one_netdev "$dev/net")
	HOST_IF=$(lib_one_netdev "$dev/octep_sim.sdp.$id/net")
	SIM_DBG=/sys/kernel/debug/octep_sim/octep_sim$id
	DRV_DBG=/sys/kernel/debug/octep_ipsec/octep_sim.sdp.$id
	DL_DEV=auxiliary/octep_sim.sdp.$id
	export HOST_IF WIRE_IF SIM_DBG DRV_DBG DL_DEV
	# scripts/check --matrix: the block's unknowns as the model picks
	# them, set before the test's traffic.
	if [ -n "${OCTEP_SIM_MASKED:-}" ]; then
		sim_write masked "$OCTEP_SIM_MASKED" || return 1
	fi
	if [ -n "${OCTEP_SIM_RESEND_PENDING:-}" ]; then
		sim_write resend_pending "$OCTEP_SIM_RESEND_PENDING" || return 1
	fi
	if [ -n "${OCTEP_SIM_MASKED:-}${OCTEP_SIM_RESEND_PENDING:-}" ]; then
		echo "# octep_sim$id: masked=$(sim_read masked) resend_pending=$(sim_read resend_pending)"
	fi
}

# octep_del ID: delete model device ID.
octep_del()
{
	local id=$1 i

	for i in "${!LIB_DEVICES[@]}"; do
		[ "${LIB_DEVICES[i]}" = "$id" ] && unset 'LIB_DEVICES[i]'
	done
	echo "$id" >/sys/bus/octep_sim/del_device
}

# ---------------------------------------------------------------- peer

# in_peer CMD...: run CMD in the peer netns.
in_peer()
{
	ip netns exec "$PEER_NS" "$@"
}

lib_no_tentative()
{
	[ -z "$(ip -6 addr show dev "$HOST_IF" tentative)" ] &&
	[ -z "$(in_peer ip -6 addr show dev "$WIRE_IF" tentative)" ]
}

# peer_setup: netns "peer" holding WIRE_IF; host HOST_IP4/6 on HOST_IF, peer
# PEER_IP4/6 on WIRE_IF; both up; returns once IPv6 DAD is done.
peer_setup()
{
	ip netns add "$PEER_NS" || return 1
	LIB_PEER=1
	in_peer ip link set lo up &&
	ip link set "$WIRE_IF" netns "$PEER_NS" &&
	ip addr add "$HOST_IP4/24" dev "$HOST_IF" &&
	ip addr add "$HOST_IP6/64" dev "$HOST_IF" &&
	in_peer ip addr add "$PEER_IP4/24" dev "$WIRE_IF" &&
	in_peer ip addr add "$PEER_IP6/64" dev "$WIRE_IF" &&
	ip link set "$HOST_IF" up &&
	in_peer ip link set "$WIRE_IF" up || return 1
	if ! wait_for "$OCTEP_WAIT" lib_no_tentative; then
		echo "peer_setup: IPv6 DAD did not finish" >&2
		return 1
	fi
}

# peer_teardown: delete the peer netns (the wire returns to init_net).
peer_teardown()
{
	LIB_PEER=0
	ip netns pids "$PEER_NS" 2>/dev/null | xargs -r kill 2>/dev/null
	ip netns del "$PEER_NS"
}

# ------------------------------------------------------------ kernel log

# kernel_has_patch NAME: the running kernel is the one scripts/debug-kernel
# staged in the repo's out/debug-kernel (same `uname -v`), built with
# patches/NAME.patch applied.
kernel_has_patch()
{
	local st=$LIB_REPO/out/debug-kernel

	[ -n "$(uname -v)" ] &&
		[ "$(uname -v)" = "$(cat "$st/uts-version" 2>/dev/null)" ] &&
		grep -qx "$1.patch" "$st/patches" 2>/dev/null
}

read -r LIB_T0 _ </proc/uptime

# kernel_log: the kernel log since lib.sh was sourced.
kernel_log()
{
	dmesg | awk -v t0="$LIB_T0" '
		{ t = $0; sub(/^\[ */, "", t); sub(/\].*/, "", t) }
		t + 0 >= t0 + 0'
}

# kernel_log_clean DESC: a case that passes when the kernel log has no splat
# (Oops, WARNING:, BUG:, KASAN, lockdep, Call Trace, ...) since lib.sh was
# sourced. Uses the repo's scripts/dmesg-scan when there is one.
kernel_log_clean()
{
	local log scan=$LIB_REPO/scripts/dmesg-scan rep

	log=$(kernel_log)
	if [ -x "$scan" ]; then
		rep=$("$scan" <<<"$log")
	else
		rep=$(grep -E -A20 'Oops|WARNING:|BUG:|KASAN|UBSAN:|Call Trace|INFO: |possible circular locking' <<<"$log")
		[ -z "$rep" ]
	fi
	if [ $? -eq 0 ]; then
		ktap_ok "$1"
	else
		ktap_fail "$1" "$rep"
	fi
}

# crypto_setup: load the accelerated AES-GCM the guest has no udev to load.
crypto_setup()
{
	local m

	for m in aesni_intel gcm ghash_clmulni_intel; do
		modprobe "$m" 2>/dev/null
	done
	return 0
}

# ---------------------------------------------------------------- stats

# stat IF NAME: print the `ethtool -S IF` value NAME; 1 if there is none.
# (Shadows coreutils stat(1) in tests: use `command stat` for that.)
stat()
{
	ethtool -S "$1" | awk -v n="$2" '
		{ k = $1; sub(/:$/, "", k) }
		k == n { print $2; found = 1; exit }
		END { exit !found }'
}

# dev_stat IF NAME: print IF's standard counter NAME, as `ip -s link`
# shows it (/sys/class/net/IF/statistics: rx_packets, rx_dropped,
# tx_dropped, rx_errors, ...); 1 if there is none. ethtool -S has no copy
# of these.
dev_stat()
{
	cat "/sys/class/net/$1/statistics/$2" 2>/dev/null
}

# rx_ring_drops IF: print the receive drops the driver counted, summed
# over its rings' ethtool -S rx<N>_drops (stats64's rx_dropped adds the
# stack's own drops of frames the driver delivered); 1 if there are none.
rx_ring_drops()
{
	ethtool -S "$1" | awk '
		$1 ~ /^rx[0-9]+_drops:$/ { n += $2; found = 1 }
		END { print n + 0; exit !found }'
}

# irq_count IF [RING]: print the interrupts /proc/interrupts counts, over
# every CPU, on the vector of IF's ring pair RING (named IF-rxtx-RING at
# open: while IF is up, under the name it was opened with), or on all of
# IF's ring vectors when RING is empty; 1 if there is none.
irq_count()
{
	awk -v pat="^$1-rxtx-${2:-[0-9]+}\$" '
		NR == 1 { ncpu = NF; next }
		$NF ~ pat {
			for (i = 2; i <= ncpu + 1; i++)
				s += $i
			found = 1
		}
		END { if (found) print s; exit !found }' /proc/interrupts
}

# qstat IF NAME: print IF's queue statistics device total NAME (the netdev
# family's qstats-get without a scope: the rings in use plus the base;
# rx-alloc-fail, rx-csum-bad, tx-stop, tx-wake, tx-needs-csum,
# tx-hw-gso-packets, ...); 1 if there is none. Needs ynl_find or
# ynl_require first.
qstat()
{
	local ifindex

	ifindex=$(cat "/sys/class/net/$1/ifindex") || return 1
	ynl_dump qstats-get "{\"ifindex\": $ifindex}" | python3 -c '
import json, sys
d = json.load(sys.stdin)
v = d[0].get(sys.argv[1]) if d else None
if v is None:
    sys.exit(1)
print(v)' "$2"
}

# sim_read FILE: print the model debugfs value FILE (relative to SIM_DBG).
sim_read()
{
	cat "$SIM_DBG/$1"
}

# sim_write FILE VALUE: write VALUE to the model debugfs FILE.
sim_write()
{
	echo "$2" >"$SIM_DBG/$1"
}

# octep_knob NAME VALUE: set the driver's test switch NAME (debugfs, per
# device: service visit|pass, rearm reread|none) of the device octep_new
# made last. service is refused while HOST_IF is up: set it before.
octep_knob()
{
	echo "$2" >"$DRV_DBG/$1"
}

# iperf_rate [UNIT [NONE]]: the received rate in the `iperf3 -J` output on
# stdin, in UNIT bits/s (default 1000000: Mbit/s), rounded down; NONE
# (default 0) if it has none (the client failed, or its output is cut).
iperf_rate()
{
	python3 -c 'import json, sys
d = json.load(sys.stdin)
print(int(d["end"]["sum_received"]["bits_per_second"]) // int(sys.argv[1]))' \
		"${1:-1000000}" 2>/dev/null || echo "${2:-0}"
}

# ring_left RING: one packet on RING whose interrupt is lost, nothing else
# to bring a servicer (the host's IPv6 chatter is off meanwhile); waits up
# to 10 s until someone drained the ring. Three interrupts are lost in case
# one is taken all the same. 0 when the ring was drained.
ring_left()
{
	local rc

	sysctl -qw "net.ipv6.conf.$HOST_IF.disable_ipv6=1"
	echo 3 >"$SIM_DBG/ring$1/lose_irq"
	echo 1 >"$SIM_DBG/ring$1/inject"
	wait_for 10 lib_drained "$1"
	rc=$?
	echo 0 >"$SIM_DBG/ring$1/lose_irq"
	sysctl -qw "net.ipv6.conf.$HOST_IF.disable_ipv6=0"
	return $rc
}

# lib_drained RING: the block's count of RING is 0.
lib_drained()
{
	[ "$(sim_read "ring$1/out_count")" = 0 ]
}

# ynl_find: sets YNL (the kernel's YNL client in linux-source) and
# YNL_SPEC (the netdev family's spec); 1 if they or python3-yaml are
# missing. For a test that reads qstats for its diagnostics only.
ynl_find()
{
	local ksrc=${KSRC:-/usr/src/linux-source-6.12}

	YNL=$ksrc/tools/net/ynl/cli.py
	YNL_SPEC=$ksrc/Documentation/netlink/specs/netdev.yaml
	[ -f "$YNL" ] && [ -f "$YNL_SPEC" ] &&
		python3 -c 'import yaml' 2>/dev/null
}

# ynl_require: ynl_find, or skip the whole test.
ynl_require()
{
	ynl_find ||
		ktap_skip_all "no YNL client: $YNL, $YNL_SPEC and python3-yaml are needed"
}

# ynl_dump OP JSON: the netdev family's dump OP with the request JSON, as
# JSON on stdout.
ynl_dump()
{
	python3 "$YNL" --spec "$YNL_SPEC" --no-schema --output-json \
		--dump "$1" --json "$2"
}

# ---------------------------------------------------------------- streams

STREAMS=

# streams_start: a TCP stream each way between the host and the peer
# (iperf3 servers on both sides), running until streams_stop; sets
# STREAMS, the two clients' pids.
streams_start()
{
	iperf3 -s -D --logfile /dev/null
	in_peer iperf3 -s -D --logfile /dev/null
	wait_for 10 sh -c "ss -ltn | grep -q ':5201 '" &&
	wait_for 10 in_peer sh -c "ss -ltn | grep -q ':5201 '" || return 1
	iperf3 -c "$PEER_IP4" -t 3600 --connect-timeout 10000 >/dev/null 2>&1 &
	STREAMS=$!
	in_peer iperf3 -c "$HOST_IP4" -t 3600 --connect-timeout 10000 \
		>/dev/null 2>&1 &
	STREAMS="$STREAMS $!"
}

# streams_alive: both clients of streams_start still run.
streams_alive()
{
	local p

	for p in $STREAMS; do
		kill -0 "$p" 2>/dev/null || return 1
	done
}

# streams_flowing SECS: within SECS seconds, a 3 s window in which both
# clients still run and the host's netdev sent and received more than 10
# frames each way (after losses TCP backs off: recovery may take seconds).
# Prints that window's "tx +N rx +M", or the last one's when none was.
streams_flowing()
{
	local end=$((SECONDS + $1)) a b

	while :; do
		a=$(dev_stat "$HOST_IF" tx_packets)
		b=$(dev_stat "$HOST_IF" rx_packets)
		sleep 3
		a=$(($(dev_stat "$HOST_IF" tx_packets) - a))
		b=$(($(dev_stat "$HOST_IF" rx_packets) - b))
		if streams_alive && [ "$a" -gt 10 ] && [ "$b" -gt 10 ]; then
			echo "tx +$a rx +$b"
			return 0
		fi
		if [ "$SECONDS" -ge "$end" ]; then
			echo "tx +$a rx +$b, clients $(streams_alive && echo running || echo gone)"
			return 1
		fi
	done
}

# streams_stop: end the clients and the servers.
streams_stop()
{
	pkill -x iperf3
	in_peer pkill -x iperf3
	# shellcheck disable=SC2086 # two pids
	wait $STREAMS 2>/dev/null
	STREAMS=
}

# ---------------------------------------------------------------- CPUs

# split_cpus: the model's engine and the rings' interrupts on CPU 1, the
# device reopened from CPU 0. Under QEMU's single-threaded TCG an
# interrupt sent to the other vCPU waits for the round robin, up to tens
# of milliseconds, and a watchdog tick in that time counts a rescue the
# driver did not cause (seen: the ring's interrupt enabled, 68-675 packets
# counted, 4-40 ms after the enable); with the engine beside the rings'
# interrupts one is raised and taken on one vCPU. ndo_open arms the
# watchdog's timer on the CPU that opens the device, and every arming
# moves an hrtimer to the arming CPU: opened (and its period set, with
# `taskset -c 0`) from CPU 0, the watchdog stays apart from the poll, so
# that under service=pass it can take a ring between two of its passes.
split_cpus()
{
	local n

	sim_write engine_cpu 1 || return 1
	for n in $(awk '/-rxtx-/ { sub(":", "", $1); print $1 }' /proc/interrupts); do
		echo 2 >"/proc/irq/$n/smp_affinity" || return 1
	done
	ip link set "$HOST_IF" down && taskset -c 0 ip link set "$HOST_IF" up
}
