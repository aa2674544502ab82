#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# strongSwan (swanctl, IKEv2, PSK) on both ends: the host's CHILD_SA asks
# for hw_offload = yes (strongSwan 5.9.8's crypto offload; it has no packet
# offload), the peer's is software. The tunnel comes up with both states
# offloaded, carries traffic the peer's software ESP accepts, and four
# rekeys under a four-stream upload leave the stream running, the new
# states offloaded and the old ones' entries gone from the block.

source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/ipsec_lib.inc"
require_cmd ip ethtool devlink iperf3 python3 swanctl
CHARON=/usr/lib/ipsec/charon
[ -x "$CHARON" ] || ktap_skip_all "no $CHARON"

REKEYS=4
ktap_plan 13

ipsec_prepare
check "modules load" octep_load || ktap_finish
check "device 0 with 2 rings" octep_new 0 2 || ktap_finish
check "peer namespace behind the wire" peer_setup || ktap_finish

SS=$(mktemp -d)
on_exit "rm -rf $SS"

# ss_conf SIDE LOCAL REMOTE OFFLOAD: charon's and swanctl's configuration.
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

ss_conf host "$HOST_IP4" "$PEER_IP4" yes
ss_conf peer "$PEER_IP4" "$HOST_IP4" no
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

# Four rekeys during a four-stream upload.
res=$(mktemp)
in_peer iperf3 -s -D -1 --logfile /dev/null
wait_for 10 in_peer sh -c "ss -ltn | grep -q ':5201 '"
secs=$((REKEYS * 4 + 4))
iperf3 -c "$PEER_IP4" -t "$secs" -P 4 -J --connect-timeout 10000 >"$res" 2>/dev/null &
ipf=$!
rekeyed=0
for ((i = 0; i < REKEYS; i++)); do
	sleep 4
	timeout 30 swanctl --rekey --child net --uri "unix://$SS/host/charon.vici" \
		>/dev/null 2>&1 && rekeyed=$((rekeyed + 1))
done
wait "$ipf"
read -r mbps retr <<<"$(python3 -c 'import json,sys
j = json.load(open(sys.argv[1]))["end"]
print(int(j["sum_received"]["bits_per_second"]) // 1000000, j["sum_sent"].get("retransmits", -1))' "$res" 2>/dev/null)"
rm -f "$res"
[ "$rekeyed" = "$REKEYS" ] && ktap_ok "$REKEYS rekeys done under load" ||
	ktap_fail "$REKEYS rekeys done under load" "$rekeyed done"
[ "${mbps:-0}" -gt 0 ] && ktap_ok "the four streams completed across the rekeys ($mbps Mbit/s, $retr retransmits)" ||
	ktap_fail "the four streams completed across the rekeys" "$mbps Mbit/s"
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
