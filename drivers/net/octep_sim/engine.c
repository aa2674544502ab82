// SPDX-License-Identifier: GPL-2.0
/*
 * octep_sim: the block's engine, a kthread per device.
 *
 * Towards the host it takes frames the wire sent, picks an output ring by
 * flow hash (RSS: one flow, one ring, in order), writes each into the next
 * buffer the host gave (frame at +16, then the ext word, then the length
 * word last), and then adds them to the ring's count. Towards the wire it
 * reads the instructions the host rang in, copies each frame out, counts the
 * instructions done and hands the frames to the wire.
 *
 * It takes a ring's lock once per batch, not per packet; the lock is what
 * makes a host write that disables a ring synchronous with the engine.
 */
#include <linux/bitfield.h>
#include <linux/etherdevice.h>
#include <linux/ip.h>
#include <linux/ipv6.h>
#include <linux/kthread.h>
#include <linux/random.h>
#include <linux/tcp.h>
#include <linux/udp.h>
#include <linux/unaligned.h>
#include <net/esp.h>
#include <net/flow_dissector.h>
#include <net/ip6_checksum.h>
#include <net/gso.h>
#include <net/page_pool/helpers.h>

#include "octep_sim.h"
#include "ipsec.h"

/* What the engine keeps in skb->cb while a frame is in its hands. */
struct osim_skb_cb {
	void *va;	/* the host buffer (delayed write) */
	union {
		u64 ext;	/* output: the response header's ext word */
		u64 seq;	/* input: an ESP TSO segment's number, or 0 */
	};
	ktime_t due;	/* when the delayed write is done */
	u64 csum;	/* input: the instruction's csum word */
	bool csum_req;	/* input: a checksum was asked for, not yet done */
	bool csum_done;	/* input: the engine computed it in the copy */
	u64 flags;	/* input: the instruction's flags (IPsec op, handle) */
};

static struct osim_skb_cb *osim_cb(struct sk_buff *skb)
{
	BUILD_BUG_ON(sizeof(struct osim_skb_cb) > sizeof(skb->cb));
	return (struct osim_skb_cb *)skb->cb;
}

/* ------------------------------------------------------- host buffers */

/*
 * Copy a frame into a host buffer at @to. A frame whose L4 checksum is
 * still to do (CHECKSUM_PARTIAL: the wire's stack offloaded it) has it
 * computed in the same pass as the copy and stored in the copy.
 */
static void osim_copy_frame(struct sk_buff *skb, void *to)
{
	int start = skb_checksum_start_offset(skb);
	__sum16 sum;
	__wsum csum;

	if (skb->ip_summed != CHECKSUM_PARTIAL || start < 0 ||
	    start + skb->csum_offset + sizeof(sum) > skb->len) {
		skb_copy_bits(skb, 0, to, skb->len);
		return;
	}
	skb_copy_bits(skb, 0, to, start);
	csum = skb_copy_and_csum_bits(skb, start, to + start, skb->len - start);
	sum = csum_fold(csum);
	/* As skb_checksum_help(): a UDP sum of 0 means "none". */
	if (!sum)
		sum = CSUM_MANGLED_0;
	memcpy(to + start + skb->csum_offset, &sum, sizeof(sum));
}

/* The frame is in the buffer: ext, then the length last. */
static void osim_buf_finish(void *va, u64 ext, unsigned int len)
{
	struct octep_sdp_resp_hdr *hdr = va;

	WRITE_ONCE(hdr->ext, cpu_to_le64(ext));
	/* The length says the buffer is written: it must be seen last. */
	dma_wmb();
	WRITE_ONCE(hdr->length, cpu_to_be64(len));
}

/*
 * osim_buf_finish(), unless the hostile mode (hostile.c) makes this buffer
 * a fault: a length no buffer holds, or a checksum code nobody defined.
 */
static void osim_buf_finish_hostile(struct osim_dev *dev, struct osim_oq *oq,
				    void *va, u64 ext, u64 len)
{
	struct octep_sdp_resp_hdr *hdr = va;
	u32 rnd;

	if (unlikely(osim_hostile(dev, OSIM_HK_RX_LEN, &rnd))) {
		WRITE_ONCE(hdr->ext, cpu_to_le64(ext));
		dma_wmb();
		WRITE_ONCE(hdr->length,
			   cpu_to_be64(osim_hostile_len(oq->bufsize, rnd)));
		return;
	}
	if (unlikely(osim_hostile(dev, OSIM_HK_RX_EXT, NULL)))
		ext |= FIELD_PREP(OCTEP_SDP_RX_CSUM, 3);
	osim_buf_finish(va, ext, len);
}

/* Write one packet into a host buffer: frame, ext, then the length last. */
static void osim_buf_write(void *va, struct sk_buff *skb, u64 ext)
{
	osim_copy_frame(skb, va + OCTEP_SDP_RESP_HDR_LEN);
	osim_buf_finish(va, ext, skb->len);
}

/*
 * TSO towards the host. A TCP frame the wire's stack left to be segmented
 * is written segment by segment straight into host buffers, each segment's
 * headers fixed up as tcp_gso_segment() and inet_gso_segment() do and its
 * checksum computed in the copy: the host sees the same MTU frames as from
 * skb_gso_segment(), without an skb made, freed and its socket's write
 * space given back per segment - the model's own cost, which under
 * emulation was as large as the whole veth path. Only the plain case:
 * TCP over IPv4 or IPv6 with no extension header, no tunnel, headers in
 * the linear part. The flow table looks only into ESP (osim_ipsec_rx()),
 * so a TCP segment adds nothing to ext. Anything else, and every frame
 * while the delayed-write fault is on (a deferred write keeps its skb),
 * goes through skb_gso_segment().
 */
struct osim_tso {
	unsigned int len;	/* the whole frame */
	unsigned int nh;	/* network header offset */
	unsigned int th;	/* TCP header offset */
	unsigned int hlen;	/* all headers */
	unsigned int mss;
	unsigned int segs;
	bool v6;
	bool fixedid;
	/* ESP TSO (input only): the outer header, ESP, its next header */
	unsigned int onh;
	unsigned int esp;	/* 0: plain TSO */
	bool ov6;
	u8 nexthdr;
	u64 seq;		/* the first segment's */
};

static bool osim_tso_parse(struct sk_buff *skb, struct osim_tso *t)
{
	const unsigned int ok = SKB_GSO_TCPV4 | SKB_GSO_TCPV6 |
				SKB_GSO_TCP_ECN | SKB_GSO_TCP_FIXEDID |
				SKB_GSO_DODGY;
	unsigned int type = skb_shinfo(skb)->gso_type;

	if (!skb_is_gso(skb) || !(type & (SKB_GSO_TCPV4 | SKB_GSO_TCPV6)) ||
	    (type & ~ok) || skb->encapsulation ||
	    skb->ip_summed != CHECKSUM_PARTIAL ||
	    !skb_transport_header_was_set(skb))
		return false;
	t->nh = skb_network_offset(skb);
	t->th = skb_transport_offset(skb);
	if (t->th + sizeof(struct tcphdr) > skb_headlen(skb))
		return false;
	t->hlen = t->th + tcp_hdrlen(skb);
	t->mss = skb_shinfo(skb)->gso_size;
	if (!t->mss || t->hlen > skb_headlen(skb) || t->hlen >= skb->len)
		return false;
	if (skb->protocol == htons(ETH_P_IP)) {
		const struct iphdr *iph = ip_hdr(skb);

		if (iph->version != 4 || iph->protocol != IPPROTO_TCP ||
		    t->nh + iph->ihl * 4 != t->th)
			return false;
		t->v6 = false;
	} else if (skb->protocol == htons(ETH_P_IPV6)) {
		const struct ipv6hdr *ip6h = ipv6_hdr(skb);

		if (ip6h->nexthdr != IPPROTO_TCP ||
		    t->nh + sizeof(*ip6h) != t->th)
			return false;
		t->v6 = true;
	} else {
		return false;
	}
	t->fixedid = type & SKB_GSO_TCP_FIXEDID;
	t->len = skb->len;
	t->segs = DIV_ROUND_UP(skb->len - t->hlen, t->mss);
	return true;
}

