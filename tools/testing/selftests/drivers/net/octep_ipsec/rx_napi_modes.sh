#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The poll's completion under NAPI's two other owners, busy polling and
# deferred interrupts. In both, napi_complete_done() returns false without
# a note: the interrupt stays off and NAPI (the busy poller, or the
# deferral's timer) polls the ring again. The driver must neither count
# those as notes (oq_handed) nor leave the ring: every datagram arrives,
# the stream flows, the watchdog finds no stalled ring, and the ring
# answers by interrupt again once the owner lets go.
#
#  - busy polling (net.core.busy_read): a blocking UDP receiver on the
#    host polls the ring itself; oq_busy counts those completions;
#  - deferral (napi_defer_hard_irqs + gro_flush_timeout on the netdev):
#    oq_deferred counts them; then both back to 0 and neither moves.
#
# The watchdog looks at every ring on every tick here (devlink
# rxwd_skip_visited false): with the skip it passes over a ring its
# busy poller or deferral timer keeps visiting, and would never meet them.
# The engine and the ring's interrupt share a vCPU (split_cpus): an
# interrupt sent to the other vCPU can wait tens of milliseconds under
# TCG, and a tick meanwhile counts a rescue the driver did not cause.

source "$(dirname "$0")/lib.sh"
require_cmd ip ethtool iperf3 python3 sysctl devlink

N=400		# datagrams a busy-poll round
PORT=5599
SECS=4

ktap_plan 13

check "modules load" octep_load || ktap_finish
check "device 0 with 1 ring" octep_new 0 1 || ktap_finish
check "peer namespace behind the wire" peer_setup || ktap_finish
# every_ring: the watchdog's skip off, the engine beside the interrupt.
every_ring()
{
	devlink dev param set "$DL_DEV" name rxwd_skip_visited value false \
		cmode runtime && split_cpus
}
check "the watchdog looks at every ring; engine and interrupt on one vCPU" \
	every_ring || ktap_finish

nd=/sys/class/net/$HOST_IF
tmp=$(mktemp)
on_exit "rm -f $tmp $tmp.ready"
old_busy=$(sysctl -n net.core.busy_read)
on_exit "sysctl -qw net.core.busy_read=$old_busy"

# udp_round OUT: N paced datagrams peer -> host into a blocking receiver;
# writes the count received to OUT.
udp_round()
{
	python3 - "$PORT" "$N" "$1.ready" >"$1" <<'EOF' &
import signal, socket, sys
port, n = int(sys.argv[1]), int(sys.argv[2])
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.bind(("0.0.0.0", port))
open(sys.argv[3], "w").close()
got = 0
signal.signal(signal.SIGALRM, lambda *a: (print(got), sys.exit(0)))
signal.alarm(30)
while got < n:
    s.recv(2048)
    got += 1
print(got)
EOF
	local rcv=$!

	# Bound before the first datagram, however slow the host.
	wait_for 30 test -e "$1.ready"
	in_peer python3 - "$HOST_IP4" "$PORT" "$N" <<'EOF'
import socket, sys, time
host, port, n = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
for i in range(n):
    s.sendto(b"x" * 200, (host, port))
    if i % 8 == 7:
        time.sleep(0.005)
EOF
	wait "$rcv"
}

# ---------------------------------------------------------------- busy poll
sysctl -qw net.core.busy_read=200
b0=$(stat "$HOST_IF" oq_busy)
h0=$(stat "$HOST_IF" oq_handed)
s0=$(stat "$HOST_IF" rxwd_stalls)
udp_round "$tmp"
got=$(cat "$tmp")
b1=$(stat "$HOST_IF" oq_busy)
h1=$(stat "$HOST_IF" oq_handed)
s1=$(stat "$HOST_IF" rxwd_stalls)
ktap_diag "busy_read 200: received $got of $N, oq_busy +$((b1 - b0)), oq_handed +$((h1 - h0)), rxwd_stalls +$((s1 - s0))"
if [ "$((b1 - b0))" -gt 0 ]; then
	ktap_ok "busy poll: the busy poller's completions counted in oq_busy" "oq_busy +$((b1 - b0))"
