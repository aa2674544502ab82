#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The function unplugged under traffic and plugged back: device_del through
# QEMU's monitor (scripts/vm --pci's relay), the function in a root port's
# slot (ACPI hotplug). Twice: once with the function alive, so that the
# driver's remove runs against a device that answers; once after it fell
# off the link (reading all ones, octep-vfu's "gone"), as a surprise
# removal leaves it, so that the remove runs against nothing. Each time,
# with the interface up and packets going to the block (the server has no
# wire and completes no transmit yet: the traffic is the driver's transmit
# path, a packet a ring mapped through the IOMMU and its doorbell rung,
# left in flight), the netdev
# and the function go within a bound, QEMU and the server let the
# function go, nothing stays blocked (the sender is killed and exits,
# the hung-task check runs at 10 s); then device_add puts it back and it
# binds again, its buffers reach the block through the IOMMU and packets
# go to it. No splat, no DMA fault. Skipped without the function, or on a
# QEMU that aborts on its unplug (scripts/qemu-root).

source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/pci_lib.inc"

[ -n "${VM_QMP:-}" ] && [ -r "${VM_VFU_DEVICE:-}" ] ||
	ktap_skip_all "no monitor relay (scripts/vm --pci sets VM_QMP)"
[ "${VM_PCI_UNPLUG:-0}" = 1 ] ||
	ktap_skip_all "this QEMU aborts when vfio-user-pci is unplugged (see scripts/qemu-root)"

# What a removal may take: ACPI's eject, the driver's remove.
UNPLUG_WAIT=20
HUNG=/proc/sys/kernel/hung_task_timeout_secs
NB=10.99.0.2

ktap_plan 31

# up: the interface up, with a neighbour on its link to send to.
up()
{
	ip link set "$IF" up &&
		ip addr add 10.99.0.1/24 dev "$IF" &&
		ip neigh replace "$NB" lladdr 02:00:00:00:99:02 dev "$IF"
}

# traffic: pings to the neighbour, 50 a second, until killed. The block
# completes no transmit yet: a queue takes a packet and stalls with it in
# flight (mapped for the block), until the stack's watchdog has the
# driver reset the ring; the unplug comes in between.
SENDER=
traffic()
{
	ping -q -i 0.02 "$NB" >/dev/null 2>&1 &
	SENDER=$!
}

bells() { stat "$IF" tx_doorbells; }
bells_past() { [ "$(bells)" -ge "$1" ]; }
gone_count() { grep -c ": client gone$" "$VM_VFU_LOG"; }
gone_past() { [ "$(gone_count)" -gt "$1" ]; }
deleted_past() { [ "$(qmp_events DEVICE_DELETED)" -gt "$1" ]; }
no_netdev() { [ ! -e "/sys/class/net/$1" ]; }
no_function() { [ ! -e "$DEV" ]; }
sender_gone() { ! kill -0 "$SENDER" 2>/dev/null; }

# plug_back: device_add, the function found again, the driver's again.
plug_back()
{
	qmp device_add "$(cat "$VM_VFU_DEVICE")" &&
		wait_for "$UNPLUG_WAIT" pci_find >/dev/null &&
		BDF=$(pci_find) && DEV=/sys/bus/pci/devices/$BDF &&
		echo octep_ipsec >"$DEV/driver_override"
}

# unplug_round NAME GONE: bound, up, under traffic; the function off the
# link first if GONE; device_del; gone in time; plugged back.
unplug_round()
{
	local name=$1 gone=$2 b0 d0 c0 t0 ifn

	IF=$(lib_one_netdev "$DEV/net")
	ifn=$IF
	check "$name: the interface comes up" up
	b0=$(bells)
	traffic
	ktap_expect "$name: packets go to the block" \
		"tx_doorbells $b0 -> $(bells)" wait_for 10 bells_past $((b0 + 1))
	if [ "$gone" = 1 ]; then
		check "$name: the function falls off the link" vfu_ctl gone
	fi
	d0=$(qmp_events DEVICE_DELETED)
	c0=$(gone_count)
	t0=$SECONDS
	check "$name: device_del through QEMU's monitor" \
		qmp device_del '{"id": "sdp0"}'
	ktap_expect "$name: the netdev goes within $UNPLUG_WAIT s" \
		"$ifn still there after $((SECONDS - t0)) s" \
		wait_for "$UNPLUG_WAIT" no_netdev "$ifn"
	ktap_expect "$name: the function leaves the bus" \
		"$DEV still there" wait_for "$UNPLUG_WAIT" no_function
	ktap_diag "$name: unplugged in $((SECONDS - t0)) s"
	ktap_expect "$name: QEMU lets the function go (DEVICE_DELETED)" \
		"$(tail -n 3 "$VM_QMP_LOG")" \
		wait_for 10 deleted_past "$d0"
	ktap_expect "$name: the server sees its client go" \
		"$(tail -n 3 "$VM_VFU_LOG")" \
		wait_for 10 gone_past "$c0"
	kill "$SENDER" 2>/dev/null
	ktap_expect "$name: the sender exits when killed (nothing blocked)" \
		"ping $SENDER: $(cat "/proc/$SENDER/stat" 2>&1 | cut -d' ' -f3)" \
		wait_for 10 sender_gone
	wait "$SENDER" 2>/dev/null
	if [ "$gone" = 1 ]; then
		check "$name: the function comes back to the link" vfu_ctl back
	fi
	check "$name: device_add plugs it back" plug_back
	check "$name: it binds again" pci_bind
}

check "modules load" octep_load || ktap_finish
pci_override
if [ -w "$HUNG" ]; then
	on_exit "echo $(cat "$HUNG") > $HUNG"
	echo 10 >"$HUNG"
fi
check "probe binds through PCI" pci_bind
unplug_round "alive" 0
unplug_round "off the link" 1
IF=$(lib_one_netdev "$DEV/net")
check "after both: the interface comes up" up
ktap_expect "its buffers reach the block through the IOMMU" \
	"$(grep "ring 0 " "$VM_VFU_LOG" | tail -n 3)" \
	wait_for 10 pci_ring_credited 0
b0=$(bells)
traffic
ktap_expect "packets go to the block again" "tx_doorbells $b0 -> $(bells)" \
	wait_for 10 bells_past $((b0 + 1))
kill "$SENDER"
wait "$SENDER" 2>/dev/null
check "unbind" pci_unbind
check "the module unloads" rmmod octep_ipsec
# Long enough after the last removal for the hung-task check to have run.
sleep 10
pci_dma_clean
kernel_log_clean "no kernel warning, no hung task"

ktap_finish