/* Bytes of segment @i of a TSO frame. */
static unsigned int osim_tso_len(const struct osim_tso *t, unsigned int i)
{
	return t->hlen + min(t->mss, t->len - t->hlen - i * t->mss);
}

/*
 * Segment @i's headers, copied to @to from the frame's, fixed up; @csum is
 * the sum of its payload.
 */
static void osim_tso_fix(const struct osim_tso *t, unsigned int i, void *to,
			 __wsum csum)
{
	unsigned int len = osim_tso_len(t, i);
	unsigned int l4len = len - t->th;
	struct tcphdr *th = to + t->th;

	th->seq = htonl(ntohl(th->seq) + i * t->mss);
	if (i)
		th->cwr = 0;
	if (i + 1 < t->segs) {
		th->fin = 0;
		th->psh = 0;
	}
	th->check = 0;
	csum = csum_partial(th, t->hlen - t->th, csum);
	if (t->v6) {
		struct ipv6hdr *ip6h = to + t->nh;

		ip6h->payload_len = htons(l4len);
		th->check = csum_ipv6_magic(&ip6h->saddr, &ip6h->daddr, l4len,
					    IPPROTO_TCP, csum);
	} else {
		struct iphdr *iph = to + t->nh;

		iph->tot_len = htons(len - t->nh);
		if (!t->fixedid)
			iph->id = htons(ntohs(iph->id) + i);
		iph->check = 0;
		iph->check = ip_fast_csum(iph, iph->ihl);
		th->check = csum_tcpudp_magic(iph->saddr, iph->daddr, l4len,
					      IPPROTO_TCP, csum);
	}
}

/* Copy segment @i of a TSO frame to @to: headers, then payload and sum. */
static void osim_tso_copy(struct sk_buff *skb, const struct osim_tso *t,
			  unsigned int i, void *to)
{
	unsigned int len = osim_tso_len(t, i);
	__wsum csum;

	memcpy(to, skb->data, t->hlen);
	csum = skb_copy_and_csum_bits(skb, t->hlen + i * t->mss, to + t->hlen,
				      len - t->hlen);
	osim_tso_fix(t, i, to, csum);
}

static enum hrtimer_restart osim_delay_timer(struct hrtimer *t)
{
	struct osim_oq *oq = container_of(t, struct osim_oq, delay_timer);
	struct osim_ring *ring = container_of(oq, struct osim_ring, oq);
	/* Off the bus (the surprise fault): no write reaches the host. */
	bool gone = test_bit(OSIM_F_GONE, &ring->dev->flags);
	struct sk_buff_head done;
	struct sk_buff *skb;
	unsigned long flags;
	ktime_t now;

	__skb_queue_head_init(&done);
	spin_lock_irqsave(&oq->lock, flags);
	now = ktime_get();
	while ((skb = skb_peek(&oq->deferred))) {
		if (ktime_after(osim_cb(skb)->due, now)) {
			/* Restarting from the callback is allowed; no RESTART. */
			hrtimer_start(t, osim_cb(skb)->due, HRTIMER_MODE_ABS_SOFT);
			break;
		}
		__skb_unlink(skb, &oq->deferred);
		if (!gone)
			osim_buf_write(osim_cb(skb)->va, skb, osim_cb(skb)->ext);
		__skb_queue_tail(&done, skb);
	}
	spin_unlock_irqrestore(&oq->lock, flags);
	__skb_queue_purge(&done);
	return HRTIMER_NORESTART;
}

/**
 * osim_oq_init() - initialise an output ring's engine state
 * @oq: output ring
 */
void osim_oq_init(struct osim_oq *oq)
{
	spin_lock_init(&oq->lock);
	skb_queue_head_init(&oq->deferred);
	hrtimer_setup(&oq->delay_timer, osim_delay_timer, CLOCK_MONOTONIC,
		      HRTIMER_MODE_ABS_SOFT);
	atomic_set(&oq->inject, 0);
	atomic_set(&oq->arrive_on_enable, 0);
}

/**
 * osim_oq_flush_deferred() - finish or drop the ring's delayed buffer writes
 * @oq: output ring, its lock held
 * @write: write the buffers now (the host still owns them), else drop them
 */
void osim_oq_flush_deferred(struct osim_oq *oq, bool write)
{
	struct sk_buff *skb;

	while ((skb = __skb_dequeue(&oq->deferred))) {
		if (write)
			osim_buf_write(osim_cb(skb)->va, skb, osim_cb(skb)->ext);
		dev_kfree_skb_any(skb);
	}
	/* If it is running, it waits for our lock and finds nothing. */
	hrtimer_try_to_cancel(&oq->delay_timer);
}

enum osim_put {
	OSIM_PUT_DROP,
	OSIM_PUT_WRITTEN,
	OSIM_PUT_DEFERRED,
};

/*
 * What a count fault adds to a count, its side's lock held: one no ring
 * holds, and not again while the last one is still in the count.
 */
static u32 osim_hostile_count(struct osim_dev *dev, struct osim_cnt *c,
			      enum osim_hk kind)
{
	u32 rnd;

	if (likely(c->r.count < OSIM_HOSTILE_COUNT) &&
	    unlikely(osim_hostile(dev, kind, &rnd)))
		return OSIM_HOSTILE_COUNT + rnd % 4096;
	return 0;
}

/*
 * Under oq->lock: take the ring's next buffer for a packet of @len bytes.
 * Return: the buffer, or NULL with the drop counted.
 */
static void *osim_oq_slot(struct osim_dev *dev, struct osim_oq *oq,
			  unsigned int len)
{
	void *va;

	if (!oq->enabled) {
		oq->drop_disabled++;
		return NULL;
	}
	if (!oq->credits || oq->fill) {
		oq->drop_credit++;
		return NULL;
	}
	if (len + OCTEP_SDP_RESP_HDR_LEN > oq->bufsize) {
		oq->drop_big++;
		return NULL;
	}
	va = osim_dma_va(dev, le64_to_cpu(READ_ONCE(oq->desc[oq->head].buffer_ptr)),
			 oq->bufsize);
	if (!va) {
		oq->drop_dma++;
		return NULL;
	}
	oq->head = oq->head + 1 == oq->rsize ? 0 : oq->head + 1;
	oq->credits--;
	oq->pkts++;
	oq->bytes += len;
	return va;
}

/*
 * Under oq->lock: the segments of a TSO frame (osim_tso_parse() held for
 * it in osim_rx_prepare()), each into the ring's next buffer.
 * Return: buffers written.
 */
