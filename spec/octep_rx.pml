/* SPDX-License-Identifier: GPL-2.0 */
/*
 * octep_rx.pml - the receive servicing of one octep_ipsec output ring,
 * as a Promela model for spin (see spec/README.md).
 *
 * Names follow the driver: OUT_CNTS (the ring's R_OUT_CNTS count),
 * pkts_level (R_OUT_INT_LEVELS packet level), NAPI_STATE_SCHED and
 * NAPI_STATE_MISSED (napi->state), tick_req (the ring's request for the
 * watchdog's next tick), rxwd (the watchdog hrtimer), and the processes
 * octep_ring_irq, octep_poll (with the inlines octep_visit and octep_pass),
 * octep_rxwd_timer, octep_quiesce and octep_resume.
 *
 * Options (cpp, given to spin with -D):
 *   SERVICE_PASS  the old servicing (service=pass): a per-ring flag taken
 *                 for each pass, a held flag read as an empty pass, and a
 *                 watchdog that takes the flag and makes one pass itself.
 *                 Default: the visit rules on NAPI (service=visit).
 *   NPKTS=n       packets the wire delivers in all (default 3)
 *   BUDGET=n      the NAPI budget, a visit's bound in packets (default 2)
 *   LEVEL=n       pkts_level (default 1)
 *   BLK_TIMER     the block's time threshold: a ring whose count left zero
 *                 gets one interrupt later if the count is still nonzero
 *   RESEND        a completed visit writes RESEND (bit 59) after re-enabling
 *                 (resend=1); the block raises if the ring is pending:
 *   RESEND_NONZERO  pending = the count is nonzero (default: at or above
 *                 the level; octep_sim resend_pending=level|nonzero|never)
 *   RESEND_NEVER  RESEND never raises
 *   REARM_NONE    the old exit (rearm=none): after re-enabling, nothing.
 *                 Default (rearm=reread, service=visit only): re-read
 *                 OUT_CNTS after re-enabling; if nonzero and no tick is
 *                 requested, napi_schedule_prep(), mask, __napi_schedule()
 *   DROP_MASKED   the block drops a raise while the ring's IRQ is masked
 *                 (octep_sim masked=drop); default: latched (masked=latch)
 *   UNSEEN        the block counts a packet before it writes its buffer
 *   QUIESCES=n    quiesce/resume cycles (default 1)
 *   QUIESCE_NAPI_OFF  the quiesce also disables NAPI after closing the gate
 *                 and waiting (octep_tx_stop(), before the rings are
 *                 freed); the resume enables it
 *   RESUME_NO_UNMASK  the resume leaves unmasking the block to the poll
 *                 that completes (octep_resume() in netdev.c does this)
 *   LINUX_DISABLE_IRQ  the quiesce turns the IRQ off with disable_irq()
 *                 (Linux level; a raised interrupt is replayed by
 *                 enable_irq()) instead of the block's mask, and the resume
 *                 leaves unmasking the block to the poll that completes
 *   LIVENESS      include the LTL property (verify with pan -a -f)
 *   REPORT        (pass mode) assert !left only after the watchdog took the
 *                 flag between two of the poll's passes: the report's trail
 * Defects, each to show that a property has teeth (all must fail):
 *   OVERRIDE      arming the watchdog for its period overrides a request
 *   OVERRUN       a pass is not told what is left of the budget
 *   NO_GATE_WAIT  the quiesce closes the gate but does not wait for the
 *                 poll inside to leave
 *   GATE_FIRST    the poll reads the gate before it counts itself inside
 *                 (the two sides' write-then-read order broken)
 *   DROP_MASKED with REARM_NONE: the old exit on a block that drops
 *   NO_NOTE       napi_schedule_prep() without MISSED: a servicer turned
 *                 away by a held ring leaves no note (rule 2 broken); fails
 *                 only with REARM_NONE (the re-read covers a lost note)
 *   NO_RESUME_SCHED  the resume does not schedule the ring once
 *
 * Granularity: every atomic { } below is one indivisible step. The kernel's
 * try_cmpxchg() loops (napi_schedule_prep, napi_complete_done, napi_disable,
 * napi_enable) are each one step: a loop that recomputes from the value it
 * read and succeeds only if the state is unchanged is linearizable at its
 * successful cmpxchg. set_bit/test_and_clear_bit are one step each. Register
 * reads and writes are one step each. Packets arrive between any two steps.
 */

#ifndef NPKTS
#define NPKTS	3
#endif
#ifndef BUDGET
#define BUDGET	2
#endif
#ifndef LEVEL
#define LEVEL	1
#endif
#ifndef QUIESCES
#define QUIESCES 1
#endif

