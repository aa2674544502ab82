#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Native XDP (ip link set ... xdpdrv): XDP_DROP drops what it is told to
# and counts each frame on its ring, XDP_PASS keeps TCP and ping working,
# XDP_TX sends a frame back out of the ring pair it came in on (counted
# received and sent in ip -s link), and
# XDP_REDIRECT hands frames to another of our devices (ndo_xdp_xmit). With
# a program attached -L and -G rebuild the rings laid out for it, an MTU
# one buffer cannot hold is refused (and a program while the MTU is too
# large), a swap and a detach take effect at once, and rmmod works. A
# packet the block decrypted (crypto offload) passes to xfrm with its
# secpath: the program sees it plain, the inbound policy lets it in.
#
# The programs are built here with clang's BPF target (the guest sees the
# host's clang), from a source with no headers.

source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/ipsec_lib.inc"
require_cmd ip ethtool ping iperf3 python3 clang

UDP_TX=9999	# the port XDP_TX bounces
UDP_REDIR=9998	# the port XDP_REDIRECT sends to the second device
N=20		# datagrams a round

TMP=$(mktemp -d)
on_exit rm -rf "$TMP"

# build NAME MODE [-DDEFINES...]: $TMP/NAME.o, one program in section xdp.
build()
{
	local name=$1

	shift
	clang -O2 -target bpf -c "$TMP/prog.c" -o "$TMP/$name.o" "$@"
}

cat >"$TMP/prog.c" <<'EOF'
/* IPv4 without options only; everything else passes. */
#define SEC(n) __attribute__((section(n), used))
typedef unsigned char u8;
typedef unsigned int u32;
struct xdp_md { u32 data, data_end, data_meta, ingress_ifindex, rx_queue_index; };
enum { XDP_ABORTED, XDP_DROP, XDP_PASS, XDP_TX, XDP_REDIRECT };
static long (*bpf_redirect)(u32 ifindex, unsigned long long flags) = (void *)23;

static int udp_to(const u8 *d, int port)
{
	return d[23] == 17 && d[36] == (port >> 8) && d[37] == (port & 0xff);
}

SEC("xdp") int prog(struct xdp_md *ctx)
{
	u8 *d = (u8 *)(long)ctx->data, *end = (u8 *)(long)ctx->data_end;
	u8 t;
	int i;

	if (MODE == XDP_PASS || d + 42 > end || d[12] != 8 || d[13] != 0 ||
	    d[14] != 0x45)
		return XDP_PASS;
	if (MODE == XDP_DROP)	/* ICMP */
		return d[23] == 1 ? XDP_DROP : XDP_PASS;
	if (MODE == XDP_TX) {	/* back to the sender: MACs, addresses */
		if (!udp_to(d, PORT))
			return XDP_PASS;
		for (i = 0; i < 6; i++) {
			t = d[i]; d[i] = d[6 + i]; d[6 + i] = t;
		}
		for (i = 0; i < 4; i++) {
			t = d[26 + i]; d[26 + i] = d[30 + i]; d[30 + i] = t;
		}
		return XDP_TX;
	}
	if (udp_to(d, PORT))
		return bpf_redirect(IFINDEX, 0);
	return XDP_PASS;
}
char _license[] SEC("license") = "GPL";
EOF
if ! { build pass -DMODE=2 -DPORT=0 -DIFINDEX=0 &&
	build drop -DMODE=1 -DPORT=0 -DIFINDEX=0 &&
	build tx -DMODE=3 -DPORT=$UDP_TX -DIFINDEX=0; }; then
	ktap_skip_all "clang cannot build a BPF program here"
fi

ktap_plan 40

check "modules load" octep_load || ktap_finish
check "device 0 with 2 rings" octep_new 0 2 || ktap_finish
check "peer namespace behind the wire" peer_setup || ktap_finish

# xdp_sum NAME: the sum of every ring's ethtool -S rx<N>_NAME.
xdp_sum()
{
	ethtool -S "$HOST_IF" | awk -v n="$1" '
		{ k = $1; sub(/:$/, "", k) }
		k ~ "^rx[0-9]+_" n "$" { s += $2 }
		END { print s + 0 }'
}

# attach NAME: attach $TMP/NAME.o natively, in place of any program.
attach()
{
	ip -force link set dev "$HOST_IF" xdpdrv obj "$TMP/$1.o" sec xdp
}

