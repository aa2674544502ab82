#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Byte and packet lifetimes of packet-offload states: the stack never sees
# their packets, so the block counts and the driver checks the limits
# every stats period (1 s). Against a software peer, transport mode, IPv4:
#  - outbound, packet limits soft 10 / hard 20: no expire below the soft
#    limit; the soft expire (`ip xfrm monitor expire`, hard 0) once 10
#    packets are sent; the hard expire (hard 1) once 20 are, after which
#    the state is gone from the host and from the block's table;
#  - outbound, a hard limit of 5 and ten pings inside one stats period:
#    the block itself sends five and drops the rest (tx_expired); inbound
#    the same, the host answering the five the block took;
#  - inbound, byte limits soft 1000 / hard 2000 (108 bytes of plain text a
#    ping): the same, counted on what the block decrypted.

source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/ipsec_lib.inc"
require_cmd ip ethtool devlink python3

ktap_plan 20

ipsec_prepare
check "modules load" octep_load || ktap_finish
check "device 0" octep_new 0 1 || ktap_finish
check "peer namespace behind the wire" peer_setup || ktap_finish
ipsec_case transport 4

MON=$(mktemp)
ip xfrm monitor expire >"$MON" 2>&1 &
MON_PID=$!
on_exit kill "$MON_PID"
on_exit rm -f "$MON"

# expired SPI HARD: the monitor has printed an expire of SPI with HARD (0|1).
expired()
{
	awk -v spi="$(printf 'spi 0x%08x' "$1")" -v hard="hard $2" '
		/^Expired/ { mine = 0 }
		index($0, spi) { mine = 1 }
		mine && index($0, hard) { found = 1 }
		END { exit !found }' "$MON"
}

# pings N: N pings of 100 bytes to the peer, 0.1 s apart (answers not needed).
pings()
{
	ping -q -c "$1" -s 100 -i 0.1 -W 2 "$O_P" >/dev/null 2>&1
}

# counted SPI SRC DST N: host state SPI shows at least N packets (ip -s
# reads the block's counts as the driver's stats work last stored them).
counted()
{
	local n

	n=$(ip -s xfrm state get src "$2" dst "$3" proto esp spi "$1" 2>/dev/null |
	    sed -n 's/.*(bytes), \([0-9]*\)(packets).*/\1/p' | head -n 1)
	[ "${n:-0}" -ge "$4" ]
}

# mbox_past N: the model has answered more than N mailbox requests.
mbox_past()
{
	[ "$(sim_read ipsec/mbox_requests)" -gt "$1" ]
}

# lifetime_case NAME SPI SRC DST FLOWDIR BELOW SOFT HARD: pings in three
# steps (BELOW, to SOFT, to HARD, each a count of host state SPI's
# packets) and the expires each must (not) bring.
lifetime_case()
{
	local name=$1 spi=$2 src=$3 dst=$4 dir=$5 below=$6 soft=$7 hard=$8 r

	pings "$below"
	# "No expire" is judged once the driver has checked the limits
	# against the BELOW packets: its stats work stores a state's counts,
	# checks that state's limits, then asks the block for the next
	# states'. Once the counts show, three more requests (one a period
	# with FLOW_STATS_MANY, two without) reach into the next period.
	if wait_for 10 counted "$spi" "$src" "$dst" "$below" &&
	   r=$(sim_read ipsec/mbox_requests) &&
	   wait_for 10 mbox_past $((r + 2)); then
		if ! expired "$spi" 0 && ! expired "$spi" 1; then
			ktap_ok "$name: no expire below the soft limit"
		else
			ktap_fail "$name: no expire below the soft limit" "$(cat "$MON")"
		fi
	else
		ktap_fail "$name: no expire below the soft limit" \
			"the limits were not checked against $below packets: $(
			ip -s xfrm state get src "$src" dst "$dst" proto esp spi "$spi"
			echo "mbox_requests $(sim_read ipsec/mbox_requests)")"
	fi
	pings $((soft - below))
	if wait_for 5 expired "$spi" 0 && ! expired "$spi" 1; then
		ktap_ok "$name: soft expire at the soft limit"
	else
		ktap_fail "$name: soft expire at the soft limit" \
			"$(cat "$MON"; ip -s xfrm state get src "$src" dst "$dst" proto esp spi "$spi")"
	fi
	ipsec_offloaded "$spi" "$src" "$dst" &&
		ktap_ok "$name: the state stays offloaded after the soft expire" ||
		ktap_fail "$name: the state stays offloaded after the soft expire" \
			"$(ip xfrm state)"
	pings $((hard - soft))
	if wait_for 5 expired "$spi" 1; then
		ktap_ok "$name: hard expire at the hard limit"
	else
		ktap_fail "$name: hard expire at the hard limit" \
			"$(cat "$MON"; ip -s xfrm state get src "$src" dst "$dst" proto esp spi "$spi")"
	fi
	if wait_for 5 sh -c "! ip xfrm state get src $src dst $dst proto esp spi $spi >/dev/null 2>&1" &&
	   wait_for 5 grep -q "$dir 0" "$SIM_DBG/ipsec/flows"; then
		ktap_ok "$name: the expired state is gone from the host and the block"
	else
		ktap_fail "$name: the expired state is gone from the host and the block" \
			"$(ip xfrm state; sim_read ipsec/flows)"
	fi
}

