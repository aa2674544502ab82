// SPDX-License-Identifier: GPL-2.0
/*
 * octep_ipsec: the netdev - open/stop, the interrupt, the quiesce and the
 * resume, reconfiguration.
 */
#include <linux/bpf.h>
#include <linux/delay.h>
#include <linux/etherdevice.h>
#include <linux/ktime.h>
#include <linux/rtnetlink.h>

#include "octep_ipsec.h"
#include "octep_trace.h"

/**
 * octep_qv_schedule() - ask for a visit of a ring pair
 * @qv: ring pair
 * @ask: who asks, for the flight recorder
 *
 * The only way anything but the poll services a ring: when the ring is held
 * napi_schedule_prep() leaves the note (MISSED) for the holder (rule 2).
 *
 * Return: true if this call scheduled the poll.
 */
bool octep_qv_schedule(struct octep_qvec *qv, enum octep_ask ask)
{
	octep_visit_ask(qv, ask);
	if (napi_schedule_prep(&qv->napi)) {
		__napi_schedule(&qv->napi);
		return true;
	}
	/* Held (note left), or disabled (the resume owes it a visit). */
	atomic64_inc(&qv->oq.oq_declined);
	trace_octep_note(qv->idx, OCTEP_NOTE_DECLINED);
	return false;
}

/*
 * Interrupts a ring pair may see while its enable bit is clear: raises the
 * block had sent before the disable reached it. More is a line that does
 * not stop.
 */
#define OCTEP_STORM_HITS	8
/*
 * Polls in a row that an interrupt asked for and that found nothing to
 * do. A raise in flight when a poll took its packets makes one now and
 * then; a line that fires slower than a poll completes makes only these.
 */
#define OCTEP_STORM_EMPTY	32
/* How long a stormy line stays disabled, its ring pair polled meanwhile. */
#define OCTEP_STORM_HOLD	HZ

/*
 * A line that keeps firing for nothing: disable it in the IRQ core and
 * poll the ring pair from a timer for OCTEP_STORM_HOLD. From the handler
 * or the poll, whichever sees it first; the bit makes it once.
 */
static void octep_irq_storm(struct octep_qvec *qv, const char *why)
{
	WRITE_ONCE(qv->storm_until, jiffies + OCTEP_STORM_HOLD);
	/*
	 * A full barrier: storm_until before the bit, which is all
	 * octep_storm_poll() reads it after. A second caller only moves
	 * the end of the hold.
	 */
	if (test_and_set_bit(OCTEP_OQ_STORM, &qv->oq.flags))
		return;
	disable_irq_nosync(qv->irq);
	atomic64_inc(&qv->oct->irq_storms);
	if (net_ratelimit())
		netdev_warn(qv->oct->netdev,
			    "ring %u: interrupt storm (%s): line off, ring polled for %u ms\n",
			    qv->idx, why, jiffies_to_msecs(OCTEP_STORM_HOLD));
}

/**
 * octep_storm_count() - count a poll an interrupt asked for
 * @qv: ring pair; called by its poll, which owns irq_empty
 * @empty: the poll found nothing to receive or complete
 */
void octep_storm_count(struct octep_qvec *qv, bool empty)
{
	if (!empty) {
		qv->irq_empty = 0;
		return;
	}
	if (++qv->irq_empty <= OCTEP_STORM_EMPTY)
		return;
	qv->irq_empty = 0;
	octep_irq_storm(qv, "interrupts with nothing to do");
}

/**
 * octep_storm_poll() - a poll completed on a ring pair whose line is off
 * @qv: ring pair, OCTEP_OQ_STORM set; called by its poll after it gave
 *	SCHED back and enabled the interrupt
 *
 * Polls again a jiffy later, or, once OCTEP_STORM_HOLD has passed, gives
 * the line back to the block: if it still storms, the handler disables it
 * again within OCTEP_STORM_HITS interrupts.
 */
