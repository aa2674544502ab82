#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The block's policy table (packet offload, ipsec_flows 2), from the user's
# side. Packet-offload policies are installed in the block, which then
# decides for every packet the host sends and receives; the stack trusts
# it: Linux puts a packet-offload policy at the head of its hash chain
# whatever its priority, and lets clear text under a packet-offload IPsec
# policy through, so what the block gets wrong reaches the wire or a
# socket. Against a software-ESP peer, in tunnel mode:
#  - the policies land in the block and leave it on `ip xfrm policy flush`;
#  - priority decides, not the order of insertion: a priority-10 UDP
#    allow added after the priority-100 "any" tunnel policy lets that
#    port out in clear, the rest is still encapsulated;
#  - inbound, clear text under a block policy is dropped
#    (ipsec_rx_policy_block, XfrmInPolBlock), under the tunnel's policy
#    too (ipsec_rx_clear_drop), and an allow of higher priority for a
#    port (an IKE port's bypass) lets it through. The block policy is
#    added before the tunnel's and the allow after it, so that neither
#    oldest-first nor newest-first would pass;
#  - a forward policy, an optional template, the icmp flag and reqid 0
#    are refused with their reason (the block would not enforce them as
#    the stack does); the forward policy goes in software instead; a
#    template naming an SPI (as strongSwan's outbound ones do) is taken;
#  - a socket with its own outbound bypass policy (what charon sets on its
#    IKE sockets) sends in clear under the "any" policy, a plain socket's
#    datagrams to the same port are encapsulated;
#  - what an SA of reqid 2 decrypted under a template of reqid 1 is
#    dropped (ipsec_rx_tmpl_mismatch, XfrmInTmplMismatch);
#  - with 1024 more tunnel policies and SAs added after the peer's, its
#    traffic still finds its own policy and SA, and the flush empties the
#    table.

# shellcheck disable=SC2317 # functions called through check and wait_for
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/ipsec_lib.inc"
require_cmd ip ss ethtool devlink python3

N=10			# datagrams per UDP case
MANY=1024		# the many-policies case's extra tunnels
P_CLEAR=5001		# host -> peer: an outbound allow above the tunnel's
P_BLOCK=5002		# peer -> host: an inbound block policy
P_IPSEC=5003		# peer -> host: only the tunnel's inbound policy
P_BYPASS=5004		# peer -> host: an inbound allow above the tunnel's
P_SOCK=5005		# host -> peer: the socket-policy bypass

ktap_plan 27

ipsec_prepare
check "modules load" octep_load || ktap_finish
check "device 0" octep_new 0 1 || ktap_finish
check "peer namespace behind the wire" peer_setup || ktap_finish
check "ipsec_flows 2: both directions in the block" ipsec_flows 2 ||
	ktap_finish

# hpol ARGS...: xfrm_nl.py policy ARGS, offloaded (packet) to HOST_IF.
hpol()
{
	python3 "$XFRM_NL" policy "$@" --offload packet --dev "$HOST_IF"
}

# block_pols IN OUT: the block holds IN inbound and OUT outbound policies.
block_pols()
{
	[ "$(sim_read ipsec/policies)" = "in $1 out $2" ]
}

# counter KEY: a counter's value now. KEY is a HOST_IF ethtool -S name, a
# model counter (sim:NAME, debugfs ipsec/NAME), a /proc/net/xfrm_stat
# counter (Xfrm*) or the packets of the peer's state (peer:SPI).
counter()
{
	local v

	case $1 in
	sim:*) v=$(sim_read "ipsec/${1#sim:}") ;;
	Xfrm*) v=$(xfrm_stat "$1") ;;
	peer:*) v=$(peer_sa_packets "${1#peer:}"); v=${v:-0} ;;
	*) v=$(stat "$HOST_IF" "$1") ;;
	esac
	# A counter not found reads "?", never 0: "moved 0" must be seen.
	echo "${v:-?}"
}

declare -A MARK

# mark KEY...: remember the counters' values now.
mark()
{
	local k

	for k in "$@"; do
		MARK[$k]=$(counter "$k")
	done
}

# moved KEY: how much KEY moved since mark.
moved()
{
	local now

	now=$(counter "$1")
	case "$now ${MARK[$1]}" in
	*"?"*) echo "?" ;;
	*) echo $((now - MARK[$1])) ;;
	esac
}