# install_limited DIR DESC SPI SRC DST LIMITS...: packet-offload states
# both ways, the DIR one (SPI from SRC to DST) with LIMITS (xfrm_nl.py
# options), policies and the peer; checks that the limited one is
# offloaded.
install_limited()
{
	local dir=$1 desc=$2 spi=$3 src=$4 dst=$5 other=in out

	shift 5
	[ "$dir" = in ] && other=out
	ipsec_flush
	out=$(ipsec_host_sa "$dir" transport packet "$@" 2>&1)
	ipsec_host_sa "$other" transport packet >/dev/null
	ipsec_host_pol out transport packet >/dev/null
	ipsec_host_pol in transport packet >/dev/null
	ipsec_peer transport >/dev/null 2>&1
	if ipsec_offloaded "$spi" "$src" "$dst"; then
		ktap_ok "$desc offloaded"
	else
		ktap_fail "$desc offloaded" "$out"
	fi
}

# Outbound: packet limits.
install_limited out "outbound state with packet limits" \
	"$IPSEC_SPI_OUT" "$O_H" "$O_P" --soft-packets 10 --hard-packets 20
lifetime_case "out, packets 10/20" "$IPSEC_SPI_OUT" "$O_H" "$O_P" out 5 10 20

# The block itself stops at the hard limit: ten pings in well under a
# stats period, a hard limit of 5, no soft one: the peer decrypts five,
# the block drops the rest (tx_expired) until the stack deletes the state.
peer_packets()
{
	in_peer ip -s xfrm state get src "$O_H" dst "$O_P" proto esp \
		spi "$IPSEC_SPI_OUT" 2>/dev/null |
		sed -n 's/.*(bytes), \([0-9]*\)(packets).*/\1/p' | head -n 1
}
install_limited out "outbound state with a hard limit of 5 packets" \
	"$IPSEC_SPI_OUT" "$O_H" "$O_P" --hard-packets 5
e0=$(sim_read ipsec/tx_expired)
ping -q -c 10 -i 0.02 -W 1 "$O_P" >/dev/null 2>&1
got=$(peer_packets) exp=$(($(sim_read ipsec/tx_expired) - e0))
if [ "$got" = 5 ] && [ "$exp" -ge 1 ]; then
	ktap_ok "out, hard 5: the block sends 5 and drops the rest" "tx_expired +$exp"
else
	ktap_fail "out, hard 5: the block sends 5 and drops the rest" \
		"the peer decrypted ${got:-?}, tx_expired +$exp"
fi

# Inbound: byte limits, 108 bytes a ping (ICMP header and 100 bytes).
install_limited in "inbound state with byte limits" \
	"$IPSEC_SPI_IN" "$O_P" "$O_H" --soft-bytes 1000 --hard-bytes 2000
lifetime_case "in, bytes 1000/2000" "$IPSEC_SPI_IN" "$O_P" "$O_H" in 5 10 19

# Inbound, the same (last: the stack's expire of it names the SPI the
# byte case looks for): a hard limit of 5, ten pings from the peer. The host
# answers the five the block decrypted; it drops the rest before their
# decryption (ipsec_rx_expired, XfrmInStateExpired) until the stack deletes
# the state (then XfrmInNoStates: ESP with no state).
install_limited in "inbound state with a hard limit of 5 packets" \
	"$IPSEC_SPI_IN" "$O_P" "$O_H" --hard-packets 5
e0=$(stat "$HOST_IF" ipsec_rx_expired) m0=$(xfrm_stat XfrmInStateExpired)
got=$(in_peer ping -q -c 10 -i 0.02 -W 1 "$O_H" 2>&1 |
      sed -n 's/.* \([0-9]*\) received.*/\1/p')
exp=$(($(stat "$HOST_IF" ipsec_rx_expired) - e0))
mib=$(($(xfrm_stat XfrmInStateExpired) - m0))
if [ "$got" = 5 ] && [ "$exp" -ge 1 ] && [ "$mib" = "$exp" ]; then
	ktap_ok "in, hard 5: the block takes 5 and drops the rest" "ipsec_rx_expired +$exp"
else
	ktap_fail "in, hard 5: the block takes 5 and drops the rest" \
		"the host answered ${got:-?}, ipsec_rx_expired +$exp, XfrmInStateExpired +$mib"
fi

ipsec_flush
kernel_log_clean "no kernel warnings"
ktap_finish
