#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# strongSwan negotiating NAT traversal by itself, as a branch office
# behind a NAT does: the host's charon initiates to a far end behind the
# peer namespace, which masquerades the host's IKE (port 500 to 10500,
# 4500 to 14500: a NAT that moves ports, as most do). IKE's NAT
# detection finds the host behind the NAT, the pair moves to UDP 4500 and
# its states carry "encap espinudp". First in software (hw_offload = no:
# the same cases, nothing offloaded, the block counting nothing), then
# for each offload the child asks for (hw_offload = auto: strongSwan 5.x
# asks for crypto offload, and only the outbound state is offloaded, see
# ipsec_natt.sh, 6.x for packet offload; = packet, strongSwan 6 only),
# asserted:
#  - the host's charon found itself behind a NAT (its log);
#  - the tunnel is up with both states offloaded and ESP in UDP
#    (sport 4500, dport 4500: the far end's port; the far end's states
#    know the host as the NAT's 14500), and for packet offload the in/out
#    policies in the block too;
#  - ping 5/5 from the host's network to the far end's, the block
#    carried it both ways, the block added and stripped the UDP headers
#    (the model's tx_natt and rx_natt), and the NAT forwarded the host's
#    datagrams (a counter in its forward chain);
#  - terminating the child leaves no state on the host, in the block.
# The far end is software ESP; crypto offload also runs with
# strongSwan 5.9 (Debian 12), packet offload is skipped there.

source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/ipsec_lib.inc"
source "$(dirname "$0")/strongswan_lib.inc"
require_cmd ip ethtool nft python3 swanctl
[ -x "$CHARON" ] || ktap_skip_all "no $CHARON"
ssver=$("$CHARON" --version 2>&1 | sed -n 's/.*strongSwan \([0-9][0-9.]*\).*/\1/p' | head -n 1)
ss6=0
[ "${ssver%%.*}" -ge 6 ] 2>/dev/null && ss6=1

ktap_plan $((23 + ss6))

ipsec_start
ipsec_case tunnel 4
on_exit ip netns del "$FAR_NS"
on_exit "ip netns pids $FAR_NS | xargs -r kill"
# shellcheck disable=SC2034 # read by strongswan_lib.inc's ss_start
SS_PEER_NS=$FAR_NS
NAT_RULES="oifname \"vnat\" ip saddr $HOST_IP4 udp sport 500 counter masquerade to :10500
oifname \"vnat\" ip saddr $HOST_IP4 udp sport 4500 counter masquerade to :14500"
check "a NAT behind the peer (nftables masquerade, ports moved)" \
	ipsec_nat_far "$NAT_RULES" || ktap_finish
I_P=$FAR_IN

# ss_natt OFFLOAD: both ends' configuration, the host's child asking for
# OFFLOAD; the far end answers whoever comes (the NAT's address).
ss_natt()
{
	ss_conf host "$HOST_IP4" "$FAR" "$1" 32 tunnel "$IN4_H/32" "$FAR_IN/32"
	ss_conf peer "$FAR" "%any" no 1024 tunnel "$FAR_IN/32" "$IN4_H/32"
	[ -S "$SS/host/charon.vici" ] || return 0
	sw_host --load-all --file "$SS/host/swanctl.conf" >/dev/null 2>&1 &&
		sw_peer --load-all --file "$SS/peer/swanctl.conf" >/dev/null 2>&1
}

# The host's ESP in UDP the NAT forwards: its nat rule sees only each
# flow's first packet, a filter rule in forward sees them all.
in_peer nft -f - <<EOF
table ip natt_fwd {
	chain counted {
		type filter hook forward priority filter; policy accept;
		ip saddr $HOST_IP4 udp sport 4500 counter
	}
}
EOF

# nat_count: the host's datagrams from 4500 that the NAT forwarded.
nat_count()
{
	in_peer nft list table ip natt_fwd | awk '/sport 4500/ {
		for (i = 1; i < NF; i++) if ($i == "packets") print $(i + 1) }'
}

# moved WANT DELTA: DELTA is 0 when WANT is 0, at least WANT otherwise.
moved()
{
	if [ "$1" = 0 ]; then [ "$2" = 0 ]; else [ "$2" -ge "$1" ]; fi
}

