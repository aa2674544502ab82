#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# "A packet is not a buffer": with octep_sim's ordering fault on, the block
# counts some packets before it writes their buffers. The driver must see
# those as counts without buffers (its oq_unseen counter) and still deliver
# every packet, late but whole. Without the fault it must see none.

source "$(dirname "$0")/lib.sh"

require_cmd ip ping ethtool

ID=73
RINGS=2

ktap_plan 7

# delayed_total: the model's delayed buffers over every ring.
delayed_total()
{
	local r n=0

	for ((r = 0; r < RINGS; r++)); do
		n=$((n + $(sim_read "ring$r/delayed")))
	done
	echo "$n"
}

# ping_all N: N pings to the peer, 10 ms apart; ok if every reply came.
ping_all()
{
	ping -c "$1" -i 0.01 -W 5 "$PEER_IP4" | grep -q " 0% packet loss"
}

check "driver and model load" octep_load || ktap_finish
check "device with $RINGS rings and the peer" \
	eval "octep_new $ID $RINGS && peer_setup" || ktap_finish

# Without the fault: no count ever lacks its buffer.
check "without the fault every reply arrives" ping_all 50
if [ "$(stat "$HOST_IF" oq_unseen)" = 0 ] && [ "$(delayed_total)" = 0 ]; then
	ktap_ok "without the fault the driver sees no count without a buffer"
else
	ktap_fail "without the fault the driver sees no count without a buffer" \
		"oq_unseen $(stat "$HOST_IF" oq_unseen), delayed $(delayed_total)"
fi

# With it: a fifth of the buffers written 2 ms after their count. The
# interrupt comes on the count, so the driver's first look is at once.
sim_write delay_ns 2000000
sim_write delay_share 200
check "with the fault every reply still arrives" ping_all 200
delayed=$(delayed_total)
unseen=$(stat "$HOST_IF" oq_unseen)
sim_write delay_share 0
ktap_diag "delayed buffers $delayed, driver oq_unseen $unseen"
if [ "$delayed" -gt 0 ]; then
	ktap_ok "the model delayed buffers" "delayed $delayed"
else
	ktap_fail "the model delayed buffers" "delayed $delayed"
fi
if [ "$unseen" -gt 0 ]; then
	ktap_ok "the driver saw counts without buffers" "oq_unseen $unseen"
else
	ktap_fail "the driver saw counts without buffers" "oq_unseen $unseen"
fi

ktap_finish
