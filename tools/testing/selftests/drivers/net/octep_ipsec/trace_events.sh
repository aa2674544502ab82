#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The driver's tracepoints (events/octep_ipsec/ in tracefs) tell the
# story the counters sum up: the passes of each visit add up to the visit
# (count and packets), each visit carries the ring's visits counter and
# none is missing, a lost interrupt shows as the watchdog's rescue and
# then a rescued visit, a buffer the block writes late as a tick request
# and the asked tick, an ethtool -C as a quiesce, and an offloaded xfrm state as a
# mailbox exchange that succeeded.

source "$(dirname "$0")/lib.sh"
require_cmd ip ethtool ping python3

TR=/sys/kernel/tracing
mountpoint -q "$TR" || mount -t tracefs none "$TR" 2>/dev/null
if [ ! -d "$TR/events" ]; then
	ktap_skip_all "no tracefs at $TR"
fi

ktap_plan 10

check "modules load" octep_load || ktap_finish
if [ ! -d "$TR/events/octep_ipsec" ]; then
	ktap_fail "events/octep_ipsec exists" "$(ls "$TR/events" | head -5)"
	ktap_finish
fi
ktap_ok "events/octep_ipsec exists"
check "device 0 with 2 rings and the peer" \
	eval "octep_new 0 2 && peer_setup" || ktap_finish
crypto_setup

LIB_TMPDIR=$(mktemp -d)
on_exit "rm -rf $LIB_TMPDIR; echo 0 >$TR/events/octep_ipsec/enable; echo >$TR/trace"

echo 0 >"$TR/tracing_on"
echo 8192 >"$TR/buffer_size_kb"
echo >"$TR/trace"
echo 1 >"$TR/events/octep_ipsec/enable"
v0="$(stat "$HOST_IF" rx0_visits) $(stat "$HOST_IF" rx1_visits)"
echo 1 >"$TR/tracing_on"

# Plain traffic: visits and their passes.
ping -c 20 -i 0.02 -W 5 "$PEER_IP4" >/dev/null
# A lost interrupt, nothing else to bring a servicer: only the watchdog
# finds the ring.
ring_left 0
# Buffers written 2 ms after their count: passes stop at them and ask
# for the watchdog's next tick.
sim_write delay_ns 2000000
sim_write delay_share 200
ping -c 100 -i 0.01 -W 5 "$PEER_IP4" >/dev/null
sim_write delay_share 0
# A quiesce, and a mailbox exchange: an offloaded state's flow-table add.
ethtool -C "$HOST_IF" rx-usecs 10
ip xfrm state add src "$HOST_IP4" dst "$PEER_IP4" proto esp spi 0x1001 \
	reqid 1 mode transport aead 'rfc4106(gcm(aes))' \
	0x0123456789abcdef0123456789abcdef01234567 128 \
	offload dev "$HOST_IF" dir out

echo 0 >"$TR/tracing_on"
v1="$(stat "$HOST_IF" rx0_visits) $(stat "$HOST_IF" rx1_visits)"
cp "$TR/trace" "$LIB_TMPDIR/trace"
echo 0 >"$TR/events/octep_ipsec/enable"
ktap_diag "$(grep -c octep_ "$LIB_TMPDIR/trace") events, rx0/rx1_visits ($v0) -> ($v1)"

