// SPDX-License-Identifier: GPL-2.0
/*
 * octep_ipsec: programming a ring pair's registers.
 *
 * The offsets and bits are octep_sdp.h's. Every write goes
 * through the block's write64 op, which has the block's side effects before
 * it returns.
 */
#include <linux/bitfield.h>
#include <linux/iopoll.h>

#include "octep_ipsec.h"

/**
 * octep_regs_oq_levels() - OUT_INT_LEVELS for a packet level and a time
 * @level: packets at which the count's crossing interrupts
 * @time: the block's time threshold
 *
 * Return: the register value, interrupt enable bit clear.
 */
u64 octep_regs_oq_levels(u32 level, u32 time)
{
	return FIELD_PREP(OCTEP_SDP_INT_LEVELS_PKTS, level) |
	       FIELD_PREP(OCTEP_SDP_INT_LEVELS_TIME, time);
}

/**
 * octep_regs_write_levels() - write both rings' interrupt levels
 * @qv: ring pair
 * @enable: set the interrupt enable bit
 *
 * Disabling is what the interrupt handler does before it schedules NAPI;
 * enabling is done only by a poll whose napi_complete_done() returned true.
 * A crossing while disabled may be latched by the block and sent at the
 * enable, or dropped: the poll re-reads the counts after enabling
 * (octep_rearm_reread()).
 */
void octep_regs_write_levels(struct octep_qvec *qv, bool enable)
{
	struct octep_dev *oct = qv->oct;
	u64 ena = enable ? OCTEP_SDP_INT_LEVELS_ENA : 0;

	/*
	 * Armed before the enable reaches the block, so that a raise it
	 * latched and sends at the enable is not taken for one sent while
	 * off (octep_ring_irq()); disarmed after the disable, for the same
	 * reason the other way round.
	 */
	if (enable) {
		WRITE_ONCE(qv->irq_off_hits, 0);
		WRITE_ONCE(qv->irq_armed, true);
	}
	/* A late interrupt's handler may run while set_coalesce rewrites them. */
	octep_wr64(oct, OCTEP_SDP_R_OUT_INT_LEVELS(qv->idx),
		   READ_ONCE(qv->oq_levels) | ena);
	octep_wr64(oct, OCTEP_SDP_R_IN_INT_LEVELS(qv->idx),
		   READ_ONCE(qv->iq_levels) | ena);
	if (!enable)
		WRITE_ONCE(qv->irq_armed, false);
}

/* Acknowledge whatever a previous user of the ring left counted. */
static void octep_regs_clear_cnts(struct octep_dev *oct, u32 off)
{
	u64 cnt = octep_rd64(oct, off) & OCTEP_SDP_CNTS_COUNT;

	if (cnt)
		octep_wr64(oct, off, cnt);
}

/**
 * octep_regs_oq_setup() - program and enable an output ring
 * @qv: ring pair, its output ring allocated
 *
 * The ring is enabled with its interrupt disabled; buffers are credited by
 * the caller (octep_oq_refill()) afterwards.
 */
void octep_regs_oq_setup(struct octep_qvec *qv)
{
	struct octep_dev *oct = qv->oct;
	struct octep_oq *oq = &qv->oq;
	unsigned int r = qv->idx;

	octep_wr64(oct, OCTEP_SDP_R_OUT_ENABLE(r), 0);
	octep_wr64(oct, OCTEP_SDP_R_OUT_SLIST_BADDR(r), oq->desc_dma);
	octep_wr64(oct, OCTEP_SDP_R_OUT_SLIST_RSIZE(r), oq->size);
	octep_wr64(oct, OCTEP_SDP_R_OUT_CONTROL(r),
		   FIELD_PREP(OCTEP_SDP_OUT_CTL_BUFSIZE, oq->buf_size));
	octep_wr64(oct, OCTEP_SDP_R_OUT_INT_LEVELS(r), qv->oq_levels);
	octep_regs_clear_cnts(oct, OCTEP_SDP_R_OUT_CNTS(r));
	octep_wr64(oct, OCTEP_SDP_R_OUT_ENABLE(r), OCTEP_SDP_RING_ENABLE);
}

/**
 * octep_regs_iq_setup() - program and enable an input ring
 * @qv: ring pair, its input ring allocated
 */
void octep_regs_iq_setup(struct octep_qvec *qv)
{
	struct octep_dev *oct = qv->oct;
	struct octep_iq *iq = &qv->iq;
	unsigned int r = qv->idx;

	octep_wr64(oct, OCTEP_SDP_R_IN_ENABLE(r), 0);
	octep_wr64(oct, OCTEP_SDP_R_IN_INSTR_BADDR(r), iq->instr_dma);
	octep_wr64(oct, OCTEP_SDP_R_IN_INSTR_RSIZE(r), iq->size);
	octep_wr64(oct, OCTEP_SDP_R_IN_INT_LEVELS(r), qv->iq_levels);
	octep_regs_clear_cnts(oct, OCTEP_SDP_R_IN_CNTS(r));
	octep_wr64(oct, OCTEP_SDP_R_IN_ENABLE(r), OCTEP_SDP_RING_ENABLE);
}

/**
 * octep_regs_ring_disable() - stop the block using a ring pair
 * @qv: ring pair
 *
 * Interrupts off, then both rings off. After this returns the block writes
 * no more to the rings' memory, so it may be freed.
 *
 * Context: process; may sleep up to 10 ms a ring.
 */
void octep_regs_ring_disable(struct octep_qvec *qv)
{
	struct octep_dev *oct = qv->oct;
	const u32 regs[] = {
		OCTEP_SDP_R_OUT_ENABLE(qv->idx),
		OCTEP_SDP_R_IN_ENABLE(qv->idx),
	};
	unsigned int i;
	u64 v;

	octep_regs_write_levels(qv, false);
	for (i = 0; i < ARRAY_SIZE(regs); i++)
		octep_wr64(oct, regs[i], 0);
	/*
	 * Over PCI the writes are posted: read each enable back until the
	 * block reports the ring stopped. All ones is a device gone, which
	 * writes nothing more either.
	 */
	for (i = 0; i < ARRAY_SIZE(regs); i++)
		if (read_poll_timeout(octep_rd64, v, v == U64_MAX ||
				      !(v & OCTEP_SDP_RING_ENABLE), 10,
				      10 * USEC_PER_MSEC, false, oct, regs[i]))
			dev_warn(oct->dev, "ring %u still enabled at %#x\n",
				 qv->idx, regs[i]);
}
