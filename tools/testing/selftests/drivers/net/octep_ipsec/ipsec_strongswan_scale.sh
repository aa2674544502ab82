#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# A thousand site-to-site tunnels the way strongSwan 6 makes them: one
# IKE_SA, N children (N=1000, or SS_SCALE_N), child i between
# 10.1.<i/250>.<i%250+1> behind the host and 10.2.<...> behind the peer,
# tunnel mode, hw_offload = packet on the host, software on the peer.
# - charon starts them all itself (start_action = start): all N up with
#   both states offloaded, every child carries an echo (one ICMP echo
#   from each host address to its peer address, N of N answered, the
#   block's IPsec counters moved by N or more each way);
# - each child rekeyed (swanctl --rekey): none of the SPIs from before
#   left, 2N offloaded states again, every child carries an echo;
# - charon restarted (stopped, started, the configuration loaded): all N
#   up again, offloaded, every child carries an echo; the block holds N
#   entries each way, nothing of the old ones.
# Printed: the time to all-up, to all rekeyed and to all-up after the
# restart (guest seconds). Not in make check (minutes at N=1000 under
# TCG): make check-strongswan-scale runs it under Debian 13's userspace;
# SS_SCALE_N=20 checks it in a few minutes. Needs strongSwan 6.

source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/ipsec_lib.inc"
source "$(dirname "$0")/strongswan_lib.inc"
require_cmd ip ethtool python3 swanctl
[ -x "$CHARON" ] || ktap_skip_all "no $CHARON"
ssver=$("$CHARON" --version 2>&1 | sed -n 's/.*strongSwan \([0-9][0-9.]*\).*/\1/p' | head -n 1)
[ "${ssver%%.*}" -ge 6 ] 2>/dev/null ||
	ktap_skip_all "strongSwan ${ssver:-?} has no hw_offload = packet (6.0 and later)"

N=${SS_SCALE_N:-1000}
# How long all-up may take, guest seconds: at N=1000 under TCG minutes.
WAIT=${SS_SCALE_WAIT:-$((N * 2 + 120))}
ktap_plan 13

ipsec_prepare
check "modules load" octep_load || ktap_finish
check "device 0 with 2 rings" octep_new 0 2 || ktap_finish
check "peer namespace behind the wire" peer_setup || ktap_finish
# Room for a rekey's old and new pairs side by side.
sim_write ipsec/capacity_in $((2 * N + 16))
sim_write ipsec/capacity_out $((2 * N + 16))

# addr SIDE I: child I's address behind SIDE (1 the host, 2 the peer).
addr()
{
	echo "10.$1.$(($2 / 250)).$(($2 % 250 + 1))"
}

# The networks behind each end on lo, routed over the link; the inner
# destinations resolved on it (ipsec_tunnel_neigh says why).
mac=$(in_peer cat "/sys/class/net/$WIRE_IF/address")
hb=$(mktemp) pb=$(mktemp)
on_exit "rm -f $hb $pb"
for ((i = 0; i < N; i++)); do
	echo "addr add $(addr 1 "$i")/32 dev lo"
	echo "neigh replace $(addr 2 "$i") lladdr $mac dev $HOST_IF nud permanent"
done >"$hb"
for ((i = 0; i < N; i++)); do
	echo "addr add $(addr 2 "$i")/32 dev lo"
done >"$pb"
sysctl -qw net.ipv4.neigh.default.gc_thresh3=$((N + 1024))
if ip -batch "$hb" && in_peer ip -batch "$pb" &&
   ip route add 10.2.0.0/16 via "$PEER_IP4" dev "$HOST_IF" &&
   in_peer ip route add 10.1.0.0/16 via "$HOST_IP4" dev "$WIRE_IF"; then
	ktap_ok "$N networks behind each end, routed over the link"
else
	ktap_fail "$N networks behind each end, routed over the link"
	ktap_finish
fi

