#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Crypto offload through an active-backup bond over two of our netdevs,
# as a gateway bonds its uplinks (the peer bridges the two wires):
# `ip xfrm state add ... offload dev ob0` reaches the driver through the
# bond (6.12 calls it with the bond as the state's device, the slave
# chosen by the bond), and the block encrypts and decrypts the tunnel's
# packets. Asserted: both states offloaded (no fallback warning), ping to
# the software peer works, the block counts the packets both ways
# (tx_encrypt, rx_ok) and the host's SAs count them too. Then a failover
# under a ping stream: the bond moves the states to the second device
# (its xdo_dev_state_delete and _free on the first, _add on the second),
# the stream carries on through the second block, and a failback brings
# them home. 6.12's bond offers no packet offload (no xdo_dev_policy_add).

source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/ipsec_lib.inc"
require_cmd ip python3

N=5
ktap_plan 15

# max_bonds=0: no default bond0 of the module's own (Debian 13 makes one).
modprobe bonding max_bonds=0 2>/dev/null
ipsec_start
H0=$HOST_IF W0=$WIRE_IF D0=$SIM_DBG
check "device 1" octep_new 1 1 || ktap_finish
H1=$HOST_IF W1=$WIRE_IF D1=$SIM_DBG
HOST_IF=$H0 WIRE_IF=$W0 SIM_DBG=$D0
on_exit ip link del ob0

# The peer: both wires in one bridge, its addresses on the bridge.
in_peer ip addr flush dev "$W0"
ip link set "$W1" netns "$PEER_NS" &&
in_peer ip link add pbr type bridge &&
in_peer ip link set "$W0" master pbr &&
in_peer ip link set "$W1" master pbr && in_peer ip link set "$W1" up &&
in_peer ip link set pbr up && in_peer ip addr add "$PEER_IP4/24" dev pbr

# Our netdevs under ob0, the address moved to the bond; $H0 active.
ip addr flush dev "$H0"
ip link add ob0 type bond mode active-backup miimon 100 &&
ip link set "$H0" down && ip link set "$H0" master ob0 &&
ip link set "$H1" down && ip link set "$H1" master ob0 &&
ip link set ob0 up && ip addr add "$HOST_IP4/24" dev ob0
if ! wait_for 10 ping -q -c 1 -W 1 "$PEER_IP4"; then
	ktap_fail "ob0 (active-backup) over $H0 and $H1 reaches the peer" \
		"$(ip -d link show ob0; cat /proc/net/bonding/ob0)"
	ktap_finish
fi
ktap_ok "ob0 (active-backup) over $H0 and $H1 reaches the peer"

# bond_sa DIR: the crypto-offloaded state of the pair, on ob0.
bond_sa()
{
	local src=$HOST_IP4 dst=$PEER_IP4 spi=$IPSEC_SPI_OUT

	[ "$1" = in ] && src=$PEER_IP4 dst=$HOST_IP4 spi=$IPSEC_SPI_IN
	ip xfrm state add src "$src" dst "$dst" proto esp spi "$spi" reqid 1 \
		mode transport aead 'rfc4106(gcm(aes))' "$IPSEC_K128" 128 \
		offload dev ob0 dir "$1" 2>&1
}

# shellcheck disable=SC2034 # read by ipsec_lib.inc
O_H=$HOST_IP4 O_P=$PEER_IP4 I_H=$HOST_IP4 I_P=$PEER_IP4 PL=32
out="$(bond_sa in) $(bond_sa out)"
ipsec_host_pol out transport none >/dev/null
ipsec_host_pol in transport none >/dev/null
ipsec_peer transport >/dev/null 2>&1
if ipsec_both_offloaded && ! grep -q "not available\|Warning" <<<"$out"; then
	ktap_ok "both states offloaded through ob0"
else
	ktap_fail "both states offloaded through ob0" "$out; $(ip xfrm state)"
fi

tx0=$(sim_read ipsec/tx_encrypt) rx0=$(sim_read ipsec/rx_ok)
if ping -q -c "$N" -i 0.2 -W 2 "$PEER_IP4" | grep -q " 0% packet loss"; then
	ktap_ok "ping through the bond works under crypto offload"
