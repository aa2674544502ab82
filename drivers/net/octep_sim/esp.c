// SPDX-License-Identifier: GPL-2.0
/*
 * octep_sim: ESP on the engine's two paths, rfc4106 AES-GCM through the
 * kernel crypto API.
 *
 * Out (host to wire), as the instruction's OCTEP_SDP_TX_IPSEC_OP says:
 *  - ENCRYPT (crypto offload): the stack built the ESP header (SPI and the
 *    low half of the sequence number), the trailer (padding, pad length,
 *    next header) and room for the IV and the ICV, and set the IP length
 *    (Documentation/networking/xfrm_device.rst). The block writes the IV
 *    (the 64-bit sequence number: unique per key, as RFC 4106 asks),
 *    encrypts in place and writes the ICV.
 *  - ENCAP (packet offload): the frame is plain; the block inserts (or,
 *    in tunnel mode, prepends with a new outer header) ESP with its own
 *    sequence number, pads, encrypts and writes the ICV.
 * In (wire to host): an ESP packet whose SPI and destination name an
 * inbound entry is checked against the replay window, decrypted and
 * verified, and (packet offload) stripped back to the plain packet; the
 * response header gets the entry's handle and a status. ESP with no entry
 * goes up unchanged (the host's software may hold its SA).
 *
 * An entry with ESPINUDP (RFC 3948, IPv4) carries ESP in UDP: ENCAP adds
 * the UDP header (checksum 0), ENCRYPT finds ESP after the stack's; in,
 * UDP to an entry's port is ESP when its payload says so (osim_natt_kind()).
 *
 * Frames are Ethernet, with at most one VLAN tag; skb->data is the MAC
 * header on both paths.
 */
#include <crypto/aead.h>
#include <linux/bitfield.h>
#include <linux/etherdevice.h>
#include <linux/if_vlan.h>
#include <linux/ip.h>
#include <linux/ipv6.h>
#include <linux/scatterlist.h>
#include <linux/udp.h>
#include <linux/unaligned.h>
#include <net/dsfield.h>
#include <net/esp.h>
#include <net/ip.h>
#include <net/ipv6.h>

#include "octep_sim.h"
#include "ipsec.h"

static void osim_ipsec_inc(struct osim_ipsec *ips, enum osim_ipsec_cnt c)
{
	atomic64_inc(&ips->cnt[c]);
}

/**
 * osim_parse() - parse a frame's L3 header
 * @skb: the frame; its headers linear
 * @p: filled
 *
 * Return: 0, -EINVAL for a malformed IP packet, -EPROTONOSUPPORT for
 * anything but IPv4 and IPv6.
 */
int osim_parse(struct sk_buff *skb, struct osim_pkt *p)
{
	const struct ethhdr *eth = (const struct ethhdr *)skb->data;
	__be16 proto;
	int off;

	memset(p, 0, sizeof(*p));
	if (skb->len < ETH_HLEN)
		return -EINVAL;
	proto = eth->h_proto;
	p->l3 = ETH_HLEN;
	/* One 802.1Q or 802.1ad tag: a VLAN device's frames. */
	if (eth_type_vlan(proto)) {
		const struct vlan_hdr *vh;

		if (skb->len < ETH_HLEN + VLAN_HLEN)
			return -EINVAL;
		vh = (const struct vlan_hdr *)(skb->data + ETH_HLEN);
		proto = vh->h_vlan_encapsulated_proto;
		p->l3 += VLAN_HLEN;
	}
	if (proto == htons(ETH_P_IP)) {
		const struct iphdr *iph;

		if (skb->len < p->l3 + sizeof(*iph))
			return -EINVAL;
		iph = (const struct iphdr *)(skb->data + p->l3);
		if (iph->version != 4 || iph->ihl < 5 ||
		    ntohs(iph->tot_len) < iph->ihl * 4 ||
		    p->l3 + ntohs(iph->tot_len) > skb->len)
			return -EINVAL;
		p->family = 4;
		p->l4 = p->l3 + iph->ihl * 4;
		p->end = p->l3 + ntohs(iph->tot_len);
		p->proto = iph->protocol;
		p->frag = ip_is_fragment(iph);
		return 0;
	}
	if (proto == htons(ETH_P_IPV6)) {
		const struct ipv6hdr *ip6h;
		__be16 frag_off = 0;
		u8 nh;

		if (skb->len < p->l3 + sizeof(*ip6h))
			return -EINVAL;
		ip6h = (const struct ipv6hdr *)(skb->data + p->l3);
		if (ip6h->version != 6 ||
		    p->l3 + sizeof(*ip6h) + ntohs(ip6h->payload_len) > skb->len)
			return -EINVAL;
		p->family = 6;
		p->end = p->l3 + sizeof(*ip6h) + ntohs(ip6h->payload_len);
		nh = ip6h->nexthdr;
		off = ipv6_skip_exthdr(skb, p->l3 + sizeof(*ip6h), &nh,
				       &frag_off);
		if (off < 0)
			return -EINVAL;
		p->l4 = off;
		p->proto = nh;
		p->frag = nh == NEXTHDR_FRAGMENT || frag_off;
		return 0;
	}
	return -EPROTONOSUPPORT;
}