static u32 osim_oq_put_tso(struct osim_dev *dev, struct osim_oq *oq,
			   struct sk_buff *skb)
{
	struct osim_tso t;
	unsigned int i, len;
	u32 n = 0;
	void *va;

	if (WARN_ON_ONCE(!osim_tso_parse(skb, &t)))
		return 0;
	for (i = 0; i < t.segs; i++) {
		len = osim_tso_len(&t, i);
		va = osim_oq_slot(dev, oq, len);
		if (!va)
			continue;
		osim_tso_copy(skb, &t, i, va + OCTEP_SDP_RESP_HDR_LEN);
		osim_buf_finish_hostile(dev, oq, va, osim_cb(skb)->ext, len);
		n++;
	}
	return n;
}

/* Under oq->lock: one packet into the ring's next buffer. */
static enum osim_put osim_oq_put(struct osim_dev *dev, struct osim_oq *oq,
				 struct sk_buff *skb, u32 delay_share)
{
	struct osim_skb_cb *cb = osim_cb(skb);
	void *va;

	va = osim_oq_slot(dev, oq, skb->len);
	if (!va)
		return OSIM_PUT_DROP;
	if (delay_share && get_random_u32_below(1000) < delay_share) {
		cb->va = va;
		cb->due = ktime_add_ns(ktime_get(), READ_ONCE(dev->delay_ns));
		if (skb_queue_empty(&oq->deferred))
			hrtimer_start(&oq->delay_timer, cb->due,
				      HRTIMER_MODE_ABS_SOFT);
		__skb_queue_tail(&oq->deferred, skb);
		oq->delayed++;
		return OSIM_PUT_DEFERRED;
	}
	osim_copy_frame(skb, va + OCTEP_SDP_RESP_HDR_LEN);
	osim_buf_finish_hostile(dev, oq, va, cb->ext, skb->len);
	return OSIM_PUT_WRITTEN;
}

/*
 * Put a list of packets into one output ring, then count them. Packets
 * written or dropped are moved to @done for the caller to free.
 */
static void osim_oq_put_list(struct osim_dev *dev, struct osim_oq *oq,
			     struct sk_buff_head *list, struct sk_buff_head *done)
{
	u32 share = READ_ONCE(dev->delay_share);
	struct sk_buff *skb;
	unsigned long flags;
	u32 n = 0;

	spin_lock_irqsave(&oq->lock, flags);
	while ((skb = __skb_dequeue(list))) {
		if (skb_is_gso(skb)) {
			/* Only TSO frames stay GSO this far (osim_rx_prepare()). */
			n += osim_oq_put_tso(dev, oq, skb);
			__skb_queue_tail(done, skb);
			continue;
		}
		switch (osim_oq_put(dev, oq, skb, share)) {
		case OSIM_PUT_DEFERRED:
			n++;
			continue;	/* the ring keeps it */
		case OSIM_PUT_WRITTEN:
			n++;
			break;
		case OSIM_PUT_DROP:
			break;
		}
		__skb_queue_tail(done, skb);
	}
	if (n) {
		/* The buffers before the count (osim_cnt_add() releases it). */
		dma_wmb();
		osim_cnt_add(&oq->cnt, n + osim_hostile_count(dev, &oq->cnt,
							      OSIM_HK_RX_COUNT));
	}
	spin_unlock_irqrestore(&oq->lock, flags);
}

/* ------------------------------------------------------- link rate */

/*
 * Token bucket: bytes may pass while tokens are positive, and a batch may
 * overdraw. Return: 0 to go on, else nanoseconds until tokens are back.
 */
static u64 osim_bucket_wait(struct osim_dev *dev, struct osim_bucket *b)
{
	u32 mbps = READ_ONCE(dev->link_mbps);
	s64 burst, delta;
	ktime_t now;

	if (!mbps)
		return 0;
	now = ktime_get();
	/* mbps Mbit/s is mbps / 8000 bytes a nanosecond; burst 1 ms. */
	burst = max_t(s64, (s64)mbps * 125, 16 * 1514);
	delta = ktime_to_ns(ktime_sub(now, b->last));
	b->last = now;
	if (delta > NSEC_PER_SEC)
		delta = NSEC_PER_SEC;
	/* Signed: a debt (negative tokens) is paid off, not forgiven. */
	b->tokens = min_t(s64, b->tokens + (s64)div_u64((u64)delta * mbps, 8000),
			  burst);
	if (b->tokens > 0)
		return 0;
	return div_u64((u64)(1 - b->tokens) * 8000, mbps) + 1;
}

/* Take @bytes; false once the bucket is empty (stop the batch there). */
static bool osim_bucket_take(struct osim_dev *dev, struct osim_bucket *b,
			     unsigned int bytes)
{
	if (!READ_ONCE(dev->link_mbps))
		return true;
	b->tokens -= bytes;
	return b->tokens > 0;
}

/* ------------------------------------------------------- to the host */

/*
 * With RSS off (RSS_CTL), the rings flows are spread over: the leading run
 * of enabled output rings, as a host that uses fewer ring pairs (ethtool
 * -L) enables rings 0..n-1. The firmware of the real block is told the
 * ring count by the host; here the enables say it. All disabled: every
 * ring, so the drop is counted. Read without oq->lock: a ring disabled
 * meanwhile drops and counts in osim_oq_put(), under the lock (pairs with
 * the WRITE_ONCE()s of oq->enabled in regs.c).
 */
static unsigned int osim_rss_rings(struct osim_dev *dev)
{
	unsigned int n = 0;

	while (n < dev->num_rings && READ_ONCE(dev->rings[n].oq.enabled))
		n++;
	return n ? n : dev->num_rings;
}

/*
 * The Toeplitz hash of @len bytes of @in under @key: for each bit of the
 * input, most significant first, that is set, the 32 bits of the key that
 * start at that bit's position are XORed in. @key has @len + 4 bytes.
 */
static u32 osim_toeplitz(const u8 *key, const u8 *in, unsigned int len)
{
	u32 win = get_unaligned_be32(key), hash = 0;
	unsigned int i, b;

	for (i = 0; i < len; i++) {
		for (b = 0; b < 8; b++) {
			if (in[i] & BIT(7 - b))
				hash ^= win;
			win = win << 1 | (key[i + 4] >> (7 - b) & 1);
		}
	}
	return hash;
}

/*
 * The block's RSS hash (octep_sdp.h, "Receive side scaling"): addresses,
 * then ports for TCP and UDP, or the SPI for ESP (where the dissector puts
 * it), when not a fragment, of the outer headers.
 */
static u32 osim_rss_hash(struct osim_dev *dev, const struct sk_buff *skb)
{
	u8 key[OCTEP_SDP_RSS_KEY_SIZE], in[2 * sizeof(struct in6_addr) + 4];
	struct flow_keys fk;
	unsigned int i, n;

	if (!skb_flow_dissect_flow_keys(skb, &fk,
					FLOW_DISSECTOR_F_STOP_AT_ENCAP))
		return 0;
	switch (fk.control.addr_type) {
	case FLOW_DISSECTOR_KEY_IPV4_ADDRS:
		n = sizeof(fk.addrs.v4addrs);
		memcpy(in, &fk.addrs.v4addrs, n);
		break;
	case FLOW_DISSECTOR_KEY_IPV6_ADDRS:
		n = sizeof(fk.addrs.v6addrs);
		memcpy(in, &fk.addrs.v6addrs, n);
		break;
	default:
		return 0;
	}
	if ((fk.basic.ip_proto == IPPROTO_TCP ||
	     fk.basic.ip_proto == IPPROTO_UDP ||
	     fk.basic.ip_proto == IPPROTO_ESP) &&
	    !(fk.control.flags & FLOW_DIS_IS_FRAGMENT)) {
		memcpy(in + n, &fk.ports.ports, sizeof(fk.ports.ports));
		n += sizeof(fk.ports.ports);
	}
	for (i = 0; i < OCTEP_SDP_RSS_KEY_REGS; i++)
		put_unaligned_le64(READ_ONCE(dev->rss_key[i]), key + i * 8);
	return osim_toeplitz(key, in, n);
}

