// SPDX-License-Identifier: GPL-2.0
/*
 * octep_sim: interrupts, and the block's rules for raising them.
 *
 * Each device has its own irq_chip and linear irq domain: one hwirq per ring
 * pair (input and output share it) and one for the mailbox. An interrupt is
 * sent with generic_handle_domain_irq_safe() in hard interrupt context: from
 * an irq_work on the CPU that raised it or, when the line's affinity names
 * another CPU, from an IPI to that CPU. The driver's handler runs as it
 * would for an MSI-X vector.
 *
 * The rules (struct osim_cnt, one for OUT_CNTS and one for IN_CNTS of each
 * ring pair; every function here but osim_fire() runs under the ring side's
 * lock):
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
 * (osim_cnt_silence()): the tests' ground truth for the report's bug.
 */
#include <linux/bitfield.h>
#include <linux/irq.h>
#include <linux/irqdomain.h>

#include "octep_sim.h"

/* ---------------------------------------------------------------- chip */

static void osim_irq_noop(struct irq_data *d)
{
}

static int osim_irq_retrigger(struct irq_data *d)
{
	struct osim_dev *dev = irq_data_get_irq_chip_data(d);

	/* An interrupt that came while the line was disabled: send it again. */
	osim_fire(dev, irqd_to_hwirq(d));
	return 1;
}

static int osim_irq_set_affinity(struct irq_data *d, const struct cpumask *mask,
				 bool force)
{
	struct osim_dev *dev = irq_data_get_irq_chip_data(d);
	struct osim_hwirq *h = &dev->hwirqs[irqd_to_hwirq(d)];
	unsigned int cpu;

	cpu = cpumask_first_and(mask, cpu_online_mask);
	if (cpu >= nr_cpu_ids)
		return -EINVAL;
	/* Read locklessly by osim_fire(): any CPU of the mask will do. */
	WRITE_ONCE(h->cpu, cpu);
	irq_data_update_effective_affinity(d, cpumask_of(cpu));
	return IRQ_SET_MASK_OK_DONE;
}

static const struct irq_chip osim_irq_chip = {
	.name			= OSIM_NAME,
	.irq_mask		= osim_irq_noop,
	.irq_unmask		= osim_irq_noop,
	.irq_retrigger		= osim_irq_retrigger,
	.irq_set_affinity	= osim_irq_set_affinity,
};

static int osim_irq_map(struct irq_domain *d, unsigned int virq,
			irq_hw_number_t hwirq)
{
	irq_set_chip_data(virq, d->host_data);
	irq_set_chip_and_handler(virq, &osim_irq_chip, handle_simple_irq);
#ifndef OCTEP_NO_IRQ_MOVE_PCNTXT
	/* No ack path to move it in: affinity changes take effect at once. */
	irq_set_status_flags(virq, IRQ_MOVE_PCNTXT);
#endif
	return 0;
}

static void osim_irq_unmap(struct irq_domain *d, unsigned int virq)
{
	irq_set_chip_and_handler(virq, NULL, NULL);
	irq_set_chip_data(virq, NULL);
}

static const struct irq_domain_ops osim_irq_domain_ops = {
	.map	= osim_irq_map,
	.unmap	= osim_irq_unmap,
};

static void osim_irq_work(struct irq_work *work)
{
	struct osim_hwirq *h = container_of(work, struct osim_hwirq, work);

	generic_handle_domain_irq_safe(h->dev->domain, h->hwirq);
}

static void osim_irq_csd(void *info)
{
	struct osim_hwirq *h = info;

	generic_handle_domain_irq_safe(h->dev->domain, h->hwirq);
}

/* Deliver one interrupt on @h's line, on its CPU. */
static void osim_send(struct osim_hwirq *h)
{
	int cpu;

	/* Pairs with the WRITE_ONCE() in osim_irq_set_affinity(). */
	cpu = READ_ONCE(h->cpu);
	if (cpu >= 0 && cpu != raw_smp_processor_id() && cpu_online(cpu)) {
		/* -EBUSY: one is on its way there already. */
		smp_call_function_single_async(cpu, &h->csd);
		return;
	}
	irq_work_queue(&h->work);
}

/*
 * The hostile mode's storm: the line fires every OSIM_STORM_PERIOD_NS
 * whatever INT_LEVELS say, until the kind is turned off. What stops it
 * reaching the driver is the IRQ core's disable, taken here as a vector
 * masked in the MSI-X table: the block's messages held, not sent.
 */
static enum hrtimer_restart osim_storm_fn(struct hrtimer *t)
{
	struct osim_hwirq *h = container_of(t, struct osim_hwirq, storm);
	struct osim_dev *dev = h->dev;

