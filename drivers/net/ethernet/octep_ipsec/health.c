// SPDX-License-Identifier: GPL-2.0
/*
 * octep_ipsec: dead rings - found, reported, recovered.
 *
 * The watchdog (watchdog.c) finds a ring its servicers left; it cannot see
 * a ring the block stopped serving: a disabled output ring counts nothing,
 * and an input ring the block stopped reading completes nothing.
 *
 * Two ways in, one way out. ndo_tx_timeout() catches a transmit queue the
 * ring filled and stopped. The health check, a delayed work every
 * OCTEP_HEALTH_PERIOD_MS under RTNL, compares each ring pair's enable bits
 * and counts with the last period's: an input ring disabled, or in flight
 * with nothing completed for three transmit timeouts (ten while its queue
 * is stopped: then it only backs up the stack's watchdog), is dead and
 * counted in tx_timeouts; an output ring disabled, or counts unchanged
 * with no visit in the period (a ring left, no one coming), is a receive
 * stall, reported to the devlink health reporter "rx_stall", whose recover
 * queues the reset work. That work, under RTNL, schedules the left rings'
 * NAPI, or for a disabled or dead ring rebuilds the datapath through
 * octep_reconfigure() with the configuration it has.
 *
 * A device that reads all ones is off the bus (a surprise removal, a link
 * down, an AER error the guest is not told of): its counts and enables are
 * noise, and a reset would program rings nothing reads. The check reports
 * it once, as such, and the reset work leaves the rings as they are; the
 * health work then reads one register a period and resets the rings when
 * the device answers again.
 *
 * devlink_health_report() takes the devlink instance lock, which devlink's
 * own commands hold when they call the reporter: the report is made
 * outside RTNL and the recover only queues work, so RTNL is never taken
 * under the devlink lock, nor the reverse.
 */
#include <linux/rtnetlink.h>
#include <net/devlink.h>

#include "octep_ipsec.h"

#define OCTEP_HEALTH_PERIOD_MS	1000

/**
 * struct octep_health_ctx - what one health check found, for the reporter
 * @disabled: ring pairs whose output ring the block disabled
 * @left: ring pairs with work counted and no visit for a period
 * @off_bus: the device reads all ones
 * @msg: the report's message
 */
struct octep_health_ctx {
	unsigned long disabled;
	unsigned long left;
	bool off_bus;
	char msg[128];
};

/* The mailbox's signature is a constant: all ones is no block answering. */
static bool octep_reads_ones(struct octep_dev *oct)
{
	return octep_rd64(oct, OCTEP_SDP_MBOX_SIG) == U64_MAX;
}

static u32 octep_ring_rd(struct octep_dev *oct, u32 off)
{
	return octep_rd64(oct, off) & OCTEP_SDP_CNTS_COUNT;
}

static bool octep_ring_on(struct octep_dev *oct, u32 off)
{
	return octep_rd64(oct, off) & OCTEP_SDP_RING_ENABLE;
}

static void octep_oq_visit_stats(struct octep_oq *oq, u64 *visits,
				 u64 *passes, u64 *passes_max)
{
	const struct octep_rx_stats *s = &oq->stats;
	unsigned int start;

	do {
		start = u64_stats_fetch_begin(&s->syncp);
		*visits = s->visits;
		*passes = s->passes;
		*passes_max = s->passes_max;
	} while (u64_stats_fetch_retry(&s->syncp, start));
}

static void octep_schedule_reset(struct octep_dev *oct)
{
	set_bit(OCTEP_RESET_FULL, &oct->reset_flags);
	schedule_work(&oct->reset_work);
}

/*
 * Only queue the work (see the top of this file). A report's left rings
 * get a visit; a disabled ring, or a recover asked for by hand (no
 * context), a reset of the rings.
 */
static void octep_stall_recover(struct octep_dev *oct,
				const struct octep_health_ctx *ctx)
{
	if (!ctx || ctx->disabled) {
		octep_schedule_reset(oct);
		return;
	}
	atomic_long_or(ctx->left, &oct->rescue_mask);
	schedule_work(&oct->reset_work);
}

