#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The Debian package as a gateway admin installs it: `apt install
# ./octep-ipsec-dkms_VERSION_all.deb` (make deb) with no network, dkms
# and the running kernel's headers already there (the Debian 13 guest
# root has them: scripts/guest-root). DKMS builds both modules for
# `uname -r` in the package's postinst; modprobe loads them and a device
# comes up and carries a ping; `apt purge` leaves no module, no source
# and no DKMS tree entry behind. The package is the newest in the repo's
# out/deb/ (DEB names another): scripts/check builds it before the Debian
# 13 boot; without one the test is skipped, saying so. The kernel's
# modules directory is the host's, read-only: an overlay here takes the
# writes, as /usr/src's and /var/lib/dkms's do (the guest root's own
# overlay would keep them only until the boot ends, a later test in the
# same boot would see them).

source "$(dirname "$0")/lib.sh"
require_cmd apt dpkg dkms modprobe modinfo depmod
KVER=$(uname -r)
TOP=$(cd "$(dirname "$0")/../../../../../.." && pwd)
PKG=octep-ipsec-dkms
[ -e "/lib/modules/$KVER/build/Makefile" ] ||
	ktap_skip_all "no headers for $KVER (linux-headers-$KVER): the Debian 13 guest root has them"
if [ -z "${DEB:-}" ]; then
	DEB=$(ls -t "$TOP"/out/deb/${PKG}_*_all.deb 2>/dev/null | head -n 1)
fi
[ -f "$DEB" ] ||
	ktap_skip_all "no out/deb/${PKG}_*_all.deb: run make deb first (scripts/check does, before the Debian 13 boot)"
dpkg -s "$PKG" >/dev/null 2>&1 &&
	ktap_skip_all "$PKG is installed already: this test installs and purges it"
VER=$(dpkg-deb -f "$DEB" Version)
MODDIR=$(readlink -f "/lib/modules/$KVER")

overlay_dirs /usr/src "$MODDIR" /var/lib/dkms
tmp=$LIB_OVL
# A failed run must not leave the package for the next test: purge it
# (before the overlays go, which run later: on_exit runs newest first).
on_exit "dpkg -s $PKG >/dev/null 2>&1 && DEBIAN_FRONTEND=noninteractive apt-get purge -y $PKG"
octep_unload 2>/dev/null
# apt reads a local package as its _apt user: a copy on the guest's
# tmpfs, readable by it, not the repo's 9p mount.
mkdir -p "$tmp/deb"
cp "$DEB" "$tmp/deb/"
chmod 755 "$tmp" "$tmp/deb"
chmod 644 "$tmp/deb/"*
deb=$tmp/deb/${DEB##*/}
ktap_plan 8

# The DKMS build under TCG: gcc is slow there, the postinst takes minutes.
start=$SECONDS
log=$tmp/apt-install.log
if (cd "$tmp/deb" && DEBIAN_FRONTEND=noninteractive timeout "${DEB_TIMEOUT:-3000}" \
	apt install -y "./${deb##*/}") >"$log" 2>&1 &&
   [ "$(dpkg-query -W -f '${db:Status-Status} ${Version}' "$PKG" 2>/dev/null)" = "installed $VER" ]; then
	ktap_ok "apt install ./${PKG}_VERSION_all.deb, offline" "$VER in $((SECONDS - start)) s"
else
	ktap_fail "apt install ./${PKG}_VERSION_all.deb, offline" \
		"after $((SECONDS - start)) s: $(tail -20 "$log"; tail -20 /var/lib/dkms/octep_ipsec/"$VER"/build/make.log 2>/dev/null)"
	ktap_finish
fi

st=$(dkms status -m octep_ipsec -v "$VER" -k "$KVER" 2>&1)
grep -q "installed" <<<"$st" && ktap_ok "dkms status: built and installed for $KVER" "$st" ||
	ktap_fail "dkms status: built and installed for $KVER" "$st"

# Both modules, under updates/dkms of the running kernel, which modprobe
# prefers to anything under kernel/, built for it.
ok=1
why=
for m in octep_ipsec octep_sim; do
	p=$(modinfo -n "$m" 2>&1)
	vm=$(modinfo -F vermagic "$m" 2>&1)
	case $p in
	*"/modules/$KVER/updates/dkms/$m.ko"*) ;;
	*) ok=0 ;;
	esac
	[ "${vm%% *}" = "$KVER" ] || ok=0
	why+="$m: $p ($vm); "
done
[ "$ok" = 1 ] && ktap_ok "both modules in updates/dkms, built for $KVER" "$why" ||
	ktap_fail "both modules in updates/dkms, built for $KVER" "$why"

# The netdev a model device brings up, and a ping through it.
if modprobe octep_sim && modprobe octep_ipsec; then
	# shellcheck disable=SC2034 # lib.sh unloads at exit
	LIB_LOADED=1
	if octep_new 0 1 && [ -n "$HOST_IF" ] && peer_setup &&
	   ping -c 3 -W 2 -i 0.2 "$PEER_IP4" >/dev/null; then
		ktap_ok "modprobe: the driver's netdev comes up, ping 3/3" "$HOST_IF"
	else
		ktap_fail "modprobe: the driver's netdev comes up, ping 3/3" "${HOST_IF:-no netdev}"
	fi
else
	ktap_fail "modprobe: the driver's netdev comes up, ping 3/3" "$(dmesg | tail -5)"
fi
peer_teardown 2>/dev/null
octep_unload

start=$SECONDS
if out=$(DEBIAN_FRONTEND=noninteractive apt purge -y "$PKG" 2>&1) &&
   ! dpkg-query -W -f '${db:Status-Status}' "$PKG" 2>/dev/null | grep -q .; then
	ktap_ok "apt purge $PKG: dpkg forgets it" "in $((SECONDS - start)) s"
else
	ktap_fail "apt purge $PKG: dpkg forgets it" \
		"$(tail -10 <<<"$out"; dpkg -l "$PKG" 2>&1 | tail -1)"
fi
left=$( { ls -d /usr/src/octep_ipsec-* /usr/src/octep-ipsec-* \
	  /var/lib/dkms/octep_ipsec "$MODDIR"/updates/dkms/octep_* 2>/dev/null;
	  dkms status -m octep_ipsec 2>/dev/null; } )
[ -z "$left" ] && ktap_ok "nothing left: sources, DKMS tree, modules" ||
	ktap_fail "nothing left: sources, DKMS tree, modules" "$left"
# modules.dep names the modules no more: modprobe finds none.
p=$(modinfo -n octep_ipsec octep_sim 2>/dev/null)
[ -z "$p" ] && ktap_ok "modprobe finds neither module after the purge" ||
	ktap_fail "modprobe finds neither module after the purge" "$p"
kernel_log_clean "no kernel warnings"
ktap_finish