/* rxwd: the watchdog hrtimer's state */
#define RXWD_OFF	0	/* cancelled (quiesced) */
#define RXWD_PERIOD	1	/* armed for a full period */
#define RXWD_SOON	2	/* armed for the next tick (a request) */
#define RXWD_FIRING	3	/* its callback is running */

/* ---- the block (octep_sim / the SDP) ---- */
byte OUT_CNTS;			/* R_OUT_CNTS: counted, not written back */
byte pkts_level = LEVEL;	/* R_OUT_INT_LEVELS packet level */
byte arrived;			/* packets the block has counted, ever */
byte delivered;			/* packets handed up the stack, ever */
byte unwritten;			/* UNSEEN: counted, buffer not yet written */
bit irq_latched;		/* an interrupt raised, not yet taken */
bit irq_ena = 1;		/* the ring's interrupt enable (INT_LEVELS ENA) */
bit irq_off;			/* LINUX_DISABLE_IRQ: disable_irq() in force */
bit blk_timer;			/* BLK_TIMER: the time threshold is running */

/* ---- NAPI (napi->state and its poll list) ---- */
bit NAPI_STATE_SCHED;
bit NAPI_STATE_MISSED;
bit NAPI_STATE_DISABLE;
bit NAPI_STATE_NPSVC;
bit on_list;			/* __napi_schedule() done: the poll will run */

/* ---- the quiesce's gate ---- */
bit gate;			/* oct->quiesced, the gate: polls keep out */
bit inside;			/* qv->inside: a poll counted itself in */

/* ---- the watchdog ---- */
bit tick_req;			/* the ring asked for the next tick (rule 3) */
byte rxwd = RXWD_PERIOD;
bit rxwd_on = 1;		/* the watchdog may be armed (not quiesced) */
bit periodic = 1;		/* its full-period ticks go on (see below) */

/* ---- service=pass ---- */
bit oq_flag;			/* the old per-ring flag, taken per pass */

/* ---- ghosts: who is inside, who owes the ring a service ---- */
bit in_poll;			/* octep_poll between list pickup and return */
bit in_irq;			/* octep_ring_irq between taking and leaving */
bit in_wd;			/* a watchdog callback is running */
bit owed;			/* a quiesce started; its resume owes a schedule */
bit quiesced;
bit in_visit;			/* a poll past the gate, in its visit or tail */
byte quiesces_left = QUIESCES;
bit between_passes;		/* pass mode: a visit between two passes */
bit wd_between;			/* the watchdog took the flag there */

/*
 * The ring is LEFT: packets in it, nobody inside, nobody scheduled, no
 * interrupt on its way, no block timer running, no tick requested, and no
 * quiesce owing it the resume's schedule. Only the watchdog's full period
 * (rxwd == RXWD_PERIOD) would find it: that is the report's stall.
 */
#define left	(OUT_CNTS > 0 && !NAPI_STATE_SCHED && !in_poll && \
		 !in_irq && !(irq_latched && irq_ena && !irq_off) && \
		 !blk_timer && \
		 !(tick_req && rxwd == RXWD_SOON) && !in_wd && !owed)

/* the block raises the ring's interrupt */
inline irq_raise()
{
#ifdef DROP_MASKED
	if
	:: irq_ena -> irq_latched = 1
	:: else -> skip
	fi
#else
	irq_latched = 1
#endif
}

/* napi_schedule_prep(), one try_cmpxchg step: DISABLE refuses; a held SCHED
 * sets MISSED (the note, rule 2) and returns false; else SCHED is taken. */
inline napi_schedule_prep(ret)
{
	if
	:: NAPI_STATE_DISABLE -> ret = 0
	:: else ->
		ret = !NAPI_STATE_SCHED;
#ifndef NO_NOTE
		if
		:: NAPI_STATE_SCHED -> NAPI_STATE_MISSED = 1
		:: else -> skip
		fi;
#endif
		NAPI_STATE_SCHED = 1
	fi
}

/* napi_complete_done(), one try_cmpxchg step: MISSED keeps SCHED (and
 * __napi_schedule() follows, the poll runs again) and returns false; else
 * SCHED is cleared and it returns true. NPSVC returns false untouched. */
inline napi_complete_done(ret, resched)
{
	atomic {
		resched = 0;
		if
		:: NAPI_STATE_NPSVC -> ret = 0
		:: else ->
			assert(NAPI_STATE_SCHED);
			if
			:: NAPI_STATE_MISSED ->
				NAPI_STATE_MISSED = 0; ret = 0; resched = 1
			:: else ->
				NAPI_STATE_SCHED = 0; ret = 1
			fi
		fi
	}
	if
	:: resched -> on_list = 1	/* __napi_schedule() */
	:: else -> skip
	fi
}