/* Make @skb linear and writable, headers parsed. */
static int osim_prepare(struct sk_buff *skb, struct osim_pkt *p)
{
	if (skb_linearize_cow(skb))
		return -ENOMEM;
	return osim_parse(skb, p);
}

/*
 * Run the cipher over one ESP packet in place. @esph: the ESP header;
 * @data: what follows the IV; @len: bytes to encrypt (the ICV follows
 * them), or to decrypt including the ICV. Returns 0, -EBADMSG when the ICV
 * does not verify, or another negative errno.
 */
static int osim_esp_crypt(struct osim_flow *f, const struct ip_esp_hdr *esph,
			  u32 seq_hi, const u8 *iv, u8 *data,
			  unsigned int len, bool enc)
{
	unsigned int reqsize = ALIGN(sizeof(struct aead_request) +
				     crypto_aead_reqsize(f->aead), 8);
	struct scatterlist sg[2];
	struct aead_request *req;
	unsigned int alen = 0;
	u8 *buf, *aad, *ivb;
	__be32 hi;
	int err;

	/* The AAD and IV are in the same allocation: not on the stack. */
	buf = kmalloc(reqsize + 32, GFP_ATOMIC);
	if (!buf)
		return -ENOMEM;
	req = (struct aead_request *)buf;
	aad = buf + reqsize;
	ivb = aad + 24;
	memcpy(aad, &esph->spi, 4);
	alen = 4;
	if (f->esn) {
		hi = htonl(seq_hi);
		memcpy(aad + alen, &hi, 4);
		alen += 4;
	}
	memcpy(aad + alen, &esph->seq_no, 4);
	alen += 4;
	/* rfc4106 takes the IV as the last 8 bytes of the associated data. */
	memcpy(aad + alen, iv, OSIM_IV_LEN);
	memcpy(ivb, iv, OSIM_IV_LEN);

	sg_init_table(sg, 2);
	sg_set_buf(&sg[0], aad, alen + OSIM_IV_LEN);
	sg_set_buf(&sg[1], data, enc ? len + OSIM_ICV_LEN : len);
	aead_request_set_tfm(req, f->aead);
	aead_request_set_callback(req, 0, NULL, NULL);
	aead_request_set_ad(req, alen + OSIM_IV_LEN);
	aead_request_set_crypt(req, sg, sg, len, ivb);
	err = enc ? crypto_aead_encrypt(req) : crypto_aead_decrypt(req);
	kfree_sensitive(buf);
	return err;
}

static void osim_fill_iv(u8 *iv, u64 seq)
{
	__be64 v = cpu_to_be64(seq);

	memcpy(iv, &v, OSIM_IV_LEN);
}

/*
 * Crypto offload, out: the ESP packet is built; fill IV, encrypt, ICV.
 * @seq: an ESP TSO segment's 64-bit sequence number (the instruction's,
 * osim_iq_tso()), or 0: the high half inferred from the entry's.
 */
static int osim_esp_encrypt(struct osim_flow *f, struct sk_buff *skb,
			    const struct osim_pkt *p, u64 seq)
{
	unsigned int hlen = sizeof(struct ip_esp_hdr) + OSIM_IV_LEN;
	struct ip_esp_hdr *esph;
	unsigned int len;
	u8 *iv;

	unsigned int eoff = p->l4;

	/* ESP in UDP: the stack built the UDP header (esp_output_udp_encap()). */
	if (f->encap) {
		const struct udphdr *uh = (struct udphdr *)(skb->data + p->l4);

		eoff += sizeof(*uh);
		if (p->frag || p->proto != IPPROTO_UDP || p->end < eoff ||
		    ntohs(uh->len) != p->end - p->l4)
			return -EINVAL;
	} else if (p->frag || p->proto != IPPROTO_ESP) {
		return -EINVAL;
	}
	if (p->end < eoff + hlen + 2 + OSIM_ICV_LEN)
		return -EINVAL;
	esph = (struct ip_esp_hdr *)(skb->data + eoff);
	if (esph->spi != f->spi)
		return -EINVAL;
	len = p->end - eoff - hlen - OSIM_ICV_LEN;

	spin_lock_bh(&f->lock);
	if (seq) {
		/* Past 2^32 - 1 without ESN: the number would wrap. */
		if (!f->esn && seq > U32_MAX) {
			spin_unlock_bh(&f->lock);
			return -EOVERFLOW;
		}
	} else if (f->esn) {
		seq = osim_seq_infer(f->seq, ntohl(esph->seq_no), 1U << 31);
	} else {
		seq = ntohl(esph->seq_no);
	}
	if (seq > f->seq)
		f->seq = seq;
	f->packets++;
	f->bytes += p->end - p->l3;
	spin_unlock_bh(&f->lock);

	iv = skb->data + eoff + sizeof(*esph);
	osim_fill_iv(iv, seq);
	return osim_esp_crypt(f, esph, upper_32_bits(seq), iv, iv + OSIM_IV_LEN,
			      len, true);
}

