#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Function-level reset of the SDP block's PCI function (scripts/vm --pci:
# octep-vfu offers FLR through an Advanced Features capability, the only
# reset a function on q35's root bus can have). Unbound: a register written
# through BAR0 reads back zero after `echo 1 > reset`, and the mailbox is
# back (its signature). Bound, with the interface up: the driver takes its
# rings down before the reset and programs them again after (its receive
# buffers credited again, each mapped for the block), and the function
# unbinds and binds again. Skipped without the function.

source "$(dirname "$0")/lib.sh"
require_cmd python3

# R_IN_INT_LEVELS(0): plain storage in the block, zero after a reset.
SCRATCH=0x10060
MBOX_SIG=0x400000
MBOX_SIG_VAL=0x314f424d5044534f

source "$(dirname "$0")/pci_lib.inc"

ktap_plan 17

# bar0 OFF [VAL]: print the 64-bit register at OFF (hex), after writing
# VAL to it if given, through the sysfs resource file, with memory space
# turned on first (no driver holds the function).
bar0()
{
	python3 - "$DEV" "$1" "${2:-}" <<'EOF'
import mmap, os, struct, sys

dev, off, val = sys.argv[1], int(sys.argv[2], 0), sys.argv[3]
with open(dev + "/config", "r+b", buffering=0) as c:
    c.seek(4)
    cmd = struct.unpack("<H", c.read(2))[0]
    c.seek(4)
    c.write(struct.pack("<H", cmd | 2))
fd = os.open(dev + "/resource0", os.O_RDWR | os.O_SYNC)
page = off & ~(mmap.PAGESIZE - 1)
m = mmap.mmap(fd, mmap.PAGESIZE, offset=page)
mv = memoryview(m).cast("Q")
if val:
    mv[(off - page) // 8] = int(val, 0)
print(hex(mv[(off - page) // 8]))
mv.release()
m.close()
EOF
}

check "modules load" octep_load || ktap_finish
ktap_expect "the kernel offers the function af_flr" \
	"reset_method: $(cat "$DEV/reset_method" 2>&1)" \
	grep -qw af_flr "$DEV/reset_method"
v=$(bar0 "$SCRATCH" 0x5a5a 2>&1)
ktap_expect "a BAR0 register keeps what is written" "read back $v" \
	[ "$v" = 0x5a5a ]
check "FLR of the unbound function" sh -c "echo 1 > $DEV/reset"
v=$(bar0 "$SCRATCH" 2>&1)
ktap_expect "the register is zero after the FLR" "read back $v" [ "$v" = 0x0 ]
v=$(bar0 "$MBOX_SIG" 2>&1)
ktap_expect "the mailbox is back after the FLR" "signature $v" \
	[ "$v" = "$MBOX_SIG_VAL" ]

pci_override
check "probe binds through PCI" pci_bind
IF=$(lib_one_netdev "$DEV/net")
check "the interface comes up" ip link set "$IF" up
# The driver holds BAR0 now (sysfs will not map it): what the block saw
# is in the server's log.
ktap_expect "ring 0 enabled by the open" \
	"$(grep -c . "${VM_VFU_LOG:-/nonexistent}" 2>&1) log lines, none turning ring 0 on" \
	wait_for 10 pci_ring_on 0
# The FLR clears the block's ring registers: the driver must take its
# rings down before (reset_prepare) and program them again after
# (reset_done), as for a sleep.
check "FLR of the bound function" sh -c "echo 1 > $DEV/reset"
ktap_expect "the driver and its netdev stay through the FLR" \
	"driver $(readlink "$DEV/driver")" pci_bound
ktap_expect "ring 0 programmed again after the FLR" \
	"$(tail -n 3 "${VM_VFU_LOG:-/nonexistent}" 2>&1): the rings were lost" \
	wait_for 10 pci_ring_on 0
ktap_expect "ring 0's buffers credited again, through the IOMMU" \
	"$(grep "ring 0 " "${VM_VFU_LOG:-/nonexistent}" 2>&1 | tail -n 3)" \
	wait_for 10 pci_ring_credited 0
check "unbind after the FLR" pci_unbind
check "rebind after the FLR" pci_bind

pci_dma_clean
kernel_log_clean "no kernel warning"

ktap_finish
