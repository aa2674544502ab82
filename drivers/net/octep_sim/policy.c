// SPDX-License-Identifier: GPL-2.0
/*
 * octep_sim: the block's policy table, for packet offload.
 *
 * The design of a flow table without a TCAM: policies are grouped by the
 * masks of their selectors (family, prefix lengths, whether a protocol is
 * named, port masks), and a group is searched by hashing the packet's
 * fields under its masks. A lookup costs one probe per group however many
 * policies there are; a gateway's policies share a handful of masks. Of
 * the matches the lowest priority wins, then the oldest, as in the
 * kernel's own policy lists.
 *
 * Outbound, an IPSEC policy's template finds its entry in a hash of the
 * packet-offload outbound entries by outer destination: the tunnel's
 * (template) or the packet's own (transport), newest first.
 *
 * Changes come from the mailbox worker under ips->table_lock; the engine
 * reads under RCU.
 */
#include <linux/ip.h>
#include <linux/ipv6.h>
#include <linux/jhash.h>
#include <linux/rculist.h>
#include <linux/slab.h>

#include "octep_sim.h"
#include "ipsec.h"

/**
 * struct osim_pgrp - the policies of one direction that share masks
 * @node: on ips->pgrps[dir] (RCU)
 * @rcu: freed after a grace period
 * @seed: its hash seed (the group's identity in ips->pol_hash)
 * @users: policies in it
 * @family: 4 or 6, 0 for either (then addresses are not looked at)
 * @plen_s: source prefix length
 * @plen_d: destination prefix length
 * @proto: the selectors name a protocol
 * @sport_mask: network order
 * @dport_mask: network order
 */
struct osim_pgrp {
	struct list_head node;
	struct rcu_head rcu;
	u32 seed;
	u32 users;
	u8 family;
	u8 plen_s;
	u8 plen_d;
	bool proto;
	__be16 sport_mask;
	__be16 dport_mask;
};

static unsigned int osim_alen(u8 family)
{
	return family == 6 ? 16 : 4;
}

static void osim_prefix(u8 *dst, const u8 *src, unsigned int plen)
{
	unsigned int i, bits;

	for (i = 0; plen; i++, plen -= bits) {
		bits = min(plen, 8U);
		dst[i] = src[i] & (u8)(0xff << (8 - bits));
	}
}

static void osim_pkey_of(const struct osim_pgrp *g,
			 const struct osim_pkey *pf, struct osim_pkey *k)
{
	memset(k, 0, sizeof(*k));
	k->family = g->family;
	if (g->family) {
		osim_prefix(k->saddr, pf->saddr, g->plen_s);
		osim_prefix(k->daddr, pf->daddr, g->plen_d);
	}
	k->proto = g->proto ? pf->proto : 0;
	k->sport = pf->sport & g->sport_mask;
	k->dport = pf->dport & g->dport_mask;
}

static u32 osim_pkey_hash(const struct osim_pgrp *g, const struct osim_pkey *k)
{
	return jhash(k, sizeof(*k), g->seed);
}

static u32 osim_out_hash(u8 family, const u8 *daddr)
{
	return jhash(daddr, osim_alen(family), family);
}

/* The addresses and ports xfrm's selectors look at, unmasked. */
static void osim_pfields(const struct sk_buff *skb, const struct osim_pkt *p,
			 struct osim_pkey *pf)
{
	__be16 _ports[2];
	const __be16 *ports;

	memset(pf, 0, sizeof(*pf));
	pf->family = p->family;
	pf->proto = p->proto;
	if (p->family == 4) {
		const struct iphdr *iph = (const void *)(skb->data + p->l3);

		memcpy(pf->saddr, &iph->saddr, 4);
		memcpy(pf->daddr, &iph->daddr, 4);
	} else {
		const struct ipv6hdr *ip6h = (const void *)(skb->data + p->l3);

		memcpy(pf->saddr, &ip6h->saddr, 16);
		memcpy(pf->daddr, &ip6h->daddr, 16);
	}
	if ((p->proto != IPPROTO_TCP && p->proto != IPPROTO_UDP) || p->frag ||
	    p->l4 + sizeof(_ports) > p->end)
		return;
	ports = skb_header_pointer(skb, p->l4, sizeof(_ports), _ports);
	if (ports) {
		pf->sport = ports[0];
		pf->dport = ports[1];
	}
}

