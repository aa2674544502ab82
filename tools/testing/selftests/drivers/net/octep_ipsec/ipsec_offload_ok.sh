#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# IPv6 transport mode with extension headers in front of ESP: hop-by-hop
# (IPV6_HOPOPTS) and destination options (IPV6_DSTOPTS) on a UDP socket.
# With crypto offload the stack builds ESP and the block only encrypts;
# with packet offload the block places ESP after those headers where the
# stack's ESP would (ip6_find_1stfragopt()). Either way, as with software
# ESP, the datagrams arrive at the software peer, the block encrypted
# them and its tx_bad stays 0, and the plain datagrams sent alongside
# arrive too.

source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/ipsec_lib.inc"
require_cmd ip python3

N=5
ktap_plan 10

ipsec_prepare
check "modules load" octep_load || ktap_finish
check "device 0" octep_new 0 1 || ktap_finish
check "peer namespace behind the wire" peer_setup || ktap_finish
ipsec_case transport 6

# send HDR: N UDP datagrams to the peer, port 7000, with no extension
# header (0), a hop-by-hop (1) or a destination options header (2); prints
# how many the peer received.
send()
{
	local out

	out=$(mktemp)
	in_peer python3 - "$O_P" 7000 "$N" "$out.sent" >"$out" <<<"$UDP_COUNT" &
	wait_for 20 udp_bound 7000 "$PEER_NS"
	python3 - "$O_P" "$N" "$1" <<'EOF'
import socket, sys
s = socket.socket(socket.AF_INET6, socket.SOCK_DGRAM)
if sys.argv[3] != '0':
    # IPV6_HOPOPTS (54) or IPV6_DSTOPTS (59): a header with one PadN.
    s.setsockopt(socket.IPPROTO_IPV6, 54 if sys.argv[3] == '1' else 59,
                 bytes([0, 0, 1, 4, 0, 0, 0, 0]))
for i in range(int(sys.argv[2])):
    try:
        s.sendto(b'probe %d' % i, (sys.argv[1], 7000))
    except OSError:
        pass	# a drop the stack reports (packet offload): go on
EOF
	touch "$out.sent"
	wait
	cat "$out"
	rm -f "$out" "$out.sent"
}

for type in crypto packet; do
	ipsec_flush
	ipsec_install transport "$type" 2 >/dev/null
	if ! ipsec_both_offloaded; then
		ktap_fail "$type: states offloaded" "$(ip xfrm state)"
		continue
	fi
	bad0=$(sim_read ipsec/tx_bad)
	enc0=$(($(sim_read ipsec/tx_encrypt) + $(sim_read ipsec/tx_encap)))
	err0=$(xfrm_stat XfrmOutError)
	plain=$(send 0)
	hbh=$(send 1)
	dst=$(send 2)
	bad=$(($(sim_read ipsec/tx_bad) - bad0))
	enc=$(($(sim_read ipsec/tx_encrypt) + $(sim_read ipsec/tx_encap) - enc0))
	err=$(($(xfrm_stat XfrmOutError) - err0))
	why="plain $plain/$N, hop-by-hop $hbh/$N, destination options $dst/$N received; block encrypted $enc, tx_bad $bad; XfrmOutError +$err"
	[ "$plain" = "$N" ] &&
		ktap_ok "$type: plain datagrams received" "$why" ||
		ktap_fail "$type: plain datagrams received" "$why"
	[ "$bad" = 0 ] && [ "$err" = 0 ] &&
		ktap_ok "$type: nothing dropped, by the block or the stack" ||
		ktap_fail "$type: nothing dropped, by the block or the stack" "$why"
	[ "$hbh" = "$N" ] && [ "$dst" = "$N" ] && [ "$enc" -ge $((3 * N)) ] &&
		ktap_ok "$type: datagrams with extension headers encrypted by the block and received" ||
		ktap_fail "$type: datagrams with extension headers encrypted by the block and received" "$why"
done
ipsec_flush
kernel_log_clean "no kernel warnings"
ktap_finish