/* arm the watchdog for its next tick; never later than that (rule 3) */
inline rxwd_arm_soon()
{
	atomic {
		if
		:: rxwd_on -> rxwd = RXWD_SOON
		:: else -> skip
		fi
	}
}

/* after a tick or at resume: the soonest of the period and a pending
 * request; never overrides an arming for the next tick */
inline rxwd_arm_period()
{
	if
	:: !rxwd_on -> skip
#ifdef OVERRIDE
	:: else -> rxwd = RXWD_PERIOD
#else
	:: rxwd_on && rxwd == RXWD_SOON -> skip
	:: rxwd_on && rxwd != RXWD_SOON && tick_req -> rxwd = RXWD_SOON
	:: rxwd_on && rxwd != RXWD_SOON && !tick_req -> rxwd = RXWD_PERIOD
#endif
	fi
}

/* the write-back: hand k packets up and subtract k from R_OUT_CNTS */
inline write_back(k)
{
	delivered = delivered + k;
	OUT_CNTS = OUT_CNTS - k;
	if
	:: OUT_CNTS == 0 -> blk_timer = 0
	:: else -> skip
	fi
}

/*
 * octep_pass: read R_OUT_CNTS, take up to what is left of the budget of the
 * buffers it counts (stopping at one not yet written), hand them up, write
 * the number taken back. n: count read; k: taken; unseen: stopped at a
 * buffer not yet written.
 */
inline octep_pass(lim, n, k, unseen)
{
	atomic {
		assert(!quiesced);	/* nobody takes from a quiesced ring */
		n = OUT_CNTS;
#ifndef OVERRUN
		if
		:: n > lim -> n = lim
		:: else -> skip
		fi;
#else
		if
		:: n > BUDGET -> n = BUDGET
		:: else -> skip
		fi;
#endif
#ifndef UNSEEN
		k = n; unseen = 0
	}
#else
	}
	atomic {
		/* the oldest n buffers, in ring order; the unwritten are newest */
		k = OUT_CNTS - unwritten;
		if
		:: k > n -> k = n
		:: else -> skip
		fi;
		unseen = (k < n)
	}
#endif
	atomic { write_back(k) }
}

/* ------------------------------------------------------------------ */

/* the wire: up to NPKTS packets, at any moment, and it may stop */
active proctype octep_sim_wire()
{
	do
	:: atomic {
		arrived < NPKTS ->
		if
		:: OUT_CNTS == 0 ->
#ifdef BLK_TIMER
			blk_timer = 1;
#endif
			skip
		:: else -> skip
		fi;
		/* the crossing: from below the level to at or above it */
		if
		:: OUT_CNTS < pkts_level && OUT_CNTS + 1 >= pkts_level ->
			irq_raise()
		:: else -> skip
		fi;
		OUT_CNTS++;
		arrived++;
#ifdef UNSEEN
		unwritten++;
#endif
	   }
	:: break
	od
}

/* the block's own events: buffers written late, its time threshold */
active proctype octep_sim_block()
{
end:
	do
#ifdef UNSEEN
	:: unwritten > 0 -> unwritten--
#endif
#ifdef BLK_TIMER
	:: atomic { blk_timer && OUT_CNTS > 0 -> irq_raise(); blk_timer = 0 }
#endif
	:: false
	od
}

/* the ring's interrupt handler: mask the ring's IRQ, napi_schedule() */
active proctype octep_ring_irq()
{
	bit ret;
end:
	do
	:: atomic {
		irq_latched && irq_ena && !irq_off ->
		irq_latched = 0; in_irq = 1
	   }
		irq_ena = 0;
		atomic { napi_schedule_prep(ret) }
		atomic {
			if
			:: ret -> on_list = 1	/* __napi_schedule() */
			:: else -> skip
			fi;
			in_irq = 0; ret = 0
		}
	od
}