/*
 * The output ring for a frame from the wire, and its hash in @hash; -1 if
 * the frame is to be dropped (counted). RSS enabled: the indirection
 * table's entry for the hash; else the hash scaled to osim_rss_rings().
 * Each RSS register is read once, so a host update under traffic steers a
 * frame by old or new registers (octep_sim.h); the enable is read with
 * acquire, pairing with the release store of its write (regs.c).
 */
static int osim_rx_ring(struct osim_dev *dev, struct sk_buff *skb, u32 *hash)
{
	unsigned int idx;
	u8 ring;

	/* Pairs with osim_rss_write(): the key and table before the enable. */
	if (!(smp_load_acquire(&dev->rss_ctl) & OCTEP_SDP_RSS_CTL_ENA)) {
		/* On the headers, not on a hash a socket chose. */
		skb_clear_hash(skb);
		*hash = skb_get_hash(skb);
		return reciprocal_scale(*hash, osim_rss_rings(dev));
	}
	*hash = osim_rss_hash(dev, skb);
	idx = *hash % OCTEP_SDP_RSS_INDIR_SIZE;
	ring = READ_ONCE(dev->rss_indir[idx / 8]) >> (idx % 8 * 8);
	/* As osim_rss_rings(): a ring disabled meanwhile drops under its lock. */
	if (ring >= dev->num_rings || !READ_ONCE(dev->rings[ring].oq.enabled)) {
		/* Frames as the wire carried them: a GSO frame's segments. */
		dev->rss_drops += skb_is_gso(skb) ?
				  max_t(u16, skb_shinfo(skb)->gso_segs, 1) : 1;
		return -1;
	}
	return ring;
}

/*
 * Segment a frame the wire sent; its segments go to @segs. Segments share
 * the frame's pages and keep CHECKSUM_PARTIAL: the copy into the host
 * buffer computes the checksum (osim_copy_frame()), one pass for both.
 */
static void osim_rx_prepare(struct osim_dev *dev, struct sk_buff *skb,
			    struct sk_buff_head *segs)
{
	struct sk_buff *seg, *next;
	struct osim_tso t;
	u64 ext = 0;
	int ring;
	u32 hash;

	ring = osim_rx_ring(dev, skb, &hash);
	if (ring < 0) {
		kfree_skb(skb);
		return;
	}
	/* The engine computes what the stack left: the host need not check. */
	if (skb->ip_summed == CHECKSUM_PARTIAL)
		ext |= FIELD_PREP(OCTEP_SDP_RX_CSUM, OCTEP_SDP_RX_CSUM_OK);
	ext |= FIELD_PREP(OCTEP_SDP_RX_HASH, hash & 0xffff);
	if (!READ_ONCE(dev->delay_share) && osim_tso_parse(skb, &t)) {
		/* Segmented as it is written (osim_oq_put_tso()). */
		osim_cb(skb)->ext = ext;
		skb->queue_mapping = ring;
		__skb_queue_tail(segs, skb);
		return;
	}
	if (skb_is_gso(skb)) {
		seg = skb_gso_segment(skb, NETIF_F_SG | NETIF_F_HW_CSUM);
		if (IS_ERR(seg)) {
			atomic64_inc(&dev->wire_drops);
			kfree_skb(skb);
			return;
		}
		if (seg)
			consume_skb(skb);
		else
			seg = skb;
	} else {
		seg = skb;
		seg->next = NULL;
	}
	skb_list_walk_safe(seg, seg, next) {
		skb_mark_not_on_list(seg);
		/* The flow table: decrypt, verify, mark (ipsec.h). */
		osim_cb(seg)->ext = ext | osim_ipsec_rx(dev, seg);
		seg->queue_mapping = ring;
		__skb_queue_tail(segs, seg);
	}
}

/* Sort @segs by ring and put each ring's share in one go. */
static void osim_rx_deliver(struct osim_dev *dev, struct sk_buff_head *segs)
{
	struct sk_buff_head per[OCTEP_SDP_MAX_RINGS], done;
	DECLARE_BITMAP(used, OCTEP_SDP_MAX_RINGS);
	struct sk_buff *skb;
	unsigned int r;

	bitmap_zero(used, OCTEP_SDP_MAX_RINGS);
	__skb_queue_head_init(&done);
	while ((skb = __skb_dequeue(segs))) {
		r = skb->queue_mapping;
		if (!test_and_set_bit(r, used))
			__skb_queue_head_init(&per[r]);
		__skb_queue_tail(&per[r], skb);
	}
	for_each_set_bit(r, used, OCTEP_SDP_MAX_RINGS)
		osim_oq_put_list(dev, &dev->rings[r].oq, &per[r], &done);
	while ((skb = __skb_dequeue(&done)))
		consume_skb(skb);
}

/* Frames the wire sent, towards the host. Return: frames taken. */
static int osim_rx_wire(struct osim_dev *dev, u64 *wait)
{
	struct sk_buff_head segs;
	struct sk_buff *skb;
	unsigned long flags;
	int n = 0;
	u64 w;

	if (skb_queue_empty_lockless(&dev->wire_q))
		return 0;
	w = osim_bucket_wait(dev, &dev->bucket_rx);
	if (w) {
		*wait = min(*wait, w);
		return 0;
	}
	__skb_queue_head_init(&segs);
	spin_lock_irqsave(&dev->wire_q.lock, flags);
	while (n < OSIM_BATCH && (skb = __skb_dequeue(&dev->wire_q))) {
		n++;
		/* Segmenting wants irqs on: keep the unsegmented ones aside. */
		__skb_queue_tail(&segs, skb);
		if (!osim_bucket_take(dev, &dev->bucket_rx, skb->len))
			break;
	}
	spin_unlock_irqrestore(&dev->wire_q.lock, flags);
	osim_wire_wake(dev);

	if (n) {
		struct sk_buff_head ready;

		__skb_queue_head_init(&ready);
		while ((skb = __skb_dequeue(&segs)))
			osim_rx_prepare(dev, skb, &ready);
		osim_rx_deliver(dev, &ready);
	}
	return n;
}