/* Under RTNL, the datapath up and not quiesced: look at every ring pair. */
static bool octep_health_check(struct octep_dev *oct,
			       struct octep_health_ctx *ctx)
{
	u64 timeo = jiffies_to_nsecs(oct->netdev->watchdog_timeo);
	u64 now = ktime_get_ns(), visits, passes, pmax;
	bool tx_dead = false;
	unsigned int q;

	ASSERT_RTNL();
	/* A reset is on its way: these rings are about to be replaced. */
	if (test_bit(OCTEP_RESET_FULL, &oct->reset_flags))
		return false;
	if (octep_reads_ones(oct)) {
		ctx->off_bus = true;
		scnprintf(ctx->msg, sizeof(ctx->msg),
			  "the device reads all ones: off the bus");
		/* The reset work sees it too, and waits for the device. */
		return true;
	}
	for (q = 0; q < oct->num_rings; q++) {
		struct octep_qvec *qv = &oct->qv[q];
		struct octep_ring_health *h = &qv->health;
		struct netdev_queue *txq;
		u64 tx_limit;
		u32 out_cnt, in_cnt, head, tail;
		bool seen = h->checked_ns, left;
		const char *finding;

		octep_oq_visit_stats(&qv->oq, &visits, &passes, &pmax);
		out_cnt = octep_ring_rd(oct, OCTEP_SDP_R_OUT_CNTS(q));
		in_cnt = octep_ring_rd(oct, OCTEP_SDP_R_IN_CNTS(q));
		h->out_on = octep_ring_on(oct, OCTEP_SDP_R_OUT_ENABLE(q));
		h->in_on = octep_ring_on(oct, OCTEP_SDP_R_IN_ENABLE(q));
		/* head by xmit, tail by the poll: a snapshot is enough here. */
		head = READ_ONCE(qv->iq.head);
		tail = READ_ONCE(qv->iq.tail);

		/* Work counted a period ago, still there, and nobody came. */
		left = seen && visits == h->visits &&
		       ((out_cnt && out_cnt == h->out_cnt) ||
			(in_cnt && in_cnt == h->in_cnt && tail == h->iq_tail));
		if (tail != h->iq_tail || head == tail || !seen)
			h->iq_moved_ns = now;
		/* Stopped or not, without the queue's lock: a snapshot. */
		txq = netdev_get_tx_queue(oct->netdev, q);
		tx_limit = (netif_xmit_stopped(txq) ? 10 : 3) * timeo;

		/*
		 * What the devlink dump reads without RTNL is written with
		 * WRITE_ONCE() (pairs with its READ_ONCE()s); it may see a
		 * check half done, never a torn value.
		 */
		finding = NULL;
		if (!h->out_on) {
			finding = "output ring disabled by the block";
			set_bit(q, &ctx->disabled);
			WRITE_ONCE(h->rx_stalls, h->rx_stalls + 1);
		} else if (left) {
			finding = "work counted, no visit for a period";
			set_bit(q, &ctx->left);
			WRITE_ONCE(h->rx_stalls, h->rx_stalls + 1);
		}
		if (!h->in_on) {
			finding = "input ring disabled by the block";
		} else if (head != tail && !in_cnt &&
			   now - h->iq_moved_ns >= tx_limit) {
			finding = "input ring: instructions in flight, none done";
		} else {
			goto next;
		}
		/* The input ring is dead: as ndo_tx_timeout() would. */
		WRITE_ONCE(h->tx_dead, h->tx_dead + 1);
		atomic64_inc(&oct->tx_timeouts);
		netdev_warn(oct->netdev,
			    "ring %u: %s (%u in flight, IN_CNTS %u): resetting the rings\n",
			    q, finding, head - tail, in_cnt);
		tx_dead = true;
next:
		WRITE_ONCE(h->finding, finding);
		h->iq_tail = tail;
		WRITE_ONCE(h->out_cnt, out_cnt);
		h->in_cnt = in_cnt;
		WRITE_ONCE(h->visits, visits);
		h->iq_inflight = head - tail;
		WRITE_ONCE(h->checked_ns, now);
	}
	if (ctx->disabled || ctx->left)
		scnprintf(ctx->msg, sizeof(ctx->msg),
			  "receive stall: output ring disabled %#lx, left %#lx",
			  ctx->disabled, ctx->left);
	return tx_dead;
}

