#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The counters of offloaded states tell what software ESP would have told
# for the same packets: both directions offloaded (crypto, then packet
# offload) against the peer's software states.
#  - bytes: `ip -s xfrm state` counts the plain text ESP carried, as
#    xfrm_output_one() and xfrm_input() do, so each host state's bytes and
#    packets equal those of the peer's state for the same direction
#    (transport and tunnel mode; crypto offload, counted by the stack, is
#    the control);
#  - replay and ICV drops of the block: the peer's outbound state is
#    added again, once with its sequence numbers started over (replays),
#    once with another key (ICV failures); each dropped packet shows in
#    /proc/net/xfrm_stat (XfrmInStateSeqError, XfrmInStateProtoError), in
#    the state's own stats (replay, failed) and in ethtool -S;
#  - ipsec_tx_packets counts what the block encrypted (a TSO packet is
#    several), equal to the model's own count over a TCP run.

source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/ipsec_lib.inc"
require_cmd ip ethtool devlink python3 iperf3

N=10		# pings per byte case
BAD=5		# packets per drop case
ktap_plan 26

ipsec_prepare
check "modules load" octep_load || ktap_finish
check "device 0" octep_new 0 1 || ktap_finish
check "peer namespace behind the wire" peer_setup || ktap_finish

# host_sa_count SPI SRC DST WHAT: bytes|packets ip -s shows for a host state.
host_sa_count()
{
	ip -s xfrm state get src "$2" dst "$3" proto esp spi "$1" 2>/dev/null |
		lft_count "$4"
}

# host_sa_stat SPI SRC DST WHAT: the state's replay or failed (WHAT) count.
host_sa_stat()
{
	ip -s xfrm state get src "$2" dst "$3" proto esp spi "$1" 2>/dev/null |
		awk -v w="$4" '/replay-window/ {
			for (i = 1; i < NF; i++) if ($i == w) { print $(i + 1); exit }
		}'
}

# install TYPE MODE: both host states offloaded as TYPE, replay window 32,
# the policies, the peer's software mirror.
install()
{
	local type=$1 mode=$2 dir

	ipsec_flush
	[ "$type" = packet ] && [ "$mode" = tunnel ] && ipsec_tunnel_neigh
	for dir in in out; do
		if [ "$type" = packet ]; then
			ipsec_host_sa "$dir" "$mode" packet --replay 32 >/dev/null
		else
			ipsec_host_sa "$dir" "$mode" crypto replay-window 32 >/dev/null
		fi
	done
	ipsec_host_pol out "$mode" "$type" >/dev/null
	ipsec_host_pol in "$mode" "$type" >/dev/null
	ipsec_peer "$mode" >/dev/null 2>&1
	ipsec_both_offloaded
}

# sample: the bytes and packets of the host's and the peer's states, both
# directions, into C (host out, peer's state for host -> peer, host in,
# the peer's other state; bytes then packets) and AGREE (readable).
sample()
{
	C=("$(host_sa_count "$IPSEC_SPI_OUT" "$O_H" "$O_P" bytes)"
	   "$(peer_sa_count "$IPSEC_SPI_OUT" bytes)"
	   "$(host_sa_count "$IPSEC_SPI_IN" "$O_P" "$O_H" bytes)"
	   "$(peer_sa_count "$IPSEC_SPI_IN" bytes)"
	   "$(host_sa_count "$IPSEC_SPI_OUT" "$O_H" "$O_P" packets)"
	   "$(peer_sa_packets "$IPSEC_SPI_OUT")"
	   "$(host_sa_count "$IPSEC_SPI_IN" "$O_P" "$O_H" packets)"
	   "$(peer_sa_packets "$IPSEC_SPI_IN")")
	AGREE="out: host ${C[0]} B ${C[4]} pkts, peer ${C[1]} B ${C[5]} pkts; in: host ${C[2]} B ${C[6]} pkts, peer ${C[3]} B ${C[7]} pkts"
}

# same_dir I: host and peer agree in direction I (0 out, 2 in), with at
# least N packets.
same_dir()
{
	local i=$1

	[ -n "${C[i]}" ] && [ "${C[i]}" = "${C[i + 1]}" ] &&
	[ -n "${C[i + 4]}" ] && [ "${C[i + 4]}" = "${C[i + 5]}" ] &&
	[ "${C[i + 4]}" -ge "$N" ]
}

# counts_agree: both directions agree.
counts_agree()
{
	sample
	same_dir 0 && same_dir 2
}

