// SPDX-License-Identifier: GPL-2.0
/*
 * octep_ipsec: receive.
 *
 * The block interrupts when a ring's packet count crosses the level, not
 * while it stays above it: a ring left with packets and nobody inside gets
 * no further interrupt. So the poll visits a ring (passes until a pass
 * takes nothing or the budget is spent, each writing back what it took
 * before the next reads the count) instead of making one pass. The three
 * rules, their NAPI names and their counters: "Receive servicing" in
 * Documentation/networking/device_drivers/ethernet/octep_ipsec.rst.
 *
 * The ring's flag is NAPI_STATE_SCHED. Every other servicer (the interrupt,
 * the watchdog, the resume, a reconfiguration) asks through
 * napi_schedule_prep(), which sets NAPI_STATE_MISSED when SCHED is held;
 * napi_complete_done() clears SCHED, reads MISSED and polls again if it
 * was set. Both writes are the same fully ordered try_cmpxchg() on
 * n->state, so of a servicer turned away and a holder leaving, one always
 * sees the other's write: neither leaves believing the other will look.
 *
 * service=pass keeps the old servicing for the tests to catch, fenced in
 * the functions marked "service=pass" below. Nothing else reads a ring
 * outside the poll.
 */
#include <linux/bitfield.h>
#include <linux/bpf_trace.h>
#include <linux/dma-mapping.h>
#include <linux/etherdevice.h>
#include <linux/filter.h>
#include <net/page_pool/helpers.h>
#include <net/xdp.h>

#include "octep_ipsec.h"
#include "octep_trace.h"

/*
 * What passes saw, and the counts they made: folded into the ring's stats
 * by octep_oq_count() in one short update section after the passes, not
 * one around them (GRO and the xfrm receive path run inside a pass).
 */
struct octep_pass_info {
	bool unseen;	/* stopped at a counted buffer not yet written */
	bool filled;	/* the count read covered every posted buffer */
	bool read;	/* a pass read the count: @count is the first read */
	u32 count;
	u32 packets;
	u64 bytes;
	u32 drops;
	u32 alloc_fail;
	u32 csum_bad;
	u32 copybreak;
	u32 oq_unseen;
	u32 rx_resync;
	u32 xdp_drop;
	u32 xdp_tx;
	u32 xdp_tx_err;
	u32 xdp_redirect;
	u32 xdp_redirect_err;
	u32 xdp_aborted;
};

static void octep_oq_count(struct octep_oq *oq,
			   const struct octep_pass_info *pi)
{
	struct octep_rx_stats *s = &oq->stats;

	s->packets += pi->packets;
	s->bytes += pi->bytes;
	s->drops += pi->drops;
	s->alloc_fail += pi->alloc_fail;
	s->csum_bad += pi->csum_bad;
	s->copybreak += pi->copybreak;
	s->oq_unseen += pi->oq_unseen;
	s->rx_resync += pi->rx_resync;
	s->xdp_drop += pi->xdp_drop;
	s->xdp_tx += pi->xdp_tx;
	s->xdp_tx_err += pi->xdp_tx_err;
	s->xdp_redirect += pi->xdp_redirect;
	s->xdp_redirect_err += pi->xdp_redirect_err;
	s->xdp_aborted += pi->xdp_aborted;
}

/**
 * octep_oq_refill() - post free buffers and credit them to the block
 * @oq: output ring, held by the caller (poll, or before NAPI is enabled)
 *
 * Each buffer's length word is cleared before it is posted: the block
 * writes it last, so zero means "not written yet".
 *
 * Return: 1 if the page pool ran dry (the caller counts it in alloc_fail),
 * else 0.
 */
u32 octep_oq_refill(struct octep_oq *oq)
{
	struct octep_qvec *qv = oq->qv;
	struct octep_dev *oct = qv->oct;
	struct device *dd = oct->sdp->dma_dev;
	u32 mask = oq->size - 1;
	u32 n = 0, failed = 0;

	while (oq->posted + n < oq->size) {
		struct octep_sdp_resp_hdr *hdr;
		struct page *page;
		dma_addr_t dma;
		u32 i = oq->fill;

		page = octep_fail_refill() ? NULL :
		       page_pool_dev_alloc_pages(oq->pp);
		if (unlikely(!page)) {
			failed = 1;
			set_bit(OCTEP_OQ_REFILL, &oq->flags);
			break;
		}
		dma = page_pool_get_dma_addr(page) + oq->buf_off;
		hdr = page_address(page) + oq->buf_off;
		WRITE_ONCE(hdr->length, 0);
		dma_sync_single_for_device(dd, dma, oq->buf_size, oq->dma_dir);
		oq->pages[i] = page;
		oq->desc[i].buffer_ptr = cpu_to_le64(dma);
		oq->desc[i].info = 0;
		oq->fill = (i + 1) & mask;
		n++;
	}
	if (oq->posted + n == oq->size)
		clear_bit(OCTEP_OQ_REFILL, &oq->flags);
	if (!n)
		return failed;
	oq->posted += n;
	/* The descriptors and cleared headers before the credits. */
	wmb();
	octep_wr64(oct, OCTEP_SDP_R_OUT_SLIST_DBELL(qv->idx), n);
	return failed;
}

