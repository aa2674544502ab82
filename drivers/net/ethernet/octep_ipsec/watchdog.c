// SPDX-License-Identifier: GPL-2.0
/*
 * octep_ipsec: the receive watchdog, and rule 3's tick requests.
 *
 * An hrtimer that looks at every ring's count each period (devlink param
 * rxwd_period_us). It never reads a ring: with service=visit it asks for a
 * visit through napi_schedule_prep() like every other servicer, so a ring
 * held by a poll gets a note (MISSED) instead of a second servicer.
 *
 * It passes over a ring a visit ended in since its last look
 * (rxwd_skip_visited, octep_wd_skip()): the reads it saves are the ones a
 * held ring turns away.
 *
 * Tick requests: a visit that leaves work behind sets its ring's
 * OCTEP_OQ_TICK_REQ bit and calls octep_wd_request_tick(). The bit is
 * remembered until a tick looks at that ring, and every arming of the timer
 * (the request itself, the timer's own rearm, the resume, a period change)
 * goes through octep_wd_arm_locked(), which keeps an expiry that is sooner
 * than the one asked for. So arming for a full period never puts back a
 * pending request for the next tick - the override the report found in the
 * watchdog's own exit and in the resume.
 */
#include "octep_ipsec.h"
#include "octep_trace.h"

static enum hrtimer_mode octep_wd_mode(struct octep_dev *oct)
{
	/*
	 * service=pass: the old watchdog makes a pass itself, in softirq.
	 * The timer is set up in that mode (octep_wd_set_service()).
	 */
	return READ_ONCE(oct->service) == OCTEP_SERVICE_PASS ?
	       HRTIMER_MODE_ABS_SOFT : HRTIMER_MODE_ABS;
}

/* Arm for @delay_ns from now unless a sooner expiry is pending. */
static void octep_wd_arm_locked(struct octep_dev *oct, u64 delay_ns)
{
	ktime_t exp;

	lockdep_assert_held(&oct->wd_lock);
	if (!oct->wd_on)
		return;
	exp = ktime_add_ns(ktime_get(), delay_ns);
	if (hrtimer_is_queued(&oct->wd_timer) &&
	    !ktime_after(hrtimer_get_expires(&oct->wd_timer), exp))
		return;
	hrtimer_start(&oct->wd_timer, exp, octep_wd_mode(oct));
}

/* The soonest the watchdog is owed: a ring's tick request, or the period. */
static u64 octep_wd_next_ns(struct octep_dev *oct)
{
	u32 period = READ_ONCE(oct->rxwd_period_us);
	unsigned int q;

	for (q = 0; q < oct->num_rings; q++)
		if (test_bit(OCTEP_OQ_TICK_REQ, &oct->qv[q].oq.flags))
			return OCTEP_RXWD_TICK_US * NSEC_PER_USEC;
	return (u64)period * NSEC_PER_USEC;
}

static void octep_wd_rearm(struct octep_dev *oct)
{
	unsigned long flags;
	u64 ns;

	spin_lock_irqsave(&oct->wd_lock, flags);
	ns = octep_wd_next_ns(oct);
	if (ns)
		octep_wd_arm_locked(oct, ns);
	spin_unlock_irqrestore(&oct->wd_lock, flags);
}

/*
 * A ring whose poll is between giving SCHED back and re-enabling the
 * interrupt, or re-enabled it less than a tick ago, is not left: a crossing
 * latched while the interrupt was off is sent by the enable, and may take
 * a while to arrive (a remapped or virtualised interrupt). Nor is a ring
 * whose NAPI timer is pending: a completion deferred by
 * napi_defer_hard_irqs (oq_deferred) leaves the interrupt off and that
 * timer polls the ring. Such a ring is scheduled, counted in rxwd_early,
 * and not judged.
 */
static bool octep_wd_irq_in_flight(struct octep_qvec *qv)
{
	/* Pairs with clear_bit_unlock() after enabled_ns in the poll. */
	if (test_bit_acquire(OCTEP_OQ_COMPLETING, &qv->oq.flags))
		return true;
	/*
	 * A lockless look, queued or running: the callback runs dequeued,
	 * and until its test_and_set_bit() of SCHED the ring looks left.
	 * A timer that fires after our napi_schedule_prep() finds SCHED ours.
	 */
	if (hrtimer_active(&qv->napi.timer))
		return true;
	return ktime_get_ns() - READ_ONCE(qv->enabled_ns) <
	       OCTEP_RXWD_TICK_US * NSEC_PER_USEC;
}

/*
 * A ring a visit ended in since the last look needs no look now (the
 * report's review point): if that visit left it, nothing visits it again,
 * and the next tick looks. A ring that asked for this tick (rule 3) or is
 * short of buffers is always looked at. The flag is a hint, not a
 * handover: no data is read on its strength, so the atomic test-and-clear
 * against the visit's set_bit() needs no further ordering.
 */
static bool octep_wd_skip(struct octep_qvec *qv)
{
	struct octep_oq *oq = &qv->oq;

	if (!test_and_clear_bit(OCTEP_OQ_VISITED, &oq->flags) ||
	    !READ_ONCE(qv->oct->rxwd_skip_visited) ||
	    test_bit(OCTEP_OQ_TICK_REQ, &oq->flags) ||
	    test_bit(OCTEP_OQ_REFILL, &oq->flags))
		return false;
	atomic64_inc(&oq->rxwd_skipped);
	return true;
}

