#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Queue statistics (qstats) of the netdev netlink family: each queue's
# receive packets are the packets the block put on that ring (the model's
# own count), the device's totals equal the netdev's standard counters,
# transmit offloads are counted (checksum, TSO segments), and after
# ethtool -L the rings no longer in use fall into the base, so the
# device's totals do not change. ethtool -S repeats nothing a standard
# interface reports: not qstats, not ip -s link's counters, not
# /proc/interrupts; its per-ring drops add up to ip -s link's. Read with
# the kernel's own YNL client.

source "$(dirname "$0")/lib.sh"
require_cmd ip ethtool iperf3 python3

ynl_require

ktap_plan 15

check "modules load" octep_load || ktap_finish
check "device 0 with 4 rings" octep_new 0 4 || ktap_finish
check "peer namespace behind the wire" peer_setup || ktap_finish

ifindex=$(cat "/sys/class/net/$HOST_IF/ifindex")
LIB_TMPDIR=$(mktemp -d)
on_exit "rm -rf $LIB_TMPDIR"

# qstats FILE [queue]: the qstats-get dump (device scope, or per queue)
# as JSON in FILE.
qstats()
{
	local req="{\"ifindex\": $ifindex}"

	[ "${2:-}" = queue ] && req="{\"ifindex\": $ifindex, \"scope\": \"queue\"}"
	ynl_dump qstats-get "$req" >"$1"
}

# Eight streams each way: the model's RSS spreads them over the rings.
in_peer iperf3 -s -D --logfile /dev/null 2>/dev/null
wait_for "$OCTEP_WAIT" in_peer sh -c 'ss -ltn | grep -q ":5201 "'
check "8 TCP streams peer -> host" \
	timeout 60 iperf3 -c "$PEER_IP4" -R -P 8 -t 2 --logfile "$LIB_TMPDIR/r.log"
check "8 TCP streams host -> peer" \
	timeout 60 iperf3 -c "$PEER_IP4" -P 8 -t 2 --logfile "$LIB_TMPDIR/t.log"
in_peer pkill -x iperf3
# Let the last ACKs and FINs land before the counters are compared.
sleep 1

# snap: the model's own count of packets it put on each output ring and
# the netdev's counters, before and after the qstats dumps, so that a
# stray ND or ARP packet in between cannot fail the comparison.
snap()
{
	local q f=/sys/class/net/$HOST_IF/statistics

	for q in 0 1 2 3; do
		echo "$q $(sim_read "ring$q/out_pkts")"
	done >"$LIB_TMPDIR/ring.$1"
	echo "$(cat $f/rx_packets) $(cat $f/tx_packets) $(cat $f/rx_bytes)" \
		>"$LIB_TMPDIR/sys.$1"
}

dumps()
{
	snap 0
	qstats "$LIB_TMPDIR/q.json" queue
	qstats "$LIB_TMPDIR/d.json"
	snap 1
}
dumps

# judge WHAT: one verdict on the dumps; prints "ok" or what is wrong.
judge()
{
	python3 - "$1" "$LIB_TMPDIR" <<'EOF'
import json, sys
what, d = sys.argv[1], sys.argv[2]
sys0, sys1 = ([int(x) for x in open("%s/sys.%d" % (d, i)).read().split()]
              for i in (0, 1))
queues = json.load(open(d + "/q.json"))
dev = json.load(open(d + "/d.json"))
dev = dev[0] if dev else {}
ring0, ring = ({int(l.split()[0]): int(l.split()[1]) for l in
                open("%s/ring.%d" % (d, i))} for i in (0, 1))
rxq = {q["queue-id"]: q for q in queues if q.get("queue-type") == "rx"}
txq = {q["queue-id"]: q for q in queues if q.get("queue-type") == "tx"}
bad = []
if what == "queues":
    if sorted(rxq) != [0, 1, 2, 3] or sorted(txq) != [0, 1, 2, 3]:
        bad.append("rx queues %s, tx queues %s, want 0..3" % (sorted(rxq), sorted(txq)))
elif what == "per-ring":
    for q in sorted(rxq):
        if not ring0.get(q, -1) <= rxq[q].get("rx-packets", -1) <= ring.get(q, -1):
            bad.append("queue %d: rx-packets %s, the block put %s-%s on ring %d"
                       % (q, rxq[q].get("rx-packets"), ring0.get(q), ring.get(q), q))
    busy = [q for q in rxq if rxq[q].get("rx-packets", 0) > 100]
    if len(busy) < 2:
        bad.append("only rings %s carried traffic" % busy)
elif what == "device":
    for i, k in enumerate(("rx-packets", "tx-packets", "rx-bytes")):
        if not sys0[i] <= dev.get(k, -1) <= sys1[i]:
            bad.append("device %s %s, the netdev's counter %d-%d"
                       % (k, dev.get(k), sys0[i], sys1[i]))
elif what == "tx":
    gso = sum(q.get("tx-hw-gso-packets", 0) for q in txq.values())
    wire = sum(q.get("tx-hw-gso-wire-packets", 0) for q in txq.values())
    csum = sum(q.get("tx-needs-csum", 0) for q in txq.values())
    if not gso or wire <= gso or not csum:
        bad.append("tx-hw-gso-packets %d, -wire-packets %d, tx-needs-csum %d"
                   % (gso, wire, csum))
print("ok" if not bad else "; ".join(bad))
print("# %s: rx %s; ring %s; device %s" % (what,
      {q: v.get("rx-packets") for q, v in rxq.items()}, ring,
      {k: v for k, v in dev.items() if k in ("rx-packets", "tx-packets")}),
      file=sys.stderr)
EOF
}

