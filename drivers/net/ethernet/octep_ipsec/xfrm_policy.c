// SPDX-License-Identifier: GPL-2.0
/*
 * octep_ipsec: packet-offload policies in the block's policy table, and
 * what the netdev's unregistration does to the ones the core killed.
 */
#include <net/xfrm.h>

#include "octep_ipsec.h"
#include "ipsec.h"
#include "xfrm.h"

/* ---------------------------------------------------------- policies */

static u8 octep_ipsec_family(u16 family)
{
	return family == AF_INET ? 4 : family == AF_INET6 ? 6 : 0;
}

/* The block's policy entry for @xp (checked by octep_ipsec_policy_ok()). */
static void octep_ipsec_pol_fill(const struct xfrm_policy *xp,
				 struct octep_sdp_mbox_policy *r)
{
	const struct xfrm_selector *sel = &xp->selector;
	const struct xfrm_tmpl *t = &xp->xfrm_vec[0];

	memset(r, 0, sizeof(*r));
	/* A forward policy checks what came in, as an inbound one does. */
	r->dir = xp->xdo.dir == XFRM_DEV_OFFLOAD_OUT ? OCTEP_SDP_FLOW_DIR_OUT :
						       OCTEP_SDP_FLOW_DIR_IN;
	if (xp->action == XFRM_POLICY_BLOCK)
		r->action = OCTEP_SDP_POL_BLOCK;
	else
		r->action = xp->xfrm_nr ? OCTEP_SDP_POL_IPSEC :
					  OCTEP_SDP_POL_ALLOW;
	r->family = octep_ipsec_family(sel->family);
	r->proto = sel->proto;
	if (r->family) {
		r->plen_s = sel->prefixlen_s;
		r->plen_d = sel->prefixlen_d;
		memcpy(r->saddr, &sel->saddr, sizeof(r->saddr));
		memcpy(r->daddr, &sel->daddr, sizeof(r->daddr));
	}
	r->sport = sel->sport;
	r->sport_mask = sel->sport_mask;
	r->dport = sel->dport;
	r->dport_mask = sel->dport_mask;
	r->priority = cpu_to_le32(xp->priority);
	if (r->action != OCTEP_SDP_POL_IPSEC)
		return;
	r->reqid = cpu_to_le32(t->reqid);
	/* strongSwan names the SA's SPI in an outbound policy's template. */
	r->tspi = t->id.spi;
	if (t->mode == XFRM_MODE_TUNNEL) {
		r->mode = OCTEP_SDP_FLOW_MODE_TUNNEL;
		r->tfamily = octep_ipsec_family(t->encap_family);
		memcpy(r->tsaddr, &t->saddr, sizeof(r->tsaddr));
		memcpy(r->tdaddr, &t->id.daddr, sizeof(r->tdaddr));
	} else {
		r->mode = OCTEP_SDP_FLOW_MODE_TRANSPORT;
	}
}

/* Can the block's policy table carry @xp? 0, or an errno and why. */
static int octep_ipsec_policy_ok(struct octep_ipsec *ips,
				 const struct xfrm_policy *xp,
				 struct netlink_ext_ack *extack)
{
	const struct xfrm_selector *sel = &xp->selector;
	u8 flows = READ_ONCE(ips->flows);

