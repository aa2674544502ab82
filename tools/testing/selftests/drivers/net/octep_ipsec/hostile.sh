#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# A hostile block (the model's hostile/ directory), one kind of fault at a
# time, each seeded (HOSTILE_SEED, printed) so a failure can be replayed:
#  - rx_len: a receive length below an Ethernet header or past the buffer:
#    the buffer dropped, counted in rx_resync;
#  - rx_ext: a checksum result the contract does not define: the frame
#    delivered as "not checked", counted in rx_bad_ext;
#  - rx_count, tx_count: a count larger than any ring: nothing taken or
#    completed on it, counted (rx_bad_count, tx_bad_count), the rings
#    reset (ring_resets);
#  - mbox: a mailbox response nobody asked for: counted (mbox_stray), and
#    every request still gets its own answer (no mbox_timeouts);
#  - mbox_bad: the answer itself with a wrong id, command or size: counted
#    (mbox_stray), the request fails at its timeout, and adds work again
#    once the block answers the resync;
#  - irq_storm: a line that fires every 50 us whether its interrupt is
#    enabled or not: the driver disables the line (irq_storms), polls the
#    ring meanwhile, and takes the line back once the storm is over.
#
# Asserted for each kind: the model injected some, the driver counted
# exactly as many, and the device carries pings afterwards.

source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/ipsec_lib.inc"
source "$(dirname "$0")/hostile_lib.inc"
require_cmd ip ethtool ping

: "${HOSTILE_SEED:=$(( (RANDOM << 15) | RANDOM ))}"

# hostile_bit KIND: the kind's bit in hostile/kinds.
hostile_bit()
{
	case $1 in
	rx_len) echo 1 ;; rx_ext) echo 2 ;; rx_count) echo 4 ;;
	tx_count) echo 8 ;; mbox) echo 16 ;; mbox_bad) echo 32 ;;
	irq_storm) echo 64 ;;
	esac
}

# hostile_on KIND RATE: KIND alone, one opportunity in RATE, seeded.
hostile_on()
{
	sim_write hostile/seed "$HOSTILE_SEED"
	sim_write hostile/rate "$2"
	sim_write hostile/kinds "$(hostile_bit "$1")"
}

hostile_off()
{
	sim_write hostile/kinds 0
}

# ping_burst N: N pings at 5 ms, each reply a receive buffer; losses are
# the faults' (a dropped buffer, a ring reset).
ping_burst()
{
	ping -q -c "$1" -i 0.005 -W 1 "$PEER_IP4" >/dev/null 2>&1
	return 0
}

# caught KIND STAT BEFORE: after the kind is off, wait until the driver's
# STAT rose by what the model injected since I0, then judge.
caught()
{
	local kind=$1 st=$2 before=$3 inj det

	inj=$(($(injected "$kind") - I0))
	wait_for "$OCTEP_WAIT" rose "$st" "$before" "$inj"
	det=$(($(stat "$HOST_IF" "$st") - before))
	ktap_diag "$kind: $inj injected, $det caught ($st)"
	if [ "$inj" -gt 0 ] && [ "$det" = "$inj" ]; then
		ktap_ok "$kind: every fault injected is caught"
	else
		ktap_fail "$kind: every fault injected is caught" \
			"$inj injected, $st +$det"
	fi
}

ktap_plan 24
ipsec_prepare
check "modules load" octep_load || ktap_finish
check "device 0 with 1 ring" octep_new 0 1 || ktap_finish
check "peer namespace behind the wire" peer_setup || ktap_finish
ktap_diag "HOSTILE_SEED=$HOSTILE_SEED"

for k in rx_len:rx_resync:8 rx_ext:rx_bad_ext:8; do
	IFS=: read -r kind st rate <<<"$k"
	b=$(stat "$HOST_IF" "$st") I0=$(injected "$kind")
	hostile_on "$kind" "$rate"
	ping_burst 300
	hostile_off
	caught "$kind" "$st" "$b"
	check "$kind: pings after it" ping -q -c 3 -i 0.2 -W 3 "$PEER_IP4"
done

for k in rx_count:rx_bad_count tx_count:tx_bad_count; do
	IFS=: read -r kind st <<<"$k"
	b=$(stat "$HOST_IF" "$st") I0=$(injected "$kind")
	r0=$(stat "$HOST_IF" ring_resets)
	hostile_on "$kind" 40
	ping_burst 300
	hostile_off
	caught "$kind" "$st" "$b"
	det=$(($(stat "$HOST_IF" "$st") - b))
	wait_for "$OCTEP_WAIT" rose ring_resets "$r0" "$det"
	r1=$(stat "$HOST_IF" ring_resets)
	ktap_diag "$kind: $((r1 - r0)) resets"
	if [ $((r1 - r0)) -ge "$det" ] && [ "$det" -gt 0 ]; then
		ktap_ok "$kind: a reset for each"
	else
		ktap_fail "$kind: a reset for each" \
			"ring_resets $r0 -> $r1, $det caught"
	fi
	wait_for "$OCTEP_WAIT" ping -q -c 1 -W 1 "$PEER_IP4"
	check "$kind: pings after it" ping -q -c 3 -i 0.2 -W 3 "$PEER_IP4"