/* A synthetic frame for the inject hook: UDP/IPv4 with a sequence number. */
static struct sk_buff *osim_synth(struct osim_dev *dev, struct osim_ring *ring,
				  gfp_t gfp)
{
	const unsigned int len = ETH_ZLEN;
	struct sk_buff *skb;
	struct ethhdr *eth;
	struct udphdr *uh;
	struct iphdr *iph;
	__be32 *payload;

	skb = alloc_skb(len, gfp);
	if (!skb)
		return NULL;
	skb_put_zero(skb, len);
	eth = (struct ethhdr *)skb->data;
	ether_addr_copy(eth->h_dest, dev->asdp->sdp.mac_addr);
	ether_addr_copy(eth->h_source, dev->wire->dev_addr);
	eth->h_proto = htons(ETH_P_IP);
	iph = (struct iphdr *)(eth + 1);
	iph->version = 4;
	iph->ihl = 5;
	iph->ttl = 64;
	iph->protocol = IPPROTO_UDP;
	iph->tot_len = htons(len - ETH_HLEN);
	iph->saddr = htonl(0xc0000202);	/* 192.0.2.2 */
	iph->daddr = htonl(0xc0000201);	/* 192.0.2.1 */
	iph->check = ip_fast_csum(iph, iph->ihl);
	uh = (struct udphdr *)(iph + 1);
	uh->source = htons(9);
	uh->dest = htons(9);
	uh->len = htons(len - ETH_HLEN - sizeof(*iph));
	payload = (__be32 *)(uh + 1);
	payload[0] = htonl(ring->idx);
	payload[1] = htonl(ring->oq.inject_seq++);
	osim_cb(skb)->ext = FIELD_PREP(OCTEP_SDP_RX_HASH, ring->idx);
	return skb;
}

/**
 * osim_oq_arrive_on_enable() - fault: a packet counted just before an enable
 * @dev: device
 * @oq: output ring, its lock held
 *
 * Called by a host write of OUT_INT_LEVELS that sets the enable bit while
 * it is clear, before the write applies: if the ring's arrive_on_enable
 * fault is armed, one synthetic packet is written and counted now, so its
 * crossing finds the interrupt still disabled - the packet that arrives
 * between a poll's last read of the count and its enable, deterministically.
 */
void osim_oq_arrive_on_enable(struct osim_dev *dev, struct osim_oq *oq)
{
	struct osim_ring *ring = container_of(oq, struct osim_ring, oq);
	struct sk_buff *skb;

	if (oq->cnt.r.ena || !atomic_add_unless(&oq->arrive_on_enable, -1, 0))
		return;
	skb = osim_synth(dev, ring, GFP_ATOMIC);
	if (!skb) {
		atomic64_inc(&dev->wire_drops);
		return;
	}
	if (osim_oq_put(dev, oq, skb, 0) == OSIM_PUT_WRITTEN) {
		oq->arrived_on_enable++;
		/* The buffer before the count (osim_cnt_add() releases it). */
		dma_wmb();
		osim_cnt_add(&oq->cnt, 1);
	}
	dev_kfree_skb_any(skb);
}

/* Synthetic packets asked for through debugfs inject. */
static int osim_rx_inject(struct osim_dev *dev)
{
	struct sk_buff_head list, done;
	struct sk_buff *skb;
	unsigned int i;
	int total = 0;

	__skb_queue_head_init(&done);
	for (i = 0; i < dev->num_rings; i++) {
		struct osim_ring *ring = &dev->rings[i];
		int n = min(atomic_read(&ring->oq.inject), OSIM_BATCH);

		if (n <= 0)
			continue;
		atomic_sub(n, &ring->oq.inject);
		__skb_queue_head_init(&list);
		while (n--) {
			skb = osim_synth(dev, ring, GFP_KERNEL);
			if (!skb) {
				atomic64_inc(&dev->wire_drops);
				continue;
			}
			__skb_queue_tail(&list, skb);
			total++;
		}
		osim_oq_put_list(dev, &ring->oq, &list, &done);
	}
	__skb_queue_purge(&done);
	return total;
}

/* ------------------------------------------------------- to the wire */

/*
 * The pieces of a frame the host gave: the instruction's one buffer, or
 * the buffers of its gather list, as the model reaches them.
 */
struct osim_src {
	unsigned int n;
	struct {
		const void *va;
		u32 len;
	} p[OCTEP_SDP_TX_GATHER_MAX];
};

/* Read the instruction's buffer list. Return: false if it is bad. */
static bool osim_src_init(struct osim_dev *dev, struct osim_src *src,
			  u64 dptr, u64 flags, u32 len)
{
	unsigned int n = FIELD_GET(OCTEP_SDP_TX_GATHER, flags), k;
	const struct octep_sdp_sg *sg;
	u32 sum = 0;

	if (!n) {
		src->n = 1;
		src->p[0].va = osim_dma_va(dev, dptr, len);
		src->p[0].len = len;
		return src->p[0].va;
	}
	sg = osim_dma_va(dev, dptr, n * sizeof(*sg));
	if (!sg)
		return false;
	for (k = 0; k < n; k++) {
		u64 l = le64_to_cpu(READ_ONCE(sg[k].len));

		if (!l || l & ~OCTEP_SDP_SG_LEN)
			return false;
		src->p[k].len = l;
		src->p[k].va = osim_dma_va(dev, le64_to_cpu(READ_ONCE(sg[k].addr)),
					   l);
		if (!src->p[k].va)
			return false;
		sum += l;
	}
	src->n = n;
	return sum == len;
}

/*
 * Copy @len bytes from offset @off of the frame to @to. Return: their sum
 * if @sum, else 0.
 */
static __wsum osim_src_copy(const struct osim_src *src, u32 off, void *to,
			    u32 len, bool sum)
{
	u32 done = 0, chunk, k;
	__wsum csum = 0;

	for (k = 0; k < src->n && done < len; k++) {
		if (off >= src->p[k].len) {
			off -= src->p[k].len;
			continue;
		}
		chunk = min(src->p[k].len - off, len - done);
		if (sum)
			csum = csum_block_add(csum,
					      csum_partial_copy_nocheck(src->p[k].va + off,
									to + done,
									chunk),
					      done);
		else
			memcpy(to + done, src->p[k].va + off, chunk);
		done += chunk;
		off = 0;
	}
	return csum;
}

/* Frames up to this size reach the peer in a buffer of their own size. */
#define OSIM_WIRE_COPYBREAK	256
/* Room in a paged frame's head for the headers the peer's stack pulls. */
#define OSIM_WIRE_HDR_ROOM	192
/* Room after a linear frame for ESP's trailer: padding, its length, ICV. */
#define OSIM_WIRE_TAILROOM	32

/*
 * A buffer for a frame of @len bytes the peer receives. The frame's bytes
 * go to a page of the wire's pool, recycled when the peer's stack frees
 * the skb as a NIC's receive buffers are: a fresh buffer a segment would
 * charge the model's allocator (Debian's kernel zeroes every new page, and
 * under -icount that costs more than the segment's copy) to the path
 * under test. The skb's head is a small slab buffer: the peer's GRO chains
 * segments it cannot merge through frag_list in the head's shared info,
 * and kmemleak scans slab memory but not pages, so with the head in the
 * page every skb a socket held on such a chain read as unreferenced.
 *
 * A frame the flow table may rewrite (@linear: ESP works on the linear
 * area), a jumbo one, and a small one get a linear slab buffer instead: a
 * page would charge 4 KB of truesize to the peer's socket for each small
 * datagram, and 100 in a burst overran a packet socket's default buffer
 * (the kernel's hw/csum.py lost them).
 *
 * Only the engine thread allocates (osim_tx() is its alone): the pool's
 * single consumer. Pages come back from any context through its ring.
 */