static void octep_health_work(struct work_struct *work)
{
	struct octep_dev *oct = container_of(to_delayed_work(work),
					     struct octep_dev, health_work);
	struct octep_health_ctx ctx = {};
	bool tx_dead = false, again;

	rtnl_lock();
	again = oct->up;
	if (oct->up && !oct->quiesced && oct->off_bus) {
		/* The reset left for it, once the device answers. */
		if (!octep_reads_ones(oct))
			octep_schedule_reset(oct);
	} else if (oct->up && !oct->quiesced) {
		tx_dead = octep_health_check(oct, &ctx);
	}
	rtnl_unlock();

	if (tx_dead)
		octep_schedule_reset(oct);
	if (ctx.disabled || ctx.left || ctx.off_bus) {
		atomic64_inc(&oct->rx_stall_reports);
		netdev_warn(oct->netdev, "%s\n", ctx.msg);
		/* Dump and recover under the devlink lock: outside RTNL. */
		mutex_lock(&oct->report_lock);
		if (oct->reporting)
			devlink_health_report(oct->rx_stall, ctx.msg, &ctx);
		else
			octep_stall_recover(oct, &ctx);
		mutex_unlock(&oct->report_lock);
	}
	if (again)
		queue_delayed_work(system_wq, &oct->health_work,
				   msecs_to_jiffies(OCTEP_HEALTH_PERIOD_MS));
}

static void octep_reset_work(struct work_struct *work)
{
	struct octep_dev *oct = container_of(work, struct octep_dev,
					     reset_work);
	unsigned long mask;
	unsigned int q;
	int err;

	rtnl_lock();
	mask = atomic_long_xchg(&oct->rescue_mask, 0);
	/*
	 * Off the bus: the flag stays set, which keeps the check from
	 * reporting again; the health work clears off_bus's wait.
	 */
	if (test_bit(OCTEP_RESET_FULL, &oct->reset_flags) && oct->up &&
	    octep_reads_ones(oct)) {
		if (!oct->off_bus)
			netdev_err(oct->netdev,
				   "the device reads all ones: rings left as they are until it answers\n");
		oct->off_bus = true;
		rtnl_unlock();
		return;
	}
	if (oct->off_bus && test_bit(OCTEP_RESET_FULL, &oct->reset_flags))
		netdev_info(oct->netdev, "the device answers again\n");
	oct->off_bus = false;
	if (test_and_clear_bit(OCTEP_RESET_FULL, &oct->reset_flags) &&
	    oct->up) {
		atomic64_inc(&oct->ring_resets);
		err = octep_reconfigure(oct, oct->num_rings, oct->rx_ring_size,
					oct->tx_ring_size);
		if (err)
			netdev_err(oct->netdev, "ring reset failed: %d\n", err);
		else
			netdev_info(oct->netdev, "rings reset\n");
		/* New rings: what the check saw of the old ones is void. */
		for (q = 0; q < oct->max_rings; q++)
			WRITE_ONCE(oct->qv[q].health.checked_ns, 0);
		mask = 0;	/* the resume visited every ring */
	}
	if (mask && oct->up && !oct->quiesced) {
		local_bh_disable();
		for_each_set_bit(q, &mask, oct->num_rings) {
			octep_qv_schedule(&oct->qv[q], OCTEP_ASK_HEALTH);
			atomic64_inc(&oct->ring_rescues);
		}
		local_bh_enable();
	}
	rtnl_unlock();
}

/**
 * octep_ring_bad() - the block counted more than a ring holds
 * @qv: the ring pair, its NAPI held by the caller (the poll)
 * @ctr: the device's counter of the kind
 * @reg: the register, for the log
 * @cnt: what it read
 *
 * No packet or instruction can be trusted to match such a count, and
 * acknowledging part of it would leave the rest: the ring pair is left
 * alone (octep_poll_ring()) until the reset work builds new rings, which
 * start with clean counts and flags. Counted once per ring pair until then.
 */
void octep_ring_bad(struct octep_qvec *qv, atomic64_t *ctr, const char *reg,
		    u64 cnt)
{
	if (test_and_set_bit(OCTEP_OQ_BAD, &qv->oq.flags))
		return;
	atomic64_inc(ctr);
	if (net_ratelimit())
		netdev_warn(qv->oct->netdev,
			    "ring %u: %s %llu is more than the ring holds: resetting the rings\n",
			    qv->idx, reg, cnt);
	octep_schedule_reset(qv->oct);
}