/* Grow @skb by @head in front (headers moved by the caller) and @tail. */
static int osim_make_room(struct sk_buff *skb, unsigned int head,
			  unsigned int tail)
{
	int nh = max_t(int, 0, (int)head - (int)skb_headroom(skb));
	int nt = max_t(int, 0, (int)tail - (int)skb_tailroom(skb));

	if (!nh && !nt && !skb_cloned(skb))
		return 0;
	return pskb_expand_head(skb, nh, nt, GFP_ATOMIC);
}

/*
 * Transport mode, out: where ESP goes, and (in @nhoff) the offset of the
 * next-header byte that is to name it. IPv4: after the header. IPv6: as
 * ip6_find_1stfragopt() places it, after a hop-by-hop and a routing header
 * and a destination options header unless a routing header came before
 * it. Return: the offset, or -EINVAL for headers that do not parse.
 */
static int osim_esp_place(const struct sk_buff *skb, const struct osim_pkt *p,
			  unsigned int *nhoff)
{
	unsigned int off = p->l3 + sizeof(struct ipv6hdr);
	bool rthdr = false;

	if (p->family == 4) {
		*nhoff = p->l3 + offsetof(struct iphdr, protocol);
		return p->l4;
	}
	*nhoff = p->l3 + offsetof(struct ipv6hdr, nexthdr);
	for (;;) {
		switch (skb->data[*nhoff]) {
		case NEXTHDR_HOP:
			break;
		case NEXTHDR_ROUTING:
			rthdr = true;
			break;
		case NEXTHDR_DEST:
			if (rthdr)
				return off;
			break;
		default:
			return off;
		}
		if (off + 2 > p->end)
			return -EINVAL;
		*nhoff = off;
		off += (skb->data[off + 1] + 1) * 8;
		if (off > p->end)
			return -EINVAL;
	}
}

/* Packet offload, out: build ESP around the plain packet and encrypt. */
/*
 * Under f->lock: is the entry at its hard limit? As
 * xfrm_state_check_expire(), the count before this packet decides.
 */
static bool osim_flow_expired(const struct osim_flow *f)
{
	return (f->hard_packets && f->packets >= f->hard_packets) ||
	       (f->hard_bytes && f->bytes >= f->hard_bytes);
}

static int osim_esp_encap(struct osim_ipsec *ips, struct osim_flow *f,
			  struct sk_buff *skb, const struct osim_pkt *p)
{
	unsigned int hlen = sizeof(struct ip_esp_hdr) + OSIM_IV_LEN;
	bool tunnel = f->mode == OCTEP_SDP_FLOW_MODE_TUNNEL;
	unsigned int plen, padlen, tail, head, outer = 0, i, nhoff = 0;
	unsigned int udp = f->encap ? sizeof(struct udphdr) : 0;
	u8 proto = f->encap ? IPPROTO_UDP : IPPROTO_ESP;
	u8 l2, h_source[ETH_ALEN], h_dest[ETH_ALEN];
	__be16 sport, dport;
	struct ip_esp_hdr *esph;
	struct udphdr *uh;
	u8 nexthdr, dsfield;
	int ins = 0;
	u8 *trailer, *iv;
	u16 ip_id;
	u64 seq;

	if (tunnel) {
		if (f->inner_family && f->inner_family != p->family)
			return -EINVAL;
		plen = p->end - p->l3;
		nexthdr = p->family == 4 ? IPPROTO_IPIP : IPPROTO_IPV6;
		outer = f->family == 4 ? sizeof(struct iphdr) :
					 sizeof(struct ipv6hdr);
		if (p->family == 4)
			dsfield = ipv4_get_dsfield((struct iphdr *)
						   (skb->data + p->l3));
		else
			dsfield = ipv6_get_dsfield((struct ipv6hdr *)
						   (skb->data + p->l3));
	} else {
		/* Transport: ESP goes where the stack's ESP would put it. */
		if (p->family != f->family || p->frag)
			return -EINVAL;
		ins = osim_esp_place(skb, p, &nhoff);
		if (ins < 0)
			return -EINVAL;
		plen = p->end - ins;
		nexthdr = skb->data[nhoff];
		dsfield = 0;
	}
	padlen = (4 - ((plen + 2) & 3)) & 3;
	tail = padlen + 2 + OSIM_ICV_LEN;
	head = udp + hlen + outer;