	if (xp->xdo.type != XFRM_DEV_OFFLOAD_PACKET) {
		NL_SET_ERR_MSG_MOD(extack, "Only packet offload policies can be offloaded");
		return -EINVAL;
	}
	if (!octep_ipsec_has(ips, OCTEP_SDP_FEAT_PACKET)) {
		NL_SET_ERR_MSG_MOD(extack,
				   "The coprocessor's flow table does not offer packet offload");
		return -EOPNOTSUPP;
	}
	if (!octep_ipsec_has(ips, OCTEP_SDP_FEAT_POLICY)) {
		NL_SET_ERR_MSG_MOD(extack,
				   "The coprocessor's flow table has no policy table");
		return -EOPNOTSUPP;
	}
	if (!flows || (flows == 1 && xp->xdo.dir != XFRM_DEV_OFFLOAD_OUT)) {
		NL_SET_ERR_MSG_FMT_MOD(extack,
				       "ipsec_flows=%u: the host carries %s, no offload",
				       flows, flows ? "inbound policies" :
				       "all policies");
		return -EINVAL;
	}
	if (xp->type != XFRM_POLICY_TYPE_MAIN) {
		NL_SET_ERR_MSG_MOD(extack, "Cannot offload non-main policy types");
		return -EINVAL;
	}
	/*
	 * The block sees a packet on the wire side of this port and cannot
	 * tell one the host forwards from one it receives: an offloaded FWD
	 * policy would act as an inbound one. Keep it in software.
	 */
	if (xp->xdo.dir == XFRM_DEV_OFFLOAD_FWD) {
		NL_SET_ERR_MSG_MOD(extack,
				   "Cannot offload a forward policy: the block cannot tell forwarded packets from received ones; add it without offload");
		return -EOPNOTSUPP;
	}
	if (xp->flags & XFRM_POLICY_ICMP) {
		NL_SET_ERR_MSG_MOD(extack,
				   "Cannot offload a policy with the icmp flag: the block does not look into ICMP errors");
		return -EOPNOTSUPP;
	}
	if (xp->xfrm_nr > 1) {
		NL_SET_ERR_MSG_MOD(extack, "Cannot offload more than one template");
		return -EINVAL;
	}
	if (xp->xfrm_nr && xp->xfrm_vec[0].optional) {
		NL_SET_ERR_MSG_MOD(extack,
				   "Cannot offload an optional template: the block would make it mandatory");
		return -EOPNOTSUPP;
	}
	/* As mlx5: reqid 0 would let any offloaded SA satisfy the template. */
	if (xp->xfrm_nr && !xp->xfrm_vec[0].reqid) {
		NL_SET_ERR_MSG_MOD(extack,
				   "Cannot offload a template with reqid 0: give the policy and its states a reqid");
		return -EOPNOTSUPP;
	}
	if (xp->xfrm_nr &&
	    (xp->xfrm_vec[0].id.proto != IPPROTO_ESP ||
	     (xp->xfrm_vec[0].mode != XFRM_MODE_TRANSPORT &&
	      xp->xfrm_vec[0].mode != XFRM_MODE_TUNNEL))) {
		NL_SET_ERR_MSG_MOD(extack,
				   "Only ESP templates in transport or tunnel mode can be offloaded");
		return -EINVAL;
	}
	/* Every packet the block sees comes or goes through this netdev. */
	if (sel->ifindex && sel->ifindex != ips->netdev->ifindex) {
		NL_SET_ERR_MSG_MOD(extack,
				   "The block sees this device's packets only: a selector on another device cannot be offloaded");
		return -EINVAL;
	}
	if (xp->mark.m || xp->if_id) {
		NL_SET_ERR_MSG_MOD(extack,
				   "The block cannot match a policy's mark or if_id");
		return -EINVAL;
	}
	if ((sel->sport_mask || sel->dport_mask) &&
	    sel->proto != IPPROTO_TCP && sel->proto != IPPROTO_UDP) {
		NL_SET_ERR_MSG_MOD(extack,
				   "The block matches ports of TCP and UDP selectors only");
		return -EINVAL;
	}
	return 0;
}

/*
 * Put @pol on ips->in_pols in the block's match order: after every policy
 * of a lower or equal priority value (those are older), before the first
 * of a higher one, so that the backstop's first match is the block's best.
 * From the tail, where a new policy usually goes.
 */
static void octep_ipsec_in_pol_link(struct octep_ipsec *ips,
				    struct octep_ipsec_pol *pol)
{
	struct octep_ipsec_pol *pos;

	lockdep_assert_held(&ips->lock);
	list_for_each_entry_reverse(pos, &ips->in_pols, in)
		if (pos->priority <= pol->priority)
			break;
	/* After @pos; first when the loop ran out (&pos->in is the head). */
	list_add_rcu(&pol->in, &pos->in);
	/* Read locklessly by octep_ipsec_rx_wanted() and the backstop. */
	WRITE_ONCE(ips->n_in_pols, ips->n_in_pols + 1);
}