# natt_child T OFFLOAD: the cases of one child (five where the block
# decrypts nothing, six where it does), T software (OFFLOAD no: what the
# offload must match), auto (strongSwan 5.x: crypto offload, the
# outbound state offloaded, the inbound one refused and kept in software,
# see ipsec_natt.sh; 6.x: packet offload) or packet.
natt_child()
{
	local t=$1 s p e f out t0 r0 n0 t1 r1 n1 x0 x1 why want=2 tx=5 rx=5
	local lab="both ways"

	ss_natt "$2"
	out=$(timeout 60 swanctl --initiate --child net \
		--uri "unix://$SS/host/charon.vici" 2>&1)
	s=$(ip xfrm state | grep -c "offload parameters")
	p=$(ip xfrm policy | grep -c "offload parameters")
	e=$(ip xfrm state | grep -c "encap type espinudp sport 4500 dport 4500")
	f=$(in_far ip xfrm state | grep -c "encap type espinudp .*port 14500 ")
	why="$s states and $p policies offloaded, $e in UDP 4500, far end's to 14500: $f"
	grep -q "local host is behind NAT" "$SS/host/charon.log" &&
		ktap_ok "$t: charon found the host behind the NAT" ||
		ktap_fail "$t: charon found the host behind the NAT" \
			"$(tail -5 <<<"$out")"
	[ "$t" = software ] && want=0 tx=0 rx=0 lab=none
	# strongSwan 6's auto asks for packet offload first, 5.x's for crypto.
	if [ "$t" = auto ] && [ "$ss6" = 0 ]; then
		want=1 rx=0 lab="outbound only"
	fi
	if [ "$s" = "$want" ] && [ "$e" = 2 ] && [ "$f" = 2 ] &&
	   { [ "$rx" = 0 ] || [ "$p" -ge 2 ]; }; then
		ktap_ok "$t: up, ESP in UDP, $want states offloaded" "$why"
	else
		ktap_fail "$t: up, ESP in UDP, $want states offloaded" "$why
$(tail -5 <<<"$out")
$(ip xfrm state; in_far ip xfrm state)"
	fi
	ipsec_tunnel_neigh
	t0=$(sim_read ipsec/tx_natt) r0=$(sim_read ipsec/rx_natt) n0=$(nat_count)
	x0=$(stat "$HOST_IF" ipsec_tx_packets)
	if [ "$rx" -gt 0 ]; then
		ss_carried "$I_P" "$t"
	else
		ss_ping "$I_P" "$t"
	fi
	t1=$(sim_read ipsec/tx_natt) r1=$(sim_read ipsec/rx_natt) n1=$(nat_count)
	x1=$(stat "$HOST_IF" ipsec_tx_packets)
	why="tx_natt +$((t1 - t0)), rx_natt +$((r1 - r0)), NAT +$((${n1:-0} - ${n0:-0}))"
	why+=", ipsec_tx_packets +$((x1 - x0))"
	# At least 5 where the block carries a direction, none where not.
	if moved "$tx" $((t1 - t0)) && moved "$tx" $((x1 - x0)) &&
	   moved "$rx" $((r1 - r0)) && [ $((${n1:-0} - ${n0:-0})) -ge 5 ]; then
		ktap_ok "$t: the NAT forwarded it; ESP in UDP in the block: $lab" "$why"
	else
		ktap_fail "$t: the NAT forwarded it; ESP in UDP in the block: $lab" "$why"
	fi
	sw_host --terminate --ike gw >/dev/null 2>&1
	if wait_for 20 sh -c '[ -z "$(ip xfrm state)" ]' &&
	   wait_for 10 grep -qx "in 0 out 0" "$SIM_DBG/ipsec/flows"; then
		ktap_ok "$t: terminated, no state left on the host or in the block"
	else
		ktap_fail "$t: terminated, no state left on the host or in the block" \
			"$(ip xfrm state; cat "$SIM_DBG/ipsec/flows")"
	fi
	: >"$SS/host/charon.log"
}

ss_natt no
ss_start
natt_child software no
natt_child auto auto
if [ "$ss6" = 1 ]; then
	natt_child packet packet
else
	for c in "charon found the host behind the NAT" \
		 "up, ESP in UDP, 2 states offloaded" \
		 "ping 5/5 through it" "the block carried it" \
		 "the NAT forwarded it; ESP in UDP in the block: both ways" \
		 "terminated, no state left on the host or in the block"; do
		ktap_skip "packet: $c" "strongSwan ${ssver:-?}: no hw_offload = packet"
	done
fi
kernel_log_clean "no kernel warnings"
ktap_finish
