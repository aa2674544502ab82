#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Small input checks, each refused with a clear error or made to
# work:
#  - new_device takes "ID [NUM_RINGS]" as whole unsigned 32-bit numbers in
#    any base kstrtouint() reads: "0 4294967297" and "5 -1" are refused (they
#    made a device with 1 ring), "0x10" is device 16 (it was device 0);
#  - rxwd_period_us below 100 us (but not 0, off) is refused with a message;
#  - the MTU goes up to the driver's maximum, 3678 with 4 KiB pages, and
#    not beyond;
#  - an outbound ESN state with a replay window above the block's 1024 is
#    offloaded (the window is the receiver's; it was refused by the block);
#  - ip xfrm state update of an offloaded inbound (crypto) state works, and
#    the state stays offloaded (it failed: "already offloaded");
#  - the driver's test switches in debugfs (octep_knob): service and rearm
#    read their defaults, refuse an unknown word (EINVAL); service is
#    refused while the interface is up (EBUSY), rearm is not; service
#    switches while it is down, and the device runs in pass;
#  - with the model's host stub started, binding the driver by hand through
#    sysfs is refused, and works again once the stub has stopped.

source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/ipsec_lib.inc"
require_cmd ip ethtool devlink

ktap_plan 20

NEW=/sys/bus/octep_sim/new_device
DEL=/sys/bus/octep_sim/del_device

ipsec_prepare
check "modules load" octep_load || ktap_finish

# new_refused ARG: writing ARG to new_device fails and makes no device.
new_refused()
{
	local before after

	before=$(ls /sys/bus/octep_sim/devices | wc -l)
	if echo "$1" >"$NEW" 2>/dev/null; then
		ktap_fail "new_device refuses \"$1\"" \
			"accepted: $(ls /sys/bus/octep_sim/devices)"
		for d in /sys/bus/octep_sim/devices/octep_sim*; do
			echo "${d##*octep_sim}" >"$DEL"
		done
		return
	fi
	after=$(ls /sys/bus/octep_sim/devices | wc -l)
	if [ "$after" = "$before" ]; then
		ktap_ok "new_device refuses \"$1\""
	else
		ktap_fail "new_device refuses \"$1\"" "a device appeared"
	fi
}
new_refused "0 4294967297"
new_refused "5 -1"
new_refused "7 2 x"
if echo "0x10" >"$NEW" 2>/dev/null && [ -d /sys/bus/octep_sim/devices/octep_sim16 ] &&
   [ ! -d /sys/bus/octep_sim/devices/octep_sim0 ]; then
	ktap_ok "new_device \"0x10\" is device 16"
else
	ktap_fail "new_device \"0x10\" is device 16" "$(ls /sys/bus/octep_sim/devices)"
fi
for d in /sys/bus/octep_sim/devices/octep_sim*; do
	[ -e "$d" ] && echo "${d##*octep_sim}" >"$DEL"
done

check "device 0 with 1 ring" octep_new 0 1 || ktap_finish
check "peer namespace behind the wire" peer_setup || ktap_finish

# ------------------------------------------------ rxwd_period_us

out=$(devlink dev param set "$DL_DEV" name rxwd_period_us value 1 cmode runtime 2>&1)
p=$(devlink dev param show "$DL_DEV" name rxwd_period_us |
	grep -o "value [0-9]*" | awk '{ print $2 }')
if [ -n "$out" ] && grep -q "rxwd_period_us is 100 to" <<<"$out" && [ "$p" = 50000 ]; then
	ktap_ok "rxwd_period_us 1 is refused with a message"
else
	ktap_fail "rxwd_period_us 1 is refused with a message" "'$out', value $p"
fi
if devlink dev param set "$DL_DEV" name rxwd_period_us value 100 cmode runtime &&
   devlink dev param set "$DL_DEV" name rxwd_period_us value 0 cmode runtime &&
   devlink dev param set "$DL_DEV" name rxwd_period_us value 50000 cmode runtime; then
	ktap_ok "rxwd_period_us 100 and 0 are taken"
else
	ktap_fail "rxwd_period_us 100 and 0 are taken"
fi

# ------------------------------------------------ MTU

if ip link set "$HOST_IF" mtu 3678 && ! ip link set "$HOST_IF" mtu 3679 2>/dev/null; then
	ktap_ok "MTU 3678 is the maximum"
else
	ktap_fail "MTU 3678 is the maximum" "$(ip -d link show "$HOST_IF")"
fi
ip link set "$HOST_IF" mtu 1500

# ------------------------------------------------ xfrm

ipsec_case transport 4
GCM="aead rfc4106(gcm(aes))"
out=$(ip xfrm state add src "$O_H" dst "$O_P" proto esp spi 0x4001 reqid 1 \
	mode transport flag esn replay-window 1025 $GCM "$IPSEC_K128" 128 \
	offload dev "$HOST_IF" dir out 2>&1)
