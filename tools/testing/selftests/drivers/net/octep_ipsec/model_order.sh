#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# RSS in octep_sim: one flow stays on one output ring, in order; several
# flows spread over the rings. The peer sends sequence-numbered UDP
# datagrams through the wire; the model's per-ring counters say which ring
# carried them, and a receiver on the host checks their order.

source "$(dirname "$0")/lib.sh"

require_cmd ip python3

ID=72
RINGS=4
PORT=9000
COUNT=2000

ktap_plan 5

# rings_out: every ring's out_pkts, space separated.
rings_out()
{
	local r

	for ((r = 0; r < RINGS; r++)); do
		printf '%s ' "$(sim_read "ring$r/out_pkts")"
	done
}

# send SPORT COUNT [FLOWS]: from the peer, COUNT datagrams with a sequence
# number, from FLOWS source ports SPORT + 997 * F (round robin). Toeplitz
# is linear: flows whose ports differed only in their low 4 bits would
# differ by 4 key windows, and all land on one ring of 4 whenever 5 bits
# of the random key are 0 (1 run in 32); spread over 15 bits, they do not.
send()
{
	in_peer python3 - "$HOST_IP4" "$PORT" "$1" "$2" "${3:-1}" <<'EOF'
import socket, struct, sys, time
dst, port, sport, count, flows = sys.argv[1], int(sys.argv[2]), \
	int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5])
socks = []
for f in range(flows):
	s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
	s.bind(("", sport + 997 * f))
	socks.append(s)
for i in range(count):
	socks[i % flows].sendto(struct.pack("!I", i) + b"x" * 500, (dst, port))
	if i % 64 == 63:
		time.sleep(0.002)	# let the host keep up: order, not loss, is tested
EOF
}

# Receiver on the host: counts datagrams per source port and checks that
# each source's sequence numbers only go up. Prints "received reordered".
receiver()
{
	python3 - "$PORT" <<'EOF'
import socket, struct, sys
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
# Each frame arrives on a whole page, so the default buffer holds about 50
# of them; a slow (emulated, loaded) receiver must not lose the burst the
# order check needs. SO_RCVBUFFORCE (33) ignores rmem_max: we run as root.
s.setsockopt(socket.SOL_SOCKET, 33, 16 << 20)
s.bind(("", int(sys.argv[1])))
s.settimeout(15)
last, got, reordered = {}, 0, 0
try:
	while True:
		data, addr = s.recvfrom(2048)
		seq = struct.unpack("!I", data[:4])[0]
		if addr[1] in last and seq <= last[addr[1]]:
			reordered += 1
		last[addr[1]] = seq
		got += 1
		s.settimeout(3)
except socket.timeout:
	pass
print(got, reordered)
EOF
}

check "driver and model load" octep_load || ktap_finish
check "device with $RINGS rings and the peer" \
	eval "octep_new $ID $RINGS && peer_setup" || ktap_finish
# Resolve neighbours first, so ARP does not count against the flow.
ping -c 2 -W 2 "$PEER_IP4" >/dev/null 2>&1

# --- one flow
read -ra before <<<"$(rings_out)"
out=$(mktemp)
on_exit "rm -f $out"
receiver >"$out" &
rx=$!
sleep 1
send 5000 "$COUNT"
wait "$rx"
read -r got reordered <"$out"
read -ra after <<<"$(rings_out)"
busiest=0
busiest_d=0
others=0
for ((r = 0; r < RINGS; r++)); do
	d=$((after[r] - before[r]))
	[ "$d" -gt "$busiest_d" ] && { busiest=$r; busiest_d=$d; }
done
for ((r = 0; r < RINGS; r++)); do
	[ "$r" -ne "$busiest" ] && others=$((others + after[r] - before[r]))
done
ktap_diag "one flow: ring deltas $(for ((r = 0; r < RINGS; r++)); do printf '%d ' $((after[r] - before[r])); done), received $got, reordered $reordered"
# A few frames of other traffic (neighbour discovery) may land elsewhere;
# the flow's $COUNT cannot: 20 is far below any split of it.
if [ "$busiest_d" -ge "$got" ] && [ "$others" -lt 20 ] && [ "$got" -gt 0 ]; then
	ktap_ok "one flow stays on one ring" "ring $busiest"
else
	ktap_fail "one flow stays on one ring" \
		"busiest ring$busiest +$busiest_d, others +$others, received $got"
fi
# Half the datagrams at least, or the order check says little.
if [ "$got" -ge $((COUNT / 2)) ] && [ "$reordered" = 0 ]; then
	ktap_ok "and arrives in order" "$got of $COUNT received"
else
	ktap_fail "and arrives in order" "received $got of $COUNT, $reordered out of order"
fi

# --- sixteen flows
read -ra before <<<"$(rings_out)"
receiver >"$out" &
rx=$!
sleep 1
send 6000 "$COUNT" 16
wait "$rx"
read -r got reordered <"$out"
read -ra after <<<"$(rings_out)"
used=0
for ((r = 0; r < RINGS; r++)); do
	[ $((after[r] - before[r])) -ge 20 ] && used=$((used + 1))
done
ktap_diag "16 flows: ring deltas $(for ((r = 0; r < RINGS; r++)); do printf '%d ' $((after[r] - before[r])); done), received $got, reordered $reordered"
# A model without RSS fails this; with it, all 16 flows on one ring needs
# 15 bits of the random key at 0 (send(), above).
# Half the datagrams at least, as for one flow.
if [ "$used" -ge 2 ] && [ "$got" -ge $((COUNT / 2)) ] &&
   [ "$reordered" = 0 ]; then
	ktap_ok "sixteen flows spread over the rings, each in order" \
		"$used rings used, $got of $COUNT received"
else
	ktap_fail "sixteen flows spread over the rings, each in order" \
		"$used rings used, received $got of $COUNT, $reordered out of order"
fi

ktap_finish