done

# irq_storm: one storm, 3 s of pings through it. A driver that takes every
# interrupt of it runs its handler about as often as the line fires; the
# guard takes OCTEP_STORM_HITS of them a second at most. The handler's
# runs are the ring vectors' counts in /proc/interrupts (a line disabled
# counts none); a count not read is -1, which fails the cases.
irqs() { irq_count "$HOST_IF" || echo -1; }
b=$(stat "$HOST_IF" irq_storms) I0=$(injected irq_storm)
i0=$(irqs) f0=$(sim_read hostile/storm_fires)
hostile_on irq_storm 1
got=$(ping -q -c 600 -i 0.005 -W 1 "$PEER_IP4" 2>/dev/null |
	awk '/received/ { print $4 }')
hostile_off
i1=$(irqs) f1=$(sim_read hostile/storm_fires)
inj=$(($(injected irq_storm) - I0)) det=$(($(stat "$HOST_IF" irq_storms) - b))
ktap_diag "irq_storm: $inj storm(s), $((f1 - f0)) fires," \
	"the handler ran $((i1 - i0)) times, $det line disable(s)," \
	"${got:-0}/600 pings"
ktap_expect "irq_storm: the storm is caught (irq_storms)" \
	"$inj injected, irq_storms +$det" [ $((inj > 0 && det > 0)) = 1 ]
ktap_expect "irq_storm: the handler ran for under a tenth of the fires" \
	"$((f1 - f0)) fires, $((i1 - i0)) interrupts" \
	[ $((i0 >= 0 && i1 >= i0 && f1 - f0 >= 1000 &&
	     (i1 - i0) * 10 < f1 - f0)) = 1 ]
ktap_expect "irq_storm: the ring is polled through the storm" \
	"${got:-0}/600 pings answered" [ "${got:-0}" -ge 540 ]
# The hold (a second) runs out on the next poll: then the line is the
# block's again, and a ping's reply comes by interrupt.
sleep 2
ping -q -c 2 -W 1 "$PEER_IP4" >/dev/null 2>&1
s0=$(stat "$HOST_IF" irq_storms) i0=$(irqs)
check "irq_storm: pings after it" ping -q -c 20 -i 0.05 -W 3 "$PEER_IP4"
i1=$(irqs)
if [ "$i0" -ge 0 ] && [ $((i1 - i0)) -ge 10 ] &&
   [ "$(stat "$HOST_IF" irq_storms)" = "$s0" ]; then
	ktap_ok "irq_storm: the line is back: interrupts, no new storm"
else
	ktap_fail "irq_storm: the line is back: interrupts, no new storm" \
		"interrupts +$((i1 - i0)), irq_storms $s0 -> $(stat "$HOST_IF" irq_storms)"
fi

# The mailbox: a crypto-offloaded pair, then states added and deleted.
ipsec_crypto_pair transport 4
b=$(stat "$HOST_IF" mbox_stray) I0=$(injected mbox)
t0=$(stat "$HOST_IF" mbox_timeouts)
hostile_on mbox 4
fails=0
for i in $(seq 1 60); do
	spi=$((0x3000 + i))
	[ -n "$(sa_add "$spi")" ] && fails=$((fails + 1))
	ip xfrm state delete src "$O_H" dst "$O_P" proto esp spi "$spi"
done
hostile_off
caught mbox mbox_stray "$b"
t1=$(stat "$HOST_IF" mbox_timeouts)
if [ "$fails" = 0 ] && [ "$t1" = "$t0" ]; then
	ktap_ok "mbox: 60 offloaded adds answered, no timeout"
else
	ktap_fail "mbox: 60 offloaded adds answered, no timeout" \
		"$fails adds warned, mbox_timeouts $t0 -> $t1"
fi

# mbox_bad: the answers to an add corrupted (id, command or size): each
# counted as stray, the add fails at its timeout, the mailbox is refused
# until the block answers the resync, then adds work again.
b=$(stat "$HOST_IF" mbox_stray) I0=$(injected mbox_bad)
t0=$(stat "$HOST_IF" mbox_timeouts)
hostile_on mbox_bad 1
out=$(sa_add 0x3100)
hostile_off
caught mbox_bad mbox_stray "$b"
t1=$(stat "$HOST_IF" mbox_timeouts)
if [ -n "$out" ] && [ "$t1" -gt "$t0" ]; then
	ktap_diag "mbox_bad: $out"
	ktap_ok "mbox_bad: the add failed at its timeout"
else
	ktap_fail "mbox_bad: the add failed at its timeout" \
		"ip: '$out', mbox_timeouts $t0 -> $t1"
fi
wait_for 30 mbox_answering
out=$(sa_add 0x3101)
if [ -z "$out" ] && ipsec_offloaded 0x3101 "$O_H" "$O_P"; then
	ktap_ok "mbox_bad: once the block answers again, an add is offloaded"
else
	ktap_fail "mbox_bad: once the block answers again, an add is offloaded" \
		"ip: '$out'"
fi
ipsec_flush
ktap_finish