/*
 * The backstop may still be matching @pol: it is freed after a grace
 * period (octep_ipsec_policy_free()), and its @in not reused before.
 */
static void octep_ipsec_in_pol_unlink(struct octep_ipsec *ips,
				      struct octep_ipsec_pol *pol)
{
	lockdep_assert_held(&ips->lock);
	list_del_rcu(&pol->in);
	WRITE_ONCE(ips->n_in_pols, ips->n_in_pols - 1);
}

/**
 * octep_ipsec_policy_add() - xdo_dev_policy_add: a policy into the block's table
 * @xp: the policy
 * @extack: where a refusal's reason goes
 *
 * Return: 0, or -EOPNOTSUPP (or the mailbox's error) with a message.
 */
int octep_ipsec_policy_add(struct xfrm_policy *xp,
			   struct netlink_ext_ack *extack)
{
	struct octep_ipsec *ips = octep_ipsec_of(xp->xdo.dev);
	struct octep_sdp_mbox_policy r;
	struct octep_ipsec_sa *ent;
	struct octep_ipsec_pol *pol;
	__le64 h = 0;
	int err;

	if (!ips) {
		NL_SET_ERR_MSG_MOD(extack, "IPsec offload is not available on this device");
		return -EOPNOTSUPP;
	}
	err = octep_ipsec_policy_ok(ips, xp, extack);
	if (!err)
		err = octep_ipsec_mbox_down(ips, extack);
	if (err)
		return err;
	pol = kzalloc(sizeof(*pol), GFP_KERNEL);
	ent = kzalloc(sizeof(*ent), GFP_KERNEL);
	if (!pol || !ent) {
		kfree(pol);
		kfree(ent);
		return -ENOMEM;
	}
	pol->xp = xp;
	pol->sel = xp->selector;
	pol->priority = xp->priority;
	ent->ips = ips;
	ent->pol = true;
	ent->dir = xp->xdo.dir;
	ent->type = XFRM_DEV_OFFLOAD_PACKET;
	INIT_LIST_HEAD(&ent->node);
	octep_ipsec_pol_fill(xp, &r);
	pol->action = r.action;

	octep_ipsec_add_begin(ips);
	err = octep_mbox_call(&ips->mbox, OCTEP_SDP_MBOX_POLICY_ADD, &r,
			      sizeof(r), &h, sizeof(h));
	if (err == -ENOSPC && octep_ipsec_room(ips))
		err = octep_mbox_call(&ips->mbox, OCTEP_SDP_MBOX_POLICY_ADD, &r,
				      sizeof(r), &h, sizeof(h));
	if (err) {
		octep_ipsec_add_end(ips);
		kfree(pol);
		kfree(ent);
		return octep_ipsec_mbox_errmsg(err, "policy add", extack);
	}
	ent->handle = (u32)le64_to_cpu(h);
	err = octep_ipsec_own(ips, ent);
	if (err) {
		octep_ipsec_queue_dead(ips, ent);
		spin_unlock_bh(&ips->lock);
		kfree(pol);
		NL_SET_ERR_MSG_MOD(extack, "Out of memory for the policy's handle");
		return err;
	}
	pol->ent = ent;
	list_add_tail(&pol->all, &ips->pols);
	/* Read locklessly by octep_ipsec_tx_flags(). */
	if (ent->dir == XFRM_DEV_OFFLOAD_OUT)
		WRITE_ONCE(ips->n_out_pols, ips->n_out_pols + 1);
	else
		octep_ipsec_in_pol_link(ips, pol);
	spin_unlock_bh(&ips->lock);
	xp->xdo.offload_handle = (unsigned long)pol;
	mod_delayed_work(system_wq, &ips->stats_work,
			 msecs_to_jiffies(OCTEP_IPSEC_STATS_MS));
	return 0;
}

/**
 * octep_ipsec_policy_delete() - xdo_dev_policy_delete
 * @xp: the policy
 *
 * The block's entry goes to ctl_work's queue of deletes.
 *
 * Context: may be atomic (under the xfrm policy lock).
 */