else
	ktap_fail "ping through the bond works under crypto offload" \
		"$(ip -s xfrm state)"
fi
tx=$(($(sim_read ipsec/tx_encrypt) - tx0)) rx=$(($(sim_read ipsec/rx_ok) - rx0))
ktap_diag "the block encrypted $tx and decrypted $rx"
if [ "$tx" -ge "$N" ] && [ "$rx" -ge "$N" ]; then
	ktap_ok "the block encrypted and decrypted the pings"
else
	ktap_fail "the block encrypted and decrypted the pings" \
		"tx_encrypt +$tx, rx_ok +$rx"
fi
out=$(ip -s xfrm state get src "$HOST_IP4" dst "$PEER_IP4" proto esp \
	spi "$IPSEC_SPI_OUT" | sed -n 's/.*(bytes), \([0-9]*\)(packets).*/\1/p' | head -n 1)
ktap_diag "the outbound state counted ${out:-0} packets"
if [ "${out:-0}" -ge "$N" ]; then
	ktap_ok "the outbound state counted the packets"
else
	ktap_fail "the outbound state counted the packets" \
		"$(ip -s xfrm state)"
fi

# flows DBG: the flow table entries in use of the block at DBG, "in N
# out M".
flows()
{
	cat "$1/ipsec/flows"
}

# in_block DBG N DBG2 N2: the two blocks hold N and N2 entries each way.
in_block()
{
	[ "$(flows "$1")" = "in $2 out $2" ] &&
	[ "$(flows "$3")" = "in $4 out $4" ]
}

# failover TO FROM: switch ob0's active slave to TO under a ping stream;
# the stream's replies out of 200 (20 s at most).
failover()
{
	local log

	log=$(mktemp)
	ping -q -c 200 -i 0.05 -W 1 "$PEER_IP4" >"$log" 2>&1 &
	sleep 3
	echo "$1" >/sys/class/net/ob0/bonding/active_slave
	wait $!
	awk '/received/ { print $4 }' "$log"
	rm -f "$log"
}

e0=$(sim_read ipsec/tx_encrypt)
tx0=$(cat "$D1/ipsec/tx_encrypt") rx0=$(cat "$D1/ipsec/rx_ok")
got=$(failover "$H1")
wait_for 10 in_block "$D0" 0 "$D1" 1
ktap_diag "failover to $H1: ${got:-0}/200 replies; entries $(flows "$D0") and $(flows "$D1")"
ktap_expect "failover: both states move to the second block" \
	"entries $(flows "$D0") and $(flows "$D1"); $(cat /proc/net/bonding/ob0)" \
	in_block "$D0" 0 "$D1" 1
ktap_expect "failover: the ping stream carries on" "${got:-0}/200 replies" \
	[ "${got:-0}" -ge 180 ]
tx=$(($(cat "$D1/ipsec/tx_encrypt") - tx0))
rx=$(($(cat "$D1/ipsec/rx_ok") - rx0))
ktap_diag "the second block: encrypted $tx, decrypted $rx;" \
	"the first $(($(sim_read ipsec/tx_encrypt) - e0)) during the stream"
ktap_expect "failover: the second block encrypts and decrypts the stream" \
	"tx_encrypt +$tx, rx_ok +$rx" [ $((tx >= 20 && rx >= 20)) = 1 ]
echo "$H0" >/sys/class/net/ob0/bonding/active_slave
wait_for 10 in_block "$D0" 1 "$D1" 0
if in_block "$D0" 1 "$D1" 0 &&
   ping -q -c "$N" -i 0.2 -W 2 "$PEER_IP4" | grep -q " 0% packet loss"; then
	ktap_ok "failback: the states come home, pings pass"
else
	ktap_fail "failback: the states come home, pings pass" \
		"entries $(flows "$D0") and $(flows "$D1")"
fi

ipsec_flush
kernel_log_clean "no kernel warnings"
ktap_finish
