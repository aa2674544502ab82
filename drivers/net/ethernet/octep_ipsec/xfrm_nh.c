// SPDX-License-Identifier: GPL-2.0
/*
 * octep_ipsec: next hops of packet-offload tunnels (OCTEP_SDP_FEAT_L2).
 *
 * In tunnel mode the block builds the outer frame, and the stack gives it
 * no usable Ethernet header (forwarded packets get none at all:
 * xfrm_dev_direct_output() leaves L2 to the device): it must be told
 * whom to send it to. At state
 * add the route to the outer destination, in the state's netns, names the
 * next hop; if the route leaves through our netdev, its neighbour's MAC
 * and ours go to the block with the entry. A neighbour not yet valid
 * puts the entry on HOLD (the block drops its frames) and resolution is
 * started. A netevent notifier follows the neighbour; our own MAC is
 * followed from ndo_set_mac_address; ctl_work sends FLOW_L2 for both.
 * The route is followed too: transmit compares the namespace's route
 * generation with the one the next hop was found under, and a change has
 * ctl_work look the route up again (at most once a second per entry, and
 * only while the entry carries traffic: an idle tunnel costs nothing).
 */
#include <linux/etherdevice.h>
#include <net/ip6_route.h>
#include <net/neighbour.h>
#include <net/netevent.h>
#include <net/route.h>
#include <net/xfrm.h>

#include "octep_ipsec.h"
#include "ipsec.h"
#include "xfrm.h"

/*
 * What the block is to have for the neighbour @key of @tbl on our netdev:
 * SET with its MAC and ours, or HOLD while it is not valid (then
 * resolution is started, or restarted after a failure). A broadcast or
 * otherwise invalid address (a NOARP device's) is HOLD too: the block
 * never sends a tunnel's frames to everyone. Context: process or BH.
 */
static void octep_ipsec_nh_resolve(struct octep_ipsec *ips,
				   struct neigh_table *tbl, const void *key,
				   struct octep_sdp_mbox_flow_l2 *l2)
{
	struct net_device *nd = ips->netdev;
	struct neighbour *n;

	memset(l2, 0, sizeof(*l2));
	l2->state = OCTEP_SDP_FLOW_L2_HOLD;
	n = neigh_lookup(tbl, key, nd);
	if (!n) {
		n = neigh_create(tbl, key, nd);
		if (IS_ERR(n))
			return;
	}
	neigh_ha_snapshot(l2->h_dest, n, nd);
	if ((READ_ONCE(n->nud_state) & NUD_VALID) && !READ_ONCE(n->dead) &&
	    is_valid_ether_addr(l2->h_dest)) {
		l2->state = OCTEP_SDP_FLOW_L2_SET;
		/*
		 * Not under RTNL: a read torn by a MAC change is followed by
		 * the FLOW_L2 that octep_ipsec_mac_changed() queues after it.
		 */
		ether_addr_copy(l2->h_source, nd->dev_addr);
	} else {
		eth_zero_addr(l2->h_dest);
		neigh_event_send(n, NULL);
	}
	neigh_release(n);
}

/*
 * The route generation of @family in @net: any route change moves it.
 *
 * IPv4 bumps rt_genid on every FIB change (rt_cache_flush()). IPv6 in
 * 6.12 has no one counter for that: rt_genid_ipv6() is the netns's
 * fib6_sernum, which every route add or replace moves (fib6_add()), and
 * address or rule changes (fib6_flush_trees()), but not a delete:
 * fib6_del() unlinks the route, and a cached dst learns of it through
 * its cookie, the route's node being gone. Holding a dst per entry for
 * its cookie would tie its lifetime to ours; a delete does count in the
 * netns's rt6_stats (fib_discarded_routes, fib6_del_route() being every
 * delete's path), so the two together move on any change. Both only
 * grow (the sernum wraps at INT_MAX to 1): their sum changes when either
 * does. A plain read of a counter written under the table's lock: an
 * old value costs one more transmit before the lookup, no more.
 */
static int octep_ipsec_nh_genid(const struct net *net, u16 family)
{
#if IS_ENABLED(CONFIG_IPV6)
	/* An IPv6 state lives in a netns with IPv6 up: rt6_stats is set. */
	if (family == AF_INET6)
		return rt_genid_ipv6(net) +
		       READ_ONCE(net->ipv6.rt6_stats->fib_discarded_routes);
#endif
	return rt_genid_ipv4(net);
}

