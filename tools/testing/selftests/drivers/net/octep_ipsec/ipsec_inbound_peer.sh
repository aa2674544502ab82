#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# What arrives decrypted came from the peer allowed to send it. Two
# tunnel peers share reqid 1, as `ip xfrm` setups often do: A
# (192.0.2.2) for 10.2.0.0/24 and B (192.0.2.3) for 10.3.0.0/24, each
# with its own inbound SA and policy on the host. The peer namespace plays
# A, and A sends pings both from its own network and from B's, all under
# A's SA. Linux's software ESP drops the second kind (the policy for B's
# network names B's outer address: XfrmInTmplMismatch); packet offload
# must too, where the stack trusts the block's check alone.
#
# The same traffic runs twice, the host's states and policies in software
# and then in packet offload, and each case asserts both give the same
# verdict: A's own source delivered (the host's IcmpInEchos), B's source
# dropped and counted (XfrmInTmplMismatch; with offload also
# ipsec_rx_tmpl_mismatch and the model's rx_pol_mismatch).

# shellcheck disable=SC2317 # functions called through check and wait_for
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/ipsec_lib.inc"
require_cmd ip ethtool python3

A=$PEER_IP4
B=192.0.2.3
H=$HOST_IP4
SPI_A=0x2001
SPI_B=0x3001
N=5

ktap_plan 10

ipsec_start

ip addr add 10.1.0.1/24 dev lo
on_exit ip addr del 10.1.0.1/24 dev lo
in_peer ip addr add 10.2.0.9/32 dev lo
in_peer ip addr add 10.3.0.9/32 dev lo
in_peer ip route add 10.1.0.0/24 via "$H" dev "$WIRE_IF"

# A's side: both sources through A's one SA.
in_peer ip xfrm state add src "$A" dst "$H" proto esp spi "$SPI_A" reqid 1 \
	mode tunnel aead 'rfc4106(gcm(aes))' "$IPSEC_K128" 128
for net in 10.2.0.0/24 10.3.0.0/24; do
	in_peer ip xfrm policy add src "$net" dst 10.1.0.0/24 dir out \
		tmpl src "$A" dst "$H" proto esp reqid 1 mode tunnel
done

# host_side TYPE: the host's inbound SAs (A's and B's) and policies, in
# software (none) or packet offload.
host_side()
{
	local type=$1 p=() out
	local -A peer=([10.2.0.0/24]=$A [10.3.0.0/24]=$B)
	local -A spi=([10.2.0.0/24]=$SPI_A [10.3.0.0/24]=$SPI_B)

	for net in 10.2.0.0/24 10.3.0.0/24; do
		if [ "$type" = packet ]; then
			out=$(python3 "$XFRM_NL" state "${peer[$net]}" "$H" \
				"${spi[$net]}" 1 tunnel "$IPSEC_K128" 128 \
				--dir in --offload packet --dev "$HOST_IF" 2>&1) &&
			out=$(python3 "$XFRM_NL" policy in "$net" 10.1.0.0/24 \
				"${peer[$net]}" "$H" 1 tunnel --offload packet \
				--dev "$HOST_IF" 2>&1) || { echo "$out"; return 1; }
		else
			ip xfrm state add src "${peer[$net]}" dst "$H" proto esp \
				spi "${spi[$net]}" reqid 1 mode tunnel \
				aead 'rfc4106(gcm(aes))' "$IPSEC_K128" 128 &&
			ip xfrm policy add src "$net" dst 10.1.0.0/24 dir in \
				tmpl src "${peer[$net]}" dst "$H" proto esp \
				reqid 1 mode tunnel || return 1
		fi
	done
	if [ "$type" = packet ]; then
		ipsec_offloaded "$SPI_A" "$A" "$H" &&
		ipsec_offloaded "$SPI_B" "$B" "$H" || return 1
	fi
	p=(ip xfrm policy list dir in)
	[ "$("${p[@]}" | grep -c "^src 10\.")" = 2 ]
}

