#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# RSS: ethtool -x shows the ring count, the 128-entry indirection table
# and the 40-byte key; ethtool -X sets them and the model's block steers
# by them. Each flow lands on the ring its Toeplitz hash names in the
# table; a table of weights sends every frame to the rings it names and
# none to the others; the key can be changed, other hash functions are
# refused; -L cannot go below a ring the user's table names, and the
# default table follows -L. An entry naming a ring that is not enabled
# drops the frame, counted by the model (rss_drops).
#
# Traffic: UDP datagrams from the peer to the host, from many source
# ports (many flows), over IPv4 and IPv6; nothing needs to listen. The
# rings' growth is the model's count of packets it put on each ring
# (ring<N>/out_pkts).

source "$(dirname "$0")/lib.sh"
require_cmd ip ethtool python3

ktap_plan 22

check "modules load" octep_load || ktap_finish
check "device 0 with 4 rings" octep_new 0 4 || ktap_finish
check "peer namespace behind the wire" peer_setup || ktap_finish

LIB_TMPDIR=$(mktemp -d)
on_exit "rm -rf $LIB_TMPDIR"

# Microsoft's RSS verification key.
MS_KEY=6d:5a:56:da:25:5b:0e:c2:41:67:25:3d:43:a3:8f:b0:d0:ca:2b:cb:ae:7b:30:b4:77:cb:2d:a3:80:30:f2:0c:6a:42:b7:3b:be:ac:01:fa

# rxfh: ethtool -x of the host's netdev as "RINGS KEY HFUNC ENTRY...".
rxfh()
{
	ethtool -x "$HOST_IF" | awk '
		/RX flow hash indirection table/ {
			for (i = 1; i <= NF; i++) if ($i == "with") rings = $(i + 1)
		}
		/^ *[0-9]+:/ { for (i = 2; i <= NF; i++) t = t " " $i }
		k == 1 { key = $1; k = 0 }
		/RSS hash key:/ { k = 1 }
		/: on$/ { f = $1; sub(":", "", f) }
		END { print rings, key, f t }'
}

# rxfh_is RINGS KEY|- HFUNC EXPR: ethtool -x shows RINGS rings, 128
# entries, a 40-byte key (KEY, unless -), HFUNC on, and entry i is EXPR
# (python, of i) for every i.
rxfh_is()
{
	rxfh | python3 -c '
import sys
rings, key, hfunc, expr = sys.argv[1:]
f = sys.stdin.read().split()
bad = []
if len(f) < 3:
    print("ethtool -x: %s" % " ".join(f))
    sys.exit()
if f[0] != rings:
    bad.append("%s rings, want %s" % (f[0], rings))
if len(f[1].split(":")) != 40:
    bad.append("key %s is not 40 bytes" % f[1])
if key != "-" and f[1].lower() != key:
    bad.append("key %s, want %s" % (f[1], key))
if f[2] != hfunc:
    bad.append("hash function %s, want %s" % (f[2], hfunc))
t = [int(x) for x in f[3:]]
want = [eval(expr) for i in range(128)]
if t != want:
    bad.append("%d entries %s, want %s" % (len(t), t[:16], want[:16]))
print("; ".join(bad) or "ok")' "$@"
}

# rings_snap FILE: the model's out_pkts of rings 0-3.
rings_snap()
{
	local q

	for q in 0 1 2 3; do
		sim_read "ring$q/out_pkts"
	done | tr '\n' ' ' >"$1"
}

# The sender, run in the peer: DST PORT0 NPORTS COUNT sends COUNT
# datagrams from each source port PORT0..PORT0+NPORTS-1 to DST port 9.
cat >"$LIB_TMPDIR/send.py" <<'EOF'
import socket, sys
dst, port0, nports, count = sys.argv[1], *map(int, sys.argv[2:])
fam = socket.AF_INET6 if ":" in dst else socket.AF_INET
for p in range(port0, port0 + nports):
    s = socket.socket(fam, socket.SOCK_DGRAM)
    s.bind(("", p))
    for _ in range(count):
        s.sendto(b"rss", (dst, 9))
    s.close()
EOF