static struct sk_buff *osim_wire_skb(struct osim_dev *dev, u32 len,
				     bool linear)
{
	struct sk_buff *skb;
	struct page *page;

	if (linear || len <= OSIM_WIRE_COPYBREAK || len > PAGE_SIZE) {
		skb = alloc_skb(NET_SKB_PAD + NET_IP_ALIGN + len +
				OSIM_WIRE_TAILROOM, GFP_ATOMIC);
		if (!skb)
			return NULL;
		skb_reserve(skb, NET_SKB_PAD + NET_IP_ALIGN);
		skb->dev = dev->wire;
		return skb;
	}
	skb = alloc_skb(NET_SKB_PAD + NET_IP_ALIGN + OSIM_WIRE_HDR_ROOM,
			GFP_ATOMIC);
	if (!skb)
		return NULL;
	page = page_pool_dev_alloc_pages(dev->wire_pp);
	if (!page) {
		kfree_skb(skb);
		return NULL;
	}
	skb_reserve(skb, NET_SKB_PAD + NET_IP_ALIGN);
	skb_mark_for_recycle(skb);
	/* Empty until osim_wire_done(); a free before then returns the page. */
	skb_add_rx_frag(skb, 0, page, 0, 0, PAGE_SIZE);
	skb->dev = dev->wire;
	return skb;
}

/* Where a frame's @len bytes are written: the linear area or the page. */
static void *osim_wire_put(struct sk_buff *skb, u32 len)
{
	if (!skb_shinfo(skb)->nr_frags)
		return skb_put(skb, len);
	return skb_frag_address(&skb_shinfo(skb)->frags[0]);
}

/*
 * The frame's @len bytes are written. A paged one moves its Ethernet
 * header to the head (eth_type_trans() reads it there); the rest stays in
 * the page, where the peer's GRO reads the headers in place.
 */
static void osim_wire_done(struct sk_buff *skb, u32 len)
{
	skb_frag_t *frag;

	if (!skb_shinfo(skb)->nr_frags)
		return;
	frag = &skb_shinfo(skb)->frags[0];
	skb_put_data(skb, skb_frag_address(frag), ETH_HLEN);
	skb_frag_off_add(frag, ETH_HLEN);
	skb_frag_size_set(frag, len - ETH_HLEN);
	skb->len += len - ETH_HLEN;
	skb->data_len += len - ETH_HLEN;
}

static struct sk_buff *osim_tx_skb(struct osim_dev *dev, struct osim_iq *iq,
				   u32 len, u64 flags, u64 csum)
{
	struct sk_buff *skb;

	skb = osim_wire_skb(dev, len, FIELD_GET(OCTEP_SDP_TX_IPSEC_OP, flags) !=
				      OCTEP_SDP_TX_IPSEC_NONE);
	if (!skb) {
		iq->drop_link++;
		return NULL;
	}
	osim_cb(skb)->csum_req = flags & OCTEP_SDP_TX_CSUM;
	osim_cb(skb)->csum = csum;
	osim_cb(skb)->flags = flags;
	osim_cb(skb)->csum_done = false;
	osim_cb(skb)->seq = 0;
	return skb;
}

/*
 * Copy a frame out of the host's buffers. A checksum the instruction asks
 * for is computed in the same pass (as osim_copy_frame() does inbound) and
 * the request cleared; one it cannot honour (bad offsets) is left asked
 * for, and osim_tx() drops the frame.
 */
static void osim_iq_copy(struct sk_buff *skb, const struct osim_src *src,
			 u32 len)
{
	struct osim_skb_cb *cb = osim_cb(skb);
	u16 start = FIELD_GET(OCTEP_SDP_TX_CSUM_START, cb->csum);
	u16 off = FIELD_GET(OCTEP_SDP_TX_CSUM_OFFSET, cb->csum);
	void *to = osim_wire_put(skb, len);
	__sum16 sum;
	__wsum csum;

	if (!cb->csum_req || start + off + sizeof(sum) > len ||
	    start < ETH_HLEN) {
		osim_src_copy(src, 0, to, len, false);
		osim_wire_done(skb, len);
		return;
	}
	osim_src_copy(src, 0, to, start, false);
	csum = osim_src_copy(src, start, to + start, len - start, true);
	sum = csum_fold(csum);
	/* As skb_checksum_help(): a UDP sum of 0 means "none". */
	if (!sum)
		sum = CSUM_MANGLED_0;
	memcpy(to + start + off, &sum, sizeof(sum));
	osim_wire_done(skb, len);
	cb->csum_req = false;
	cb->csum_done = true;
}

/*
 * The most header bytes a TSO frame may have: Ethernet, IP, TCP; with ESP,
 * an outer IP header, ESP and its IV before them.
 */
#define OSIM_TSO_HDR_MAX	(ETH_HLEN + 60 + 16 + 60 + 60)

/*
 * The IP header at @nh of @hdr (@hl bytes): IPv4 (no fragment) if @v6 is
 * false, else IPv6 (its next header the protocol). Return: the offset
 * after it and in @proto the protocol, or 0 if it does not parse.
 */
static unsigned int osim_tso_l3(const u8 *hdr, u32 hl, unsigned int nh,
				bool v6, u8 *proto)
{
	if (!v6) {
		const struct iphdr *iph = (const void *)hdr + nh;

		if (hl < nh + sizeof(*iph) || iph->version != 4 ||
		    iph->ihl < 5 || ip_is_fragment(iph))
			return 0;
		*proto = iph->protocol;
		return nh + iph->ihl * 4;
	}
	if (hl < nh + sizeof(struct ipv6hdr) || hdr[nh] >> 4 != 6)
		return 0;
	*proto = ((const struct ipv6hdr *)(hdr + nh))->nexthdr;
	return nh + sizeof(struct ipv6hdr);
}

/*
 * ESP TSO: after the outer header (@t->th so far), ESP and its IV, then
 * TCP where the checksum starts (transport) or an inner IP header and TCP
 * (tunnel). Moves @t's network and TCP header to the inner ones.
 */
static bool osim_tso_esp(const u8 *hdr, u32 hl, u16 start, u64 seq,
			 struct osim_tso *t)
{
	const struct ip_esp_hdr *esph;
	unsigned int in;
	u8 proto;

	t->onh = t->nh;
	t->ov6 = t->v6;
	t->esp = t->th;
	t->seq = seq;
	in = t->esp + sizeof(*esph) + OSIM_IV_LEN;
	esph = (const void *)hdr + t->esp;
	if (hl < in || ntohl(esph->seq_no) != lower_32_bits(seq))
		return false;
	if (start == in) {
		t->nexthdr = IPPROTO_TCP;
		t->th = in;
		return true;
	}
	if (hl <= in)
		return false;
	t->v6 = hdr[in] >> 4 == 6;
	t->nh = in;
	t->th = osim_tso_l3(hdr, hl, in, t->v6, &proto);
	t->nexthdr = t->v6 ? IPPROTO_IPV6 : IPPROTO_IPIP;
	return t->th && proto == IPPROTO_TCP;
}

/*
 * Check a TSO instruction's headers (@hdr, @hl bytes of the frame) against
 * the contract in octep_sdp.h and fill @t. @esp_gso: the block announces
 * OCTEP_SDP_FEAT_ESP_GSO. Return: false if refused.
 */
