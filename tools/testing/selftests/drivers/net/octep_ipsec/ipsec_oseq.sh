#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Packet offload: the block numbers the outbound ESP packets, and the
# state must say where its counter is. A key manager that adds the SA
# again with the same key (a migration, an HA takeover) starts it from
# the output sequence the kernel reports; a stale one makes the block
# send sequence numbers, and so GCM IVs, it has already used.
#
# Asserted: after five pings through a packet-offloaded transport pair,
# ip -s xfrm state reports the outbound state's oseq as 5; re-added from
# that value, five more pings leave with sequence numbers 6 to 10, and
# the peer's capture holds ten ESP frames of the host's SPI and no
# sequence number twice.

source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/ipsec_lib.inc"
require_cmd ip ethtool tcpdump

ktap_plan 8

ipsec_prepare
check "modules load" octep_load || ktap_finish
check "device 0" octep_new 0 1 || ktap_finish
check "peer namespace behind the wire" peer_setup || ktap_finish
ip xfrm state flush

ipsec_case transport 4
ipsec_host_sa in transport packet >/dev/null
ipsec_host_sa out transport packet >/dev/null
ipsec_host_pol out transport packet >/dev/null
ipsec_host_pol in transport packet >/dev/null
ipsec_peer transport >/dev/null 2>&1
check "a packet-offloaded transport pair" ipsec_both_offloaded || ktap_finish

# Without GRO on the peer's side: esp4_offload's GRO would decrypt the
# frames before the capture sees them.
in_peer ethtool -K "$WIRE_IF" gro off
CAP=$(mktemp -d)
on_exit rm -rf "$CAP"
in_peer tcpdump -i "$WIRE_IF" -n -U -w "$CAP/esp.pcap" esp 2>"$CAP/err" &
dump=$!
on_exit kill "$dump"
# Capturing once it says so: under load a fixed second missed a frame.
wait_for 10 grep -q "listening on" "$CAP/err"

# oseq: the outbound state's output sequence as ip -s xfrm state shows it.
oseq()
{
	ip -s xfrm state get src "$O_H" dst "$O_P" proto esp \
		spi "$IPSEC_SPI_OUT" 2>/dev/null |
		grep -o '[^-]oseq 0x[0-9a-f]*' | sed 's/.*0x/0x/' | head -n 1
}

oseq_is()
{
	[ "$(($(oseq)))" = "$1" ]
}

ping -q -c 5 -i 0.2 -W 3 "$O_P" >/dev/null 2>&1
# The block's counters come back with its stats, once a second.
if wait_for 10 oseq_is 5; then
	ktap_ok "the block's output sequence is reported: oseq 5 after 5 packets"
else
	ktap_fail "the block's output sequence is reported: oseq 5 after 5 packets" \
		"oseq $(oseq); $(ip -s xfrm state get src "$O_H" dst "$O_P" proto esp spi "$IPSEC_SPI_OUT")"
fi

o=$(($(oseq)))
ip xfrm state delete src "$O_H" dst "$O_P" proto esp spi "$IPSEC_SPI_OUT"
ipsec_host_sa out transport packet --oseq "$o" >/dev/null
ktap_diag "re-added: $(ip -s xfrm state get src "$O_H" dst "$O_P" proto esp spi "$IPSEC_SPI_OUT" | grep -i seq)"
if ipsec_offloaded "$IPSEC_SPI_OUT" "$O_H" "$O_P"; then
	ktap_ok "the outbound state added again from its oseq, offloaded" "oseq $o"
else
	ktap_fail "the outbound state added again from its oseq, offloaded" \
		"oseq $o; $(ip xfrm state)"
fi
ping -q -c 5 -i 0.2 -W 3 "$O_P" >/dev/null 2>&1
sleep 1
kill "$dump"
wait "$dump" 2>/dev/null

seqs=$(tcpdump -r "$CAP/esp.pcap" -n 2>/dev/null |
       sed -n "s/.*$O_H > $O_P: ESP(spi=0x0*${IPSEC_SPI_OUT#0x},seq=\\(0x[0-9a-f]*\\)).*/\\1/p")
n=$(grep -c . <<<"$seqs")
dups=$(sort <<<"$seqs" | uniq -d | tr '\n' ' ')
if [ "$n" = 10 ] && [ -z "$dups" ]; then
	ktap_ok "10 ESP frames on the wire, no sequence number (no IV) twice"
else
	ktap_fail "10 ESP frames on the wire, no sequence number (no IV) twice" \
		"$n frames, sent twice: ${dups:-none}; seqs: $(tr "\n" " " <<<"$seqs"); capture: $(tcpdump -r "$CAP/esp.pcap" -n 2>&1 | head -n 5)"
fi
ipsec_flush
kernel_log_clean "no kernel warnings"
ktap_finish
