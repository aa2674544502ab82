#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# strongSwan (swanctl, IKEv2, PSK) on both ends: the host's CHILD_SA asks
# for hw_offload = yes (strongSwan 5.9.8's crypto offload; it has no packet
# offload), the peer's is software. The tunnel comes up with both states
# offloaded, carries traffic the peer's software ESP accepts, and four
# rekeys under a four-stream upload lose nothing (as defined below, where
# the upload runs), leave the new states offloaded and the old ones'
# entries gone from the block.

source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/ipsec_lib.inc"
require_cmd ip ethtool devlink iperf3 python3 swanctl
CHARON=/usr/lib/ipsec/charon
[ -x "$CHARON" ] || ktap_skip_all "no $CHARON"

REKEYS=4
ktap_plan 14

ipsec_prepare
check "modules load" octep_load || ktap_finish
check "device 0 with 2 rings" octep_new 0 2 || ktap_finish
check "peer namespace behind the wire" peer_setup || ktap_finish

SS=$(mktemp -d)
on_exit "rm -rf $SS"

# ss_conf SIDE LOCAL REMOTE OFFLOAD REPLAY: charon's and swanctl's
# configuration; REPLAY is the inbound CHILD_SA's replay window.
ss_conf()
{
	local d=$SS/$1

	mkdir -p "$d"
	cat >"$d/strongswan.conf" <<EOC
charon {
	load_modular = yes
	install_routes = no
	plugins {
		include /etc/strongswan.d/charon/*.conf
		bypass-lan {
			load = no
		}
		stroke {
			load = no
		}
		vici {
			socket = unix://$d/charon.vici
		}
	}
	filelog {
		log {
			path = $d/charon.log
			default = 1
			knl = 2
		}
	}
}
EOC
	cat >"$d/swanctl.conf" <<EOC
connections {
	gw {
		version = 2
		local_addrs = $2
		remote_addrs = $3
		proposals = aes128-sha256-modp2048
		local {
			auth = psk
			id = $1
		}
		remote {
			auth = psk
		}
		children {
			net {
				local_ts = $2/32
				remote_ts = $3/32
				mode = transport
				esp_proposals = aes128gcm16
				hw_offload = $4
				replay_window = $5
				rekey_time = 0
			}
		}
	}
}
secrets {
	ike-gw {
		secret = "octep-ipsec-selftest-psk"
	}
}
EOC
}

# The peer's window is wider than strongSwan's default of 32: the block
# takes up to 32 instructions from one ring, then from the next, so the
# packets of one association sent on two rings reach the wire reordered by
# more than 32. A 15 s four-stream upload with no rekey counted 83
# XfrmInStateSeqError at the peer with a window of 32 (2026-11-29), none
# with 1024. That is the device's reordering, not the rekeys' loss. The
# host reorders too: it numbers the packets before the qdisc, and
# fq_codel interleaves the inner flows of one association: with all four
# on one ring (a driver experiment, 2026-11-30) a window of 32 still
# counted 175 in 61 s.
ss_conf host "$HOST_IP4" "$PEER_IP4" yes 32
ss_conf peer "$PEER_IP4" "$HOST_IP4" no 1024
STRONGSWAN_CONF=$SS/host/strongswan.conf "$CHARON" >/dev/null 2>&1 &
on_exit "kill $!"
# The peer's charon in its own /run (its pid file would clash).
STRONGSWAN_CONF=$SS/peer/strongswan.conf ip netns exec "$PEER_NS" \
	unshare -m sh -c "mount -t tmpfs tmpfs /run && exec $CHARON" \
	>/dev/null 2>&1 &
on_exit "kill $!"
sw_host() { swanctl "$@" --uri "unix://$SS/host/charon.vici"; }
sw_peer() { swanctl "$@" --uri "unix://$SS/peer/charon.vici"; }
if wait_for 30 test -S "$SS/host/charon.vici" &&
   wait_for 30 test -S "$SS/peer/charon.vici" &&
   sw_host --load-all --file "$SS/host/swanctl.conf" >/dev/null &&
   sw_peer --load-all --file "$SS/peer/swanctl.conf" >/dev/null; then
	ktap_ok "charon up on both ends, configuration loaded"
else
	ktap_fail "charon up on both ends, configuration loaded" \
		"$(tail -20 "$SS"/*/charon.log 2>/dev/null)"
	ktap_finish
fi

out=$(timeout 60 swanctl --initiate --child net \
	--uri "unix://$SS/host/charon.vici" 2>&1)
n=$(ip xfrm state | grep -c "offload parameters")
[ "$n" = 2 ] && ktap_ok "the tunnel is up, both states offloaded" ||
	ktap_fail "the tunnel is up, both states offloaded" "$n offloaded
$(tail -5 <<<"$out")
$(ip xfrm state)"

tx0=$(stat "$HOST_IF" ipsec_tx_packets) rx0=$(stat "$HOST_IF" ipsec_rx_packets)
check "ping 5/5 through it" ping_ok "$PEER_IP4" 5
tx1=$(stat "$HOST_IF" ipsec_tx_packets) rx1=$(stat "$HOST_IF" ipsec_rx_packets)
[ $((tx1 - tx0)) -ge 5 ] && [ $((rx1 - rx0)) -ge 5 ] &&
	ktap_ok "the block carried it (tx $((tx1 - tx0)), rx $((rx1 - rx0)))" ||
	ktap_fail "the block carried it" "tx $((tx1 - tx0)) rx $((rx1 - rx0))"

# Four rekeys during a four-stream upload, and what "lose nothing" means
# here, each a case that can fail:
# - every rekey happened: each brought a new pair of SPIs (polled from
#   ip xfrm state; the next rekey waits for it);
# - no packet was lost to the change of association: none of the XFRM error
#   counters (/proc/net/xfrm_stat: no state, replay/sequence, ICV/protocol,
#   invalid or mismatched state, policy block, ...) moved on either end
#   (but the peer's XfrmOutStateInvalid, a race in its own kernel: see
#   below), and none of the driver's IPsec drop counters moved;
# - the upload never stalled: it completed, and no full 1 s interval the
#   receiver counted was empty or below 1/IVAL_DIV of the median interval,
#   unless the guest itself stood still then: a sampler notes every time
#   it was not scheduled for over GAP_S (the host, 2 cores shared by
#   several VMs, stops the whole VM; on resume every TCP timer fires at
#   once), and an interval within a second of such a gap is excused, and
#   printed. A stall that the rekey causes leaves the sampler running.
# TCP retransmits are printed: under TCG the emulated ring can drop for
# reasons that have nothing to do with the rekey.
SS_DROPS="ipsec_out_drop ipsec_in_drop ipsec_rx_bad_icv ipsec_rx_replay
ipsec_rx_no_entry ipsec_rx_malformed ipsec_rx_clear_drop mbox_timeouts
mbox_errors"
# The block's own: a packet for an entry just deleted, a failed command.
SS_SIM="tx_no_entry tx_bad tx_seq_overflow rx_bad_icv rx_replay rx_no_entry
rx_malformed mbox_failed mbox_timedout"
# The smallest 1 s interval the peer may count is the median's 1/IVAL_DIV.
# Measured on 2026-11-29 (TCG, 3 VMs on 2 cores), smallest / median: with
# rekeys 0.20 and 0.24 (885164 / 3618426 bytes), without 0.08 (the first
# interval, 96152 / 1148168) and 0.58. 1/50 leaves a margin of four below
# the worst; a stall is 0.
IVAL_DIV=50
GAP_S=0.5

declare -A SPIS
# spis_at_least N: adds the host's current SPIs to SPIS (not in a subshell:
# it keeps them); true once N distinct SPIs have been seen.
spis_at_least()
{
	local s

	for s in $(ip xfrm state | awk '$1 == "proto" && $3 == "spi" { print $4 }'); do
		SPIS[$s]=1
	done
	[ "${#SPIS[@]}" -ge "$1" ]
}

# counters: both ends' xfrm_stat and the driver's drop counters, "name value"
# per line.
counters()
{
	local c

	sed 's/^/host:/' /proc/net/xfrm_stat
	in_peer cat /proc/net/xfrm_stat | sed 's/^/peer:/'
	for c in $SS_DROPS; do
		echo "$c $(stat "$HOST_IF" "$c")"
	done
	for c in $SS_SIM; do
		echo "block:$c $(sim_read "ipsec/$c")"
	done
}

# other_drops: every other drop count of the driver and the model, which
# the rekeys do not explain (printed, not judged).
other_drops()
{
	ethtool -S "$HOST_IF" | awk '$1 ~ /drop|error|timeout/ { print "host:" $1, $2 }'
	grep -H . "$SIM_DBG"/ring*/*drop* "$SIM_DBG"/wire_drops 2>/dev/null |
		sed "s|^$SIM_DBG/||; s|:| |"
}

spis_at_least 2
res=$(mktemp)
c0=$(mktemp)
c1=$(mktemp)
o0=$(mktemp)
o1=$(mktemp)
on_exit "rm -f $res $c0 $c1 $o0 $o1"
counters >"$c0"
other_drops >"$o0"
in_peer iperf3 -s -D -1 -J --logfile /dev/null
wait_for 10 in_peer sh -c "ss -ltn | grep -q ':5201 '"
# A rekey took 2-10 s from its request under TCG (swanctl itself 1-7 s),
# so the upload gives each 14 s. On the debug kernel (KASAN, lockdep,
# kmemleak: 2-3x slower, charon with it) under load the rekeys were
# requested/installed at 10/12, 27/32 and 47/50 s and the fourth had not
# come by the upload's end at 61 s (make check-debug, 2026-11-30 03:35):
# there each gets 25 s.
per=14
[ -e /sys/kernel/debug/kmemleak ] && per=25
secs=$((REKEYS * per + 5))
gaps=$(mktemp)
on_exit "rm -f $gaps"
python3 - "$gaps" "$GAP_S" <<'EOF' &
import sys, time
out, limit = open(sys.argv[1], "w", buffering=1), float(sys.argv[2])
last = time.time()
while True:
    time.sleep(0.05)
    now = time.time()
    if now - last > limit:
        out.write("%.3f %.3f\n" % (last, now))
    last = now
EOF
smp=$!
on_exit "kill $smp 2>/dev/null"
t0=$SECONDS
t0_epoch=$(date +%s.%N)
iperf3 -c "$PEER_IP4" -t "$secs" -P 4 -J --get-server-output \
	--connect-timeout 10000 >"$res" 2>/dev/null &
ipf=$!
rekeyed=0
at=""
for ((i = 0; i < REKEYS; i++)); do
	sleep 2
	# Each rekey brings a new SPI each way: wait for both; it counts
	# only while the upload still runs.
	timeout 30 swanctl --rekey --child net --uri "unix://$SS/host/charon.vici" \
		>/dev/null 2>&1 || continue
	tr=$((SECONDS - t0))
	wait_for 15 spis_at_least $((2 * (i + 2))) || continue
	kill -0 "$ipf" 2>/dev/null || continue
	rekeyed=$((rekeyed + 1)) at="$at $tr/$((SECONDS - t0))"
done
wait "$ipf"
counters >"$c1"
other_drops >"$o1"
in_peer pkill -x iperf3 2>/dev/null
[ "$rekeyed" = "$REKEYS" ] &&
	ktap_ok "$REKEYS rekeys under load, each with a new SPI each way (${#SPIS[@]} SPIs seen; requested/installed at$at s of ${secs})" ||
	ktap_fail "$REKEYS rekeys under load, each with a new SPI each way" \
		"$rekeyed done (requested/installed at$at s of ${secs}); ${#SPIS[@]} SPIs seen: ${!SPIS[*]}"
delta() { awk 'NR == FNR { a[$1] = $2; next } $2 != a[$1] { printf "%s +%d ", $1, $2 - a[$1] }' "$1" "$2"; }
moved=$(delta "$c0" "$c1")
# The peer's own kernel may drop a packet (an ACK: the upload goes the
# other way) that chose its old outbound state just before charon deleted
# it: xfrm_output_one() counts it in XfrmOutStateInvalid. That race is in
# the software reference, not on the path the block offloads: printed,
# not judged. Everything on the host, the driver and the block stays.
excused=$(grep -o 'peer:XfrmOutStateInvalid +[0-9]*' <<<"$moved")
moved=$(sed 's/peer:XfrmOutStateInvalid +[0-9]* //' <<<"$moved")
[ -n "$excused" ] && ktap_diag "excused: $excused (the peer's software SA deleted under a packet)"
[ -z "$moved" ] &&
	ktap_ok "no packet lost to the rekeys: xfrm_stat both ends, the driver's and the block's drops unchanged" ||
	ktap_fail "no packet lost to the rekeys: xfrm_stat both ends, the driver's and the block's drops unchanged" \
		"moved: $moved"
ktap_diag "other drops during the upload: $(delta "$o0" "$o1")"
kill "$smp" 2>/dev/null
# Mbit/s, retransmits, full intervals, the smallest not excused, the
# median, the intervals excused by a gap (offset:bytes, none: -), and the
# intervals in MB (a stall's place against the rekeys' times).
read -r mbps retr nival minb medb excused ivals <<<"$(python3 -c 'import json, sys
j = json.load(open(sys.argv[1]))
t0, div = float(sys.argv[3]), int(sys.argv[4])
gaps = [tuple(float(x) - t0 for x in l.split()) for l in open(sys.argv[2])]
e = j["end"]
iv = [i["sum"] for i in j["server_output_json"]["intervals"]
      if i["sum"]["seconds"] > 0.5]
med = sorted(i["bytes"] for i in iv)[len(iv) // 2]
left, exc = [], []
for i in iv:
    if i["bytes"] > 0 and i["bytes"] * div >= med:
        left.append(i["bytes"])
    elif any(a < i["end"] + 1 and b > i["start"] - 1 for a, b in gaps):
        exc.append("%.0fs:%d" % (i["start"], i["bytes"]))
    else:
        left.append(i["bytes"])
print(int(e["sum_received"]["bits_per_second"]) // 1000000,
      e["sum_sent"].get("retransmits", -1), len(iv), min(left), med,
      ",".join(exc) or "-", ",".join("%.1f" % (i["bytes"] / 1e6) for i in iv))' \
	"$res" "$gaps" "$t0_epoch" "$IVAL_DIV" 2>/dev/null)"
stood=$(awk -v t0="$t0_epoch" '{ printf "%.1fs@%.0fs ", $2 - $1, $1 - t0 }' "$gaps")
ktap_diag "MB a second at the receiver: ${ivals:-?}"
ktap_diag "the guest stood still (length@offset): ${stood:-never over ${GAP_S}s}; intervals excused: ${excused:-?}"
if [ "${mbps:-0}" -gt 0 ] && [ "${nival:-0}" -ge $((secs * 3 / 4)) ] &&
   [ "${minb:-0}" -gt 0 ] && [ $((minb * IVAL_DIV)) -ge "$medb" ]; then
	ktap_ok "the four streams never stalled across the rekeys ($mbps Mbit/s; $nival 1 s intervals received, the smallest $minb bytes, median $medb; $retr retransmits)"
else
	ktap_fail "the four streams never stalled across the rekeys" \
		"${mbps:-?} Mbit/s; ${nival:-?} intervals (at least $((secs * 3 / 4))), smallest ${minb:-?} bytes (at least 1/$IVAL_DIV of the median), median ${medb:-?}; ${retr:-?} retransmits; $(tail -c 200 "$res")"
fi
# charon deletes a rekeyed inbound SA delete_rekeyed_delay (5 s) later.
offloaded() { [ "$(ip xfrm state | grep -c "offload parameters")" = 2 ]; }
wait_for 20 offloaded &&
	ktap_ok "after the rekeys: the new pair offloaded, the old ones gone" ||
	ktap_fail "after the rekeys: the new pair offloaded, the old ones gone" \
		"$(ip xfrm state | grep -c "offload parameters") offloaded, ipsec_states $(stat "$HOST_IF" ipsec_states), block $(sim_read ipsec/flows)
$(ip xfrm state)"
wait_for 10 sh -c "grep -q 'in 1 out 1' $SIM_DBG/ipsec/flows" &&
	ktap_ok "the block holds one entry each way" ||
	ktap_fail "the block holds one entry each way" "$(sim_read ipsec/flows)"
check "ping 5/5 after the rekeys" ping_ok "$PEER_IP4" 5
kernel_log_clean "no kernel warnings"
ktap_finish
