// SPDX-License-Identifier: GPL-2.0
/*
 * octep_ipsec: the IPsec datapath. Transmit names the block's entry (or
 * asks it to classify); receive turns the block's verdict into a secpath
 * or a counted drop.
 */
#include <linux/bitfield.h>
#include <linux/if_vlan.h>
#include <linux/netdevice.h>
#include <net/xfrm.h>

#include "octep_ipsec.h"
#include "ipsec.h"
#include "xfrm.h"

/* Do frames routed out of @out reach our transmit as they are? */
static bool octep_ipsec_our_path(const struct octep_ipsec *ips,
				 const struct net_device *out)
{
	if (out == ips->netdev)
		return true;
#if IS_ENABLED(CONFIG_VLAN_8021Q)
	/* A VLAN device on ours hands us its frames, tagged. */
	if (is_vlan_dev(out) && vlan_dev_priv(out)->real_dev == ips->netdev)
		return true;
#endif
	return false;
}

/*
 * Packet offload, out: name @x in the skb's secpath, as the stack does for
 * crypto offload, so that transmit hands the block the entry the stack
 * chose. XFRM_XMIT tells validate_xmit_xfrm() (ours, and a VLAN device's
 * on the way) that no software ESP is to be built.
 */
static bool octep_ipsec_mark(struct sk_buff *skb, struct xfrm_state *x)
{
	struct xfrm_offload *xo;
	struct sec_path *sp;

	/* A forwarded packet may still carry its inbound secpath. */
	secpath_reset(skb);
	sp = secpath_set(skb);
	if (!sp)
		return false;
	xfrm_state_hold(x);
	sp->xvec[sp->len++] = x;
	sp->olen++;
	xo = xfrm_offload(skb);
	xo->flags = XFRM_XMIT;
	return true;
}

/**
 * octep_ipsec_offload_ok() - xdo_dev_offload_ok: may the block take this packet
 * @skb: the packet, before ESP is built
 * @x: its state
 *
 * false sends a crypto-offload packet through software ESP and drops a
 * packet-offload one (XfrmOutError), rather than have the block drop it
 * uncounted by the stack, or send it somewhere the block never sees it.
 *
 * Return: true if the packet goes to the block.
 */
bool octep_ipsec_offload_ok(struct sk_buff *skb, struct xfrm_state *x)
{
	struct octep_ipsec_sa *sa;
	bool ok = false;

	/*
	 * Pairs with WRITE_ONCE() in state add and free: the entry is freed
	 * after a grace period, and a flush at NETDEV_DOWN may free it while
	 * the stack still holds @x.
	 */
	rcu_read_lock();
	sa = (void *)READ_ONCE(x->xso.offload_handle);
	/* A larval state has no entry. */
	if (!sa || !READ_ONCE(sa->handle))
		goto out;
	/*
	 * Packet offload: none go with stale NAT-T ports. Crypto offload:
	 * the stack writes the UDP header, the block's ports are not used
	 * out, and update_stats notices a move without a per-packet look.
	 */
	if (x->xso.type == XFRM_DEV_OFFLOAD_PACKET &&
	    octep_ipsec_encap_stale(sa, x))
		goto out;
	if (x->xso.type != XFRM_DEV_OFFLOAD_PACKET) {
		ok = true;
		goto out;
	}
	/*
	 * 6.12 asks packet offload for no route through our device. Tunnel
	 * mode's forwarded packets go to xso.dev directly (as xfrm_output()
	 * decides); the others follow the route, which must come to us.
	 */
	if ((x->props.mode != XFRM_MODE_TUNNEL || skb->sk) &&
	    !octep_ipsec_our_path(sa->ips,
				  xfrm_dst_path(skb_dst(skb))->dev))
		goto out;
	ok = octep_ipsec_mark(skb, x);
out:
	rcu_read_unlock();
	return ok;
}

/* ---------------------------------------------------------- datapath */

/*
 * The block encrypts each segment of a GSO packet: packets count what it
 * counts. Bytes are what it was handed (a GSO packet's headers once: with
 * ESP in front, the inner headers' length is not the driver's to parse).
 */