static void octep_rx_offloads(struct octep_oq *oq, struct sk_buff *skb,
			      u64 ext, struct octep_pass_info *pi)
{
	struct octep_dev *oct = oq->qv->oct;
	struct net_device *netdev = oct->netdev;
	u32 hash = FIELD_GET(OCTEP_SDP_RX_HASH, ext);
	u32 csum = FIELD_GET(OCTEP_SDP_RX_CSUM, ext);

	if (unlikely(csum > OCTEP_SDP_RX_CSUM_BAD)) {
		/* Not a result the block may give: as "not checked". */
		atomic64_inc(&oct->rx_bad_ext);
		csum = OCTEP_SDP_RX_CSUM_NONE;
	}
	if (netdev->features & NETIF_F_RXCSUM) {
		switch (csum) {
		case OCTEP_SDP_RX_CSUM_OK:
			skb->ip_summed = CHECKSUM_UNNECESSARY;
			break;
		case OCTEP_SDP_RX_CSUM_BAD:
			/* Left to the stack to verify and count. */
			pi->csum_bad++;
			break;
		}
	}
	if ((netdev->features & NETIF_F_RXHASH) && hash)
		skb_set_hash(skb, hash, PKT_HASH_TYPE_L3);
}

/*
 * The page becomes the skb's head: no copy, the whole page charged. The
 * frame is @len bytes at @off in the page.
 */
static struct sk_buff *octep_rx_build(struct napi_struct *napi,
				      struct page *page, u32 off, u32 len)
{
	struct sk_buff *skb;

	skb = napi ? napi_build_skb(page_address(page), PAGE_SIZE) :
		     build_skb(page_address(page), PAGE_SIZE);
	if (unlikely(!skb))
		return NULL;
	skb_mark_for_recycle(skb);
	skb_reserve(skb, off);
	__skb_put(skb, len);
	return skb;
}

/*
 * A short frame is copied into a small skb and its page goes back to the
 * pool at once: a page-sized head would charge a socket a page for a few
 * bytes, and a receiver's default buffer would hold few such datagrams.
 */
static struct sk_buff *octep_rx_copy(struct octep_oq *oq,
				     struct napi_struct *napi,
				     struct page *page, u32 off, u32 len,
				     struct octep_pass_info *pi)
{
	void *data = page_address(page) + off;
	struct sk_buff *skb;

	skb = napi ? napi_alloc_skb(napi, len) :
		     netdev_alloc_skb_ip_align(oq->qv->oct->netdev, len);
	if (unlikely(!skb))
		return NULL;
	skb_put_data(skb, data, len);
	page_pool_put_full_page(oq->pp, page, false);
	pi->copybreak++;
	return skb;
}

/*
 * Run the ring's XDP program on the frame of @len bytes at @off in @page.
 * Returns XDP_PASS with @off and @len updated to what the program left,
 * for the skb; any other verdict has taken the page (sent, redirected or
 * given back to the pool) and counted it.
 */
static u32 octep_rx_xdp(struct octep_oq *oq, struct bpf_prog *prog,
			struct page *page, u32 *off, u32 *len,
			struct octep_pass_info *pi)
{
	struct net_device *netdev = oq->qv->oct->netdev;
	struct xdp_frame *xdpf;
	struct xdp_buff xdp;
	u32 act;

	xdp_init_buff(&xdp, PAGE_SIZE, &oq->xdp_rxq);
	xdp_prepare_buff(&xdp, page_address(page), *off, *len, false);
	act = bpf_prog_run_xdp(prog, &xdp);
	switch (act) {
	case XDP_PASS:
		*off = xdp.data - xdp.data_hard_start;
		*len = xdp.data_end - xdp.data;
		return XDP_PASS;
	case XDP_TX:
		xdpf = xdp_convert_buff_to_frame(&xdp);
		if (likely(xdpf) && octep_xdp_tx(oq->qv, xdpf)) {
			pi->xdp_tx++;
			return XDP_TX;
		}
		pi->xdp_tx_err++;
		trace_xdp_exception(netdev, prog, act);
		break;
	case XDP_REDIRECT:
		if (likely(!xdp_do_redirect(netdev, &xdp, prog))) {
			pi->xdp_redirect++;
			return XDP_REDIRECT;
		}
		pi->xdp_redirect_err++;
		trace_xdp_exception(netdev, prog, act);
		break;
	case XDP_DROP:
		pi->xdp_drop++;
		break;
	default:
		bpf_warn_invalid_xdp_action(netdev, prog, act);
		fallthrough;
	case XDP_ABORTED:
		trace_xdp_exception(netdev, prog, act);
		pi->xdp_aborted++;
		break;
	}
	page_pool_put_full_page(oq->pp, page, false);
	return XDP_DROP;
}

/*
 * One pass: read the count once, take up to @left of the packets it covers
 * in ring order, hand them up (GRO through @napi, or netif_receive_skb()
 * without one), write back how many buffers were taken and post new ones.
 * Returns the buffers taken. The caller holds the ring.
 */
