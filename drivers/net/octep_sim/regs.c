// SPDX-License-Identifier: GPL-2.0
/*
 * octep_sim: the register window.
 *
 * osim_read64()/osim_write64() decode an offset of octep_sdp.h
 * (ring registers at a stride of OCTEP_SDP_RING_OFFSET) and have the block's
 * side effects before they return: a write that disables a ring returns
 * only once the engine no longer touches that ring's memory. The driver
 * reaches them through the auxiliary device's ops; the debugfs regs file
 * reaches the same functions.
 *
 * DMA: there is no IOMMU in the VM and the device has no dma_range_map, so
 * the model turns a DMA address back into a kernel address with
 * phys_to_virt(dma_to_phys()) (see osim_dma_va()).
 */
#include <linux/bitfield.h>
#include <linux/dma-direct.h>
#include <linux/io.h>
#include <linux/mm.h>

#include "octep_sim.h"
#include "ipsec.h"

/**
 * osim_dma_va() - where the model reaches @len bytes the host mapped at @addr
 * @dev: device (the DMA device)
 * @addr: DMA address
 * @len: bytes
 *
 * Return: the kernel address, or NULL if the range is not RAM the model can
 * reach (a bad address from the host; the caller counts it).
 */
void *osim_dma_va(struct osim_dev *dev, u64 addr, size_t len)
{
	phys_addr_t phys;

	if (!addr || !len || addr + len < addr)
		return NULL;
	phys = dma_to_phys(&dev->dev, addr);
	if (!pfn_valid(PHYS_PFN(phys)) || !pfn_valid(PHYS_PFN(phys + len - 1)))
		return NULL;
	return phys_to_virt(phys);
}

/* Under oq->lock: turn the ring on if its memory is reachable. */
static void osim_oq_enable(struct osim_dev *dev, struct osim_oq *oq, bool on)
{
	if (!on) {
		WRITE_ONCE(oq->enabled, false);
		/* The host may reclaim every buffer once this returns. */
		osim_oq_flush_deferred(oq, true);
		return;
	}
	if (oq->enabled)
		return;
	oq->desc = osim_dma_va(dev, oq->baddr,
			       (size_t)oq->rsize * sizeof(*oq->desc));
	if (!oq->desc) {
		oq->drop_dma++;
		return;
	}
	WRITE_ONCE(oq->enabled, true);
}

static void osim_iq_enable(struct osim_dev *dev, struct osim_iq *iq, bool on)
{
	if (!on) {
		iq->enabled = false;
		iq->hung = false;	/* a ring reset ends the hang fault */
		return;
	}
	if (iq->enabled)
		return;
	iq->instr = osim_dma_va(dev, iq->baddr,
				(size_t)iq->rsize * sizeof(*iq->instr));
	if (!iq->instr) {
		iq->drop_bad++;
		return;
	}
	iq->enabled = true;
}

/* Under oq->lock: a new ring (BADDR or RSIZE written). */
static void osim_oq_new_ring(struct osim_dev *dev, struct osim_oq *oq)
{
	bool was = oq->enabled;

	osim_oq_flush_deferred(oq, false);
	oq->head = 0;
	oq->credits = 0;
	WRITE_ONCE(oq->enabled, false);
	if (was)
		osim_oq_enable(dev, oq, true);
}

static void osim_iq_new_ring(struct osim_dev *dev, struct osim_iq *iq)
{
	bool was = iq->enabled;

	iq->head = 0;
	iq->pending = 0;
	iq->enabled = false;
	if (was)
		osim_iq_enable(dev, iq, true);
}

