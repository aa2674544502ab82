// SPDX-License-Identifier: GPL-2.0
/*
 * octep_ipsec: transmit through the input rings.
 *
 * One 64-byte instruction per frame, rung with IN_INSTR_DBELL; the block
 * counts instructions done in IN_CNTS, which the ring pair's NAPI poll
 * reaps. The input ring's count follows the same crossing rule as the
 * output ring's, so the reaper also goes round until a read of the count
 * gives zero before the poll may complete.
 *
 * A linear frame is the instruction's DPTR; a frame in pieces (head and
 * page fragments) is given by a gather list, one per instruction slot in a
 * coherent array beside the ring, so nothing is copied on the way out. A
 * TCP frame larger than the MTU goes as one TSO instruction: the block cuts
 * it into segments and sums each (octep_sdp.h has the contract); with ESP
 * GSO, a crypto-offloaded one too, and the block encrypts each segment.
 */
#include <linux/bitfield.h>
#include <linux/dma-mapping.h>
#include <linux/etherdevice.h>
#include <net/netdev_queues.h>
#include <net/page_pool/helpers.h>
#include <net/xdp.h>
#include <net/xfrm.h>

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
	u64_stats_update_begin(&iq->stats.syncp);
	iq->stats.doorbells++;
	u64_stats_update_end(&iq->stats.syncp);
}

/* Bytes of gather lists for a ring of @size instructions. */
static size_t octep_sg_bytes(u32 size)
{
	return (size_t)size * OCTEP_TX_SG_MAX * sizeof(struct octep_sdp_sg);
}

static struct octep_sdp_sg *octep_iq_sg(struct octep_iq *iq, u32 slot)
{
	return &iq->sg[(size_t)slot * OCTEP_TX_SG_MAX];
}

/* Unmap what slot @slot's instruction carried (its first @n entries). */
static void octep_tx_unmap(struct octep_iq *iq, u32 slot, unsigned int n)
{
	struct device *dd = iq->qv->oct->sdp->dma_dev;
	struct octep_tx_buf *buf = &iq->bufs[slot];
	struct octep_sdp_sg *sg = octep_iq_sg(iq, slot);
	unsigned int k;

	if (!buf->nsg) {
		/* XDP_TX's page is our page pool's mapping. */
		if (!buf->pool)
			dma_unmap_single(dd, buf->dma, buf->len,
					 DMA_TO_DEVICE);
		return;
	}
	for (k = 0; k < n; k++) {
		dma_addr_t a = le64_to_cpu(sg[k].addr);
		u32 len = le64_to_cpu(sg[k].len) & OCTEP_SDP_SG_LEN;

		if (!k && buf->head)
			dma_unmap_single(dd, a, len, DMA_TO_DEVICE);
		else
			dma_unmap_page(dd, a, len, DMA_TO_DEVICE);
	}
}

/*
 * Map a frame in pieces into slot @slot's gather list.
 * Return: 0, or -ENOMEM with everything unmapped again.
 */
static int octep_tx_map_sg(struct octep_iq *iq, u32 slot, struct sk_buff *skb)
{
	struct device *dd = iq->qv->oct->sdp->dma_dev;
	struct octep_tx_buf *buf = &iq->bufs[slot];
	struct octep_sdp_sg *sg = octep_iq_sg(iq, slot);
	unsigned int k = 0, f;
	dma_addr_t a;
	u32 len;

	buf->head = false;
	len = skb_headlen(skb);
	if (len) {
		a = dma_map_single(dd, skb->data, len, DMA_TO_DEVICE);
		if (dma_mapping_error(dd, a))
			return -ENOMEM;
		sg[k].addr = cpu_to_le64(a);
		sg[k].len = cpu_to_le64(len);
		buf->head = true;
		k++;
	}
	for (f = 0; f < skb_shinfo(skb)->nr_frags; f++) {
		const skb_frag_t *frag = &skb_shinfo(skb)->frags[f];

		len = skb_frag_size(frag);
		if (!len)
			continue;
		a = skb_frag_dma_map(dd, frag, 0, len, DMA_TO_DEVICE);
		if (dma_mapping_error(dd, a)) {
			buf->nsg = k;
			octep_tx_unmap(iq, slot, k);
			return -ENOMEM;
		}
		sg[k].addr = cpu_to_le64(a);
		sg[k].len = cpu_to_le64(len);
		k++;
	}
	buf->nsg = k;
	return 0;
}

