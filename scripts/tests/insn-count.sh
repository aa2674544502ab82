#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Unit test of scripts/insn-count.c, the QEMU plugin behind scripts/vm
# --insns: built as scripts/vm builds it, it must load into this host's
# QEMU and count exactly. The guest is a 64 KiB firmware whose reset
# vector runs "mov cx, 1000; l: dec cx; jnz l; mov al, 1; out 0xf4, al;
# hlt": 3 + 999 * 2 + 3 = 2004 instructions on vCPU 0 (the loop's first
# pass is in the first block), none on vCPU 1 (it waits for a SIPI), and
# QEMU exits with the debug port's status. The reset vector's code runs at
# 0xfffffff0 (CS base 0xffff0000): with range= naming the loop's block
# (0xfffffff3, dec and jnz) and the first one (0xfffffff0), those count
# 1998 and 3 of the 2004.
set -u

top=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# shellcheck source=tap.inc
. "$top/scripts/tests/tap.inc"

cc -O2 -Wall -Wextra -Werror -shared -fPIC -fvisibility=hidden -pthread \
	-o "$tmp/insn-count.so" "$top/scripts/insn-count.c" 2>"$tmp/cc.log"
rc=$?
t "builds without a warning" '[ $rc -eq 0 ]' "$(head -c 600 "$tmp/cc.log")"
{ head -c 65520 /dev/zero; printf '\271\350\003\111\165\375\260\001\346\364\364';
  head -c 5 /dev/zero; } >"$tmp/fw.bin"
run()
{
	timeout -k 2 60 "${VM_QEMU:-qemu-system-x86_64}" -nodefaults \
		-no-user-config -display none -accel tcg -smp 2 -m 16M \
		-bios "$tmp/fw.bin" -device isa-debug-exit,iobase=0xf4,iosize=0x04 \
		-plugin "$tmp/insn-count.so,$1" </dev/null >"$tmp/qemu.log" 2>&1
}
# counts WHAT OUT [ARGS]: QEMU runs the firmware to its exit port with the
# plugin's out=OUT,vcpus=2 and ARGS, and OUT has 2004 on vCPU 0.
counts()
{
	# Globals: t's eval has its own positional parameters.
	out=$2
	run "out=$out,vcpus=2${3:+,$3}"
	rc=$?
	t "$1: QEMU loads it and runs the firmware to its exit port" \
		'[ $rc -eq 3 ]' "$(head -c 600 "$tmp/qemu.log")"
	t "$1: 2004 instructions on vCPU 0, none on vCPU 1" \
		'[ "$(cat "$out" 2>/dev/null)" = "2004 0" ]' \
		"got '$(cat "$out" 2>/dev/null)'"
}
counts "no ranges" "$tmp/insns"
t "no temporary file left" '[ ! -e "$tmp/insns.tmp" ]'
t "no ranges file without range=" '[ ! -e "$tmp/insns.ranges" ]'
printf 'fffffff3 fffffff6 loop\n\nFFFFFFF0 fffffff3 first\nfffffff7 fffffff8\n' \
	>"$tmp/ranges"
counts "range=" "$tmp/rinsns" "range=$tmp/ranges"
# shellcheck disable=SC2034 # read by t's eval
want=$'gen 1\nfffffff3 fffffff6 loop 1998 0\nfffffff0 fffffff3 first 3 0\nfffffff7 fffffff8 - 0 0'
t "1998 in the loop's range, 3 in the first block's, 0 in mid-block" \
	'[ "$(cat "$tmp/rinsns.ranges" 2>/dev/null)" = "$want" ]' \
	"got '$(cat "$tmp/rinsns.ranges" 2>/dev/null)'"
t "no temporary ranges file left" '[ ! -e "$tmp/rinsns.ranges.tmp" ]'
printf 'fffffff3 fffffff0 backwards\n' >"$tmp/ranges"
run "out=$tmp/rbad,vcpus=2,range=$tmp/ranges"
rc=$?
t "a range file with START >= END refused: QEMU does not start" \
	'[ $rc -ne 3 ] && [ ! -e "$tmp/rbad" ] && grep -q "line 1: not START END" "$tmp/qemu.log"' \
	"$(head -c 300 "$tmp/qemu.log")"
rm -f "$tmp/ranges"
counts "a range file not there yet" "$tmp/late" "range=$tmp/ranges"
t "a range file not there yet: no ranges" \
	'[ "$(cat "$tmp/late.ranges" 2>/dev/null)" = "gen 0" ]' \
	"got '$(cat "$tmp/late.ranges" 2>/dev/null)'"
run "out=$tmp/bad,vcpus=0"
rc=$?
t "vcpus=0 refused: QEMU does not start" \
	'[ $rc -ne 3 ] && [ ! -e "$tmp/bad" ] && grep -q "needs out=FILE and vcpus=1\.\." "$tmp/qemu.log"' \
	"$(head -c 300 "$tmp/qemu.log")"
run "vcpus=2,bogus=1"
# shellcheck disable=SC2034 # read by t's eval
rc=$?
t "an unknown argument refused" '[ $rc -ne 3 ] && grep -q "unknown argument bogus=1" "$tmp/qemu.log"'
tap_end