static bool osim_tso_check(const u8 *hdr, u32 hl, u64 flags, u64 csum,
			   u64 seq, bool esp_gso, struct osim_tso *t)
{
	bool encrypt = FIELD_GET(OCTEP_SDP_TX_IPSEC_OP, flags) ==
		       OCTEP_SDP_TX_IPSEC_ENCRYPT;
	u16 start = FIELD_GET(OCTEP_SDP_TX_CSUM_START, csum);
	u16 off = FIELD_GET(OCTEP_SDP_TX_CSUM_OFFSET, csum);
	__be16 proto = ((const struct ethhdr *)hdr)->h_proto;
	u8 l4;

	if (!(flags & OCTEP_SDP_TX_CSUM) || (encrypt && !esp_gso))
		return false;
	t->mss = FIELD_GET(OCTEP_SDP_TX_MSS, csum);
	t->nh = ETH_HLEN;
	t->esp = 0;
	if (proto != htons(ETH_P_IP) && proto != htons(ETH_P_IPV6))
		return false;
	t->v6 = proto == htons(ETH_P_IPV6);
	t->th = osim_tso_l3(hdr, hl, t->nh, t->v6, &l4);
	if (!t->th || l4 != (encrypt ? IPPROTO_ESP : IPPROTO_TCP) ||
	    (encrypt && !osim_tso_esp(hdr, hl, start, seq, t)))
		return false;
	if (start != t->th || off != offsetof(struct tcphdr, check) ||
	    t->th + sizeof(struct tcphdr) > hl)
		return false;
	t->hlen = t->th + ((const struct tcphdr *)(hdr + t->th))->doff * 4;
	if (t->hlen < t->th + sizeof(struct tcphdr) || t->hlen > hl ||
	    t->hlen >= t->len || !t->mss)
		return false;
	t->fixedid = false;
	t->segs = DIV_ROUND_UP(t->len - t->hlen, t->mss);
	return true;
}

/* ESP TSO: the bytes of trailer and ICV after a segment of @seg bytes. */
static unsigned int osim_tso_esp_tail(const struct osim_tso *t,
				      unsigned int seg)
{
	unsigned int plen = seg - t->esp - sizeof(struct ip_esp_hdr) -
			    OSIM_IV_LEN;

	return ((4 - ((plen + 2) & 3)) & 3) + 2 + OSIM_ICV_LEN;
}

/*
 * ESP TSO: segment @i (@seg bytes at @to, its inner headers fixed) made an
 * ESP packet of @wlen bytes: the trailer as esp_output_fill_trailer()
 * writes it, room for the ICV, the ESP sequence number, and the outer
 * header's length (in tunnel mode its ID too: in transport mode
 * osim_tso_fix() did the one header there is) and checksum. The flow
 * table fills the IV and encrypts (osim_ipsec_tx()).
 */
static void osim_tso_esp_fix(const struct osim_tso *t, unsigned int i,
			     u8 *to, unsigned int seg, unsigned int wlen)
{
	struct ip_esp_hdr *esph = (void *)(to + t->esp);
	unsigned int padlen = wlen - seg - 2 - OSIM_ICV_LEN, k;
	u8 *tr = to + seg;

	for (k = 0; k < padlen; k++)
		tr[k] = k + 1;
	tr[padlen] = padlen;
	tr[padlen + 1] = t->nexthdr;
	memset(tr + padlen + 2, 0, OSIM_ICV_LEN);
	esph->seq_no = htonl(lower_32_bits(t->seq + i));
	if (t->ov6) {
		struct ipv6hdr *ip6h = (void *)(to + t->onh);

		ip6h->payload_len = htons(wlen - t->onh - sizeof(*ip6h));
	} else {
		struct iphdr *iph = (void *)(to + t->onh);

		iph->tot_len = htons(wlen - t->onh);
		if (t->nh != t->onh)
			iph->id = htons(ntohs(iph->id) + i);
		iph->check = 0;
		iph->check = ip_fast_csum(iph, iph->ihl);
	}
}

/*
 * Under iq->lock: cut a TSO frame into segments, each summed in its copy
 * from the host's buffers; with ESP, each segment gets its own ESP
 * header, trailer and sequence number, and the flow table encrypts it on
 * the way out as one packet. Return: bytes queued to @out. Not inlined:
 * its header copy would sit in the engine thread's frame on every loop.
 */
static noinline_for_stack u32
osim_iq_tso(struct osim_dev *dev, struct osim_iq *iq,
	    const struct osim_src *src, u32 len, u64 flags, u64 csum, u64 seq,
	    struct sk_buff_head *out)
{
	/* Pairs with debugfs writes of ipsec/features: any value goes. */
	bool esp_gso = dev->ipsec && (READ_ONCE(dev->ipsec->features) &
				      OCTEP_SDP_FEAT_ESP_GSO);
	u8 hdr[OSIM_TSO_HDR_MAX];
	u32 bytes = 0, i, seg, wlen;
	struct osim_tso t;
	struct sk_buff *skb;
	void *to;

	t.len = len;
	seg = min_t(u32, len, sizeof(hdr));
	osim_src_copy(src, 0, hdr, seg, false);
	if (!osim_tso_check(hdr, seg, flags, csum, seq, esp_gso, &t)) {
		iq->drop_bad++;
		return 0;
	}
	iq->tso++;
	if (t.esp)
		iq->esp_tso++;
	for (i = 0; i < t.segs; i++) {
		seg = osim_tso_len(&t, i);
		wlen = seg + (t.esp ? osim_tso_esp_tail(&t, seg) : 0);
		skb = osim_tx_skb(dev, iq, wlen, flags & ~OCTEP_SDP_TX_CSUM, 0);
		if (!skb)
			break;
		to = osim_wire_put(skb, wlen);
		memcpy(to, hdr, t.hlen);
		osim_tso_fix(&t, i, to,
			     osim_src_copy(src, t.hlen + i * t.mss,
					   to + t.hlen, seg - t.hlen, true));
		if (t.esp) {
			osim_tso_esp_fix(&t, i, to, seg, wlen);
			osim_cb(skb)->seq = t.seq + i;
			iq->esp_tso_segs++;
		}
		osim_wire_done(skb, wlen);
		osim_cb(skb)->csum_done = true;
		__skb_queue_tail(out, skb);
		iq->tso_segs++;
		bytes += wlen;
	}
	return bytes;
}

/*
 * Under iq->lock: read one instruction and copy its frame out, or its
 * segments. Return: bytes queued to @out.
 */
static u32 osim_iq_take(struct osim_dev *dev, struct osim_iq *iq,
			struct sk_buff_head *out)
{
	struct octep_sdp_instr *ins = &iq->instr[iq->head];
	u64 flags = le64_to_cpu(READ_ONCE(ins->flags));
	u64 csum = le64_to_cpu(READ_ONCE(ins->csum));
	u64 seq = le64_to_cpu(READ_ONCE(ins->seq));
	u32 len = FIELD_GET(OCTEP_SDP_TX_LEN, flags);
	struct osim_src src;
	struct sk_buff *skb;

	iq->head = iq->head + 1 == iq->rsize ? 0 : iq->head + 1;
	if (len < ETH_HLEN ||
	    !osim_src_init(dev, &src, le64_to_cpu(READ_ONCE(ins->dptr)),
			   flags, len)) {
		iq->drop_bad++;
		return 0;
	}
	if (!netif_carrier_ok(dev->wire)) {
		iq->drop_link++;
		return 0;
	}
	iq->pkts++;
	iq->bytes += len;
	if (FIELD_GET(OCTEP_SDP_TX_GATHER, flags))
		iq->gather++;
	if (flags & OCTEP_SDP_TX_TSO)
		return osim_iq_tso(dev, iq, &src, len, flags, csum, seq, out);
	skb = osim_tx_skb(dev, iq, len, flags, csum);
	if (!skb)
		return 0;
	osim_iq_copy(skb, &src, len);
	__skb_queue_tail(out, skb);
	return len;
}