void octep_ipsec_policy_delete(struct xfrm_policy *xp)
{
	struct octep_ipsec_pol *pol = (void *)xp->xdo.offload_handle;
	struct octep_ipsec *ips = octep_ipsec_of(xp->xdo.dev);
	struct octep_ipsec_sa *ent;

	if (!pol || !ips)
		return;
	spin_lock_bh(&ips->lock);
	ent = pol->ent;
	pol->ent = NULL;
	if (ent) {
		if (ent->dir == XFRM_DEV_OFFLOAD_OUT)
			WRITE_ONCE(ips->n_out_pols, ips->n_out_pols - 1);
		else
			octep_ipsec_in_pol_unlink(ips, pol);
		octep_ipsec_queue_dead(ips, ent);
	}
	spin_unlock_bh(&ips->lock);
}

/**
 * octep_ipsec_policy_free() - xdo_dev_policy_free: let go of a deleted policy
 * @xp: the policy
 */
void octep_ipsec_policy_free(struct xfrm_policy *xp)
{
	struct octep_ipsec_pol *pol = (void *)xp->xdo.offload_handle;
	struct octep_ipsec *ips = octep_ipsec_of(xp->xdo.dev);

	if (!pol)
		return;
	octep_ipsec_policy_delete(xp);
	if (ips) {
		spin_lock_bh(&ips->lock);
		list_del(&pol->all);
		spin_unlock_bh(&ips->lock);
	}
	xp->xdo.offload_handle = 0;
	/* Off ips->in_pols since the delete above, maybe still walked. */
	kfree_rcu(pol, rcu);
}

/**
 * octep_ipsec_netdev_uninit() - let go of the netdev in killed policies
 * @oct: device, its netdev being unregistered (ndo_uninit, under RTNL)
 *
 * Unregistering kills every policy offloaded to the netdev (the xfrm
 * core's flush at NETDEV_DOWN and NETDEV_UNREGISTER), but a killed policy
 * keeps its reference on the netdev until it is destroyed, and it is not
 * destroyed while a bundle holds it. A TCP socket keeps its bundle cached
 * (sk_dst_cache) until it next sends, which a socket that only receives,
 * or waits, never does once the link is gone: unregister_netdevice() then
 * waits ("waiting for ethN to become free") as long as the application
 * keeps the socket open. Crypto offload has no such wait: its policies are
 * not offloaded, and the core lets go of a flushed state's device at once
 * (xfrm_dev_state_flush() calls xfrm_dev_state_free()).
 *
 * A workaround for the core, which patches/0001 fixes in
 * xfrm_dev_policy_flush(): with it applied this finds nothing to free.
 * It does for the killed policies what the core does for the flushed
 * states: their device part is freed now (xfrm_dev_policy_free(), which
 * calls octep_ipsec_policy_free() and puts the core's netdev reference),
 * under a reference of ours: without it the policy could be destroyed
 * meanwhile, which frees the device part too. The policy lives on,
 * dead and with no device, until its last bundle goes. Lookups find live
 * policies only; one that found this policy before the close killed it
 * and is still resolving a bundle through it now would take it as having
 * no device - the window the core's state flush leaves for states too.
 */
void octep_ipsec_netdev_uninit(struct octep_dev *oct)
{
	struct octep_ipsec *ips = oct->ipsec;
	struct octep_ipsec_pol *pol, *tmp;
	LIST_HEAD(held);

	ASSERT_RTNL();
	if (!ips)
		return;
	spin_lock_bh(&ips->lock);
	list_for_each_entry(pol, &ips->pols, all) {
		/*
		 * A policy whose last reference is gone is being destroyed:
		 * its free, waiting for ips->lock, takes it off the list.
		 */
		if (READ_ONCE(pol->xp->walk.dead) &&
		    refcount_inc_not_zero(&pol->xp->refcnt))
			list_add_tail(&pol->held, &held);
	}
	spin_unlock_bh(&ips->lock);
	list_for_each_entry_safe(pol, tmp, &held, held) {
		struct xfrm_policy *xp = pol->xp;

		/* Frees pol (after a grace period): not touched again. */
		xfrm_dev_policy_free(xp);
		xfrm_pol_put(xp);
	}
}