# judge WHAT: one verdict on the trace; prints "ok" or what is wrong.
judge()
{
	python3 - "$1" "$LIB_TMPDIR/trace" "$v0" "$v1" <<'EOF'
import re, sys, collections
what, path = sys.argv[1], sys.argv[2]
v0, v1 = [list(map(int, a.split())) for a in sys.argv[3:5]]
ev = []
lost = False
for line in open(path):
    if "LOST" in line and "EVENTS" in line:
        lost = True
    m = re.search(r"\b(octep_\w+): (.*)$", line)
    if m:
        ev.append((m.group(1), dict(kv.split("=", 1) for kv in m.group(2).split())))
kinds = collections.Counter(e for e, _ in ev)
bad = []
if what == "visits":
    # Per ring, the passes since the last visit belong to the next visit.
    # A ring's first visit may have begun before tracing did: not judged.
    npass, taken, first = collections.Counter(), collections.Counter(), set()
    for e, f in ev:
        r = f.get("ring")
        if e == "octep_pass":
            npass[r] += 1
            taken[r] += int(f["taken"])
        elif e == "octep_visit":
            if r not in first:
                first.add(r)
            elif int(f["passes"]) != npass[r] or int(f["done"]) != taken[r]:
                bad.append("ring %s visit passes=%s done=%s, its passes %d taking %d"
                           % (r, f["passes"], f["done"], npass[r], taken[r]))
            npass[r] = taken[r] = 0
    if lost:
        bad.append("the trace lost events")
    if not kinds["octep_visit"]:
        bad.append("no visit traced")
elif what == "count":
    # Each visit event carries the ring's visits counter after its own
    # increment: per ring the traced numbers run without a gap or a
    # repeat, inside what ethtool -S read just before and after.
    seqs = collections.defaultdict(list)
    for e, f in ev:
        if e == "octep_visit":
            seqs[int(f["ring"])].append(int(f["seq"]))
    for r in (0, 1):
        s = seqs[r]
        if not s:
            bad.append("no visit of ring %d traced" % r)
        elif s != list(range(s[0], s[0] + len(s))):
            bad.append("ring %d visit numbers not consecutive: %d traced from %d to %d"
                       % (r, len(s), s[0], s[-1]))
        elif s[0] <= v0[r] or s[-1] > v1[r]:
            bad.append("ring %d visits %d..%d traced, rx%d_visits %d -> %d"
                       % (r, s[0], s[-1], r, v0[r], v1[r]))
elif what == "rescue":
    seen = False
    for e, f in ev:
        if e == "octep_wd_find" and f["find"] == "rescue" and f["ring"] == "0":
            seen = True
        elif seen and e == "octep_visit" and f["ring"] == "0":
            if f["rescued"] != "1":
                bad.append("the visit after the rescue: rescued=%s" % f["rescued"])
            break
    else:
        bad.append("no rescue of ring 0 followed by its visit")
elif what == "tick":
    ticks = [f for e, f in ev if e == "octep_tick_request" and f["unseen"] == "1"]
    asked = [f for e, f in ev if e == "octep_wd_find" and f["find"] == "asked"]
    if not ticks or not asked:
        bad.append("tick requests (unseen) %d, asked ticks %d" % (len(ticks), len(asked)))
elif what == "quiesce":
    q = [f for e, f in ev if e == "octep_quiesce"]
    if len(q) != 1 or q[0]["rings"] != "2":
        bad.append("quiesces %s" % q)
elif what == "mbox":
    m = [f for e, f in ev if e == "octep_mbox"]
    if not m or any(f["ret"] != "0" for f in m):
        bad.append("mailbox exchanges %s" % m)
print("ok" if not bad else "; ".join(bad[:3]))
print("# %s: %s" % (what, dict(kinds)), file=sys.stderr)
EOF
}

verdict "each visit's passes add up to it (passes, packets)" judge visits
verdict "one octep_visit per visit counted, none missed" judge count
verdict "a lost interrupt: the watchdog's rescue, then a rescued visit" judge rescue
verdict "a late buffer: a tick request, then the asked tick" judge tick
verdict "ethtool -C: one quiesce of both rings" judge quiesce
verdict "an offloaded state: its flow-table add, answered" judge mbox
ip xfrm state flush

sed -n '/octep_/p' "$LIB_TMPDIR/trace" | head -n 5 | ktap_diag "$(cat)"
check "ping after tracing" ping -c 2 -W 5 "$PEER_IP4"

ktap_finish
