#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# NAT traversal offload: ESP in UDP (RFC 3948, "encap espinudp 4500 4500")
# between the host and the peer, in crypto offload (transport mode) and
# then in packet offload (a tunnel of IPv4 in IPv4). The peer runs software ESP with a
# UDP_ENCAP_ESPINUDP socket on 4500 (as an IKE daemon keeps one), the host
# one too (crypto offload hands the stack the decrypted ESP in UDP, which
# reaches xfrm_input() through it; IKE's datagrams end there). The peer's
# wire is captured (its GRO off) and each mode asserts:
#  - both states offloaded; ping 5/5 and iperf3 both ways through the
#    tunnel;
#  - the wire shows UDP port 4500, no bare ESP, and nothing in clear: the
#    peer's policies, which take the inner addresses only from ESP, drop
#    none (XfrmInTmplMismatch), and the capture holds no more packets of
#    the inner addresses than ESP-in-UDP frames from the host (the peer's
#    ESP hands the tunnel's packets back to the same device: the
#    capture sees each decrypted one once), in transport mode no IP
#    frame between the two but ESP in UDP;
#  - ethtool -S ipsec_tx/rx_packets and the model's tx_natt/rx_natt
#    moved, and the peer's software states decrypted what the block sent;
#  - a NAT keepalive (one byte 0xff) and an IKE datagram (zero non-ESP
#    marker) to 4500 reach the host untouched (the keepalive seen on the
#    host's netdev: the kernel's encap socket eats keepalives; the IKE
#    datagram read byte for byte from the host's socket);
#  - ESP in UDP too short for its SPI's state is dropped and counted
#    (ipsec_rx_malformed, the model's rx_malformed).
# Packet offload: the outbound state updated to source port 4501 (a NAT's
# mapping moved; xfrm_state_update() tells no driver): the block is told
# (FLOW_ENCAP) and the wire shows 4501, not 4500, from the host.
# Through a NAT: the peer namespace routes to a third one behind a veth
# and masquerades the host's UDP 4500 to port 14500 (nftables); that far
# end's software ESP knows the host only as the NAT's address and port.
# In each mode: ping 5/5, the NAT rule counted the host's datagrams, the
# far end decrypted them, the block decrypted the answers. Skipped
# without nft(8).
# Refused with the reason: NAT-T over IPv6 (crypto falls back to
# software, packet fails), NAT-T on a block that does not announce it,
# and an inbound crypto-offload state of ESP in UDP in tunnel mode (6.12
# hands decrypted ESP in UDP to the encap socket's policy check with its
# secpath, which rejects a tunnel-mode state when an IKE daemon's bypass
# policy is on the socket: ipsec_strongswan_natt.sh): that one state
# stays in software, the outbound one is offloaded, the tunnel works;
# through the NAT too.

# shellcheck disable=SC2317 # functions called through check and wait_for
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/ipsec_lib.inc"
require_cmd ip ethtool tcpdump iperf3 python3

ktap_plan 31

ipsec_start
in_peer ethtool -K "$WIRE_IF" gro off
CAP=$(mktemp -d)
on_exit rm -rf "$CAP"

# A UDP_ENCAP_ESPINUDP socket (UDP_ENCAP 100, UDP_ENCAP_ESPINUDP 2) on
# 4500 that writes what reaches it (IKE's datagrams), one hex line each.
# As an IKE daemon's, it bypasses IPsec both ways (IP_XFRM_POLICY 17: an
# xfrm_userpolicy_info, AF_INET, no limits, action allow, dir in, out):
# else a transport-mode policy between the two ends would claim the ESP
# in UDP itself.
BYPASS='import socket, struct
def bypass(s):
    for d in (0, 1):
        sel = bytes(40) + struct.pack("=H", socket.AF_INET) + bytes(14)
        lft = struct.pack("=8Q", *([2**64 - 1] * 4 + [0] * 4))
        s.setsockopt(socket.IPPROTO_IP, 17, sel + lft + bytes(32) +
                     struct.pack("=IIBBBB4x", 0, 0, d, 0, 0, 0))
