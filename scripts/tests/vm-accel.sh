#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Unit test of scripts/vm's choice of accelerator, with a stubbed QEMU: no
# guest boots. Each case runs `scripts/vm --print-accel` (and, for the
# fallback line, a run that stops at the missing kernel) against a stub
# whose KVM works, aborts as on hosts whose /dev/kvm cannot run a guest
# (exit 134 after "failed to set MSR"), hangs at the first instruction, or
# runs the probe's firmware but stops the kernel with "KVM internal error"
# and pauses (seen here: an emulation failure in the decompressor), never
# gets the kernel anywhere, or resets the guest before the kernel panics.
set -u

top=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
vm=$top/scripts/vm
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
pass=0
fail=0

check()
{
	local desc=$1 want=$2 got=$3

	# shellcheck disable=SC2053 # want is a glob
	if [[ $got == $want ]]; then
		pass=$((pass + 1))
		echo "ok $((pass + fail)) $desc"
	else
		fail=$((fail + 1))
		echo "not ok $((pass + fail)) $desc: got '$got', want '$want'"
	fi
}

# stub NAME MODE: a fake qemu-system-x86_64 that counts its calls. With
# -kernel (the second probe) a working one panics for want of a root and
# exits 0.
stub()
{
	cat >"$tmp/$1" <<STUB
#!/bin/sh
echo call >>"$tmp/$1.calls"
case " \$* " in
*" -kernel "*) kernel=1 ;;
*) kernel=0 ;;
esac
case $2 in
ok) [ \$kernel = 1 ] && echo "Kernel panic - not syncing: VFS: Unable to mount root fs"
    [ \$kernel = 1 ] && exit 0
    exit 3 ;;
abort) echo "error: failed to set MSR 0x10a to 0x69" >&2; exit 134 ;;
hang) exec sleep 30 ;;
emufail) [ \$kernel = 0 ] && exit 3
    echo "KVM internal error. Suberror: 1" >&2
    echo "emulation failure" >&2
    exec sleep 30 ;;
kernhang) [ \$kernel = 0 ] && exit 3
    exec sleep 30 ;;
reset) [ \$kernel = 0 ] && exit 3
    exit 0 ;;
esac
STUB
	chmod +x "$tmp/$1"
	: >"$tmp/$1.calls"
}

calls() { wc -l <"$tmp/$1.calls"; }

# accel STUB [VAR=VAL...]: what scripts/vm --print-accel says.
accel()
{
	local s=$1

	shift
	env VM_CACHE="$tmp/cache" VM_QEMU="$tmp/$s" VM_KVM_DEV="$tmp/kvm" \
	    VM_ACCEL_PROBE_TIMEOUT=2 VM_ACCEL_BOOT_TIMEOUT=2 "$@" "$vm" --kernel "$tmp/bzImage" \
	    --print-accel 2>&1
}
: >"$tmp/bzImage"

echo "TAP version 13"
echo "1..19"

stub ok ok
check "no /dev/kvm: TCG, no probe" "tcg (no $tmp/kvm)" "$(accel ok)"
check "no /dev/kvm: QEMU not run" 0 "$(calls ok)"

touch "$tmp/kvm"
chmod 600 "$tmp/kvm"
check "a working KVM is used" "kvm (*kernel ran*)" "$(accel ok)"
check "the probe ran once: the firmware, then the kernel" 2 "$(calls ok)"
accel ok >/dev/null
check "the second run takes the cached answer" 2 "$(calls ok)"

stub abort abort
check "KVM that aborts QEMU: TCG, with QEMU's error" \
	"tcg ($tmp/kvm cannot run a guest (probe: error: failed to set MSR*exit 134))" \
	"$(accel abort)"

stub hang hang
start=$SECONDS
check "KVM that hangs: TCG" "tcg ($tmp/kvm cannot run a guest*exit 124))" "$(accel hang)"
check "the hang costs the probe's timeout, not more" 1 \
	"$(( SECONDS - start <= 6 ))"

stub emufail emufail
start=$SECONDS
check "KVM that stops the kernel: TCG, with QEMU's error" \
	"tcg ($tmp/kvm cannot run the kernel (probe: KVM internal error*stopped by KVM))" \
	"$(accel emufail)"
check "the stopped kernel ends the probe at once" 1 \
	"$(( SECONDS - start <= 4 ))"

stub kernhang kernhang
start=$SECONDS
check "KVM whose kernel never gets anywhere: TCG" \
	"tcg ($tmp/kvm cannot run a guest*did not get to its panic in 2 s))" \
	"$(accel kernhang)"
check "the silent kernel costs the boot probe's timeout, not more" 1 \
	"$(( SECONDS - start <= 6 ))"

stub reset reset
check "KVM whose guest resets before the kernel's panic: TCG" \
	"tcg ($tmp/kvm cannot run a guest*reset before the kernel's panic))" \
	"$(accel reset)"

stub forced abort
check "VM_ACCEL=kvm: KVM, no probe" "kvm (VM_ACCEL=kvm)" "$(accel forced VM_ACCEL=kvm)"
check "VM_ACCEL=tcg: TCG, no probe" "tcg (VM_ACCEL=tcg)" "$(accel ok VM_ACCEL=tcg)"
check "VM_ACCEL forced: QEMU not run" 0 "$(calls forced)"
check "VM_ACCEL=bogus is refused" "vm: VM_ACCEL must be kvm or tcg*" \
	"$(accel ok VM_ACCEL=bogus)"
check "--icount is TCG whatever KVM does" "tcg (--icount needs TCG)" \
	"$(env VM_CACHE="$tmp/cache" VM_QEMU="$tmp/ok" VM_KVM_DEV="$tmp/kvm" \
	   "$vm" --icount --print-accel)"

# A real run prints the fallback's one line before it looks for the kernel.
line=$(env VM_CACHE="$tmp/cache" VM_QEMU="$tmp/abort" VM_KVM_DEV="$tmp/kvm" \
	"$vm" --kernel "$tmp/no-such-kernel" -- true 2>&1 | head -n 1)
check "a run says why it falls back, in one line" \
	"vm: $tmp/kvm cannot run a guest (probe: error: failed to set MSR*: using TCG" "$line"

echo "# $pass passed, $fail failed"
[ "$fail" -eq 0 ]