static u32 octep_oq_pass(struct octep_oq *oq, u32 left,
			 struct napi_struct *napi, struct octep_pass_info *pi)
{
	struct octep_qvec *qv = oq->qv;
	struct octep_dev *oct = qv->oct;
	struct device *dd = oct->sdp->dma_dev;
	/* Set under RTNL; a pass that sees the old value is harmless. */
	u32 copybreak = READ_ONCE(oct->rx_copybreak);
	/*
	 * A ring laid out for XDP only while a program is attached; a swap
	 * of one program for another is seen from the next pass on. The
	 * program is freed after an RCU grace period, and the pass runs
	 * with BH off, an RCU read side.
	 */
	struct bpf_prog *prog = oq->xdp ? READ_ONCE(oct->xdp_prog) : NULL;
	u32 mask = oq->size - 1;
	u32 taken = 0, n, tx0 = pi->xdp_tx, redir0 = pi->xdp_redirect;
	u64 cnt;

	cnt = octep_cnt_rd(oct, OCTEP_SDP_R_OUT_CNTS(qv->idx));
	if (!pi->read) {
		pi->read = true;
		pi->count = cnt;
	}
	if (!cnt) {
		trace_octep_pass(qv->idx, 0, 0, left, false);
		return 0;
	}
	if (unlikely(cnt > oq->size)) {
		octep_ring_bad(qv, &oct->rx_bad_count, "OUT_CNTS", cnt);
		return 0;
	}
	if (cnt >= oq->posted)
		pi->filled = true;
	n = min_t(u64, cnt, min(left, oq->posted));

	while (taken < n) {
		struct octep_sdp_resp_hdr *hdr;
		struct sk_buff *skb;
		struct page *page;
		dma_addr_t dma;
		u64 len, ext;
		u32 off, flen;

		/* A quiesce waits for this poll: stop at the next packet. */
		if (napi && unlikely(READ_ONCE(oct->quiesced)))
			break;
		page = oq->pages[oq->head];
		dma = page_pool_get_dma_addr(page) + oq->buf_off;
		hdr = page_address(page) + oq->buf_off;
		dma_sync_single_for_cpu(dd, dma, OCTEP_SDP_RESP_HDR_LEN,
					oq->dma_dir);
		len = be64_to_cpu(READ_ONCE(hdr->length));
		if (!len) {
			/* Counted, not yet written (rule 3: ask the tick). */
			pi->unseen = true;
			pi->oq_unseen++;
			break;
		}
		/*
		 * The block writes the length word last: read the rest of the
		 * buffer only after it (pairs with the block's write order).
		 */
		dma_rmb();
		ext = le64_to_cpu(READ_ONCE(hdr->ext));

		oq->pages[oq->head] = NULL;
		oq->head = (oq->head + 1) & mask;
		oq->posted--;
		taken++;

		if (unlikely(len < ETH_HLEN ||
			     len > oq->buf_size - OCTEP_SDP_RESP_HDR_LEN)) {
			/* A length no buffer can hold: drop it, stay in step. */
			pi->rx_resync++;
			page_pool_put_full_page(oq->pp, page, false);
			continue;
		}
		dma_sync_single_for_cpu(dd, dma + OCTEP_SDP_RESP_HDR_LEN, len,
					oq->dma_dir);
		off = oq->buf_off + OCTEP_SDP_RESP_HDR_LEN;
		flen = len;
		/*
		 * The program sees the frame as the block wrote it: a packet
		 * the block decrypted is plain. @ext was read above, so what
		 * the program writes in the headroom changes nothing of it.
		 */
		if (prog && octep_rx_xdp(oq, prog, page, &off, &flen,
					 pi) != XDP_PASS) {
			/*
			 * Received all the same: XDP is the stack's first
			 * layer, and qstats' rx-packets counts what it took.
			 */
			pi->packets++;
			pi->bytes += len;
			continue;
		}
		if (flen <= copybreak)
			skb = octep_rx_copy(oq, napi, page, off, flen, pi);
		else
			skb = octep_rx_build(napi, page, off, flen);
		if (unlikely(!skb)) {
			pi->drops++;
			page_pool_put_full_page(oq->pp, page, false);
			continue;
		}
		octep_rx_offloads(oq, skb, ext, pi);
		skb_record_rx_queue(skb, qv->idx);
		skb->protocol = eth_type_trans(skb, oct->netdev);
		if (octep_ipsec_rx_wanted(oq, ext) &&
		    octep_ipsec_rx_xfrm(oq, skb, ext))
			continue;
		pi->packets++;
		pi->bytes += flen;
		if (napi)
			napi_gro_receive(napi, skb);
		else
			netif_receive_skb(skb);
	}

	/* One doorbell and one flush for what the pass sent. */
	if (pi->xdp_tx != tx0)
		octep_xdp_tx_flush(qv);
	if (pi->xdp_redirect != redir0)
		xdp_do_flush();
	if (taken) {
		/*
		 * Rule 1: write back what this pass took before anyone reads
		 * the count again, so that it can fall below the level.
		 */
		octep_wr64(oct, OCTEP_SDP_R_OUT_CNTS(qv->idx), taken);
		pi->alloc_fail += octep_oq_refill(oq);
	}
	trace_octep_pass(qv->idx, cnt, taken, left, pi->unseen);
	return taken;
}

/*
 * service=pass: the old servicing. A per-ring flag taken for each pass; a
 * held flag reads as a pass that took nothing. Kept only so the tests can
 * show the report's failure; never the default.
 */