'
ENCAP_SOCK=$BYPASS'import sys
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.bind(("0.0.0.0", 4500))
s.setsockopt(socket.IPPROTO_UDP, 100, 2)
bypass(s)
with open(sys.argv[1], "w") as f:
    while True:
        f.write(s.recv(4096).hex() + "\n")
        f.flush()'
python3 -c "$ENCAP_SOCK" "$CAP/host.log" &
on_exit kill $!
ip netns exec "$PEER_NS" python3 -c "$ENCAP_SOCK" "$CAP/peer.log" &
on_exit kill $!

natt_sockets()
{
	wait_for 20 udp_bound 4500 && wait_for 20 udp_bound 4500 "$PEER_NS"
}
check "UDP_ENCAP_ESPINUDP sockets on 4500, host and peer" natt_sockets ||
	ktap_finish

# PEER_SEND PORT HEX...: the peer sends each HEX payload, in clear (its
# socket bypasses IPsec, as IKE's), from UDP port 4501 to the host's PORT.
PEER_SEND=$BYPASS'import sys
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.bind(("0.0.0.0", 4501))
bypass(s)
for h in sys.argv[3:]:
    s.sendto(bytes.fromhex(h), (sys.argv[1], int(sys.argv[2])))'

ipsec_case tunnel 4
ENCAP_IP=(encap espinudp 4500 4500 0.0.0.0)

# natt_install TYPE [MODE]: the host's ESP-in-UDP pair (TYPE crypto|packet,
# MODE tunnel unless given) and its policies, and the peer's software
# mirror image; prints the messages.
natt_install()
{
	local enc=("${ENCAP_IP[@]}") pol=none m=${2:-tunnel}

	if [ "$1" = packet ]; then
		enc=(--encap 4500 4500) pol=packet
		ipsec_tunnel_neigh
	fi
	ipsec_host_sa in "$m" "$1" "${enc[@]}"
	ipsec_host_sa out "$m" "$1" "${enc[@]}"
	ipsec_host_pol out "$m" "$pol"
	ipsec_host_pol in "$m" "$pol"
	ipsec_peer "$m" "${ENCAP_IP[@]}" 2>&1
}

# counts: "tx rx tx_natt rx_natt natt_pass malformed sim_malformed".
counts()
{
	echo "$(stat "$HOST_IF" ipsec_tx_packets)" \
	     "$(stat "$HOST_IF" ipsec_rx_packets)" \
	     "$(sim_read ipsec/tx_natt)" "$(sim_read ipsec/rx_natt)" \
	     "$(sim_read ipsec/rx_natt_pass)" \
	     "$(stat "$HOST_IF" ipsec_rx_malformed)" \
	     "$(sim_read ipsec/rx_malformed)"
}

