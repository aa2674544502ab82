#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Senders that pick their transmit queue before they take its lock, across
# ethtool -L shrinking and growing the ring pairs. pktgen with clone_skb
# sends one skb again and again, its queue mapping fixed; an AF_PACKET
# socket with PACKET_QDISC_BYPASS picks the queue, then takes its lock in
# dev_direct_xmit(). Either can reach ndo_start_xmit with a queue -L has
# just freed, unless the queues beyond the live ring count stay stopped.
#
# Asserted: every -L change is applied while pktgen holds queues 2 and 3
# and while bypass senders run; five seconds at one ring under pktgen
# raise no transmit timeout; after them the device answers pings and
# the kernel log is clean (the harness also fails the test on any splat).

source "$(dirname "$0")/lib.sh"
require_cmd ip ethtool ping python3

RINGS=4
: "${CYCLES:=8}"
PG=/proc/net/pktgen

# The senders before the modules: a skip must not leave them loaded.
modprobe pktgen 2>/dev/null
[ -d "$PG" ] || ktap_skip_all "no pktgen in this kernel"

ktap_plan 9

check "modules load" octep_load || ktap_finish
check "device 0 with $RINGS rings" octep_new 0 "$RINGS" || ktap_finish
check "peer namespace behind the wire" peer_setup || ktap_finish

pg()
{
	echo "$2" >"$PG/$1"
}

pg_stop()
{
	echo stop >"$PG/pgctrl" 2>/dev/null
	wait 2>/dev/null
	pg kpktgend_0 rem_device_all 2>/dev/null
	pg kpktgend_1 rem_device_all 2>/dev/null
}
on_exit pg_stop

# pg_dev THREAD QUEUE: a pktgen device bound to HOST_IF's queue QUEUE.
pg_dev()
{
	local d=$HOST_IF@$2 mac

	mac=$(in_peer cat "/sys/class/net/$WIRE_IF/address")
	pg "kpktgend_$1" "add_device $d"
	pg "$d" "queue_map_min $2"
	pg "$d" "queue_map_max $2"
	pg "$d" "clone_skb 100000"
	pg "$d" "count 0"
	pg "$d" "pkt_size 60"
	pg "$d" "delay 200000"
	pg "$d" "dst $PEER_IP4"
	pg "$d" "dst_mac $mac"
}

channels()
{
	ethtool -l "$HOST_IF" | awk '/^Current/ { c = 1 } c && /^Combined:/ { print $2; exit }'
}

# cycle N: N times -L 1 then -L RINGS; prints the changes that failed.
cycle()
{
	local i bad=0

	for ((i = 0; i < $1; i++)); do
		ethtool -L "$HOST_IF" combined 1 || bad=$((bad + 1))
		sleep 0.3
		ethtool -L "$HOST_IF" combined "$RINGS" || bad=$((bad + 1))
		sleep 0.3
	done
	echo "$bad"
}

pg_dev 0 2
pg_dev 1 3
echo start >"$PG/pgctrl" &

# pg_sent QUEUE: packets pktgen has sent on QUEUE so far.
pg_sent()
{
	sed -n 's/.*pkts-sofar: \([0-9]*\).*/\1/p' "$PG/$HOST_IF@$1"
}

pg_both()
{
	[ "$(pg_sent 2)" -gt 0 ] && [ "$(pg_sent 3)" -gt 0 ]
}

if wait_for "$OCTEP_WAIT" pg_both; then
	ktap_ok "pktgen sends on queues 2 and 3"
else
	ktap_fail "pktgen sends on queues 2 and 3" \
		"sent on queue 2: $(pg_sent 2), on queue 3: $(pg_sent 3)"
fi

bad=$(cycle "$CYCLES")
if [ "$bad" = 0 ] && [ "$(channels)" = "$RINGS" ]; then
	ktap_ok "$CYCLES shrinks to 1 and back under pktgen on queues 2, 3"
else
	ktap_fail "$CYCLES shrinks to 1 and back under pktgen on queues 2, 3" \
		"$bad changes failed, channels $(channels)"
fi
# Longer than the stack's TX watchdog period (watchdog_timeo, 3 s) at one
# ring: a queue left stopped beyond the ring count reads as a hung one.
t0=$(stat "$HOST_IF" tx_timeouts)
ethtool -L "$HOST_IF" combined 1
sleep 5
ethtool -L "$HOST_IF" combined "$RINGS"
t1=$(stat "$HOST_IF" tx_timeouts)
# ndo_tx_timeout counts each report of the stack's watchdog.
if [ "$t1" = "$t0" ]; then
	ktap_ok "5 s at one ring under pktgen on queues 2, 3: no transmit timeout"
else
	ktap_fail "5 s at one ring under pktgen on queues 2, 3: no transmit timeout" \
		"tx_timeouts $t0 -> $t1"
fi
pg_stop

# Bypass senders: each socket picks its queue per packet, from the real
# queue count it reads before the queue's lock.
sent=$(mktemp)
on_exit rm -f "$sent" "$sent.stop"
python3 - "$HOST_IF" 4 "$sent" <<'EOF' &
import os, socket, sys, time
SOL_PACKET, PACKET_QDISC_BYPASS = 263, 20
ifname, n, out = sys.argv[1], int(sys.argv[2]), sys.argv[3]
frame = b'\xff' * 6 + b'\x02\x00\x00\x00\x00\x01' + b'\x88\xb5' + bytes(46)
kids = []
for k in range(n):
    pid = os.fork()
    if pid == 0:
        s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW)
        s.setsockopt(SOL_PACKET, PACKET_QDISC_BYPASS, 1)
        s.bind((ifname, 0))
        sent, stop = 0, out + '.stop'
        while not os.path.exists(stop):
            try:
                s.send(frame)
                sent += 1
            except OSError:
                pass
        with open(out, 'a') as f:
            f.write('%d\n' % sent)
        os._exit(0)
    kids.append(pid)
for p in kids:
    os.waitpid(p, 0)
EOF
bypass=$!
sleep 1
bad=$(cycle "$CYCLES")
# They stop when the file appears, and write their counts.
touch "$sent.stop"
wait "$bypass"
frames=$(awk '{ n += $1 } END { print n + 0 }' "$sent")
if [ "$bad" = 0 ] && [ "$(channels)" = "$RINGS" ] &&
   [ "$(wc -l <"$sent")" = 4 ] && [ "$frames" -gt 0 ]; then
	ktap_ok "$CYCLES shrinks to 1 and back under 4 bypass senders" "$frames frames"
else
	ktap_fail "$CYCLES shrinks to 1 and back under 4 bypass senders" \
		"$bad changes failed, channels $(channels), senders' counts: $(tr '\n' ' ' <"$sent")"
fi

check "pings after the changes" ping -q -c 5 -i 0.2 -W 3 "$PEER_IP4"
drops=$(cat "/sys/class/net/$HOST_IF/statistics/tx_dropped")
ktap_diag "tx_dropped $drops (in flight when a ring was freed, or sent to a queue without one)"
kernel_log_clean "no kernel warnings"
ktap_finish
