/* SPDX-License-Identifier: GPL-2.0 */
/*
 * octep_ipsec: what the xfrm_*.c files share: the offloaded entries and
 * the functions one calls in another. Included after ipsec.h.
 */
#ifndef _OCTEP_IPSEC_XFRM_PRIV_H
#define _OCTEP_IPSEC_XFRM_PRIV_H

#include <net/xfrm.h>

#include "ipsec.h"

/**
 * struct octep_ipsec_sa - one offloaded xfrm state
 * @ips: the offload it belongs to
 * @x: the state; NULL for a policy's entry
 * @node: on ips->sas, then on ips->dead, maybe then on ips->orphans (under
 *	ips->lock; off every list while ctl_work deletes it). A policy's
 *	entry is on no list while it lives.
 * @rcu: freed after a grace period (the datapath looks it up under RCU)
 * @handle: the block's handle, 0 when the block has no entry (larval)
 * @dir: XFRM_DEV_OFFLOAD_IN or _OUT
 * @type: XFRM_DEV_OFFLOAD_CRYPTO or _PACKET
 * @pol: the entry of a policy (struct octep_ipsec_pol), not of a state
 * @esn_hi: inbound ESN: the high half last given (or queued) to the block
 * @esn_dirty: @esn_hi is to be sent
 * @hw: the block's counters as last read (packet offload)
 * @where: OCTEP_SA_LIVE, _DEAD or _ORPHAN (under ips->lock)
 * @replaced: the block gave its handle to a newer entry: this one is gone
 * @seen: the last resync's list showed its handle (an orphan's)
 * @encap: the state is ESP in UDP (the block's entry is ESPINUDP)
 * @encap_dirty: the state's ports moved: ctl_work is to send FLOW_ENCAP
 *	(under ips->lock)
 * @sport: the UDP source port the block's entry has (network order;
 *	written under ips->lock, read locklessly)
 * @dport: the same, destination
 * @l2: an outbound packet-offload tunnel whose next hop is followed
 *	(xfrm_nh.c); set before the entry is published, then constant
 * @l2_dirty: the next hop's MAC, its validity or ours changed: ctl_work
 *	is to send FLOW_L2 (under ips->lock)
 * @l2_kick: ctl_work is to resolve the next hop again, sending FLOW_L2
 *	only if that changes @l2m (under ips->lock)
 * @l2_ok: the block's entry is SET, not HOLD (written after the block has
 *	it; read locklessly by transmit)
 * @l2_kicked: jiffies of the last octep_ipsec_nh_kick() that passed
 * @l2m: the addressing last sent to the block, or being sent (under
 *	ips->lock)
 * @nh_tbl: the next hop's neighbour table (ARP or ND); NULL while the
 *	route does not leave through our netdev (under ips->lock)
 * @nh: the next hop's address, @nh_tbl's key (under ips->lock)
 * @nh_net: the state's netns, where its route is looked up
 * @nh_saddr: the state's outer source address, for that lookup
 * @nh_genid: the route generation @nh was found under (written under
 *	ips->lock, read locklessly by transmit)
 * @spi: inbound: the SPI, @daddr and @family, to find a dead entry that
 *	still holds them in the block when an add gets EEXIST
 * @daddr: see @spi
 * @family: see @spi
 */
struct octep_ipsec_sa {
	struct octep_ipsec *ips;
	struct xfrm_state *x;
	struct list_head node;
	struct rcu_head rcu;
	u32 handle;
	u8 dir;
	u8 type;
	bool pol;
	u32 esn_hi;
	bool esn_dirty;
	struct octep_sdp_mbox_flow_stats hw;
	u8 where;
	bool replaced;
	bool seen;
	bool encap;
	bool encap_dirty;
	__be16 sport;
	__be16 dport;
	bool l2;
	bool l2_dirty;
	bool l2_kick;
	bool l2_ok;
	unsigned long l2_kicked;
	struct octep_sdp_mbox_flow_l2 l2m;
	struct neigh_table *nh_tbl;
	xfrm_address_t nh;
	struct net *nh_net;
	xfrm_address_t nh_saddr;
	int nh_genid;
	__be32 spi;
	xfrm_address_t daddr;
	u16 family;
};

enum { OCTEP_SA_LIVE, OCTEP_SA_DEAD, OCTEP_SA_ORPHAN };

/* Deletes wait in ctl_work's queue; a failed one is retried this late. */
#define OCTEP_IPSEC_RETRY_MS		1000
#define OCTEP_IPSEC_RETRY_MAX_MS	16000
/* An add that finds the table full while deletes are queued waits this. */
#define OCTEP_IPSEC_FULL_WAIT_MS	1000

/**
 * struct octep_ipsec_pol - an offloaded packet-offload policy
 * @in: on ips->in_pols while the policy has an inbound entry in the
 *	block's table (changed under ips->lock, walked under RCU by the
 *	receive backstop)
 * @sel: @xp's selector
 * @action: what the block was told @xp does (OCTEP_SDP_POL_*)
 * @priority: @xp's priority
 * @xp: the policy
 * @ent: its entry in the block's policy table, until the policy is
 *	deleted (then the entry is ctl_work's to delete; under ips->lock)
 * @all: on ips->pols until the policy is freed (under ips->lock)
 * @held: on octep_ipsec_netdev_uninit()'s list
 * @rcu: freed after a grace period: the backstop may still hold it
 *
 * @sel, @action and @priority are copied from @xp at add, before @in
 * publishes them, and never change (the core replaces a policy it
 * updates): the backstop reads them without READ_ONCE(), and never reads
 * @xp, which a failed insert frees with no grace period.
 */