# natt_mode TYPE MODE: the eight cases of one offload type.
natt_mode()
{
	local t=$1 out c0 c1 up down u4500 esp inner pi po ka ike why ikehex
	local tm0 tm1 clear=0

	ikehex=00000000$(printf 'IKE-%s' "$t" | od -An -tx1 | tr -d ' \n')

	out=$(natt_install "$t" "$2")
	ipsec_both_offloaded && ktap_ok "$t: both ESP-in-UDP states offloaded" ||
		ktap_fail "$t: both ESP-in-UDP states offloaded" "$out"

	read -ra c0 <<<"$(counts)"
	tm0=$(in_peer awk '$1 == "XfrmInTmplMismatch" { print $2 }' /proc/net/xfrm_stat)
	capture "$WIRE_IF" "$CAP/$t.pcap"
	check "$t: ping through the tunnel 5/5" ping_ok "$I_P" 5
	# Paced: a capture that loses frames could not vouch for the rest.
	read -r _ up <<<"$(IPERF_BPS=2M ipsec_iperf up "$I_P" 2 1)"
	read -r _ down <<<"$(IPERF_BPS=2M ipsec_iperf down "$I_H" 2 1)"
	[ "$up" -gt 0 ] && [ "$down" -gt 0 ] &&
		ktap_ok "$t: TCP both ways (iperf3)" "bytes up $up, down $down" ||
		ktap_fail "$t: TCP both ways (iperf3)" "bytes up $up, down $down"
	cap_stop
	read -ra c1 <<<"$(counts)"

	tm1=$(in_peer awk '$1 == "XfrmInTmplMismatch" { print $2 }' /proc/net/xfrm_stat)
	u4500=$(frames "$CAP/$t.pcap" "src host $O_H and udp dst port 4500")
	esp=$(frames "$CAP/$t.pcap" "ip proto 50")
	if [ "$2" = transport ]; then
		inner=0
		clear=$(frames "$CAP/$t.pcap" "ip and not (udp port 4500)")
	else
		inner=$(frames "$CAP/$t.pcap" "ip and (host $I_H or host $I_P)")
	fi
	why="capture $CAP_OK: udp/4500 from the host $u4500, bare ESP $esp,"
	why+=" inner $inner, other IP $clear; peer XfrmInTmplMismatch +$((tm1 - tm0))"
	[ "$CAP_OK" = yes ] && [ "$u4500" -gt 0 ] && [ "$esp" -eq 0 ] &&
		[ "$inner" -le "$u4500" ] && [ "$clear" -eq 0 ] &&
		[ "$tm1" -eq "$tm0" ] &&
		ktap_ok "$t: the wire carries ESP in UDP 4500 only" "$why" ||
		ktap_fail "$t: the wire carries ESP in UDP 4500 only" "$why"

	why="ipsec_tx_packets +$((c1[0] - c0[0])) ipsec_rx_packets +$((c1[1] - c0[1]))"
	why+=" tx_natt +$((c1[2] - c0[2])) rx_natt +$((c1[3] - c0[3]))"
	[ $((c1[0] - c0[0])) -ge 5 ] && [ $((c1[1] - c0[1])) -ge 5 ] &&
		[ $((c1[2] - c0[2])) -ge 5 ] && [ $((c1[3] - c0[3])) -ge 5 ] &&
		ktap_ok "$t: the block's ESP-in-UDP counters moved both ways" "$why" ||
		ktap_fail "$t: the block's ESP-in-UDP counters moved both ways" "$why"

	pi=$(peer_sa_packets "$IPSEC_SPI_OUT")
	po=$(peer_sa_packets "$IPSEC_SPI_IN")
	why="peer in $pi, out $po; host in $(host_sa_packets "$IPSEC_SPI_IN" "$O_P" "$O_H")"
	[ "${pi:-0}" -ge 5 ] && [ "${po:-0}" -ge 5 ] &&
		ktap_ok "$t: the peer's software ESP took what the block sent" "$why" ||
		ktap_fail "$t: the peer's software ESP took what the block sent" "$why"

	# A keepalive and an IKE datagram (non-ESP marker, then a payload).
	read -ra c0 <<<"$(counts)"
	capture "host:$HOST_IF" "$CAP/$t-host.pcap"
	in_peer python3 -c "$PEER_SEND" "$O_H" 4500 ff "$ikehex"
	wait_for 5 grep -q "^$ikehex\$" "$CAP/host.log"
	cap_stop
	read -ra c1 <<<"$(counts)"
	ka=$(frames "$CAP/$t-host.pcap" \
		"udp dst port 4500 and udp[4:2] = 9 and udp[8] = 0xff")
	ike=$(grep -c "^$ikehex\$" "$CAP/host.log")
	why="keepalives on $HOST_IF $ka, IKE datagrams read $ike,"
	why+=" rx_natt_pass +$((c1[4] - c0[4])), malformed +$((c1[5] - c0[5]))"
	[ "$ka" -eq 1 ] && [ "$ike" -eq 1 ] && [ $((c1[4] - c0[4])) -eq 2 ] &&
		[ $((c1[5] - c0[5])) -eq 0 ] &&
		ktap_ok "$t: a NAT keepalive and an IKE datagram pass untouched" "$why" ||
		ktap_fail "$t: a NAT keepalive and an IKE datagram pass untouched" "$why"

	# The SPI of the host's inbound state, a sequence number, 4 bytes.
	read -ra c0 <<<"$(counts)"
	in_peer python3 -c "$PEER_SEND" "$O_H" 4500 \
		"0000${IPSEC_SPI_IN#0x}0000006474696e79" \
		"0000${IPSEC_SPI_IN#0x}0000006574696e79" \
		"0000${IPSEC_SPI_IN#0x}0000006674696e79"
	sleep 1
	read -ra c1 <<<"$(counts)"
	why="ipsec_rx_malformed +$((c1[5] - c0[5])), rx_malformed +$((c1[6] - c0[6]))"
	[ $((c1[5] - c0[5])) -eq 3 ] && [ $((c1[6] - c0[6])) -eq 3 ] &&
		ktap_ok "$t: short ESP in UDP is dropped and counted" "$why" ||
		ktap_fail "$t: short ESP in UDP is dropped and counted" "$why"
}

