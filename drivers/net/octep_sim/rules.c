// SPDX-License-Identifier: GPL-2.0
/*
 * octep_sim: the block's rules for counting and raising interrupts (see
 * rules.h for how a layer drives them). One struct osim_rules for
 * OUT_CNTS and one for IN_CNTS of each ring pair:
 *  - crossing: the count going from below the packet level to at or above
 *    it raises the interrupt, once; a count that stays at or above the level
 *    raises nothing more, whatever time passes.
 *  - timer: when the count is nonzero and below the level, the block's timer
 *    runs from the last time the count changed by a host write or rose from
 *    zero; when it runs out with the count still nonzero and below the level
 *    it raises the interrupt, once.
 *  - RESEND: a host write with bit 59 raises the interrupt if the ring is
 *    pending, as the device's resend_pending setting says.
 *  - enable: a raise while INT_LEVELS bit 62 is clear is latched and sent
 *    when the host sets the bit (as an MSI-X pending bit), or, with the
 *    device's masked setting "drop", lost. Which of the two the real block
 *    does is not known; a driver must be correct under both.
 *
 * Beside the rules, each count keeps the block's record of rings left
 * (osim_rules_silence()): the tests' ground truth for the report's bug.
 *
 * Nothing here may take a lock, sleep, allocate or read a clock: the same
 * source is built into the vfio-user server (vfu/) against stand-ins of
 * the few kernel headers it includes.
 */
#include <asm/barrier.h>
#include <linux/bitfield.h>
#include <linux/limits.h>
#include <linux/math64.h>
#include <linux/minmax.h>

#include "../ethernet/octep_ipsec/octep_sdp.h"
#include "rules.h"

/* The packet level as the rules use it: 0 acts as 1. */
static u32 osim_rules_level(const struct osim_rules *r)
{
	return r->level ? r->level : 1;
}

/*
 * After every change of the rules' state: keep the block's own record of
 * rings left. A count is silent while it holds packets with its interrupt
 * enabled and no interrupt on its way (sent since the host's last CNTS
 * write, latched, or due from the timer): the host will hear of it only by
 * looking. A silence ends when that changes or when the host acknowledges
 * packets (@looked: it is servicing the ring, and what it leaves starts a
 * new one). One that lasted left_ns or more is a ring left. An interrupt
 * sent and still being delivered is owed, so a host that reads the count
 * before the interrupt arrives does not make one.
 */
static void osim_rules_silence(struct osim_rules *r,
			       const struct osim_rules_cfg *cfg, u64 now,
			       bool looked)
{
	bool silent = r->count && r->ena && !r->owed && !r->timer_armed;
	u64 ns;

	if (r->silent == silent && !(silent && looked))
		return;
	if (r->silent) {
		ns = now - r->silent_since;
		r->left_max_ns = max(r->left_max_ns, ns);
		if (ns >= cfg->left_ns)
			r->left++;
	}
	r->silent = silent;
	r->silent_since = now;
}

/* Raise the ring's interrupt; if disabled, latch it or (drop) lose it. */
static unsigned int osim_rules_raise(struct osim_rules *r,
				     const struct osim_rules_cfg *cfg,
				     enum osim_cause cause)
{
	r->raised[cause]++;
	if (r->ena)
		return OSIM_RULES_SEND;
	if (cfg->masked == OSIM_MASKED_DROP) {
		r->masked_dropped++;
		return 0;
	}
	if (!r->latched)
		r->latch_events++;
	r->latched = true;
	return 0;
}

static unsigned int osim_rules_arm(struct osim_rules *r, u64 now)
{
	/*
	 * No threshold, no timer. One started before may still fire: it
	 * finds timer_armed clear (osim_rules_timer()).
	 */
	if (!r->time_us) {
		r->timer_armed = false;
		return 0;
	}
	r->timer_expires = now + (u64)r->time_us * NSEC_PER_USEC;
	r->timer_armed = true;
	return OSIM_RULES_START;
}

static unsigned int osim_rules_disarm(struct osim_rules *r)
{
	if (!r->timer_armed)
		return 0;
	r->timer_armed = false;
	return OSIM_RULES_CANCEL;
}

/* The timer after a host change: it runs if the count qualifies for it. */
static unsigned int osim_rules_rearm(struct osim_rules *r, u64 now)
{
	if (r->count && r->count < osim_rules_level(r))
		return osim_rules_arm(r, now);
	return osim_rules_disarm(r);
}

/**
 * osim_rules_add() - the block counts @n more packets (or instructions) done
 * @r: count
 * @cfg: the device's settings
 * @now: the layer's clock, in ns
 * @n: how many; the writes they stand for are already visible
 *
 * A count saturates at U32_MAX.
 *
 * Return: what the layer does next (rules.h).
 */
unsigned int osim_rules_add(struct osim_rules *r,
			    const struct osim_rules_cfg *cfg, u64 now, u32 n)
{
	u32 old = r->count, level = osim_rules_level(r);
	u32 new = old + min(n, U32_MAX - old);
	unsigned int act = 0;

	/*
	 * Release: the buffers (or the instruction reads) this count stands
	 * for are done before the host can see the count. Pairs with the
	 * smp_load_acquire() of the count in the kernel model's osim_read64().
	 */
	smp_store_release(&r->count, new);
	if (old < level && new >= level) {
		act = osim_rules_disarm(r);
		act |= osim_rules_raise(r, cfg, OSIM_CAUSE_CROSSING);
	} else if (!old && new) {
		act = osim_rules_arm(r, now);	/* below the level: rose from zero */
	}
	return act;
}