/**
 * octep_tx_timeout() - ndo_tx_timeout: a transmit queue stopped too long
 * @netdev: our netdev
 * @txqueue: the queue
 *
 * Called by the stack's watchdog timer (softirq) after it printed its
 * NETDEV WATCHDOG line. Counted, and the rings are reset from process
 * context.
 */
void octep_tx_timeout(struct net_device *netdev, unsigned int txqueue)
{
	struct octep_dev *oct = octep_from_netdev(netdev);
	struct octep_qvec *qv = &oct->qv[txqueue];

	atomic64_inc(&oct->tx_timeouts);
	netdev_warn(netdev,
		    "transmit queue %u timed out: %u in flight, IN_ENABLE %llu, IN_CNTS %u: resetting the rings\n",
		    txqueue, READ_ONCE(qv->iq.head) - READ_ONCE(qv->iq.tail),
		    octep_rd64(oct, OCTEP_SDP_R_IN_ENABLE(txqueue)),
		    octep_ring_rd(oct, OCTEP_SDP_R_IN_CNTS(txqueue)));
	octep_schedule_reset(oct);
}

/* ---------------------------------------------------- the reporter */

static const char * const octep_ask_names[] = {
	[OCTEP_ASK_IRQ] = "irq",
	[OCTEP_ASK_WATCHDOG] = "watchdog",
	[OCTEP_ASK_REREAD] = "reread",
	[OCTEP_ASK_RESUME] = "resume",
	[OCTEP_ASK_HEALTH] = "health",
	[OCTEP_ASK_STORM] = "storm",
};

static const char * const octep_end_names[] = {
	[OCTEP_END_COMPLETED] = "completed",
	[OCTEP_END_BUDGET] = "budget",
	[OCTEP_END_TX] = "tx",
	[OCTEP_END_HANDED] = "note",
	[OCTEP_END_BUSY] = "busy",
	[OCTEP_END_GATED] = "gated",
};

/*
 * The ring's flight recorder, newest first: when each poll ended, who had
 * asked for it ("again" when nobody did: NAPI came back by itself), the
 * count its first pass read, passes, buffers taken, whether it asked for
 * the watchdog's next tick, and how it ended.
 */
static void octep_health_fmsg_vlog(struct octep_oq *oq,
				   struct devlink_fmsg *fmsg, u64 now)
{
	struct octep_visit_rec recs[OCTEP_VLOG_LEN];
	char asked[48];
	unsigned int i, n, b, len;

	octep_oq_vlog_read(oq, recs, &n);
	devlink_fmsg_arr_pair_nest_start(fmsg, "last_visits");
	for (i = 0; i < n; i++) {
		const struct octep_visit_rec *r = &recs[i];

		len = 0;
		asked[0] = '\0';
		for (b = 0; b < ARRAY_SIZE(octep_ask_names); b++)
			if (r->asks & BIT(b))
				len += scnprintf(asked + len, sizeof(asked) - len,
						 "%s%s", len ? "," : "",
						 octep_ask_names[b]);
		devlink_fmsg_obj_nest_start(fmsg);
		devlink_fmsg_u64_pair_put(fmsg, "us_ago",
					  div_u64(now - min(now, r->t_ns),
						  NSEC_PER_USEC));
		devlink_fmsg_string_pair_put(fmsg, "asked_by",
					     len ? asked : "again");
		devlink_fmsg_u32_pair_put(fmsg, "count", r->count);
		devlink_fmsg_u32_pair_put(fmsg, "passes", r->passes);
		devlink_fmsg_u32_pair_put(fmsg, "taken", r->taken);
		devlink_fmsg_bool_pair_put(fmsg, "tick", r->tick);
		devlink_fmsg_string_pair_put(fmsg, "end",
					     r->end < ARRAY_SIZE(octep_end_names) ?
					     octep_end_names[r->end] : "?");
		devlink_fmsg_obj_nest_end(fmsg);
	}
	devlink_fmsg_arr_pair_nest_end(fmsg);
}