/* One input ring's batch; its frames go to @out. Return: instructions. */
static int osim_tx_ring(struct osim_dev *dev, struct osim_iq *iq,
			struct sk_buff_head *out)
{
	u32 n, i, bytes, total = 0;
	unsigned long flags;

	spin_lock_irqsave(&iq->lock, flags);
	n = iq->enabled && !iq->hung ? min_t(u32, iq->pending, OSIM_BATCH) : 0;
	for (i = 0; i < n; i++) {
		bytes = osim_iq_take(dev, iq, out);
		if (!bytes)
			continue;
		total += bytes;
		if (!osim_bucket_take(dev, &dev->bucket_tx, bytes) ||
		    total >= OSIM_TX_BATCH_BYTES) {
			n = i + 1;
			break;
		}
	}
	if (n) {
		iq->pending -= n;
		/* Done: the host may reuse the instructions and buffers. */
		osim_cnt_add(&iq->cnt, n + osim_hostile_count(dev, &iq->cnt,
							      OSIM_HK_TX_COUNT));
	}
	spin_unlock_irqrestore(&iq->lock, flags);
	return n;
}

/* Frames the host sent, out of the wire. Return: instructions taken. */
static int osim_tx(struct osim_dev *dev, u64 *wait)
{
	struct sk_buff_head out;
	struct sk_buff *skb;
	unsigned int i;
	int n = 0;
	u64 w;

	__skb_queue_head_init(&out);
	for (i = 0; i < dev->num_rings; i++) {
		struct osim_iq *iq = &dev->rings[i].iq;

		if (!READ_ONCE(iq->pending))
			continue;
		w = osim_bucket_wait(dev, &dev->bucket_tx);
		if (w) {
			*wait = min(*wait, w);
			break;
		}
		n += osim_tx_ring(dev, iq, &out);
	}
	if (skb_queue_empty(&out))
		return n;

	local_bh_disable();
	while ((skb = __skb_dequeue(&out))) {
		struct osim_skb_cb *cb = osim_cb(skb);
		int esp;

		/* A checksum asked for that osim_iq_copy() could not place. */
		if (cb->csum_req) {
			atomic64_inc(&dev->wire_drops);
			kfree_skb(skb);
			continue;
		}
		/* Checksums first: ESP covers them (ipsec.h counts drops). */
		esp = osim_ipsec_tx(dev, skb, cb->flags, cb->seq);
		if (esp < 0) {
			kfree_skb(skb);
			continue;
		}
		/*
		 * The far end's NIC checks what the block summed: it cannot
		 * be wrong, so the peer's stack need not sum it again. Not
		 * for a frame the flow table encrypted (its stack decrypts
		 * and checks the inner frame itself).
		 */
		if (cb->csum_done && !esp)
			skb->ip_summed = CHECKSUM_UNNECESSARY;
		dev->wire_rx_pkts++;
		dev->wire_rx_bytes += skb->len;
		skb->protocol = eth_type_trans(skb, dev->wire);
		gro_cells_receive(&dev->gro, skb);
	}
	local_bh_enable();
	return n;
}

/* ------------------------------------------------------- the thread */

static int osim_engine_fn(void *arg)
{
	struct osim_dev *dev = arg;

	while (!kthread_should_stop()) {
		u64 wait = U64_MAX;
		s64 stall;
		int work;

		clear_bit(OSIM_F_KICK, &dev->flags);
		/* Clear the kick before looking, so a kick after is not lost. */
		smp_mb__after_atomic();

		stall = ktime_to_ns(ktime_sub(READ_ONCE(dev->stall_until),
					      ktime_get()));
		if (stall > 0) {
			ktime_t t = ns_to_ktime(stall);

			set_current_state(TASK_INTERRUPTIBLE);
			schedule_hrtimeout(&t, HRTIMER_MODE_REL);
			continue;
		}

		if (unlikely(test_bit(OSIM_F_GONE, &dev->flags))) {
			struct sk_buff *skb;

			/* Off the bus: what the wire sends is lost. */
			work = 0;
			while ((skb = skb_dequeue(&dev->wire_q))) {
				kfree_skb(skb);
				work++;
			}
			atomic64_add(work, &dev->wire_drops);
			osim_wire_wake(dev);
		} else {
			work = osim_rx_wire(dev, &wait);
			work += osim_tx(dev, &wait);
			work += osim_rx_inject(dev);
		}
		if (work) {
			cond_resched();
			continue;
		}

		set_current_state(TASK_INTERRUPTIBLE);
		/* Pairs with test_and_set_bit() in osim_engine_kick(). */
		if (test_bit(OSIM_F_KICK, &dev->flags) || kthread_should_stop()) {
			__set_current_state(TASK_RUNNING);
			continue;
		}
		if (wait != U64_MAX) {
			ktime_t t = ns_to_ktime(wait);

			schedule_hrtimeout(&t, HRTIMER_MODE_REL);
		} else {
			schedule();
		}
		dev->engine_wakeups++;
	}
	return 0;
}

/**
 * osim_engine_kick() - tell the engine there is work
 * @dev: device
 *
 * Any context. Wakes the thread only if no kick is pending already.
 */
void osim_engine_kick(struct osim_dev *dev)
{
	if (!test_and_set_bit(OSIM_F_KICK, &dev->flags))
		wake_up_process(dev->engine);
}

/**
 * osim_engine_set_cpu() - bind the engine to a CPU
 * @dev: device
 * @cpu: CPU, or -1 for any
 *
 * Return: 0 or a negative errno.
 */
int osim_engine_set_cpu(struct osim_dev *dev, int cpu)
{
	int err;

	if (cpu >= 0 && (cpu >= nr_cpu_ids || !cpu_online(cpu)))
		return -EINVAL;
	err = set_cpus_allowed_ptr(dev->engine,
				   cpu < 0 ? cpu_possible_mask : cpumask_of(cpu));
	if (!err)
		WRITE_ONCE(dev->engine_cpu, cpu);
	return err;
}

/**
 * osim_engine_start() - start the device's engine thread
 * @dev: device, its rings and wire ready
 *
 * Return: 0 or a negative errno.
 */
int osim_engine_start(struct osim_dev *dev)
{
	struct task_struct *t;

	t = kthread_create(osim_engine_fn, dev, "octep_sim%u", dev->id);
	if (IS_ERR(t))
		return PTR_ERR(t);
	/* Kept until osim_engine_stop(): kicks may come after the thread ends. */
	get_task_struct(t);
	dev->engine = t;
	dev->engine_cpu = -1;
	wake_up_process(t);
	return 0;
}

/**
 * osim_engine_stop() - stop the engine thread
 * @dev: device
 *
 * Frames still queued from the wire are dropped by the wire's teardown.
 * The task is kept (a late kick wakes a dead thread, harmlessly) until
 * osim_engine_release().
 */
void osim_engine_stop(struct osim_dev *dev)
{
	if (dev->engine)
		kthread_stop(dev->engine);
}

/**
 * osim_engine_release() - drop the engine's task once nothing can kick it
 * @dev: device; its wire and debugfs are gone
 */
void osim_engine_release(struct osim_dev *dev)
{
	if (!dev->engine)
		return;
	put_task_struct(dev->engine);
	dev->engine = NULL;
}