# moves KEY...: "KEY +N" for each, for a diagnostic.
moves()
{
	local k out=()

	for k in "$@"; do
		out+=("$k +$(moved "$k")")
	done
	echo "${out[*]}"
}

UDP_RECV='
import os, socket, sys
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.bind((sys.argv[1], int(sys.argv[2])))
want, stop = int(sys.argv[3]), sys.argv[4]
s.settimeout(1)
n = 0
while n < want:
    try:
        s.recv(2048)
        n += 1
    except socket.timeout:
        if os.path.exists(stop):
            break
print(n)
'

# The bypass is struct xfrm_userpolicy_info: a selector of AF_INET that
# matches everything, infinite lifetimes, dir OUT, action ALLOW, and no
# template after it (as charon sets it on its IKE sockets).
UDP_SEND='
import socket, struct, sys, time
dst, port, n = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
if sys.argv[4] == "bypass":
    IP_XFRM_POLICY, XFRM_POLICY_OUT, XFRM_POLICY_ALLOW = 17, 1, 0
    INF = (1 << 64) - 1
    sel = struct.pack("=16s16sHHHHHBBBxxxiI", b"", b"", 0, 0, 0, 0,
                      socket.AF_INET, 0, 0, 0, 0, 0)
    lft = struct.pack("=8Q", INF, INF, INF, INF, 0, 0, 0, 0)
    info = sel + lft + bytes(32) + struct.pack(
        "=IIBBBBxxxx", 0, 0, XFRM_POLICY_OUT, XFRM_POLICY_ALLOW, 0, 0)
    s.setsockopt(socket.IPPROTO_IP, IP_XFRM_POLICY, info)
for i in range(n):
    s.sendto(b"policy test %d" % i, (dst, port))
    time.sleep(0.02)
'

# run_in host|peer CMD...
run_in()
{
	local where=$1

	shift
	if [ "$where" = peer ]; then
		in_peer "$@"
	else
		"$@"
	fi
}

# udp_count FROM DST PORT N [bypass]: FROM (host or peer) sends N UDP
# datagrams to DST:PORT, from a socket with an outbound bypass policy if
# asked; prints how many a socket bound to DST:PORT on the other side got
# (it counts until a second passes without one after the sender is done),
# and what went wrong if the test could not send.
udp_count()
{
	local from=$1 dst=$2 port=$3 n=$4 how=${5:-plain} to=peer ns=$PEER_NS
	local out stop pid err

	[ "$from" = peer ] && to=host ns=
	out=$(mktemp)
	stop=$(mktemp -u)
	run_in "$to" python3 -c "$UDP_RECV" "$dst" "$port" "$n" "$stop" \
		>"$out" &
	pid=$!
	if ! wait_for 20 udp_bound "$port" "$ns"; then
		err="no socket bound on the $to"
	elif ! err=$(run_in "$from" python3 -c "$UDP_SEND" "$dst" "$port" \
			"$n" "$how" 2>&1); then
		err="the sender failed: $(tail -1 <<<"$err")"
	else
		err=
	fi
	touch "$stop"
	wait "$pid"
	echo "$(cat "$out")${err:+ ($err)}"
	rm -f "$out" "$stop"
}

# peer_allow_in PORT / peer_bypass_out PORT: the peer's software policies
# at priority 1 (above its tunnel's 10) that let clear UDP to PORT in, or
# out to the host.
peer_allow_in()
{
	in_peer ip xfrm policy add src "$I_H/$PL" dst "$I_P/$PL" proto udp \
		dport "$1" dir in priority 1
}

peer_bypass_out()
{
	in_peer ip xfrm policy add src "$I_P/$PL" dst "$I_H/$PL" proto udp \
		dport "$1" dir out priority 1
}

ipsec_case tunnel 4
ipsec_tunnel_neigh