/*
 * The next hop of the route from @saddr to @daddr in @net: its neighbour
 * table and key in @tbl and @nh. False when that route does not leave
 * through our netdev (or there is none): the block cannot address it.
 * Context: process.
 */
static bool octep_ipsec_nh_route(struct octep_ipsec *ips, struct net *net,
				 u16 family, const xfrm_address_t *saddr,
				 const xfrm_address_t *daddr,
				 struct neigh_table **tbl, xfrm_address_t *nh)
{
	struct dst_entry *dst;
	struct neighbour *n;

	if (family == AF_INET) {
		struct flowi4 fl4 = {
			.daddr = daddr->a4,
			.saddr = saddr->a4,
		};
		struct rtable *rt = ip_route_output_key(net, &fl4);

		if (IS_ERR(rt))
			return false;
		if (rt->rt_type != RTN_UNICAST) {
			ip_rt_put(rt);
			return false;
		}
		dst = &rt->dst;
	} else if (IS_REACHABLE(CONFIG_IPV6)) {
		struct flowi6 fl6 = {
			.daddr = daddr->in6,
			.saddr = saddr->in6,
		};

		if (ip6_dst_lookup(net, NULL, &dst, &fl6))
			return false;
	} else {
		return false;
	}
	/* The gateway, or the destination itself on the link. */
	n = dst->dev == ips->netdev ? dst_neigh_lookup(dst, daddr) : NULL;
	dst_release(dst);
	if (!n)
		return false;
	*tbl = n->tbl;
	memset(nh, 0, sizeof(*nh));
	memcpy(nh, n->primary_key, n->tbl->key_len);
	neigh_release(n);
	return true;
}

/**
 * octep_ipsec_nh_init() - find an outbound tunnel state's next hop
 * @ips: the offload
 * @x: the state, before its FLOW_ADD
 * @sa: its entry: @sa->l2 and @sa->l2m are set for FLOW_ADD
 *
 * Only an outbound packet-offload tunnel whose route leaves through our
 * netdev is followed; any other entry stays NONE (the block sends to the
 * link's far end, as one without OCTEP_SDP_FEAT_L2 does).
 *
 * Context: process (xdo_dev_state_add).
 */
void octep_ipsec_nh_init(struct octep_ipsec *ips, struct xfrm_state *x,
			 struct octep_ipsec_sa *sa)
{
	struct net *net = xs_net(x);
	int genid;

	if (!octep_ipsec_has(ips, OCTEP_SDP_FEAT_L2) ||
	    x->props.mode != XFRM_MODE_TUNNEL ||
	    x->xso.type != XFRM_DEV_OFFLOAD_PACKET ||
	    x->xso.dir != XFRM_DEV_OFFLOAD_OUT)
		return;
	/* Read before the lookup: a change during it is seen as one. */
	genid = octep_ipsec_nh_genid(net, x->props.family);
	if (!octep_ipsec_nh_route(ips, net, x->props.family, &x->props.saddr,
				  &x->id.daddr, &sa->nh_tbl, &sa->nh))
		return;
	sa->l2 = true;
	sa->nh_net = net;
	sa->nh_saddr = x->props.saddr;
	sa->nh_genid = genid;
	octep_ipsec_nh_resolve(ips, sa->nh_tbl, &sa->nh, &sa->l2m);
	sa->l2_ok = sa->l2m.state == OCTEP_SDP_FLOW_L2_SET;
	sa->l2_kicked = jiffies - HZ;
}

/**
 * octep_ipsec_nh_moved() - may an entry's route have changed?
 * @sa: an entry with a next hop (@sa->l2)
 *
 * Return: true when a route of the entry's family changed since its next
 * hop was found (transmit then calls octep_ipsec_nh_kick()).
 *
 * Context: any (transmit).
 */
bool octep_ipsec_nh_moved(const struct octep_ipsec_sa *sa)
{
	/* Pairs with WRITE_ONCE() in octep_ipsec_nh_updates(). */
	return READ_ONCE(sa->nh_genid) !=
	       octep_ipsec_nh_genid(sa->nh_net, sa->family);
}

/**
 * octep_ipsec_nh_kick() - look at an entry's next hop again
 * @sa: an entry on HOLD, or one whose route may have changed
 *
 * Transmit calls it for each packet the block will drop, and for each
 * after a route change (octep_ipsec_nh_moved()): at most once a second
 * it has ctl_work resolve the next hop again (a neighbour that failed, or
 * was flushed, is asked for anew; after a route change, the route is
 * looked up first) and send FLOW_L2 if that changed anything. It also
 * covers a neighbour that became valid while the entry's FLOW_ADD was in
 * flight, before the notifier could see it.
 *
 * Context: any (transmit, under RCU).
 */