static void octep_ipsec_tx_count(struct octep_ipsec *ips,
				 const struct sk_buff *skb)
{
	octep_ipsec_add(ips, OCTEP_IPSEC_TX_PACKETS,
			skb_is_gso(skb) ? skb_shinfo(skb)->gso_segs : 1);
	octep_ipsec_add(ips, OCTEP_IPSEC_TX_BYTES, skb->len);
}

/**
 * octep_ipsec_tx_flags() - the instruction's IPsec flags for a packet
 * @iq: the input ring
 * @skb: the packet
 * @flags: the instruction flags word, OR-ed into
 *
 * The stack left an xfrm_offload with XFRM_XMIT: the entry's handle with
 * ENCRYPT (crypto offload) or ENCAP (packet offload, marked by
 * octep_ipsec_mark()). Other packets, while outbound policies are
 * offloaded: CLASSIFY, and the block's policy table decides (what it
 * drops it counts, in OCTEP_SDP_IPSEC_CNT). Not for a socket with a policy
 * of its own (an IKE daemon's bypass): the stack looked that up, not the
 * device's table, and what it sends plain goes plain.
 *
 * Return: 0, or -ENOENT to drop the packet (counted in ipsec_out_drop).
 */
int octep_ipsec_tx_flags(struct octep_iq *iq, struct sk_buff *skb, u64 *flags)
{
	struct octep_ipsec *ips = iq->qv->oct->ipsec;
	struct xfrm_offload *xo;
	struct octep_ipsec_sa *sa;
	struct xfrm_state *x;
	struct sock *sk;
	u32 handle;
	u8 op;

	if (!ips)
		return 0;
	xo = xfrm_offload(skb);
	if (xo && (xo->flags & XFRM_XMIT)) {
		x = xfrm_input_state(skb);
		/*
		 * Pairs with WRITE_ONCE() in state free; the entry is freed
		 * after a grace period and xmit runs under RCU-bh. Whatever
		 * the stack marked for protection goes encrypted or not at
		 * all.
		 */
		sa = (void *)READ_ONCE(x->xso.offload_handle);
		handle = sa ? READ_ONCE(sa->handle) : 0;
		if ((x->xso.real_dev ?: x->xso.dev) != ips->netdev || !handle ||
		    sa->dir != XFRM_DEV_OFFLOAD_OUT ||
		    sa->type != x->xso.type) {
			XFRM_INC_STATS(dev_net(ips->netdev),
				       LINUX_MIB_XFRMOUTSTATEINVALID);
			octep_ipsec_inc(ips, OCTEP_IPSEC_OUT_DROP);
			return -ENOENT;
		}
		/*
		 * On HOLD the block drops it (ipsec_out_drop), and after a
		 * route change it may go to the old next hop: have the next
		 * hop looked for again. Pairs with WRITE_ONCE() in
		 * octep_ipsec_nh_updates(); a stale read costs a lookup.
		 */
		if (sa->l2 &&
		    (!READ_ONCE(sa->l2_ok) || octep_ipsec_nh_moved(sa)))
			octep_ipsec_nh_kick(sa);
		op = sa->type == XFRM_DEV_OFFLOAD_CRYPTO ?
		     OCTEP_SDP_TX_IPSEC_ENCRYPT : OCTEP_SDP_TX_IPSEC_ENCAP;
		*flags |= FIELD_PREP(OCTEP_SDP_TX_IPSEC_OP, op) |
			  FIELD_PREP(OCTEP_SDP_TX_FLOW_HANDLE, handle);
		octep_ipsec_tx_count(ips, skb);
		return 0;
	}
	/*
	 * Pairs with WRITE_ONCE() in policy add and delete: a packet racing
	 * a policy's add or delete may go either way, as it may in the
	 * stack's own lookup.
	 */
	if (!READ_ONCE(ips->n_out_pols))
		return 0;
	sk = skb->sk;
	if (sk && sk_fullsock(sk) &&
	    rcu_access_pointer(sk->sk_policy[XFRM_POLICY_OUT]))
		return 0;
	*flags |= FIELD_PREP(OCTEP_SDP_TX_IPSEC_OP, OCTEP_SDP_TX_IPSEC_CLASSIFY);
	return 0;
}