# conf SIDE LOCAL REMOTE OFFLOAD START L R: strongswan.conf (ss_conf's,
# without the kernel interface's messages, N children's would fill the
# log) and a
# swanctl.conf of N children c0..c<N-1>, child i from 10.L.i to 10.R.i.
conf()
{
	local d=$SS/$1 i

	ss_conf "$1" "$2" "$3" "$4" 1024
	sed -i 's/knl = 2/knl = 0/' "$d/strongswan.conf"
	{
		cat <<EOC
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
EOC
		for ((i = 0; i < N; i++)); do
			cat <<EOC
			c$i {
				local_ts = $(addr "$6" "$i")/32
				remote_ts = $(addr "$7" "$i")/32
				mode = tunnel
				start_action = $5
				esp_proposals = aes128gcm16
				hw_offload = $4
				replay_window = 1024
				rekey_time = 0
			}
EOC
		done
		cat <<EOC
		}
	}
}
secrets {
	ike-gw {
		secret = "octep-ipsec-selftest-psk"
	}
}
EOC
	} >"$d/swanctl.conf"
}
conf host "$HOST_IP4" "$PEER_IP4" packet start 1 2
conf peer "$PEER_IP4" "$HOST_IP4" no none 2 1

# charon_host: the host's charon, its pid in HOST_PID.
charon_host()
{
	STRONGSWAN_CONF=$SS/host/strongswan.conf "$CHARON" >/dev/null 2>&1 &
	HOST_PID=$!
	wait_for 30 test -S "$SS/host/charon.vici"
}

# n_offloaded: how many states the host has offloaded.
n_offloaded()
{
	ip xfrm state | grep -c "offload parameters"
}

# all_up: N children installed in charon, 2N states offloaded.
all_up()
{
	[ "$(sw_host --list-sas 2>/dev/null | grep -c ': #[0-9]*, reqid [0-9]*, INSTALLED, TUNNEL')" = "$N" ] &&
		[ "$(n_offloaded)" = $((2 * N)) ]
}

# up_state: what was up, for a failure.
up_state()
{
	echo "$(sw_host --list-sas 2>/dev/null | grep -c 'INSTALLED, TUNNEL') children installed," \
	     "$(n_offloaded) states offloaded, block $(sim_read ipsec/flows)"
	tail -n 5 "$SS/host/charon.log"
}

