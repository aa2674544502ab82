#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Unit test of scripts/setup against stubbed dpkg-query and apt-get (PATH
# shims): every package present, some missing, none installed, apt-get
# update failing, apt-get install failing. Nothing is installed: the stubs
# log what they were asked, and setup stops after the packages.
set -u

top=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
pass=0
fail=0

check()
{
	local desc=$1

	shift
	if "$@"; then
		pass=$((pass + 1))
		echo "ok $((pass + fail)) $desc"
	else
		fail=$((fail + 1))
		echo "not ok $((pass + fail)) $desc"
		sed 's/^/#   /' "$tmp/out"
	fi
}

mkdir -p "$tmp/bin"
# dpkg-query -W -f=FMT PKG...: as the real one, a line for each installed
# package named ($tmp/installed lists them) and exit 1 if any is not.
cat >"$tmp/bin/dpkg-query" <<EOF2
#!/bin/bash
rc=0
for p in "\$@"; do
	case \$p in -*) continue ;; esac
	if grep -qxF -- "\$p" "$tmp/installed"; then
		echo "\$p install ok installed"
	else
		echo "dpkg-query: no packages found matching \$p" >&2
		rc=1
	fi
done
exit \$rc
EOF2
# apt-get: logs its arguments; APT_FAIL=update|install makes that fail as
# apt does, with its own message and status 100.
cat >"$tmp/bin/apt-get" <<EOF2
#!/bin/bash
echo "\$*" >>"$tmp/apt.log"
if [ -n "\${APT_FAIL:-}" ] && [ "\$1" = "\$APT_FAIL" ]; then
	echo "E: stubbed apt-get \$1 failure" >&2
	exit 100
fi
[ "\$1" = install ] && [ ! -x "$tmp/policy-rc.d" ] && echo "policy-rc.d missing during install" >&2
exit 0
EOF2
chmod +x "$tmp/bin/dpkg-query" "$tmp/bin/apt-get"

# What setup asks for, from its own list (so the test follows it).
# shellcheck source=../kernel-version
. "$top/scripts/kernel-version"
mapfile -t all < <(sed -n '/^pkgs=(/,/^)/p' "$top/scripts/setup" | sed '1d;$d' |
		   sed "s/\"//g; s/\\\$KVER_PKG/$KVER_PKG/g; s/\\\$KSRC_SERIES/$KSRC_SERIES/g" |
		   tr -s ' \t' '\n' | grep -v '^$')

# run [VAR=VAL...]: scripts/setup with the stubs; status in $rc.
run()
{
	: >"$tmp/apt.log"
	env PATH="$tmp/bin:$PATH" SETUP_PACKAGES_ONLY=1 \
	    SETUP_POLICY_RC="$tmp/policy-rc.d" "$@" \
	    bash "$top/scripts/setup" >"$tmp/out" 2>&1
	rc=$?
}

said() { grep -qF -- "$1" "$tmp/out"; }
asked() { grep -q -- "$1" "$tmp/apt.log"; }

echo "TAP version 13"
echo "1..13"

check "the package list was read (${#all[@]} packages)" [ "${#all[@]}" -gt 20 ]

printf '%s\n' "${all[@]}" >"$tmp/installed"
run
check "all present: exit 0" [ "$rc" -eq 0 ]
check "all present: apt-get not run" [ ! -s "$tmp/apt.log" ]
check "all present: says so" said "all ${#all[@]} packages present"

# Some missing: the first and a middle one; dpkg-query exits 1.
printf '%s\n' "${all[@]}" | sed '1d;5d' >"$tmp/installed"
run
check "some missing: exit 0" [ "$rc" -eq 0 ]
check "some missing: says which it installs" \
	said "installing: ${all[0]} ${all[4]}"
check "some missing: installs exactly those" \
	grep -qxF "install -y -q --no-install-recommends ${all[0]} ${all[4]}" "$tmp/apt.log"
check "some missing: policy-rc.d held services during install and is gone" \
	eval '! said "policy-rc.d missing" && [ ! -e "$tmp/policy-rc.d" ]'

: >"$tmp/installed"
run
check "none installed: all ${#all[@]} asked for" \
	grep -qxF "install -y -q --no-install-recommends ${all[*]}" "$tmp/apt.log"

printf '%s\n' "${all[@]}" | sed '3d' >"$tmp/installed"
run APT_FAIL=install
check "apt-get install fails: setup exits with apt's status (100)" [ "$rc" -eq 100 ]
check "apt-get install fails: apt's error is shown" said "E: stubbed apt-get install failure"
check "apt-get install fails: policy-rc.d removed" [ ! -e "$tmp/policy-rc.d" ]

run APT_FAIL=update
check "apt-get update fails: exit 100, apt's error, no install" \
	eval '[ "$rc" -eq 100 ] && said "E: stubbed apt-get update failure" && ! asked "^install"'

echo "# $pass passed, $fail failed"
[ "$fail" -eq 0 ]