/* The xfrm MIB a dropped packet counts in; unused without XFRM_STATISTICS. */
static int __maybe_unused octep_ipsec_rx_mib(enum octep_ipsec_cnt c)
{
	switch (c) {
	case OCTEP_IPSEC_RX_BAD_ICV:
		return LINUX_MIB_XFRMINSTATEPROTOERROR;
	case OCTEP_IPSEC_RX_REPLAY:
		return LINUX_MIB_XFRMINSTATESEQERROR;
	case OCTEP_IPSEC_IN_DROP:
		return LINUX_MIB_XFRMINNOSTATES;
	case OCTEP_IPSEC_RX_CLEAR_DROP:
		return LINUX_MIB_XFRMINTMPLMISMATCH;
	case OCTEP_IPSEC_RX_POL_BLOCK:
		return LINUX_MIB_XFRMINPOLBLOCK;
	case OCTEP_IPSEC_RX_TMPL_MISMATCH:
		return LINUX_MIB_XFRMINTMPLMISMATCH;
	case OCTEP_IPSEC_RX_EXPIRED:
		return LINUX_MIB_XFRMINSTATEEXPIRED;
	default:
		return LINUX_MIB_XFRMINHDRERROR;
	}
}

/**
 * octep_ipsec_rx_account() - count a receive drop where the stack would
 * @ips: the offload
 * @handle: the entry the block named, 0 if none
 * @c: the drop's counter
 *
 * Where xfrm_input() or the policy check would have counted it had
 * software ESP seen the packet: /proc/net/xfrm_stat and, for replay and
 * ICV failures, the state's own stats (ip -s xfrm state).
 */
void octep_ipsec_rx_account(struct octep_ipsec *ips, u32 handle,
			    enum octep_ipsec_cnt c)
{
	struct octep_ipsec_sa *sa;
	struct xfrm_state *x;

	XFRM_INC_STATS(dev_net(ips->netdev), octep_ipsec_rx_mib(c));
	if (c != OCTEP_IPSEC_RX_BAD_ICV && c != OCTEP_IPSEC_RX_REPLAY)
		return;
	/*
	 * As in octep_ipsec_rx_xfrm(): the state's memory outlives the RCU
	 * read section (xfrm_state_gc_task() waits for a grace period), so a
	 * state on its way out is merely charged once more.
	 */
	rcu_read_lock();
	sa = xa_load(&ips->in_sas, handle);
	x = sa ? sa->x : NULL;
	if (x) {
		/* NAPI runs in softirq: x->lock as xfrm_input() takes it. */
		spin_lock(&x->lock);
		if (c == OCTEP_IPSEC_RX_REPLAY)
			x->stats.replay++;
		else
			x->stats.integrity_failed++;
		spin_unlock(&x->lock);
	}
	rcu_read_unlock();
}

/* xfrm_selector_match() is not exported: the same test, the device aside. */
static bool octep_ipsec_sel_match(const struct xfrm_selector *sel,
				  const struct flowi *fl, u16 family)
{
	const union flowi_uli *uli;
	u8 proto;

	if (sel->family != family && sel->family != AF_UNSPEC)
		return false;
	if (family == AF_INET) {
		const struct flowi4 *f = &fl->u.ip4;

		if (!addr4_match(f->daddr, sel->daddr.a4, sel->prefixlen_d) ||
		    !addr4_match(f->saddr, sel->saddr.a4, sel->prefixlen_s))
			return false;
		uli = &f->uli;
		proto = f->flowi4_proto;
	} else {
		const struct flowi6 *f = &fl->u.ip6;

		if (!addr_match(&f->daddr, &sel->daddr, sel->prefixlen_d) ||
		    !addr_match(&f->saddr, &sel->saddr, sel->prefixlen_s))
			return false;
		uli = &f->uli;
		proto = f->flowi6_proto;
	}
	if (sel->proto && sel->proto != proto)
		return false;
	return !((xfrm_flowi_sport(fl, uli) ^ sel->sport) & sel->sport_mask) &&
	       !((xfrm_flowi_dport(fl, uli) ^ sel->dport) & sel->dport_mask);
}