/* The policy @pf falls under, in direction @d; @esp: only ESP selectors. */
static struct osim_pol *osim_pol_find(struct osim_ipsec *ips, int d,
				      const struct osim_pkey *pf, bool esp)
{
	struct osim_pol *pol, *best = NULL;
	struct osim_pgrp *g;
	struct osim_pkey k;
	u32 h;

	list_for_each_entry_rcu(g, &ips->pgrps[d], node) {
		if ((g->family && g->family != pf->family) || (esp && !g->proto))
			continue;
		osim_pkey_of(g, pf, &k);
		h = osim_pkey_hash(g, &k);
		hash_for_each_possible_rcu(ips->pol_hash, pol, hnode, h) {
			if (pol->grp != g || memcmp(&pol->key, &k, sizeof(k)) ||
			    osim_hidden(ips, pol->handle))
				continue;
			if (!best || pol->priority < best->priority ||
			    (pol->priority == best->priority &&
			     pol->seq < best->seq))
				best = pol;
		}
	}
	return best;
}

/* TCP or UDP whose ports the block cannot read: a fragment, a cut header. */
static bool osim_ports_hidden(const struct osim_pkt *p)
{
	return (p->proto == IPPROTO_TCP || p->proto == IPPROTO_UDP) &&
	       (p->frag || p->l4 + 2 * sizeof(__be16) > p->end);
}

static bool osim_tmpl_fits(const struct osim_pol *pol,
			   const struct osim_flow *f);

/*
 * @best (or NULL) is what decides a frame whose ports the block cannot
 * read, by the policies that name none. Software decided on the ports
 * (the socket's flow outbound, the reassembled datagram inbound), so a
 * policy naming a port, ranked before @best and matching all else, may
 * have been the one: unless it would let the frame by (an allow; inbound,
 * an IPsec policy whose template @f fits), the frame is dropped rather
 * than sent or let in on a guess. Outbound an IPsec policy drops too: a
 * transport SA does not carry a fragment as software would the datagram.
 *
 * A walk of all policies: the hash cannot be asked for a port it is not
 * given, and such frames are the rare case.
 */
static bool osim_pol_port_risk(struct osim_ipsec *ips, int d,
			       const struct osim_pkey *pf,
			       const struct osim_pol *best,
			       const struct osim_flow *f)
{
	const struct osim_pgrp *g;
	struct osim_pol *pol;
	struct osim_pkey k;
	unsigned int bkt;

	hash_for_each_rcu(ips->pol_hash, bkt, pol, hnode) {
		g = pol->grp;
		if (pol->dir != d || (!g->sport_mask && !g->dport_mask) ||
		    (g->family && g->family != pf->family) ||
		    osim_hidden(ips, pol->handle))
			continue;
		if (best && (pol->priority > best->priority ||
			     (pol->priority == best->priority &&
			      pol->seq > best->seq)))
			continue;
		osim_pkey_of(g, pf, &k);
		k.sport = pol->key.sport;
		k.dport = pol->key.dport;
		if (memcmp(&pol->key, &k, sizeof(k)))
			continue;
		if (pol->action == OCTEP_SDP_POL_ALLOW ||
		    (pol->action == OCTEP_SDP_POL_IPSEC && f &&
		     osim_tmpl_fits(pol, f)))
			continue;
		return true;
	}
	return false;
}

/*
 * Does entry @f satisfy @pol's template, as xfrm_state_ok() asks of a
 * state in software? Mode, reqid (unless the template's is 0), the SPI
 * (if the template names one) and, for a tunnel, the outer ends it names:
 * a peer's SA carries only what a policy with that peer's ends allows,
 * even when two peers share a reqid.
 */
static bool osim_tmpl_fits(const struct osim_pol *pol,
			   const struct osim_flow *f)
{
	static const u8 any[16];
	unsigned int alen;

	if (pol->mode != f->mode || (pol->reqid && pol->reqid != f->reqid) ||
	    (pol->tspi && pol->tspi != f->spi))
		return false;
	if (pol->mode != OCTEP_SDP_FLOW_MODE_TUNNEL)
		return true;
	if (pol->tfamily != f->family)
		return false;
	alen = osim_alen(f->family);
	return (!memcmp(pol->tsaddr, any, alen) ||
		!memcmp(pol->tsaddr, f->saddr, alen)) &&
	       (!memcmp(pol->tdaddr, any, alen) ||
		!memcmp(pol->tdaddr, f->daddr, alen));
}