if ipsec_offloaded 0x4001 "$O_H" "$O_P"; then
	ktap_ok "outbound ESN, replay-window 1025: offloaded"
else
	ktap_fail "outbound ESN, replay-window 1025: offloaded" "$out"
fi

in_sa()
{
	ip xfrm state "$1" src "$O_P" dst "$O_H" proto esp spi 0x4002 reqid 1 \
		mode transport $GCM "$IPSEC_K128" 128 "${@:2}" \
		offload dev "$HOST_IF" dir in 2>&1
}
out=$(in_sa add)
ipsec_offloaded 0x4002 "$O_P" "$O_H" ||
	ktap_diag "the inbound state was not offloaded: $out"
out=$(in_sa update limit time-hard 3600)
rc=$?
st=$(ip -s xfrm state get src "$O_P" dst "$O_H" proto esp spi 0x4002 2>&1)
if [ "$rc" = 0 ] && ipsec_offloaded 0x4002 "$O_P" "$O_H" &&
   grep -q "expire add: soft 0(sec), hard 3600(sec)" <<<"$st"; then
	ktap_ok "ip xfrm state update of an offloaded inbound state: applied, still offloaded"
else
	ktap_fail "ip xfrm state update of an offloaded inbound state" "exit $rc: $out; $st"
fi
ip xfrm state flush

# ------------------------------------------------ debugfs switches

# knob_err NAME VALUE: the error writing VALUE to NAME gives, if any.
knob_err()
{
	{ octep_knob "$1" "$2"; } 2>&1 | sed 's/.*write error: //'
}

knobs()
{
	echo "$(cat "$DRV_DBG/service") $(cat "$DRV_DBG/rearm")"
}

k=$(knobs)
if [ "$k" = "visit reread" ]; then
	ktap_ok "debugfs service, rearm: visit, reread by default"
else
	ktap_fail "debugfs service, rearm: visit, reread by default" "$k"
fi
e1=$(knob_err service bogus) e2=$(knob_err rearm bogus) k=$(knobs)
if [ "$e1" = "Invalid argument" ] && [ "$e2" = "Invalid argument" ] &&
   [ "$k" = "visit reread" ]; then
	ktap_ok "debugfs: an unknown word is refused (EINVAL), nothing changed"
else
	ktap_fail "debugfs: an unknown word is refused (EINVAL), nothing changed" \
		"service: '$e1', rearm: '$e2', now $k"
fi
e1=$(knob_err service pass) e2=$(knob_err rearm none) k=$(knobs)
octep_knob rearm reread
if [ "$e1" = "Device or resource busy" ] && [ -z "$e2" ] &&
   [ "$k" = "visit none" ]; then
	ktap_ok "debugfs, interface up: service refused (EBUSY), rearm taken"
else
	ktap_fail "debugfs, interface up: service refused (EBUSY), rearm taken" \
		"service: '$e1', rearm: '$e2', now $k"
fi
# Down, pass, up: its watchdog's timer set up again in softirq mode (a
# mismatch warns at the first arming: kernel_log_clean below).
if ip link set "$HOST_IF" down && octep_knob service pass && k=$(knobs) &&
   ip link set "$HOST_IF" up &&
   wait_for "$OCTEP_WAIT" ping -q -c 1 -W 1 "$PEER_IP4" &&
   ip link set "$HOST_IF" down && octep_knob service visit &&
   ip link set "$HOST_IF" up; then
	ktap_ok "debugfs, interface down: service switches; pings in pass ($k)"
else
	ktap_fail "debugfs, interface down: service switches; pings in pass" \
		"now $(knobs)"
fi

# ------------------------------------------------ host stub and bind

ADEV=octep_sim.sdp.0
DRV=/sys/bus/auxiliary/drivers/octep_ipsec.ipsec
peer_teardown
if echo "$ADEV" >"$DRV/unbind" && echo "start 64 2048" >"$SIM_DBG/host_stub"; then
	ktap_ok "driver unbound, host stub started"
else
	ktap_fail "driver unbound, host stub started"
fi
if echo "$ADEV" >"$DRV/bind" 2>/dev/null; then
	ktap_fail "binding by hand while the stub runs is refused" "bound"
	echo "$ADEV" >"$DRV/unbind"
else
	ktap_ok "binding by hand while the stub runs is refused"
fi
echo stop >"$SIM_DBG/host_stub"
if echo "$ADEV" >"$DRV/bind" &&
   wait_for "$OCTEP_WAIT" lib_one_netdev "/sys/bus/octep_sim/devices/octep_sim0/$ADEV/net"; then
	ktap_ok "after the stub stops, the driver binds again"
else
	ktap_fail "after the stub stops, the driver binds again"
fi

kernel_log_clean "no splat"
ktap_finish