static u32 octep_oq_pass_flagged(struct octep_oq *oq, u32 left,
				 struct napi_struct *napi,
				 struct octep_pass_info *pi)
{
	u32 taken;

	if (test_and_set_bit_lock(OCTEP_OQ_PASS_HELD, &oq->flags)) {
		atomic64_inc(&oq->oq_declined);
		trace_octep_note(oq->qv->idx, OCTEP_NOTE_DECLINED);
		return 0;
	}
	taken = octep_oq_pass(oq, left, napi, pi);
	clear_bit_unlock(OCTEP_OQ_PASS_HELD, &oq->flags);
	return taken;
}

/*
 * The visit: go round pass(ring, left) until a pass takes nothing, the
 * budget is used, or a pass stopped at a buffer not yet written. The caller
 * (the poll) holds SCHED for all of it. Returns the packets' buffers taken.
 */
static int octep_oq_visit(struct octep_qvec *qv, int budget,
			  struct octep_visit_rec *vr)
{
	struct octep_oq *oq = &qv->oq;
	struct octep_pass_info pi = {};
	/* Switched only while the datapath is down: fixed for any poll. */
	bool pass_mode = READ_ONCE(qv->oct->service) == OCTEP_SERVICE_PASS;
	bool rescued, stall = false, tick = false;
	u32 done = 0, taken, passes = 0;

	/* Set by the watchdog before its napi_schedule() of this ring. */
	rescued = test_and_clear_bit(OCTEP_OQ_RESCUED, &oq->flags);
	/*
	 * A ring a refill left short is refilled here, whether or not
	 * anything arrived: the passes refill only after taking packets, and
	 * a ring left with no buffer gets none (the tick it asked for only
	 * brings this visit).
	 */
	if (test_bit(OCTEP_OQ_REFILL, &oq->flags)) {
		/*
		 * service=pass: the watchdog's pass refills holding
		 * OCTEP_OQ_PASS_HELD, not SCHED; one page pool user at a
		 * time. Held, the ring is left to that pass, which refills
		 * after what it takes (the bit stays set for the next visit).
		 */
		if (!pass_mode) {
			pi.alloc_fail += octep_oq_refill(oq);
		} else if (!test_and_set_bit_lock(OCTEP_OQ_PASS_HELD,
						  &oq->flags)) {
			pi.alloc_fail += octep_oq_refill(oq);
			clear_bit_unlock(OCTEP_OQ_PASS_HELD, &oq->flags);
		}
	}

	do {
		pi.filled = false;
		if (pass_mode)
			taken = octep_oq_pass_flagged(oq, budget - done,
						      &qv->napi, &pi);
		else
			taken = octep_oq_pass(oq, budget - done, &qv->napi,
					      &pi);
		if (!passes && rescued &&
		    (taken >= OCTEP_STALL_PKTS || pi.filled))
			stall = true;
		passes++;
		done += taken;
	} while (taken && done < budget && !pi.unseen &&
		 !READ_ONCE(qv->oct->quiesced));

	/* The poll owns the ring: the only writer of its stats. */
	u64_stats_update_begin(&oq->stats.syncp);
	octep_oq_count(oq, &pi);
	oq->stats.rxwd_stalls += stall;
	oq->stats.visits++;
	oq->stats.passes += passes;
	if (passes > oq->stats.passes_max)
		oq->stats.passes_max = passes;
	if (done >= budget)
		oq->stats.oq_bound++;
	u64_stats_update_end(&oq->stats.syncp);

	/* Rule 3: work left behind that no crossing will announce. */
	if (done < budget &&
	    (pi.unseen || test_bit(OCTEP_OQ_REFILL, &oq->flags))) {
		u64_stats_update_begin(&oq->stats.syncp);
		oq->stats.tick_requests++;
		u64_stats_update_end(&oq->stats.syncp);
		trace_octep_tick_request(qv->idx, pi.unseen,
					 test_bit(OCTEP_OQ_REFILL, &oq->flags));
		octep_wd_request_tick(oq);
		tick = true;
	}
	/*
	 * For the watchdog, which passes over a ring visited since its last
	 * look (octep_wd_look()). Set after the last pass, so a ring this
	 * visit leaves is looked at by the second tick from now at the
	 * latest. Tested first: most visits find it set already.
	 */
	if (!test_bit(OCTEP_OQ_VISITED, &oq->flags))
		set_bit(OCTEP_OQ_VISITED, &oq->flags);
	trace_octep_visit(qv->idx, oq->stats.visits, passes, done, budget,
			  rescued, stall, tick);
	vr->count = pi.count;
	vr->taken = done;
	vr->passes = min_t(u32, passes, U16_MAX);
	vr->tick = tick;
	return done;
}

/*
 * The flight recorder's writer: the poll, owner of the ring (it holds
 * SCHED), so one writer at a time; NAPI's SCHED handover orders one poll's
 * writes before the next one's. The seqcount lets the dump (any context,
 * no lock) copy the log whole or retry.
 */
static struct octep_visit_rec *octep_vlog_put(struct octep_oq *oq,
					      const struct octep_visit_rec *vr)
{
	struct octep_visit_rec *slot = &oq->vlog[oq->vlog_head % OCTEP_VLOG_LEN];

	write_seqcount_begin(&oq->vlog_seq);
	*slot = *vr;
	slot->t_ns = ktime_get_ns();
	oq->vlog_head++;
	write_seqcount_end(&oq->vlog_seq);
	return slot;
}