void octep_storm_poll(struct octep_qvec *qv)
{
	/* Pairs with test_and_set_bit() in octep_irq_storm(). */
	smp_rmb();
	if (time_before(jiffies, READ_ONCE(qv->storm_until))) {
		mod_timer(&qv->storm_timer, jiffies + 1);
		return;
	}
	/* Cleared first: the handler may run the moment the line is on. */
	clear_bit(OCTEP_OQ_STORM, &qv->oq.flags);
	enable_irq(qv->irq);
}

/**
 * octep_storm_tick() - the storm timer: schedule a poll of the ring pair
 * @t: qv->storm_timer
 */
void octep_storm_tick(struct timer_list *t)
{
	struct octep_qvec *qv = from_timer(qv, t, storm_timer);

	octep_qv_schedule(qv, OCTEP_ASK_STORM);
}

static irqreturn_t octep_ring_irq(int irq, void *data)
{
	struct octep_qvec *qv = data;
	u32 hits;

	/*
	 * Read before our own disable below. The count and its reset at the
	 * enable pair only loosely (octep_regs_write_levels()): what they
	 * bound is a rate, not a number.
	 */
	if (!READ_ONCE(qv->irq_armed)) {
		hits = READ_ONCE(qv->irq_off_hits) + 1;
		WRITE_ONCE(qv->irq_off_hits, hits);
		if (unlikely(hits > OCTEP_STORM_HITS))
			octep_irq_storm(qv, "interrupts while off");
	}
	/* Off until a poll completes owing nothing (octep_napi_poll()). */
	octep_regs_write_levels(qv, false);
	octep_qv_schedule(qv, OCTEP_ASK_IRQ);
	return IRQ_HANDLED;
}

static void octep_datapath_down(struct octep_dev *oct)
{
	unsigned int q;

	/* Before the rings: no table entry names a ring being disabled. */
	octep_rss_disable(oct);
	for (q = 0; q < oct->num_rings; q++) {
		struct octep_qvec *qv = &oct->qv[q];

		octep_regs_ring_disable(qv);
		if (qv->irq_requested) {
			free_irq(qv->irq, qv);
			qv->irq_requested = false;
		}
		/*
		 * The NAPI is disabled and the handler gone: nothing arms the
		 * timer again. A line freed disabled is enabled again by the
		 * next request_irq().
		 */
		timer_delete_sync(&qv->storm_timer);
		clear_bit(OCTEP_OQ_STORM, &qv->oq.flags);
		octep_iq_free(qv);
		octep_oq_free(qv);
		if (qv->napi.poll) {
			netif_queue_set_napi(oct->netdev, q,
					     NETDEV_QUEUE_TYPE_RX, NULL);
			netif_queue_set_napi(oct->netdev, q,
					     NETDEV_QUEUE_TYPE_TX, NULL);
			netif_napi_del(&qv->napi);
		}
		qv->napi.poll = NULL;
	}
	oct->up = false;
	oct->quiesced = false;
	oct->napi_off = false;
}

/**
 * octep_rings_release() - free prepared ring memory nothing installed
 * @oct: device
 * @mem: from octep_rings_prepare(); freed
 * @rings: its entries
 */
static void octep_rings_release(struct octep_dev *oct,
				struct octep_ring_mem *mem, unsigned int rings)
{
	unsigned int q;

	if (!mem)
		return;
	for (q = 0; q < rings; q++) {
		octep_oq_mem_free(oct, &mem[q]);
		octep_iq_mem_free(oct, &mem[q]);
	}
	kfree(mem);
}

/**
 * octep_rings_prepare() - allocate what @rings ring pairs need to come up
 * @oct: device
 * @rings: ring pairs
 * @rx_size: output ring size
 * @tx_size: input ring size
 *
 * Rings and gather lists: what scales with the configuration and may
 * fail, allocated while the old rings still exist, so that a failure
 * leaves them working (prepare, then swap). Only the page pools come later,
 * bound to the new NAPIs (octep_oq_install()).
 *
 * Return: the memory, for octep_datapath_up(), or an ERR_PTR().
 */