# flows PORT0 NPORTS COUNT: COUNT datagrams from each of NPORTS source
# ports over IPv4 and as many over IPv6; returns once the model has put at
# least that many packets on the rings (rings_snap before and after in
# $LIB_TMPDIR/before, /after). 1 if they did not all arrive.
flows()
{
	local want=$((2 * $2 * $3)) rc

	rings_snap "$LIB_TMPDIR/before"
	in_peer python3 "$LIB_TMPDIR/send.py" "$HOST_IP4" "$@" &&
	in_peer python3 "$LIB_TMPDIR/send.py" "$HOST_IP6" "$@" || return 1
	wait_for 10 flows_in "$want"
	rc=$?
	rings_snap "$LIB_TMPDIR/after"
	[ $rc = 0 ] || echo "fewer than $want arrived: rings $(cat "$LIB_TMPDIR/before") -> $(cat "$LIB_TMPDIR/after")"
	return $rc
}

flows_in()
{
	rings_snap "$LIB_TMPDIR/now"
	python3 -c '
import sys
a, b = (list(map(int, open(f).read().split())) for f in sys.argv[1:3])
sys.exit(sum(b) - sum(a) < int(sys.argv[3]))' \
		"$LIB_TMPDIR/before" "$LIB_TMPDIR/now" "$1"
}

# grew_only RINGS: "ok" if, between before and after, only the rings in
# RINGS (e.g. 2,3; none for none) grew and each of them did.
grew_only()
{
	python3 -c '
import sys
a, b = (list(map(int, open(f).read().split())) for f in sys.argv[1:3])
want = [int(x) for x in sys.argv[3].split(",") if x != "none"]
d = [y - x for x, y in zip(a, b)]
bad = ["ring %d grew by %d" % (q, d[q]) for q in range(4) if q not in want and d[q]]
bad += ["ring %d carried nothing" % q for q in want if not d[q]]
print("; ".join(bad) or "ok")
print("# ring growth %s" % d, file=sys.stderr)' \
		"$LIB_TMPDIR/before" "$LIB_TMPDIR/after" "$1"
}

# The defaults: a random key, entry i on ring i % 4, Toeplitz.
verdict "ethtool -x: 4 rings, 128 entries i % 4, a 40-byte key, toeplitz" \
	rxfh_is 4 - toeplitz "i % 4"

check "ethtool -X equal 4 hkey <Microsoft's key>" \
	ethtool -X "$HOST_IF" equal 4 hkey "$MS_KEY"
verdict "ethtool -x shows the new key" rxfh_is 4 "$MS_KEY" toeplitz "i % 4"