/* The rfc4106 IV: the one algorithm there is (OCTEP_SDP_FLOW_ALG_RFC4106). */
#define OCTEP_ESP_IV_LEN	8

/* Does one instruction hold @skb, and its MSS? */
static bool octep_tso_fits(const struct sk_buff *skb)
{
	return skb->len <= FIELD_MAX(OCTEP_SDP_TX_LEN) &&
	       skb_shinfo(skb)->gso_size <= FIELD_MAX(OCTEP_SDP_TX_MSS);
}

/*
 * The IP header at @off of @skb's linear part: its length in @l3len and
 * the protocol after it. Return: false if it is neither IPv4 (not a
 * fragment) nor IPv6, or runs past the linear part.
 */
static bool octep_tx_l3(const struct sk_buff *skb, unsigned int off,
			unsigned int *l3len, u8 *proto)
{
	const struct iphdr *iph = (const void *)(skb->data + off);

	if (off + sizeof(struct ipv6hdr) > skb_headlen(skb))
		return false;
	if (iph->version == 4) {
		*l3len = iph->ihl * 4;
		*proto = iph->protocol;
		return iph->ihl >= 5 && !ip_is_fragment(iph);
	}
	if (iph->version != 6)
		return false;
	*l3len = sizeof(struct ipv6hdr);
	*proto = ((const struct ipv6hdr *)iph)->nexthdr;
	return true;
}

/*
 * May the block segment and encrypt @skb, a crypto-offloaded GSO frame
 * (OCTEP_SDP_FEAT_ESP_GSO in octep_sdp.h)? The layout esp4_gso_encap() and
 * esp6_gso_encap() leave: outer IP, ESP and an 8-byte IV, then TCP
 * (transport) or an inner IP header and TCP (tunnel), where the checksum
 * starts. Not ESP in UDP (esp_xmit() builds the trailer for it), not BEET,
 * nor a state of another device (validate_xmit_xfrm() segments those). A
 * bond's state is ours when we are its real_dev: the bond ran esp_xmit()
 * already, and a frame the stack cut now would leave with one ESP header
 * and sequence number for every segment.
 */
static bool octep_esp_gso_ok(struct sk_buff *skb, struct net_device *netdev,
			     netdev_features_t features)
{
	const unsigned int ok = SKB_GSO_TCPV4 | SKB_GSO_TCPV6 |
				SKB_GSO_TCP_ECN | SKB_GSO_TCP_FIXEDID |
				SKB_GSO_DODGY | SKB_GSO_ESP;
	unsigned int off = skb_network_offset(skb), l3len;
	struct xfrm_offload *xo = xfrm_offload(skb);
	unsigned int type = skb_shinfo(skb)->gso_type;
	struct xfrm_state *x;
	u8 proto;

	if (!(features & NETIF_F_GSO_ESP) || !xo || !(type & SKB_GSO_ESP) ||
	    !(type & (SKB_GSO_TCPV4 | SKB_GSO_TCPV6)) || (type & ~ok) ||
	    !octep_tso_fits(skb) || skb->ip_summed != CHECKSUM_PARTIAL ||
	    off != ETH_HLEN)
		return false;
	x = xfrm_input_state(skb);
	if (x->xso.type != XFRM_DEV_OFFLOAD_CRYPTO ||
	    (x->xso.real_dev ?: x->xso.dev) != netdev ||
	    x->encap || (x->props.mode != XFRM_MODE_TRANSPORT &&
			 x->props.mode != XFRM_MODE_TUNNEL))
		return false;
	/*
	 * Segments whose sequence numbers cross into the next 2^32:
	 * validate_xmit_xfrm() would encrypt them in software
	 * (xmit_xfrm_check_overflow()); segmented by the stack, the block
	 * encrypts each.
	 */
	if (xo->seq.low + skb_shinfo(skb)->gso_segs < xo->seq.low)
		return false;
	if (!octep_tx_l3(skb, off, &l3len, &proto) || proto != IPPROTO_ESP)
		return false;
	off += l3len + sizeof(struct ip_esp_hdr) + OCTEP_ESP_IV_LEN;
	if (x->props.mode == XFRM_MODE_TUNNEL &&
	    (!octep_tx_l3(skb, off, &l3len, &proto) || proto != IPPROTO_TCP))
		return false;
	if (x->props.mode == XFRM_MODE_TUNNEL)
		off += l3len;
	else if (xo->proto != IPPROTO_TCP)
		return false;
	return skb_checksum_start_offset(skb) == off &&
	       skb->csum_offset == offsetof(struct tcphdr, check);
}

