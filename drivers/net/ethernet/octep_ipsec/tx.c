// SPDX-License-Identifier: GPL-2.0
/*
 * octep_ipsec: transmit through the input rings.
 *
 * One 64-byte instruction per frame (one linear buffer), rung with
 * IN_INSTR_DBELL; the block counts instructions done in IN_CNTS, which the
 * ring pair's NAPI poll reaps. The input ring's count follows the same
 * crossing rule as the output ring's, so the reaper also goes round until a
 * read of the count gives zero before the poll may complete.
 */
#include <linux/bitfield.h>
#include <linux/dma-mapping.h>
#include <linux/etherdevice.h>
#include <net/netdev_queues.h>

#include "octep_ipsec.h"

/* Wake a stopped queue once this many instructions are free. */
#define OCTEP_TX_WAKE_THRS	32

static u32 octep_iq_space(const struct octep_iq *iq)
{
	/*
	 * head is written by xmit, tail by the poll; each reads the other's
	 * with READ_ONCE. The stop/wake barriers are netif_txq_try_stop()'s
	 * and netdev_txq_completed_mb()'s.
	 */
	return iq->size - (READ_ONCE(iq->head) - READ_ONCE(iq->tail));
}

static void octep_iq_ring_doorbell(struct octep_qvec *qv)
{
	struct octep_iq *iq = &qv->iq;

	/* Instructions in memory before the doorbell that hands them over. */
	wmb();
	octep_wr64(qv->oct, OCTEP_SDP_R_IN_INSTR_DBELL(qv->idx), iq->pending);
	iq->pending = 0;
	iq->stats.doorbells++;
}

/**
 * octep_start_xmit() - ndo_start_xmit
 * @skb: frame
 * @netdev: our netdev
 *
 * Return: NETDEV_TX_OK, or NETDEV_TX_BUSY if called on a full ring.
 */
netdev_tx_t octep_start_xmit(struct sk_buff *skb, struct net_device *netdev)
{
	struct octep_dev *oct = octep_from_netdev(netdev);
	u16 q = skb_get_queue_mapping(skb);
	struct device *dd = oct->sdp->dma_dev;
	struct octep_sdp_instr *in;
	struct netdev_queue *txq;
	struct octep_qvec *qv;
	struct octep_iq *iq;
	u64 flags = 0, csum = 0;
	dma_addr_t dma;
	bool ring;
	u32 len, i;

	qv = &oct->qv[q];
	iq = &qv->iq;
	txq = netdev_get_tx_queue(netdev, q);

	if (unlikely(!octep_iq_space(iq))) {
		netif_tx_stop_queue(txq);
		return NETDEV_TX_BUSY;
	}
	if (skb_put_padto(skb, ETH_ZLEN))
		goto dropped;
	if (skb_linearize(skb))
		goto drop;
	len = skb->len;
	if (unlikely(len > FIELD_MAX(OCTEP_SDP_TX_LEN)))
		goto drop;
	if (octep_ipsec_tx_flags(iq, skb, &flags))
		goto drop;
	if (skb->ip_summed == CHECKSUM_PARTIAL) {
		flags |= OCTEP_SDP_TX_CSUM;
		csum = FIELD_PREP(OCTEP_SDP_TX_CSUM_START,
				  skb_checksum_start_offset(skb)) |
		       FIELD_PREP(OCTEP_SDP_TX_CSUM_OFFSET, skb->csum_offset);
	}
	dma = dma_map_single(dd, skb->data, len, DMA_TO_DEVICE);
	if (dma_mapping_error(dd, dma))
		goto drop;

	i = iq->head & (iq->size - 1);
	iq->bufs[i].skb = skb;
	iq->bufs[i].dma = dma;
	iq->bufs[i].len = len;
	in = &iq->instr[i];
	in->dptr = cpu_to_le64(dma);
	in->flags = cpu_to_le64(flags | FIELD_PREP(OCTEP_SDP_TX_LEN, len));
	in->csum = cpu_to_le64(csum);
	memset(in->rsvd, 0, sizeof(in->rsvd));
	skb_tx_timestamp(skb);

	u64_stats_update_begin(&iq->stats.syncp);
	iq->stats.packets++;
	iq->stats.bytes += len;
	if (flags & OCTEP_SDP_TX_CSUM)
		iq->stats.csum_offload++;
	u64_stats_update_end(&iq->stats.syncp);

	/* The slot is filled before the poll can see it in flight. */
	smp_store_release(&iq->head, iq->head + 1);
	iq->pending++;

	ring = __netdev_tx_sent_queue(txq, len, netdev_xmit_more());
	if (!netif_subqueue_maybe_stop(netdev, q, octep_iq_space(iq), 1,
				       OCTEP_TX_WAKE_THRS)) {
		u64_stats_update_begin(&iq->stats.syncp);
		iq->stats.stops++;
		u64_stats_update_end(&iq->stats.syncp);
		ring = true;
	}
	if (ring)
		octep_iq_ring_doorbell(qv);
	return NETDEV_TX_OK;

drop:
	dev_kfree_skb_any(skb);
dropped:
	u64_stats_update_begin(&iq->stats.syncp);
	iq->stats.drops++;
	u64_stats_update_end(&iq->stats.syncp);
	if (iq->pending && !netdev_xmit_more())
		octep_iq_ring_doorbell(qv);
	return NETDEV_TX_OK;
}