# bounce: the peer sends N datagrams to UDP_TX from UDP_TX; prints how
# many came back to it (from the host's address: XDP_TX's swap).
bounce()
{
	in_peer python3 - "$HOST_IP4" "$PEER_IP4" "$UDP_TX" "$N" <<'EOF'
import socket, sys
host, peer, port, n = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.bind((peer, port))
s.settimeout(3)
for i in range(n):
    s.sendto(b"xdp-bounce-%04d-................" % i, (host, port))
got = 0
try:
    while got < n:
        data, addr = s.recvfrom(2048)
        if addr[0] == host and data.startswith(b"xdp-bounce-"):
            got += 1
except socket.timeout:
    pass
print(got)
EOF
}

# bounced DESC: N datagrams came back, and the rings counted N more XDP_TX.
bounced()
{
	local tx0 got tx

	tx0=$(xdp_sum xdp_tx)
	got=$(bounce)
	tx=$(($(xdp_sum xdp_tx) - tx0))
	if [ "$got" = "$N" ] && [ "$tx" = "$N" ]; then
		ktap_ok "$1" "$got back, xdp_tx +$tx"
	else
		ktap_fail "$1" "$got of $N back, xdp_tx +$tx, xdp_tx_err $(xdp_sum xdp_tx_err)"
	fi
}

# Without a program nothing comes back: the bounce test can fail.
got=$(bounce)
ktap_expect "no program: nothing bounced" "$got came back" [ "$got" = 0 ]

# XDP_DROP of ICMP: the peer's pings fail, each request counted once.
check "XDP_DROP program attached natively (xdpdrv)" attach drop
d0=$(xdp_sum xdp_drop)
if ! in_peer ping -c 5 -i 0.2 -W 1 "$HOST_IP4" >/dev/null 2>&1; then
	ktap_ok "XDP_DROP: the peer's pings fail"
else
	ktap_fail "XDP_DROP: the peer's pings fail" "a reply came back"
fi
d=$(($(xdp_sum xdp_drop) - d0))
total=$(ethtool -S "$HOST_IF" | awk '$1 == "xdp_drop:" { print $2 }')
ok=0
[ "$d" = 5 ] && [ "$total" = "$(xdp_sum xdp_drop)" ] && ok=1
ktap_expect "XDP_DROP: 5 requests, rings' xdp_drop +5, total their sum" \
	"rings' xdp_drop +$d, total $total" [ "$ok" = 1 ]
check "XDP_DROP: IPv6 ping (not IPv4 ICMP) passes" \
	in_peer ping -6 -c 3 -i 0.2 -W 5 "$HOST_IP6"

# XDP_PASS: everything to the stack.
check "XDP_PASS program replaces it" attach pass
check "XDP_PASS: peer pings the host" in_peer ping -c 3 -i 0.2 -W 5 "$HOST_IP4"
in_peer iperf3 -s -D -1 --logfile /dev/null
wait_for 10 in_peer ss -Hltn "sport = :5201"
json=$(timeout 40 iperf3 -c "$PEER_IP4" -R -t 3 -J --connect-timeout 10000 2>&1)
rate=$(iperf_rate 1 <<<"$json")
ktap_expect "XDP_PASS: iperf3 -R (the host receives) runs" \
	"$(tail -n 5 <<<"$json")" [ "$rate" -gt 0 ]

# XDP_PASS of what the block decrypted: without the secpath the inbound
# policy would drop the plain reply, and the state would count nothing.
ipsec_prepare
ipsec_crypto_pair transport 4
p0=$(stat "$HOST_IF" ipsec_rx_packets)
s0=$(host_sa_packets "$IPSEC_SPI_IN" "$O_P" "$O_H")
check "XDP_PASS: ping through crypto-offloaded ESP" ping_ok "$PEER_IP4"
p=$(($(stat "$HOST_IF" ipsec_rx_packets) - p0))
sa=$(($(host_sa_packets "$IPSEC_SPI_IN" "$O_P" "$O_H") - s0))
ok=0
[ "$p" -ge 5 ] && [ "$sa" -ge 5 ] && ok=1
ktap_expect "XDP_PASS: replies decrypted by the block, in the inbound state" \
	"ipsec_rx_packets +$p, inbound state packets +$sa" [ "$ok" = 1 ]