/* The newest outbound entry @pol's template names for a packet @pf. */
static struct osim_flow *osim_pol_sa(struct osim_ipsec *ips,
				     const struct osim_pol *pol,
				     const struct osim_pkey *pf)
{
	bool tunnel = pol->mode == OCTEP_SDP_FLOW_MODE_TUNNEL;
	u8 fam = tunnel ? pol->tfamily : pf->family;
	const u8 *daddr = tunnel ? pol->tdaddr : pf->daddr;
	unsigned int alen = osim_alen(fam);
	struct osim_flow *f;

	hash_for_each_possible_rcu(ips->out_hash, f, onode,
				   osim_out_hash(fam, daddr)) {
		if (f->family != fam || memcmp(f->daddr, daddr, alen) ||
		    !osim_tmpl_fits(pol, f) || osim_hidden(ips, f->handle))
			continue;
		/* Transport: the packet's own source. */
		if (!tunnel && memcmp(pf->saddr, f->saddr, alen))
			continue;
		return f;
	}
	return NULL;
}

/**
 * osim_pol_out() - classify a frame the host sent with CLASSIFY
 * @ips: IPsec state
 * @skb: the frame, linear
 * @p: its parsed headers
 * @f: set to the entry to encapsulate with, for OSIM_ENCAP
 *
 * Context: the engine, under rcu_read_lock(); @f is good until it ends.
 * Return: what to do with the frame (drops counted).
 */
enum osim_verdict osim_pol_out(struct osim_ipsec *ips,
			       const struct sk_buff *skb,
			       const struct osim_pkt *p,
			       struct osim_flow **f)
{
	struct osim_pkey pf;
	struct osim_pol *pol;

	osim_pfields(skb, p, &pf);
	/* ESP the host built is not to be wrapped again. */
	pol = osim_pol_find(ips, OSIM_FLOW_OUT, &pf, p->proto == IPPROTO_ESP);
	if (osim_ports_hidden(p) &&
	    osim_pol_port_risk(ips, OSIM_FLOW_OUT, &pf, pol, NULL)) {
		atomic64_inc(&ips->cnt[OSIM_POL_NO_PORTS]);
		atomic64_inc(&ips->cnt[OSIM_TX_POL_BLOCK]);
		return OSIM_DROP;
	}
	if (!pol || pol->action == OCTEP_SDP_POL_ALLOW)
		return OSIM_PASS;
	if (pol->action == OCTEP_SDP_POL_BLOCK) {
		atomic64_inc(&ips->cnt[OSIM_TX_POL_BLOCK]);
		return OSIM_DROP;
	}
	*f = osim_pol_sa(ips, pol, &pf);
	if (!*f) {
		atomic64_inc(&ips->cnt[OSIM_TX_POL_NO_STATE]);
		return OSIM_DROP;
	}
	return OSIM_ENCAP;
}

/**
 * osim_pol_named() - may the block's table stop an ENCAP frame?
 * @ips: IPsec state
 * @skb: the frame, linear
 * @p: its parsed headers
 *
 * The host named the entry, and the frame is encapsulated with it whatever
 * the table holds, unless an outbound block policy is the frame's best
 * match: the table orders policies by priority, as software ESP does.
 *
 * Context: the engine, under rcu_read_lock().
 * Return: true to drop the frame (counted).
 */
bool osim_pol_named(struct osim_ipsec *ips, const struct sk_buff *skb,
		    const struct osim_pkt *p)
{
	struct osim_pkey pf;
	struct osim_pol *pol;

	/* Pairs with WRITE_ONCE() in osim_pol_add(): a stale 0 is a race lost. */
	if (!READ_ONCE(ips->npols[OSIM_FLOW_OUT]))
		return false;
	osim_pfields(skb, p, &pf);
	pol = osim_pol_find(ips, OSIM_FLOW_OUT, &pf, false);
	if (!pol || pol->action != OCTEP_SDP_POL_BLOCK)
		return false;
	atomic64_inc(&ips->cnt[OSIM_TX_POL_BLOCK]);
	return true;
}