ipsec_case transport 4
natt_mode crypto transport
ipsec_flush

# Crypto offload, tunnel mode: the inbound state refused with the reason
# and kept in software, the outbound offloaded; the tunnel works.
ipsec_case tunnel 4
out=$(natt_install crypto tunnel)
why="$out; out offloaded: $(ipsec_offloaded "$IPSEC_SPI_OUT" "$O_H" "$O_P" && echo yes || echo no),"
why+=" in offloaded: $(ipsec_offloaded "$IPSEC_SPI_IN" "$O_P" "$O_H" && echo yes || echo no)"
ipsec_offloaded "$IPSEC_SPI_OUT" "$O_H" "$O_P" &&
	! ipsec_offloaded "$IPSEC_SPI_IN" "$O_P" "$O_H" &&
	grep -q "inbound NAT-T in tunnel mode with crypto offload" <<<"$out" &&
	ktap_ok "crypto, tunnel: inbound refused with the reason, outbound offloaded" "$why" ||
	ktap_fail "crypto, tunnel: inbound refused with the reason, outbound offloaded" "$why"
check "crypto, tunnel: ping through the tunnel 5/5 (software decrypts)" ping_ok "$I_P" 5
ipsec_flush
natt_mode packet tunnel

# natt_moved: the block's outbound entry sends from 4501 now.
natt_moved()
{
	sim_read ipsec/table | grep -Eq "^flow out .* espinudp 4501 4500( |$)"
}

# The NAT's mapping moved: the outbound state's source port is 4501 now.
cmds0=$(awk '$1 == "flow_encap" { print $2 }' "$SIM_DBG/ipsec/mbox_cmds")
upd=(ip xfrm state update src "$O_H" dst "$O_P" proto esp
     spi "$IPSEC_SPI_OUT" reqid 1 mode tunnel
     aead 'rfc4106(gcm(aes))' "$IPSEC_K128" 128 encap espinudp 4501 4500 0.0.0.0)
out=$("${upd[@]}" 2>&1) || out+=$("${upd[@]}" dir out 2>&1)
wait_for 5 natt_moved
capture "$WIRE_IF" "$CAP/moved.pcap"
ping_ok "$I_P" 5
rc=$?
cap_stop
cmds1=$(awk '$1 == "flow_encap" { print $2 }' "$SIM_DBG/ipsec/mbox_cmds")
n4501=$(frames "$CAP/moved.pcap" "src host $O_H and udp src port 4501")
n4500=$(frames "$CAP/moved.pcap" "src host $O_H and udp src port 4500")
why="update: ${out:-ok}; flow_encap +$((cmds1 - cmds0)); ping rc $rc;"
why+=" from 4501: $n4501, from 4500: $n4500; table: $(sim_read ipsec/table |
	grep '^flow out' | tr '\n' ';')"