# a. The host's SAs, then an inbound block policy for P_BLOCK (priority
# 10) BEFORE the tunnel's "any" policies (priority 100): see c.
if out=$(ipsec_host_sa in tunnel packet 2>&1 &&
	 ipsec_host_sa out tunnel packet 2>&1 &&
	 hpol in "$I_P/$PL" "$I_H/$PL" - - - - --no-tmpl --action block \
		--proto udp --dport "$P_BLOCK" --priority 10 2>&1 &&
	 hpol out "$I_H/$PL" "$I_P/$PL" "$O_H" "$O_P" 1 tunnel \
		--priority 100 2>&1 &&
	 hpol in "$I_P/$PL" "$I_H/$PL" "$O_P" "$O_H" 1 tunnel \
		--priority 100 2>&1) &&
   ipsec_both_offloaded; then
	ktap_ok "packet-offload SAs, the tunnel's policies and an inbound block policy added"
else
	ktap_fail "packet-offload SAs, the tunnel's policies and an inbound block policy added" \
		"$out
$(ip xfrm state; ip xfrm policy)"
	ktap_finish
fi
out=$(ipsec_peer tunnel 2>&1) || ktap_diag "the peer's SAs and policies: $out"
check "the block holds them: ipsec/policies in 2 out 1" block_pols 2 1

# b. Priority, not insertion order, outbound: the allow for P_CLEAR comes
# after the tunnel's policy. Were the older policy to win, the datagrams
# would be encapsulated (tx_encap moves; the peer's allow at
# priority 1 then refuses what its tunnel carried).
if out=$(hpol out "$I_H/$PL" "$I_P/$PL" - - - - --no-tmpl --proto udp \
		--dport "$P_CLEAR" --priority 10 2>&1) &&
   peer_allow_in "$P_CLEAR" && wait_for 5 block_pols 2 2; then
	ktap_ok "an outbound UDP allow of priority 10, added after the tunnel's of 100, is in the block"
else
	ktap_fail "an outbound UDP allow of priority 10, added after the tunnel's of 100, is in the block" \
		"$out; ipsec/policies: $(sim_read ipsec/policies)"
fi

mark sim:tx_encap "peer:$IPSEC_SPI_OUT"
got=$(udp_count host "$I_P" "$P_CLEAR" "$N")
why="peer received $got of $N; $(moves sim:tx_encap "peer:$IPSEC_SPI_OUT")"
if [ "$got" = "$N" ] && [ "$(moved sim:tx_encap)" = 0 ] &&
   [ "$(moved "peer:$IPSEC_SPI_OUT")" = 0 ]; then
	ktap_ok "UDP to the allowed port leaves in clear: priority 10 wins over the older priority 100" "$why"
else
	ktap_fail "UDP to the allowed port leaves in clear: priority 10 wins over the older priority 100" \
		"$why"
fi

mark sim:tx_encap "peer:$IPSEC_SPI_OUT" ipsec_tx_packets
ping_ok "$I_P" 5
rc=$?
why="ping exit $rc; $(moves sim:tx_encap "peer:$IPSEC_SPI_OUT" ipsec_tx_packets)"
if [ "$rc" = 0 ] && [ "$(moved sim:tx_encap)" -ge 5 ] &&
   [ "$(moved ipsec_tx_packets)" -ge 5 ] &&
   [ "$(moved "peer:$IPSEC_SPI_OUT")" -ge 5 ]; then
	ktap_ok "ping under the tunnel's policy is still encapsulated by the block" "$why"
else
	ktap_fail "ping under the tunnel's policy is still encapsulated by the block" \
		"$why"
fi

# c. Inbound: the peer sends clear UDP (its bypass at priority 1).
mark ipsec_rx_policy_block XfrmInPolBlock sim:rx_pol_block
peer_bypass_out "$P_BLOCK"
got=$(udp_count peer "$I_H" "$P_BLOCK" "$N")
why="host received $got of $N; $(moves ipsec_rx_policy_block XfrmInPolBlock sim:rx_pol_block)"
if [ "$got" = 0 ] && [ "$(moved ipsec_rx_policy_block)" -ge "$N" ] &&
   [ "$(moved XfrmInPolBlock)" -ge "$N" ] &&
   [ "$(moved sim:rx_pol_block)" -ge "$N" ]; then
	ktap_ok "clear UDP under an inbound block policy (priority 10, older than the tunnel's) is dropped: ipsec_rx_policy_block, XfrmInPolBlock" "$why"
else
	ktap_fail "clear UDP under an inbound block policy (priority 10, older than the tunnel's) is dropped: ipsec_rx_policy_block, XfrmInPolBlock" \
		"$why"