/**
 * osim_pol_in() - the inbound policy check
 * @ips: IPsec state
 * @skb: a clear frame from the wire, or what @f decapsulated (linear
 *	headers)
 * @p: its parsed headers
 * @f: the packet-offload entry that decapsulated @skb, or NULL
 *
 * Only once the host offloaded inbound policies: until then every frame
 * passes, as it did before the table had policies.
 *
 * Context: the engine, under rcu_read_lock().
 * Return: OCTEP_SDP_IPSEC_NONE (clear and allowed), _OK (@f's packet is
 * allowed), _POL_BLOCK or _POL_MISMATCH (drop; counted).
 */
u8 osim_pol_in(struct osim_ipsec *ips, const struct sk_buff *skb,
	       const struct osim_pkt *p, const struct osim_flow *f)
{
	u8 pass = f ? OCTEP_SDP_IPSEC_OK : OCTEP_SDP_IPSEC_NONE;
	struct osim_pkey pf;
	struct osim_pol *pol;

	/* Pairs with WRITE_ONCE() in osim_pol_add(): a stale 0 is a race lost. */
	if (!READ_ONCE(ips->npols[OSIM_FLOW_IN]))
		return pass;
	osim_pfields(skb, p, &pf);
	pol = osim_pol_find(ips, OSIM_FLOW_IN, &pf, false);
	if (osim_ports_hidden(p) &&
	    osim_pol_port_risk(ips, OSIM_FLOW_IN, &pf, pol, f)) {
		atomic64_inc(&ips->cnt[OSIM_POL_NO_PORTS]);
		atomic64_inc(&ips->cnt[OSIM_RX_POL_MISMATCH]);
		return OCTEP_SDP_IPSEC_POL_MISMATCH;
	}
	if (!pol) {
		/* As xfrm_policy_check(): a tunnel's packet needs a policy. */
		if (!f || f->mode == OCTEP_SDP_FLOW_MODE_TRANSPORT)
			return pass;
	} else if (pol->action == OCTEP_SDP_POL_BLOCK) {
		atomic64_inc(&ips->cnt[OSIM_RX_POL_BLOCK]);
		return OCTEP_SDP_IPSEC_POL_BLOCK;
	} else if (pol->action == OCTEP_SDP_POL_ALLOW) {
		/* As xfrm_policy_check(): no template takes a tunnel's SA. */
		if (!f || f->mode == OCTEP_SDP_FLOW_MODE_TRANSPORT)
			return pass;
	} else if (f && osim_tmpl_fits(pol, f)) {
		return pass;
	}
	atomic64_inc(&ips->cnt[OSIM_RX_POL_MISMATCH]);
	return OCTEP_SDP_IPSEC_POL_MISMATCH;
}

static int osim_pol_check(const struct octep_sdp_mbox_policy *r)
{
	unsigned int amax = r->family ? osim_alen(r->family) * 8 : 0;

	if (r->dir != OCTEP_SDP_FLOW_DIR_IN && r->dir != OCTEP_SDP_FLOW_DIR_OUT)
		return -EINVAL;
	if (r->family && r->family != 4 && r->family != 6)
		return -EINVAL;
	if (r->plen_s > amax || r->plen_d > amax)
		return -EINVAL;
	switch (r->action) {
	case OCTEP_SDP_POL_ALLOW:
	case OCTEP_SDP_POL_BLOCK:
		return 0;
	case OCTEP_SDP_POL_IPSEC:
		if (r->mode == OCTEP_SDP_FLOW_MODE_TRANSPORT)
			return 0;
		if (r->mode == OCTEP_SDP_FLOW_MODE_TUNNEL &&
		    (r->tfamily == 4 || r->tfamily == 6))
			return 0;
		return -EINVAL;
	default:
		return -EINVAL;
	}
}

/* Under table_lock: the group of @r's masks in direction @d, made if new. */
static struct osim_pgrp *osim_pgrp_get(struct osim_ipsec *ips, int d,
				       const struct octep_sdp_mbox_policy *r)
{
	struct osim_pgrp *g;

	lockdep_assert_held(&ips->table_lock);
	list_for_each_entry(g, &ips->pgrps[d], node) {
		if (g->family == r->family && g->plen_s == r->plen_s &&
		    g->plen_d == r->plen_d && g->proto == !!r->proto &&
		    g->sport_mask == r->sport_mask &&
		    g->dport_mask == r->dport_mask)
			goto found;
	}
	g = kzalloc(sizeof(*g), GFP_KERNEL);
	if (!g)
		return NULL;
	g->seed = ++ips->pgrp_seq;
	g->family = r->family;
	g->plen_s = r->plen_s;
	g->plen_d = r->plen_d;
	g->proto = r->proto;
	g->sport_mask = r->sport_mask;
	g->dport_mask = r->dport_mask;
	list_add_tail_rcu(&g->node, &ips->pgrps[d]);
found:
	g->users++;
	return g;
}