	spin_lock_bh(&f->lock);
	if (!f->esn && f->seq >= U32_MAX) {
		spin_unlock_bh(&f->lock);
		osim_ipsec_inc(ips, OSIM_TX_SEQ_OVERFLOW);
		return -EOVERFLOW;
	}
	if (osim_flow_expired(f)) {
		spin_unlock_bh(&f->lock);
		osim_ipsec_inc(ips, OSIM_TX_EXPIRED);
		return -EOVERFLOW;
	}
	/*
	 * No next hop: dropped before the entry counts it or spends a
	 * sequence number; nothing goes to a guessed address.
	 */
	if (f->l2 == OCTEP_SDP_FLOW_L2_HOLD) {
		spin_unlock_bh(&f->lock);
		osim_ipsec_inc(ips, OSIM_TX_NO_NEIGH);
		return -EOVERFLOW;
	}
	/* As the last FLOW_L2 left them. */
	l2 = f->l2;
	ether_addr_copy(h_source, f->h_source);
	ether_addr_copy(h_dest, f->h_dest);
	seq = ++f->seq;
	ip_id = f->ip_id++;
	/* As the last FLOW_ENCAP left them. */
	sport = f->sport;
	dport = f->dport;
	f->packets++;
	/*
	 * What the stack's xfrm_output_one() counts: the plain text ESP
	 * carries (the inner packet, or the transport payload).
	 */
	f->bytes += plen;
	osim_flow_changed(ips, f);
	spin_unlock_bh(&f->lock);

	/* Drop any link-layer padding after the IP packet. */
	if (skb->len > p->end)
		skb_trim(skb, p->end);
	if (osim_make_room(skb, head, tail))
		return -ENOMEM;
	trailer = skb_put(skb, tail);
	for (i = 0; i < padlen; i++)
		trailer[i] = i + 1;
	trailer[padlen] = padlen;
	trailer[padlen + 1] = nexthdr;
	memset(trailer + padlen + 2, 0, OSIM_ICV_LEN);

	if (tunnel) {
		struct ethhdr *eth;
		__be16 *etype;

		skb_push(skb, head);
		memmove(skb->data, skb->data + head, p->l3);
		eth = (struct ethhdr *)skb->data;
		/*
		 * The host's MACs; without them the block addresses the
		 * link's far end itself (and keeps the host's source).
		 */
		if (l2 == OCTEP_SDP_FLOW_L2_SET) {
			ether_addr_copy(eth->h_dest, h_dest);
			ether_addr_copy(eth->h_source, h_source);
		} else {
			ether_addr_copy(eth->h_dest, ips->dev->wire->dev_addr);
		}
		/* The EtherType in front of IP, after any VLAN tag. */
		etype = (__be16 *)(skb->data + p->l3) - 1;
		if (f->family == 4) {
			struct iphdr *iph = (struct iphdr *)(skb->data + p->l3);

			*etype = htons(ETH_P_IP);
			memset(iph, 0, sizeof(*iph));
			iph->version = 4;
			iph->ihl = 5;
			iph->tos = dsfield;
			iph->tot_len = htons(outer + udp + hlen + plen + tail);
			iph->id = htons(ip_id);
			iph->ttl = 64;
			iph->protocol = proto;
			memcpy(&iph->saddr, f->saddr, 4);
			memcpy(&iph->daddr, f->daddr, 4);
			ip_send_check(iph);
		} else {
			struct ipv6hdr *ip6h = (struct ipv6hdr *)(skb->data +
								  p->l3);

			*etype = htons(ETH_P_IPV6);
			ip6_flow_hdr(ip6h, dsfield, 0);
			ip6h->payload_len = htons(hlen + plen + tail);
			ip6h->nexthdr = IPPROTO_ESP;
			ip6h->hop_limit = 64;
			memcpy(&ip6h->saddr, f->saddr, 16);
			memcpy(&ip6h->daddr, f->daddr, 16);
		}
		uh = (struct udphdr *)(skb->data + p->l3 + outer);
	} else {
		skb_push(skb, udp + hlen);
		memmove(skb->data, skb->data + udp + hlen, ins);
		skb->data[nhoff] = proto;
		if (p->family == 4) {
			struct iphdr *iph = (struct iphdr *)(skb->data + p->l3);

			iph->tot_len = htons(ins - p->l3 + udp + hlen + plen +
					     tail);
			ip_send_check(iph);
		} else {
			struct ipv6hdr *ip6h = (struct ipv6hdr *)(skb->data +
								  p->l3);

			ip6h->payload_len = htons(ins - p->l3 - sizeof(*ip6h) +
						  hlen + plen + tail);
		}
		uh = (struct udphdr *)(skb->data + ins);
	}
	/* RFC 3948: the UDP checksum of ESP in UDP over IPv4 may be 0. */
	if (udp) {
		uh->source = sport;
		uh->dest = dport;
		uh->len = htons(udp + hlen + plen + tail);
		uh->check = 0;
	}
	esph = (struct ip_esp_hdr *)((u8 *)uh + udp);
	skb_reset_mac_header(skb);
	esph->spi = f->spi;
	esph->seq_no = htonl(lower_32_bits(seq));
	iv = (u8 *)(esph + 1);
	osim_fill_iv(iv, seq);
	return osim_esp_crypt(f, esph, upper_32_bits(seq), iv, iv + OSIM_IV_LEN,
			      plen + padlen + 2, true);
}