static bool osim_rules_pending(const struct osim_rules *r,
			       const struct osim_rules_cfg *cfg)
{
	switch (cfg->resend_pending) {
	case OSIM_RESEND_LEVEL:
		return r->count >= osim_rules_level(r);
	case OSIM_RESEND_NONZERO:
		return r->count != 0;
	default:
		return false;
	}
}

/**
 * osim_rules_host_write() - the host writes a CNTS register
 * @r: count
 * @cfg: the device's settings
 * @now: the layer's clock, in ns
 * @val: what the host wrote: packets to acknowledge in 31:0, RESEND in 59
 *
 * Acknowledging more than is counted takes the count to 0 (ack_excess).
 *
 * Return: what the layer does next (rules.h).
 */
unsigned int osim_rules_host_write(struct osim_rules *r,
				   const struct osim_rules_cfg *cfg, u64 now,
				   u64 val)
{
	u32 n = FIELD_GET(OCTEP_SDP_CNTS_COUNT, val);
	unsigned int act = 0;

	/* The host has looked: what was sent before is answered. */
	r->owed = false;
	if (n > r->count) {
		r->ack_excess++;
		n = r->count;
	}
	if (n) {
		/* Pairs with the smp_load_acquire() in osim_read64(). */
		smp_store_release(&r->count, r->count - n);
		act = osim_rules_rearm(r, now) | OSIM_RULES_LOOKED;
	}
	if (val & OCTEP_SDP_CNTS_RESEND) {
		r->resend_writes++;
		if (osim_rules_pending(r, cfg))
			act |= osim_rules_raise(r, cfg, OSIM_CAUSE_RESEND);
	}
	return act;
}

/**
 * osim_rules_levels_write() - the host writes an INT_LEVELS register
 * @r: count
 * @now: the layer's clock, in ns
 * @val: level in 31:0, time threshold (us) in 61:32, enable in 62
 *
 * A new level raises nothing by itself (nothing crossed); a new level or
 * time threshold restarts the timer if the count now qualifies for it.
 * Setting the enable sends a latched interrupt (not a new raise).
 *
 * Return: what the layer does next (rules.h).
 */
unsigned int osim_rules_levels_write(struct osim_rules *r, u64 now, u64 val)
{
	u32 level = FIELD_GET(OCTEP_SDP_INT_LEVELS_PKTS, val);
	u32 time_us = FIELD_GET(OCTEP_SDP_INT_LEVELS_TIME, val);
	bool ena = val & OCTEP_SDP_INT_LEVELS_ENA;
	unsigned int act = 0;

	if (level != r->level || time_us != r->time_us) {
		r->level = level;
		r->time_us = time_us;
		act = osim_rules_rearm(r, now);
	}
	r->ena = ena;
	if (ena && r->latched) {
		r->latched = false;
		act |= OSIM_RULES_SEND;
	}
	return act;
}

/**
 * osim_rules_timer() - the layer's timer for this count ran out
 * @r: count
 * @cfg: the device's settings
 * @now: the layer's clock, in ns
 *
 * A timer that was cancelled or restarted while it was on its way finds
 * the rules not expecting it (or expecting it later) and does nothing: a
 * layer need not make sure a cancel took.
 *
 * Return: what the layer does next (rules.h).
 */
unsigned int osim_rules_timer(struct osim_rules *r,
			      const struct osim_rules_cfg *cfg, u64 now)
{
	if (!r->timer_armed || now < r->timer_expires)
		return 0;
	r->timer_armed = false;
	if (!r->count || r->count >= osim_rules_level(r))
		return 0;
	r->timer_after_us = div_u64(now - r->timer_expires, NSEC_PER_USEC) +
			    r->time_us;
	return osim_rules_raise(r, cfg, OSIM_CAUSE_TIMER);
}

/**
 * osim_rules_done() - the layer carried out an event's actions
 * @r: count
 * @cfg: the device's settings
 * @now: the layer's clock, in ns (the event's)
 * @act: what the event returned
 * @sent: OSIM_RULES_SEND was asked and the interrupt went out (not lost
 *	to a fault or a device going away)
 *
 * An interrupt sent is owed until the host's next CNTS write; then the
 * record of rings left is brought up to date.
 */
void osim_rules_done(struct osim_rules *r, const struct osim_rules_cfg *cfg,
		     u64 now, unsigned int act, bool sent)
{
	if ((act & OSIM_RULES_SEND) && sent)
		r->owed = true;
	osim_rules_silence(r, cfg, now, act & OSIM_RULES_LOOKED);
}

/**
 * osim_rules_levels_read() - the INT_LEVELS register as the host reads it
 * @r: count
 *
 * Return: the register value.
 */
u64 osim_rules_levels_read(const struct osim_rules *r)
{
	return FIELD_PREP(OCTEP_SDP_INT_LEVELS_PKTS, r->level) |
	       FIELD_PREP(OCTEP_SDP_INT_LEVELS_TIME, r->time_us) |
	       (r->ena ? OCTEP_SDP_INT_LEVELS_ENA : 0);
}

/**
 * osim_rules_dbell() - a doorbell write (IN_INSTR_DBELL, OUT_SLIST_DBELL)
 * @cur: instructions pending (credits) before it
 * @rsize: the ring's size
 * @val: what the host wrote: N to add in 31:0, or all ones to reset
 *	(octeon_ep's way)
 * @excess: counts a write that would take the ring past its size
 *
 * Return: instructions pending (credits) after it, at most @rsize.
 */
u32 osim_rules_dbell(u32 cur, u32 rsize, u64 val, u64 *excess)
{
	u32 n = FIELD_GET(OCTEP_SDP_CNTS_COUNT, val);

	if (n == U32_MAX)
		return 0;
	if (n > rsize - min(cur, rsize)) {
		(*excess)++;
		return rsize;
	}
	return cur + n;
}