# toeplitz_rings SPORT: the rings the Toeplitz hash under MS_KEY names,
# in the table "equal 4" (entry hash % 128, ring entry % 4), for the flow
# from the peer's SPORT to the host's port 9, over IPv4 and over IPv6.
toeplitz_rings()
{
	python3 -c '
import ipaddress, sys
key = int(sys.argv[1].replace(":", ""), 16)
def toeplitz(data):
    h = 0
    for i in range(len(data) * 8):
        if data[i // 8] & (0x80 >> (i % 8)):
            h ^= (key >> (40 * 8 - 32 - i)) & 0xffffffff
    return h
ports = int(sys.argv[2]).to_bytes(2, "big") + (9).to_bytes(2, "big")
print(*(toeplitz(ipaddress.ip_address(s).packed +
                 ipaddress.ip_address(d).packed + ports) % 128 % 4
        for s, d in (sys.argv[3:5], sys.argv[5:7])))' \
		"$MS_KEY" "$1" "$PEER_IP4" "$HOST_IP4" "$PEER_IP6" "$HOST_IP6"
}

# one_flow DST SPORT RING: 30 datagrams of one flow land on RING. The
# background (ND, ARP) may add a few packets elsewhere, never 30.
one_flow()
{
	rings_snap "$LIB_TMPDIR/before"
	in_peer python3 "$LIB_TMPDIR/send.py" "$1" "$2" 1 30
	wait_for 10 flows_in 30
	rings_snap "$LIB_TMPDIR/after"
	python3 -c '
import sys
a, b = (list(map(int, open(f).read().split())) for f in sys.argv[1:3])
d = [y - x for x, y in zip(a, b)]
dst, sport, r = sys.argv[3], sys.argv[4], int(sys.argv[5])
print("# to %s from port %s: hash names ring %d, growth %s" % (dst, sport, r, d),
      file=sys.stderr)
if d[r] < 30 or any(d[q] >= 30 for q in range(4) if q != r):
    print("to %s from port %s: growth %s, the hash names ring %d; " %
          (dst, sport, d, r), end="")' \
		"$LIB_TMPDIR/before" "$LIB_TMPDIR/after" "$1" "$2" "$3"
}

# toeplitz_check SPORT...: each flow, alone, on the ring its hash names.
toeplitz_check()
{
	local p r4 r6 bad=

	for p in "$@"; do
		read -r r4 r6 < <(toeplitz_rings "$p")
		bad+=$(one_flow "$HOST_IP4" "$p" "$r4")
		bad+=$(one_flow "$HOST_IP6" "$p" "$r6")
	done
	echo "${bad:-ok}"
}
verdict "each flow lands on the ring its Toeplitz hash names" \
	toeplitz_check 40000 40001 40002 40003

check "ethtool -X weight 1 0 0 0" ethtool -X "$HOST_IF" weight 1 0 0 0
check "64 flows each way, weight 1 0 0 0" flows 41000 64 4
verdict "weight 1 0 0 0: only ring 0 grew" grew_only 0

check "ethtool -X weight 0 0 1 1" ethtool -X "$HOST_IF" weight 0 0 1 1
check "64 flows each way, weight 0 0 1 1" flows 42000 64 4
verdict "weight 0 0 1 1: only rings 2 and 3 grew, both" grew_only 2,3

check "-L combined 2 is refused while the table names ring 3" \
	sh -c "! ethtool -L $HOST_IF combined 2"

hfunc_refused()
{
	local before out

	before=$(rxfh)
	if out=$(ethtool -X "$HOST_IF" hfunc xor 2>&1); then
		echo "hfunc xor accepted: $out"
	elif [ "$(rxfh)" != "$before" ]; then
		echo "ethtool -x changed: $before -> $(rxfh)"
	else
		echo ok
	fi
	ktap_diag "ethtool -X hfunc xor: $out" >&2
}
verdict "hfunc xor is refused, the settings unchanged" hfunc_refused

check "ethtool -X default, then -L combined 2" \
	sh -c "ethtool -X $HOST_IF default && ethtool -L $HOST_IF combined 2"
verdict "ethtool -x: 2 rings, entries i % 2" \
	rxfh_is 2 "$MS_KEY" toeplitz "i % 2"
check "64 flows each way over 2 rings" flows 43000 64 4
verdict "after -L 2: rings 0 and 1 carry the flows, 2 and 3 nothing" \
	grew_only 0,1

# The model's side: table entries naming ring 3, which is not enabled, by
# the register hook. Every frame is dropped and counted; the registers
# read back what was written.
model_drops()
{
	local d0 i r=0x0303030303030303 back

	d0=$(sim_read rss_drops)
	for i in $(seq 0 15); do
		sim_write regs "$((0x500200 + 8 * i)) $r"
	done
	sim_write regs "$((0x500200 + 8 * 15))"
	back=$(sim_read regs)
	rings_snap "$LIB_TMPDIR/before"
	in_peer python3 "$LIB_TMPDIR/send.py" "$HOST_IP4" 44000 8 8
	if ! wait_for 10 sh -c "[ \$(cat $SIM_DBG/rss_drops) -ge $((d0 + 64)) ]"; then
		echo "rss_drops $d0 -> $(sim_read rss_drops), want 64 more"
		return
	fi
	rings_snap "$LIB_TMPDIR/after"
	if [ "${back#* }" != "$r" ]; then
		echo "INDIR(15) reads $back, written $r"
	else
		grew_only none
	fi
}
verdict "entries naming a disabled ring: frames dropped, counted in rss_drops" \
	model_drops
check "ethtool -X default programs the block again: ping" \
	sh -c "ethtool -X $HOST_IF default && ping -c 2 -W 5 $PEER_IP4"

kernel_log_clean "no kernel warnings"
ktap_finish
