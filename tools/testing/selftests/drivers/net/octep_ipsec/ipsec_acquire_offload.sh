#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# XFRM_MSG_ACQUIRE with a packet-offload device (xfrm_nl.py acquire): the
# kernel builds a policy only to send the key managers an acquire, and
# that construction offloads it to our device, which the block's policy
# table then holds. The policy is freed at once: its device part must go
# with it, leaving nothing in the block and no reference on the netdev,
# so the device is deleted and the modules removed as if no acquire had
# come. Stock 6.12 leaks the device part (xfrm_add_acquire() frees the
# policy with kfree()): the block keeps the policy, the driver's entry
# points at freed memory and unregister_netdevice() waits forever;
# patches/0002 fixes it. Skipped on a kernel without it (every kernel but
# the debug kernel scripts/debug-kernel built from patches/).
# OCTEP_ACQ_FORCE=1 runs it anyway, to show the leak: the device's delete
# is then left hanging in the background (the guest must be rebooted).

source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/ipsec_lib.inc"
require_cmd ip devlink python3

if [ -z "${OCTEP_ACQ_FORCE:-}" ] &&
   ! kernel_has_patch 0002-xfrm-free-the-device-part-of-an-acquire-s-policy; then
	ktap_skip_all "stock 6.12 leaks the device part of an acquire's policy: patches/0002"
fi

ktap_plan 15

ACQ=10

ipsec_start

# block_pols IN OUT: the block's policy table holds IN inbound and OUT
# outbound policies.
block_pols()
{
	[ "$(sim_read ipsec/policies)" = "in $1 out $2" ]
}

# acquire [OPTS...]: an acquire for host -> peer traffic, its policy
# offloaded (packet) to HOST_IF.
acquire()
{
	python3 "$XFRM_NL" acquire out "$HOST_IP4/32" "$PEER_IP4/32" "$HOST_IP4" \
		"$PEER_IP4" 1 transport --offload packet --dev "$HOST_IF" "$@"
}

pols0=$(sim_read ipsec/policies)
# The construction reaches the driver: what the block cannot carry is
# refused with the driver's reason.
out=$(acquire --optional 2>&1)
ktap_expect "an acquire's policy reaches the driver (a refusal's reason)" \
	"xfrm_nl.py: $out" grep -q "Cannot offload an optional template" <<<"$out"

acq=$(acquire 2>&1)
ktap_expect "an acquire with an offload device is accepted" \
	"xfrm_nl.py: $acq" [ -z "$acq" ]
# Not "nothing left" for an acquire that never reached the block.
if [ -z "$acq" ] && wait_for 10 block_pols 0 0; then
	ktap_ok "nothing of it is left in the block" "policies: $pols0 before"
else
	ktap_fail "nothing of it is left in the block" \
		"policies: $pols0 before, $(sim_read ipsec/policies) after"
fi

bad=0
for ((i = 0; i < ACQ; i++)); do
	acquire >/dev/null 2>&1 || bad=$((bad + 1))
done
if [ "$bad" -eq 0 ] && wait_for 10 block_pols 0 0; then
	ktap_ok "$ACQ more acquires leave nothing either"
else
	ktap_fail "$ACQ more acquires leave nothing either" \
		"$bad refused; policies: $(sim_read ipsec/policies)"
fi
ktap_expect "no xfrm policy on the host" "$(ip xfrm policy)" \
	[ -z "$(ip xfrm policy)" ]

# The driver's own count of the block's policies went back down too: a
# policy added now is the only one, and its delete empties the table.
out=$(python3 "$XFRM_NL" policy out "$HOST_IP4/32" "$PEER_IP4/32" "$HOST_IP4" \
	"$PEER_IP4" 1 transport --offload packet --dev "$HOST_IF" 2>&1)
if [ -z "$out" ] && wait_for 10 block_pols 0 1; then
	ktap_ok "a policy added after them is in the block, alone"
else
	ktap_fail "a policy added after them is in the block, alone" \
		"xfrm_nl.py: $out; policies: $(sim_read ipsec/policies)"
fi
ip xfrm policy flush
check "its flush empties the block" wait_for 10 block_pols 0 0

# gone PATH: PATH no longer exists.
gone()
{
	[ ! -e "$1" ]
}

# A leaked reference makes the delete wait forever in unregister_netdevice():
# bounded, in the background; if it hangs, cleanup must not wait on it.
dev=/sys/bus/octep_sim/devices/octep_sim0
t0=$SECONDS
echo 0 >/sys/bus/octep_sim/del_device &
# shellcheck disable=SC2034 # lib.sh's cleanup: not deleted again
LIB_DEVICES=()
if wait_for 60 gone "$dev"; then
	ktap_ok "the device is deleted" "in $((SECONDS - t0)) s"
else
	LIB_LOADED=0
	ktap_fail "the device is deleted" \
		"still there after $((SECONDS - t0)) s: $(dmesg | grep 'to become free' | tail -n 1)"
fi
log=$(kernel_log | grep "to become free")
ktap_expect "no \"waiting for ... to become free\"" "$log" [ -z "$log" ]
if [ "$LIB_LOADED" -eq 1 ]; then
	check "the modules are removed" octep_unload
else
	ktap_skip "the modules are removed" "the device's delete hangs"
fi
kernel_log_clean "no kernel warnings"
ktap_finish