/*
 * A frame the block passed as clear text while inbound policies are
 * offloaded. 6.12's __xfrm_policy_check() accepts clear text under a
 * packet-offload policy unchecked (the hardware is to have checked it),
 * so a block whose table missed the policy would let in, in clear, what
 * the policy protects. Find the policy here as the block would (a
 * matching selector, the lowest priority, then the oldest): IPsec or
 * block drops the frame. ESP and AH are software's (xfrm_input()); what
 * does not parse the stack drops itself (XfrmInHdrError). A frame with
 * one VLAN tag is looked into: the VLAN device hands it to the same check.
 *
 * ips->in_pols holds the inbound policies in that order, so the first
 * match decides; it is walked under RCU, not ips->lock, which every
 * ring's poll would otherwise take for every frame.
 *
 * Return: true when @skb is to be dropped (not freed here).
 */
static bool octep_ipsec_rx_backstop(struct octep_ipsec *ips,
				    struct sk_buff *skb)
{
	const struct octep_ipsec_pol *pol;
	u8 action = OCTEP_SDP_POL_ALLOW;
	__be16 proto = skb->protocol;
	struct flowi fl;
	u16 family;

	/*
	 * Pairs with the WRITE_ONCE()s beside list_add_rcu() and
	 * list_del_rcu() in policy add and delete: a stale zero after the
	 * first inbound policy's add lets a frame racing with that add by,
	 * as software does one received before xfrm_policy_insert() (which
	 * comes after our add) links the policy; a stale count after the
	 * last delete only walks a list being emptied.
	 */
	if (!READ_ONCE(ips->n_in_pols))
		return false;
	if (eth_type_vlan(proto)) {
		struct vlan_hdr _vh;
		const struct vlan_hdr *vh;

		vh = skb_header_pointer(skb, 0, sizeof(_vh), &_vh);
		if (!vh)
			return false;
		proto = vh->h_vlan_encapsulated_proto;
	}
	if (proto == htons(ETH_P_IP))
		family = AF_INET;
	else if (proto == htons(ETH_P_IPV6))
		family = AF_INET6;
	else
		return false;
	/* The dissector starts there; the stack sets it again later. */
	skb_reset_network_header(skb);
	if (__xfrm_decode_session(dev_net(skb->dev), skb, &fl, family, 0) < 0 ||
	    fl.flowi_proto == IPPROTO_ESP || fl.flowi_proto == IPPROTO_AH)
		return false;

	/*
	 * Pairs with list_add_rcu() in policy add, which publishes @pol with
	 * its selector and action set. A policy deleted meanwhile may still
	 * decide this frame, as one in software's lookup may: policy free
	 * frees @pol after a grace period (kfree_rcu()). The xfrm_policy is
	 * not read: xfrm_policy_destroy() frees it with call_rcu() after
	 * xfrm_dev_policy_free(), but xfrm_add_policy() kfree()s one whose
	 * insert failed right after xfrm_dev_policy_free().
	 */
	rcu_read_lock();
	list_for_each_entry_rcu(pol, &ips->in_pols, in) {
		if (octep_ipsec_sel_match(&pol->sel, &fl, family)) {
			action = pol->action;
			break;
		}
	}
	rcu_read_unlock();
	if (action == OCTEP_SDP_POL_ALLOW)
		return false;
	XFRM_INC_STATS(dev_net(skb->dev),
		       action == OCTEP_SDP_POL_BLOCK ?
		       LINUX_MIB_XFRMINPOLBLOCK : LINUX_MIB_XFRMINTMPLMISMATCH);
	return true;
}