/* CLASSIFY: see osim_ipsec_tx(). */
static int osim_ipsec_classify(struct osim_ipsec *ips, struct sk_buff *skb)
{
	struct osim_flow *f = NULL;
	enum osim_verdict v;
	struct osim_pkt p;
	unsigned int len;
	int err;

	/* Pairs with WRITE_ONCE() in osim_pol_add(): a stale 0 is a race lost. */
	if (!READ_ONCE(ips->npols[OSIM_FLOW_OUT]))
		return 0;
	/* Not IP, or not IP that parses: no selector covers it. */
	if (osim_prepare(skb, &p))
		return 0;
	len = skb->len;
	rcu_read_lock();
	v = osim_pol_out(ips, skb, &p, &f);
	if (v != OSIM_ENCAP) {
		rcu_read_unlock();
		return v == OSIM_PASS ? 0 : -EPERM;
	}
	err = osim_esp_encap(ips, f, skb, &p);
	rcu_read_unlock();
	if (err) {
		if (err != -EOVERFLOW)
			osim_ipsec_inc(ips, OSIM_TX_BAD);
		return err;
	}
	osim_ipsec_inc(ips, OSIM_TX_ENCAP);
	if (f->encap)
		osim_ipsec_inc(ips, OSIM_TX_NATT);
	osim_ipsec_inc(ips, OSIM_TX_CLASSIFY_ENCAP);
	atomic64_add(len, &ips->cnt[OSIM_TX_CLASSIFY_BYTES]);
	return 1;
}

/**
 * osim_ipsec_tx() - apply the instruction's IPsec operation to a frame
 * @dev: model device
 * @skb: the frame from the host, checksums already done
 * @flags: the instruction's flags word
 * @seq: ENCRYPT: an ESP TSO segment's sequence number, else 0
 *
 * CLASSIFY: the policy table decides (osim_pol_out()): the frame goes as
 * it is, is dropped, or is encapsulated by the entry the policy names.
 * ENCRYPT and ENCAP: the named entry, or a drop; ENCAP also drops what an
 * outbound block policy of the table takes (osim_pol_named()).
 *
 * Return: 1 to send @skb to the wire with ESP applied, 0 to send it as it
 * is, or a negative errno to drop it (counted in debugfs ipsec/).
 */
