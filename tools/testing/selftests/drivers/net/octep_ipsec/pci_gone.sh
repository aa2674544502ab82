#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The function falls off the link and comes back, as in an AER event the
# guest cannot be sent here (QEMU stops a guest on a vfio device's error
# interrupt): octep-vfu's control file ($VM_VFU_CTL) makes BAR0 read all
# ones ("gone"), then brings the block back reset ("back"). While it is
# gone the health check reports it through devlink health, as such, and
# the driver leaves the rings alone (no reset against a device nothing
# reads); once back, it resets the rings by itself and their buffers
# reach the block through the IOMMU. Then
# gone again: the interface goes down, the driver unbinds and the module
# unloads against a function that reads all ones, as after a surprise
# removal; then it is brought back for the tests after. No splat, no DMA
# fault. Skipped without the function.

source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/pci_lib.inc"

[ -n "${VM_VFU_CTL:-}" ] || ktap_skip_all "no control file (scripts/vm --pci sets VM_VFU_CTL)"

ktap_plan 20

# pci_ring_back RING: RING's output side turned on, and its buffers
# credited with no fault, since the last "back".
pci_ring_back()
{
	awk -v r="$1" '
		/: control: back$/ { on = 0; ok = 0 }
		$0 ~ ": ring " r " out on$" { on = 1 }
		on && $0 ~ ": ring " r " out: [0-9]+ buffers credited, 0 DMA faults, " { ok = 1 }
		END { exit !ok }' "$VM_VFU_LOG"
}

ge() { [ "$(stat "$IF" "$1")" -ge "$2" ]; }
logged() { kernel_log | grep -q "$1"; }

check "modules load" octep_load || ktap_finish
pci_override
check "probe binds through PCI" pci_bind
IF=$(lib_one_netdev "$DEV/net")
check "the interface comes up" ip link set "$IF" up
ktap_expect "ring 0's buffers reach the block through the IOMMU" \
	"$(grep "ring 0 " "$VM_VFU_LOG" | tail -n 3)" wait_for 10 pci_ring_credited 0
p0=$(stat "$IF" rx_stall_reports)
r0=$(stat "$IF" ring_resets)
check "the function falls off the link (reads all ones)" vfu_ctl gone
ktap_expect "the health check reports it" \
	"rx_stall_reports $p0 -> $(stat "$IF" rx_stall_reports)" \
	wait_for 10 ge rx_stall_reports $((p0 + 1))
ktap_expect "devlink health counts an rx_stall error" \
	"$(devlink health show "pci/$BDF" reporter rx_stall 2>&1)" \
	sh -c "devlink health show pci/$BDF reporter rx_stall | grep -Eq 'error [1-9]'"
ktap_expect "reported as a device reading all ones" \
	"$(kernel_log | grep "$IF" | tail -n 3)" \
	logged "$IF: the device reads all ones: off the bus"
# Three health periods, and the transmit watchdog's timeout.
sleep 6
resets=$(( $(stat "$IF" ring_resets) - r0 ))
ktap_expect "no ring reset while it reads all ones" "$resets resets" \
	[ "$resets" -eq 0 ]
check "the function comes back, reset" vfu_ctl back
ktap_expect "the driver resets the rings by itself, ring 0 programmed" \
	"$(tail -n 4 "$VM_VFU_LOG")" wait_for 20 pci_ring_back 0
ktap_expect "one ring reset for it" \
	"$(( $(stat "$IF" ring_resets) - r0 )) resets" \
	[ "$(( $(stat "$IF" ring_resets) - r0 ))" -eq 1 ]
ktap_expect "the netdev stays through it" "driver $(readlink "$DEV/driver")" pci_bound
check "gone again" vfu_ctl gone
check "the interface goes down" ip link set "$IF" down
check "the driver unbinds from a function reading all ones" pci_unbind
check "the module unloads" rmmod octep_ipsec
# The server outlives the test: the tests after it in the boot get the
# function on the link.
check "the function back on the link, for the tests after" vfu_ctl back
pci_dma_clean
kernel_log_clean "no kernel warning"

ktap_finish
