#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The driver's PCI path, on the SDP block as a real PCI function: QEMU's
# vfio-user-pci device served by octep-vfu (scripts/vm --pci). The function
# is not taken without driver_override (it is octeon_ep's by its IDs);
# with it, the probe maps BAR0, allocates its MSI-X vectors, asks the
# control mailbox for the flow table (answered by an interrupt: the
# server offers none, so "flow table unavailable (0)", not a timeout) and
# registers a netdev. The function is behind the vIOMMU: the interface
# comes up and the block reads ring 0's descriptors and checks its buffers
# through the driver's mappings alone (a fraction of guest memory, all of
# which it would reach without the IOMMU). Unbind and rebind three times, then
# unload the module with the function bound; the block made no DMA the
# driver had not mapped. Skipped without such a function.

source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/pci_lib.inc"

ktap_plan 21

# MSI-X vectors the probe allocated: 16 before the rings', one a ring.
pci_vectors()
{
	find "$DEV/msi_irqs" -mindepth 1 -maxdepth 1 2>/dev/null | wc -l
}

# pci_msix_ok RINGS VECTORS
pci_msix_ok()
{
	[ "$1" -ge 1 ] && [ "$2" -eq $((16 + $1)) ]
}

# The command register has memory space and bus master on (the probe's
# pcim_enable_device() and pci_set_master(), as the function holds them).
pci_master_on()
{
	local cmd

	cmd=$(od -An -tx2 -j4 -N2 "$DEV/config" | tr -d ' ')
	[ $((0x$cmd & 6)) -eq 6 ]
}

check "modules load" octep_load || ktap_finish
ktap_expect "the function is not taken by its IDs alone" \
	"bound to $(readlink "$DEV/driver")" pci_unbound
check "driver_override set" pci_override
check "probe binds through PCI and registers a netdev" pci_bind
IF=$(lib_one_netdev "$DEV/net")
rings=$(ls -d "/sys/class/net/$IF/queues/rx-"* 2>/dev/null | wc -l)
vecs=$(pci_vectors)
ktap_expect "MSI-X: 16 + one a ring ($rings rings, $vecs vectors)" \
	"$vecs vectors for $rings rings" pci_msix_ok "$rings" "$vecs"
if kernel_log | grep -q "$BDF: flow table unavailable (0)"; then
	ktap_ok "the mailbox answered through its MSI-X vector"
else
	ktap_fail "the mailbox answered through its MSI-X vector" \
		"$(kernel_log | grep "$BDF" | tail -n 5)"
fi
ktap_expect "behind the IOMMU, in a translating domain" \
	"iommu_group type: $(cat "$DEV/iommu_group/type" 2>&1)" pci_iommu_dma
check "the interface comes up" ip link set "$IF" up
ktap_expect "ring 0's buffers reach the block through the IOMMU" \
	"$(grep "ring 0 " "${VM_VFU_LOG:-/nonexistent}" 2>&1 | tail -n 3)" \
	wait_for 10 pci_ring_credited 0
kib=$(pci_reach_kib)
ktap_expect "the block reaches only the driver's mappings" \
	"${kib:-?} KiB mapped for it" pci_reach_narrow "$kib"
for i in 1 2 3; do
	check "unbind $i: driver and netdev gone" pci_unbind
	check "rebind $i: bound again with a netdev" pci_bind
done
check "command register: memory space and bus master on" pci_master_on
check "module unloads with the function bound" rmmod octep_ipsec
ktap_expect "the function is left unbound" \
	"still bound to $(readlink "$DEV/driver")" pci_unbound

pci_dma_clean
kernel_log_clean "no kernel warning"

ktap_finish