static struct octep_ring_mem *octep_rings_prepare(struct octep_dev *oct,
						  unsigned int rings,
						  u32 rx_size, u32 tx_size)
{
	struct octep_ring_mem *mem;
	unsigned int q;
	int err;

	mem = kcalloc(rings, sizeof(*mem), GFP_KERNEL);
	if (!mem)
		return ERR_PTR(-ENOMEM);
	for (q = 0; q < rings; q++) {
		err = octep_oq_mem_alloc(&oct->qv[q], &mem[q], rx_size);
		if (!err)
			err = octep_iq_mem_alloc(oct, &mem[q], tx_size);
		if (err) {
			octep_rings_release(oct, mem, rings);
			return ERR_PTR(err);
		}
	}
	return mem;
}

/*
 * Rings, NAPIs (added, disabled) and IRQs for num_rings ring pairs, from
 * the prepared @mem (each entry used is emptied: what is left is the
 * caller's). The real queue counts are the caller's.
 */
static int octep_datapath_up(struct octep_dev *oct, struct octep_ring_mem *mem)
{
	struct net_device *netdev = oct->netdev;
	unsigned int q;
	u32 fail;
	int err;

	/*
	 * Down with every ring pair owned, so a failure unwinds them; the
	 * NAPIs are added disabled and the gate closed: octep_resume() opens
	 * both.
	 */
	oct->up = true;
	oct->quiesced = true;
	oct->napi_off = true;
	for (q = 0; q < oct->num_rings; q++) {
		struct octep_qvec *qv = &oct->qv[q];

		qv->oq_levels = octep_regs_oq_levels(oct->rx_level,
						     oct->rx_time);
		qv->iq_levels = octep_regs_oq_levels(oct->tx_level,
						     oct->tx_time);
		/*
		 * Added disabled: the page pool is bound to it, and
		 * page_pool_destroy() wants it disabled, which it is at every
		 * octep_datapath_down(), this one's unwind included.
		 */
		netif_napi_add(netdev, &qv->napi, octep_napi_poll);
		/* For netlink's queue-get and napi-get (and busy polling). */
		netif_napi_set_irq(&qv->napi, qv->irq);
		netif_queue_set_napi(netdev, q, NETDEV_QUEUE_TYPE_RX, &qv->napi);
		netif_queue_set_napi(netdev, q, NETDEV_QUEUE_TYPE_TX, &qv->napi);
		err = octep_oq_install(qv, &mem[q]);
		if (err)
			goto err;
		octep_iq_install(qv, &mem[q]);
		octep_regs_iq_setup(qv);
		octep_regs_oq_setup(qv);
		local_bh_disable();
		fail = octep_oq_refill(&qv->oq);
		local_bh_enable();
		/* The NAPI is not enabled yet: no other writer. */
		u64_stats_update_begin(&qv->oq.stats.syncp);
		qv->oq.stats.alloc_fail += fail;
		u64_stats_update_end(&qv->oq.stats.syncp);
		snprintf(qv->name, sizeof(qv->name), "%s-rxtx-%u",
			 netdev->name, q);
		err = request_irq(qv->irq, octep_ring_irq, 0, qv->name, qv);
		if (err)
			goto err;
		qv->irq_requested = true;
	}
	/* The rings are enabled: the table may name them. */
	octep_rss_follow_rings(oct);
	octep_rss_write(oct);
	return 0;
err:
	netdev_err(netdev, "cannot set up ring pair %u: %d\n", q, err);
	octep_datapath_down(oct);
	return err;
}

/* How long a quiesce spins for a poll to leave before it sleeps. */
#define OCTEP_QUIESCE_SPIN_NS	NSEC_PER_MSEC