ipsec_flush

# XDP_TX: the frames go back out of the ring pair they came in on.
check "XDP_TX program replaces it" attach tx
bounced "XDP_TX: $N datagrams bounced back to the peer"

# What XDP took was received and what XDP_TX sent was sent (qstats'
# rx-packets: XDP is the stack's first layer): ip -s link's counters grow
# by the bounced frames, besides the odd ARP.
ifstat()
{
	cat "/sys/class/net/$HOST_IF/statistics/$1"
}
rx0=$(ifstat rx_packets) tx0=$(ifstat tx_packets)
got=$(bounce)
rx=$(($(ifstat rx_packets) - rx0)) tx=$(($(ifstat tx_packets) - tx0))
ok=0
[ "$got" = "$N" ] && [ "$rx" -ge "$N" ] && [ "$tx" -ge "$N" ] && ok=1
ktap_expect "XDP_TX: rx_packets and tx_packets count the $N bounced frames" \
	"$got back, rx_packets +$rx, tx_packets +$tx" [ "$ok" = 1 ]
check "XDP_TX: other traffic passes (ping)" \
	in_peer ping -c 3 -i 0.2 -W 5 "$HOST_IP4"

# Reconfiguration with a program attached: the rings are rebuilt for it.
check "ethtool -L combined 1 with XDP attached" \
	ethtool -L "$HOST_IF" combined 1
bounced "XDP_TX after -L 1"
check "ethtool -G rx 256 tx 256 with XDP attached" \
	ethtool -G "$HOST_IF" rx 256 tx 256
check "ethtool -L combined 2 with XDP attached" \
	ethtool -L "$HOST_IF" combined 2
bounced "XDP_TX after -G and -L 2"

# One frame a buffer: an MTU larger than an XDP buffer holds is refused.
out=$(ip link set dev "$HOST_IF" mtu 3600 2>&1)
rc=$?
mtu=$(cat "/sys/class/net/$HOST_IF/mtu")
ok=0
[ "$rc" != 0 ] && [ "$mtu" = 1500 ] && grep -q "maximum" <<<"$out" && ok=1
ktap_expect "MTU 3600 refused with XDP attached, with a message" \
	"exit $rc, mtu $mtu: $out" [ "$ok" = 1 ]
check "MTU 3000 taken with XDP attached" \
	ip link set dev "$HOST_IF" mtu 3000
bounced "XDP_TX at MTU 3000"

# Detach: traffic as before, nothing bounced.
check "detach (xdpdrv off)" ip link set dev "$HOST_IF" xdpdrv off
got=$(bounce)
ktap_expect "detached: nothing bounced" "$got came back" [ "$got" = 0 ]
check "detached: peer pings the host" \
	in_peer ping -c 3 -i 0.2 -W 5 "$HOST_IP4"
check "MTU 3600 without XDP" ip link set dev "$HOST_IF" mtu 3600
out=$(attach pass 2>&1)
rc=$?
ok=0
[ "$rc" != 0 ] && grep -q "too large for XDP" <<<"$out" && ok=1
ktap_expect "attach refused at MTU 3600, with the extack" "exit $rc: $out" \
	[ "$ok" = 1 ]
ip link set dev "$HOST_IF" mtu 1500

# XDP_REDIRECT to a second device of ours: out of its wire.
DEV0_IF=$HOST_IF
check "device 1 with 2 rings" octep_new 1 2
DEV1_IF=$HOST_IF WIRE1_IF=$WIRE_IF

# xdp_features IF: the netdev family's xdp-features of IF, sorted, one
# line, comma-separated.
xdp_features()
{
	python3 "$YNL" --spec "$YNL_SPEC" --no-schema --output-json \
		--do dev-get --json "{\"ifindex\": $(cat "/sys/class/net/$1/ifindex")}" |
		python3 -c 'import json, sys
print(",".join(sorted(json.load(sys.stdin).get("xdp-features", []))))'
}