/*
 * A completion that found a note amends its own record, after SCHED was
 * given back and taken again: another poll may be recording by now, but
 * into the next slot, so this one byte is still ours. It is outside the
 * seqcount; the reader takes it with READ_ONCE() (octep_oq_vlog_read()).
 */
static void octep_vlog_end(struct octep_visit_rec *slot,
			   enum octep_visit_end end)
{
	WRITE_ONCE(slot->end, end);
}

/**
 * octep_oq_vlog_read() - copy a ring's flight recorder, newest first
 * @oq: output ring
 * @recs: OCTEP_VLOG_LEN entries
 * @n: entries copied
 *
 * Lockless: retries while the poll writes (the seqcount pairs with
 * octep_vlog_put()'s), and gives up with nothing after a few tries on a
 * ring polled so often that no copy completes between two polls.
 */
void octep_oq_vlog_read(struct octep_oq *oq, struct octep_visit_rec *recs,
			unsigned int *n)
{
	unsigned int seq, i, k, tries = 8;
	u32 head;

	do {
		seq = read_seqcount_begin(&oq->vlog_seq);
		head = oq->vlog_head;
		k = min_t(u32, head, OCTEP_VLOG_LEN);
		for (i = 0; i < k; i++) {
			const struct octep_visit_rec *slot =
				&oq->vlog[(head - 1 - i) % OCTEP_VLOG_LEN];

			recs[i] = *slot;
			/* Pairs with octep_vlog_end(). */
			recs[i].end = READ_ONCE(slot->end);
		}
	} while (read_seqcount_retry(&oq->vlog_seq, seq) && --tries);
	*n = tries ? k : 0;
}

/*
 * rearm=reread, after a completing poll re-enabled the interrupt. The poll
 * read both counts zero last (a pass that took nothing, a reap that read
 * zero) while the interrupt was off; anything counted since then crossed
 * the level (or started the block's timer) with the interrupt off, and a
 * block that drops a raise while disabled (octep_sim masked=drop) will
 * never send it. So read the counts again, after the enable: a nonzero one
 * is work nobody may announce, and the ring is scheduled again.
 *
 * Ordering: the enable is a posted MMIO write, the reads are MMIO reads to
 * the same device; a read does not pass an earlier posted write (PCIe
 * ordering; writeq()/readq() keep program order to one device), so the
 * reads are answered after the block has seen the enable. The block pairs
 * with this by counting a packet and then looking at the enable to decide
 * whether to send: a packet counted before the enable arrived is in what
 * we read, one counted after it raises the interrupt. Either way someone
 * looks. (In octep_sim both the enable and the count run under the ring's
 * lock, which gives the same order.)
 *
 * An output count the last visit left behind on purpose (a buffer not yet
 * written, a refill that failed: rule 3) is the watchdog's next tick's:
 * rescheduling for it would spin until the block writes the buffer.
 *
 * Costs two register reads per completed visit; under a latching block a
 * raise may then come twice (the latched interrupt and this), the second
 * turned away with a note (oq_declined) and one extra poll (oq_handed).
 */
static void octep_rearm_reread(struct octep_qvec *qv)
{
	struct octep_dev *oct = qv->oct;
	struct octep_oq *oq = &qv->oq;
	u64 out, in;

	out = octep_cnt_rd(oct, OCTEP_SDP_R_OUT_CNTS(qv->idx));
	in = octep_cnt_rd(oct, OCTEP_SDP_R_IN_CNTS(qv->idx));
	if (!in && (!out || test_bit(OCTEP_OQ_TICK_REQ, &oq->flags)))
		return;
	octep_visit_ask(qv, OCTEP_ASK_REREAD);
	if (!napi_schedule_prep(&qv->napi)) {
		/* The interrupt (or the watchdog) got there first. */
		atomic64_inc(&oq->oq_declined);
		trace_octep_note(qv->idx, OCTEP_NOTE_DECLINED);
		return;
	}
	/* SCHED is ours again: off, as the interrupt handler does. */
	octep_regs_write_levels(qv, false);
	atomic64_inc(&oq->rearm_resched);
	trace_octep_note(qv->idx, OCTEP_NOTE_REARM);
	__napi_schedule(&qv->napi);
}

/*
 * The quiesce's gate (octep_quiesce()). The poll counts itself inside and
 * then reads the gate; the quiesce closes the gate and then reads the
 * count. Each side writes, then reads what the other wrote, with a full
 * barrier between: either this poll sees the gate closed or the quiesce
 * sees the poll and waits for it to leave.
 */
static bool octep_poll_enter(struct octep_qvec *qv)
{
	atomic_inc(&qv->inside);
	/* Pairs with smp_mb() in octep_quiesce(). */
	smp_mb__after_atomic();
	/*
	 * Pairs with the resume's smp_store_release(): a poll that finds the
	 * gate open sees what was written while it was closed (the levels).
	 */
	return !smp_load_acquire(&qv->oct->quiesced);
}