struct octep_ipsec_pol {
	struct list_head in;
	struct xfrm_selector sel;
	u8 action;
	u32 priority;
	struct xfrm_policy *xp;
	struct octep_ipsec_sa *ent;
	struct list_head all;
	struct list_head held;
	struct rcu_head rcu;
};

static inline void octep_ipsec_inc(struct octep_ipsec *ips,
				   enum octep_ipsec_cnt c)
{
	atomic64_inc(&ips->cnt[c]);
}

static inline void octep_ipsec_add(struct octep_ipsec *ips,
				   enum octep_ipsec_cnt c, u64 v)
{
	atomic64_add(v, &ips->cnt[c]);
}

static inline bool octep_ipsec_has(const struct octep_ipsec *ips, u32 feat)
{
	return le32_to_cpu(ips->info.features) & feat;
}

static inline bool octep_ipsec_has_limits(const struct xfrm_state *x)
{
	return x->lft.soft_byte_limit != XFRM_INF ||
	       x->lft.hard_byte_limit != XFRM_INF ||
	       x->lft.soft_packet_limit != XFRM_INF ||
	       x->lft.hard_packet_limit != XFRM_INF;
}

static inline void octep_ipsec_add_end(struct octep_ipsec *ips)
{
	atomic_dec(&ips->adds_inflight);
}

/* xfrm.c */
struct octep_ipsec *octep_ipsec_of(struct net_device *dev);
bool octep_ipsec_room(struct octep_ipsec *ips);
void octep_ipsec_add_begin(struct octep_ipsec *ips);
int octep_ipsec_own(struct octep_ipsec *ips, struct octep_ipsec_sa *ent)
	__acquires(&ips->lock);
void octep_ipsec_queue_dead(struct octep_ipsec *ips,
			    struct octep_ipsec_sa *ent);
void octep_ipsec_check_expire(struct xfrm_state *x);
/* xfrm_ctl.c */
bool octep_ipsec_encap_stale(struct octep_ipsec_sa *sa,
			     const struct xfrm_state *x);
struct octep_ipsec_sa *octep_ipsec_update_send(struct octep_ipsec *ips,
					       u8 cmd, const __le64 *req,
					       size_t len, int *err)
	__acquires(&ips->lock);
int octep_ipsec_update_done(struct octep_ipsec *ips, const char *what,
			    u32 handle, int err)
	__releases(&ips->lock);
int octep_ipsec_mbox_errmsg(int err, const char *what,
			    struct netlink_ext_ack *extack);
int octep_ipsec_mbox_down(struct octep_ipsec *ips,
			  struct netlink_ext_ack *extack);
unsigned int octep_ipsec_del_handles(struct octep_ipsec *ips,
				     const u32 *h, unsigned int n,
				     int *err);
void octep_ipsec_forget(struct octep_ipsec *ips,
			struct octep_ipsec_sa *sa);
void octep_ipsec_orphan(struct octep_ipsec *ips,
			struct octep_ipsec_sa *sa);
int octep_ipsec_del_batch(struct octep_ipsec *ips, unsigned int n,
			  bool fresh, unsigned int *freed);
int octep_ipsec_resync(struct octep_ipsec *ips);
void octep_ipsec_leaked(struct octep_mbox *mb);
void octep_ipsec_mbox_recover(struct octep_mbox *mb);
void octep_ipsec_ctl_work(struct work_struct *work);
void octep_ipsec_advance_esn(struct xfrm_state *x);
/* xfrm_nh.c */
void octep_ipsec_nh_init(struct octep_ipsec *ips, struct xfrm_state *x,
			 struct octep_ipsec_sa *sa);
void octep_ipsec_nh_added(struct octep_ipsec_sa *sa);
void octep_ipsec_nh_kick(struct octep_ipsec_sa *sa);
bool octep_ipsec_nh_moved(const struct octep_ipsec_sa *sa);
int octep_ipsec_nh_updates(struct octep_ipsec *ips);
void octep_ipsec_nh_start(struct octep_ipsec *ips);
void octep_ipsec_nh_stop(struct octep_ipsec *ips);
/* xfrm_policy.c */
int octep_ipsec_policy_add(struct xfrm_policy *xp,
			   struct netlink_ext_ack *extack);
void octep_ipsec_policy_delete(struct xfrm_policy *xp);
void octep_ipsec_policy_free(struct xfrm_policy *xp);
/* xfrm_rxtx.c */
bool octep_ipsec_offload_ok(struct sk_buff *skb, struct xfrm_state *x);
void octep_ipsec_rx_account(struct octep_ipsec *ips, u32 handle,
			    enum octep_ipsec_cnt c);
/* xfrm_stats.c */
void octep_ipsec_stats_work(struct work_struct *work);
void octep_ipsec_update_stats(struct xfrm_state *x);

#endif /* _OCTEP_IPSEC_XFRM_PRIV_H */