static void osim_oq_write(struct osim_dev *dev, struct osim_oq *oq, u32 reg,
			  u64 val)
{
	unsigned long flags;

	spin_lock_irqsave(&oq->lock, flags);
	switch (reg) {
	case OCTEP_SDP_R_OUT_CNTS_START:
		osim_cnt_host_write(&oq->cnt, val);
		break;
	case OCTEP_SDP_R_OUT_INT_LEVELS_START:
		if (val & OCTEP_SDP_INT_LEVELS_ENA)
			osim_oq_arrive_on_enable(dev, oq);
		osim_cnt_levels_write(&oq->cnt, val);
		break;
	case OCTEP_SDP_R_OUT_SLIST_BADDR_START:
		oq->baddr = val;
		osim_oq_new_ring(dev, oq);
		break;
	case OCTEP_SDP_R_OUT_SLIST_RSIZE_START:
		oq->rsize = lower_32_bits(val);
		osim_oq_new_ring(dev, oq);
		break;
	case OCTEP_SDP_R_OUT_SLIST_DBELL_START:
		oq->credits = osim_rules_dbell(oq->credits, oq->rsize, val,
					       &oq->credit_excess);
		break;
	case OCTEP_SDP_R_OUT_CONTROL_START:
		oq->bufsize = FIELD_GET(OCTEP_SDP_OUT_CTL_BUFSIZE, val);
		break;
	case OCTEP_SDP_R_OUT_ENABLE_START:
		osim_oq_enable(dev, oq, val & OCTEP_SDP_RING_ENABLE);
		break;
	}
	spin_unlock_irqrestore(&oq->lock, flags);
}

static void osim_iq_write(struct osim_dev *dev, struct osim_iq *iq, u32 reg,
			  u64 val)
{
	unsigned long flags;
	bool kick = false;

	spin_lock_irqsave(&iq->lock, flags);
	switch (reg) {
	case OCTEP_SDP_R_IN_CONTROL_START:
		iq->control = val;
		break;
	case OCTEP_SDP_R_IN_ENABLE_START:
		osim_iq_enable(dev, iq, val & OCTEP_SDP_RING_ENABLE);
		kick = iq->enabled && iq->pending;
		break;
	case OCTEP_SDP_R_IN_INSTR_BADDR_START:
		iq->baddr = val;
		osim_iq_new_ring(dev, iq);
		break;
	case OCTEP_SDP_R_IN_INSTR_RSIZE_START:
		iq->rsize = lower_32_bits(val);
		osim_iq_new_ring(dev, iq);
		break;
	case OCTEP_SDP_R_IN_INSTR_DBELL_START:
		iq->pending = osim_rules_dbell(iq->pending, iq->rsize, val,
					       &iq->dbell_excess);
		kick = iq->enabled && iq->pending;
		break;
	case OCTEP_SDP_R_IN_CNTS_START:
		osim_cnt_host_write(&iq->cnt, val);
		break;
	case OCTEP_SDP_R_IN_INT_LEVELS_START:
		osim_cnt_levels_write(&iq->cnt, val);
		break;
	}
	spin_unlock_irqrestore(&iq->lock, flags);
	if (kick)
		osim_engine_kick(dev);
}

static u64 osim_oq_read(struct osim_oq *oq, u32 reg)
{
	unsigned long flags;
	u64 val = 0;

	if (reg == OCTEP_SDP_R_OUT_CNTS_START)	/* the hot one: no lock */
		return smp_load_acquire(&oq->cnt.r.count);

	spin_lock_irqsave(&oq->lock, flags);
	switch (reg) {
	case OCTEP_SDP_R_OUT_INT_LEVELS_START:
		val = osim_rules_levels_read(&oq->cnt.r);
		break;
	case OCTEP_SDP_R_OUT_SLIST_BADDR_START:
		val = oq->baddr;
		break;
	case OCTEP_SDP_R_OUT_SLIST_RSIZE_START:
		val = oq->rsize;
		break;
	case OCTEP_SDP_R_OUT_SLIST_DBELL_START:
		val = oq->credits;
		break;
	case OCTEP_SDP_R_OUT_CONTROL_START:
		val = FIELD_PREP(OCTEP_SDP_OUT_CTL_BUFSIZE, oq->bufsize);
		break;
	case OCTEP_SDP_R_OUT_ENABLE_START:
		val = oq->enabled ? OCTEP_SDP_RING_ENABLE : 0;
		break;
	}
	spin_unlock_irqrestore(&oq->lock, flags);
	return val;
}