/**
 * octep_quiesce() - stop all servicing of the rings, keeping what they hold
 * @oct: device, under RTNL
 *
 * The watchdog is stopped first (hrtimer_cancel() waits out a tick), then
 * the gate is closed and each ring pair's polls are waited for: a poll that
 * finds the gate closed leaves the ring alone, and one already inside stops
 * at its next packet (octep_oq_pass()), so the wait is what that poll had
 * begun before its first packet (transmit completions, a refill), one
 * packet and the poll's end, not a visit, and the NAPIs stay enabled: a
 * poll scheduled and not yet run is not waited for. The wait spins
 * (cpu_relax()) for up to OCTEP_QUIESCE_SPIN_NS, without a cond_resched()
 * that would add this thread's own scheduling latency to it: the poll runs
 * with BH disabled on another CPU, where this thread cannot preempt it, and
 * is about to leave. Past that it sleeps between looks (on PREEMPT_RT a
 * poll is preemptible, and this thread may be what keeps it off its CPU).
 * Waits are counted and the longest kept. Then the interrupts are turned
 * off and synchronized.
 * The rings stay enabled and their counts untouched: octep_resume() owes
 * each ring a visit.
 */
void octep_quiesce(struct octep_dev *oct)
{
	unsigned int q, waits = 0;
	u64 longest = 0;

	ASSERT_RTNL();
	if (!oct->up || oct->quiesced)
		return;
	octep_wd_stop(oct);
	/* The gate: RTNL holders see it set only when the quiesce is done. */
	WRITE_ONCE(oct->quiesced, true);
	/* Pairs with smp_mb__after_atomic() in octep_poll_enter(). */
	smp_mb();
	for (q = 0; q < oct->num_rings; q++) {
		struct octep_qvec *qv = &oct->qv[q];
		u64 t0, dt;

		/* Pairs with octep_poll_leave(): its ring writes are done. */
		if (!atomic_read_acquire(&qv->inside))
			continue;
		t0 = ktime_get_ns();
		while (atomic_read_acquire(&qv->inside)) {
			/*
			 * Past a millisecond, sleep: under PREEMPT_RT a poll
			 * is preemptible, and this thread may be what keeps
			 * it off its CPU.
			 */
			if (ktime_get_ns() - t0 > OCTEP_QUIESCE_SPIN_NS)
				usleep_range(10, 50);
			else
				cpu_relax();
		}
		dt = ktime_get_ns() - t0;
		waits++;
		longest = max(longest, dt);
		oct->quiesce_waits++;
		if (dt > oct->quiesce_wait_max_ns)
			oct->quiesce_wait_max_ns = dt;
	}
	/*
	 * No poll is inside and none will touch a ring or re-enable an
	 * interrupt until the gate opens: the disable below stays.
	 */
	for (q = 0; q < oct->num_rings; q++) {
		octep_regs_write_levels(&oct->qv[q], false);
		synchronize_irq(oct->qv[q].irq);
	}
	oct->quiesce_cycles++;
	trace_octep_quiesce(oct->num_rings, waits, longest);
}

/**
 * octep_resume() - undo octep_quiesce()
 * @oct: device, under RTNL
 *
 * The NAPIs are enabled if they were disabled, the gate opened, and every
 * ring scheduled once: a servicer turned away while the gate was closed left
 * no visit behind it, so the resume pays what it owed. A poll still leaving
 * through the closed gate finds the schedule's note and polls again. The
 * interrupts come back on when those polls complete. The watchdog restarts
 * through the soonest-wins arming, so a pending tick request is kept.
 */
void octep_resume(struct octep_dev *oct)
{
	unsigned int q;

	ASSERT_RTNL();
	if (!oct->up || !oct->quiesced)
		return;
	if (oct->napi_off) {
		for (q = 0; q < oct->num_rings; q++)
			napi_enable(&oct->qv[q].napi);
		oct->napi_off = false;
	}
	/* Pairs with octep_poll_enter(): what was set while closed is seen. */
	smp_store_release(&oct->quiesced, false);
	local_bh_disable();
	for (q = 0; q < oct->num_rings; q++)
		octep_qv_schedule(&oct->qv[q], OCTEP_ASK_RESUME);
	local_bh_enable();
	octep_wd_start(oct);
}