verdict "qstats: four rx and four tx queues" judge queues
verdict "each queue's rx-packets are what the block put on its ring" judge per-ring
verdict "device totals equal the netdev's rx/tx counters" judge device
verdict "tx offloads counted: hw-gso packets, wire segments, needs-csum" judge tx

# ethtool -S: none of the counters ip -s link (packets, bytes, dropped),
# qstats (the rest) or /proc/interrupts report, as a total or per ring;
# the per-ring drops, which no standard interface has per queue, stay.
STD='(rx|tx)_(packets|bytes|drops)|rx[0-9]*_(alloc_fail|csum_bad)'
STD+='|(rx|tx)[0-9]+_(packets|bytes)|tx[0-9]*_(stops|wakes|csum_offload)'
STD+='|tx[0-9]*_(tso|tso_segs)|(rx[0-9]+_)?interrupts'
ethtool -S "$HOST_IF" >"$LIB_TMPDIR/S"
if grep -q '^ *rx3_drops:' "$LIB_TMPDIR/S" &&
   grep -q '^ *tx3_drops:' "$LIB_TMPDIR/S" &&
   ! grep -Eq "^ *($STD):" "$LIB_TMPDIR/S"; then
	ktap_ok "ethtool -S: per-ring drops, nothing a standard interface has"
else
	ktap_fail "ethtool -S: per-ring drops, nothing a standard interface has" \
		"$(grep -E "^ *($STD|rx3_drops|tx3_drops):" "$LIB_TMPDIR/S" | tr '\n' ' ')"
fi

# ring_drops: the per-ring drops of ethtool -S add up to ip -s link's
# dropped (stats64), both ways.
ring_drops()
{
	local rx tx f=/sys/class/net/$HOST_IF/statistics

	read -r rx tx < <(ethtool -S "$HOST_IF" | awk '
		$1 ~ /^rx[0-9]+_drops:$/ { r += $2; n++ }
		$1 ~ /^tx[0-9]+_drops:$/ { t += $2; m++ }
		END { if (n && m) print r, t }')
	if [ -n "$rx" ] && [ "$rx" = "$(cat $f/rx_dropped)" ] &&
	   [ "$tx" = "$(cat $f/tx_dropped)" ]; then
		echo ok
	else
		echo "ethtool -S rings: rx ${rx:-?} tx ${tx:-?} drops;" \
			"rx_dropped $(cat $f/rx_dropped), tx_dropped $(cat $f/tx_dropped)"
	fi
}
verdict "ethtool -S: the rings' drops add up to ip -s link's dropped" ring_drops

# Two rings fewer: their history moves into the base, the totals stay.
cp "$LIB_TMPDIR/d.json" "$LIB_TMPDIR/d0.json"
check "ethtool -L combined 2" ethtool -L "$HOST_IF" combined 2
wait_for "$OCTEP_WAIT" lib_no_tentative
dumps
# after_l: only queues 0 and 1 are reported.
after_l()
{
	python3 - "$LIB_TMPDIR" <<'EOF'
import json, sys
d = sys.argv[1]
q = json.load(open(d + "/q.json"))
ids = sorted((x["queue-type"], x["queue-id"]) for x in q)
want = [("rx", 0), ("rx", 1), ("tx", 0), ("tx", 1)]
print("ok" if ids == want else "queues %s, want %s" % (ids, want))
EOF
}
verdict "after -L 2: only queues 0 and 1 reported" after_l
verdict "after -L 2: device totals (base + queues) equal the netdev's" judge device
# kept: the device's totals did not move with the rings.
kept()
{
	python3 - "$LIB_TMPDIR" <<'EOF'
import json, sys
d = sys.argv[1]
a, b = json.load(open(d + "/d0.json"))[0], json.load(open(d + "/d.json"))[0]
# Nothing but the odd ND or ARP packet crossed since: the totals stay.
bad = [k for k in ("rx-packets", "tx-packets", "tx-hw-gso-packets")
       if not a.get(k) or not 0 <= b.get(k, 0) - a[k] <= 20]
print("ok" if not bad else "; ".join("%s %s -> %s" % (k, a.get(k), b.get(k)) for k in bad))
EOF
}
verdict "after -L 2: the device's totals kept the rings' history" kept

ktap_finish
