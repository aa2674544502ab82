// SPDX-License-Identifier: GPL-2.0
/*
 * Unit test of the block's rules, drivers/net/octep_sim/rules.c, as the
 * vfio-user server builds them: natively, through the stand-in kernel
 * headers of drivers/net/octep_sim/vfu/include (scripts/tests/rules.sh).
 * Each case drives one struct osim_rules through events at explicit
 * times and checks what the rules ask of their layer (OSIM_RULES_*) and
 * the state the kernel model shows in debugfs. TAP on stdout; the exit
 * status is the number of failures.
 */
#include <stdio.h>
#include <string.h>

#include <linux/limits.h>

#include "../../drivers/net/ethernet/octep_ipsec/octep_sdp.h"
#include "../../drivers/net/octep_sim/rules.h"

#define US	1000ULL		/* ns */
#define ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))
#define MS	1000000ULL

static unsigned int tests, fails;

static void tap(int cond, const char *what, u64 got, u64 want)
{
	tests++;
	if (cond) {
		printf("ok %u %s\n", tests, what);
		return;
	}
	fails++;
	printf("not ok %u %s: got %llu, want %llu\n", tests, what,
	       (unsigned long long)got, (unsigned long long)want);
}

#define EQ(what, got, want) do {				\
	u64 _g = (got), _w = (want);			\
	tap(_g == _w, what, _g, _w);				\
} while (0)

static struct osim_rules_cfg cfg;

/*
 * A layer that does what it is asked, with every send going out; returns
 * the event's actions for the test to look at.
 */
static unsigned int done(struct osim_rules *r, u64 now, unsigned int act)
{
	osim_rules_done(r, &cfg, now, act, true);
	return act;
}

static unsigned int add(struct osim_rules *r, u64 now, u32 n)
{
	return done(r, now, osim_rules_add(r, &cfg, now, n));
}

static unsigned int ack(struct osim_rules *r, u64 now, u64 val)
{
	return done(r, now, osim_rules_host_write(r, &cfg, now, val));
}

static unsigned int levels(struct osim_rules *r, u64 now, u32 pkts,
			   u32 time_us, int ena)
{
	u64 val = pkts | (u64)time_us << 32 |
		       (ena ? OCTEP_SDP_INT_LEVELS_ENA : 0);

	return done(r, now, osim_rules_levels_write(r, now, val));
}

static unsigned int timer(struct osim_rules *r, u64 now)
{
	return done(r, now, osim_rules_timer(r, &cfg, now));
}

static void reset(struct osim_rules *r)
{
	memset(r, 0, sizeof(*r));
	cfg.resend_pending = OSIM_RESEND_NONZERO;
	cfg.masked = OSIM_MASKED_LATCH;
	cfg.left_ns = OSIM_LEFT_NS_DEF;
}

#define SEND(act)	(!!((act) & OSIM_RULES_SEND))
#define START(act)	(!!((act) & OSIM_RULES_START))
#define CANCEL(act)	(!!((act) & OSIM_RULES_CANCEL))

/* Crossing the level raises once; staying at or above raises nothing. */
static void test_crossing(void)
{
	struct osim_rules r;

	reset(&r);
	levels(&r, 0, 4, 0, 1);
	EQ("crossing: 3 of 4 packets raise nothing", SEND(add(&r, 1 * US, 3)), 0);
	EQ("crossing: the 4th raises", SEND(add(&r, 2 * US, 1)), 1);
	EQ("crossing: counted once", r.raised[OSIM_CAUSE_CROSSING], 1);
	EQ("crossing: more above the level raise nothing",
	   SEND(add(&r, 3 * US, 5)), 0);
	EQ("crossing: no timer above the level, however long",
	   SEND(timer(&r, 10000 * MS)), 0);
	EQ("crossing: still counted once", r.raised[OSIM_CAUSE_CROSSING], 1);
	EQ("crossing: the count", r.count, 9);
	/* A host write that takes it below the level lets it cross again. */
	EQ("crossing: an ack to 2 raises nothing",
	   SEND(ack(&r, 4 * US, 7)), 0);
	EQ("crossing: back to the level raises again",
	   SEND(add(&r, 5 * US, 2)), 1);
	EQ("crossing: counted twice", r.raised[OSIM_CAUSE_CROSSING], 2);
	ack(&r, 6 * US, 4);
	levels(&r, 7 * US, 0, 0, 1);
	EQ("crossing: a level of 0 acts as 1", SEND(add(&r, 8 * US, 1)), 1);
	EQ("crossing: an INT_LEVELS read back", osim_rules_levels_read(&r),
	   OCTEP_SDP_INT_LEVELS_ENA);
}

