#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The netdev netlink family sees each ring pair's NAPI: queue-get gives
# every receive and transmit queue in use the NAPI ID of its ring pair,
# napi-get gives that NAPI the ring pair's interrupt (the line named
# <netdev>-rxtx-<N> in /proc/interrupts), page-pool-get gives each ring's
# page pool that NAPI (so pages freed in its poll recycle directly), and
# all follow ethtool -L.
# Read with the kernel's own YNL client (tools/net/ynl in linux-source).

source "$(dirname "$0")/lib.sh"
require_cmd ip ethtool python3

ynl_require

ktap_plan 10

check "modules load" octep_load || ktap_finish
check "device 0 with 4 rings" octep_new 0 4 || ktap_finish
check "up" ip link set "$HOST_IF" up || ktap_finish

ifindex=$(cat "/sys/class/net/$HOST_IF/ifindex")

# links RINGS: check queue-get and napi-get against RINGS ring pairs in use;
# prints "ok" or what is wrong.
links()
{
	local q=$LIB_TMPDIR/q.json n=$LIB_TMPDIR/n.json p=$LIB_TMPDIR/p.json

	ynl_dump queue-get "{\"ifindex\": $ifindex}" >"$q" || return 1
	ynl_dump napi-get "{\"ifindex\": $ifindex}" >"$n" || return 1
	ynl_dump page-pool-get "{}" >"$p" || return 1
	python3 - "$q" "$n" "$1" "$HOST_IF" "$p" "$ifindex" <<'EOF'
import json, sys
queues, napis = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
rings, ifname = int(sys.argv[3]), sys.argv[4]
# Pools of the rings in use: ours, not detached (an old ring's pool waits
# for its last pages after -L).
pools = [p for p in json.load(open(sys.argv[5]))
         if p.get("ifindex") == int(sys.argv[6]) and "detach-time" not in p]
irqs = {}
for line in open("/proc/interrupts"):
    f = line.split()
    if f and f[-1].startswith(ifname + "-rxtx-"):
        irqs[int(f[-1].rsplit("-", 1)[1])] = int(f[0].rstrip(":"))
bad = []
by_id = {n["id"]: n for n in napis}
ring_napi = {}
for t in ("rx", "tx"):
    got = sorted(q["id"] for q in queues if q["type"] == t)
    if got != list(range(rings)):
        bad.append("%s queues %s, want 0..%d" % (t, got, rings - 1))
    for q in queues:
        if q["type"] != t:
            continue
        if "napi-id" not in q:
            bad.append("%s queue %d has no napi-id" % (t, q["id"]))
            continue
        if ring_napi.setdefault(q["id"], q["napi-id"]) != q["napi-id"]:
            bad.append("queue %d: rx and tx name different NAPIs" % q["id"])
for r, nid in sorted(ring_napi.items()):
    n = by_id.get(nid)
    if n is None:
        bad.append("ring %d: NAPI %d not in napi-get" % (r, nid))
    elif n.get("irq") != irqs.get(r):
        bad.append("ring %d: NAPI %d irq %s, /proc/interrupts %s" %
                   (r, nid, n.get("irq"), irqs.get(r)))
if len(set(ring_napi.values())) != len(ring_napi):
    bad.append("two rings share a NAPI")
pool_napis = sorted(p.get("napi-id", 0) for p in pools)
if pool_napis != sorted(ring_napi.values()):
    bad.append("page pools' NAPIs %s, rings' %s" %
               (pool_napis, sorted(ring_napi.values())))
print("ok" if not bad else "; ".join(bad))
print("# rings %d: %s" % (rings, ", ".join(
    "%d:napi %d irq %s" % (r, nid, by_id.get(nid, {}).get("irq"))
    for r, nid in sorted(ring_napi.items()))), file=sys.stderr)
EOF
}

LIB_TMPDIR=$(mktemp -d)
on_exit "rm -rf $LIB_TMPDIR"

verdict "4 rings: each queue and page pool names its ring's NAPI, each NAPI its IRQ" links 4
check "ethtool -L combined 1" ethtool -L "$HOST_IF" combined 1
verdict "1 ring after -L: one queue each way, its NAPI and IRQ" links 1
check "ethtool -L combined 3" ethtool -L "$HOST_IF" combined 3
verdict "3 rings after -L: the links rebuilt" links 3
check "down" ip link set "$HOST_IF" down
q=$(ynl_dump queue-get "{\"ifindex\": $ifindex}" 2>/dev/null |
	python3 -c 'import json, sys; print(sum(1 for q in json.load(sys.stdin) if "napi-id" in q))')
if [ "$q" = 0 ]; then
	ktap_ok "down: no queue names a NAPI"
else
	ktap_fail "down: no queue names a NAPI" "${q:-ynl failed} queues with a napi-id"
fi

ktap_finish
