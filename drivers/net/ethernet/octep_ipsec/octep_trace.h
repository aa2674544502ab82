/* SPDX-License-Identifier: GPL-2.0 */
/*
 * octep_ipsec tracepoints: the receive servicing (a pass, a visit, a note
 * left or found, a tick request, what the watchdog found), a quiesce and a
 * mailbox exchange. What the field report's engineers captured by hand;
 * read with `perf trace -e octep_ipsec:*` or in tracefs under
 * events/octep_ipsec/.
 */
#undef TRACE_SYSTEM
#define TRACE_SYSTEM octep_ipsec

#if !defined(_OCTEP_TRACE_H) || defined(TRACE_HEADER_MULTI_READ)
#define _OCTEP_TRACE_H

#include <linux/tracepoint.h>

#include "octep_ipsec.h"

/* The enums (octep_ipsec.h) by name, for the trace's format file. */
TRACE_DEFINE_ENUM(OCTEP_NOTE_DECLINED);
TRACE_DEFINE_ENUM(OCTEP_NOTE_HANDED);
TRACE_DEFINE_ENUM(OCTEP_NOTE_DEFERRED);
TRACE_DEFINE_ENUM(OCTEP_NOTE_BUSY);
TRACE_DEFINE_ENUM(OCTEP_NOTE_REARM);
TRACE_DEFINE_ENUM(OCTEP_WD_ASKED);
TRACE_DEFINE_ENUM(OCTEP_WD_RESCUE);
TRACE_DEFINE_ENUM(OCTEP_WD_EARLY);
TRACE_DEFINE_ENUM(OCTEP_WD_REFILL);
TRACE_DEFINE_ENUM(OCTEP_WD_HELD);

TRACE_EVENT(octep_pass,
	    TP_PROTO(unsigned int ring, u32 cnt, u32 taken, u32 left,
		     bool unseen),
	    TP_ARGS(ring, cnt, taken, left, unseen),
	    TP_STRUCT__entry(__field(unsigned int, ring)
			     __field(u32, cnt)
			     __field(u32, taken)
			     __field(u32, left)
			     __field(bool, unseen)),
	    TP_fast_assign(__entry->ring = ring;
			   __entry->cnt = cnt;
			   __entry->taken = taken;
			   __entry->left = left;
			   __entry->unseen = unseen;),
	    TP_printk("ring=%u cnt=%u taken=%u left=%u unseen=%d",
		      __entry->ring, __entry->cnt, __entry->taken,
		      __entry->left, __entry->unseen)
);

TRACE_EVENT(octep_visit,
	    TP_PROTO(unsigned int ring, u64 seq, u32 passes, u32 done,
		     int budget, bool rescued, bool stall, bool tick),
	    TP_ARGS(ring, seq, passes, done, budget, rescued, stall, tick),
	    TP_STRUCT__entry(__field(unsigned int, ring)
			     __field(u64, seq)
			     __field(u32, passes)
			     __field(u32, done)
			     __field(int, budget)
			     __field(bool, rescued)
			     __field(bool, stall)
			     __field(bool, tick)),
	    TP_fast_assign(__entry->ring = ring;
			   __entry->seq = seq;
			   __entry->passes = passes;
			   __entry->done = done;
			   __entry->budget = budget;
			   __entry->rescued = rescued;
			   __entry->stall = stall;
			   __entry->tick = tick;),
	    TP_printk("ring=%u seq=%llu passes=%u done=%u budget=%d rescued=%d stall=%d tick=%d",
		      __entry->ring, __entry->seq, __entry->passes,
		      __entry->done, __entry->budget, __entry->rescued,
		      __entry->stall, __entry->tick)
);

TRACE_EVENT(octep_note,
	    TP_PROTO(unsigned int ring, enum octep_note note),
	    TP_ARGS(ring, note),
	    TP_STRUCT__entry(__field(unsigned int, ring)
			     __field(unsigned int, note)),
	    TP_fast_assign(__entry->ring = ring;
			   __entry->note = note;),
	    TP_printk("ring=%u note=%s", __entry->ring,
		      __print_symbolic(__entry->note,
				       { OCTEP_NOTE_DECLINED, "declined" },
				       { OCTEP_NOTE_HANDED, "handed" },
				       { OCTEP_NOTE_DEFERRED, "deferred" },
				       { OCTEP_NOTE_BUSY, "busy" },
				       { OCTEP_NOTE_REARM, "rearm_resched" }))
);

TRACE_EVENT(octep_tick_request,
	    TP_PROTO(unsigned int ring, bool unseen, bool refill),
	    TP_ARGS(ring, unseen, refill),
	    TP_STRUCT__entry(__field(unsigned int, ring)
			     __field(bool, unseen)
			     __field(bool, refill)),
	    TP_fast_assign(__entry->ring = ring;
			   __entry->unseen = unseen;
			   __entry->refill = refill;),
	    TP_printk("ring=%u unseen=%d refill=%d", __entry->ring,
		      __entry->unseen, __entry->refill)
);

TRACE_EVENT(octep_wd_find,
	    TP_PROTO(unsigned int ring, u32 cnt, enum octep_wd_find find),
	    TP_ARGS(ring, cnt, find),
	    TP_STRUCT__entry(__field(unsigned int, ring)
			     __field(u32, cnt)
			     __field(unsigned int, find)),
	    TP_fast_assign(__entry->ring = ring;
			   __entry->cnt = cnt;
			   __entry->find = find;),
	    TP_printk("ring=%u cnt=%u find=%s", __entry->ring, __entry->cnt,
		      __print_symbolic(__entry->find,
				       { OCTEP_WD_ASKED, "asked" },
				       { OCTEP_WD_RESCUE, "rescue" },
				       { OCTEP_WD_EARLY, "early" },
				       { OCTEP_WD_REFILL, "refill" },
				       { OCTEP_WD_HELD, "held" }))
);

TRACE_EVENT(octep_quiesce,
	    TP_PROTO(unsigned int rings, unsigned int waits, u64 longest_ns),
	    TP_ARGS(rings, waits, longest_ns),
	    TP_STRUCT__entry(__field(unsigned int, rings)
			     __field(unsigned int, waits)
			     __field(u64, longest_ns)),
	    TP_fast_assign(__entry->rings = rings;
			   __entry->waits = waits;
			   __entry->longest_ns = longest_ns;),
	    TP_printk("rings=%u waits=%u longest_ns=%llu", __entry->rings,
		      __entry->waits, __entry->longest_ns)
);

TRACE_EVENT(octep_mbox,
	    TP_PROTO(u8 cmd, u32 id, int ret, u64 ns),
	    TP_ARGS(cmd, id, ret, ns),
	    TP_STRUCT__entry(__field(u8, cmd)
			     __field(u32, id)
			     __field(int, ret)
			     __field(u64, ns)),
	    TP_fast_assign(__entry->cmd = cmd;
			   __entry->id = id;
			   __entry->ret = ret;
			   __entry->ns = ns;),
	    TP_printk("cmd=%u id=%u ret=%d ns=%llu", __entry->cmd, __entry->id,
		      __entry->ret, __entry->ns)
);

#endif /* _OCTEP_TRACE_H */

/* Out of tree too: the header is found next to its one includer. */
#undef TRACE_INCLUDE_PATH
#define TRACE_INCLUDE_PATH .
#undef TRACE_INCLUDE_FILE
#define TRACE_INCLUDE_FILE octep_trace
#include <trace/define_trace.h>
