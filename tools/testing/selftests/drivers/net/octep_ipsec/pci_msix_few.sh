#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# MSI-X with fewer vectors than the driver wants rings: octep-vfu -n 17
# (make check-pci's second boot, VM_VFU_ARGS=-n 17) offers the 16 vectors
# before the rings' and one for rings, on a guest with more CPUs than
# that. The probe takes what there is and runs one ring pair: one queue
# each way, ring 0 programmed and its buffers credited through the IOMMU,
# no other ring turned on, unbind and rebind alike. Skipped where the
# function has a vector for every CPU (scripts/vm --pci's default).

source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/pci_lib.inc"

# The MSI-X table's size: Message Control's bits 10:0, plus one, of the
# capability octep-vfu puts at 0x40.
table=$(od -An -tx2 -j$((0x42)) -N2 "$DEV/config" | tr -d ' ')
table=$(((0x$table & 0x7ff) + 1))
cpus=$(nproc)
[ $((table - 16)) -lt "$cpus" ] ||
	ktap_skip_all "$table MSI-X vectors: one a CPU ($cpus); boot with VM_VFU_ARGS=-n 17"

ktap_plan 11

# pci_queues DIR: rx-N (or tx-N) entries of the netdev's queues.
pci_queues()
{
	find "/sys/class/net/$IF/queues" -mindepth 1 -maxdepth 1 -name "$1-*" | wc -l
}

# pci_only_ring0: no ring but 0 was ever turned on (the log since boot).
pci_only_ring0()
{
	! grep -E ": ring [1-9][0-9]* (in|out) on$" "${VM_VFU_LOG:-/nonexistent}"
}

check "modules load" octep_load || ktap_finish
pci_override
check "probe binds with $table vectors for $cpus CPUs" pci_bind
IF=$(lib_one_netdev "$DEV/net")
vecs=$(find "$DEV/msi_irqs" -mindepth 1 -maxdepth 1 | wc -l)
ktap_expect "all $table vectors taken" "$vecs allocated" [ "$vecs" -eq "$table" ]
rx=$(pci_queues rx)
tx=$(pci_queues tx)
ktap_expect "one ring pair a ring vector: $((table - 16)) each way" \
	"$rx rx and $tx tx queues" \
	[ "$rx.$tx" = "$((table - 16)).$((table - 16))" ]
check "the interface comes up" ip link set "$IF" up
ktap_expect "ring 0's buffers reach the block through the IOMMU" \
	"$(grep "ring 0 " "${VM_VFU_LOG:-/nonexistent}" 2>&1 | tail -n 3)" \
	wait_for 10 pci_ring_credited 0
ktap_expect "no ring beyond the vectors turned on" \
	"$(grep -E ': ring [1-9]' "${VM_VFU_LOG:-/nonexistent}" | head -n 3)" \
	pci_only_ring0
check "unbind: driver and netdev gone" pci_unbind
check "rebind: bound again with a netdev" pci_bind
pci_dma_clean
kernel_log_clean "no kernel warning"

ktap_finish