fi

mark ipsec_rx_clear_drop XfrmInTmplMismatch sim:rx_pol_mismatch
peer_bypass_out "$P_IPSEC"
got=$(udp_count peer "$I_H" "$P_IPSEC" "$N")
why="host received $got of $N; $(moves ipsec_rx_clear_drop XfrmInTmplMismatch sim:rx_pol_mismatch)"
if [ "$got" = 0 ] && [ "$(moved ipsec_rx_clear_drop)" -ge "$N" ] &&
   [ "$(moved XfrmInTmplMismatch)" -ge "$N" ] &&
   [ "$(moved sim:rx_pol_mismatch)" -ge "$N" ]; then
	ktap_ok "clear UDP under the inbound tunnel policy is dropped: ipsec_rx_clear_drop, XfrmInTmplMismatch" "$why"
else
	ktap_fail "clear UDP under the inbound tunnel policy is dropped: ipsec_rx_clear_drop, XfrmInTmplMismatch" \
		"$why"
fi

# The allow comes after the tunnel's policy: newest-first would pass it
# too, but not the block policy above.
mark ipsec_rx_clear_drop ipsec_rx_policy_block
peer_bypass_out "$P_BYPASS"
if out=$(hpol in "$I_P/$PL" "$I_H/$PL" - - - - --no-tmpl --proto udp \
		--dport "$P_BYPASS" --priority 10 2>&1) &&
   wait_for 5 block_pols 3 2; then
	got=$(udp_count peer "$I_H" "$P_BYPASS" "$N")
else
	got="no policy: $out; ipsec/policies $(sim_read ipsec/policies)"
fi
why="host received $got of $N; $(moves ipsec_rx_clear_drop ipsec_rx_policy_block)"
if [ "$got" = "$N" ] && [ "$(moved ipsec_rx_clear_drop)" = 0 ] &&
   [ "$(moved ipsec_rx_policy_block)" = 0 ]; then
	ktap_ok "an inbound allow of priority 10 (an IKE port's bypass) lets clear UDP reach the host's socket" "$why"
else
	ktap_fail "an inbound allow of priority 10 (an IKE port's bypass) lets clear UDP reach the host's socket" \
		"$why"
fi

# What the block cannot enforce as the stack would is refused, with the
# reason, and leaves nothing in the block: a forward policy (the block
# cannot tell forwarded packets from received ones), an optional template
# (it would become mandatory), a template naming an SPI, the icmp flag,
# reqid 0 (any SA would satisfy the template). The same forward policy
# without offload is the deployment's way, and is added.
refuse()
{
	local what=$1 want=$2 out rc

	shift 2
	out=$(hpol "$@" 2>&1)
	rc=$?
	if [ "$rc" != 0 ] && grep -q "$want" <<<"$out" && block_pols 3 2; then
		ktap_ok "refused: $what" "$out"
	else
		ktap_fail "refused: $what" \
			"exit $rc: $out; ipsec/policies $(sim_read ipsec/policies)"
	fi
}
T=("$O_P" "$O_H" 1 tunnel --priority 100)
refuse "a forward policy" "Cannot offload a forward policy" \
	fwd "$I_P/$PL" "$I_H/$PL" "${T[@]}"
refuse "an optional template" "optional template" \
	in 10.9.1.0/24 "$I_H/$PL" "${T[@]}" --optional
if out=$(hpol in 10.9.2.0/24 "$I_H/$PL" "${T[@]}" --tmpl-spi 0x1234 2>&1) &&
   block_pols 4 2; then
	ktap_ok "a template naming an SPI is offloaded (the block checks the SPI)"
else
	ktap_fail "a template naming an SPI is offloaded (the block checks the SPI)" \
		"$out; ipsec/policies $(sim_read ipsec/policies)"
fi
ip xfrm policy delete dir in src 10.9.2.0/24 dst "$I_H/$PL"
wait_for 10 block_pols 3 2
refuse "a policy with the icmp flag" "icmp flag" \
	in 10.9.3.0/24 "$I_H/$PL" "${T[@]}" --icmp
refuse "a template of reqid 0" "reqid 0" \
	in 10.9.4.0/24 "$I_H/$PL" "$O_P" "$O_H" 0 tunnel --priority 100
