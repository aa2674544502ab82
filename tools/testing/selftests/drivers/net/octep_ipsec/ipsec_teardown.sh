#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Offloaded states go away cleanly under traffic: a flush (crypto offload)
# and a deleteall (packet offload) while an iperf3 stream runs leave the
# block's table empty and the kernel quiet; removing the driver with states
# installed and traffic flowing leaves no offloaded state, no policy
# bound to the device and no entry in the block behind.

source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/ipsec_lib.inc"
require_cmd ip ethtool devlink iperf3 python3

ktap_plan 13

ipsec_prepare
check "modules load" octep_load || ktap_finish
check "device 0 with 2 rings" octep_new 0 2 || ktap_finish
check "peer namespace behind the wire" peer_setup || ktap_finish

# under_traffic CMD...: run CMD 2 s into a 6 s stream host -> peer.
under_traffic()
{
	in_peer iperf3 -s -D -1 --logfile /dev/null
	wait_for 10 in_peer sh -c "ss -ltn | grep -q ':5201 '"
	# Once the states are gone the stream cannot finish: bound it.
	timeout 15 iperf3 -c "$I_P" -t 6 --connect-timeout 10000 \
		>/dev/null 2>&1 &
	sleep 2
	"$@"
	wait
	in_peer pkill -x iperf3 2>/dev/null
}

table_empty()
{
	wait_for 10 grep -q "in 0 out 0" "$SIM_DBG/ipsec/flows"
}

for type in crypto packet; do
	ipsec_flush
	ipsec_case transport 4
	ipsec_host_sa out transport "$type" >/dev/null
	ipsec_host_sa in transport "$type" >/dev/null
	ipsec_host_pol out transport "$type" >/dev/null
	ipsec_host_pol in transport "$type" >/dev/null
	ipsec_peer transport
	check "$type: ping 5/5" ping_ok "$PEER_IP4" 5
	if [ "$type" = crypto ]; then
		under_traffic ip xfrm state flush
	else
		under_traffic ip xfrm state deleteall
	fi
	if table_empty && [ "$(stat "$HOST_IF" ipsec_states)" = 0 ]; then
		ktap_ok "$type: deleted under traffic, the block's table is empty"
	else
		ktap_fail "$type: deleted under traffic, the block's table is empty" \
			"$(sim_read ipsec/flows), ipsec_states $(stat "$HOST_IF" ipsec_states)"
	fi
done

# Removal with states installed: crypto over IPv4, packet over IPv6.
ipsec_flush
ipsec_case transport 4
ipsec_host_sa out transport crypto >/dev/null
ipsec_host_sa in transport crypto >/dev/null
ipsec_host_pol out transport none >/dev/null
ipsec_host_pol in transport none >/dev/null
ipsec_peer transport
ipsec_case transport 6
IPSEC_SPI_OUT=0x1101 IPSEC_SPI_IN=0x2101 ipsec_host_sa out transport packet >/dev/null
IPSEC_SPI_OUT=0x1101 IPSEC_SPI_IN=0x2101 ipsec_host_sa in transport packet >/dev/null
ipsec_host_pol out transport packet >/dev/null
ipsec_host_pol in transport packet >/dev/null
IPSEC_SPI_OUT=0x1101 IPSEC_SPI_IN=0x2101 ipsec_peer transport
check "IPv6 packet offload: ping 5/5" ping_ok "$PEER_IP6" 5
[ "$(stat "$HOST_IF" ipsec_states)" = 4 ] && ktap_ok "four states offloaded" ||
	ktap_fail "four states offloaded" "ipsec_states $(stat "$HOST_IF" ipsec_states)"
ping -q -c 200 -i 0.01 "$PEER_IP4" >/dev/null 2>&1 &
ping -q -c 200 -i 0.01 "$PEER_IP6" >/dev/null 2>&1 &
sleep 1
check "rmmod octep_ipsec with states installed, under traffic" rmmod octep_ipsec
wait
if ! ip xfrm state | grep -q "offload parameters" &&
   ! ip xfrm policy | grep -q "offload parameters"; then
	ktap_ok "no offloaded state or policy is left"
else
	ktap_fail "no offloaded state or policy is left" "$(ip xfrm state; ip xfrm policy)"
fi
table_empty && ktap_ok "the block's table is empty" ||
	ktap_fail "the block's table is empty" "$(sim_read ipsec/flows)"
ipsec_flush
kernel_log_clean "no kernel warnings"
ktap_finish