int osim_ipsec_tx(struct osim_dev *dev, struct sk_buff *skb, u64 flags,
		  u64 seq)
{
	u8 op = FIELD_GET(OCTEP_SDP_TX_IPSEC_OP, flags);
	struct osim_ipsec *ips = dev->ipsec;
	struct osim_flow *f;
	struct osim_pkt p;
	int err;

	if (op == OCTEP_SDP_TX_IPSEC_NONE)
		return 0;
	if (!ips)
		return -ENODEV;
	if (op == OCTEP_SDP_TX_IPSEC_CLASSIFY)
		return osim_ipsec_classify(ips, skb);

	rcu_read_lock();
	f = osim_flow_lookup_out(ips, FIELD_GET(OCTEP_SDP_TX_FLOW_HANDLE,
						flags));
	if (!f || (op == OCTEP_SDP_TX_IPSEC_ENCRYPT &&
		   f->type != OCTEP_SDP_FLOW_TYPE_CRYPTO) ||
	    (op == OCTEP_SDP_TX_IPSEC_ENCAP &&
	     f->type != OCTEP_SDP_FLOW_TYPE_PACKET) ||
	    (op != OCTEP_SDP_TX_IPSEC_ENCRYPT &&
	     op != OCTEP_SDP_TX_IPSEC_ENCAP)) {
		rcu_read_unlock();
		osim_ipsec_inc(ips, OSIM_TX_NO_ENTRY);
		return -ENOENT;
	}
	err = osim_prepare(skb, &p);
	if (!err && op == OCTEP_SDP_TX_IPSEC_ENCAP &&
	    osim_pol_named(ips, skb, &p)) {
		rcu_read_unlock();
		return -EPERM;
	}
	if (!err) {
		if (op == OCTEP_SDP_TX_IPSEC_ENCRYPT)
			err = osim_esp_encrypt(f, skb, &p, seq);
		else
			err = osim_esp_encap(ips, f, skb, &p);
	}
	if (!err && f->encap)
		osim_ipsec_inc(ips, OSIM_TX_NATT);
	rcu_read_unlock();
	if (err) {
		if (err != -EOVERFLOW)
			osim_ipsec_inc(ips, OSIM_TX_BAD);
		return err;
	}
	osim_ipsec_inc(ips, op == OCTEP_SDP_TX_IPSEC_ENCRYPT ?
			    OSIM_TX_ENCRYPT : OSIM_TX_ENCAP);
	return 1;
}

/*
 * Packet offload, in: strip ESP (at @eoff: after UDP for ESP in UDP) from
 * a verified, decrypted packet.
 */
static int osim_esp_decap(struct osim_flow *f, struct sk_buff *skb,
			  const struct osim_pkt *p, unsigned int eoff)
{
	unsigned int hlen = eoff - p->l4 + sizeof(struct ip_esp_hdr) +
			    OSIM_IV_LEN;
	unsigned int start = p->l4 + hlen, plen, newend;
	u8 padlen, nexthdr;

	plen = p->end - start - OSIM_ICV_LEN;
	padlen = skb->data[start + plen - 2];
	nexthdr = skb->data[start + plen - 1];
	if (padlen + 2 > plen)
		return -EINVAL;
	newend = start + plen - padlen - 2;

	if (f->mode == OCTEP_SDP_FLOW_MODE_TUNNEL) {
		__be16 *etype;

		if (nexthdr != IPPROTO_IPIP && nexthdr != IPPROTO_IPV6)
			return -EINVAL;
		skb_trim(skb, newend);
		memmove(skb->data + start - p->l3, skb->data, p->l3);
		skb_pull(skb, start - p->l3);
		etype = (__be16 *)(skb->data + p->l3) - 1;
		*etype = htons(nexthdr == IPPROTO_IPIP ? ETH_P_IP : ETH_P_IPV6);
	} else {
		if (p->family == 6 && p->l4 != p->l3 + sizeof(struct ipv6hdr))
			return -EINVAL;
		skb_trim(skb, newend);
		memmove(skb->data + hlen, skb->data, p->l4);
		skb_pull(skb, hlen);
		if (p->family == 4) {
			struct iphdr *iph = (struct iphdr *)(skb->data + p->l3);

			iph->protocol = nexthdr;
			iph->tot_len = htons(skb->len - p->l3);
			ip_send_check(iph);
		} else {
			struct ipv6hdr *ip6h = (struct ipv6hdr *)(skb->data +
								  p->l3);

			ip6h->nexthdr = nexthdr;
			ip6h->payload_len = htons(skb->len - p->l3 -
						  sizeof(*ip6h));
		}
	}
	skb_reset_mac_header(skb);
	return 0;
}

static u64 osim_rx_ext(u8 status, u32 handle)
{
	return FIELD_PREP(OCTEP_SDP_RX_IPSEC_STATUS, status) |
	       FIELD_PREP(OCTEP_SDP_RX_FLOW_HANDLE, handle);
}

/* What a UDP datagram from the wire is to the block (RFC 3948 2.2). */
enum osim_natt_kind {
	OSIM_NATT_NO,		/* not to a port an ESPINUDP entry takes */
	OSIM_NATT_PASS,		/* keepalive or IKE: up as it is */
	OSIM_NATT_ESP,		/* ESP after the UDP header */
	OSIM_NATT_BAD,		/* UDP length and IP length disagree */
};