if out=$(ip xfrm policy add src "$I_P/$PL" dst "$I_H/$PL" dir fwd \
		tmpl src "$O_P" dst "$O_H" proto esp reqid 1 mode tunnel 2>&1) &&
   [ -n "$(ip xfrm policy list dir fwd)" ] && block_pols 3 2; then
	ktap_ok "the forward policy without offload stays in software"
else
	ktap_fail "the forward policy without offload stays in software" \
		"$out; ipsec/policies $(sim_read ipsec/policies)"
fi
ip xfrm policy delete dir fwd src "$I_P/$PL" dst "$I_H/$PL"

# d. A socket with its own outbound policy: the stack found that, not the
# device's, and the driver must not have the block classify its packets.
peer_allow_in "$P_SOCK"
mark sim:tx_encap "peer:$IPSEC_SPI_OUT"
got=$(udp_count host "$I_P" "$P_SOCK" "$N" bypass)
why="peer received $got of $N; $(moves sim:tx_encap "peer:$IPSEC_SPI_OUT")"
if [ "$got" = "$N" ] && [ "$(moved sim:tx_encap)" = 0 ] &&
   [ "$(moved "peer:$IPSEC_SPI_OUT")" = 0 ]; then
	ktap_ok "a socket with an outbound allow socket policy (IKE's bypass) sends in clear under the tunnel's policy" "$why"
else
	ktap_fail "a socket with an outbound allow socket policy (IKE's bypass) sends in clear under the tunnel's policy" \
		"$why"
fi

# Without the peer's allow, it takes the tunnel's datagrams (and would
# drop clear ones).
in_peer ip xfrm policy delete src "$I_H/$PL" dst "$I_P/$PL" proto udp \
	dport "$P_SOCK" dir in
mark sim:tx_encap "peer:$IPSEC_SPI_OUT"
got=$(udp_count host "$I_P" "$P_SOCK" "$N")
why="peer received $got of $N; $(moves sim:tx_encap "peer:$IPSEC_SPI_OUT")"
if [ "$got" = "$N" ] && [ "$(moved sim:tx_encap)" -ge "$N" ] &&
   [ "$(moved "peer:$IPSEC_SPI_OUT")" -ge "$N" ]; then
	ktap_ok "a plain socket's datagrams to the same port are encapsulated" "$why"
else
	ktap_fail "a plain socket's datagrams to the same port are encapsulated" \
		"$why"
fi

# e. The host's inbound SA again, of reqid 2; the tunnel's inbound
# template says reqid 1.
if out=$(ip xfrm state delete src "$O_P" dst "$O_H" proto esp \
		spi "$IPSEC_SPI_IN" 2>&1 &&
	 python3 "$XFRM_NL" state "$O_P" "$O_H" "$IPSEC_SPI_IN" 2 tunnel \
		"$IPSEC_K128" 128 --dir in --offload packet \
		--dev "$HOST_IF" 2>&1) &&
   ipsec_offloaded "$IPSEC_SPI_IN" "$O_P" "$O_H"; then
	ktap_ok "an inbound SA of reqid 2 under the inbound policy's template of reqid 1"
else
	ktap_fail "an inbound SA of reqid 2 under the inbound policy's template of reqid 1" \
		"$out"
fi
mark ipsec_rx_tmpl_mismatch XfrmInTmplMismatch sim:rx_pol_mismatch
in_peer ping -q -c 5 -i 0.2 -W 1 "$I_H" >/dev/null 2>&1
rc=$?
dec=$(host_sa_packets "$IPSEC_SPI_IN" "$O_P" "$O_H")
why="peer's ping exit $rc; the SA decrypted ${dec:-?}; $(moves ipsec_rx_tmpl_mismatch XfrmInTmplMismatch sim:rx_pol_mismatch)"
if [ "$rc" != 0 ] && [ "${dec:-0}" -ge 5 ] &&
   [ "$(moved ipsec_rx_tmpl_mismatch)" -ge 5 ] &&
   [ "$(moved XfrmInTmplMismatch)" -ge 5 ] &&
   [ "$(moved sim:rx_pol_mismatch)" -ge 5 ]; then
	ktap_ok "the peer's pings decrypt but are dropped on the reqid: ipsec_rx_tmpl_mismatch, XfrmInTmplMismatch" "$why"