static void octep_health_fmsg_ring(struct octep_dev *oct,
				   struct devlink_fmsg *fmsg, unsigned int q,
				   u64 now)
{
	struct octep_qvec *qv = &oct->qv[q];
	struct octep_ring_health *h = &qv->health;
	const char *finding = READ_ONCE(h->finding);
	u64 visits, passes, pmax, t;

	octep_oq_visit_stats(&qv->oq, &visits, &passes, &pmax);
	devlink_fmsg_obj_nest_start(fmsg);
	devlink_fmsg_u32_pair_put(fmsg, "ring", q);
	devlink_fmsg_bool_pair_put(fmsg, "out_enabled",
				   octep_ring_on(oct, OCTEP_SDP_R_OUT_ENABLE(q)));
	devlink_fmsg_bool_pair_put(fmsg, "in_enabled",
				   octep_ring_on(oct, OCTEP_SDP_R_IN_ENABLE(q)));
	devlink_fmsg_u32_pair_put(fmsg, "out_count",
				  octep_ring_rd(oct, OCTEP_SDP_R_OUT_CNTS(q)));
	devlink_fmsg_u32_pair_put(fmsg, "in_count",
				  octep_ring_rd(oct, OCTEP_SDP_R_IN_CNTS(q)));
	devlink_fmsg_u32_pair_put(fmsg, "buffers_posted",
				  READ_ONCE(qv->oq.posted));
	devlink_fmsg_u32_pair_put(fmsg, "tx_in_flight",
				  READ_ONCE(qv->iq.head) - READ_ONCE(qv->iq.tail));
	devlink_fmsg_u64_pair_put(fmsg, "visits", visits);
	devlink_fmsg_u64_pair_put(fmsg, "passes", passes);
	devlink_fmsg_u64_pair_put(fmsg, "passes_max", pmax);
	devlink_fmsg_u64_pair_put(fmsg, "notes_left",
				  atomic64_read(&qv->oq.oq_declined));
	devlink_fmsg_u64_pair_put(fmsg, "rxwd_rescues",
				  atomic64_read(&qv->oq.rxwd_rescues));
	t = READ_ONCE(qv->enabled_ns);
	if (t)
		devlink_fmsg_u64_pair_put(fmsg, "last_visit_end_ms_ago",
					  div_u64(now - t, NSEC_PER_MSEC));
	else
		devlink_fmsg_string_pair_put(fmsg, "last_visit_end_ms_ago",
					     "never");
	t = READ_ONCE(h->checked_ns);
	if (t) {
		devlink_fmsg_u64_pair_put(fmsg, "checked_ms_ago",
					  div_u64(now - t, NSEC_PER_MSEC));
		devlink_fmsg_u32_pair_put(fmsg, "checked_out_count",
					  READ_ONCE(h->out_cnt));
		devlink_fmsg_u64_pair_put(fmsg, "checked_visits",
					  READ_ONCE(h->visits));
	}
	devlink_fmsg_string_pair_put(fmsg, "finding", finding ?: "none");
	devlink_fmsg_u32_pair_put(fmsg, "rx_stalls", READ_ONCE(h->rx_stalls));
	devlink_fmsg_u32_pair_put(fmsg, "tx_dead", READ_ONCE(h->tx_dead));
	octep_health_fmsg_vlog(&qv->oq, fmsg, now);
	devlink_fmsg_obj_nest_end(fmsg);
}

/* Every ring pair in use; read without RTNL, so a value may be a check old. */
static void octep_health_fmsg(struct octep_dev *oct, struct devlink_fmsg *fmsg)
{
	unsigned int q, n = min(READ_ONCE(oct->num_rings), oct->max_rings);
	u64 now = ktime_get_ns();

	devlink_fmsg_bool_pair_put(fmsg, "up", READ_ONCE(oct->up));
	devlink_fmsg_u64_pair_put(fmsg, "tx_timeouts",
				  atomic64_read(&oct->tx_timeouts));
	devlink_fmsg_u64_pair_put(fmsg, "rx_stall_reports",
				  atomic64_read(&oct->rx_stall_reports));
	devlink_fmsg_u64_pair_put(fmsg, "ring_resets",
				  atomic64_read(&oct->ring_resets));
	devlink_fmsg_u64_pair_put(fmsg, "ring_rescues",
				  atomic64_read(&oct->ring_rescues));
	devlink_fmsg_arr_pair_nest_start(fmsg, "rings");
	for (q = 0; q < n; q++)
		octep_health_fmsg_ring(oct, fmsg, q, now);
	devlink_fmsg_arr_pair_nest_end(fmsg);
}