/* The timer runs from the last change by a host write or a rise from 0. */
static void test_timer(void)
{
	struct osim_rules r;
	unsigned int act;

	reset(&r);
	levels(&r, 0, 10, 100, 1);
	act = add(&r, 1000 * US, 1);
	EQ("timer: a rise from 0 below the level starts it", START(act), 1);
	EQ("timer: due 100 us after the rise", r.timer_expires, 1100 * US);
	EQ("timer: more packets below the level do not restart it",
	   START(add(&r, 1050 * US, 2)), 0);
	EQ("timer: still due at the rise's time", r.timer_expires, 1100 * US);
	act = ack(&r, 1060 * US, 1);
	EQ("timer: an ack that leaves packets restarts it", START(act), 1);
	EQ("timer: due 100 us after the ack", r.timer_expires, 1160 * US);
	EQ("timer: the first run, stale, raises nothing",
	   SEND(timer(&r, 1100 * US)), 0);
	EQ("timer: one before its time raises nothing",
	   SEND(timer(&r, 1159 * US)), 0);
	EQ("timer: at its time it raises", SEND(timer(&r, 1163 * US)), 1);
	EQ("timer: counted as the timer's", r.raised[OSIM_CAUSE_TIMER], 1);
	EQ("timer: 103 us after its start", r.timer_after_us, 103);
	EQ("timer: once", SEND(timer(&r, 5000 * US)), 0);
	/* Crossing cancels it; a run on its way then does nothing. */
	ack(&r, 6000 * US, 1);
	EQ("timer: the ack restarted it", r.timer_armed, 1);
	act = add(&r, 6010 * US, 9);
	EQ("timer: crossing cancels it", CANCEL(act), 1);
	EQ("timer: and raises", SEND(act), 1);
	EQ("timer: a cancelled run raises nothing",
	   SEND(timer(&r, 6100 * US)), 0);
	EQ("timer: crossing, not timer", r.raised[OSIM_CAUSE_TIMER], 1);
	/* A new threshold restarts it; 0 is no timer. */
	ack(&r, 7000 * US, 9);
	act = levels(&r, 7050 * US, 10, 300, 1);
	EQ("timer: a new threshold restarts it", START(act), 1);
	EQ("timer: due 300 us after the write", r.timer_expires, 7350 * US);
	EQ("timer: an enable alone does not restart it",
	   START(levels(&r, 7060 * US, 10, 300, 1)), 0);
	levels(&r, 7070 * US, 10, 0, 1);
	EQ("timer: a threshold of 0 stops it", r.timer_armed, 0);
	EQ("timer: and its run raises nothing", SEND(timer(&r, 7400 * US)), 0);
	ack(&r, 7500 * US, 1);
	EQ("timer: a rise from 0 with no threshold starts none",
	   START(add(&r, 7510 * US, 1)), 0);
	EQ("timer: and none is running", r.timer_armed, 0);
}

/* RESEND under each setting of what "pending" is. */
static void test_resend(void)
{
	static const struct {
		u32 setting;
		const char *name;
		int below, at;	/* raises with 2 of 4, with 5 of 4 */
	} cases[] = {
		{ OSIM_RESEND_LEVEL, "level", 0, 1 },
		{ OSIM_RESEND_NONZERO, "nonzero", 1, 1 },
		{ OSIM_RESEND_NEVER, "never", 0, 0 },
	};
	char what[96];
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		struct osim_rules r;

		reset(&r);
		cfg.resend_pending = cases[i].setting;
		levels(&r, 0, 4, 0, 1);
		snprintf(what, sizeof(what), "resend %s: with none counted",
			 cases[i].name);
		EQ(what, SEND(ack(&r, 1 * US, OCTEP_SDP_CNTS_RESEND)), 0);
		add(&r, 2 * US, 3);
		/* Ack 1, leaving 2 below the level, and RESEND. */
		snprintf(what, sizeof(what), "resend %s: 2 below a level of 4",
			 cases[i].name);
		EQ(what, SEND(ack(&r, 3 * US, OCTEP_SDP_CNTS_RESEND | 1)),
		   cases[i].below);
		add(&r, 4 * US, 3);
		snprintf(what, sizeof(what), "resend %s: 5 at a level of 4",
			 cases[i].name);
		EQ(what, SEND(ack(&r, 5 * US, OCTEP_SDP_CNTS_RESEND)),
		   cases[i].at);
		snprintf(what, sizeof(what), "resend %s: raises counted",
			 cases[i].name);
		EQ(what, r.raised[OSIM_CAUSE_RESEND],
		   cases[i].below + cases[i].at);
		snprintf(what, sizeof(what), "resend %s: writes counted",
			 cases[i].name);
		EQ(what, r.resend_writes, 3);
		snprintf(what, sizeof(what), "resend %s: the count after",
			 cases[i].name);
		EQ(what, r.count, 5);
	}
}