else
	ktap_fail "the peer's pings decrypt but are dropped on the reqid: ipsec_rx_tmpl_mismatch, XfrmInTmplMismatch" \
		"$why"
fi

# a, the other half. The block's deletes are queued to the driver's
# worker: wait for them.
ip xfrm policy flush
check "ip xfrm policy flush empties the block's policy table" \
	wait_for 10 block_pols 0 0
ip xfrm state flush
in_peer ip xfrm policy flush
in_peer ip xfrm state flush
wait_for 30 grep -qx "in 0 out 0" "$SIM_DBG/ipsec/flows"

# f. The tunnel to the peer first, then MANY more to /32s nowhere (their
# outer ends distinct too): the SAs in one batch over one socket, then
# the policies in another, each timed.
sas=$(mktemp)
pols=$(mktemp)
on_exit rm -f "$sas" "$pols"
for ((i = 0; i < MANY; i++)); do
	a=$((i / 250)) b=$((i % 250 + 1))
	echo "state $O_H 10.4.$a.$b $((0x10000 + i)) $((i + 2)) tunnel" \
	     "$IPSEC_K128 128 --dir out --offload packet --dev $HOST_IF" >&3
	echo "policy out $I_H/32 10.3.$a.$b/32 $O_H 10.4.$a.$b $((i + 2))" \
	     "tunnel --offload packet --dev $HOST_IF" >&4
done 3>"$sas" 4>"$pols"

# ms: milliseconds since boot.
ms()
{
	local up

	read -r up _ </proc/uptime
	echo $((${up/./} * 10))
}

out=$(ipsec_host_sa in tunnel packet 2>&1 &&
      ipsec_host_sa out tunnel packet 2>&1 &&
      hpol out "$I_H/$PL" "$I_P/$PL" "$O_H" "$O_P" 1 tunnel 2>&1 &&
      hpol in "$I_P/$PL" "$I_H/$PL" "$O_P" "$O_H" 1 tunnel 2>&1)
rc=$?
t0=$(ms) t1=$t0
if [ "$rc" = 0 ]; then
	out=$(python3 "$XFRM_NL" batch <"$sas" 2>&1)
	rc=$?
	t1=$(ms)
fi
if [ "$rc" = 0 ]; then
	out=$(python3 "$XFRM_NL" batch <"$pols" 2>&1)
	rc=$?
fi
t2=$(ms)
why="SAs $((t1 - t0)) ms, policies $((t2 - t1)) ms"
if [ "$rc" = 0 ] && wait_for 10 block_pols 1 $((MANY + 1)) &&
   wait_for 10 grep -qx "in 1 out $((MANY + 1))" "$SIM_DBG/ipsec/flows"; then
	ktap_ok "the peer's tunnel, then $MANY more policies and SAs: all in the block" "$why"
else
	ktap_fail "the peer's tunnel, then $MANY more policies and SAs: all in the block" \
		"exit $rc: $(head -5 <<<"$out"); policies $(sim_read ipsec/policies), flows $(sim_read ipsec/flows); $why"
fi
out=$(ipsec_peer tunnel 2>&1) || ktap_diag "the peer's SAs and policies: $out"

mark sim:tx_encap "peer:$IPSEC_SPI_OUT" sim:tx_pol_no_state
ping_ok "$I_P" 5
rc=$?
why="ping exit $rc; $(moves sim:tx_encap "peer:$IPSEC_SPI_OUT" sim:tx_pol_no_state)"
if [ "$rc" = 0 ] && [ "$(moved sim:tx_encap)" -ge 5 ] &&
   [ "$(moved "peer:$IPSEC_SPI_OUT")" -ge 5 ]; then
	ktap_ok "ping to the peer goes through its SA among $((MANY + 1)) outbound policies" "$why"
else
	ktap_fail "ping to the peer goes through its SA among $((MANY + 1)) outbound policies" \
		"$why"
fi

ip xfrm policy flush
check "the flush empties the block's $((MANY + 2)) policies" \
	wait_for 30 block_pols 0 0
ipsec_flush
kernel_log_clean "no kernel warnings"
ktap_finish