static int octep_rx_stall_diagnose(struct devlink_health_reporter *reporter,
				   struct devlink_fmsg *fmsg,
				   struct netlink_ext_ack *extack)
{
	octep_health_fmsg(devlink_health_reporter_priv(reporter), fmsg);
	return 0;
}

static int octep_rx_stall_dump(struct devlink_health_reporter *reporter,
			       struct devlink_fmsg *fmsg, void *priv_ctx,
			       struct netlink_ext_ack *extack)
{
	struct octep_health_ctx *ctx = priv_ctx;

	if (ctx)
		devlink_fmsg_string_pair_put(fmsg, "reported", ctx->msg);
	octep_health_fmsg(devlink_health_reporter_priv(reporter), fmsg);
	return 0;
}

/* Under the devlink lock. */
static int octep_rx_stall_recover(struct devlink_health_reporter *reporter,
				  void *priv_ctx, struct netlink_ext_ack *extack)
{
	octep_stall_recover(devlink_health_reporter_priv(reporter), priv_ctx);
	return 0;
}

static const struct devlink_health_reporter_ops octep_rx_stall_ops = {
	.name = "rx_stall",
	.diagnose = octep_rx_stall_diagnose,
	.dump = octep_rx_stall_dump,
	.recover = octep_rx_stall_recover,
};

/**
 * octep_health_init() - the works and the devlink health reporter
 * @oct: device, its devlink instance allocated
 *
 * Return: 0 or a negative errno.
 */
int octep_health_init(struct octep_dev *oct)
{
	INIT_DELAYED_WORK(&oct->health_work, octep_health_work);
	INIT_WORK(&oct->reset_work, octep_reset_work);
	mutex_init(&oct->report_lock);
	/* No grace period: every report is recovered (devlink health set). */
	oct->rx_stall = devlink_health_reporter_create(oct->devlink,
						       &octep_rx_stall_ops, 0,
						       oct);
	if (IS_ERR(oct->rx_stall)) {
		int err = PTR_ERR(oct->rx_stall);

		oct->rx_stall = NULL;
		return err;
	}
	return 0;
}

/**
 * octep_health_fini() - undo octep_health_init()
 * @oct: device, the works cancelled (octep_health_cancel())
 */
void octep_health_fini(struct octep_dev *oct)
{
	if (oct->rx_stall)
		devlink_health_reporter_destroy(oct->rx_stall);
	oct->rx_stall = NULL;
	mutex_destroy(&oct->report_lock);
}

/**
 * octep_health_reports() - start or stop reporting stalls to devlink
 * @oct: device
 * @on: report from now on; or stop, waiting out a report under way
 *
 * devlink_health_report() wants a registered instance, and the check runs
 * whenever the netdev is up: from register_netdev(), before devlink is
 * registered, and until unregister_netdev(), after it is not. A stall
 * found outside is counted, logged and recovered, not reported.
 */
void octep_health_reports(struct octep_dev *oct, bool on)
{
	mutex_lock(&oct->report_lock);
	oct->reporting = on;
	mutex_unlock(&oct->report_lock);
}

/**
 * octep_health_start() - start the health check; the datapath just came up
 * @oct: device, under RTNL
 */
void octep_health_start(struct octep_dev *oct)
{
	unsigned int q;

	ASSERT_RTNL();
	for (q = 0; q < oct->max_rings; q++)
		WRITE_ONCE(oct->qv[q].health.checked_ns, 0);
	mod_delayed_work(system_wq, &oct->health_work,
			 msecs_to_jiffies(OCTEP_HEALTH_PERIOD_MS));
}

/**
 * octep_health_cancel() - stop the works for good
 * @oct: device, its netdev unregistered (nothing can queue them again but
 *	themselves, and the cancel waits that out)
 */
void octep_health_cancel(struct octep_dev *oct)
{
	/* The check first: its report may queue the reset work. */
	cancel_delayed_work_sync(&oct->health_work);
	cancel_work_sync(&oct->reset_work);
}