static void octep_poll_leave(struct octep_qvec *qv)
{
	/*
	 * What the poll did to the ring before the count drops; pairs with
	 * atomic_read_acquire() in octep_quiesce(). Its register writes are
	 * ordered with the quiesce's only as far as CPU barriers order MMIO
	 * (x86's do; RISC-V's fence here does not): where they are not, a
	 * late enable costs one interrupt, whose handler turns the levels
	 * off again.
	 */
	smp_mb__before_atomic();
	atomic_dec(&qv->inside);
	/*
	 * A quiesce may be spinning on the count. A spin-wait hint (PAUSE):
	 * a hypervisor that runs vCPUs in turn switches to the next one
	 * here, so the quiescing vCPU sees the count drop now rather than at
	 * this vCPU's next exit. On bare metal it costs a few cycles, and
	 * only while the gate is closed.
	 */
	if (unlikely(READ_ONCE(qv->oct->quiesced)))
		cpu_relax();
}

/*
 * The poll proper, between octep_poll_enter() and octep_poll_leave(): reap
 * transmit, visit receive, complete and re-enable the interrupt.
 */
static int octep_poll_ring(struct octep_qvec *qv, int budget)
{
	struct napi_struct *napi = &qv->napi;
	struct octep_oq *oq = &qv->oq;
	struct octep_visit_rec vr = {}, *rec;
	u32 tail0 = qv->iq.tail;
	unsigned long owned;
	bool tx_done;
	int done;

	if (unlikely(test_bit(OCTEP_OQ_BAD, &oq->flags))) {
		/* Left to the reset (octep_ring_bad()); the interrupt off. */
		if (budget)	/* netpoll (0) must not complete */
			napi_complete_done(napi, 0);
		return 0;
	}
	tx_done = octep_iq_reap(&qv->iq, budget);
	if (unlikely(!budget))
		return 0;	/* netpoll: transmit completions only */

	/* Who asked since the last poll; pairs with octep_visit_ask(). */
	vr.asks = xchg(&qv->asks, 0);
	done = octep_oq_visit(qv, budget, &vr);
	if (vr.asks & BIT(OCTEP_ASK_IRQ))
		octep_storm_count(qv, !done && qv->iq.tail == tail0);
	if (done >= budget || !tx_done) {
		vr.end = done >= budget ? OCTEP_END_BUDGET : OCTEP_END_TX;
		octep_vlog_put(oq, &vr);
		return budget;
	}
	if (unlikely(READ_ONCE(qv->oct->quiesced))) {
		/*
		 * A quiesce came in during the visit, which stopped short:
		 * the resume owes the ring a visit. The interrupt stays off.
		 */
		vr.end = OCTEP_END_GATED;
		octep_vlog_put(oq, &vr);
		napi_complete_done(napi, done);
		return done;
	}
	/*
	 * A busy poller or netpoll calling this poll owns the ring: then
	 * napi_complete_done() returns false at once, and the owner polls
	 * again before it lets go. The bits are the caller's, stable here.
	 */
	owned = READ_ONCE(napi->state) &
		(NAPIF_STATE_NPSVC | NAPIF_STATE_IN_BUSY_POLL);
	/*
	 * Recorded before SCHED is given back: after that another poll may be
	 * recording. One that finds a note amends it (octep_vlog_end()).
	 */
	vr.end = owned ? OCTEP_END_BUSY : OCTEP_END_COMPLETED;
	rec = octep_vlog_put(oq, &vr);

	/*
	 * From here to the enable (and, with rearm=reread, its re-read) the
	 * ring has nobody inside (SCHED is given back first) but is not
	 * left: this poll still looks. Tell the watchdog (octep_wd_look()).
	 */
	set_bit(OCTEP_OQ_COMPLETING, &oq->flags);
	if (napi_complete_done(napi, done)) {
		/*
		 * SCHED given back with no note: only now may the ring's
		 * interrupt fire again. A raise while it was off may have
		 * been latched by the block (and fires here) or dropped:
		 * octep_rearm_reread() covers the second.
		 */
		octep_regs_write_levels(qv, true);
		WRITE_ONCE(qv->enabled_ns, ktime_get_ns());
		if (unlikely(test_bit(OCTEP_OQ_STORM, &oq->flags)))
			octep_storm_poll(qv);
		if (octep_resend) {
			/* As octeon_ep: RESEND after the count, counted. */
			octep_wr64(qv->oct, OCTEP_SDP_R_OUT_CNTS(qv->idx),
				   OCTEP_SDP_CNTS_RESEND);
			atomic64_inc(&oq->resend);
		}
		/*
		 * service=pass is the old driver whole: no re-read there.
		 * A rearm change applies from the next completing poll: the
		 * re-read keeps nothing between polls, it only asks for a
		 * visit as any servicer does.
		 */
		if (READ_ONCE(qv->oct->rearm) == OCTEP_REARM_REREAD &&
		    READ_ONCE(qv->oct->service) != OCTEP_SERVICE_PASS)
			octep_rearm_reread(qv);
		/* enabled_ns before the bit; pairs with test_bit_acquire(). */
		clear_bit_unlock(OCTEP_OQ_COMPLETING, &oq->flags);
	} else {
		clear_bit_unlock(OCTEP_OQ_COMPLETING, &oq->flags);
		/*
		 * The interrupt stays off; NAPI comes back. A note (rule 2)
		 * keeps SCHED and repolls; a deferral (napi_defer_hard_irqs)
		 * gives SCHED back and arms NAPI's timer. SCHED may be given
		 * back, so another servicer can be in this ring already: the
		 * counts are atomics, not the owner's u64_stats.
		 */
		if (owned) {
			atomic64_inc(&oq->oq_busy);
			trace_octep_note(qv->idx, OCTEP_NOTE_BUSY);
		} else if (!test_bit(NAPI_STATE_SCHED, &napi->state)) {
			atomic64_inc(&oq->oq_deferred);
			trace_octep_note(qv->idx, OCTEP_NOTE_DEFERRED);
		} else {
			atomic64_inc(&oq->oq_handed);
			trace_octep_note(qv->idx, OCTEP_NOTE_HANDED);
			octep_vlog_end(rec, OCTEP_END_HANDED);
		}
	}
	return done;
}