static void osim_pgrp_put(struct osim_ipsec *ips, struct osim_pgrp *g)
{
	lockdep_assert_held(&ips->table_lock);
	if (--g->users)
		return;
	list_del_rcu(&g->node);
	kfree_rcu(g, rcu);
}

/**
 * osim_pol_add() - POLICY_ADD
 * @ips: IPsec state
 * @req: the request body, struct octep_sdp_mbox_policy
 * @req_words: its length in words
 * @handle: set to the new policy's handle
 *
 * Context: the mailbox worker.
 * Return: 0 or a negative errno (-EINVAL, -ENOSPC, -ENOMEM).
 */
int osim_pol_add(struct osim_ipsec *ips, const __le64 *req,
		 unsigned int req_words, u32 *handle)
{
	struct octep_sdp_mbox_policy r;
	struct osim_pkey pf = {};
	struct osim_pol *pol;
	int d, err;
	u32 id;

	if (req_words * 8 < sizeof(r))
		return -EINVAL;
	memcpy(&r, req, sizeof(r));
	err = osim_pol_check(&r);
	if (err)
		return err;
	d = r.dir == OCTEP_SDP_FLOW_DIR_OUT ? OSIM_FLOW_OUT : OSIM_FLOW_IN;
	pol = kzalloc(sizeof(*pol), GFP_KERNEL);
	if (!pol)
		return -ENOMEM;
	pol->dir = d;
	pol->action = r.action;
	pol->priority = le32_to_cpu(r.priority);
	pol->reqid = le32_to_cpu(r.reqid);
	pol->mode = r.mode;
	pol->tfamily = r.tfamily;
	memcpy(pol->tsaddr, r.tsaddr, sizeof(pol->tsaddr));
	memcpy(pol->tdaddr, r.tdaddr, sizeof(pol->tdaddr));
	pol->tspi = r.tspi;
	memcpy(pf.saddr, r.saddr, sizeof(pf.saddr));
	memcpy(pf.daddr, r.daddr, sizeof(pf.daddr));
	pf.sport = r.sport;
	pf.dport = r.dport;
	pf.proto = r.proto;

	mutex_lock(&ips->table_lock);
	if (ips->npols[d] >= READ_ONCE(ips->cap[d])) {
		err = -ENOSPC;
		goto err_unlock;
	}
	pol->grp = osim_pgrp_get(ips, d, &r);
	if (!pol->grp) {
		err = -ENOMEM;
		goto err_unlock;
	}
	osim_pkey_of(pol->grp, &pf, &pol->key);
	err = xa_alloc_cyclic(&ips->pols[d], &id, pol,
			      XA_LIMIT(1, OSIM_FLOW_CAP_MAX), &ips->next_pid[d],
			      GFP_KERNEL);
	if (err < 0) {
		osim_pgrp_put(ips, pol->grp);
		err = err == -EBUSY ? -ENOSPC : -ENOMEM;
		goto err_unlock;
	}
	pol->handle = id | OCTEP_SDP_POL_H |
		      (d == OSIM_FLOW_OUT ? OSIM_FLOW_H_OUT : 0);
	pol->seq = ips->pol_seq++;
	hash_add_rcu(ips->pol_hash, &pol->hnode,
		     osim_pkey_hash(pol->grp, &pol->key));
	/* Read locklessly by the engine: a stale count only skips a look. */
	WRITE_ONCE(ips->npols[d], ips->npols[d] + 1);
	mutex_unlock(&ips->table_lock);
	*handle = pol->handle;
	return 0;

err_unlock:
	mutex_unlock(&ips->table_lock);
	kfree(pol);
	return err;
}

/**
 * osim_pol_unlink() - take a policy out of the table
 * @ips: IPsec state, table_lock held
 * @handle: a policy handle
 *
 * Return: the policy, to be freed with osim_pol_free() after a grace
 * period, or NULL when @handle names none.
 */
