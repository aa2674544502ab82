#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# AER recovery reaching the driver's pci_error_handlers: QEMU's
# pcie_aer_inject_error (through scripts/vm --pci's monitor relay) on the
# root port whose slot the function sits in. The guest's AER driver owns
# the port (_OSC grants AER) and recovers everything below it. A fatal
# error (a malformed TLP): the driver takes its rings down
# (error_detected), the port's secondary bus reset reaches the function
# (octep-vfu logs the reset), and the driver programs its rings again
# (slot_reset, resume), its buffers credited through the IOMMU. A
# non-fatal one (a poisoned TLP): the rings go down and come back with no
# reset between. The netdev stays through both; no splat, no DMA fault.
# (The function's own error interrupt cannot be used: QEMU stops the
# guest on a vfio device's.) IPv6 is off on the interface and it has no
# address, so that nothing is sent: no transmit timeout resets the rings
# meanwhile (the block completes no transmit yet). Skipped without the
# function or the relay.

source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/pci_lib.inc"

[ -n "${VM_QMP:-}" ] || ktap_skip_all "no monitor relay (scripts/vm --pci sets VM_QMP)"
PORT=$(basename "$(dirname "$(readlink -f "$DEV")")")
[ -e "/sys/bus/pci/devices/$PORT/aer_rootport_total_err_fatal" ] ||
	ktap_skip_all "the function's port ($PORT) is not an AER root port"

ktap_plan 17

# aer_inject ERR: inject ERR into the root port (rp0, scripts/vm's).
aer_inject()
{
	qmp human-monitor-command \
		"{\"command-line\": \"pcie_aer_inject_error rp0 $1\"}" |
		grep -q "OK id: rp0"
}

recoveries() { kernel_log | grep -c "$PORT: AER: device recovery successful"; }
recovered_past() { [ "$(recoveries)" -gt "$1" ]; }

netdev_up() { pci_bound && ip link show "$IF" | grep -q '[<,]UP[,>]'; }

# vfu_since N: the server's log after its first N lines.
vfu_since() { tail -n "+$(($1 + 1))" "$VM_VFU_LOG"; }

# rings_cycled N RESET: since line N of the server's log, ring 0 turned
# off, then (RESET 1) the function reset, then ring 0 on and its buffers
# credited with no fault; with RESET 0, no reset in between.
rings_cycled()
{
	vfu_since "$1" | awk -v want="$2" '
		/: ring 0 out off$/ && st == 0 { st = 1 }
		/: reset$/ && st == 1 { reset = 1 }
		/: ring 0 out on$/ && st == 1 { st = 2 }
		/: ring 0 out: [0-9]+ buffers credited, 0 DMA faults, / && st == 2 { st = 3 }
		END { exit !(st == 3 && reset == want) }'
}

check "modules load" octep_load || ktap_finish
pci_override
check "probe binds through PCI" pci_bind
IF=$(lib_one_netdev "$DEV/net")
check "IPv6 off on the interface" sysctl -qw "net.ipv6.conf.$IF.disable_ipv6=1"
check "the interface comes up" ip link set "$IF" up
ktap_expect "ring 0's buffers reach the block" \
	"$(grep "ring 0 " "$VM_VFU_LOG" | tail -n 3)" wait_for 10 pci_ring_credited 0

f0=$(cat "/sys/bus/pci/devices/$PORT/aer_rootport_total_err_fatal")
n=$(wc -l <"$VM_VFU_LOG")
r0=$(recoveries)
check "a fatal error (MALF_TLP) injected at the root port" aer_inject MALF_TLP
ktap_expect "the port counts it" \
	"aer_rootport_total_err_fatal $f0 -> $(cat "/sys/bus/pci/devices/$PORT/aer_rootport_total_err_fatal")" \
	wait_for 10 sh -c "[ \$(cat /sys/bus/pci/devices/$PORT/aer_rootport_total_err_fatal) -gt $f0 ]"
ktap_expect "AER recovers it" "$(kernel_log | grep "$PORT" | tail -n 4)" \
	wait_for 20 recovered_past "$r0"
ktap_expect "rings down, function reset (bus reset), rings back, buffers credited" \
	"$(vfu_since "$n" | head -n 12)" wait_for 10 rings_cycled "$n" 1
ktap_expect "the netdev stays, up" "$(ip -br link show "$IF" 2>&1)" netdev_up

n=$(wc -l <"$VM_VFU_LOG")
r0=$(recoveries)
check "a non-fatal error (POISON_TLP) injected at the root port" aer_inject POISON_TLP
ktap_expect "AER recovers it" "$(kernel_log | grep "$PORT" | tail -n 4)" \
	wait_for 20 recovered_past "$r0"
ktap_expect "rings down and back, no reset between, buffers credited" \
	"$(vfu_since "$n" | head -n 12)" wait_for 10 rings_cycled "$n" 0
ktap_expect "the netdev stays bound" "driver $(readlink "$DEV/driver")" pci_bound
ktap_expect "no transmit timeout meanwhile (the log is the handlers')" \
	"tx_timeouts $(stat "$IF" tx_timeouts)" [ "$(stat "$IF" tx_timeouts)" = 0 ]

pci_dma_clean
kernel_log_clean "no kernel warning"

ktap_finish