/**
 * octep_napi_poll() - NAPI poll of a ring pair: reap transmit, visit receive
 * @napi: the ring pair's NAPI context
 * @budget: packets this poll may take from the output ring
 *
 * A poll that finds the quiesce's gate closed leaves the rings and the
 * interrupt alone and gives SCHED back: the resume schedules every ring.
 *
 * Return: packets' buffers taken, or @budget to stay scheduled.
 */
int octep_napi_poll(struct napi_struct *napi, int budget)
{
	struct octep_qvec *qv = container_of(napi, struct octep_qvec, napi);
	int done = 0;

	if (likely(octep_poll_enter(qv)))
		done = octep_poll_ring(qv, budget);
	else if (budget)
		napi_complete_done(napi, 0);
	octep_poll_leave(qv);
	return done;
}

/**
 * octep_pass_watchdog_ring() - service=pass: the old watchdog's pass
 * @qv: ring pair
 *
 * Runs in the softirq-mode watchdog timer. Takes the ring's flag and makes
 * ONE pass itself, handing packets up with netif_receive_skb(). It neither
 * schedules NAPI nor looks again: this is the servicing the report found
 * leaving rings, kept only for the tests to catch.
 *
 * Return: true if the ring's count was nonzero.
 */
bool octep_pass_watchdog_ring(struct octep_qvec *qv)
{
	struct octep_oq *oq = &qv->oq;
	struct octep_pass_info pi = {};
	bool asked;
	u64 cnt;
	u32 taken;

	cnt = octep_cnt_rd(qv->oct, OCTEP_SDP_R_OUT_CNTS(qv->idx));
	asked = test_and_clear_bit(OCTEP_OQ_TICK_REQ, &oq->flags);
	if (!cnt)
		return false;
	if (test_and_set_bit_lock(OCTEP_OQ_PASS_HELD, &oq->flags)) {
		atomic64_inc(&oq->oq_declined);
		trace_octep_wd_find(qv->idx, cnt, OCTEP_WD_HELD);
		return true;
	}
	if (!asked)
		atomic64_inc(&oq->rxwd_rescues);
	trace_octep_wd_find(qv->idx, cnt, asked ? OCTEP_WD_ASKED : OCTEP_WD_RESCUE);
	taken = octep_oq_pass(oq, oq->size, NULL, &pi);
	u64_stats_update_begin(&oq->stats.syncp);
	octep_oq_count(oq, &pi);
	if (!asked && (taken >= OCTEP_STALL_PKTS || pi.filled))
		oq->stats.rxwd_stalls++;
	oq->stats.passes++;
	u64_stats_update_end(&oq->stats.syncp);
	clear_bit_unlock(OCTEP_OQ_PASS_HELD, &oq->flags);
	return true;
}

/**
 * octep_oq_mem_alloc() - allocate an output ring's memory
 * @qv: the ring pair it is for
 * @m: where to put it; what is there is NULL
 * @size: descriptors
 *
 * Nothing is posted and the ring's state is untouched: the ring pair may
 * still be carrying traffic on its old ring (octep_rings_prepare()). The
 * page pool is created when the ring is installed, once the pair's NAPI
 * has been added: the pool takes the NAPI's id when it is created.
 *
 * Fails on demand under fault injection (octep_fail_ring_alloc()).
 *
 * Return: 0 or -ENOMEM; on failure @m holds what was allocated, for
 * octep_oq_mem_free().
 */
int octep_oq_mem_alloc(struct octep_qvec *qv, struct octep_ring_mem *m,
		       u32 size)
{
	struct device *dd = qv->oct->sdp->dma_dev;

	if (octep_fail_ring_alloc())
		return -ENOMEM;
	m->oq_size = size;
	m->desc = dma_alloc_coherent(dd, size * sizeof(*m->desc), &m->desc_dma,
				     GFP_KERNEL);
	if (!m->desc)
		return -ENOMEM;
	m->pages = kcalloc(size, sizeof(*m->pages), GFP_KERNEL);
	if (!m->pages)
		return -ENOMEM;
	return 0;
}

/**
 * octep_oq_mem_free() - free output ring memory no ring uses
 * @oct: device
 * @m: what octep_oq_mem_alloc() left there, or what octep_oq_free() took
 *	back; no page is posted in it
 */