# echo_all: one ICMP echo from each host address to its peer's, up to
# three rounds for those unanswered; prints "answered of N".
echo_all()
{
	python3 - "$N" <<'EOF'
import os, select, socket, struct, sys, time
n = int(sys.argv[1])
def addr(side, i):
    return "10.%d.%d.%d" % (side, i // 250, i % 250 + 1)
def csum(b):
    s = sum(struct.unpack("!%dH" % (len(b) // 2), b))
    s = (s >> 16) + (s & 0xffff)
    return ~(s + (s >> 16)) & 0xffff
ident = os.getpid() & 0xffff
rx = socket.socket(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_ICMP)
# Room for every answer of a round (one a child) while Python reads
# them: the default buffer holds about a hundred frames.
rx.setsockopt(socket.SOL_SOCKET, 33, n * 8192)  # SO_RCVBUFFORCE
left = set(range(n))
for rnd in range(3):
    for i in sorted(left):
        hdr = struct.pack("!BBHHH", 8, 0, 0, ident, i) + b"octep-ipsec-"
        pkt = hdr[:2] + struct.pack("!H", csum(hdr)) + hdr[4:]
        s = socket.socket(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_ICMP)
        s.bind((addr(1, i), 0))
        s.sendto(pkt, (addr(2, i), 0))
        s.close()
    end = time.time() + 5
    while left and time.time() < end:
        if not select.select([rx], [], [], 0.5)[0]:
            continue
        d, src = rx.recvfrom(2048)
        ihl = (d[0] & 15) * 4
        t, _, _, rid, seq = struct.unpack("!BBHHH", d[ihl:ihl + 8])
        if t == 0 and rid == ident and seq in left and src[0] == addr(2, seq):
            left.discard(seq)
    if not left:
        break
print(n - len(left), "of", n, "missing:", " ".join("c%d" % i for i in sorted(left)[:10]))
EOF
}

# carried NAME: a case: every child answered, and the block's counters
# moved by N or more each way.
carried()
{
	local tx0 rx0 out

	tx0=$(stat "$HOST_IF" ipsec_tx_packets) rx0=$(stat "$HOST_IF" ipsec_rx_packets)
	out=$(echo_all 2>&1)
	tx=$(($(stat "$HOST_IF" ipsec_tx_packets) - tx0))
	rx=$(($(stat "$HOST_IF" ipsec_rx_packets) - rx0))
	[ "${out%% *}" = "$N" ] && [ "$tx" -ge "$N" ] && [ "$rx" -ge "$N" ] &&
		ktap_ok "$1: every child carries an echo, through the block" \
			"${out%% missing*} answered, block tx $tx rx $rx" ||
		ktap_fail "$1: every child carries an echo, through the block" \
			"$out; block tx $tx rx $rx; xfrm_stat: $(awk '$2 > 0' /proc/net/xfrm_stat | tr '\n' ' ')"
}

# Both charons; the peer's configuration first, then the host's, whose
# load starts the N children.
STRONGSWAN_CONF=$SS/peer/strongswan.conf ip netns exec "$PEER_NS" \
	unshare -m sh -c "mount -t tmpfs tmpfs /run && exec $CHARON" \
	>/dev/null 2>&1 &
on_exit "kill $!"
if charon_host && wait_for 30 test -S "$SS/peer/charon.vici" &&
   out=$(sw_peer --load-all --file "$SS/peer/swanctl.conf" 2>&1); then
	ktap_ok "charon up on both ends, the peer's $N children loaded"
else
	ktap_fail "charon up on both ends, the peer's $N children loaded" \
		"$(tail -5 <<<"${out:-}"; tail -20 "$SS"/*/charon.log 2>/dev/null)"
	ktap_finish
fi
on_exit 'kill $HOST_PID'

t0=$SECONDS
sw_host --load-all --file "$SS/host/swanctl.conf" >/dev/null 2>&1
if wait_for "$WAIT" all_up; then
	t_up=$((SECONDS - t0))
	ktap_ok "charon brings up $N children, 2N states offloaded" "all up in $t_up s"
else
	ktap_fail "charon brings up $N children, 2N states offloaded" \
		"after $((SECONDS - t0)) s: $(up_state)"
	ktap_finish
fi
carried "all up"

# Each child rekeyed: every SPI from before goes (charon deletes the old
# inbound SA delete_rekeyed_delay, 5 s, after the rekey).
old=$(ip xfrm state | awk '$1 == "proto" && $3 == "spi" { print $4 }' | sort)
none_old()
{
	[ -z "$(comm -12 <(ip xfrm state | awk '$1 == "proto" && $3 == "spi" { print $4 }' | sort) \
		<(echo "$old"))" ] && all_up
}
t0=$SECONDS
for ((i = 0; i < N; i++)); do
	sw_host --rekey --child "c$i" >/dev/null 2>&1
done
if wait_for "$WAIT" none_old; then
	t_rekey=$((SECONDS - t0))
	ktap_ok "$N children rekeyed: none of the old SPIs left, 2N offloaded" "in $t_rekey s"
else
	ktap_fail "$N children rekeyed: none of the old SPIs left, 2N offloaded" \
		"after $((SECONDS - t0)) s: $(comm -12 <(ip xfrm state | awk '$1 == "proto" && $3 == "spi" { print $4 }' | sort) \
			<(echo "$old") | wc -l) old SPIs left; $(up_state)"
fi
carried "after the rekeys"

# The restart: charon stopped (it removes its states and policies from
# the kernel, and so from the block), started, its configuration loaded.
t0=$SECONDS
kill "$HOST_PID"
gone() { ! kill -0 "$HOST_PID" 2>/dev/null; }
wait_for 120 gone
t_stop=$((SECONDS - t0))
rm -f "$SS/host/charon.vici"
if charon_host && sw_host --load-all --file "$SS/host/swanctl.conf" >/dev/null 2>&1 &&
   wait_for "$WAIT" all_up; then
	t_re=$((SECONDS - t0))
	ktap_ok "charon restarted: all $N children up again, offloaded" \
		"all up $t_re s after the stop ($t_stop s to stop)"
else
	ktap_fail "charon restarted: all $N children up again, offloaded" \
		"after $((SECONDS - t0)) s: $(up_state)"
fi
carried "after the restart"
flows() { grep -q "in $N out $N" "$SIM_DBG/ipsec/flows"; }
wait_for 30 flows &&
	ktap_ok "the block holds $N entries each way, none of the old" ||
	ktap_fail "the block holds $N entries each way, none of the old" "$(sim_read ipsec/flows)"
ktap_diag "N=$N: all up ${t_up:-?} s; all rekeyed ${t_rekey:-?} s; all up after the restart ${t_re:-?} s (guest s)"
kill "$HOST_PID" 2>/dev/null
wait_for 120 gone
kernel_log_clean "no kernel warnings"
ktap_finish