/**
 * octep_iq_reap() - complete the instructions the block has done
 * @iq: input ring, its ring pair's NAPI held by the caller
 * @budget: the poll's budget (0 from netpoll)
 *
 * Goes round until a read of IN_CNTS gives zero (so the next completion is
 * a crossing) or a ring's worth was completed.
 *
 * Return: true if the count was read as zero, false to be polled again.
 */
bool octep_iq_reap(struct octep_iq *iq, int budget)
{
	struct octep_qvec *qv = iq->qv;
	struct octep_dev *oct = qv->oct;
	struct device *dd = oct->sdp->dma_dev;
	u32 mask = iq->size - 1, tail = iq->tail;
	u32 pkts = 0, bytes = 0, inflight, n;
	bool zero = false;
	int ret;
	u64 cnt;

	if (!iq->instr)
		return true;
	while (pkts < iq->size) {
		cnt = octep_rd64(oct, OCTEP_SDP_R_IN_CNTS(qv->idx)) &
		      OCTEP_SDP_CNTS_COUNT;
		if (!cnt) {
			zero = true;
			break;
		}
		/* Pairs with smp_store_release() of head in xmit. */
		inflight = smp_load_acquire(&iq->head) - tail;
		n = min_t(u64, cnt, inflight);
		if (!n)
			break;	/* a count with nothing in flight: block bug */
		octep_wr64(oct, OCTEP_SDP_R_IN_CNTS(qv->idx), n);
		while (n--) {
			struct octep_tx_buf *buf = &iq->bufs[tail & mask];

			dma_unmap_single(dd, buf->dma, buf->len, DMA_TO_DEVICE);
			bytes += buf->len;
			napi_consume_skb(buf->skb, budget);
			buf->skb = NULL;
			tail++;
			pkts++;
		}
	}
	if (!pkts)
		return zero || !(READ_ONCE(iq->head) - tail);

	WRITE_ONCE(iq->tail, tail);
	u64_stats_update_begin(&iq->cstats.syncp);
	iq->cstats.completions += pkts;
	u64_stats_update_end(&iq->cstats.syncp);

	ret = netif_subqueue_completed_wake(oct->netdev, qv->idx, pkts, bytes,
					    octep_iq_space(iq),
					    OCTEP_TX_WAKE_THRS);
	if (!ret) {
		u64_stats_update_begin(&iq->cstats.syncp);
		iq->cstats.wakes++;
		u64_stats_update_end(&iq->cstats.syncp);
	}
	return zero;
}

/**
 * octep_iq_alloc() - allocate an input ring
 * @qv: ring pair; the size is the device's tx_ring_size
 *
 * Return: 0 or -ENOMEM.
 */
int octep_iq_alloc(struct octep_qvec *qv)
{
	struct octep_dev *oct = qv->oct;
	struct octep_iq *iq = &qv->iq;
	struct device *dd = oct->sdp->dma_dev;

	iq->qv = qv;
	iq->size = oct->tx_ring_size;
	iq->head = 0;
	iq->tail = 0;
	iq->pending = 0;
	iq->instr = dma_alloc_coherent(dd, iq->size * sizeof(*iq->instr),
				       &iq->instr_dma, GFP_KERNEL);
	if (!iq->instr)
		return -ENOMEM;
	iq->bufs = kcalloc(iq->size, sizeof(*iq->bufs), GFP_KERNEL);
	if (!iq->bufs) {
		dma_free_coherent(dd, iq->size * sizeof(*iq->instr),
				  iq->instr, iq->instr_dma);
		iq->instr = NULL;
		return -ENOMEM;
	}
	return 0;
}

/**
 * octep_iq_free() - free an input ring the block no longer uses
 * @qv: ring pair, its rings disabled
 *
 * Frames still in flight are dropped and counted.
 */
void octep_iq_free(struct octep_qvec *qv)
{
	struct octep_iq *iq = &qv->iq;
	struct device *dd = qv->oct->sdp->dma_dev;
	u32 mask = iq->size - 1, dropped = 0;

	if (!iq->instr)
		return;
	for (; iq->tail != iq->head; iq->tail++) {
		struct octep_tx_buf *buf = &iq->bufs[iq->tail & mask];

		dma_unmap_single(dd, buf->dma, buf->len, DMA_TO_DEVICE);
		dev_kfree_skb_any(buf->skb);
		buf->skb = NULL;
		dropped++;
	}
	u64_stats_update_begin(&iq->stats.syncp);
	iq->stats.drops += dropped;
	u64_stats_update_end(&iq->stats.syncp);
	netdev_tx_reset_queue(netdev_get_tx_queue(qv->oct->netdev, qv->idx));
	kfree(iq->bufs);
	iq->bufs = NULL;
	dma_free_coherent(dd, iq->size * sizeof(*iq->instr), iq->instr,
			  iq->instr_dma);
	iq->instr = NULL;
}
