#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Unit test of scripts/dmesg-scan on saved kernel logs (dmesg/*.log): the
# clean ones (a real boot of the pinned kernel in scripts/vm, and benign
# lines that look alike) must pass; each kind of splat must be caught and
# printed whole. A log with a .syms file beside it is scanned with it as
# OCTEP_KSYMS (module symbols lib.sh saved): its report's bare module
# addresses must come out symbolized. KTAP output; exit 0 when all cases
# pass.

dir=$(cd "$(dirname "$0")" && pwd)
scan=$dir/../dmesg-scan
n=0
fails=0

result()
{
	n=$((n + 1))
	if [ "$1" = ok ]; then
		echo "ok $n $2"
	else
		fails=$((fails + 1))
		echo "not ok $n $2"
	fi
}

# expect LOG clean|splat [TEXT-IN-REPORT...] [!TEXT-NOT-IN-REPORT...]
expect()
{
	local log=$1 want=$2 out rc t ok=ok syms=$dir/dmesg/${1%.log}.syms

	shift 2
	[ -f "$syms" ] || syms=
	out=$(OCTEP_KSYMS=$syms "$scan" "$dir/dmesg/$log")
	rc=$?
	case $want in
	clean) [ "$rc" -eq 0 ] || ok=fail ;;
	splat) [ "$rc" -eq 1 ] || ok=fail ;;
	esac
	for t in "$@"; do
		case $t in
		!*) grep -qF -- "${t#!}" <<<"$out" && ok=fail ;;
		*) grep -qF -- "$t" <<<"$out" || ok=fail ;;
		esac
	done
	[ "$ok" = ok ] || echo "$out" | sed 's/^/# /'
	result "$ok" "dmesg-scan $log is $want"
}

echo "TAP version 13"
echo "1..10"
expect clean-boot.log clean
expect benign.log clean
expect warn.log splat "cut here" "octep_rx_poll" "end trace" "1 kernel report" \
	"!link down" "!link up"
expect kasan.log splat "BUG: KASAN: slab-use-after-free" "kasan_report"
expect lockdep.log splat "possible circular locking"
expect hung.log splat "INFO: task rmmod:512 blocked"
expect oops.log splat "NULL pointer dereference" "Kernel panic" "1 kernel report"
expect kmemleak.log splat "unreferenced object"
expect kmemleak-module.log splat "[<ffffffffa000705c>] osim_wire_skb+0x15c/0x200 [octep_sim]" \
	"osim_tx+0x124/0x300 [octep_sim]" "osim_engine_fn+0x179/0x200 [octep_sim]" \
	"0xffffffffc0000010" "build_skb+0x14/0xb0" "!0xffffffffa000"
expect unregister.log splat "waiting for eth0 to become free" "1 kernel report" \
	"!octep_sim: loading"
echo "# Totals: pass:$((n - fails)) fail:$fails xfail:0 xpass:0 skip:0 error:0"
[ "$fails" -eq 0 ]