static enum osim_natt_kind osim_natt_kind(struct osim_ipsec *ips,
					  const struct sk_buff *skb,
					  const struct osim_pkt *p)
{
	const struct udphdr *uh;
	struct udphdr _uh;
	unsigned int len;
	const u8 *d;
	u8 _d[4];

	if (p->family != 4 || p->proto != IPPROTO_UDP || p->frag ||
	    xa_empty(&ips->natt_ports))
		return OSIM_NATT_NO;
	if (p->end < p->l4 + sizeof(*uh))
		return OSIM_NATT_NO;
	uh = skb_header_pointer(skb, p->l4, sizeof(_uh), &_uh);
	if (!uh || !xa_load(&ips->natt_ports, (__force u16)uh->dest))
		return OSIM_NATT_NO;
	if (ntohs(uh->len) != p->end - p->l4)
		return OSIM_NATT_BAD;
	len = p->end - p->l4 - sizeof(*uh);
	if (!len)
		return OSIM_NATT_PASS;
	d = skb_header_pointer(skb, p->l4 + sizeof(*uh), min(len, 4U), _d);
	if (!d)
		return OSIM_NATT_BAD;
	/* As xfrm4_udp_encap_rcv(): a zero non-ESP marker is IKE's. */
	if (len > sizeof(struct ip_esp_hdr) && get_unaligned((const u32 *)d))
		return OSIM_NATT_ESP;
	return OSIM_NATT_PASS;
}

/**
 * osim_ipsec_rx() - apply the inbound flow table to a frame from the wire
 * @dev: model device
 * @skb: the frame
 *
 * Return: the response header ext bits to add (IPsec status and handle),
 * 0 for a frame that is not ESP or that the table does not look into.
 */