struct osim_pol *osim_pol_unlink(struct osim_ipsec *ips, u32 handle)
{
	int d = handle & OSIM_FLOW_H_OUT ? OSIM_FLOW_OUT : OSIM_FLOW_IN;
	struct osim_pol *pol;

	lockdep_assert_held(&ips->table_lock);
	pol = xa_load(&ips->pols[d], handle & ~(OSIM_FLOW_H_OUT |
						OCTEP_SDP_POL_H));
	if (!pol || pol->handle != handle)
		return NULL;
	xa_erase(&ips->pols[d], handle & ~(OSIM_FLOW_H_OUT | OCTEP_SDP_POL_H));
	hash_del_rcu(&pol->hnode);
	osim_pgrp_put(ips, pol->grp);
	WRITE_ONCE(ips->npols[d], ips->npols[d] - 1);
	return pol;
}

/**
 * osim_pol_free() - free an unlinked policy
 * @pol: the policy; no reader is left (a grace period passed)
 */
void osim_pol_free(struct osim_pol *pol)
{
	kfree(pol);
}

/**
 * osim_pol_link_out() - make an outbound packet-offload entry findable
 * @ips: IPsec state, table_lock held
 * @f: the new entry
 */
void osim_pol_link_out(struct osim_ipsec *ips, struct osim_flow *f)
{
	lockdep_assert_held(&ips->table_lock);
	hash_add_rcu(ips->out_hash, &f->onode,
		     osim_out_hash(f->family, f->daddr));
}

/**
 * osim_pol_unlink_out() - undo osim_pol_link_out()
 * @ips: IPsec state, table_lock held
 * @f: the entry
 */
void osim_pol_unlink_out(struct osim_ipsec *ips, struct osim_flow *f)
{
	lockdep_assert_held(&ips->table_lock);
	hash_del_rcu(&f->onode);
}

/**
 * osim_ipsec_cnt_read() - read an OCTEP_SDP_IPSEC_CNT register
 * @dev: model device
 * @off: the register's offset, in the counters' range
 *
 * Return: the counter; 0 without a flow table.
 */
u64 osim_ipsec_cnt_read(struct osim_dev *dev, u32 off)
{
	static const u8 map[OCTEP_SDP_IPSEC_TX_DROP] = {
		[OCTEP_SDP_IPSEC_TX_ENCAP] = OSIM_TX_CLASSIFY_ENCAP,
		[OCTEP_SDP_IPSEC_TX_ENCAP_BYTES] = OSIM_TX_CLASSIFY_BYTES,
		[OCTEP_SDP_IPSEC_TX_BLOCK] = OSIM_TX_POL_BLOCK,
		[OCTEP_SDP_IPSEC_TX_NO_STATE] = OSIM_TX_POL_NO_STATE,
		[OCTEP_SDP_IPSEC_RX_BLOCK] = OSIM_RX_POL_BLOCK,
		[OCTEP_SDP_IPSEC_RX_MISMATCH] = OSIM_RX_POL_MISMATCH,
	};
	struct osim_ipsec *ips = dev->ipsec;
	unsigned int i = (off - OCTEP_SDP_IPSEC_CNT_BASE) / 8;

	if (!ips || i >= OCTEP_SDP_IPSEC_NCNT ||
	    !(READ_ONCE(ips->features) & OCTEP_SDP_FEAT_POLICY))
		return 0;
	if (i == OCTEP_SDP_IPSEC_TX_DROP)
		return atomic64_read(&ips->cnt[OSIM_TX_NO_ENTRY]) +
		       atomic64_read(&ips->cnt[OSIM_TX_BAD]) +
		       atomic64_read(&ips->cnt[OSIM_TX_SEQ_OVERFLOW]) +
		       atomic64_read(&ips->cnt[OSIM_TX_EXPIRED]) +
		       atomic64_read(&ips->cnt[OSIM_TX_NO_NEIGH]);
	return atomic64_read(&ips->cnt[map[i]]);
}

/**
 * osim_pol_init() - an empty policy table
 * @ips: IPsec state
 */
void osim_pol_init(struct osim_ipsec *ips)
{
	int d;

	for (d = 0; d < 2; d++) {
		xa_init_flags(&ips->pols[d], XA_FLAGS_ALLOC1);
		INIT_LIST_HEAD(&ips->pgrps[d]);
	}
	hash_init(ips->pol_hash);
	hash_init(ips->out_hash);
}