natt_moved && [ "$rc" -eq 0 ] && [ "$n4501" -ge 5 ] && [ "$n4500" -eq 0 ] &&
	ktap_ok "packet: a NAT mapping change moves the block's source port" "$why" ||
	ktap_fail "packet: a NAT mapping change moves the block's source port" "$why"
ipsec_flush

# nat_setup: the far namespace behind the peer, the peer a NAT that
# moves the host's ESP in UDP to port 14500.
nat_setup()
{
	ipsec_nat_far "oifname \"vnat\" ip saddr $HOST_IP4 udp sport 4500 masquerade to :14500" ||
		return 1
	ip netns exec "$FAR_NS" python3 -c "$ENCAP_SOCK" "$CAP/far.log" &
	on_exit kill $!
	wait_for 20 udp_bound 4500 "$FAR_NS"
}

# nat_far: the far end's software pair, the host seen as NAT_PUB:14500.
nat_far()
{
	local a=(proto esp reqid 1 mode tunnel aead 'rfc4106(gcm(aes))'
		 "$IPSEC_K128" 128)

	in_far ip xfrm state add src "$NAT_PUB" dst "$FAR" spi "$IPSEC_SPI_OUT" \
		"${a[@]}" encap espinudp 14500 4500 0.0.0.0 &&
	in_far ip xfrm state add src "$FAR" dst "$NAT_PUB" spi "$IPSEC_SPI_IN" \
		"${a[@]}" encap espinudp 4500 14500 0.0.0.0 &&
	in_far ip xfrm policy add src "$IN4_H/32" dst "$FAR_IN/32" dir in \
		tmpl src "$NAT_PUB" dst "$FAR" proto esp reqid 1 mode tunnel &&
	in_far ip xfrm policy add src "$FAR_IN/32" dst "$IN4_H/32" dir out \
		tmpl src "$FAR" dst "$NAT_PUB" proto esp reqid 1 mode tunnel
}

# nat_mode TYPE: the host's ESP-in-UDP pair to the far end, through the NAT.
nat_mode()
{
	local t=$1 enc=("${ENCAP_IP[@]}") pol=none out n raw r0 r1 far why rc
	local host_in off rxw=5

	O_P=$FAR I_P=$FAR_IN
	if [ "$t" = packet ]; then
		enc=(--encap 4500 4500) pol=packet
		ipsec_tunnel_neigh
	fi
	out=$(ipsec_host_sa in tunnel "$t" "${enc[@]}"
	      ipsec_host_sa out tunnel "$t" "${enc[@]}"
	      ipsec_host_pol out tunnel "$pol"
	      ipsec_host_pol in tunnel "$pol"
	      nat_far 2>&1)
	r0=$(sim_read ipsec/rx_natt)
	capture "$FAR_NS:vfar" "$CAP/nat-$t.pcap"
	ping_ok "$I_P" 5
	rc=$?
	cap_stop
	r1=$(sim_read ipsec/rx_natt)
	far=$(in_far ip -s xfrm state | sa_count "$IPSEC_SPI_OUT" packets)
	host_in=$(host_sa_packets "$IPSEC_SPI_IN" "$FAR" "$HOST_IP4")
	n=$(frames "$CAP/nat-$t.pcap" \
		"src host $NAT_PUB and udp src port 14500 and udp dst port 4500")
	raw=$(frames "$CAP/nat-$t.pcap" "src host $HOST_IP4")
	# Crypto offload's inbound tunnel-mode state stays in software
	# (above): the host decrypts, the block does not.
	off=both
	[ "$t" = crypto ] && off=out rxw=0
	why="${out:+$out; }offloaded: $(ipsec_both_offloaded && echo both ||
		{ ipsec_offloaded "$IPSEC_SPI_OUT" "$O_H" "$O_P" && echo out; })"
	why+="; ping rc $rc; capture $CAP_OK: from $NAT_PUB:14500 $n, from"
	why+=" $HOST_IP4 $raw; far end decrypted ${far:-0}, the host ${host_in:-0};"
	why+=" rx_natt +$((r1 - r0))"
	grep -q "offloaded: $off;" <<<"$why" && [ "$rc" -eq 0 ] &&
		[ "$CAP_OK" = yes ] && [ "$n" -ge 5 ] && [ "$raw" -eq 0 ] &&
		[ "${far:-0}" -ge 5 ] && [ "${host_in:-0}" -ge 5 ] &&
		[ $((r1 - r0)) -ge "$rxw" ] && { [ "$rxw" -gt 0 ] || [ "$r1" = "$r0" ]; } &&
		ktap_ok "$t: through a NAT (masquerade to port 14500)" "$why" ||
		ktap_fail "$t: through a NAT (masquerade to port 14500)" "$why"
	ipsec_flush
	in_far ip xfrm policy flush
	in_far ip xfrm state flush
	ipsec_case tunnel 4
}