	if (test_bit(OSIM_F_DYING, &dev->flags) ||
	    test_bit(OSIM_F_GONE, &dev->flags) ||
	    !(READ_ONCE(dev->hostile.kinds) & BIT(OSIM_HK_IRQ_STORM))) {
		clear_bit(0, &h->storming);
		return HRTIMER_NORESTART;
	}
	atomic64_inc(&dev->hostile.storm_fires);
	if (!irqd_irq_disabled(irq_get_irq_data(h->virq)))
		osim_send(h);
	hrtimer_forward_now(t, ns_to_ktime(OSIM_STORM_PERIOD_NS));
	return HRTIMER_RESTART;
}

/**
 * osim_fire() - send one interrupt to Linux
 * @dev: device
 * @hwirq: ring number, or OSIM_HWIRQ_MBOX
 *
 * Any context. The ring's lose_irq fault is applied here. Two sends before
 * the first is delivered make one interrupt (an edge is an edge).
 *
 * Return: false if the interrupt was lost (the fault, or the device going).
 */
bool osim_fire(struct osim_dev *dev, unsigned int hwirq)
{
	struct osim_hwirq *h = &dev->hwirqs[hwirq];

	if (test_bit(OSIM_F_DYING, &dev->flags) ||
	    test_bit(OSIM_F_GONE, &dev->flags))
		return false;
	if (hwirq < dev->num_rings) {
		struct osim_ring *ring = &dev->rings[hwirq];

		if (atomic_add_unless(&ring->lose_irq, -1, 0)) {
			atomic64_inc(&ring->irq_lost);
			return false;
		}
		atomic64_inc(&ring->irq_fired);
		/* One storm a line at a time: one injection, one to catch. */
		if (!test_bit(0, &h->storming) &&
		    osim_hostile(dev, OSIM_HK_IRQ_STORM, NULL) &&
		    !test_and_set_bit(0, &h->storming))
			hrtimer_start(&h->storm,
				      ns_to_ktime(OSIM_STORM_PERIOD_NS),
				      HRTIMER_MODE_REL_HARD);
	}
	osim_send(h);
	return true;
}

/**
 * osim_irq_init() - create the device's irq domain and map its lines
 * @dev: device, num_rings set
 *
 * Fills in the auxiliary device's ring_irq[] and mbox_irq.
 *
 * Return: 0 or a negative errno.
 */
int osim_irq_init(struct osim_dev *dev)
{
	struct octep_sdp_dev *sdp = &dev->asdp->sdp;
	unsigned int i;
	int virq;

	/* Every line's, before anything can fail: osim_irq_fini() cancels. */
	for (i = 0; i < OSIM_NR_HWIRQ; i++) {
		hrtimer_init(&dev->hwirqs[i].storm, CLOCK_MONOTONIC,
			     HRTIMER_MODE_REL_HARD);
		dev->hwirqs[i].storm.function = osim_storm_fn;
	}
	dev->fwnode = irq_domain_alloc_named_fwnode(dev_name(&dev->dev));
	if (!dev->fwnode)
		return -ENOMEM;
	dev->domain = irq_domain_create_linear(dev->fwnode, OSIM_NR_HWIRQ,
					       &osim_irq_domain_ops, dev);
	if (!dev->domain) {
		irq_domain_free_fwnode(dev->fwnode);
		dev->fwnode = NULL;
		return -ENOMEM;
	}
	for (i = 0; i < OSIM_NR_HWIRQ; i++) {
		struct osim_hwirq *h = &dev->hwirqs[i];

		h->dev = dev;
		h->hwirq = i;
		h->cpu = -1;
		/* HARD: the handler runs in hard interrupt context, as for MSI-X. */
		h->work = IRQ_WORK_INIT_HARD(osim_irq_work);
		INIT_CSD(&h->csd, osim_irq_csd, h);
		if (i >= dev->num_rings && i != OSIM_HWIRQ_MBOX)
			continue;
		virq = irq_create_mapping(dev->domain, i);
		if (!virq) {
			osim_irq_fini(dev);
			return -ENOMEM;
		}
		h->virq = virq;
		if (i == OSIM_HWIRQ_MBOX)
			sdp->mbox_irq = virq;
		else
			sdp->ring_irq[i] = virq;
	}
	return 0;
}

/**
 * osim_irq_fini() - stop sending interrupts and remove the domain
 * @dev: device; no driver holds its interrupts any more
 */