/*
 * Stop transmit before the rings go: on return no ndo_start_xmit() runs and
 * none can start until the queues are woken again.
 *
 * The polls are quiesced first. A poll that completes instructions wakes
 * its queue when the ring has room (octep_iq_reap()), stopped or not, so a
 * queue stopped while the polls still ran could be woken behind our back
 * and sent into a ring being freed or rebuilt. With the gate closed and
 * the interrupts off nothing wakes a queue; netif_tx_disable() then
 * stops each one under its xmit lock, which waits out an xmit in progress.
 * Transmits that get in before it only fill the old ring, which the block
 * still serves; what is left in flight is dropped and counted when it is
 * freed. The NAPIs are disabled as well, as freeing the rings (the page
 * pools, netif_napi_del()) needs: a poll still scheduled runs, finds the
 * gate closed and gives SCHED back, so napi_disable() does not wait long.
 */
static void octep_tx_stop(struct octep_dev *oct)
{
	struct net_device *netdev = oct->netdev;
	unsigned int q;

	octep_quiesce(oct);
	if (oct->up && !oct->napi_off) {
		for (q = 0; q < oct->num_rings; q++)
			napi_disable(&oct->qv[q].napi);
		oct->napi_off = true;
	}
	/*
	 * The stack's watchdog takes a queue stopped for watchdog_timeo
	 * since its last transmit for a hung one. Stopped here, a queue idle
	 * for that long would be, at the watchdog's next look, while the
	 * rings are rebuilt: its clock starts now instead. Before the stop,
	 * so that no look between the two finds a stopped queue's old clock.
	 */
	for (q = 0; q < netdev->num_tx_queues; q++)
		txq_trans_cond_update(netdev_get_tx_queue(netdev, q));
	netif_tx_disable(netdev);
}

/**
 * octep_reconfigure_xdp() - change ring pairs, ring sizes or XDP program
 * @oct: device, under RTNL
 * @rings: ring pairs to use
 * @rx_size: output ring size
 * @tx_size: input ring size
 * @prog: the XDP program to attach (its reference becomes ours), or NULL
 *
 * Through a quiesce. The program is installed with the polls stopped,
 * before the new rings are laid out for it; on failure the old one stays
 * and the caller keeps its reference to @prog, on success the caller puts
 * the old program's. The new rings are prepared before the old ones are
 * freed: if that fails, the old configuration goes on as it was. Packets
 * the block had counted in the old rings are counted as drops. Should
 * bringing the new rings up fail after all (an IRQ, a page pool), the old
 * configuration is rebuilt.
 *
 * Return: 0 or a negative errno.
 */