/* net_rx_action -> __napi_poll -> octep_poll -> octep_visit */
active proctype octep_poll()
{
	byte n, k, work;
	bit unseen, ret, resched, held, gated;
end:
	do
	:: atomic { on_list -> on_list = 0; in_poll = 1 }
		/* octep_poll_enter(): count in, full barrier, read the gate */
#ifndef GATE_FIRST
		inside = 1;
		atomic { gated = gate; in_visit = !gated }
#else
		gated = gate;
		atomic { inside = 1; in_visit = !gated }
#endif
		if
		:: gated ->
			/* closed: SCHED back; the ring and its IRQ untouched,
			 * the resume schedules it */
			napi_complete_done(ret, resched)
		:: else -> skip
		fi;
		if
		:: gated -> skip
		:: !gated && NAPI_STATE_SCHED ->	/* napi_is_scheduled() */
			/* octep_visit: passes until one takes nothing or
			 * nothing is left of the budget */
			work = 0;
			do
			:: work < BUDGET && gate -> break	/* stops short */
			:: work < BUDGET && !gate ->
#ifdef SERVICE_PASS
				/* the old way: the flag for each pass */
				atomic {
					if
					:: oq_flag -> held = 1
					:: else -> held = 0; oq_flag = 1
					fi;
					between_passes = 0
				}
				if
				:: held ->
					/* a held ring read as an empty pass */
					printf("MSC: poll finds the flag held: leaves\n");
					k = 0; unseen = 0
				:: else ->
					octep_pass(BUDGET - work, n, k, unseen);
					atomic {
						oq_flag = 0;
						between_passes = (k > 0 && work + k < BUDGET)
					}
				fi;
#else
				octep_pass(BUDGET - work, n, k, unseen);
#endif
				work = work + k;
				assert(work <= BUDGET);	/* the bound */
				if
				:: k == 0 -> break
				:: else -> skip
				fi
			:: else -> break
			od;
			if
			:: work < BUDGET ->
				if
				:: unseen ->
					/* rule 3: work left behind */
					tick_req = 1;	/* set_bit */
					rxwd_arm_soon()
				:: else -> skip
				fi;
				if
				:: gate ->
					/* a quiesce came in: the IRQ stays
					 * off, the resume schedules the ring */
					napi_complete_done(ret, resched);
					ret = 0
				:: else ->
					napi_complete_done(ret, resched)
				fi;
				if
				:: ret ->
					atomic { assert(!quiesced); irq_ena = 1 };
#ifdef RESEND
					atomic {
						if
#if defined(RESEND_NEVER)
						:: false -> skip
#elif defined(RESEND_NONZERO)
						:: OUT_CNTS > 0 -> irq_raise()
#else
						:: OUT_CNTS >= pkts_level ->
							irq_raise()
#endif
						:: else -> skip
						fi
					}
#endif
#if !defined(REARM_NONE) && !defined(SERVICE_PASS)
					/* rearm=reread: the count again, after the
					 * enable; work nobody may announce is
					 * scheduled (octep_rearm_reread()) */
					n = OUT_CNTS;
					if
					:: n > 0 && !tick_req ->
						atomic { napi_schedule_prep(resched) }
						if
						:: resched ->
							irq_ena = 0;
							on_list = 1
						:: else -> skip
						fi
					:: else -> skip
					fi;
#endif
					skip
				:: else -> skip
				fi
			:: else ->
				/* the whole budget: NAPI still owns it */
				if
				:: NAPI_STATE_DISABLE ->
					napi_complete_done(ret, resched)
				:: else ->
					on_list = 1	/* repoll */
				fi
			fi
		:: else -> skip
		fi;
		/* octep_poll_leave(); forget the locals: fewer states */
		atomic { in_poll = 0; inside = 0; in_visit = 0; n = 0; k = 0;
			 work = 0; unseen = 0; ret = 0; resched = 0; held = 0;
			 gated = 0 }
	od
}

/*
 * The watchdog: an hrtimer, a full period or the next tick. Its full-period
 * ticks may stop at any moment (periodic = 0), so that the LTL property
 * cannot lean on the periodic rescue: a requested tick still comes.
 */
active proctype octep_rxwd_timer()
{
	bit ret, got;
	byte n, k;
	bit unseen;
end:
	do
	:: atomic {
		(rxwd == RXWD_SOON ||
		 (rxwd == RXWD_PERIOD && periodic)) ->
		rxwd = RXWD_FIRING; in_wd = 1
	   }
		tick_req = 0;	/* test_and_clear_bit: this is the tick asked for */
#ifndef SERVICE_PASS
		if
		:: OUT_CNTS > 0 ->
			/* napi_schedule(): a held ring gets the note */
			atomic { napi_schedule_prep(ret) }
			if
			:: ret -> on_list = 1
			:: else -> skip
			fi
		:: else -> skip
		fi;
#else
		if
		:: OUT_CNTS > 0 ->
			atomic {
				if
				:: !oq_flag ->
					oq_flag = 1; got = 1;
					wd_between = wd_between || between_passes
				:: else -> got = 0
				fi
			}
			if
			:: got ->
				printf("MSC: watchdog takes the flag, one pass\n");
				/* one ring's worth: everything counted */
				octep_pass(255, n, k, unseen);
				oq_flag = 0
			:: else -> skip
			fi
		:: else -> skip
		fi;
#endif
		atomic {
			if
			:: rxwd == RXWD_FIRING -> rxwd = RXWD_OFF
			:: else -> skip
			fi;
			rxwd_arm_period();
			in_wd = 0; ret = 0; got = 0; n = 0; k = 0; unseen = 0
		}
#ifdef LIVENESS
	:: atomic { rxwd == RXWD_PERIOD && periodic -> periodic = 0 }
#endif
	od
}