/* service=visit: look at one ring; schedule its NAPI if it has packets. */
static bool octep_wd_look(struct octep_qvec *qv)
{
	struct octep_oq *oq = &qv->oq;
	enum octep_wd_find find;
	bool asked;
	u64 cnt;

	if (octep_wd_skip(qv))
		return false;
	cnt = octep_cnt_rd(qv->oct, OCTEP_SDP_R_OUT_CNTS(qv->idx));
	/* This tick is the one the ring asked for, whatever it finds. */
	asked = test_and_clear_bit(OCTEP_OQ_TICK_REQ, &oq->flags);
	if (!cnt && !test_bit(OCTEP_OQ_REFILL, &oq->flags))
		return false;
	octep_visit_ask(qv, OCTEP_ASK_WATCHDOG);
	if (napi_schedule_prep(&qv->napi)) {
		/*
		 * We hold SCHED now and the poll cannot start before
		 * __napi_schedule(): it reads RESCUED at its start and judges
		 * the stall from its first pass.
		 */
		if (!asked && cnt && octep_wd_irq_in_flight(qv)) {
			atomic64_inc(&oq->rxwd_early);
			find = OCTEP_WD_EARLY;
		} else if (!asked && cnt) {
			atomic64_inc(&oq->rxwd_rescues);
			set_bit(OCTEP_OQ_RESCUED, &oq->flags);
			find = OCTEP_WD_RESCUE;
		} else {
			find = asked ? OCTEP_WD_ASKED : OCTEP_WD_REFILL;
		}
		trace_octep_wd_find(qv->idx, cnt, find);
		__napi_schedule(&qv->napi);
	} else {
		/* Held: a note is left and the holder looks (rule 2). */
		atomic64_inc(&oq->oq_declined);
		trace_octep_wd_find(qv->idx, cnt, OCTEP_WD_HELD);
	}
	return cnt;
}

static enum hrtimer_restart octep_wd_fire(struct hrtimer *t)
{
	struct octep_dev *oct = container_of(t, struct octep_dev, wd_timer);
	/* Fixed while the watchdog can run (octep_wd_set_service()). */
	bool pass = READ_ONCE(oct->service) == OCTEP_SERVICE_PASS;
	bool found = false;
	unsigned int q;

	atomic64_inc(&oct->rxwd_ticks);
	for (q = 0; q < oct->num_rings; q++) {
		if (pass)
			found |= octep_pass_watchdog_ring(&oct->qv[q]);
		else
			found |= octep_wd_look(&oct->qv[q]);
	}
	if (found)
		atomic64_inc(&oct->rxwd_runs);
	/*
	 * Rearm through the one arming function (soonest wins) rather than
	 * by HRTIMER_RESTART: a request made while this ran may already have
	 * queued an earlier expiry.
	 */
	octep_wd_rearm(oct);
	return HRTIMER_NORESTART;
}

/**
 * octep_wd_request_tick() - rule 3: ask for the watchdog's next tick
 * @oq: the ring leaving work behind
 *
 * Remembered in the ring's OCTEP_OQ_TICK_REQ until a tick looks at it.
 */
void octep_wd_request_tick(struct octep_oq *oq)
{
	struct octep_dev *oct = oq->qv->oct;
	unsigned long flags;

	set_bit(OCTEP_OQ_TICK_REQ, &oq->flags);
	spin_lock_irqsave(&oct->wd_lock, flags);
	octep_wd_arm_locked(oct, OCTEP_RXWD_TICK_US * NSEC_PER_USEC);
	spin_unlock_irqrestore(&oct->wd_lock, flags);
}

/**
 * octep_wd_start() - let the watchdog run; keeps pending tick requests
 * @oct: device
 */
void octep_wd_start(struct octep_dev *oct)
{
	unsigned long flags;

	spin_lock_irqsave(&oct->wd_lock, flags);
	oct->wd_on = true;
	spin_unlock_irqrestore(&oct->wd_lock, flags);
	octep_wd_rearm(oct);
}

/**
 * octep_wd_stop() - stop the watchdog and wait out a running tick
 * @oct: device
 *
 * Tick requests stay set: octep_wd_start() honours them.
 */
void octep_wd_stop(struct octep_dev *oct)
{
	unsigned long flags;

	spin_lock_irqsave(&oct->wd_lock, flags);
	oct->wd_on = false;
	spin_unlock_irqrestore(&oct->wd_lock, flags);
	hrtimer_cancel(&oct->wd_timer);
}

/**
 * octep_wd_set_period() - devlink rxwd_period_us
 * @oct: device
 * @period_us: new period, 0 for no periodic tick (requests still arm it)
 */
void octep_wd_set_period(struct octep_dev *oct, u32 period_us)
{
	WRITE_ONCE(oct->rxwd_period_us, period_us);
	octep_wd_rearm(oct);
}

/**
 * octep_wd_set_service() - debugfs "service": switch the receive servicing
 * @oct: device, under RTNL, its datapath down (!@oct->up)
 * @service: the new servicing
 *
 * Down, no poll runs and the watchdog is stopped (octep_wd_stop(); with
 * @oct->wd_on false nothing arms it), so the timer is set up again in the
 * mode the new servicing's watchdog runs in (octep_wd_mode()). The next
 * ndo_open builds its page pools for it (octep_oq_install()).
 */
void octep_wd_set_service(struct octep_dev *oct, enum octep_service service)
{
	ASSERT_RTNL();
	hrtimer_cancel(&oct->wd_timer);
	WRITE_ONCE(oct->service, service);
	hrtimer_setup(&oct->wd_timer, octep_wd_fire, CLOCK_MONOTONIC,
		      octep_wd_mode(oct));
}

/**
 * octep_wd_init() - set up the watchdog timer (not started)
 * @oct: device
 */
void octep_wd_init(struct octep_dev *oct)
{
	spin_lock_init(&oct->wd_lock);
	hrtimer_setup(&oct->wd_timer, octep_wd_fire, CLOCK_MONOTONIC,
		      octep_wd_mode(oct));
}
