/* SPDX-License-Identifier: GPL-2.0 */
/*
 * octep_sim: the SDP block's counting and interrupt rules, as a state
 * machine with no lock, no timer and no allocation of its own (rules.c).
 *
 * One copy, compiled into the kernel model (irq.c, regs.c) and into the
 * vfio-user server (vfu/dev.c, through the stand-in headers in
 * vfu/include), so that the two cannot drift. Each side keeps a thin
 * layer: it serializes the events of a count, tells the time, runs the
 * timer the rules ask for and sends the interrupt. The rules are
 * described in Documentation/networking/device_drivers/ethernet/octep_sim.rst.
 *
 * An event (osim_rules_add(), osim_rules_host_write(),
 * osim_rules_levels_write(), osim_rules_timer()) returns what the block
 * does next, a mask of OSIM_RULES_*; the layer carries it out in the
 * order of the bits and then calls osim_rules_done() with the mask and
 * whether the interrupt reached its line. Nothing else may come between
 * the two calls.
 */
#ifndef _OSIM_RULES_H
#define _OSIM_RULES_H

#include <linux/bits.h>
#include <linux/time64.h>
#include <linux/types.h>

/* What RESEND takes for "pending" (debugfs resend_pending). */
enum osim_resend_pending {
	OSIM_RESEND_LEVEL,	/* count at or above the packet level */
	OSIM_RESEND_NONZERO,	/* count nonzero */
	OSIM_RESEND_NEVER,	/* RESEND never raises */
};

/* What a raise while INT_LEVELS bit 62 is clear does (debugfs masked). */
enum osim_masked {
	OSIM_MASKED_LATCH,	/* latched, sent when the host sets the bit */
	OSIM_MASKED_DROP,	/* lost: counted, never sent */
};

/* Why a ring's interrupt was raised (each counted per ring and side). */
enum osim_cause {
	OSIM_CAUSE_CROSSING,
	OSIM_CAUSE_TIMER,
	OSIM_CAUSE_RESEND,
	OSIM_CAUSE_NR,
};

/*
 * A count silent this long is a ring left (struct osim_rules): two of the
 * driver's watchdog ticks, past which a ring is more than rule 3's wait.
 */
#define OSIM_LEFT_NS_DEF	(2 * NSEC_PER_MSEC)

/*
 * What an event asks of the layer, in this order. CANCEL and START never
 * come together.
 */
#define OSIM_RULES_CANCEL	BIT(0)	/* cancel the count's timer */
#define OSIM_RULES_START	BIT(1)	/* (re)start it for @timer_expires */
#define OSIM_RULES_SEND		BIT(2)	/* send the ring pair's interrupt */
/* Not an action: the host acknowledged packets (for osim_rules_done()). */
#define OSIM_RULES_LOOKED	BIT(3)

/**
 * struct osim_rules_cfg - the device's settings for what is not known
 * @resend_pending: enum osim_resend_pending
 * @masked: enum osim_masked
 * @left_ns: a count silent this long is a ring left
 *
 * Read by the layer once an event, so that one event sees one setting.
 */
struct osim_rules_cfg {
	u32 resend_pending;
	u32 masked;
	u64 left_ns;
};

/**
 * struct osim_rules - a CNTS register and its INT_LEVELS: the rules' state
 * @count: packets (instructions) done and not acknowledged; stored with
 *	smp_store_release(), so that the kernel model's host reads it
 *	without the lock its events hold
 * @level: packet level (INT_LEVELS 31:0)
 * @time_us: time threshold in microseconds (INT_LEVELS 61:32), 0 = none
 * @ena: interrupt enable (INT_LEVELS bit 62)
 * @latched: an interrupt was raised while @ena was clear
 * @timer_armed: the timer is meant to fire at @timer_expires
 * @timer_expires: when the block's timer fires, in the layer's clock (ns)
 * @raised: interrupts raised, by cause
 * @latch_events: raises that found @ena clear and were latched
 * @masked_dropped: raises that found @ena clear and were lost (masked=drop)
 * @resend_writes: host writes with RESEND set
 * @ack_excess: host writes that acknowledged more than was counted
 * @timer_after_us: the last timer raise came this long after its arming,
 *	in the layer's clock (a test's reads may come much later)
 * @owed: an interrupt was sent and the host has not written CNTS since
 * @silent: packets counted, the interrupt enabled, and none sent, owed or
 *	timed: nothing will tell the host (a ring left)
 * @silent_since: when @silent began, in the layer's clock (ns)
 * @left: silences that lasted the device's left_ns or longer
 * @left_max_ns: the longest silence ended so far
 *
 * All zeroes is a count out of reset.
 */
struct osim_rules {
	u32 count;
	u32 level;
	u32 time_us;
	bool ena;
	bool latched;
	bool timer_armed;
	u64 timer_expires;
	u64 raised[OSIM_CAUSE_NR];
	u64 latch_events;
	u64 masked_dropped;
	u64 resend_writes;
	u64 ack_excess;
	u64 timer_after_us;
	bool owed;
	bool silent;
	u64 silent_since;
	u64 left;
	u64 left_max_ns;
};

unsigned int osim_rules_add(struct osim_rules *r,
			    const struct osim_rules_cfg *cfg, u64 now, u32 n);
unsigned int osim_rules_host_write(struct osim_rules *r,
				   const struct osim_rules_cfg *cfg, u64 now,
				   u64 val);
unsigned int osim_rules_levels_write(struct osim_rules *r, u64 now, u64 val);
unsigned int osim_rules_timer(struct osim_rules *r,
			      const struct osim_rules_cfg *cfg, u64 now);
void osim_rules_done(struct osim_rules *r, const struct osim_rules_cfg *cfg,
		     u64 now, unsigned int act, bool sent);
u64 osim_rules_levels_read(const struct osim_rules *r);
u32 osim_rules_dbell(u32 cur, u32 rsize, u64 val, u64 *excess);

#endif /* _OSIM_RULES_H */
