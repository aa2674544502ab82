#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# strongSwan 6's packet offload (hw_offload = packet) as a site-to-site
# gateway runs it: tunnel mode between the networks behind each end, the
# host's CHILD_SA and its policies in the block, the peer's in software.
# - IPv4: up with both states and the policies offloaded, the block
#   carrying the traffic, swanctl --list-sas counting it, and four rekeys
#   under a four-stream upload losing nothing (strongswan_lib.inc);
# - IPv6: the same tunnel, offloaded, carries traffic;
# - a trap child (start_action = trap): the first packet makes the kernel
#   ask charon for a pair (an acquire), and the pair it negotiates is
#   offloaded.
# Needs strongSwan 6 (Debian 13's root: scripts/vm --root trixie); 5.x has
# no packet offload, and the test is skipped there.

source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/ipsec_lib.inc"
source "$(dirname "$0")/strongswan_lib.inc"
require_cmd ip ethtool devlink iperf3 python3 swanctl
[ -x "$CHARON" ] || ktap_skip_all "no $CHARON"
ssver=$("$CHARON" --version 2>&1 | sed -n 's/.*strongSwan \([0-9][0-9.]*\).*/\1/p' | head -n 1)
[ "${ssver%%.*}" -ge 6 ] 2>/dev/null ||
	ktap_skip_all "strongSwan ${ssver:-?} has no hw_offload = packet (6.0 and later)"

# shellcheck disable=SC2034 # read by strongswan_lib.inc
REKEYS=4
ktap_plan 21

ipsec_prepare
check "modules load" octep_load || ktap_finish
check "device 0 with 2 rings" octep_new 0 2 || ktap_finish
check "peer namespace behind the wire" peer_setup || ktap_finish

# ss_tunnel FAM [START]: both ends' configuration for a tunnel between the
# networks of ipsec_case tunnel FAM (loaded if the daemons run). The
# peer's replay window is wide for the reason ipsec_strongswan.sh gives.
ss_tunnel()
{
	ipsec_case tunnel "$1"
	ipsec_tunnel_neigh
	ss_conf host "$O_H" "$O_P" packet 32 tunnel "$I_H/$PL" "$I_P/$PL" "${2:-none}"
	ss_conf peer "$O_P" "$O_H" no 1024 tunnel "$I_P/$PL" "$I_H/$PL"
	[ -S "$SS/host/charon.vici" ] || return 0
	sw_host --load-all --file "$SS/host/swanctl.conf" >/dev/null &&
		sw_peer --load-all --file "$SS/peer/swanctl.conf" >/dev/null
}

# n_offloaded state|policy: how many the host has offloaded.
n_offloaded()
{
	ip xfrm "$1" | grep -c "offload parameters"
}

# up NAME: initiate the child; both states and the in/out policies
# offloaded (charon's forward policy stays in software: the kernel
# offloads no forward policy). A case.
up()
{
	local out s p

	out=$(timeout 60 swanctl --initiate --child net \
		--uri "unix://$SS/host/charon.vici" 2>&1)
	s=$(n_offloaded state) p=$(n_offloaded policy)
	[ "$s" = 2 ] && [ "$p" -ge 2 ] &&
		ktap_ok "$1: the tunnel is up, both states and the policies offloaded" "$p policies" ||
		ktap_fail "$1: the tunnel is up, both states and the policies offloaded" \
			"$s states, $p policies offloaded
$(tail -5 <<<"$out")
$(ip xfrm state)
$(ip xfrm policy)"
}

ss_tunnel 4
ss_start
up "IPv4"
ss_carried "$I_P" IPv4
# strongSwan 6.0 prints no offload flag; what shows it is the child's
# packet counts, which for a packet-offloaded pair only the block keeps:
# at least the pings, once the driver has read them (over the mailbox,
# once a second).
# sas_counted: sets sas and pkts ("IN OUT"); true when both are 5 or more.
sas_counted()
{
	sas=$(sw_host --list-sas 2>/dev/null)
	pkts=$(awk '$1 == "in" || $1 == "out" { n[$1] = $(NF - 1) }
		    END { print n["in"] + 0, n["out"] + 0 }' <<<"$sas")
	[ "${pkts% *}" -ge 5 ] && [ "${pkts#* }" -ge 5 ]
}
if wait_for 10 sas_counted && grep -q "net: .*INSTALLED, TUNNEL" <<<"$sas"; then
	ktap_ok "swanctl --list-sas: the child in tunnel mode, the block's counts" "in/out $pkts packets"
else
	ktap_fail "swanctl --list-sas: the child in tunnel mode, the block's counts" "$sas"
fi
ss_rekeys_under_load "$I_P"

sw_host --terminate --ike gw >/dev/null 2>&1
wait_for 20 sh -c '[ -z "$(ip xfrm state)" ]'
ss_tunnel 6
up "IPv6"
ss_carried "$I_P" IPv6

# The trap child: policies at load, states on demand.
sw_host --terminate --ike gw >/dev/null 2>&1
wait_for 20 sh -c '[ -z "$(ip xfrm state)" ]'
ss_tunnel 4 trap
s=$(ip xfrm state | grep -c "^src") p=$(n_offloaded policy)
[ "$s" = 0 ] && [ "$p" -ge 2 ] &&
	ktap_ok "trap: policies offloaded at load, no state yet" "$p policies" ||
	ktap_fail "trap: policies offloaded at load, no state yet" \
		"$s states, $p policies offloaded
$(ip xfrm policy)"
# The packets before the pair is in place are dropped by the hold; the
# first answered ping comes after the negotiation.
if wait_for 60 ping -c 1 -W 2 "$I_P" >/dev/null 2>&1; then
	ktap_ok "trap: the first traffic negotiated a pair, pings answered"
else
	ktap_fail "trap: the first traffic negotiated a pair, pings answered" \
		"$(sw_host --list-sas 2>&1 | tail -5)
$(tail -5 "$SS/host/charon.log")"
fi
[ "$(n_offloaded state)" = 2 ] && ping_ok "$I_P" 5 &&
	ktap_ok "trap: the negotiated pair is offloaded and carries traffic" ||
	ktap_fail "trap: the negotiated pair is offloaded and carries traffic" \
		"$(ip xfrm state)"
kernel_log_clean "no kernel warnings"
ktap_finish