# What xdp_features offers follows the servicing: programs run only under
# service=visit (device 1 is down: the switch is refused while up).
XDP_ALL=basic,ndo-xmit,redirect
if ynl_find; then
	f=$(xdp_features "$DEV1_IF")
	ktap_expect "xdp_features under service=visit: $XDP_ALL" "$f" \
		[ "$f" = "$XDP_ALL" ]
	octep_knob service pass
	f=$(xdp_features "$DEV1_IF")
	ktap_expect "xdp_features under service=pass: ndo-xmit only" "$f" \
		[ "$f" = ndo-xmit ]
	octep_knob service visit
	f=$(xdp_features "$DEV1_IF")
	ktap_expect "xdp_features back to $XDP_ALL under service=visit" "$f" \
		[ "$f" = "$XDP_ALL" ]
else
	for c in visit pass "visit again"; do
		ktap_skip "xdp_features under service=$c" "no YNL client ($YNL, python3-yaml)"
	done
fi
HOST_IF=$DEV0_IF
ip link set dev "$DEV1_IF" up
ip link set dev "$WIRE1_IF" up
build redir -DMODE=4 -DPORT=$UDP_REDIR \
	-DIFINDEX="$(cat "/sys/class/net/$DEV1_IF/ifindex")"
check "XDP_REDIRECT program (to $DEV1_IF) attached" attach redir

# peer_send PORT COUNT [GAP]: the peer sends COUNT datagrams to the host's
# UDP PORT, GAP seconds apart (none).
peer_send()
{
	in_peer python3 -c 'import socket, sys, time
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
for i in range(int(sys.argv[3])):
    s.sendto(b"xdp-redirect", (sys.argv[1], int(sys.argv[2])))
    time.sleep(float(sys.argv[4]))' "$HOST_IP4" "$1" "$2" "${3:-0}"
}

# redirected DESC: N datagrams to UDP_REDIR leave device 1's wire (an
# AF_PACKET socket there counts them), counted by both devices.
redirected()
{
	local rpid got r r0 x x0 ok=0

	rm -f "$TMP/ready"
	python3 - "$WIRE1_IF" "$UDP_REDIR" "$N" "$TMP" >"$TMP/redir.out" 2>&1 <<'EOF' &
import socket, sys, os
wire, port, n, tmp = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(3))
s.bind((wire, 0))
s.settimeout(5)
open(os.path.join(tmp, "ready"), "w").close()
got = 0
try:
    while got < n:
        f = s.recv(4096)
        if len(f) > 37 and f[23] == 17 and (f[36] << 8 | f[37]) == port:
            got += 1
except socket.timeout:
    pass
print(got)
EOF
	rpid=$!
	wait_for 10 test -e "$TMP/ready"
	r0=$(xdp_sum xdp_redirect)
	x0=$(stat "$DEV1_IF" tx_xdp_xmit)
	peer_send "$UDP_REDIR" "$N"
	wait "$rpid"
	got=$(cat "$TMP/redir.out")
	r=$(($(xdp_sum xdp_redirect) - r0))
	x=$(($(stat "$DEV1_IF" tx_xdp_xmit) - x0))
	[ "$got" = "$N" ] && [ "$r" = "$N" ] && [ "$x" = "$N" ] && ok=1
	ktap_expect "$1" "wire saw $got, xdp_redirect +$r, $DEV1_IF tx_xdp_xmit +$x" \
		[ "$ok" = 1 ]
}

redirected "XDP_REDIRECT: $N frames out of device 1's wire"

# ndo_xdp_xmit while the target's rings are rebuilt: a frame is sent,
# or refused and counted, never put in a ring being freed.
peer_send "$UDP_REDIR" 4000 0.001 &
fpid=$!
rc=0
for _ in 1 2 3; do
	ethtool -L "$DEV1_IF" combined 1 &&
	ethtool -G "$DEV1_IF" rx 128 tx 128 &&
	ethtool -L "$DEV1_IF" combined 2 &&
	ethtool -G "$DEV1_IF" rx 1024 tx 1024 || rc=1
done
wait "$fpid"
ktap_expect "target's -L/-G under redirected traffic, 3 rounds" \
	"a reconfiguration failed" [ "$rc" = 0 ]
ktap_diag "$DEV1_IF: tx_xdp_xmit $(stat "$DEV1_IF" tx_xdp_xmit), tx_xdp_xmit_err $(stat "$DEV1_IF" tx_xdp_xmit_err)"
redirected "XDP_REDIRECT after the target's reconfigurations"

# Removal with programs attached: the core detaches them as it goes.
attach pass
check "rmmod with a program attached" octep_unload

ktap_finish