static u64 osim_iq_read(struct osim_iq *iq, u32 reg)
{
	unsigned long flags;
	u64 val = 0;

	if (reg == OCTEP_SDP_R_IN_CNTS_START)	/* the hot one: no lock */
		return smp_load_acquire(&iq->cnt.r.count);

	spin_lock_irqsave(&iq->lock, flags);
	switch (reg) {
	case OCTEP_SDP_R_IN_CONTROL_START:
		val = iq->control;
		break;
	case OCTEP_SDP_R_IN_ENABLE_START:
		val = iq->enabled ? OCTEP_SDP_RING_ENABLE : 0;
		break;
	case OCTEP_SDP_R_IN_INSTR_BADDR_START:
		val = iq->baddr;
		break;
	case OCTEP_SDP_R_IN_INSTR_RSIZE_START:
		val = iq->rsize;
		break;
	case OCTEP_SDP_R_IN_INSTR_DBELL_START:
		val = iq->pending;
		break;
	case OCTEP_SDP_R_IN_INT_LEVELS_START:
		val = osim_rules_levels_read(&iq->cnt.r);
		break;
	}
	spin_unlock_irqrestore(&iq->lock, flags);
	return val;
}

/* The RSS register at @off, or NULL if @off names none. */
static u64 *osim_rss_reg(struct osim_dev *dev, u32 off)
{
	if (off < OCTEP_SDP_RSS_BASE || off >= OCTEP_SDP_RSS_END || off & 7)
		return NULL;
	if (off == OCTEP_SDP_RSS_CTL)
		return &dev->rss_ctl;
	if (off >= OCTEP_SDP_RSS_KEY(0) &&
	    off < OCTEP_SDP_RSS_KEY(OCTEP_SDP_RSS_KEY_REGS))
		return &dev->rss_key[(off - OCTEP_SDP_RSS_KEY(0)) / 8];
	if (off >= OCTEP_SDP_RSS_INDIR(0) &&
	    off < OCTEP_SDP_RSS_INDIR(OCTEP_SDP_RSS_INDIR_REGS))
		return &dev->rss_indir[(off - OCTEP_SDP_RSS_INDIR(0)) / 8];
	return NULL;
}

/*
 * RSS_CTL is stored last by a host that programs the key and table first:
 * the release makes an engine that sees the enable see them too.
 */
static void osim_rss_write(struct osim_dev *dev, u64 *reg, u64 val)
{
	if (reg == &dev->rss_ctl)	/* pairs with osim_rx_ring() */
		smp_store_release(reg, val);
	else
		WRITE_ONCE(*reg, val);
}

/* Split @off into a ring and a register; false if it names no ring. */
static bool osim_decode(struct osim_dev *dev, u32 off, struct osim_ring **ring,
			u32 *reg)
{
	u32 r = off / OCTEP_SDP_RING_OFFSET;

	if (off & 7 || r >= dev->num_rings)
		return false;
	*ring = &dev->rings[r];
	*reg = off % OCTEP_SDP_RING_OFFSET;
	return true;
}

/* PORT_SPEED: the port's full rate, or the lower cap link_mbps sets. */
static u64 osim_port_mbps(struct osim_dev *dev)
{
	u32 mbps = READ_ONCE(dev->link_mbps);

	return mbps && mbps < OCTEP_SDP_PORT_MBPS ? mbps : OCTEP_SDP_PORT_MBPS;
}

/**
 * osim_read64() - read a register of the block
 * @dev: device
 * @off: byte offset (octep_sdp.h)
 *
 * Return: its value; 0 for an offset that names nothing.
 */
