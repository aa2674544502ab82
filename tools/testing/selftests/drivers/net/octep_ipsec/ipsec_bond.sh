#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Crypto offload through an active-backup bond over our netdev, as a
# gateway bonds its uplinks: `ip xfrm state add ... offload dev ob0`
# reaches the driver through the bond (6.12 calls it with the bond as the
# state's device, the slave chosen by the bond), and the block encrypts
# and decrypts the tunnel's packets. Asserted: both states offloaded (no
# fallback warning), ping to the software peer works, the block counts
# the packets both ways (tx_encrypt, rx_ok) and the host's SAs count them
# too.

source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/ipsec_lib.inc"
require_cmd ip python3

N=5
ktap_plan 10

# max_bonds=0: no default bond0 of the module's own (Debian 13 makes one).
modprobe bonding max_bonds=0 2>/dev/null
ipsec_start
on_exit ip link del ob0

# Our netdev under ob0, its address moved to the bond.
ip addr flush dev "$HOST_IF"
ip link add ob0 type bond mode active-backup miimon 100 &&
ip link set "$HOST_IF" down && ip link set "$HOST_IF" master ob0 &&
ip link set ob0 up && ip addr add "$HOST_IP4/24" dev ob0
if ! wait_for 10 ping -q -c 1 -W 1 "$PEER_IP4"; then
	ktap_fail "ob0 (active-backup) over $HOST_IF reaches the peer" \
		"$(ip -d link show ob0; cat /proc/net/bonding/ob0)"
	ktap_finish
fi
ktap_ok "ob0 (active-backup) over $HOST_IF reaches the peer"

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
if [ "$tx" -ge "$N" ] && [ "$rx" -ge "$N" ]; then
	ktap_ok "the block encrypted $tx and decrypted $rx"
else
	ktap_fail "the block encrypted and decrypted the pings" \
		"tx_encrypt +$tx, rx_ok +$rx"
fi
out=$(ip -s xfrm state get src "$HOST_IP4" dst "$PEER_IP4" proto esp \
	spi "$IPSEC_SPI_OUT" | sed -n 's/.*(bytes), \([0-9]*\)(packets).*/\1/p' | head -n 1)
if [ "${out:-0}" -ge "$N" ]; then
	ktap_ok "the outbound state counted $out packets"
else
	ktap_fail "the outbound state counted the packets" \
		"$(ip -s xfrm state)"
fi
ipsec_flush

ipsec_flush
kernel_log_clean "no kernel warnings"
ktap_finish