/**
 * octep_features_check() - ndo_features_check
 * @skb: frame
 * @netdev: our netdev
 * @features: what the stack would use
 *
 * The block segments only plain TCP over IPv4 or IPv6 (no extension
 * header) in a frame of at most OCTEP_SDP_TX_LEN bytes, plain or for
 * packet offload (each segment encapsulated), and with the ESP GSO
 * feature a crypto-offloaded one (octep_esp_gso_ok()). Anything else the
 * stack segments. The checksum of another encapsulated frame (a crypto-
 * offloaded one carries its ESP trailer behind the TCP data) is the
 * stack's too: hw_enc_features offers it for ESP GSO only.
 *
 * Return: @features, less GSO where the block cannot segment @skb.
 */
netdev_features_t octep_features_check(struct sk_buff *skb,
				       struct net_device *netdev,
				       netdev_features_t features)
{
	const unsigned int ok = SKB_GSO_TCPV4 | SKB_GSO_TCPV6 |
				SKB_GSO_TCP_ECN | SKB_GSO_TCP_FIXEDID |
				SKB_GSO_DODGY;
	unsigned int type;

	if (skb->encapsulation) {
		if (!skb_is_gso(skb) || !octep_esp_gso_ok(skb, netdev, features))
			features &= ~(NETIF_F_CSUM_MASK | NETIF_F_GSO_MASK);
		return features;
	}
	if (!skb_is_gso(skb))
		return features;
	type = skb_shinfo(skb)->gso_type;
	if (!(type & (SKB_GSO_TCPV4 | SKB_GSO_TCPV6)) || (type & ~ok) ||
	    (xfrm_offload(skb) &&
	     xfrm_input_state(skb)->xso.type != XFRM_DEV_OFFLOAD_PACKET) ||
	    !octep_tso_fits(skb) ||
	    (skb->protocol != htons(ETH_P_IP) &&
	     skb->protocol != htons(ETH_P_IPV6)) ||
	    (skb->protocol == htons(ETH_P_IPV6) &&
	     ipv6_hdr(skb)->nexthdr != IPPROTO_TCP))
		features &= ~NETIF_F_GSO_MASK;
	return features;
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
	bool linearized = false, ring;
	struct octep_sdp_instr *in;
	struct octep_tx_buf *buf;
	struct netdev_queue *txq;
	u64 flags = 0, csum = 0, seq = 0;
	struct octep_qvec *qv;
	struct octep_iq *iq;
	u32 len, i;

	/*
	 * pktgen and AF_PACKET's qdisc bypass pick the queue before they
	 * take its lock, and may pick one that -L has since left without a
	 * ring: drop, not crash. num_rings changes only with every queue
	 * stopped (octep_reconfigure()); a stale read finds the freed ring
	 * with no room (octep_iq_free()) and returns busy.
	 */
	if (unlikely(q >= READ_ONCE(oct->num_rings))) {
		dev_core_stats_tx_dropped_inc(netdev);
		dev_kfree_skb_any(skb);
		return NETDEV_TX_OK;
	}
	qv = &oct->qv[q];
	iq = &qv->iq;
	txq = netdev_get_tx_queue(netdev, q);

	/* Full: stop, then look again (pairs with octep_iq_reap()'s wake). */
	if (unlikely(!octep_iq_space(iq)) &&
	    !netif_txq_try_stop(txq, octep_iq_space(iq), 1))
		return NETDEV_TX_BUSY;
	if (skb_put_padto(skb, ETH_ZLEN))
		goto dropped;
	len = skb->len;
	if (unlikely(len > FIELD_MAX(OCTEP_SDP_TX_LEN)))
		goto drop;
	if (skb_shinfo(skb)->nr_frags + 1 > OCTEP_TX_SG_MAX) {
		if (skb_linearize(skb))
			goto drop;
		linearized = true;
	}
	if (octep_ipsec_tx_flags(iq, skb, &flags))
		goto drop;
	if (skb->ip_summed == CHECKSUM_PARTIAL) {
		flags |= OCTEP_SDP_TX_CSUM;
		csum = FIELD_PREP(OCTEP_SDP_TX_CSUM_START,
				  skb_checksum_start_offset(skb)) |
		       FIELD_PREP(OCTEP_SDP_TX_CSUM_OFFSET, skb->csum_offset);
	}
	if (skb_is_gso(skb)) {
		/* octep_features_check() let only what the block can cut. */
		if (unlikely(!(flags & OCTEP_SDP_TX_CSUM)))
			goto drop;
		flags |= OCTEP_SDP_TX_TSO;
		csum |= FIELD_PREP(OCTEP_SDP_TX_MSS, skb_shinfo(skb)->gso_size);
		/*
		 * ESP GSO: the first segment's number, which the stack took
		 * (xfrm_replay_overflow_offload*()) with room after it for
		 * gso_segs in all.
		 */
		if (FIELD_GET(OCTEP_SDP_TX_IPSEC_OP, flags) ==
		    OCTEP_SDP_TX_IPSEC_ENCRYPT) {
			struct xfrm_offload *xo = xfrm_offload(skb);

			seq = (u64)xo->seq.hi << 32 | xo->seq.low;
		}
	}

	i = iq->head & (iq->size - 1);
	buf = &iq->bufs[i];
	in = &iq->instr[i];
	buf->pool = false;
	if (!skb_is_nonlinear(skb)) {
		buf->nsg = 0;
		buf->dma = dma_map_single(dd, skb->data, len, DMA_TO_DEVICE);
		if (dma_mapping_error(dd, buf->dma))
			goto drop;
		buf->len = len;
		in->dptr = cpu_to_le64(buf->dma);
	} else {
		if (octep_tx_map_sg(iq, i, skb))
			goto drop;
		flags |= FIELD_PREP(OCTEP_SDP_TX_GATHER, buf->nsg);
		in->dptr = cpu_to_le64(iq->sg_dma + (u64)i * OCTEP_TX_SG_MAX *
				       sizeof(struct octep_sdp_sg));
	}
	buf->skb = skb;
	buf->xdpf = NULL;
	buf->pool = false;
	in->flags = cpu_to_le64(flags | FIELD_PREP(OCTEP_SDP_TX_LEN, len));
	in->csum = cpu_to_le64(csum);
	in->seq = cpu_to_le64(seq);
	memset(in->rsvd, 0, sizeof(in->rsvd));
	skb_tx_timestamp(skb);

	u64_stats_update_begin(&iq->stats.syncp);
	iq->stats.packets++;
	iq->stats.bytes += len;
	if (flags & OCTEP_SDP_TX_CSUM)
		iq->stats.csum_offload++;
	if (flags & OCTEP_SDP_TX_TSO) {
		iq->stats.tso++;
		iq->stats.tso_segs += skb_shinfo(skb)->gso_segs;
		if (seq) {
			iq->stats.esp_gso++;
			iq->stats.esp_gso_segs += skb_shinfo(skb)->gso_segs;
		}
	}
	if (buf->nsg)
		iq->stats.gather++;
	if (linearized)
		iq->stats.linearize++;
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

/*
 * Queue one XDP frame, under the queue's xmit lock: @dma is where it is
 * mapped, by our page pool (@pool: XDP_TX) or by the caller. Nothing is
 * queued on a queue stopped (a full ring, or netif_tx_disable() before the
 * rings are freed or rebuilt: it takes this lock to stop the queue, so a
 * frame queued before it is in the old ring and freed with it) or on a
 * ring that has no room (one -L left without a ring has none).
 */
static bool octep_xdp_queue(struct octep_qvec *qv, struct netdev_queue *txq,
			    struct xdp_frame *xdpf, dma_addr_t dma, bool pool)
{
	struct octep_iq *iq = &qv->iq;
	struct octep_sdp_instr *in;
	struct octep_tx_buf *buf;
	u32 i;

	if (unlikely(netif_tx_queue_stopped(txq) || !octep_iq_space(iq)))
		return false;
	i = iq->head & (iq->size - 1);
	buf = &iq->bufs[i];
	in = &iq->instr[i];
	buf->skb = NULL;
	buf->xdpf = xdpf;
	buf->nsg = 0;
	buf->dma = dma;
	buf->len = xdpf->len;
	buf->pool = pool;
	in->dptr = cpu_to_le64(dma);
	in->flags = cpu_to_le64(FIELD_PREP(OCTEP_SDP_TX_LEN, xdpf->len));
	in->csum = 0;
	memset(in->rsvd, 0, sizeof(in->rsvd));
	/* A frame on the wire like the stack's, for tx_packets and qstats. */
	u64_stats_update_begin(&iq->stats.syncp);
	iq->stats.packets++;
	iq->stats.bytes += xdpf->len;
	iq->stats.xdp_xmit++;
	u64_stats_update_end(&iq->stats.syncp);
	/* The slot is filled before the poll can see it in flight. */
	smp_store_release(&iq->head, iq->head + 1);
	iq->pending++;
	/* The stack's TX watchdog: the queue is moving. */
	txq_trans_cond_update(txq);
	return true;
}

/**
 * octep_xdp_tx() - queue an XDP_TX frame on its ring pair's input ring
 * @qv: ring pair whose poll ran the program
 * @xdpf: the frame, in a page of the pair's page pool (mapped both ways)
 *
 * XDP_TX shares the pair's transmit queue with the stack, under its xmit
 * lock: the block has as many input rings as output rings, so a ring of
 * its own for XDP would halve the ring pairs -L can give. The doorbell is
 * octep_xdp_tx_flush()'s, once a pass.
 *
 * Return: true if queued; false: the caller still owns the frame's page.
 */
bool octep_xdp_tx(struct octep_qvec *qv, struct xdp_frame *xdpf)
{
	struct netdev_queue *txq = netdev_get_tx_queue(qv->oct->netdev,
						       qv->idx);
	struct page *page = virt_to_page(xdpf->data);
	dma_addr_t dma;
	bool ok;

	dma = page_pool_get_dma_addr(page) +
	      (xdpf->data - page_address(page));
	dma_sync_single_for_device(qv->oct->sdp->dma_dev, dma, xdpf->len,
				   DMA_BIDIRECTIONAL);
	__netif_tx_lock(txq, smp_processor_id());
	ok = octep_xdp_queue(qv, txq, xdpf, dma, true);
	__netif_tx_unlock(txq);
	return ok;
}

/**
 * octep_xdp_tx_flush() - ring the doorbell for the XDP_TX frames queued
 * @qv: ring pair, from its poll
 *
 * Under the xmit lock: ndo_start_xmit rings it too, for whatever is
 * pending then, ours included.
 */
void octep_xdp_tx_flush(struct octep_qvec *qv)
{
	struct netdev_queue *txq = netdev_get_tx_queue(qv->oct->netdev,
						       qv->idx);

	__netif_tx_lock(txq, smp_processor_id());
	if (qv->iq.pending)
		octep_iq_ring_doorbell(qv);
	__netif_tx_unlock(txq);
}

/**
 * octep_xdp_xmit() - ndo_xdp_xmit: frames redirected to us
 * @netdev: our netdev
 * @n: frames
 * @frames: the frames
 * @flags: XDP_XMIT_FLUSH to ring the doorbell
 *
 * On the transmit queue of this CPU's number modulo the ring pairs, which
 * the stack may be using on another CPU: under its xmit lock.
 *
 * Return: frames queued (the caller frees the rest), or a negative errno.
 */
int octep_xdp_xmit(struct net_device *netdev, int n, struct xdp_frame **frames,
		   u32 flags)
{
	struct octep_dev *oct = octep_from_netdev(netdev);
	struct device *dd = oct->sdp->dma_dev;
	unsigned int cpu = smp_processor_id(), q;
	struct netdev_queue *txq;
	struct octep_qvec *qv;
	int i, sent = 0;

	if (unlikely(flags & ~XDP_XMIT_FLAGS_MASK))
		return -EINVAL;
	if (unlikely(!netif_running(netdev)))
		return -ENETDOWN;
	/*
	 * num_rings changes with every queue stopped; a stale value names a
	 * queue the lock then finds stopped, or a ring with no room.
	 */
	q = cpu % READ_ONCE(oct->num_rings);
	qv = &oct->qv[q];
	txq = netdev_get_tx_queue(netdev, q);
	__netif_tx_lock(txq, cpu);
	for (i = 0; i < n; i++) {
		struct xdp_frame *xdpf = frames[i];
		dma_addr_t dma;

		dma = dma_map_single(dd, xdpf->data, xdpf->len, DMA_TO_DEVICE);
		if (dma_mapping_error(dd, dma))
			break;
		if (!octep_xdp_queue(qv, txq, xdpf, dma, false)) {
			dma_unmap_single(dd, dma, xdpf->len, DMA_TO_DEVICE);
			break;
		}
		sent++;
	}
	if (qv->iq.pending && (flags & XDP_XMIT_FLUSH))
		octep_iq_ring_doorbell(qv);
	if (sent < n) {
		u64_stats_update_begin(&qv->iq.stats.syncp);
		qv->iq.stats.xdp_xmit_err += n - sent;
		u64_stats_update_end(&qv->iq.stats.syncp);
	}
	__netif_tx_unlock(txq);
	return sent;
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
	u32 mask = iq->size - 1, tail = iq->tail;
	u32 pkts = 0, bytes = 0, excess = 0, inflight, n;
	bool zero = false;
	int ret;
	u64 cnt;

	if (!iq->instr)
		return true;
	while (pkts < iq->size) {
		cnt = octep_cnt_rd(oct, OCTEP_SDP_R_IN_CNTS(qv->idx));
		if (!cnt) {
			zero = true;
			break;
		}
		if (unlikely(cnt > iq->size)) {
			/* Nothing can be completed on such a count. */
			octep_ring_bad(qv, &oct->tx_bad_count, "IN_CNTS", cnt);
			zero = true;
			break;
		}
		/* Pairs with smp_store_release() of head in xmit. */
		inflight = smp_load_acquire(&iq->head) - tail;
		n = min_t(u64, cnt, inflight);
		if (!n) {
			/*
			 * The block counts instructions it was never given.
			 * Take the count back, or it never falls below the
			 * level and the ring is polled for it forever; a
			 * block that keeps adding gets a ring's worth a poll.
			 */
			n = min_t(u64, cnt, iq->size);
			octep_wr64(oct, OCTEP_SDP_R_IN_CNTS(qv->idx), n);
			excess += n;
			if (excess >= iq->size)
				break;
			continue;
		}
		octep_wr64(oct, OCTEP_SDP_R_IN_CNTS(qv->idx), n);
		while (n--) {
			struct octep_tx_buf *buf = &iq->bufs[tail & mask];

			octep_tx_unmap(iq, tail & mask, buf->nsg);
			if (buf->skb) {
				bytes += buf->skb->len;	/* what BQL was given */
				napi_consume_skb(buf->skb, budget);
				buf->skb = NULL;
			} else {
				/* Not in BQL's count: only its room counts. */
				xdp_return_frame(buf->xdpf);
				buf->xdpf = NULL;
			}
			tail++;
			pkts++;
		}
	}
	if (excess) {
		u64_stats_update_begin(&iq->cstats.syncp);
		iq->cstats.excess += excess;
		u64_stats_update_end(&iq->cstats.syncp);
	}
	if (!pkts)
		return zero || (excess < iq->size && !(READ_ONCE(iq->head) - tail));

	WRITE_ONCE(iq->tail, tail);
	u64_stats_update_begin(&iq->cstats.syncp);
	iq->cstats.completions += pkts;
	u64_stats_update_end(&iq->cstats.syncp);

	/*
	 * XDP frames alone give BQL no bytes, and it then skips its barrier:
	 * ours pairs with netif_txq_try_stop()'s, tail before the wake's test.
	 */
	if (!bytes)
		smp_mb();	/* pairs with netif_txq_try_stop() */
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
 * octep_iq_mem_alloc() - allocate an input ring's memory
 * @oct: device
 * @m: where to put it; what is there is NULL
 * @size: instructions
 *
 * Fails on demand under fault injection (octep_fail_ring_alloc()).
 *
 * Return: 0 or -ENOMEM; on failure @m holds what was allocated, for
 * octep_iq_mem_free().
 */
int octep_iq_mem_alloc(struct octep_dev *oct, struct octep_ring_mem *m,
		       u32 size)
{
	struct device *dd = oct->sdp->dma_dev;

	if (octep_fail_ring_alloc())
		return -ENOMEM;
	m->iq_size = size;
	m->instr = dma_alloc_coherent(dd, size * sizeof(*m->instr),
				      &m->instr_dma, GFP_KERNEL);
	if (!m->instr)
		return -ENOMEM;
	m->sg = dma_alloc_coherent(dd, octep_sg_bytes(size), &m->sg_dma,
				   GFP_KERNEL);
	if (!m->sg)
		return -ENOMEM;
	m->bufs = kcalloc(size, sizeof(*m->bufs), GFP_KERNEL);
	if (!m->bufs)
		return -ENOMEM;
	return 0;
}

/**
 * octep_iq_mem_free() - free input ring memory no ring uses
 * @oct: device
 * @m: what octep_iq_mem_alloc() left there, or what octep_iq_free() took
 *	back; no frame is in it
 */
void octep_iq_mem_free(struct octep_dev *oct, struct octep_ring_mem *m)
{
	struct device *dd = oct->sdp->dma_dev;

	kfree(m->bufs);
	m->bufs = NULL;
	if (m->sg)
		dma_free_coherent(dd, octep_sg_bytes(m->iq_size), m->sg,
				  m->sg_dma);
	m->sg = NULL;
	if (m->instr)
		dma_free_coherent(dd, m->iq_size * sizeof(*m->instr), m->instr,
				  m->instr_dma);
	m->instr = NULL;
}

/**
 * octep_iq_install() - make prepared memory a ring pair's input ring
 * @qv: ring pair; its old input ring freed (octep_iq_free())
 * @m: from octep_iq_mem_alloc(); emptied, the ring owns it now
 */
void octep_iq_install(struct octep_qvec *qv, struct octep_ring_mem *m)
{
	struct octep_iq *iq = &qv->iq;

	iq->qv = qv;
	iq->size = m->iq_size;
	iq->instr = m->instr;
	iq->instr_dma = m->instr_dma;
	iq->sg = m->sg;
	iq->sg_dma = m->sg_dma;
	iq->bufs = m->bufs;
	iq->head = 0;
	iq->tail = 0;
	iq->pending = 0;
	m->instr = NULL;
	m->sg = NULL;
	m->bufs = NULL;
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
	struct octep_ring_mem m = {};
	u32 mask = iq->size - 1, dropped = 0;

	if (!iq->instr)
		return;
	for (; iq->tail != iq->head; iq->tail++) {
		struct octep_tx_buf *buf = &iq->bufs[iq->tail & mask];

		octep_tx_unmap(iq, iq->tail & mask, buf->nsg);
		if (buf->skb)
			dev_kfree_skb_any(buf->skb);
		else
			xdp_return_frame(buf->xdpf);
		buf->skb = NULL;
		buf->xdpf = NULL;
		dropped++;
	}
	u64_stats_update_begin(&iq->stats.syncp);
	iq->stats.drops += dropped;
	u64_stats_update_end(&iq->stats.syncp);
	netdev_tx_reset_queue(netdev_get_tx_queue(qv->oct->netdev, qv->idx));
	m.instr = iq->instr;
	m.instr_dma = iq->instr_dma;
	m.sg = iq->sg;
	m.sg_dma = iq->sg_dma;
	m.bufs = iq->bufs;
	m.iq_size = iq->size;
	octep_iq_mem_free(qv->oct, &m);
	iq->instr = NULL;
	iq->sg = NULL;
	iq->bufs = NULL;
	iq->head = 0;
	iq->tail = 0;
	iq->size = 0;
}
