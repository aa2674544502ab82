#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The DKMS install a gateway admin makes (make dkms-install, README): DKMS
# builds both modules from /usr/src for the running kernel and installs
# them under updates/dkms; modprobe loads those, modinfo describes every
# parameter, traffic flows through a device; make dkms-remove leaves
# nothing behind. The guest's /usr/src, the kernel's modules directory and
# /var/lib/dkms are the host's, read-only: overlays here take the writes.

source "$(dirname "$0")/lib.sh"
require_cmd dkms make gcc modinfo modprobe depmod readelf od xz
KVER=$(uname -r)
TOP=$(cd "$(dirname "$0")/../../../../../.." && pwd)
[ -e "/lib/modules/$KVER/build/Makefile" ] ||
	ktap_skip_all "no headers for $KVER (linux-headers-$KVER)"
[ -x "$TOP/scripts/dkms-install" ] || ktap_skip_all "no $TOP/scripts/dkms-install"
MODDIR=$(readlink -f "/lib/modules/$KVER")
VER=0-selftest

overlay_dirs /usr/src "$MODDIR" /var/lib/dkms
ovl=$LIB_OVL
octep_unload 2>/dev/null
ktap_plan 9

# The build under TCG: gcc is slow there (the host's 35 s of CPU), so
# the harness's limit must be raised (make check-dkms: TEST_TIMEOUT).
start=$SECONDS
log=$ovl/dkms-install.log
if (cd "$TOP" && VERSION=$VER timeout "${DKMS_TIMEOUT:-3000}" \
	make -s dkms-install) >"$log" 2>&1; then
	ktap_ok "make dkms-install: added, built and installed for $KVER" "in $((SECONDS - start)) s"
else
	ktap_fail "make dkms-install: added, built and installed for $KVER" \
		"after $((SECONDS - start)) s: $(tail -20 "$log"; tail -20 /var/lib/dkms/octep_ipsec/$VER/build/make.log 2>/dev/null)"
	ktap_finish
fi
st=$(dkms status -m octep_ipsec -v "$VER" -k "$KVER" 2>/dev/null)
grep -q "installed" <<<"$st" && ktap_ok "dkms status: installed" "$st" ||
	ktap_fail "dkms status: installed" "$st"

# modprobe finds the DKMS copies first (updates/ outranks kernel/).
paths=$(modinfo -n octep_ipsec octep_sim 2>&1)
[ "$(grep -c "/modules/$KVER/updates/dkms/octep_" <<<"$paths")" = 2 ] &&
	ktap_ok "modinfo -n: both modules from updates/dkms" ||
	ktap_fail "modinfo -n: both modules from updates/dkms" "$paths"

# Every parameter has a description: "parm: name:text (type)".
bad=$(modinfo octep_ipsec octep_sim 2>&1 | awk '
	/^parm:/ { n++; d = $0; sub(/^parm: *[^:]*:/, "", d)
		   if (d !~ /[[:alpha:]].* \(.*\)$/) print }
	END { if (!n) print "no parm line" }')
nparm=$(modinfo -F parm octep_ipsec octep_sim | wc -l)
[ -z "$bad" ] && ktap_ok "modinfo: every parameter described, with its type" "$nparm parameters" ||
	ktap_fail "modinfo: every parameter described, with its type" "$bad"

# build_id FILE: the GNU build ID of a module file, compressed or not.
build_id()
{
	case $1 in
	*.xz) xz -dc "$1" ;;
	*.zst) zstd -qdc "$1" ;;
	*.gz) gzip -dc "$1" ;;
	*) cat "$1" ;;
	esac >"$ovl/m.ko" && readelf -n "$ovl/m.ko" | sed -n 's/.*Build ID: *//p'
}

# The loaded module is the DKMS file: the build ID in its ELF note (past
# the note's 16-byte header in sysfs) is the installed file's.
if modprobe octep_sim && modprobe octep_ipsec; then
	# shellcheck disable=SC2034 # lib.sh unloads at exit
	LIB_LOADED=1
	loaded=$(od -An -v -tx1 -j16 /sys/module/octep_ipsec/notes/.note.gnu.build-id 2>/dev/null | tr -d ' \n')
	installed=$(build_id "$(modinfo -n octep_ipsec)" 2>/dev/null)
	[ -n "$loaded" ] && [ "$loaded" = "$installed" ] &&
		ktap_ok "modprobe loads the DKMS build" "build ID $loaded" ||
		ktap_fail "modprobe loads the DKMS build" "loaded ${loaded:-?}, installed ${installed:-?}"
else
	ktap_fail "modprobe loads the DKMS build" "$(dmesg | tail -5)"
	ktap_finish
fi
if octep_new 0 1 && peer_setup &&
   ping -c 5 -W 2 -i 0.2 "$PEER_IP4" >/dev/null; then
	ktap_ok "a device on the DKMS modules: ping 5/5 to the peer"
else
	ktap_fail "a device on the DKMS modules: ping 5/5 to the peer"
fi
peer_teardown 2>/dev/null
octep_unload

if out=$(cd "$TOP" && VERSION=$VER make -s dkms-remove 2>&1); then
	ktap_ok "make dkms-remove"
else
	ktap_fail "make dkms-remove" "$out"
fi
left=$( { ls -d "/usr/src/octep_ipsec-$VER" /var/lib/dkms/octep_ipsec \
	  "$MODDIR"/updates/dkms/octep_* 2>/dev/null;
	  modinfo -n octep_ipsec 2>/dev/null | grep updates; } )
[ -z "$left" ] && ktap_ok "nothing left: sources, DKMS tree, modules, modules.dep" ||
	ktap_fail "nothing left: sources, DKMS tree, modules, modules.dep" "$left"
kernel_log_clean "no kernel warnings"
ktap_finish