# peer_readd SPI_OSEQ KEY: the peer's outbound state (peer -> host) added
# again with output sequence numbers from SPI_OSEQ and key KEY.
peer_readd()
{
	in_peer ip xfrm state delete src "$O_P" dst "$O_H" proto esp \
		spi "$IPSEC_SPI_IN"
	in_peer ip xfrm state add src "$O_P" dst "$O_H" proto esp \
		spi "$IPSEC_SPI_IN" reqid 1 mode transport \
		aead 'rfc4106(gcm(aes))' "$2" 128 replay-oseq "$1"
}

# drop_case TYPE WHAT MIB STATFIELD ETHSTAT OSEQ KEY: BAD packets the block
# drops as WHAT, each counted in MIB, the state's STATFIELD and ETHSTAT.
drop_case()
{
	local type=$1 what=$2 mib=$3 field=$4 eth=$5 m0 s0 e0 m s e

	m0=$(xfrm_stat "$mib")
	s0=$(host_sa_stat "$IPSEC_SPI_IN" "$O_P" "$O_H" "$field")
	e0=$(stat "$HOST_IF" "$eth")
	peer_readd "$6" "$7"
	ping -q -c "$BAD" -i 0.2 -W 1 "$O_P" >/dev/null 2>&1
	m=$(($(xfrm_stat "$mib") - m0))
	s=$(($(host_sa_stat "$IPSEC_SPI_IN" "$O_P" "$O_H" "$field") - s0))
	e=$(($(stat "$HOST_IF" "$eth") - e0))
	for c in "$mib $m" "state:$field $s" "$eth $e"; do
		read -r name d <<<"$c"
		if [ "$d" = "$BAD" ]; then
			ktap_ok "$type: $BAD $what drops counted in $name"
		else
			ktap_fail "$type: $BAD $what drops counted in $name" \
				"$name moved by $d ($mib $m, state $field $s, $eth $e)"
		fi
	done
}

for type in crypto packet; do
	for mode in transport tunnel; do
		ipsec_case "$mode" 4
		name="$type $mode"
		if ! install "$type" "$mode"; then
			ktap_fail "$name: bytes and packets out as the peer's in" \
				"not offloaded: $(ip xfrm state)"
			ktap_fail "$name: bytes and packets in as the peer's out"
			continue
		fi
		ping -q -c "$N" -s 100 -i 0.1 -W 3 "$I_P" >/dev/null 2>&1
		# Packet offload's counts come from the block every second.
		wait_for 10 counts_agree
		sample
		for d in "0 out as the peer's in" "2 in as the peer's out"; do
			read -r i what <<<"$d"
			if same_dir "$i"; then
				ktap_ok "$name: bytes and packets $what" "$AGREE"
			else
				ktap_fail "$name: bytes and packets $what" "$AGREE"
			fi
		done
	done

	ipsec_case transport 4
	install "$type" transport
	ping_ok "$O_P" 5 || ktap_diag "$type: pings before the drop cases failed"
	# Sequence numbers from 1 again: each was seen, within the window.
	drop_case "$type" replay XfrmInStateSeqError replay ipsec_rx_replay \
		0 "${IPSEC_KEY:-$IPSEC_K128}"
	# Fresh sequence numbers, another key: each fails its ICV.
	drop_case "$type" ICV XfrmInStateProtoError failed ipsec_rx_bad_icv \
		1000 0xfedcba9876543210fedcba9876543210fedcba98

	# TCP through the tunnel: the block's encryptions and ours agree.
	install "$type" transport
	sim0=$(sim_read ipsec/tx_encrypt) enc0=$(sim_read ipsec/tx_encap)
	st0=$(stat "$HOST_IF" ipsec_tx_packets)
	read -r rate bytes <<<"$(ipsec_iperf up "$O_P" 2 1)"
	sim=$(($(sim_read ipsec/tx_encrypt) - sim0 + $(sim_read ipsec/tx_encap) - enc0))
	st=$(($(stat "$HOST_IF" ipsec_tx_packets) - st0))
	# Nonzero: a state that fell back to software counts 0 on both sides.
	if [ "$bytes" -gt 0 ] && [ "$st" -gt 0 ] && [ "$sim" = "$st" ]; then
		ktap_ok "$type: ipsec_tx_packets equals the block's count over TCP" \
			"ipsec_tx_packets +$st, $rate Mbit/s"
	else
		ktap_fail "$type: ipsec_tx_packets equals the block's count over TCP" \
			"ipsec_tx_packets +$st, the block +$sim, iperf3 $rate Mbit/s $bytes bytes"
	fi
done
ipsec_flush
kernel_log_clean "no kernel warnings"
ktap_finish