int octep_reconfigure_xdp(struct octep_dev *oct, unsigned int rings,
			  u32 rx_size, u32 tx_size, struct bpf_prog *prog)
{
	struct bpf_prog *old_prog = oct->xdp_prog;
	unsigned int old_rings = oct->num_rings;
	u32 old_rx = oct->rx_ring_size, old_tx = oct->tx_ring_size;
	struct net_device *netdev = oct->netdev;
	struct octep_ring_mem *mem;
	int err;

	ASSERT_RTNL();
	if (!oct->up) {
		err = netif_set_real_num_queues(netdev, rings, rings);
		if (err)
			return err;
		WRITE_ONCE(oct->num_rings, rings);
		oct->rx_ring_size = rx_size;
		oct->tx_ring_size = tx_size;
		WRITE_ONCE(oct->xdp_prog, prog);
		octep_rss_follow_rings(oct);
		return 0;
	}
	octep_tx_stop(oct);
	mem = octep_rings_prepare(oct, rings, rx_size, tx_size);
	err = PTR_ERR_OR_ZERO(mem);
	if (!err) {
		err = netif_set_real_num_queues(netdev, rings, rings);
		if (err)
			octep_rings_release(oct, mem, rings);
	}
	if (err) {
		oct->reconf_refused++;
		netdev_warn(netdev, "cannot prepare %u ring pairs of %u/%u: %d, keeping the old ones\n",
			    rings, rx_size, tx_size, err);
		goto resume;
	}
	octep_datapath_down(oct);
	/* Read by xmit: written before the queues are woken (a full barrier). */
	WRITE_ONCE(oct->num_rings, rings);
	oct->rx_ring_size = rx_size;
	oct->tx_ring_size = tx_size;
	/* No poll runs: read by them only once the gate opens. */
	WRITE_ONCE(oct->xdp_prog, prog);
	err = octep_datapath_up(oct, mem);
	octep_rings_release(oct, mem, rings);
	if (err) {
		WRITE_ONCE(oct->num_rings, old_rings);
		oct->rx_ring_size = old_rx;
		oct->tx_ring_size = old_tx;
		WRITE_ONCE(oct->xdp_prog, old_prog);
		mem = octep_rings_prepare(oct, old_rings, old_rx, old_tx);
		if (IS_ERR(mem) ||
		    netif_set_real_num_queues(netdev, old_rings, old_rings) ||
		    octep_datapath_up(oct, mem)) {
			if (!IS_ERR(mem))
				octep_rings_release(oct, mem, old_rings);
			netdev_err(netdev, "cannot restore the rings\n");
			netif_carrier_off(netdev);
			return err;
		}
		octep_rings_release(oct, mem, old_rings);
	}
resume:
	octep_resume(oct);
	/*
	 * Every queue, those beyond the ring count too: the stack's TX
	 * watchdog takes any queue left stopped for a hung one. A sender
	 * that picked one of those before -L (pktgen, AF_PACKET's qdisc
	 * bypass) is dropped by octep_start_xmit().
	 */
	netif_tx_wake_all_queues(netdev);
	return err;
}

/**
 * octep_reconfigure() - change ring pairs or ring sizes, under traffic
 * @oct: device, under RTNL
 * @rings: ring pairs to use
 * @rx_size: output ring size
 * @tx_size: input ring size
 *
 * octep_reconfigure_xdp() keeping the XDP program.
 *
 * Return: 0 or a negative errno.
 */
int octep_reconfigure(struct octep_dev *oct, unsigned int rings,
		      u32 rx_size, u32 tx_size)
{
	return octep_reconfigure_xdp(oct, rings, rx_size, tx_size,
				     oct->xdp_prog);
}

/**
 * octep_xdp_features() - set the netdev's xdp_features for its servicing
 * @oct: device, its netdev allocated; under RTNL once it is registered
 *
 * Programs run only under service=visit (octep_xdp_setup() refuses them
 * otherwise), so only then does the device offer them; ndo_xdp_xmit only
 * transmits and works under either. One buffer a frame: neither
 * NETDEV_XDP_ACT_RX_SG nor _NDO_XMIT_SG.
 */
void octep_xdp_features(struct octep_dev *oct)
{
	xdp_features_t f = NETDEV_XDP_ACT_NDO_XMIT;

	if (oct->service == OCTEP_SERVICE_VISIT)
		f |= NETDEV_XDP_ACT_BASIC | NETDEV_XDP_ACT_REDIRECT;
	xdp_set_features_flag(oct->netdev, f);
}

/*
 * XDP_SETUP_PROG. One frame a buffer, no multi-buffer: a program is
 * refused while the MTU is larger than the buffer laid out for XDP
 * holds, and while it is attached the device's maximum MTU is that
 * (so the core refuses a larger one). Attaching the first program or
 * detaching the last rebuilds the rings, laid out for it (headroom,
 * mapping both ways for XDP_TX); a program for another is a swap.
 */
static int octep_xdp_setup(struct octep_dev *oct, struct bpf_prog *prog,
			   struct netlink_ext_ack *extack)
{
	struct net_device *netdev = oct->netdev;
	struct bpf_prog *old = oct->xdp_prog;
	int err;