void osim_irq_fini(struct osim_dev *dev)
{
	unsigned int i, virq;

	set_bit(OSIM_F_DYING, &dev->flags);
	if (!dev->domain)
		return;
	for (i = 0; i < OSIM_NR_HWIRQ; i++) {
		struct osim_hwirq *h = &dev->hwirqs[i];

		/* DYING is set: a storm's timer stops at its next expiry. */
		hrtimer_cancel(&h->storm);
		irq_work_sync(&h->work);
		/* An IPI on its way: the CPU unlocks the csd when it has run. */
		while (smp_load_acquire(&h->csd.node.u_flags) & CSD_FLAG_LOCK)
			cpu_relax();
		virq = irq_find_mapping(dev->domain, i);
		if (virq)
			irq_dispose_mapping(virq);
	}
	irq_domain_remove(dev->domain);
	dev->domain = NULL;
	irq_domain_free_fwnode(dev->fwnode);
	dev->fwnode = NULL;
}

/* ---------------------------------------------------------------- rules */

static spinlock_t *osim_cnt_lock(struct osim_cnt *c)
{
	return c->is_in ? &c->ring->iq.lock : &c->ring->oq.lock;
}

/* The packet level as the rules use it: 0 acts as 1. */
static u32 osim_cnt_level(const struct osim_cnt *c)
{
	return c->level ? c->level : 1;
}

/*
 * Under the lock, after every change of the rules' state: keep the block's
 * own record of rings left. A count is silent while it holds packets with
 * its interrupt enabled and no interrupt on its way (sent since the host's
 * last CNTS write, latched, or due from the timer): the host will hear of
 * it only by looking. A silence ends when that changes or when the host
 * acknowledges packets (@looked: it is servicing the ring, and what it
 * leaves starts a new one). One that lasted left_ns or more is a ring
 * left. An interrupt sent and still being delivered is owed, so a host
 * that reads the count before the interrupt arrives does not make one.
 */
static void osim_cnt_silence(struct osim_cnt *c, bool looked)
{
	bool silent = c->count && c->ena && !c->owed && !c->timer_armed;
	ktime_t now;
	u64 ns;

	if (c->silent == silent && !(silent && looked))
		return;
	now = ktime_get();
	if (c->silent) {
		ns = ktime_to_ns(ktime_sub(now, c->silent_since));
		c->left_max_ns = max(c->left_max_ns, ns);
		/* Pairs with the WRITE_ONCE() in osim_left_set(). */
		if (ns >= READ_ONCE(c->ring->dev->left_ns))
			c->left++;
	}
	c->silent = silent;
	c->silent_since = now;
}

/*
 * Under the lock: raise the ring's interrupt; if disabled, latch it or
 * (masked=drop) lose it.
 */
static void osim_cnt_raise(struct osim_cnt *c, enum osim_cause cause)
{
	c->raised[cause]++;
	if (!c->ena) {
		if (READ_ONCE(c->ring->dev->masked) == OSIM_MASKED_DROP) {
			c->masked_dropped++;
			return;
		}
		if (!c->latched)
			c->latch_events++;
		c->latched = true;
		return;
	}
	if (osim_fire(c->ring->dev, c->ring->idx))
		c->owed = true;
}

static void osim_cnt_arm(struct osim_cnt *c)
{
	if (!c->time_us) {
		c->timer_armed = false;
		return;
	}
	c->timer_expires = ktime_add_us(ktime_get(), c->time_us);
	c->timer_armed = true;
	hrtimer_start(&c->timer, c->timer_expires, HRTIMER_MODE_ABS);
}

static void osim_cnt_disarm(struct osim_cnt *c)
{
	if (!c->timer_armed)
		return;
	c->timer_armed = false;
	/* May be running and waiting for our lock: it rechecks timer_armed. */
	hrtimer_try_to_cancel(&c->timer);
}

static enum hrtimer_restart osim_cnt_timer(struct hrtimer *t)
{
	struct osim_cnt *c = container_of(t, struct osim_cnt, timer);
	spinlock_t *lock = osim_cnt_lock(c);
	unsigned long flags;
	ktime_t now;

	spin_lock_irqsave(lock, flags);
	/*
	 * Rearmed (hrtimer_start() from a host write) while this ran: the
	 * timer is queued again for the new time, so this run is stale.
	 */
	now = ktime_get();
	if (c->timer_armed && ktime_compare(now, c->timer_expires) >= 0) {
		c->timer_armed = false;
		if (c->count && c->count < osim_cnt_level(c)) {
			c->timer_after_us = ktime_us_delta(now, c->timer_expires) +
					    c->time_us;
			osim_cnt_raise(c, OSIM_CAUSE_TIMER);
		}
		osim_cnt_silence(c, false);
	}
	spin_unlock_irqrestore(lock, flags);
	return HRTIMER_NORESTART;
}

/**
 * osim_cnt_init() - reset a count
 * @c: count
 * @ring: its ring pair
 * @is_in: IN_CNTS, else OUT_CNTS
 */
