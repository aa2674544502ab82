#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""trail.py - print a spin counterexample of octep_rx.pml readably.

Reads the output of `spin -t -p -g -l [-D...] octep_rx.pml` on stdin and
prints one line per step: the process, the source line, what it did, and
the ring's state after it (count, level, SCHED, MISSED, the interrupt, the
tick request, the watchdog timer, the pass flag, delivered/arrived).

  trail.py [-D options given to spin] [--check-report] < trail.raw

--check-report: exit non-zero unless the trail is the field report's
counterexample: the watchdog takes the flag between two of the poll's
passes, the poll then finds the flag held and leaves, and the trail ends
with the ring left, its count at or above the level.
"""

import re
import sys

RXWD = {0: "off", 1: "period", 2: "SOON", 3: "firing"}
TRIVIAL = {"(1)", "else", "skip", "break", "goto :b0", "goto :b1"}

defines = {"LEVEL": 1, "QUIESCES": 1}
check_report = False
for arg in sys.argv[1:]:
    if arg == "--check-report":
        check_report = True
    elif arg.startswith("-D"):
        k, _, v = arg[2:].partition("=")
        defines[k] = int(v) if v.isdigit() else 1

state = {
    "OUT_CNTS": 0, "pkts_level": defines["LEVEL"], "arrived": 0,
    "delivered": 0, "unwritten": 0, "irq_latched": 0, "irq_ena": 1,
    "blk_timer": 0, "NAPI_STATE_SCHED": 0, "NAPI_STATE_MISSED": 0,
    "NAPI_STATE_DISABLE": 0, "NAPI_STATE_NPSVC": 0, "on_list": 0,
    "tick_req": 0, "rxwd": 1, "rxwd_on": 1, "periodic": 1, "oq_flag": 0,
    "in_poll": 0, "in_irq": 0, "in_wd": 0, "owed": 0, "quiesced": 0,
}

step_re = re.compile(
    r"^\s*(\d+):\s+proc\s+(\d+)\s+\((\w+):\d+\)\s+\S+:(\d+)\s+\(state \d+\)"
    r"\s*(?:\[(.*)\])?")
glob_re = re.compile(r"^\t\t(\w+) = (-?\d+)$")


def row():
    s = state
    irq = ("on" if s["irq_ena"] else "masked") + \
        ("+latched" if s["irq_latched"] else "")
    extra = []
    if s["NAPI_STATE_DISABLE"]:
        extra.append("DISABLE")
    if s["NAPI_STATE_NPSVC"]:
        extra.append("NPSVC")
    if s["on_list"]:
        extra.append("listed")
    if s["blk_timer"]:
        extra.append("blk_timer")
    if s["unwritten"]:
        extra.append("unwritten=%d" % s["unwritten"])
    if s["owed"]:
        extra.append("owed")
    if not s["periodic"]:
        extra.append("period-stopped")
    return "%4d %5d %5d %6d  %-15s %8d  %-7s %4d  %d/%d %s" % (
        s["OUT_CNTS"], s["pkts_level"], s["NAPI_STATE_SCHED"],
        s["NAPI_STATE_MISSED"], irq, s["tick_req"],
        RXWD.get(s["rxwd"], str(s["rxwd"])), s["oq_flag"],
        s["delivered"], s["arrived"], " ".join(extra))


header = ("%-5s %-17s %5s  %-44s |%4s %5s %5s %6s  %-15s %8s  %-7s %4s  %s" %
          ("step", "process", "line", "action", "CNTS", "level", "SCHED",
           "MISSED", "irq", "tick_req", "rxwd", "flag", "dlv/arr"))

out = []
events = []          # (kind, step) for --check-report
cur = None           # [step, proc, line, [actions]]
error = None
final = False
cycle_at = None


def flush():
    global cur
    if cur is None:
        return
    acts = [a for a in cur[3] if a not in TRIVIAL]
    if cur[1] == "time_passes":
        acts = []
    if acts:
        act = "; ".join(acts)
        if len(act) > 44:
            act = act[:41] + "..."
        out.append("%-5s %-17s %5s  %-44s |%s" %
                   (cur[0], cur[1], cur[2], act, row()))
    cur = None


for line in sys.stdin:
    line = line.rstrip("\n")
    if line.startswith("spin: trail ends") or line.startswith("#processes"):
        flush()
        final = True
        continue
    if final:
        m = glob_re.match(line)
        if m:
            state[m.group(1)] = int(m.group(2))
        continue
    if "<<<<<START OF CYCLE>>>>>" in line:
        flush()
        cycle_at = len(out)
        out.append("----- start of a cycle: from here the run repeats "
                   "forever -----")
        continue
    if line.startswith("spin: ") and "Error" in line:
        error = line[6:]
        continue
    if line.startswith("spin: text of failed assertion"):
        continue
    m = step_re.match(line)
    if m:
        key = (m.group(1), m.group(3))
        if cur is None or (cur[0], cur[1]) != key:
            flush()
            cur = [m.group(1), m.group(3), m.group(4), []]
        if m.group(5) is not None:
            stmt = m.group(5)
            if stmt.startswith("assert(!(") and "OUT_CNTS>0" in stmt:
                stmt = "checks the ring is not left"
            elif stmt.startswith("printf("):
                continue
            cur[3].append(stmt)
        continue
    m = glob_re.match(line)
    if m:
        state[m.group(1)] = int(m.group(2))
        continue
    if "MSC:" in line:
        msg = line.split("MSC:", 1)[1].strip()
        flush()
        out.append("      >>> %s" % msg)
        if "watchdog takes the flag" in msg:
            events.append("wd_takes")
        elif "poll finds the flag held" in msg:
            events.append("poll_leaves")

print(header)
print("-" * len(header))
for o in out:
    print(o)
print()
s = state
left = (s["OUT_CNTS"] > 0 and not s["NAPI_STATE_SCHED"] and not s["in_poll"]
        and not s["in_irq"] and not (s["irq_latched"] and s["irq_ena"])
        and not s["blk_timer"] and not (s["tick_req"] and s["rxwd"] == 2)
        and not s["in_wd"] and not s["owed"])
print("end: OUT_CNTS=%d pkts_level=%d NAPI_STATE_SCHED=%d NAPI_STATE_MISSED=%d "
      "irq_latched=%d irq_ena=%d tick_req=%d rxwd=%s delivered=%d arrived=%d"
      % (s["OUT_CNTS"], s["pkts_level"], s["NAPI_STATE_SCHED"],
         s["NAPI_STATE_MISSED"], s["irq_latched"], s["irq_ena"],
         s["tick_req"], RXWD.get(s["rxwd"]), s["delivered"], s["arrived"]))
if left:
    print("the ring is LEFT: %d packet(s) counted, nobody inside or scheduled, "
          "no interrupt on its way, no tick requested; only the watchdog's "
          "full period would find it" % s["OUT_CNTS"])
if error:
    print("spin: " + error)

if check_report:
    ok = True
    why = []
    if "wd_takes" not in events or "poll_leaves" not in events or \
            events.index("wd_takes") > len(events) - 1 - \
            events[::-1].index("poll_leaves"):
        ok = False
        why.append("no watchdog take followed by the poll leaving")
    if not left:
        ok = False
        why.append("the trail does not end with the ring left")
    if s["OUT_CNTS"] < s["pkts_level"]:
        ok = False
        why.append("the count ends below the level")
    if ok:
        print("check-report: yes - the watchdog took the ring between two "
              "of the poll's passes, the poll left, the count stays at %d "
              ">= level %d, the ring is left" % (s["OUT_CNTS"],
                                                 s["pkts_level"]))
    else:
        print("check-report: NO - " + "; ".join(why))
        sys.exit(1)