/* the quiesce: stop the watchdog, close the gate, wait for the poll inside
 * to leave, (QUIESCE_NAPI_OFF: napi_disable()), mask and synchronize the
 * IRQ */
active proctype octep_quiesce()
{
end:
	do
	:: atomic { quiesces_left > 0 && !quiesced && !owed -> owed = 1 }
		/* hrtimer_cancel(): stops it and waits for its callback */
		atomic { rxwd_on = 0; rxwd = RXWD_OFF }
		(!in_wd);
		gate = 1;			/* WRITE_ONCE(); smp_mb() */
#ifndef NO_GATE_WAIT
		(!inside);			/* the spin */
#endif
#ifdef QUIESCE_NAPI_OFF
		/* napi_disable(): a scheduled poll runs, finds the gate closed
		 * and gives SCHED back */
		NAPI_STATE_DISABLE = 1;		/* set_bit */
		atomic {
			!NAPI_STATE_SCHED && !NAPI_STATE_NPSVC ->
			NAPI_STATE_SCHED = 1; NAPI_STATE_NPSVC = 1
		}
		NAPI_STATE_DISABLE = 0;		/* clear_bit */
#endif
#ifdef LINUX_DISABLE_IRQ
		/* disable_irq(): off at the Linux level, waits the handler
		 * out; an interrupt raised meanwhile is replayed on enable */
		irq_off = 1;
#else
		/* mask the ring's IRQ, synchronize_irq() */
		irq_ena = 0;
#endif
		(!in_irq);
		assert(!in_visit);			/* no visit in progress */
		assert(delivered + OUT_CNTS == arrived);	/* none lost */
		quiesced = 1
	:: break
	od
}

/* the resume: (QUIESCE_NAPI_OFF: napi_enable()), unmask, open the gate, arm
 * the watchdog (the soonest of the period and a pending request), schedule
 * the ring once */
active proctype octep_resume()
{
	bit ret;
end:
	do
	:: quiesced ->
#ifdef LINUX_DISABLE_IRQ
		assert(irq_off);
#else
		assert(!irq_ena);	/* masked all the while it was quiesced */
#endif
#ifdef QUIESCE_NAPI_OFF
		atomic {		/* napi_enable() */
			assert(NAPI_STATE_SCHED);
			NAPI_STATE_SCHED = 0; NAPI_STATE_NPSVC = 0
		}
#endif
#if defined(LINUX_DISABLE_IRQ)
		/* enable_irq(); the block's mask is lifted by the poll that
		 * completes */
		irq_off = 0;
#elif defined(RESUME_NO_UNMASK)
		/* the block's mask is lifted by the poll that completes */
		skip;
#else
		irq_ena = 1;
#endif
		atomic { gate = 0; quiesced = 0 }	/* smp_store_release() */
		atomic { rxwd_on = 1; rxwd_arm_period() }
		atomic {		/* napi_schedule() */
#ifndef NO_RESUME_SCHED
			napi_schedule_prep(ret);
#endif
			owed = 0; quiesces_left--
		}
		atomic {
			if
			:: ret -> on_list = 1
			:: else -> skip
			fi;
			ret = 0
		}
	od
}

#ifndef LIVENESS
/* the ring is never left: checked in every reachable state */
active proctype monitor()
{
#ifdef REPORT
	assert(!(left && wd_between))
#else
	assert(!left)
#endif
}
#endif

#ifdef LIVENESS
/*
 * Time goes on when nothing else can move (timeout): without it a run that
 * stops in a state with packets counted and nothing enabled would be
 * finite, and pan's weak-fairness search judges only infinite runs.
 */
active proctype time_passes()
{
	bit t;
end:
	do
	:: timeout -> t = !t
	od
}

/* under weak fairness, every packet the block counts is delivered */
ltl delivered_all { <> [] (delivered == arrived) }
#endif