	if (prog && netdev->mtu > OCTEP_XDP_MAX_MTU) {
		NL_SET_ERR_MSG_FMT_MOD(extack,
				       "MTU %u too large for XDP (max %lu: one buffer a frame)",
				       netdev->mtu, OCTEP_XDP_MAX_MTU);
		return -EOPNOTSUPP;
	}
	if (prog && READ_ONCE(oct->service) != OCTEP_SERVICE_VISIT) {
		NL_SET_ERR_MSG_MOD(extack, "XDP needs service=visit");
		return -EOPNOTSUPP;
	}
	if (!oct->up || !old == !prog) {
		/*
		 * The rings as they are (or none): a poll sees the old
		 * program or the new one, and the old is freed after an
		 * RCU grace period, which the polls' BH-off sections are.
		 */
		WRITE_ONCE(oct->xdp_prog, prog);
	} else {
		err = octep_reconfigure_xdp(oct, oct->num_rings,
					    oct->rx_ring_size,
					    oct->tx_ring_size, prog);
		if (err) {
			NL_SET_ERR_MSG_MOD(extack,
					   "cannot lay the rings out for XDP");
			return err;
		}
	}
	if (old)
		bpf_prog_put(old);
	netdev->max_mtu = prog ? OCTEP_XDP_MAX_MTU : OCTEP_MAX_MTU;
	return 0;
}

static int octep_bpf(struct net_device *netdev, struct netdev_bpf *bpf)
{
	struct octep_dev *oct = octep_from_netdev(netdev);

	switch (bpf->command) {
	case XDP_SETUP_PROG:
		return octep_xdp_setup(oct, bpf->prog, bpf->extack);
	default:
		return -EINVAL;
	}
}

/* ndo_open, and a resume of a device that was running. */
static int octep_up(struct octep_dev *oct)
{
	struct net_device *netdev = oct->netdev;
	struct octep_ring_mem *mem;
	int err;

	err = netif_set_real_num_queues(netdev, oct->num_rings, oct->num_rings);
	if (err)
		return err;
	mem = octep_rings_prepare(oct, oct->num_rings, oct->rx_ring_size,
				  oct->tx_ring_size);
	if (IS_ERR(mem))
		return PTR_ERR(mem);
	err = octep_datapath_up(oct, mem);
	octep_rings_release(oct, mem, oct->num_rings);
	if (err)
		return err;
	octep_resume(oct);
	netif_tx_start_all_queues(netdev);
	netif_carrier_on(netdev);
	octep_health_start(oct);
	return 0;
}

/* ndo_stop, and a suspend of a device that is running. */
static void octep_down(struct octep_dev *oct)
{
	netif_carrier_off(oct->netdev);
	octep_tx_stop(oct);
	octep_datapath_down(oct);
}

static int octep_open(struct net_device *netdev)
{
	return octep_up(octep_from_netdev(netdev));
}

static int octep_stop(struct net_device *netdev)
{
	octep_down(octep_from_netdev(netdev));
	return 0;
}

/**
 * octep_netdev_suspend() - free the datapath for a system sleep
 * @oct: device
 *
 * The netdev is detached (no transmit, no ethtool or open until the
 * resume) and, if it was running, its rings are freed as by ip link set
 * down. Offloaded flows stay in the block, which does not sleep with us.
 */
void octep_netdev_suspend(struct octep_dev *oct)
{
	struct net_device *netdev = oct->netdev;

	rtnl_lock();
	netif_device_detach(netdev);
	if (netif_running(netdev))
		octep_down(oct);
	rtnl_unlock();
}

/**
 * octep_netdev_resume() - undo octep_netdev_suspend()
 * @oct: device
 *
 * Return: 0, or the errno of bringing a running device's rings back; the
 * netdev then stays detached.
 */