/* A raise while bit 62 is clear: latched and sent on enable, or lost. */
static void test_masked(void)
{
	struct osim_rules r;

	reset(&r);
	levels(&r, 0, 1, 0, 0);
	EQ("latch: a crossing while disabled sends nothing",
	   SEND(add(&r, 1 * US, 1)), 0);
	EQ("latch: latched", r.latched, 1);
	EQ("latch: counted", r.latch_events, 1);
	EQ("latch: RESEND while disabled sends nothing",
	   SEND(ack(&r, 2 * US, OCTEP_SDP_CNTS_RESEND)), 0);
	EQ("latch: one latch for two raises", r.latch_events, 1);
	EQ("latch: the enable sends it", SEND(levels(&r, 3 * US, 1, 0, 1)), 1);
	EQ("latch: no longer latched", r.latched, 0);
	EQ("latch: a second enable sends nothing",
	   SEND(levels(&r, 4 * US, 1, 0, 1)), 0);

	reset(&r);
	cfg.masked = OSIM_MASKED_DROP;
	levels(&r, 0, 1, 0, 0);
	EQ("drop: a crossing while disabled sends nothing",
	   SEND(add(&r, 1 * US, 1)), 0);
	EQ("drop: not latched", r.latched, 0);
	EQ("drop: counted as dropped", r.masked_dropped, 1);
	EQ("drop: the enable sends nothing", SEND(levels(&r, 2 * US, 1, 0, 1)), 0);
	EQ("drop: enabled, RESEND sends",
	   SEND(ack(&r, 3 * US, OCTEP_SDP_CNTS_RESEND)), 1);
}

/* The record of rings left, and what a send lost does to it. */
static void test_left(void)
{
	struct osim_rules r;
	unsigned int act;

	reset(&r);
	levels(&r, 0, 4, 0, 1);
	add(&r, 1 * MS, 1);
	EQ("left: packets below the level, no timer: silent", r.silent, 1);
	ack(&r, 2 * MS, 0);
	EQ("left: a write that acknowledges nothing goes on", r.silent, 1);
	ack(&r, 4 * MS, 1);
	EQ("left: 3 ms silent is a ring left", r.left, 1);
	EQ("left: the longest silence", r.left_max_ns, 3 * MS);
	add(&r, 5 * MS, 1);
	ack(&r, 6 * MS, 1);
	EQ("left: 1 ms is not", r.left, 1);
	/* A crossing whose send is lost leaves the ring silent. */
	add(&r, 7 * MS, 1);
	act = osim_rules_add(&r, &cfg, 8 * MS, 3);
	osim_rules_done(&r, &cfg, 8 * MS, act, false);
	EQ("left: a crossing lost is no answer", r.silent, 1);
	EQ("left: nor owed", r.owed, 0);
	ack(&r, 10 * MS, 4);
	EQ("left: so the silence since 7 ms counts", r.left, 2);
	add(&r, 11 * MS, 4);
	EQ("left: a crossing sent is owed", r.owed, 1);
	EQ("left: and not silent", r.silent, 0);
	ack(&r, 20 * MS, 4);
	EQ("left: an owed interrupt is no ring left", r.left, 2);
}

/* Acks beyond the count, a count that saturates, the doorbells. */
static void test_counts(void)
{
	struct osim_rules r;
	u64 excess = 0;

	reset(&r);
	add(&r, 0, 3);
	ack(&r, 1, 5);
	EQ("ack: more than counted takes it to 0", r.count, 0);
	EQ("ack: counted as excess", r.ack_excess, 1);
	add(&r, 2, U32_MAX - 1);
	add(&r, 3, 10);
	EQ("count: saturates", r.count, U32_MAX);
	EQ("dbell: adds", osim_rules_dbell(3, 8, 4, &excess), 7);
	EQ("dbell: no excess", excess, 0);
	EQ("dbell: stops at the ring's size",
	   osim_rules_dbell(7, 8, 2, &excess), 8);
	EQ("dbell: counted as excess", excess, 1);
	EQ("dbell: all ones resets", osim_rules_dbell(7, 8, 0xffffffff, &excess), 0);
	EQ("dbell: only bits 31:0 count",
	   osim_rules_dbell(1, 8, (1ULL << 32) | 2, &excess), 3);
}

int main(void)
{
	test_crossing();
	test_timer();
	test_resend();
	test_masked();
	test_left();
	test_counts();
	printf("# %u tests, %u failed\n", tests, fails);
	return fails ? 1 : 0;
}