u64 osim_ipsec_rx(struct osim_dev *dev, struct sk_buff *skb)
{
	unsigned int hlen = sizeof(struct ip_esp_hdr) + OSIM_IV_LEN;
	struct osim_ipsec *ips = dev->ipsec;
	enum osim_natt_kind natt;
	struct ip_esp_hdr *esph;
	unsigned int plen, eoff;
	struct udphdr *uh = NULL;
	const void *daddr;
	struct osim_flow *f;
	struct osim_pkt p;
	u8 status, padlen, *iv;
	u64 csum = 0;
	u32 handle;
	u64 seq;
	int err;

	/*
	 * Pairs with WRITE_ONCE() in flow.c and policy.c: a stale 0 only
	 * skips a look.
	 */
	if (!ips || (!READ_ONCE(ips->used[OSIM_FLOW_IN]) &&
		     !READ_ONCE(ips->npols[OSIM_FLOW_IN])))
		return 0;
	/* Look before copying: most frames are not ESP. */
	if (!pskb_may_pull(skb, min_t(unsigned int, skb->len, 128)) ||
	    osim_parse(skb, &p))
		return 0;
	natt = osim_natt_kind(ips, skb, &p);
	if (natt == OSIM_NATT_BAD) {
		osim_ipsec_inc(ips, OSIM_RX_MALFORMED);
		return osim_rx_ext(OCTEP_SDP_IPSEC_MALFORMED, 0);
	}
	if (natt == OSIM_NATT_PASS)
		osim_ipsec_inc(ips, OSIM_RX_NATT_PASS);
	if (natt != OSIM_NATT_ESP && (p.proto != IPPROTO_ESP || p.frag)) {
		rcu_read_lock();
		status = osim_pol_in(ips, skb, &p, NULL);
		rcu_read_unlock();
		return status ? osim_rx_ext(status, 0) : 0;
	}
	if (osim_prepare(skb, &p))
		return 0;
	eoff = p.l4;
	if (natt == OSIM_NATT_ESP) {
		uh = (struct udphdr *)(skb->data + p.l4);
		eoff += sizeof(*uh);
	}
	if (p.end < eoff + sizeof(*esph)) {
		osim_ipsec_inc(ips, OSIM_RX_MALFORMED);
		return osim_rx_ext(OCTEP_SDP_IPSEC_MALFORMED, 0);
	}
	esph = (struct ip_esp_hdr *)(skb->data + eoff);
	if (p.family == 4)
		daddr = &((struct iphdr *)(skb->data + p.l3))->daddr;
	else
		daddr = &((struct ipv6hdr *)(skb->data + p.l3))->daddr;

	rcu_read_lock();
	f = osim_flow_lookup_in(ips, p.family, esph->spi, daddr);
	/* The fault hides it from the datapath only, not from the table. */
	if (f && osim_hidden(ips, f->handle))
		f = NULL;
	/*
	 * ESP in UDP only to the entry's port, plain ESP only for an entry
	 * without encap: as xfrm_input()'s encap_type check, the other is
	 * not this entry's (software drops it: XfrmInStateMismatch).
	 */
	if (f && (uh ? !f->encap || READ_ONCE(f->dport) != uh->dest :
		  f->encap))
		f = NULL;
	if (!f) {
		rcu_read_unlock();
		osim_ipsec_inc(ips, OSIM_RX_NO_ENTRY);
		return osim_rx_ext(OCTEP_SDP_IPSEC_NO_ENTRY, 0);
	}
	handle = f->handle;
	/* Room for the header, the IV, a 4-aligned trailer and the ICV. */
	if (p.end < eoff + hlen + 4 + OSIM_ICV_LEN ||
	    (p.end - eoff - hlen - OSIM_ICV_LEN) % 4) {
		status = OCTEP_SDP_IPSEC_MALFORMED;
		goto out;
	}

	spin_lock_bh(&f->lock);
	if (f->esn)
		seq = osim_seq_infer(f->seq, ntohl(esph->seq_no),
				     max_t(u32, f->window, 32));
	else
		seq = ntohl(esph->seq_no);
	if (!osim_replay_check(f, seq)) {
		f->replay++;
		spin_unlock_bh(&f->lock);
		status = OCTEP_SDP_IPSEC_REPLAY;
		goto out;
	}
	/* As xfrm_input(): the replay window, then the hard limit. */
	if (osim_flow_expired(f)) {
		spin_unlock_bh(&f->lock);
		status = OCTEP_SDP_IPSEC_EXPIRED;
		goto out;
	}
	spin_unlock_bh(&f->lock);

	iv = (u8 *)(esph + 1);
	err = osim_esp_crypt(f, esph, upper_32_bits(seq), iv,
			     iv + OSIM_IV_LEN,
			     p.end - eoff - hlen, false);
	if (err) {
		spin_lock_bh(&f->lock);
		f->bad_icv++;
		spin_unlock_bh(&f->lock);
		status = err == -EBADMSG ? OCTEP_SDP_IPSEC_BAD_ICV :
					   OCTEP_SDP_IPSEC_MALFORMED;
		goto out;
	}

	spin_lock_bh(&f->lock);
	/* Another copy may have passed the window while we decrypted. */
	if (!osim_replay_check(f, seq)) {
		f->replay++;
		spin_unlock_bh(&f->lock);
		status = OCTEP_SDP_IPSEC_REPLAY;
		goto out;
	}
	osim_replay_advance(f, seq);
	f->packets++;
	/*
	 * What xfrm_input() counts after esp_input(): the plain text, with
	 * neither ESP's header and IV nor its trailer and ICV. The pad length
	 * is decrypted now; a bad one fails the decap below.
	 */
	plen = p.end - eoff - hlen - OSIM_ICV_LEN;
	padlen = skb->data[eoff + hlen + plen - 2];
	if (padlen + 2 <= plen)
		f->bytes += plen - padlen - 2;
	osim_flow_changed(ips, f);
	spin_unlock_bh(&f->lock);

	status = OCTEP_SDP_IPSEC_OK;
	if (uh) {
		osim_ipsec_inc(ips, OSIM_RX_NATT);
		/* Crypto offload: what the checksum covered is plain text now. */
		uh->check = 0;
		/*
		 * Transport mode: a NAT rewrote the addresses the inner
		 * checksum covers; as esp_input_done2(), it is not checked.
		 */
		if (f->type == OCTEP_SDP_FLOW_TYPE_PACKET &&
		    f->mode == OCTEP_SDP_FLOW_MODE_TRANSPORT)
			csum = FIELD_PREP(OCTEP_SDP_RX_CSUM,
					  OCTEP_SDP_RX_CSUM_OK);
	}
	if (f->type == OCTEP_SDP_FLOW_TYPE_PACKET) {
		/* Then the policy check, on what the tunnel carried. */
		if (osim_esp_decap(f, skb, &p, eoff) || osim_parse(skb, &p))
			status = OCTEP_SDP_IPSEC_MALFORMED;
		else
			status = osim_pol_in(ips, skb, &p, f);
	}
out:
	rcu_read_unlock();
	switch (status) {
	case OCTEP_SDP_IPSEC_OK:
		osim_ipsec_inc(ips, OSIM_RX_OK);
		break;
	case OCTEP_SDP_IPSEC_BAD_ICV:
		osim_ipsec_inc(ips, OSIM_RX_BAD_ICV);
		break;
	case OCTEP_SDP_IPSEC_REPLAY:
		osim_ipsec_inc(ips, OSIM_RX_REPLAY);
		break;
	case OCTEP_SDP_IPSEC_EXPIRED:
		osim_ipsec_inc(ips, OSIM_RX_EXPIRED);
		break;
	case OCTEP_SDP_IPSEC_POL_BLOCK:
	case OCTEP_SDP_IPSEC_POL_MISMATCH:
		/* Counted by osim_pol_in(). */
		break;
	default:
		osim_ipsec_inc(ips, OSIM_RX_MALFORMED);
		break;
	}
	return osim_rx_ext(status, handle) |
	       (status == OCTEP_SDP_IPSEC_OK ? csum : 0);
}