u64 osim_read64(struct osim_dev *dev, u32 off)
{
	struct osim_ring *ring;
	u64 *rss;
	u32 reg;

	if (osim_mbox_reg(off))
		return osim_mbox_read(dev, off);
	if (osim_ipsec_cnt_reg(off))
		return osim_ipsec_cnt_read(dev, off);
	rss = osim_rss_reg(dev, off);
	if (rss)
		return READ_ONCE(*rss);
	if (off == OCTEP_SDP_PORT_SPEED)
		return osim_port_mbps(dev);
	if (!osim_decode(dev, off, &ring, &reg)) {
		atomic64_inc(&dev->bad_regs);
		return 0;
	}
	if (reg >= OCTEP_SDP_R_OUT_CNTS_START)
		return osim_oq_read(&ring->oq, reg);
	return osim_iq_read(&ring->iq, reg);
}

/**
 * osim_write64() - write a register of the block, with its side effects
 * @dev: device
 * @off: byte offset (octep_sdp.h)
 * @val: value
 *
 * Any context. An offset that names nothing is counted (bad_regs).
 */
void osim_write64(struct osim_dev *dev, u32 off, u64 val)
{
	struct osim_ring *ring;
	u64 *rss;
	u32 reg;

	if (osim_mbox_reg(off)) {
		osim_mbox_write(dev, off, val);
		return;
	}
	rss = osim_rss_reg(dev, off);
	if (rss) {
		osim_rss_write(dev, rss, val);
		return;
	}
	/* Read-only: the cap is the model's own setting (link_mbps). */
	if (off == OCTEP_SDP_PORT_SPEED)
		return;
	if (!osim_decode(dev, off, &ring, &reg)) {
		atomic64_inc(&dev->bad_regs);
		return;
	}
	if (reg >= OCTEP_SDP_R_OUT_CNTS_START)
		osim_oq_write(dev, &ring->oq, reg, val);
	else
		osim_iq_write(dev, &ring->iq, reg, val);
}

/* The host's accesses: what PCIe gives a CPU once the device is gone. */
static u64 osim_sdp_read64(struct octep_sdp_dev *sdp, u32 off)
{
	struct osim_dev *dev = container_of(sdp, struct osim_sdp, sdp)->dev;

	if (test_bit(OSIM_F_GONE, &dev->flags))
		return U64_MAX;
	return osim_read64(dev, off);
}

static void osim_sdp_write64(struct octep_sdp_dev *sdp, u32 off, u64 val)
{
	struct osim_dev *dev = container_of(sdp, struct osim_sdp, sdp)->dev;

	if (!test_bit(OSIM_F_GONE, &dev->flags))
		osim_write64(dev, off, val);
}

const struct octep_sdp_ops osim_sdp_ops = {
	.read64		= osim_sdp_read64,
	.write64	= osim_sdp_write64,
};

/**
 * osim_rings_reset() - turn every ring off, as a block reset would
 * @dev: device
 *
 * Delayed buffer writes are dropped, not written: whoever owned the rings
 * is gone. Credits, pending instructions and counts are cleared, and RSS
 * is turned off (its key and table stay).
 */
void osim_rings_reset(struct osim_dev *dev)
{
	unsigned long flags;
	unsigned int i;

	WRITE_ONCE(dev->rss_ctl, 0);
	for (i = 0; i < dev->num_rings; i++) {
		struct osim_ring *ring = &dev->rings[i];

		spin_lock_irqsave(&ring->oq.lock, flags);
		WRITE_ONCE(ring->oq.enabled, false);
		osim_oq_flush_deferred(&ring->oq, false);
		ring->oq.credits = 0;
		ring->oq.head = 0;
		osim_cnt_host_write(&ring->oq.cnt, ring->oq.cnt.r.count);
		osim_cnt_levels_write(&ring->oq.cnt, 0);
		ring->oq.cnt.r.latched = false;
		spin_unlock_irqrestore(&ring->oq.lock, flags);

		spin_lock_irqsave(&ring->iq.lock, flags);
		ring->iq.enabled = false;
		ring->iq.pending = 0;
		ring->iq.head = 0;
		osim_cnt_host_write(&ring->iq.cnt, ring->iq.cnt.r.count);
		osim_cnt_levels_write(&ring->iq.cnt, 0);
		ring->iq.cnt.r.latched = false;
		spin_unlock_irqrestore(&ring->iq.lock, flags);
	}
}
