#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# xdo_dev_offload_ok() keeps from the block what it cannot carry: with
# packet offload in IPv6 transport mode the block inserts ESP right after
# the base header, so a packet with an extension header in front of ESP
# (here hop-by-hop, set with IPV6_HOPOPTS on a UDP socket) must not reach
# it: the stack drops it and counts XfrmOutError. With crypto offload the
# stack builds ESP and the block only encrypts: such datagrams arrive.
# Either way the block's tx_bad stays 0 and the plain datagrams sent
# alongside are encrypted by the block and arrive.

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

# send HOPOPTS: N UDP datagrams to the peer, port 7000, with (1) or
# without (0) a hop-by-hop header; prints how many the peer received.
send()
{
	local out

	out=$(mktemp)
	in_peer python3 - "$O_P" 7000 "$N" "$out.sent" >"$out" <<<"$UDP_COUNT" &
	wait_for 20 udp_bound 7000 "$PEER_NS"
	python3 - "$O_P" "$N" "$1" <<'EOF'
import socket, sys
s = socket.socket(socket.AF_INET6, socket.SOCK_DGRAM)
if sys.argv[3] == '1':
    # IPV6_HOPOPTS: a hop-by-hop header holding one PadN option.
    s.setsockopt(socket.IPPROTO_IPV6, 54, bytes([0, 0, 1, 4, 0, 0, 0, 0]))
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
	err0=$(awk '$1 == "XfrmOutError" { print $2 }' /proc/net/xfrm_stat)
	plain=$(send 0)
	hbh=$(send 1)
	bad=$(($(sim_read ipsec/tx_bad) - bad0))
	enc=$(($(sim_read ipsec/tx_encrypt) + $(sim_read ipsec/tx_encap) - enc0))
	err=$(($(awk '$1 == "XfrmOutError" { print $2 }' /proc/net/xfrm_stat) - err0))
	why="plain $plain/$N, hop-by-hop $hbh/$N received; block encrypted $enc, tx_bad $bad; XfrmOutError +$err"
	[ "$plain" = "$N" ] && [ "$enc" -ge "$N" ] &&
		ktap_ok "$type: plain datagrams encrypted by the block and received ($why)" ||
		ktap_fail "$type: plain datagrams encrypted by the block and received" "$why"
	[ "$bad" = 0 ] && ktap_ok "$type: the block was handed nothing it cannot carry" ||
		ktap_fail "$type: the block was handed nothing it cannot carry" "$why"
	if [ "$type" = crypto ]; then
		[ "$hbh" = "$N" ] &&
			ktap_ok "crypto: hop-by-hop datagrams arrive" ||
			ktap_fail "crypto: hop-by-hop datagrams arrive" "$why"
	else
		[ "$hbh" = 0 ] && [ "$err" -ge "$N" ] &&
			ktap_ok "packet: hop-by-hop datagrams dropped by the stack, counted in XfrmOutError" ||
			ktap_fail "packet: hop-by-hop datagrams dropped by the stack, counted in XfrmOutError" "$why"
	fi
done
ipsec_flush
kernel_log_clean "no kernel warnings"
ktap_finish