/**
 * octep_ipsec_rx_xfrm() - act on the block's IPsec verdict for a packet
 * @oq: the output ring
 * @skb: the packet, after eth_type_trans()
 * @ext: the response header's ext word
 *
 * The block's policy table dropped what an offloaded inbound policy
 * forbids; such a packet is counted here and freed, as is clear text the
 * block passed that such a policy covers (octep_ipsec_rx_backstop()).
 *
 * Return: 0 to hand @skb up (with a secpath when the block decrypted it),
 * or a negative errno when @skb was dropped and freed (counted).
 */
int octep_ipsec_rx_xfrm(struct octep_oq *oq, struct sk_buff *skb, u64 ext)
{
	struct octep_ipsec *ips = oq->qv->oct->ipsec;
	u32 handle = FIELD_GET(OCTEP_SDP_RX_FLOW_HANDLE, ext);
	struct octep_ipsec_sa *sa;
	struct xfrm_offload *xo;
	struct xfrm_state *x;
	struct sec_path *sp;
	enum octep_ipsec_cnt c;

	if (!ips)
		return 0;
	switch (FIELD_GET(OCTEP_SDP_RX_IPSEC_STATUS, ext)) {
	case OCTEP_SDP_IPSEC_NONE:
		if (!octep_ipsec_rx_backstop(ips, skb))
			return 0;
		octep_ipsec_inc(ips, OCTEP_IPSEC_RX_BACKSTOP);
		kfree_skb(skb);
		return -EBADMSG;
	case OCTEP_SDP_IPSEC_POL_MISMATCH:
		/* Clear text under an IPsec policy, or ESP of the wrong SA. */
		c = handle ? OCTEP_IPSEC_RX_TMPL_MISMATCH :
			     OCTEP_IPSEC_RX_CLEAR_DROP;
		goto drop;
	case OCTEP_SDP_IPSEC_POL_BLOCK:
		c = OCTEP_IPSEC_RX_POL_BLOCK;
		goto drop;
	case OCTEP_SDP_IPSEC_OK:
		break;
	case OCTEP_SDP_IPSEC_NO_ENTRY:
		/* Not the block's: software ESP (or nothing) takes it. */
		octep_ipsec_inc(ips, OCTEP_IPSEC_RX_NO_ENTRY);
		return 0;
	case OCTEP_SDP_IPSEC_BAD_ICV:
		c = OCTEP_IPSEC_RX_BAD_ICV;
		goto drop;
	case OCTEP_SDP_IPSEC_REPLAY:
		c = OCTEP_IPSEC_RX_REPLAY;
		goto drop;
	case OCTEP_SDP_IPSEC_EXPIRED:
		c = OCTEP_IPSEC_RX_EXPIRED;
		goto drop;
	default:
		c = OCTEP_IPSEC_RX_MALFORMED;
		goto drop;
	}

	rcu_read_lock();
	sa = xa_load(&ips->in_sas, handle);
	x = sa ? sa->x : NULL;
	/* The state may be on its way out: take it only while it lives. */
	if (!x || !refcount_inc_not_zero(&x->refcnt)) {
		rcu_read_unlock();
		c = OCTEP_IPSEC_IN_DROP;
		goto drop;
	}
	rcu_read_unlock();
	sp = secpath_set(skb);
	if (!sp || sp->len >= XFRM_MAX_DEPTH) {
		xfrm_state_put(x);
		c = OCTEP_IPSEC_IN_DROP;
		goto drop;
	}
	sp->xvec[sp->len++] = x;
	sp->olen++;
	xo = xfrm_offload(skb);
	xo->flags = CRYPTO_DONE;
	xo->status = CRYPTO_SUCCESS;
	octep_ipsec_inc(ips, OCTEP_IPSEC_RX_PACKETS);
	octep_ipsec_add(ips, OCTEP_IPSEC_RX_BYTES, skb->len);
	return 0;

drop:
	octep_ipsec_inc(ips, c);
	octep_ipsec_rx_account(ips, handle, c);
	kfree_skb(skb);
	return -EBADMSG;
}