void octep_oq_mem_free(struct octep_dev *oct, struct octep_ring_mem *m)
{
	struct device *dd = oct->sdp->dma_dev;

	kfree(m->pages);
	m->pages = NULL;
	if (m->desc)
		dma_free_coherent(dd, m->oq_size * sizeof(*m->desc), m->desc,
				  m->desc_dma);
	m->desc = NULL;
}

/**
 * octep_oq_install() - make prepared memory a ring pair's output ring
 * @qv: ring pair; its old output ring freed (octep_oq_free()), its NAPI
 *	added and disabled
 * @m: from octep_oq_mem_alloc(); emptied on success, the ring owns it now
 *
 * Creates the ring's page pool, bound to the NAPI that is now the pair's,
 * and registers it as the ring's XDP memory model. The buffers are laid
 * out for the XDP program attached now, if any.
 *
 * Return: 0, or the page pool's error; @m and the ring are then untouched.
 */
int octep_oq_install(struct octep_qvec *qv, struct octep_ring_mem *m)
{
	struct octep_dev *oct = qv->oct;
	struct octep_oq *oq = &qv->oq;
	struct page_pool_params pp = {
		.order = 0,
		.flags = PP_FLAG_DMA_MAP,
		.pool_size = m->oq_size,
		.nid = NUMA_NO_NODE,
		.dev = oct->sdp->dma_dev,
		.dma_dir = oct->xdp_prog ? DMA_BIDIRECTIONAL : DMA_FROM_DEVICE,
		.netdev = oct->netdev,
	};
	struct page_pool *pool;
	int err;

	/*
	 * Pages freed in the NAPI's own poll go straight back to the pool's
	 * lockless cache, which its allocations (the refill) also use: safe
	 * when only the NAPI refills. Not under service=pass, whose watchdog
	 * makes passes, and refills, from its own timer on any CPU while the
	 * NAPI may be freeing pages on another. The servicing changes only
	 * while the datapath is down, when no page pool exists.
	 */
	if (READ_ONCE(oct->service) == OCTEP_SERVICE_VISIT)
		pp.napi = &qv->napi;
	pool = page_pool_create(&pp);
	if (IS_ERR(pool))
		return PTR_ERR(pool);
	err = xdp_rxq_info_reg(&oq->xdp_rxq, oct->netdev, qv->idx,
			       qv->napi.napi_id);
	if (!err) {
		err = xdp_rxq_info_reg_mem_model(&oq->xdp_rxq,
						 MEM_TYPE_PAGE_POOL, pool);
		if (err)
			xdp_rxq_info_unreg(&oq->xdp_rxq);
	}
	if (err) {
		page_pool_destroy(pool);
		return err;
	}
	/*
	 * Laid out for XDP when a program is attached now: the program may
	 * change later only to another one (octep_reconfigure_xdp()).
	 */
	oq->xdp = !!oct->xdp_prog;
	oq->buf_off = oq->xdp ? OCTEP_RX_XDP_OFF : OCTEP_RX_HEADROOM;
	oq->buf_size = OCTEP_RX_BUF_SIZE_AT(oq->buf_off);
	oq->dma_dir = pp.dma_dir;
	oq->qv = qv;
	oq->size = m->oq_size;
	oq->desc = m->desc;
	oq->desc_dma = m->desc_dma;
	oq->pages = m->pages;
	oq->pp = pool;
	oq->head = 0;
	oq->fill = 0;
	oq->posted = 0;
	oq->flags = 0;
	m->desc = NULL;
	m->pages = NULL;
	return 0;
}

/**
 * octep_oq_free() - free an output ring the block no longer uses
 * @qv: ring pair, its ring disabled (octep_regs_ring_disable())
 *
 * Packets the block had counted and nobody took are counted as drops.
 */
void octep_oq_free(struct octep_qvec *qv)
{
	struct octep_oq *oq = &qv->oq;
	struct octep_ring_mem m = {};
	u64 raw, cnt;
	u32 i;

	if (!oq->desc)
		return;
	/*
	 * All ones: the device is gone (a surprise removal, an AER error),
	 * nothing to count. A block counts no more than the buffers it had.
	 */
	raw = octep_rd64(qv->oct, OCTEP_SDP_R_OUT_CNTS(qv->idx));
	cnt = raw == U64_MAX ? 0 : min_t(u64, raw & OCTEP_SDP_CNTS_COUNT,
					 oq->posted);
	if (cnt) {
		octep_wr64(qv->oct, OCTEP_SDP_R_OUT_CNTS(qv->idx), cnt);
		u64_stats_update_begin(&oq->stats.syncp);
		oq->stats.drops += cnt;
		u64_stats_update_end(&oq->stats.syncp);
	}
	for (i = 0; i < oq->size; i++)
		if (oq->pages[i])
			page_pool_put_full_page(oq->pp, oq->pages[i], false);
	/*
	 * Created by octep_oq_install(), so the ring's to destroy; the XDP
	 * memory model held it too, and lets go of it here.
	 */
	xdp_rxq_info_unreg(&oq->xdp_rxq);
	page_pool_destroy(oq->pp);
	m.desc = oq->desc;
	m.desc_dma = oq->desc_dma;
	m.pages = oq->pages;
	m.oq_size = oq->size;
	octep_oq_mem_free(qv->oct, &m);
	oq->desc = NULL;
	oq->pages = NULL;
	oq->pp = NULL;
	oq->posted = 0;
}