echos()
{
	awk '$1 == "Icmp:" && !h { for (i = 2; i <= NF; i++) n[i] = $i; h = 1; next }
	     $1 == "Icmp:" { for (i = 2; i <= NF; i++) if (n[i] == "InEchos") print $i }' \
		/proc/net/snmp
}

# from SRC: N pings from SRC in the peer to the host's 10.1.0.1; prints
# "echos mismatch tmpl sim" as they moved (tmpl and sim: offload only).
from()
{
	local e0 m0 t0=0 s0=0 t s

	e0=$(echos) m0=$(xfrm_stat XfrmInTmplMismatch)
	if [ "$TYPE" = packet ]; then
		t0=$(stat "$HOST_IF" ipsec_rx_tmpl_mismatch)
		s0=$(sim_read ipsec/rx_pol_mismatch)
	fi
	in_peer ping -q -c "$N" -i 0.2 -W 1 -I "$1" 10.1.0.1 >/dev/null 2>&1
	sleep 1
	t=0 s=0
	if [ "$TYPE" = packet ]; then
		t=$(($(stat "$HOST_IF" ipsec_rx_tmpl_mismatch) - t0))
		s=$(($(sim_read ipsec/rx_pol_mismatch) - s0))
	fi
	echo "$(($(echos) - e0)) $(($(xfrm_stat XfrmInTmplMismatch) - m0)) $t $s"
}

declare -A GOT
for TYPE in none packet; do
	if out=$(host_side "$TYPE" 2>&1); then
		ktap_ok "host in $TYPE: A's and B's inbound SAs and policies, both reqid 1"
	else
		ktap_fail "host in $TYPE: A's and B's inbound SAs and policies, both reqid 1" \
			"$out; $(ip xfrm state; ip xfrm policy)"
		continue
	fi
	GOT[$TYPE:own]=$(from 10.2.0.9)
	GOT[$TYPE:spoof]=$(from 10.3.0.9)
	ip xfrm policy flush
	ip xfrm state flush
	wait_for 10 grep -qx "in 0 out 0" "$SIM_DBG/ipsec/flows"
done

# "echos mismatch tmpl sim" per type and source.
read -r so sm _ _ <<<"${GOT[none:own]:-x x x x}"
read -r po pm _ _ <<<"${GOT[packet:own]:-x x x x}"
why="software: $so delivered, $sm mismatch; offload: $po delivered, $pm mismatch"
if [ "$so" = "$N" ] && [ "$po" = "$N" ] && [ "$sm" = 0 ] && [ "$pm" = 0 ]; then
	ktap_ok "A's own network: delivered in software and in offload alike" "$why"
else
	ktap_fail "A's own network: delivered in software and in offload alike" "$why"
fi
read -r se sm _ _ <<<"${GOT[none:spoof]:-x x x x}"
if [ "$se" = 0 ] && [ "$sm" = "$N" ]; then
	ktap_ok "software ESP drops B's source under A's SA" "$se delivered, XfrmInTmplMismatch +$sm"
else
	ktap_fail "software ESP drops B's source under A's SA" \
		"$se delivered, XfrmInTmplMismatch +$sm"
fi
read -r pe pm pt ps <<<"${GOT[packet:spoof]:-x x x x}"
why="$pe delivered; XfrmInTmplMismatch +$pm, ipsec_rx_tmpl_mismatch +$pt, sim rx_pol_mismatch +$ps"
if [ "$pe" = 0 ] && [ "$pm" = "$N" ] && [ "$pt" = "$N" ] && [ "$ps" = "$N" ]; then
	ktap_ok "packet offload drops B's source under A's SA, as software does" "$why"
else
	ktap_fail "packet offload drops B's source under A's SA, as software does" \
		"$why"
fi
ipsec_flush
kernel_log_clean "no kernel warnings"
ktap_finish