void octep_ipsec_nh_kick(struct octep_ipsec_sa *sa)
{
	struct octep_ipsec *ips = sa->ips;
	unsigned long now = jiffies;

	/* Racy by design: CPUs that both pass cost one more lookup. */
	if (time_before(now, READ_ONCE(sa->l2_kicked) + HZ))
		return;
	WRITE_ONCE(sa->l2_kicked, now);
	/* Not once removal began, nor for a freed state's entry. */
	spin_lock_bh(&ips->lock);
	if (!sa->l2_kick && !ips->dying && sa->where == OCTEP_SA_LIVE) {
		sa->l2_kick = true;
		mod_delayed_work(system_wq, &ips->ctl_work, 0);
	}
	spin_unlock_bh(&ips->lock);
}

/**
 * octep_ipsec_nh_added() - an entry with a next hop has its handle
 * @sa: the entry, just put on ips->sas
 *
 * One added on HOLD is looked at again at once: its neighbour may have
 * become valid while FLOW_ADD was in flight, unseen by the notifier.
 *
 * Context: under ips->lock.
 */
void octep_ipsec_nh_added(struct octep_ipsec_sa *sa)
{
	lockdep_assert_held(&sa->ips->lock);
	if (!sa->l2 || sa->l2_ok || sa->ips->dying)
		return;
	sa->l2_kick = true;
	mod_delayed_work(system_wq, &sa->ips->ctl_work, 0);
}

/*
 * NETEVENT_NEIGH_UPDATE: a neighbour on our netdev changed. Every entry
 * whose next hop it is, and whose block entry it now contradicts (another
 * MAC, or valid against HOLD), is marked for ctl_work; the notifier runs
 * in atomic context and never talks to the block itself.
 */
static int octep_ipsec_netevent(struct notifier_block *nb,
				unsigned long event, void *ptr)
{
	struct octep_ipsec *ips = container_of(nb, struct octep_ipsec,
					       netevent_nb);
	struct octep_ipsec_sa *sa;
	struct neighbour *n = ptr;
	bool valid, queue = false;
	u8 ha[ETH_ALEN];

	if (event != NETEVENT_NEIGH_UPDATE || n->dev != ips->netdev)
		return NOTIFY_DONE;
	neigh_ha_snapshot(ha, n, n->dev);
	valid = (READ_ONCE(n->nud_state) & NUD_VALID) && !READ_ONCE(n->dead) &&
		is_valid_ether_addr(ha);
	spin_lock_bh(&ips->lock);
	list_for_each_entry(sa, &ips->sas, node) {
		if (!sa->l2 || sa->nh_tbl != n->tbl ||
		    memcmp(&sa->nh, n->primary_key, n->tbl->key_len))
			continue;
		/* As last sent (or being sent): ctl_work writes it first. */
		if (valid && sa->l2m.state == OCTEP_SDP_FLOW_L2_SET &&
		    ether_addr_equal(sa->l2m.h_dest, ha))
			continue;
		if (!valid && sa->l2m.state == OCTEP_SDP_FLOW_L2_HOLD)
			continue;
		sa->l2_dirty = true;
		queue = true;
	}
	/* Not once removal began: dying is set under the lock. */
	if (queue && !ips->dying)
		mod_delayed_work(system_wq, &ips->ctl_work, 0);
	spin_unlock_bh(&ips->lock);
	return NOTIFY_DONE;
}

/**
 * octep_ipsec_nh_updates() - send FLOW_L2 for the entries marked
 * @ips: the offload
 *
 * A kicked entry whose next hop is as the block has it costs a lookup, no
 * exchange.
 *
 * Context: ctl_work.
 * Return: 0 or the first failed exchange's error (the entry stays
 * marked, for ctl_work's retry).
 */
