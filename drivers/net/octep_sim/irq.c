// SPDX-License-Identifier: GPL-2.0
/*
 * octep_sim: interrupts, and the kernel layer of the block's rules.
 *
 * Each device has its own irq_chip and linear irq domain: one hwirq per ring
 * pair (input and output share it) and one for the mailbox. An interrupt is
 * sent with generic_handle_domain_irq_safe() in hard interrupt context: from
 * an irq_work on the CPU that raised it or, when the line's affinity names
 * another CPU, from an IPI to that CPU. The driver's handler runs as it
 * would for an MSI-X vector.
 *
 * The rules themselves (crossing, the block's timer, RESEND, the enable,
 * the record of rings left) are rules.c, shared with the vfio-user server.
 * This file is their kernel layer (struct osim_cnt, one for OUT_CNTS and
 * one for IN_CNTS of each ring pair): every osim_cnt_*() runs under the
 * ring side's lock, reads the device's settings and the clock for the
 * event, runs the count's hrtimer as the rules ask and sends with
 * osim_fire().
 */
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

/* The device's settings, once an event: debugfs may change them any time. */
static void osim_cnt_cfg(const struct osim_cnt *c, struct osim_rules_cfg *cfg)
{
	const struct osim_dev *dev = c->ring->dev;

	/* Pair with the WRITE_ONCE()s of debugfs.c's setters. */
	cfg->resend_pending = READ_ONCE(dev->resend_pending);
	cfg->masked = READ_ONCE(dev->masked);
	cfg->left_ns = READ_ONCE(dev->left_ns);
}

/*
 * Under the lock: carry out what an event of the rules asked (rules.h), in
 * its order, and tell the rules whether the interrupt went out.
 */
static void osim_cnt_act(struct osim_cnt *c, const struct osim_rules_cfg *cfg,
			 u64 now, unsigned int act)
{
	bool sent = false;

	/* May be running and waiting for our lock: the rules ignore it then. */
	if (act & OSIM_RULES_CANCEL)
		hrtimer_try_to_cancel(&c->timer);
	if (act & OSIM_RULES_START)
		hrtimer_start(&c->timer, ns_to_ktime(c->r.timer_expires),
			      HRTIMER_MODE_ABS);
	if (act & OSIM_RULES_SEND)
		sent = osim_fire(c->ring->dev, c->ring->idx);
	osim_rules_done(&c->r, cfg, now, act, sent);
}

static enum hrtimer_restart osim_cnt_timer(struct hrtimer *t)
{
	struct osim_cnt *c = container_of(t, struct osim_cnt, timer);
	spinlock_t *lock = osim_cnt_lock(c);
	struct osim_rules_cfg cfg;
	unsigned long flags;
	u64 now;

	spin_lock_irqsave(lock, flags);
	/*
	 * Restarted (hrtimer_start() from a host write) while this ran: the
	 * timer is queued again for the new time, and the rules, expecting
	 * that one, make this run a stale one that does nothing.
	 */
	now = ktime_get_ns();
	osim_cnt_cfg(c, &cfg);
	osim_cnt_act(c, &cfg, now, osim_rules_timer(&c->r, &cfg, now));
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
 * @n: how many; the writes they stand for are already visible (the count
 *	is stored with a release)
 */
void osim_cnt_add(struct osim_cnt *c, u32 n)
{
	struct osim_rules_cfg cfg;
	u64 now = ktime_get_ns();

	osim_cnt_cfg(c, &cfg);
	osim_cnt_act(c, &cfg, now, osim_rules_add(&c->r, &cfg, now, n));
}

/**
 * osim_cnt_host_write() - the host writes a CNTS register
 * @c: count, its side's lock held
 * @val: what the host wrote: packets to acknowledge in 31:0, RESEND in 59
 */
void osim_cnt_host_write(struct osim_cnt *c, u64 val)
{
	struct osim_rules_cfg cfg;
	u64 now = ktime_get_ns();

	osim_cnt_cfg(c, &cfg);
	osim_cnt_act(c, &cfg, now, osim_rules_host_write(&c->r, &cfg, now, val));
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
	struct osim_rules_cfg cfg;
	u64 now = ktime_get_ns();

	osim_cnt_cfg(c, &cfg);
	osim_cnt_act(c, &cfg, now, osim_rules_levels_write(&c->r, now, val));
}