else
	ktap_fail "busy poll: the busy poller's completions counted in oq_busy" "oq_busy +0"
fi
if [ "$got" = "$N" ]; then
	ktap_ok "busy poll: every datagram arrives" "$got of $N"
else
	ktap_fail "busy poll: every datagram arrives" "$got of $N"
fi
if [ -n "$s0" ] && [ "$s1" = "$s0" ]; then
	ktap_ok "busy poll: no ring left to the watchdog"
else
	ktap_fail "busy poll: no ring left to the watchdog" "rxwd_stalls +$((s1 - s0))"
fi
sysctl -qw net.core.busy_read=0
check "busy poll off: ping peer -> host by interrupt" \
	in_peer ping -c 3 -i 0.2 -W 5 "$HOST_IP4"

# ---------------------------------------------------------------- deferral
iperf3 -s -D --logfile /dev/null
on_exit "pkill -x iperf3"
sleep 1
echo 2 >"$nd/napi_defer_hard_irqs"
echo 200000 >"$nd/gro_flush_timeout"
d0=$(stat "$HOST_IF" oq_deferred)
s0=$(stat "$HOST_IF" rxwd_stalls)
rate=$(in_peer timeout $((SECS + 30)) iperf3 -c "$HOST_IP4" -t "$SECS" -J 2>/dev/null |
	iperf_rate)
d1=$(stat "$HOST_IF" oq_deferred)
s1=$(stat "$HOST_IF" rxwd_stalls)
ktap_diag "defer 2, gro_flush_timeout 200 us: $rate Mbit/s, oq_deferred +$((d1 - d0)), rxwd_stalls +$((s1 - s0)), rxwd_rescues $(stat "$HOST_IF" rxwd_rescues)"
if [ "$((d1 - d0))" -gt 0 ]; then
	ktap_ok "deferral: the deferred completions counted in oq_deferred" "oq_deferred +$((d1 - d0))"
else
	ktap_fail "deferral: the deferred completions counted in oq_deferred" "oq_deferred +0"
fi
if [ "$rate" -gt 0 ]; then
	ktap_ok "deferral: the stream flows" "$rate Mbit/s"
else
	ktap_fail "deferral: the stream flows" "no rate"
fi
if [ -n "$s0" ] && [ "$s1" = "$s0" ]; then
	ktap_ok "deferral: no ring left to the watchdog"
else
	ktap_fail "deferral: no ring left to the watchdog" "rxwd_stalls +$((s1 - s0))"
fi
echo 0 >"$nd/napi_defer_hard_irqs"
echo 0 >"$nd/gro_flush_timeout"
check "deferral off: ping peer -> host by interrupt" \
	in_peer ping -c 3 -i 0.2 -W 5 "$HOST_IP4"

# ---------------------------------------------------------------- neither
b0=$(stat "$HOST_IF" oq_busy)
d0=$(stat "$HOST_IF" oq_deferred)
rate=$(in_peer timeout $((SECS + 30)) iperf3 -c "$HOST_IP4" -t 2 -J 2>/dev/null |
	iperf_rate)
b1=$(stat "$HOST_IF" oq_busy)
d1=$(stat "$HOST_IF" oq_deferred)
if [ "$rate" -gt 0 ] && [ "$b1" = "$b0" ] && [ "$d1" = "$d0" ]; then
	ktap_ok "neither: a stream moves neither oq_busy nor oq_deferred" "$rate Mbit/s"
else
	ktap_fail "neither: a stream moves neither oq_busy nor oq_deferred" \
		"$rate Mbit/s, oq_busy +$((b1 - b0)), oq_deferred +$((d1 - d0))"
fi

ktap_finish