void osim_cnt_init(struct osim_cnt *c, struct osim_ring *ring, bool is_in)
{
	memset(c, 0, sizeof(*c));
	c->ring = ring;
	c->is_in = is_in;
	hrtimer_setup(&c->timer, osim_cnt_timer, CLOCK_MONOTONIC,
		      HRTIMER_MODE_ABS);
}

/**
 * osim_cnt_stop() - cancel a count's timer for good
 * @c: count; nothing arms it any more
 */
void osim_cnt_stop(struct osim_cnt *c)
{
	hrtimer_cancel(&c->timer);
}

/**
 * osim_cnt_add() - the block counts @n more packets (or instructions) done
 * @c: count, its side's lock held
 * @n: how many; the writes they stand for are already visible
 */
void osim_cnt_add(struct osim_cnt *c, u32 n)
{
	u32 old = c->count, level = osim_cnt_level(c);
	u32 new = old + min(n, U32_MAX - old);

	/*
	 * Release: the buffers (or the instruction reads) this count stands
	 * for are done before the host can see the count. Pairs with the
	 * smp_load_acquire() of the count in osim_read64().
	 */
	smp_store_release(&c->count, new);
	if (old < level && new >= level) {
		osim_cnt_disarm(c);
		osim_cnt_raise(c, OSIM_CAUSE_CROSSING);
	} else if (!old && new) {
		osim_cnt_arm(c);	/* below the level: rose from zero */
	}
	osim_cnt_silence(c, false);
}

static bool osim_cnt_pending(const struct osim_cnt *c)
{
	switch (READ_ONCE(c->ring->dev->resend_pending)) {
	case OSIM_RESEND_LEVEL:
		return c->count >= osim_cnt_level(c);
	case OSIM_RESEND_NONZERO:
		return c->count != 0;
	default:
		return false;
	}
}

/**
 * osim_cnt_host_write() - the host writes a CNTS register
 * @c: count, its side's lock held
 * @val: what the host wrote: packets to acknowledge in 31:0, RESEND in 59
 */
void osim_cnt_host_write(struct osim_cnt *c, u64 val)
{
	u32 n = FIELD_GET(OCTEP_SDP_CNTS_COUNT, val);

	/* The host has looked: what was sent before is answered. */
	c->owed = false;
	if (n > c->count) {
		c->ack_excess++;
		n = c->count;
	}
	if (n) {
		/* Pairs with the smp_load_acquire() in osim_read64(). */
		smp_store_release(&c->count, c->count - n);
		if (c->count && c->count < osim_cnt_level(c))
			osim_cnt_arm(c);
		else
			osim_cnt_disarm(c);
	}
	if (val & OCTEP_SDP_CNTS_RESEND) {
		c->resend_writes++;
		if (osim_cnt_pending(c))
			osim_cnt_raise(c, OSIM_CAUSE_RESEND);
	}
	osim_cnt_silence(c, n);
}

/**
 * osim_cnt_levels_write() - the host writes an INT_LEVELS register
 * @c: count, its side's lock held
 * @val: level in 31:0, time threshold (us) in 61:32, enable in 62
 *
 * A new level raises nothing by itself (nothing crossed); a new level or
 * time threshold restarts the timer if the count now qualifies for it.
 * Setting the enable sends a latched interrupt.
 */
void osim_cnt_levels_write(struct osim_cnt *c, u64 val)
{
	u32 level = FIELD_GET(OCTEP_SDP_INT_LEVELS_PKTS, val);
	u32 time_us = FIELD_GET(OCTEP_SDP_INT_LEVELS_TIME, val);
	bool ena = val & OCTEP_SDP_INT_LEVELS_ENA;

	if (level != c->level || time_us != c->time_us) {
		c->level = level;
		c->time_us = time_us;
		if (c->count && c->count < osim_cnt_level(c))
			osim_cnt_arm(c);
		else
			osim_cnt_disarm(c);
	}
	c->ena = ena;
	if (ena && c->latched) {
		c->latched = false;
		if (osim_fire(c->ring->dev, c->ring->idx))
			c->owed = true;
	}
	osim_cnt_silence(c, false);
}

/**
 * osim_cnt_levels_read() - the INT_LEVELS register as the host reads it
 * @c: count
 *
 * Return: the register value.
 */
u64 osim_cnt_levels_read(const struct osim_cnt *c)
{
	return FIELD_PREP(OCTEP_SDP_INT_LEVELS_PKTS, c->level) |
	       FIELD_PREP(OCTEP_SDP_INT_LEVELS_TIME, c->time_us) |
	       (c->ena ? OCTEP_SDP_INT_LEVELS_ENA : 0);
}
