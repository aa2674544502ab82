#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Malformed ESP from the wire towards an offloaded inbound state is
# dropped and counted, with no crash: replayed packets (the peer restarts
# its sequence numbers), a wrong key (bad ICV), an unknown SPI (the block
# passes it up and the stack, with no state either, drops it), and a
# truncated packet. Good traffic still flows afterwards.

source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/ipsec_lib.inc"
require_cmd ip ethtool devlink python3

ktap_plan 11
BAD_KEY=0xfedcba9876543210fedcba9876543210fedcba98

ipsec_prepare
check "modules load" octep_load || ktap_finish
check "device 0" octep_new 0 1 || ktap_finish
check "peer namespace behind the wire" peer_setup || ktap_finish
ipsec_case transport 4
ipsec_host_sa out transport crypto >/dev/null
ipsec_host_sa in transport crypto replay-window 32 >/dev/null
ipsec_host_pol out transport none >/dev/null
ipsec_host_pol in transport none >/dev/null
ipsec_peer transport
check "good traffic: ping 5/5" ping_ok "$PEER_IP4" 5

# peer_out KEY SPI [OSEQ]: replace the peer's outbound state; its
# sequence numbers start after OSEQ (0).
peer_out()
{
	in_peer ip xfrm state deleteall src "$O_P" dst "$O_H" proto esp
	in_peer ip xfrm state add src "$O_P" dst "$O_H" proto esp spi "$2" \
		reqid 1 mode transport replay-oseq "${3:-0}" \
		aead 'rfc4106(gcm(aes))' "$1" 128
}

# expect NAME COUNTER MIN: COUNTER grew by at least MIN during "ping -c 3".
expect()
{
	local c0 c1

	c0=$(stat "$HOST_IF" "$2")
	ping -q -c 3 -i 0.2 -W 1 "$PEER_IP4" >/dev/null 2>&1
	c1=$(stat "$HOST_IF" "$2")
	[ $((c1 - c0)) -ge "$3" ] && ktap_ok "$1: $2 grew by $3" "+$((c1 - c0))" ||
		ktap_fail "$1: $2 grew by $3" "+$((c1 - c0))"
}

peer_out "$IPSEC_K128" "$IPSEC_SPI_IN"
expect "replayed sequence numbers" ipsec_rx_replay 3
# Past the window, so that the ICV is what fails.
peer_out "$BAD_KEY" "$IPSEC_SPI_IN" 100
expect "wrong key" ipsec_rx_bad_icv 3
ns0=$(awk '$1 == "XfrmInNoStates" { print $2 }' /proc/net/xfrm_stat)
peer_out "$IPSEC_K128" 0x7777
expect "unknown SPI" ipsec_rx_no_entry 3
ns1=$(awk '$1 == "XfrmInNoStates" { print $2 }' /proc/net/xfrm_stat)
[ $((ns1 - ns0)) -ge 3 ] && ktap_ok "unknown SPI: the stack dropped them too" "XfrmInNoStates +$((ns1 - ns0))" ||
	ktap_fail "unknown SPI: the stack dropped them too" "XfrmInNoStates +$((ns1 - ns0))"

# A truncated ESP packet, sent raw past the peer's policy.
in_peer ip xfrm policy add src "$O_P" dst "$O_H" proto esp dir out priority 1
m0=$(stat "$HOST_IF" ipsec_rx_malformed)
in_peer python3 - "$O_H" "$IPSEC_SPI_IN" <<'PY'
import socket, struct, sys
s = socket.socket(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_ESP)
for seq in range(100, 103):
    s.sendto(struct.pack('>II', int(sys.argv[2], 0), seq) + b'tiny',
             (sys.argv[1], 0))
PY
sleep 1
m1=$(stat "$HOST_IF" ipsec_rx_malformed)
[ $((m1 - m0)) -ge 3 ] && ktap_ok "truncated ESP: ipsec_rx_malformed grew by 3" "+$((m1 - m0))" ||
	ktap_fail "truncated ESP: ipsec_rx_malformed grew by 3" "+$((m1 - m0))"
in_peer ip xfrm policy delete src "$O_P" dst "$O_H" proto esp dir out

# The peer's real state again, its sequence moved past the window.
in_peer ip xfrm state deleteall src "$O_P" dst "$O_H" proto esp
in_peer ip xfrm state add src "$O_P" dst "$O_H" proto esp spi "$IPSEC_SPI_IN" \
	reqid 1 mode transport replay-oseq 1000 aead 'rfc4106(gcm(aes))' \
	"$IPSEC_K128" 128
check "good traffic again: ping 5/5" ping_ok "$PEER_IP4" 5
ipsec_flush
kernel_log_clean "no kernel warnings"
ktap_finish