if command -v nft >/dev/null; then
	on_exit ip netns del "$FAR_NS"
	on_exit "ip netns pids $FAR_NS | xargs -r kill"
	if check "a NAT behind the peer (nftables masquerade)" nat_setup; then
		nat_mode crypto
		nat_mode packet
	else
		ktap_fail "crypto: through a NAT (masquerade to port 14500)" "no NAT"
		ktap_fail "packet: through a NAT (masquerade to port 14500)" "no NAT"
	fi
else
	for c in "a NAT behind the peer (nftables masquerade)" \
		 "crypto: through a NAT (masquerade to port 14500)" \
		 "packet: through a NAT (masquerade to port 14500)"; do
		ktap_skip "$c" "no nft(8)"
	done
fi

# IPv6: refused with the reason; crypto offload falls back to software.
crypto=$(ip xfrm state add src "$HOST_IP6" dst "$PEER_IP6" proto esp \
	spi 0x3001 reqid 7 mode transport aead 'rfc4106(gcm(aes))' \
	"$IPSEC_K128" 128 encap espinudp 4500 4500 :: \
	offload dev "$HOST_IF" dir out 2>&1)
off=no
ipsec_offloaded 0x3001 "$HOST_IP6" "$PEER_IP6" && off=yes
sw=no
ip xfrm state get src "$HOST_IP6" dst "$PEER_IP6" proto esp spi 0x3001 \
	>/dev/null 2>&1 && sw=yes
packet=$(python3 "$XFRM_NL" state "$HOST_IP6" "$PEER_IP6" 0x3002 7 \
	transport "$IPSEC_K128" 128 --dir out --offload packet \
	--dev "$HOST_IF" --encap 4500 4500 2>&1)
prc=$?
why="crypto: $crypto (added: $sw, offloaded: $off); packet: $packet (exit $prc)"
[ "$sw" = yes ] && [ "$off" = no ] && [ "$prc" -ne 0 ] &&
	grep -q "NAT-T over IPv6" <<<"$crypto" &&
	grep -q "NAT-T over IPv6" <<<"$packet" &&
	ktap_ok "IPv6 NAT-T is refused with the reason" "$why" ||
	ktap_fail "IPv6 NAT-T is refused with the reason" "$why"
ip xfrm state flush

# A block that does not announce NAT-T: refused by name, software takes it.
feat=$(sim_read ipsec/features)
check "the driver probes again with the NAT-T feature bit clear" \
	ipsec_features $((feat & ~0x200))
out=$(ipsec_host_sa out tunnel crypto "${ENCAP_IP[@]}")
off=no
ipsec_offloaded "$IPSEC_SPI_OUT" "$O_H" "$O_P" && off=yes
why="$out (offloaded: $off)"
[ "$off" = no ] && grep -q "does not offer NAT-T (ESP in UDP)" <<<"$out" &&
	ktap_ok "NAT-T on a block without it is refused with the reason" "$why" ||
	ktap_fail "NAT-T on a block without it is refused with the reason" "$why"
ip xfrm state flush
echo "$feat" >"$SIM_DBG/ipsec/features"

kernel_log_clean "no kernel warnings"
ktap_finish