int octep_ipsec_nh_updates(struct octep_ipsec *ips)
{
	xfrm_address_t nh = {}, saddr, daddr;
	struct octep_sdp_mbox_flow_l2 l2;
	struct neigh_table *tbl = NULL;
	struct octep_ipsec_sa *sa;
	bool force = false, moved = false;
	struct net *net = NULL;
	int genid = 0;
	__le64 req[3];
	u16 family = 0;
	u32 handle;
	int err;

	BUILD_BUG_ON(sizeof(l2) != 2 * sizeof(req[0]));
	for (;;) {
		handle = 0;
		spin_lock_bh(&ips->lock);
		list_for_each_entry(sa, &ips->sas, node) {
			if ((sa->l2_dirty || sa->l2_kick) && sa->handle) {
				force = sa->l2_dirty;
				sa->l2_dirty = false;
				sa->l2_kick = false;
				handle = sa->handle;
				tbl = sa->nh_tbl;
				nh = sa->nh;
				moved = octep_ipsec_nh_moved(sa);
				/*
				 * Its states, this one among them, are flushed
				 * before a netns goes: while the entry is live
				 * under the lock, the netns is there to ref.
				 */
				net = moved ? maybe_get_net(sa->nh_net) : NULL;
				moved = !!net;
				family = sa->family;
				saddr = sa->nh_saddr;
				daddr = sa->daddr;
				break;
			}
		}
		spin_unlock_bh(&ips->lock);
		if (!handle)
			return 0;
		if (moved) {
			genid = octep_ipsec_nh_genid(net, family);
			if (!octep_ipsec_nh_route(ips, net, family, &saddr,
						  &daddr, &tbl, &nh))
				tbl = NULL;
			put_net(net);
		}
		if (tbl) {
			octep_ipsec_nh_resolve(ips, tbl, &nh, &l2);
		} else {
			/* No route through us: the block holds the frames. */
			memset(&l2, 0, sizeof(l2));
			l2.state = OCTEP_SDP_FLOW_L2_HOLD;
		}
		spin_lock_bh(&ips->lock);
		sa = xa_load(&ips->owned, handle);
		if (sa && sa->where == OCTEP_SA_LIVE && moved) {
			/*
			 * The notifier follows the new next hop from now (none
			 * with no table: it matches no neighbour).
			 */
			sa->nh_tbl = tbl;
			sa->nh = nh;
			WRITE_ONCE(sa->nh_genid, genid);
		}
		if (!sa || sa->where != OCTEP_SA_LIVE ||
		    (!force && !memcmp(&sa->l2m, &l2, sizeof(l2)))) {
			spin_unlock_bh(&ips->lock);
			continue;
		}
		/* What the notifier compares with, from now on. */
		sa->l2m = l2;
		spin_unlock_bh(&ips->lock);
		req[0] = cpu_to_le64(handle);
		memcpy(&req[1], &l2, sizeof(l2));
		sa = octep_ipsec_update_send(ips, OCTEP_SDP_MBOX_FLOW_L2, req,
					     sizeof(req), &err);
		if (sa && err)
			sa->l2_dirty = true;
		else if (sa)
			/* Read locklessly by transmit. */
			WRITE_ONCE(sa->l2_ok, l2.state == OCTEP_SDP_FLOW_L2_SET);
		err = octep_ipsec_update_done(ips, "next hop update", handle,
					      err);
		if (err)
			return err;
	}
}

/**
 * octep_ipsec_mac_changed() - our netdev's MAC changed
 * @oct: device
 *
 * Every entry with a next hop is sent its new source MAC.
 *
 * Context: process, under RTNL (ndo_set_mac_address), after the change.
 */
void octep_ipsec_mac_changed(struct octep_dev *oct)
{
	struct octep_ipsec *ips = oct->ipsec;
	struct octep_ipsec_sa *sa;
	bool queue = false;

	if (!ips)
		return;
	spin_lock_bh(&ips->lock);
	list_for_each_entry(sa, &ips->sas, node) {
		if (sa->l2) {
			sa->l2_dirty = true;
			queue = true;
		}
	}
	if (queue && !ips->dying)
		mod_delayed_work(system_wq, &ips->ctl_work, 0);
	spin_unlock_bh(&ips->lock);
}

/**
 * octep_ipsec_nh_start() - follow neighbours on the netdev
 * @ips: the offload, its netdev set
 */
void octep_ipsec_nh_start(struct octep_ipsec *ips)
{
	ips->netevent_nb.notifier_call = octep_ipsec_netevent;
	/* Cannot fail: an atomic notifier chain's registration. */
	register_netevent_notifier(&ips->netevent_nb);
}

/**
 * octep_ipsec_nh_stop() - stop following them
 * @ips: the offload
 *
 * Returns once no notifier call is running (RCU).
 */
void octep_ipsec_nh_stop(struct octep_ipsec *ips)
{
	if (ips->netevent_nb.notifier_call)
		unregister_netevent_notifier(&ips->netevent_nb);
}