int octep_netdev_resume(struct octep_dev *oct)
{
	struct net_device *netdev = oct->netdev;
	int err = 0;

	rtnl_lock();
	if (netif_running(netdev))
		err = octep_up(oct);
	if (!err)
		netif_device_attach(netdev);
	else
		netdev_err(netdev, "cannot bring the rings back after a sleep: %d\n",
			   err);
	rtnl_unlock();
	return err;
}

/* The block writes our MAC into tunnel frames it builds: tell it. */
static int octep_set_mac_address(struct net_device *netdev, void *p)
{
	int err = eth_mac_addr(netdev, p);

	if (!err)
		octep_ipsec_mac_changed(octep_from_netdev(netdev));
	return err;
}

/* Unregistering, after the xfrm core's flush: octep_ipsec_netdev_uninit(). */
static void octep_uninit(struct net_device *netdev)
{
	octep_ipsec_netdev_uninit(octep_from_netdev(netdev));
}

static const struct net_device_ops octep_netdev_ops = {
	.ndo_uninit		= octep_uninit,
	.ndo_open		= octep_open,
	.ndo_stop		= octep_stop,
	.ndo_start_xmit		= octep_start_xmit,
	.ndo_tx_timeout		= octep_tx_timeout,
	.ndo_features_check	= octep_features_check,
	.ndo_get_stats64	= octep_get_stats64,
	.ndo_set_mac_address	= octep_set_mac_address,
	.ndo_validate_addr	= eth_validate_addr,
	.ndo_bpf		= octep_bpf,
	.ndo_xdp_xmit		= octep_xdp_xmit,
};

/**
 * octep_netdev_create() - allocate and register the netdev
 * @oct: device
 *
 * Return: 0 or a negative errno.
 */
int octep_netdev_create(struct octep_dev *oct)
{
	struct net_device *netdev;
	int err;

	netdev = alloc_etherdev_mqs(sizeof(struct octep_dev *),
				    oct->max_rings, oct->max_rings);
	if (!netdev)
		return -ENOMEM;
	*(struct octep_dev **)netdev_priv(netdev) = oct;
	oct->netdev = netdev;
	SET_NETDEV_DEV(netdev, oct->dev);
	netdev->netdev_ops = &octep_netdev_ops;
	netdev->ethtool_ops = &octep_ethtool_ops;
	netdev->stat_ops = &octep_stat_ops;
	netdev->hw_features = NETIF_F_HW_CSUM | NETIF_F_RXCSUM |
			      NETIF_F_RXHASH | NETIF_F_SG | NETIF_F_TSO |
			      NETIF_F_TSO6 | NETIF_F_TSO_ECN;
	netdev->features = netdev->hw_features;
	/* A TSO frame is one instruction: OCTEP_SDP_TX_LEN bounds it. */
	netif_set_tso_max_size(netdev, FIELD_MAX(OCTEP_SDP_TX_LEN));
	/* The stack's NETDEV WATCHDOG, for a queue a dead ring stopped. */
	netdev->watchdog_timeo = OCTEP_TX_TIMEOUT;
	netdev->min_mtu = ETH_MIN_MTU;
	netdev->max_mtu = OCTEP_MAX_MTU;
	octep_xdp_features(oct);
	if (is_valid_ether_addr(oct->sdp->mac_addr))
		eth_hw_addr_set(netdev, oct->sdp->mac_addr);
	else
		eth_hw_addr_random(netdev);
	octep_ipsec_netdev_setup(oct, netdev);
	netif_carrier_off(netdev);
	err = netif_set_real_num_queues(netdev, oct->num_rings,
					oct->num_rings);
	if (!err)
		err = register_netdev(netdev);
	if (err) {
		free_netdev(netdev);
		oct->netdev = NULL;
	}
	return err;
}

/**
 * octep_netdev_destroy() - unregister (closing it) and free the netdev
 * @oct: device
 */
void octep_netdev_destroy(struct octep_dev *oct)
{
	unregister_netdev(oct->netdev);
	/* Closed and gone: nothing queues the health works again. */
	octep_health_cancel(oct);
	free_netdev(oct->netdev);
	oct->netdev = NULL;
}
