// SPDX-License-Identifier: GPL-2.0
/*
 * octep_ipsec: xfrm device offload into the block's flow table.
 *
 * Crypto offload: the stack builds ESP; transmit passes the entry's handle
 * with OCTEP_SDP_TX_IPSEC_ENCRYPT and the block fills the IV, encrypts and
 * writes the ICV. Receive: the block decrypts and verifies in place and
 * says so in the response header; we hand the packet up with a secpath
 * whose xfrm_offload says CRYPTO_DONE, and esp4/esp6 strip it.
 *
 * Packet offload: policies and states both live in the block's tables.
 * The stack sends plain packets. One it chose to protect carries its state
 * in a secpath (set in xdo_dev_offload_ok) and goes to the block with
 * OCTEP_SDP_TX_IPSEC_ENCAP and that entry's handle: the block encapsulates
 * it or drops it, never sends it as it came. Others, while outbound
 * policies are offloaded, go with OCTEP_SDP_TX_IPSEC_CLASSIFY: the block's
 * policy table finds the policy and the state, and it encapsulates, sends
 * clear or drops. The driver never searches per packet. Receive:
 * the block decapsulates, checks the inbound policies, and says so in the
 * response header; the secpath we set lets the stack's policy check pass.
 *
 * devlink ipsec_flows: 0 the host carries every association (offload is
 * refused with a message: crypto requests fall back to software ESP over
 * this netdev, packet requests fail); 1 the outbound (encrypting) direction
 * may be offloaded; 2 both. A change applies to later requests: states
 * already offloaded stay in the block until they are deleted (a rekey
 * brings an association to the new setting), so no state is stranded.
 */
#include <linux/bitfield.h>
#include <linux/etherdevice.h>
#include <linux/ethtool.h>
#include <linux/if_vlan.h>
#include <linux/inetdevice.h>
#include <linux/ip.h>
#include <linux/ipv6.h>
#include <linux/netdevice.h>
#include <linux/tcp.h>
#include <linux/udp.h>
#include <net/bonding.h>
#include <net/ipv6.h>
#include <net/xfrm.h>

#include "octep_ipsec.h"
#include "ipsec.h"

#define OCTEP_IPSEC_FLOWS_DEF	2

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
 * @xp: the policy
 * @ent: its entry in the block's policy table, until the policy is
 *	deleted (then the entry is ctl_work's to delete; under ips->lock)
 * @all: on ips->pols until the policy is freed (under ips->lock)
 * @held: on octep_ipsec_netdev_uninit()'s list
 */
struct octep_ipsec_pol {
	struct xfrm_policy *xp;
	struct octep_ipsec_sa *ent;
	struct list_head all;
	struct list_head held;
};

static const char * const octep_ipsec_cnt_names[OCTEP_IPSEC_NCNT] = {
	[OCTEP_IPSEC_TX_PACKETS] = "ipsec_tx_packets",
	[OCTEP_IPSEC_TX_BYTES] = "ipsec_tx_bytes",
	[OCTEP_IPSEC_RX_PACKETS] = "ipsec_rx_packets",
	[OCTEP_IPSEC_RX_BYTES] = "ipsec_rx_bytes",
	[OCTEP_IPSEC_OUT_DROP] = "ipsec_out_drop",
	[OCTEP_IPSEC_IN_DROP] = "ipsec_in_drop",
	[OCTEP_IPSEC_RX_BAD_ICV] = "ipsec_rx_bad_icv",
	[OCTEP_IPSEC_RX_REPLAY] = "ipsec_rx_replay",
	[OCTEP_IPSEC_RX_NO_ENTRY] = "ipsec_rx_no_entry",
	[OCTEP_IPSEC_RX_MALFORMED] = "ipsec_rx_malformed",
	[OCTEP_IPSEC_RX_CLEAR_DROP] = "ipsec_rx_clear_drop",
	[OCTEP_IPSEC_RX_POL_BLOCK] = "ipsec_rx_policy_block",
	[OCTEP_IPSEC_RX_TMPL_MISMATCH] = "ipsec_rx_tmpl_mismatch",
	[OCTEP_IPSEC_RX_EXPIRED] = "ipsec_rx_expired",
};

/* Device-wide names after the per-state counters: the mailbox's. */
static const char * const octep_mbox_cnt_names[] = {
	"mbox_requests", "mbox_timeouts", "mbox_errors", "mbox_stray",
	"ipsec_states", "ipsec_del_pending", "ipsec_orphans",
	"ipsec_orphans_total", "ipsec_resyncs", "ipsec_resync_freed",
};

static const struct xfrmdev_ops octep_xfrmdev_ops;

/*
 * The offload of @dev if it is our netdev, else NULL: the xfrm core and a
 * bond may hand us their own device, whose private data is not ours.
 */
static struct octep_ipsec *octep_ipsec_of(struct net_device *dev)
{
	if (!dev || dev->xfrmdev_ops != &octep_xfrmdev_ops)
		return NULL;
	return octep_from_netdev(dev)->ipsec;
}

static void octep_ipsec_inc(struct octep_ipsec *ips, enum octep_ipsec_cnt c)
{
	atomic64_inc(&ips->cnt[c]);
}

static void octep_ipsec_add(struct octep_ipsec *ips, enum octep_ipsec_cnt c,
			    u64 v)
{
	atomic64_add(v, &ips->cnt[c]);
}

/* ------------------------------------------------------------ states */

static u32 octep_ipsec_replay_window(const struct xfrm_state *x)
{
	return x->replay_esn ? x->replay_esn->replay_window :
			       x->props.replay_window;
}

/*
 * What this block's flow table says it cannot do (GET_INFO's feature bits,
 * read at probe): true, with the reason in @extack, if @x needs it.
 */
static bool octep_ipsec_lacks(const struct octep_ipsec *ips,
			      const struct xfrm_state *x,
			      struct netlink_ext_ack *extack)
{
	u32 feat = le32_to_cpu(ips->info.features);
	const char *what = NULL;

	if (x->xso.type == XFRM_DEV_OFFLOAD_PACKET &&
	    !(feat & OCTEP_SDP_FEAT_PACKET))
		what = "packet offload";
	else if ((x->props.flags & XFRM_STATE_ESN) &&
		 !(feat & OCTEP_SDP_FEAT_ESN))
		what = "ESN";
	else if (x->props.mode == XFRM_MODE_TUNNEL &&
		 !(feat & OCTEP_SDP_FEAT_TUNNEL))
		what = "tunnel mode";
	else if ((x->props.family == AF_INET6 || x->sel.family == AF_INET6) &&
		 !(feat & OCTEP_SDP_FEAT_IPV6))
		what = "IPv6";
	if (!what)
		return false;
	NL_SET_ERR_MSG_FMT_MOD(extack,
			       "The coprocessor's flow table does not offer %s",
			       what);
	return true;
}

/*
 * What the flow table cannot do, refused with the reason. Every refusal
 * is -EOPNOTSUPP: for crypto offload that is the one errno on which
 * xfrm_dev_state_add() falls back to software ESP (over this netdev, the
 * reason left as a warning), as an IKE daemon's hw_offload=auto expects;
 * packet offload fails on any error, as it should when asked for.
 */
/* A soft limit that would come after its hard one (XFRM_INF is unset). */
static bool octep_ipsec_soft_above_hard(const struct xfrm_state *x)
{
	const struct xfrm_lifetime_cfg *l = &x->lft;

	return (l->hard_byte_limit != XFRM_INF &&
		l->soft_byte_limit != XFRM_INF &&
		l->soft_byte_limit > l->hard_byte_limit) ||
	       (l->hard_packet_limit != XFRM_INF &&
		l->soft_packet_limit != XFRM_INF &&
		l->soft_packet_limit > l->hard_packet_limit);
}

static int octep_ipsec_validate(struct octep_ipsec *ips, struct xfrm_state *x,
				struct netlink_ext_ack *extack)
{
	u8 flows = READ_ONCE(ips->flows);
	u32 win;

	if (x->xso.type != XFRM_DEV_OFFLOAD_CRYPTO &&
	    x->xso.type != XFRM_DEV_OFFLOAD_PACKET) {
		NL_SET_ERR_MSG_MOD(extack, "Unsupported xfrm offload type");
		return -EOPNOTSUPP;
	}
	if (!flows || (flows == 1 && x->xso.dir == XFRM_DEV_OFFLOAD_IN)) {
		NL_SET_ERR_MSG_FMT_MOD(extack,
				       "ipsec_flows=%u: the host carries %s, no offload",
				       flows, flows ? "inbound states" :
				       "all states");
		return -EOPNOTSUPP;
	}
	if (x->id.proto != IPPROTO_ESP) {
		NL_SET_ERR_MSG_MOD(extack, "Only ESP xfrm states can be offloaded");
		return -EOPNOTSUPP;
	}
	if (x->props.family != AF_INET && x->props.family != AF_INET6) {
		NL_SET_ERR_MSG_MOD(extack, "Only IPv4 and IPv6 xfrm states can be offloaded");
		return -EOPNOTSUPP;
	}
	if (x->props.mode != XFRM_MODE_TRANSPORT &&
	    x->props.mode != XFRM_MODE_TUNNEL) {
		NL_SET_ERR_MSG_MOD(extack,
				   "Only transport and tunnel mode xfrm states can be offloaded");
		return -EOPNOTSUPP;
	}
	if (octep_ipsec_lacks(ips, x, extack))
		return -EOPNOTSUPP;
	if (x->props.aalgo != SADB_AALG_NONE || x->aalg) {
		NL_SET_ERR_MSG_MOD(extack,
				   "Cannot offload authenticated xfrm states: use AEAD rfc4106(gcm(aes))");
		return -EOPNOTSUPP;
	}
	if (x->props.calgo != SADB_X_CALG_NONE || x->calg) {
		NL_SET_ERR_MSG_MOD(extack, "Cannot offload compressed xfrm states");
		return -EOPNOTSUPP;
	}
	if (!x->aead) {
		NL_SET_ERR_MSG_MOD(extack,
				   "Cannot offload xfrm states without AEAD: only rfc4106(gcm(aes)) is supported");
		return -EOPNOTSUPP;
	}
	if (strcmp(x->aead->alg_name, "rfc4106(gcm(aes))")) {
		NL_SET_ERR_MSG_FMT_MOD(extack,
				       "Only rfc4106(gcm(aes)) can be offloaded, not %.24s",
				       x->aead->alg_name);
		return -EOPNOTSUPP;
	}
	if (x->aead->alg_icv_len != 128) {
		NL_SET_ERR_MSG_FMT_MOD(extack,
				       "ICV of %u bits: only 128 can be offloaded",
				       x->aead->alg_icv_len);
		return -EOPNOTSUPP;
	}
	if (x->aead->alg_key_len != 128 + 32 &&
	    x->aead->alg_key_len != 256 + 32) {
		NL_SET_ERR_MSG_FMT_MOD(extack,
				       "AES-%d key: only AES-128 and AES-256 (+ salt) can be offloaded",
				       (int)x->aead->alg_key_len - 32);
		return -EOPNOTSUPP;
	}
	if (x->geniv && strcmp(x->geniv, "seqiv")) {
		NL_SET_ERR_MSG_MOD(extack, "Cannot offload an IV generator other than seqiv");
		return -EOPNOTSUPP;
	}
	if (x->encap) {
		NL_SET_ERR_MSG_MOD(extack,
				   "Cannot offload UDP-encapsulated (NAT-T) ESP: the flow table carries plain ESP only");
		return -EOPNOTSUPP;
	}
	if (x->tfcpad) {
		NL_SET_ERR_MSG_MOD(extack, "Cannot offload xfrm states with TFC padding");
		return -EOPNOTSUPP;
	}
	win = octep_ipsec_replay_window(x);
	if (x->xso.dir == XFRM_DEV_OFFLOAD_IN &&
	    win > OCTEP_SDP_FLOW_MAX_REPLAY) {
		NL_SET_ERR_MSG_FMT_MOD(extack,
				       "Replay window of %u packets: the flow table allows %u",
				       win, OCTEP_SDP_FLOW_MAX_REPLAY);
		return -EOPNOTSUPP;
	}
	if (x->xso.type == XFRM_DEV_OFFLOAD_PACKET) {
		/* The block's policy templates find their SA by reqid. */
		if (!x->props.reqid) {
			NL_SET_ERR_MSG_MOD(extack,
					   "Cannot offload a packet offload state with reqid 0");
			return -EOPNOTSUPP;
		}
		if (octep_ipsec_soft_above_hard(x)) {
			NL_SET_ERR_MSG_MOD(extack,
					   "Soft lifetime limit above the hard one");
			return -EINVAL;
		}
		if (x->props.family == AF_INET6 &&
		    x->props.mode == XFRM_MODE_TRANSPORT &&
		    x->xso.dir == XFRM_DEV_OFFLOAD_OUT && x->sel.proto &&
		    x->sel.proto != IPPROTO_TCP && x->sel.proto != IPPROTO_UDP &&
		    x->sel.proto != IPPROTO_ICMPV6) {
			NL_SET_ERR_MSG_MOD(extack,
					   "Packet offload of IPv6 transport mode carries TCP, UDP and ICMPv6 only");
			return -EOPNOTSUPP;
		}
	}
	return 0;
}

static void octep_ipsec_fill(const struct xfrm_state *x,
			     struct octep_sdp_mbox_flow *fl)
{
	unsigned int klen = x->aead->alg_key_len / 8 - 4;
	unsigned int alen = x->props.family == AF_INET ? 4 : 16;

	memset(fl, 0, sizeof(*fl));
	fl->dir = x->xso.dir == XFRM_DEV_OFFLOAD_IN ? OCTEP_SDP_FLOW_DIR_IN :
						      OCTEP_SDP_FLOW_DIR_OUT;
	fl->family = x->props.family == AF_INET ? 4 : 6;
	fl->mode = x->props.mode == XFRM_MODE_TUNNEL ?
		   OCTEP_SDP_FLOW_MODE_TUNNEL : OCTEP_SDP_FLOW_MODE_TRANSPORT;
	fl->type = x->xso.type == XFRM_DEV_OFFLOAD_PACKET ?
		   OCTEP_SDP_FLOW_TYPE_PACKET : OCTEP_SDP_FLOW_TYPE_CRYPTO;
	fl->alg = OCTEP_SDP_FLOW_ALG_RFC4106;
	fl->key_len = klen;
	fl->icv_len = x->aead->alg_icv_len / 8;
	if (x->props.flags & XFRM_STATE_ESN)
		fl->flags |= OCTEP_SDP_FLOW_F_ESN;
	fl->spi = x->id.spi;
	/*
	 * The window is the receiver's: an outbound state's is not the
	 * block's business (and may be larger than it takes, as an ESN
	 * state's often is).
	 */
	if (x->xso.dir == XFRM_DEV_OFFLOAD_IN)
		fl->replay_window = cpu_to_le32(octep_ipsec_replay_window(x));
	memcpy(fl->key, x->aead->alg_key, klen);
	memcpy(fl->salt, x->aead->alg_key + klen, 4);
	if (x->replay_esn) {
		if (x->xso.dir == XFRM_DEV_OFFLOAD_IN) {
			fl->seq_hi = cpu_to_le32(x->replay_esn->seq_hi);
			fl->seq_lo = cpu_to_le32(x->replay_esn->seq);
		} else {
			fl->seq_hi = cpu_to_le32(x->replay_esn->oseq_hi);
			fl->seq_lo = cpu_to_le32(x->replay_esn->oseq);
		}
	} else {
		fl->seq_lo = cpu_to_le32(x->xso.dir == XFRM_DEV_OFFLOAD_IN ?
					 x->replay.seq : x->replay.oseq);
	}
	if (x->props.mode == XFRM_MODE_TUNNEL && x->sel.family)
		fl->inner_family = cpu_to_le32(x->sel.family == AF_INET ? 4 : 6);
	memcpy(fl->saddr, &x->props.saddr, alen);
	memcpy(fl->daddr, &x->id.daddr, alen);
	fl->reqid = cpu_to_le32(x->props.reqid);
	/*
	 * Packet offload: the block counts, so the block stops at the hard
	 * limit, both ways; the stack hears of it at the next stats poll.
	 */
	if (x->xso.type == XFRM_DEV_OFFLOAD_PACKET) {
		if (x->lft.hard_packet_limit != XFRM_INF)
			fl->hard_packets = cpu_to_le64(x->lft.hard_packet_limit);
		if (x->lft.hard_byte_limit != XFRM_INF)
			fl->hard_bytes = cpu_to_le64(x->lft.hard_byte_limit);
	}
}

static int octep_ipsec_mbox_errmsg(int err, const char *what,
				   struct netlink_ext_ack *extack)
{
	switch (err) {
	case -ETIMEDOUT:
		NL_SET_ERR_MSG_FMT_MOD(extack,
				       "The coprocessor did not answer the %s within %u ms",
				       what, OCTEP_MBOX_TIMEOUT_MS);
		break;
	case -ENOSPC:
		NL_SET_ERR_MSG_FMT_MOD(extack,
				       "The coprocessor's flow table is full (%s)",
				       what);
		break;
	case -EEXIST:
		NL_SET_ERR_MSG_MOD(extack,
				   "An inbound state with this SPI and destination is already offloaded");
		break;
	case -EBUSY:
		NL_SET_ERR_MSG_MOD(extack, "The control mailbox is full");
		break;
	default:
		NL_SET_ERR_MSG_FMT_MOD(extack, "The coprocessor refused the %s (%d)",
				       what, err);
		break;
	}
	return err;
}

/*
 * A state or policy add runs under the xfrm configuration mutex: with the
 * coprocessor not answering, each would hold every IPsec change in the
 * namespace for a timeout. Refused at once instead; the host can carry a
 * crypto offload state.
 */
static int octep_ipsec_mbox_down(struct octep_ipsec *ips,
				 struct netlink_ext_ack *extack)
{
	if (!octep_mbox_down(&ips->mbox))
		return 0;
	NL_SET_ERR_MSG_MOD(extack,
			   "The coprocessor's mailbox is not answering: offload refused until it does");
	return -EOPNOTSUPP;
}

static bool octep_ipsec_has(const struct octep_ipsec *ips, u32 feat)
{
	return le32_to_cpu(ips->info.features) & feat;
}

/*
 * Delete the entries of @n handles in the block, as one FLOW_DEL_MANY when
 * the block has it. An entry the block does not have is as good as deleted.
 *
 * Return: how many of @h, from the first, are gone from the block; *@err
 * is the error of the exchange that failed when that is fewer than @n.
 */
static unsigned int octep_ipsec_del_handles(struct octep_ipsec *ips,
					    const u32 *h, unsigned int n,
					    int *err)
{
	__le64 req[OCTEP_SDP_MBOX_MAX_BODY] = {};
	__le64 missing;
	unsigned int i;

	*err = 0;
	if (!octep_ipsec_has(ips, OCTEP_SDP_FEAT_DEL_MANY)) {
		for (i = 0; i < n; i++) {
			req[0] = cpu_to_le64(h[i]);
			*err = octep_mbox_call(&ips->mbox,
					       OCTEP_SDP_MBOX_FLOW_DEL, req,
					       sizeof(req[0]), NULL, 0);
			if (*err && *err != -ENOENT)
				return i;
		}
		*err = 0;
		return n;
	}
	req[0] = cpu_to_le64(n);
	for (i = 0; i < n; i++)
		req[1 + i / 2] |= cpu_to_le64((u64)h[i] << (i % 2 * 32));
	*err = octep_mbox_call(&ips->mbox, OCTEP_SDP_MBOX_FLOW_DEL_MANY, req,
			       (1 + DIV_ROUND_UP(n, 2)) * sizeof(req[0]),
			       &missing, sizeof(missing));
	return *err ? 0 : n;
}

/* Under ips->lock: @sa's entry is gone from the block; free @sa. */
static void octep_ipsec_forget(struct octep_ipsec *ips,
			       struct octep_ipsec_sa *sa)
{
	lockdep_assert_held(&ips->lock);
	/* Not if a newer entry took the handle (@sa->replaced). */
	xa_cmpxchg_bh(&ips->owned, sa->handle, sa, NULL, GFP_ATOMIC);
	kfree_rcu(sa, rcu);
}

/* Under ips->lock: keep @sa, whose delete failed, for a resync. */
static void octep_ipsec_orphan(struct octep_ipsec *ips,
			       struct octep_ipsec_sa *sa)
{
	lockdep_assert_held(&ips->lock);
	sa->where = OCTEP_SA_ORPHAN;
	list_add_tail(&sa->node, &ips->orphans);
	ips->n_orphans++;
}

/*
 * Delete the entries of @ips->batch[0..@n) (off every list, ours), then
 * free those that are gone; the others become orphans, counted in
 * orphans_total when @fresh (a first failure, not a resync's retry).
 * Return: 0 or the error of the failed exchange.
 */
static int octep_ipsec_del_batch(struct octep_ipsec *ips, unsigned int n,
				 bool fresh, unsigned int *freed)
{
	u32 h[OCTEP_SDP_MBOX_DEL_MANY_MAX];
	unsigned int i, done;
	int err;

	for (i = 0; i < n; i++)
		h[i] = ips->batch[i]->handle;
	done = octep_ipsec_del_handles(ips, h, n, &err);
	spin_lock_bh(&ips->lock);
	for (i = 0; i < n; i++) {
		if (i < done || ips->batch[i]->replaced)
			octep_ipsec_forget(ips, ips->batch[i]);
		else
			octep_ipsec_orphan(ips, ips->batch[i]);
	}
	/* Read locklessly by an add waiting for room (octep_ipsec_room()). */
	if (fresh)
		WRITE_ONCE(ips->n_dead, ips->n_dead - n);
	WRITE_ONCE(ips->del_batches, ips->del_batches + 1);
	spin_unlock_bh(&ips->lock);
	wake_up_all(&ips->drained);
	if (freed)
		*freed += done;
	if (done < n) {
		if (fresh)
			atomic64_add(n - done, &ips->orphans_total);
		dev_warn(ips->oct->dev,
			 "flow delete of %u entries failed (%d): kept for a resync\n",
			 n - done, err);
	}
	return err;
}

/*
 * Delete the entries of ips->dead, a batch per mailbox request. Stops at
 * the first failed exchange: a broken mailbox costs one timeout per
 * worker run, not one per entry (what is left waits for the retry).
 */
static int octep_ipsec_drain(struct octep_ipsec *ips)
{
	unsigned int max = octep_ipsec_has(ips, OCTEP_SDP_FEAT_DEL_MANY) ?
			   OCTEP_SDP_MBOX_DEL_MANY_MAX : 1;
	struct octep_ipsec_sa *sa;
	unsigned int n;
	int err;

	for (;;) {
		n = 0;
		spin_lock_bh(&ips->lock);
		while (n < max) {
			sa = list_first_entry_or_null(&ips->dead,
						      struct octep_ipsec_sa,
						      node);
			if (!sa)
				break;
			list_del_init(&sa->node);
			if (sa->replaced) {
				WRITE_ONCE(ips->n_dead, ips->n_dead - 1);
				octep_ipsec_forget(ips, sa);
				continue;
			}
			/* Still counted in n_dead until its batch is done. */
			ips->batch[n++] = sa;
		}
		spin_unlock_bh(&ips->lock);
		if (!n)
			return 0;
		err = octep_ipsec_del_batch(ips, n, true, NULL);
		if (err)
			return err;
	}
}

/*
 * Collect the handles of the block's entries that no state owns into a
 * growing array; mark the orphans the block still has. Return: 0 or the
 * mailbox error.
 */
static int octep_ipsec_list(struct octep_ipsec *ips, u32 **leak,
			    unsigned int *nleak)
{
	__le64 resp[OCTEP_SDP_MBOX_MAX_BODY - 1];
	struct octep_ipsec_sa *sa;
	unsigned int i, n, cap = 0;
	u64 cursor = 0, next;
	__le64 req;
	u32 h, *p;
	int err;

	do {
		req = cpu_to_le64(cursor);
		err = octep_mbox_call(&ips->mbox, OCTEP_SDP_MBOX_FLOW_LIST,
				      &req, sizeof(req), resp, sizeof(resp));
		if (err)
			return err;
		next = le64_to_cpu(resp[0]);
		n = min_t(u64, le64_to_cpu(resp[1]), OCTEP_SDP_MBOX_LIST_MAX);
		for (i = 0; i < n; i++) {
			h = (u32)(le64_to_cpu(resp[2 + i / 2]) >> (i % 2 * 32));
			spin_lock_bh(&ips->lock);
			sa = xa_load(&ips->owned, h);
			if (sa && sa->where == OCTEP_SA_ORPHAN)
				sa->seen = true;
			spin_unlock_bh(&ips->lock);
			if (sa)
				continue;
			if (*nleak == cap) {
				cap = max(2 * cap, 64U);
				p = krealloc_array(*leak, cap, sizeof(*p),
						   GFP_KERNEL);
				if (!p)
					return -ENOMEM;
				*leak = p;
			}
			(*leak)[(*nleak)++] = h;
		}
		cursor = (u32)next;
	} while (!(next & OCTEP_SDP_MBOX_LIST_DONE));
	return 0;
}

/**
 * octep_ipsec_resync() - find and free the block's entries nobody owns
 * @ips: the offload
 *
 * Leaks come from deletes that failed (the orphans: their states are gone,
 * their entries maybe not) and from adds that timed out but were done
 * after all. With FLOW_LIST, the block's entries are listed and those no
 * state owns are deleted; an orphan the list does not show is already
 * gone. Without it, the orphans' deletes are sent again. An add running
 * meanwhile could own an entry that is not yet in @ips->owned, or be
 * given the handle of an orphan the block freed: then nothing is freed,
 * and the resync is tried again later (the block does not reuse a handle
 * soon after freeing it, which covers an add that starts after the check).
 *
 * Context: ctl_work, or probe before the netdev exists.
 * Return: 0, -EAGAIN when adds ran, or the mailbox error.
 */
static int octep_ipsec_resync(struct octep_ipsec *ips)
{
	bool list = octep_ipsec_has(ips, OCTEP_SDP_FEAT_LIST);
	unsigned int nleak = 0, freed = 0, i, n;
	struct octep_ipsec_sa *sa, *tmp;
	int seq, err = 0;
	LIST_HEAD(todo);
	u32 *leak = NULL;

	seq = atomic_read(&ips->add_seq);
	if (atomic_read(&ips->adds_inflight))
		return -EAGAIN;
	clear_bit(OCTEP_IPSEC_F_RESYNC, &ips->flags);
	spin_lock_bh(&ips->lock);
	list_for_each_entry(sa, &ips->orphans, node)
		sa->seen = false;
	spin_unlock_bh(&ips->lock);
	if (list) {
		err = octep_ipsec_list(ips, &leak, &nleak);
		if (err)
			goto out;
	}
	/* Pairs with the atomic_inc()s before an add's FLOW_ADD is sent. */
	smp_rmb();
	if (atomic_read(&ips->add_seq) != seq ||
	    atomic_read(&ips->adds_inflight)) {
		err = -EAGAIN;
		goto out;
	}

	spin_lock_bh(&ips->lock);
	list_splice_init(&ips->orphans, &todo);
	ips->n_orphans = 0;
	list_for_each_entry_safe(sa, tmp, &todo, node) {
		if (sa->replaced || (list && !sa->seen)) {
			list_del(&sa->node);
			octep_ipsec_forget(ips, sa);
			freed++;
		}
	}
	spin_unlock_bh(&ips->lock);

	/* The orphans the block still has: delete them again. */
	while (!list_empty(&todo)) {
		n = 0;
		list_for_each_entry_safe(sa, tmp, &todo, node) {
			if (n == OCTEP_SDP_MBOX_DEL_MANY_MAX)
				break;
			list_del_init(&sa->node);
			ips->batch[n++] = sa;
		}
		err = octep_ipsec_del_batch(ips, n, false, &freed);
		if (err) {
			spin_lock_bh(&ips->lock);
			list_for_each_entry_safe(sa, tmp, &todo, node) {
				list_del(&sa->node);
				octep_ipsec_orphan(ips, sa);
			}
			spin_unlock_bh(&ips->lock);
			goto out;
		}
	}
	/* Entries nobody owns. */
	for (i = 0; i < nleak; i += n) {
		n = min(nleak - i, (unsigned int)OCTEP_SDP_MBOX_DEL_MANY_MAX);
		freed += octep_ipsec_del_handles(ips, leak + i, n, &err);
		if (err)
			goto out;
	}
	atomic64_inc(&ips->resyncs);
	if (nleak)
		dev_info(ips->oct->dev,
			 "resync freed %u flow entries nobody owned\n", nleak);
out:
	if (err)
		set_bit(OCTEP_IPSEC_F_RESYNC, &ips->flags);
	atomic64_add(freed, &ips->resync_freed);
	kfree(leak);
	return err;
}

/*
 * From the mailbox interrupt: a late FLOW_ADD left an entry behind. Not
 * once removal began; one that read dying just before it was set has its
 * work cancelled by octep_ipsec_fini() after the interrupt is freed.
 */
static void octep_ipsec_leaked(struct octep_mbox *mb)
{
	struct octep_ipsec *ips = container_of(mb, struct octep_ipsec, mbox);

	atomic64_inc(&ips->orphans_total);
	set_bit(OCTEP_IPSEC_F_RESYNC, &ips->flags);
	if (!READ_ONCE(ips->dying))
		mod_delayed_work(system_wq, &ips->ctl_work, 0);
}

/*
 * The mailbox reporter's recover: a timed-out request may have left an
 * entry in the block, or lost a delete: resync. Not once removal began
 * (dying is set under the lock before the worker is cancelled).
 */
static void octep_ipsec_mbox_recover(struct octep_mbox *mb)
{
	struct octep_ipsec *ips = container_of(mb, struct octep_ipsec, mbox);

	spin_lock_bh(&ips->lock);
	if (!ips->dying) {
		set_bit(OCTEP_IPSEC_F_RESYNC, &ips->flags);
		mod_delayed_work(system_wq, &ips->ctl_work, 0);
	}
	spin_unlock_bh(&ips->lock);
}

/**
 * octep_ipsec_reports() - start or stop the mailbox's devlink reports
 * @oct: device
 * @on: see octep_mbox_reports()
 */
void octep_ipsec_reports(struct octep_dev *oct, bool on)
{
	struct octep_ipsec *ips = oct->ipsec;

	if (ips)
		octep_mbox_reports(&ips->mbox, on);
}

/* Send the ESN high halves advance_esn noted. */
static void octep_ipsec_esn_updates(struct octep_ipsec *ips)
{
	struct octep_ipsec_sa *sa;
	__le64 req[2];

	for (;;) {
		bool found = false;

		spin_lock_bh(&ips->lock);
		list_for_each_entry(sa, &ips->sas, node) {
			if (sa->esn_dirty) {
				sa->esn_dirty = false;
				req[0] = cpu_to_le64(sa->handle);
				req[1] = cpu_to_le64(sa->esn_hi);
				found = true;
				break;
			}
		}
		spin_unlock_bh(&ips->lock);
		if (!found)
			break;
		octep_mbox_call(&ips->mbox, OCTEP_SDP_MBOX_FLOW_UPDATE, req,
				sizeof(req), NULL, 0);
	}
}

/*
 * The control worker, one per device: deletes the entries of freed
 * states in batches, resyncs when something leaked, sends ESN updates.
 * Nothing waits for it (an add at most waits a bounded while for room):
 * a mailbox that times out delays only this worker, which then retries
 * with a back-off.
 */
static void octep_ipsec_ctl_work(struct work_struct *work)
{
	struct octep_ipsec *ips = container_of(to_delayed_work(work),
					       struct octep_ipsec, ctl_work);
	unsigned int ms;
	bool dying, want;
	int err;

	err = octep_ipsec_drain(ips);
	octep_ipsec_esn_updates(ips);
	spin_lock_bh(&ips->lock);
	dying = ips->dying;
	want = test_bit(OCTEP_IPSEC_F_RESYNC, &ips->flags) || ips->n_orphans;
	spin_unlock_bh(&ips->lock);
	if (dying)
		return;
	if (!err && want)
		err = octep_ipsec_resync(ips);
	if (!err) {
		ips->ctl_fails = 0;
		return;
	}
	ms = err == -EAGAIN ? 100 :
	     min(OCTEP_IPSEC_RETRY_MS << min(ips->ctl_fails++, 4U),
		 OCTEP_IPSEC_RETRY_MAX_MS);
	queue_delayed_work(system_wq, &ips->ctl_work, msecs_to_jiffies(ms));
}

static int octep_ipsec_flow_add(struct octep_ipsec *ips, struct xfrm_state *x,
				u32 *handle)
{
	struct octep_sdp_mbox_flow fl;
	__le64 h = 0;
	int err;

	octep_ipsec_fill(x, &fl);
	err = octep_mbox_call(&ips->mbox, OCTEP_SDP_MBOX_FLOW_ADD, &fl,
			      sizeof(fl), &h, sizeof(h));
	memzero_explicit(&fl, sizeof(fl));
	*handle = (u32)le64_to_cpu(h);
	return err;
}

/*
 * An inbound add got EEXIST: a freed state whose delete is queued (or
 * failed) may still hold the SPI in the block. Delete that one entry now,
 * rather than wait for the queue. Return: true to try the add again.
 */
static bool octep_ipsec_del_same(struct octep_ipsec *ips,
				 const struct octep_ipsec_sa *new,
				 struct netlink_ext_ack *extack)
{
	struct octep_ipsec_sa *sa, *found = NULL;
	struct list_head *lists[] = { &ips->dead, &ips->orphans };
	unsigned int i;
	int err;

	spin_lock_bh(&ips->lock);
	for (i = 0; i < ARRAY_SIZE(lists) && !found; i++) {
		list_for_each_entry(sa, lists[i], node) {
			if (sa->dir == XFRM_DEV_OFFLOAD_IN &&
			    sa->spi == new->spi && sa->family == new->family &&
			    xfrm_addr_equal(&sa->daddr, &new->daddr,
					    new->family)) {
				found = sa;
				break;
			}
		}
	}
	if (found) {
		list_del_init(&found->node);
		if (found->where == OCTEP_SA_DEAD)
			WRITE_ONCE(ips->n_dead, ips->n_dead - 1);
		else
			ips->n_orphans--;
	}
	spin_unlock_bh(&ips->lock);
	if (!found)
		return false;
	octep_ipsec_del_handles(ips, &found->handle, 1, &err);
	spin_lock_bh(&ips->lock);
	if (err) {
		/* Counted once, when it first failed. */
		if (found->where == OCTEP_SA_DEAD)
			atomic64_inc(&ips->orphans_total);
		octep_ipsec_orphan(ips, found);
	} else {
		octep_ipsec_forget(ips, found);
	}
	spin_unlock_bh(&ips->lock);
	if (err)
		NL_SET_ERR_MSG_FMT_MOD(extack,
				       "The SPI is held by a deleted entry whose delete failed (%d)",
				       err);
	return !err;
}

/*
 * The add found the table full while deletes are queued: let ctl_work
 * finish a batch, for at most OCTEP_IPSEC_FULL_WAIT_MS. Return: true to
 * try the add again.
 */
static bool octep_ipsec_room(struct octep_ipsec *ips)
{
	unsigned long done = READ_ONCE(ips->del_batches);

	if (!READ_ONCE(ips->n_dead))
		return false;
	mod_delayed_work(system_wq, &ips->ctl_work, 0);
	/* Pairs with WRITE_ONCE() in octep_ipsec_del_batch(). */
	return wait_event_timeout(ips->drained,
				  READ_ONCE(ips->del_batches) != done,
				  msecs_to_jiffies(OCTEP_IPSEC_FULL_WAIT_MS)) > 0;
}

/*
 * An add is about to ask the block for an entry: until the entry is in
 * ips->owned (octep_ipsec_own()) or the add failed (octep_ipsec_add_end()),
 * a resync must not free what it finds unowned.
 */
static void octep_ipsec_add_begin(struct octep_ipsec *ips)
{
	atomic_inc(&ips->adds_inflight);
	atomic_inc(&ips->add_seq);
	/* Pairs with smp_rmb() in octep_ipsec_resync(). */
	smp_mb__after_atomic();
}

static void octep_ipsec_add_end(struct octep_ipsec *ips)
{
	atomic_dec(&ips->adds_inflight);
}

/*
 * The block gave @ent its handle: own the entry, and end the add. Returns
 * with ips->lock held: 0, or the error of the store, and then the caller
 * queues the entry's delete (octep_ipsec_queue_dead()).
 */
static int octep_ipsec_own(struct octep_ipsec *ips, struct octep_ipsec_sa *ent)
	__acquires(&ips->lock)
{
	struct octep_ipsec_sa *old;
	int err = 0;

	ent->where = OCTEP_SA_LIVE;
	/* _bh: also taken under ips->lock, which x->lock's softirq nests. */
	old = xa_store_bh(&ips->owned, ent->handle, ent, GFP_KERNEL);
	/* Pairs with the reads in octep_ipsec_resync(): owned, then done. */
	smp_mb__before_atomic();
	octep_ipsec_add_end(ips);
	spin_lock_bh(&ips->lock);
	if (xa_is_err(old)) {
		err = xa_err(old);
	} else if (old) {
		/* The block reused the handle of an entry we took as leaked. */
		old->replaced = true;
		mod_delayed_work(system_wq, &ips->ctl_work, 0);
	}
	return err;
}

/* Under ips->lock: @ent (on no list) goes to ctl_work's delete queue. */
static void octep_ipsec_queue_dead(struct octep_ipsec *ips,
				   struct octep_ipsec_sa *ent)
{
	lockdep_assert_held(&ips->lock);
	ent->where = OCTEP_SA_DEAD;
	list_add_tail(&ent->node, &ips->dead);
	/* Read locklessly by octep_ipsec_room() and the add's message. */
	WRITE_ONCE(ips->n_dead, ips->n_dead + 1);
	mod_delayed_work(system_wq, &ips->ctl_work, 0);
}

static int octep_ipsec_state_add(struct net_device *dev, struct xfrm_state *x,
				 struct netlink_ext_ack *extack)
{
	struct octep_ipsec *ips = octep_ipsec_of(dev);
	struct octep_ipsec_sa *sa;
	u32 handle;
	int err;

	if (!ips) {
		NL_SET_ERR_MSG_MOD(extack, "IPsec offload is not available on this device");
		return -EOPNOTSUPP;
	}

	/*
	 * A larval (acquire) state of a packet-offload policy, added by
	 * xfrm_state_find() from atomic context while the key manager is
	 * asked for the real one: it has no key and no SPI yet, so there is
	 * nothing to validate and nothing for the block. It is held here,
	 * acquire pending, with no handle (offload_ok refuses it) until the
	 * negotiated state replaces it; meanwhile the stack drops the
	 * packets it stands for and counts them in XfrmOutNoStates (or
	 * queues them, with xfrm_larval_drop off).
	 */
	if (x->xso.flags & XFRM_DEV_OFFLOAD_FLAG_ACQ) {
		sa = kzalloc(sizeof(*sa), GFP_ATOMIC);
		if (!sa)
			return -ENOMEM;
		sa->ips = ips;
		sa->x = x;
		spin_lock_bh(&ips->lock);
		list_add(&sa->node, &ips->sas);
		spin_unlock_bh(&ips->lock);
		WRITE_ONCE(x->xso.offload_handle, (unsigned long)sa);
		return 0;
	}

	err = octep_ipsec_validate(ips, x, extack);
	if (!err)
		err = octep_ipsec_mbox_down(ips, extack);
	if (err)
		return err;

	sa = kzalloc(sizeof(*sa), GFP_KERNEL);
	if (!sa)
		return -ENOMEM;
	sa->ips = ips;
	sa->x = x;
	sa->dir = x->xso.dir;
	sa->type = x->xso.type;
	sa->spi = x->id.spi;
	sa->daddr = x->id.daddr;
	sa->family = x->props.family;
	/* FLOW_ADD gives the block this high half (octep_ipsec_fill()). */
	if (x->replay_esn)
		sa->esn_hi = x->replay_esn->seq_hi;

	/*
	 * Never wait for the queue of deletes: only when the block says the
	 * SPI is taken, or the table full, may a queued delete be what is in
	 * the way, and then only that one is sent, or one batch awaited.
	 * Until the entry is in ips->owned a resync must not free what it
	 * finds unowned: adds_inflight and add_seq tell it so.
	 */
	octep_ipsec_add_begin(ips);
	err = octep_ipsec_flow_add(ips, x, &handle);
	if ((err == -EEXIST && octep_ipsec_del_same(ips, sa, extack)) ||
	    (err == -ENOSPC && octep_ipsec_room(ips)))
		err = octep_ipsec_flow_add(ips, x, &handle);
	if (err) {
		octep_ipsec_add_end(ips);
		kfree(sa);
		if (err == -ENOSPC && READ_ONCE(ips->n_dead)) {
			NL_SET_ERR_MSG_FMT_MOD(extack,
					       "The flow table is full, %u deletes still queued",
					       READ_ONCE(ips->n_dead));
			return err;
		}
		if (err == -EEXIST && extack && extack->_msg)
			return err;
		if (err == -EEXIST && x->xso.type == XFRM_DEV_OFFLOAD_CRYPTO) {
			/*
			 * The block holds one inbound entry per SPI and
			 * destination. This is ip xfrm state update's new copy
			 * of an offloaded state (the update is applied to the
			 * old one, which keeps its entry, and the copy is
			 * dropped), a duplicate the stack refuses anyway, or an
			 * entry the block kept: the host can carry it.
			 */
			NL_SET_ERR_MSG_MOD(extack,
					   "An inbound state with this SPI and destination is already in the flow table: this one is left to the host");
			return -EOPNOTSUPP;
		}
		return octep_ipsec_mbox_errmsg(err, "flow add", extack);
	}
	sa->handle = handle;
	err = octep_ipsec_own(ips, sa);
	if (!err && sa->dir == XFRM_DEV_OFFLOAD_IN)
		err = xa_err(xa_store(&ips->in_sas, sa->handle, sa,
				      GFP_ATOMIC));
	if (!err)
		list_add(&sa->node, &ips->sas);
	else
		octep_ipsec_queue_dead(ips, sa);
	spin_unlock_bh(&ips->lock);
	if (err) {
		NL_SET_ERR_MSG_MOD(extack, "Out of memory for the state's handle");
		return err;
	}
	/* Read locklessly by offload_ok and transmit. */
	WRITE_ONCE(x->xso.offload_handle, (unsigned long)sa);
	mod_delayed_work(system_wq, &ips->stats_work,
			 msecs_to_jiffies(OCTEP_IPSEC_STATS_MS));
	return 0;
}

/* May run in atomic context (under x->lock): unlink from the datapath. */
static void octep_ipsec_state_delete(struct net_device *dev,
				     struct xfrm_state *x)
{
	struct octep_ipsec_sa *sa = (void *)x->xso.offload_handle;
	struct octep_ipsec *ips;

	if (!sa)
		return;
	ips = sa->ips;
	spin_lock_bh(&ips->lock);
	if (sa->handle && sa->dir == XFRM_DEV_OFFLOAD_IN)
		xa_erase(&ips->in_sas, sa->handle);
	spin_unlock_bh(&ips->lock);
}

/* May run in atomic context: the block's entry goes to ctl_work's queue. */
static void octep_ipsec_state_free(struct net_device *dev,
				   struct xfrm_state *x)
{
	struct octep_ipsec_sa *sa = (void *)x->xso.offload_handle;
	struct octep_ipsec *ips;

	if (!sa)
		return;
	ips = sa->ips;
	/* A larval state never reached the block: nothing for ctl_work. */
	if (x->xso.flags & XFRM_DEV_OFFLOAD_FLAG_ACQ) {
		spin_lock_bh(&ips->lock);
		list_del(&sa->node);
		spin_unlock_bh(&ips->lock);
		WRITE_ONCE(x->xso.offload_handle, 0);
		kfree_rcu(sa, rcu);
		return;
	}
	octep_ipsec_state_delete(dev, x);
	spin_lock_bh(&ips->lock);
	list_del(&sa->node);
	octep_ipsec_queue_dead(ips, sa);
	spin_unlock_bh(&ips->lock);
	/* Read locklessly by offload_ok and transmit. */
	WRITE_ONCE(x->xso.offload_handle, 0);
}

static bool octep_ipsec_has_limits(const struct xfrm_state *x)
{
	return x->lft.soft_byte_limit != XFRM_INF ||
	       x->lft.hard_byte_limit != XFRM_INF ||
	       x->lft.soft_packet_limit != XFRM_INF ||
	       x->lft.hard_packet_limit != XFRM_INF;
}

/*
 * Packet offload: the stack never sees the packets, so it cannot tell when
 * a byte or packet limit is reached. With the block's counts fresh, let
 * xfrm_state_check_expire() decide (it reads them back through
 * update_stats): a soft limit sends the soft expire to the key manager, a
 * hard one expires the state, which the xfrm timer then deletes.
 */
static void octep_ipsec_check_expire(struct xfrm_state *x)
{
	spin_lock_bh(&x->lock);
	if (x->km.state == XFRM_STATE_VALID)
		xfrm_state_check_expire(x);
	spin_unlock_bh(&x->lock);
}

/*
 * Refresh the block's per-entry counters of packet-offload states. Walks
 * ips->owned by handle, so a pass is linear in the states, and takes no
 * lock across a request: an entry is looked up again before its counters
 * are written (it is freed only after it leaves ips->owned). Also checks
 * the byte and packet limits of the states that have them.
 */
/* A policy-table counter of the block, since our probe. */
static u64 octep_ipsec_hw(struct octep_ipsec *ips, unsigned int i)
{
	if (!octep_ipsec_has(ips, OCTEP_SDP_FEAT_POLICY))
		return 0;
	return octep_rd64(ips->oct, OCTEP_SDP_IPSEC_CNT(i)) - ips->hw_base[i];
}

/*
 * What the block dropped of what we sent has no per-packet status to give
 * back: count it where software ESP would have, a second late at most.
 */
static bool octep_ipsec_tx_mib(struct octep_ipsec *ips)
{
	static const struct {
		u8 cnt;
		u8 mib;
	} map[] = {
		{ OCTEP_SDP_IPSEC_TX_BLOCK, LINUX_MIB_XFRMOUTPOLBLOCK },
		{ OCTEP_SDP_IPSEC_TX_NO_STATE, LINUX_MIB_XFRMOUTNOSTATES },
		{ OCTEP_SDP_IPSEC_TX_DROP, LINUX_MIB_XFRMOUTSTATEINVALID },
	};
	struct net *net = dev_net(ips->netdev);
	unsigned int i;
	u64 v;

	if (!octep_ipsec_has(ips, OCTEP_SDP_FEAT_POLICY))
		return false;
	for (i = 0; i < ARRAY_SIZE(map); i++) {
		v = octep_rd64(ips->oct, OCTEP_SDP_IPSEC_CNT(map[i].cnt));
		/* All ones: the device is gone, not a count. */
		if (v == ~0ULL)
			return false;
		v -= ips->hw_base[map[i].cnt];
		if (v > ips->hw_mib[map[i].cnt])
			XFRM_ADD_STATS(net, map[i].mib,
				       v - ips->hw_mib[map[i].cnt]);
		ips->hw_mib[map[i].cnt] = v;
	}
	return true;
}

static void octep_ipsec_stats_work(struct work_struct *work)
{
	struct octep_ipsec *ips = container_of(to_delayed_work(work),
					       struct octep_ipsec, stats_work);
	struct octep_sdp_mbox_flow_stats st;
	unsigned long idx = 0;
	struct octep_ipsec_sa *sa;
	struct xfrm_state *x;
	bool again = false;
	__le64 req;

	/* While anything offloaded can make the block drop what we send. */
	if (octep_ipsec_tx_mib(ips) &&
	    (READ_ONCE(ips->n_out_pols) || !list_empty_careful(&ips->sas)))
		again = true;
	for (;; idx++) {
		spin_lock_bh(&ips->lock);
		xa_for_each_start(&ips->owned, idx, sa, idx)
			if (sa->where == OCTEP_SA_LIVE && !sa->pol &&
			    sa->type == XFRM_DEV_OFFLOAD_PACKET)
				break;
		spin_unlock_bh(&ips->lock);
		if (!sa)
			break;
		again = true;
		req = cpu_to_le64(idx);
		if (octep_mbox_call(&ips->mbox, OCTEP_SDP_MBOX_FLOW_STATS, &req,
				    sizeof(req), &st, sizeof(st)))
			continue;
		spin_lock_bh(&ips->lock);
		x = NULL;
		/* Only compared: @sa may be freed unless it is still there. */
		if (xa_load(&ips->owned, idx) == sa) {
			sa->hw = st;
			/*
			 * Live, the state is not freed yet (state_free marks
			 * it dead under this lock); a zero count means it is
			 * on its way out, with no lifetime left to check.
			 */
			if (sa->where == OCTEP_SA_LIVE &&
			    octep_ipsec_has_limits(sa->x) &&
			    refcount_inc_not_zero(&sa->x->refcnt))
				x = sa->x;
		}
		spin_unlock_bh(&ips->lock);
		if (x) {
			octep_ipsec_check_expire(x);
			xfrm_state_put(x);
		}
	}
	if (again)
		queue_delayed_work(system_wq, &ips->stats_work,
				   msecs_to_jiffies(OCTEP_IPSEC_STATS_MS));
}

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

/*
 * Called by xfrm_dev_offload_ok() for each packet before ESP is built:
 * false sends a crypto-offload packet through software ESP and drops a
 * packet-offload one (XfrmOutError), rather than have the block drop it
 * uncounted by the stack, or send it somewhere the block never sees it.
 */
static bool octep_ipsec_offload_ok(struct sk_buff *skb, struct xfrm_state *x)
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

/*
 * Called under x->lock for every packet the stack accepts on an inbound
 * ESN state. The block infers the high half of each sequence number from
 * its own window; it only needs telling when the host's window has moved
 * into a new 2^32, so only a change of the high half costs a FLOW_UPDATE.
 */
static void octep_ipsec_advance_esn(struct xfrm_state *x)
{
	struct octep_ipsec_sa *sa = (void *)x->xso.offload_handle;

	if (!sa || !sa->handle || sa->dir != XFRM_DEV_OFFLOAD_IN ||
	    !x->replay_esn)
		return;
	/* Written only here (serialized by x->lock) and before the add. */
	if (sa->esn_hi == x->replay_esn->seq_hi)
		return;
	spin_lock_bh(&sa->ips->lock);
	sa->esn_hi = x->replay_esn->seq_hi;
	sa->esn_dirty = true;
	spin_unlock_bh(&sa->ips->lock);
	mod_delayed_work(system_wq, &sa->ips->ctl_work, 0);
}

/*
 * Packet offload, outbound: the block numbers the packets, so the state's
 * output sequence is the block's. It is written back, never backwards, so
 * that what ip -s xfrm state, XFRM_MSG_GETAE and a migration read is where
 * the counter is: an SA added again with the same key from a stale value
 * would send an IV GCM has already used. The stack never moves it itself
 * for a packet-offload state (xfrm_output_one() does not run for one).
 */
static void octep_ipsec_sync_oseq(struct xfrm_state *x, u64 seq)
{
	u64 cur;

	if (x->replay_esn) {
		cur = (u64)x->replay_esn->oseq_hi << 32 | x->replay_esn->oseq;
		if (seq <= cur)
			return;
		WRITE_ONCE(x->replay_esn->oseq_hi, upper_32_bits(seq));
		WRITE_ONCE(x->replay_esn->oseq, lower_32_bits(seq));
	} else if (seq > x->replay.oseq) {
		WRITE_ONCE(x->replay.oseq, min_t(u64, seq, U32_MAX));
	}
}

/*
 * Packet offload: the stack does not count; the block does, as the stack
 * would (xfrm_output_one(), xfrm_input()). The counts are at most
 * OCTEP_IPSEC_STATS_MS old (this runs in atomic context). Replay and ICV
 * drops are charged to the state as they happen: octep_ipsec_rx_account().
 */
static void octep_ipsec_update_stats(struct xfrm_state *x)
{
	struct octep_ipsec_sa *sa = (void *)x->xso.offload_handle;
	u64 packets, bytes, seq;

	if (!sa || sa->type != XFRM_DEV_OFFLOAD_PACKET)
		return;
	spin_lock_bh(&sa->ips->lock);
	packets = le64_to_cpu(sa->hw.packets);
	bytes = le64_to_cpu(sa->hw.bytes);
	seq = le64_to_cpu(sa->hw.seq);
	spin_unlock_bh(&sa->ips->lock);
	x->curlft.packets = packets;
	x->curlft.bytes = bytes;
	if (sa->dir == XFRM_DEV_OFFLOAD_OUT)
		octep_ipsec_sync_oseq(x, seq);
}

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

static int octep_ipsec_policy_add(struct xfrm_policy *xp,
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
	ent->ips = ips;
	ent->pol = true;
	ent->dir = xp->xdo.dir;
	ent->type = XFRM_DEV_OFFLOAD_PACKET;
	INIT_LIST_HEAD(&ent->node);
	octep_ipsec_pol_fill(xp, &r);

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
	spin_unlock_bh(&ips->lock);
	xp->xdo.offload_handle = (unsigned long)pol;
	mod_delayed_work(system_wq, &ips->stats_work,
			 msecs_to_jiffies(OCTEP_IPSEC_STATS_MS));
	return 0;
}

/*
 * May run in atomic context (under the xfrm policy lock): the block's
 * entry goes to ctl_work's queue of deletes.
 */
static void octep_ipsec_policy_delete(struct xfrm_policy *xp)
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
		octep_ipsec_queue_dead(ips, ent);
	}
	spin_unlock_bh(&ips->lock);
}

static void octep_ipsec_policy_free(struct xfrm_policy *xp)
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
	kfree(pol);
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
 * This does for the killed policies what the core does for the flushed
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

/* ---------------------------------------------------- 6.12 and later */

#ifdef OCTEP_HAVE_XDO_DEV
/* 6.16 passes the device to add/delete/free (the top-level Kbuild probes). */
#define octep_xdo_state_add	octep_ipsec_state_add
#define octep_xdo_state_delete	octep_ipsec_state_delete
#define octep_xdo_state_free	octep_ipsec_state_free
#else
/*
 * 6.12's xfrm_state_find() sets only xso.dev of a larval state, not
 * xso.real_dev. A bond calls our add from its own with xso.real_dev still
 * the bond (it sets it to the slave once we accept): the state is then for
 * its active slave, which the bond holds meanwhile.
 */
static struct net_device *octep_xso_dev(const struct xfrm_state *x)
{
	struct net_device *dev = x->xso.real_dev ?: x->xso.dev;
	struct net_device *slave;

	if (!dev || !netif_is_bond_master(dev))
		return dev;
	rcu_read_lock();
	slave = bond_option_active_slave_get_rcu(netdev_priv(dev));
	rcu_read_unlock();
	return slave ?: dev;
}

static int octep_xdo_state_add(struct xfrm_state *x,
			       struct netlink_ext_ack *extack)
{
	return octep_ipsec_state_add(octep_xso_dev(x), x, extack);
}

static void octep_xdo_state_delete(struct xfrm_state *x)
{
	octep_ipsec_state_delete(octep_xso_dev(x), x);
}

static void octep_xdo_state_free(struct xfrm_state *x)
{
	octep_ipsec_state_free(octep_xso_dev(x), x);
}
#endif

static const struct xfrmdev_ops octep_xfrmdev_ops = {
	.xdo_dev_state_add = octep_xdo_state_add,
	.xdo_dev_state_delete = octep_xdo_state_delete,
	.xdo_dev_state_free = octep_xdo_state_free,
	.xdo_dev_offload_ok = octep_ipsec_offload_ok,
	.xdo_dev_state_advance_esn = octep_ipsec_advance_esn,
	.xdo_dev_state_update_stats = octep_ipsec_update_stats,
	.xdo_dev_policy_add = octep_ipsec_policy_add,
	.xdo_dev_policy_delete = octep_ipsec_policy_delete,
	.xdo_dev_policy_free = octep_ipsec_policy_free,
};

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

/*
 * A receive drop, where xfrm_input() or the policy check would have counted
 * it had software ESP seen the packet: /proc/net/xfrm_stat and, for replay
 * and ICV failures, the state's own stats (ip -s xfrm state).
 */
static void octep_ipsec_rx_account(struct octep_ipsec *ips, u32 handle,
				   enum octep_ipsec_cnt c)
{
	struct octep_ipsec_sa *sa;
	struct xfrm_state *x;
	int mib;

	switch (c) {
	case OCTEP_IPSEC_RX_BAD_ICV:
		mib = LINUX_MIB_XFRMINSTATEPROTOERROR;
		break;
	case OCTEP_IPSEC_RX_REPLAY:
		mib = LINUX_MIB_XFRMINSTATESEQERROR;
		break;
	case OCTEP_IPSEC_IN_DROP:
		mib = LINUX_MIB_XFRMINNOSTATES;
		break;
	case OCTEP_IPSEC_RX_CLEAR_DROP:
		mib = LINUX_MIB_XFRMINTMPLMISMATCH;
		break;
	case OCTEP_IPSEC_RX_POL_BLOCK:
		mib = LINUX_MIB_XFRMINPOLBLOCK;
		break;
	case OCTEP_IPSEC_RX_TMPL_MISMATCH:
		mib = LINUX_MIB_XFRMINTMPLMISMATCH;
		break;
	case OCTEP_IPSEC_RX_EXPIRED:
		mib = LINUX_MIB_XFRMINSTATEEXPIRED;
		break;
	default:
		mib = LINUX_MIB_XFRMINHDRERROR;
		break;
	}
	XFRM_INC_STATS(dev_net(ips->netdev), mib);
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

/**
 * octep_ipsec_rx_xfrm() - act on the block's IPsec verdict for a packet
 * @oq: the output ring
 * @skb: the packet, after eth_type_trans()
 * @ext: the response header's ext word (nonzero IPsec status)
 *
 * The block's policy table dropped what an offloaded inbound policy
 * forbids; such a packet is counted here and freed.
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
		return 0;
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

/* ---------------------------------------------------------- counters */

/**
 * octep_ipsec_stats_count() - how many ethtool -S values the offload adds
 * @oct: device
 *
 * Return: the count (0 without the offload).
 */
unsigned int octep_ipsec_stats_count(struct octep_dev *oct)
{
	return oct->ipsec ? OCTEP_IPSEC_NCNT +
			    ARRAY_SIZE(octep_mbox_cnt_names) : 0;
}

/**
 * octep_ipsec_stats_strings() - their names
 * @oct: device
 * @data: the ethtool strings cursor, advanced
 */
void octep_ipsec_stats_strings(struct octep_dev *oct, u8 **data)
{
	unsigned int i;

	if (!oct->ipsec)
		return;
	for (i = 0; i < OCTEP_IPSEC_NCNT; i++)
		ethtool_puts(data, octep_ipsec_cnt_names[i]);
	for (i = 0; i < ARRAY_SIZE(octep_mbox_cnt_names); i++)
		ethtool_puts(data, octep_mbox_cnt_names[i]);
}

/**
 * octep_ipsec_info_put() - devlink dev info: what GET_INFO said at probe
 * @oct: device
 * @req: the info request
 *
 * The control mailbox's protocol version (major.minor) as fw.mgmt.api.
 * Nothing when the block has no flow table.
 *
 * Return: 0 or a negative errno.
 */
int octep_ipsec_info_put(struct octep_dev *oct, struct devlink_info_req *req)
{
	struct octep_ipsec *ips = oct->ipsec;
	char buf[16];
	u32 v;

	if (!ips)
		return 0;
	v = le32_to_cpu(ips->info.version);
	snprintf(buf, sizeof(buf), "%u.%u", v >> 16, v & 0xffff);
	return devlink_info_version_running_put(req,
			DEVLINK_INFO_VERSION_GENERIC_FW_MGMT_API, buf);
}

/**
 * octep_ipsec_stats_values() - their values
 * @oct: device
 * @data: octep_ipsec_stats_count() values to fill
 */
void octep_ipsec_stats_values(struct octep_dev *oct, u64 *data)
{
	struct octep_ipsec *ips = oct->ipsec;
	struct octep_ipsec_sa *sa;
	unsigned int i, n = 0;

	if (!ips)
		return;
	for (i = 0; i < OCTEP_IPSEC_NCNT; i++)
		data[i] = atomic64_read(&ips->cnt[i]);
	/* What the block's policy table encapsulated and dropped. */
	data[OCTEP_IPSEC_TX_PACKETS] += octep_ipsec_hw(ips,
						       OCTEP_SDP_IPSEC_TX_ENCAP);
	data[OCTEP_IPSEC_TX_BYTES] +=
		octep_ipsec_hw(ips, OCTEP_SDP_IPSEC_TX_ENCAP_BYTES);
	data[OCTEP_IPSEC_OUT_DROP] +=
		octep_ipsec_hw(ips, OCTEP_SDP_IPSEC_TX_BLOCK) +
		octep_ipsec_hw(ips, OCTEP_SDP_IPSEC_TX_NO_STATE) +
		octep_ipsec_hw(ips, OCTEP_SDP_IPSEC_TX_DROP);
	data += OCTEP_IPSEC_NCNT;
	*data++ = atomic64_read(&ips->mbox.requests);
	*data++ = atomic64_read(&ips->mbox.timeouts);
	*data++ = atomic64_read(&ips->mbox.errors);
	*data++ = atomic64_read(&ips->mbox.stray);
	spin_lock_bh(&ips->lock);
	list_for_each_entry(sa, &ips->sas, node)
		n += !!sa->handle;
	*data++ = n;
	*data++ = ips->n_dead;
	*data++ = ips->n_orphans;
	spin_unlock_bh(&ips->lock);
	*data++ = atomic64_read(&ips->orphans_total);
	*data++ = atomic64_read(&ips->resyncs);
	*data++ = atomic64_read(&ips->resync_freed);
}

/* ----------------------------------------------------- devlink param */

/**
 * octep_ipsec_flows() - devlink param ipsec_flows, its value
 * @oct: device
 *
 * Return: 0, 1 or 2 (0 without the offload).
 */
u8 octep_ipsec_flows(struct octep_dev *oct)
{
	struct octep_ipsec *ips = oct->ipsec;

	return ips ? READ_ONCE(ips->flows) : 0;
}

/**
 * octep_ipsec_set_flows() - devlink param ipsec_flows, set
 * @oct: device
 * @flows: the new value, checked by octep_ipsec_check_flows()
 * @extack: error report
 *
 * Applies to offload requests from now on; installed states stay.
 *
 * Return: 0 or -EOPNOTSUPP without the offload.
 */
int octep_ipsec_set_flows(struct octep_dev *oct, u8 flows,
			  struct netlink_ext_ack *extack)
{
	struct octep_ipsec *ips = oct->ipsec;

	if (!ips) {
		NL_SET_ERR_MSG_MOD(extack, "IPsec offload is not available on this device");
		return -EOPNOTSUPP;
	}
	/* Read locklessly by state and policy add. */
	WRITE_ONCE(ips->flows, flows);
	return 0;
}

/**
 * octep_ipsec_check_flows() - devlink param ipsec_flows, validate
 * @flows: proposed value
 * @extack: error report
 *
 * Return: 0 or -EINVAL.
 */
int octep_ipsec_check_flows(u8 flows, struct netlink_ext_ack *extack)
{
	if (flows > 2) {
		NL_SET_ERR_MSG_MOD(extack,
				   "ipsec_flows is 0 (the host carries every association), 1 (the encrypting direction is offloaded) or 2 (both directions)");
		return -EINVAL;
	}
	return 0;
}

/* ------------------------------------------------------------- setup */

/**
 * octep_ipsec_init() - find the block's mailbox and flow table
 * @oct: device, before its netdev is created
 *
 * Without a mailbox the device simply has no IPsec offload.
 *
 * Return: 0 or -ENOMEM.
 */
int octep_ipsec_init(struct octep_dev *oct)
{
	struct octep_ipsec *ips;
	unsigned int i;
	int err;

	ips = kzalloc(sizeof(*ips), GFP_KERNEL);
	if (!ips)
		return -ENOMEM;
	ips->oct = oct;
	ips->flows = OCTEP_IPSEC_FLOWS_DEF;
	spin_lock_init(&ips->lock);
	INIT_LIST_HEAD(&ips->sas);
	INIT_LIST_HEAD(&ips->pols);
	INIT_LIST_HEAD(&ips->dead);
	INIT_LIST_HEAD(&ips->orphans);
	xa_init(&ips->in_sas);
	xa_init_flags(&ips->owned, XA_FLAGS_LOCK_BH);
	init_waitqueue_head(&ips->drained);
	INIT_DELAYED_WORK(&ips->ctl_work, octep_ipsec_ctl_work);
	INIT_DELAYED_WORK(&ips->stats_work, octep_ipsec_stats_work);

	ips->mbox.leaked = octep_ipsec_leaked;
	ips->mbox.recover = octep_ipsec_mbox_recover;
	err = octep_mbox_init(&ips->mbox, oct, oct->sdp->mbox_irq);
	if (err) {
		dev_info(oct->dev, "no control mailbox (%d): no IPsec offload\n",
			 err);
		kfree(ips);
		return 0;
	}
	err = octep_mbox_call(&ips->mbox, OCTEP_SDP_MBOX_GET_INFO, NULL, 0,
			      &ips->info, sizeof(ips->info));
	if (err || !(le32_to_cpu(ips->info.features) &
		     OCTEP_SDP_FEAT_CRYPTO)) {
		dev_info(oct->dev, "flow table unavailable (%d): no IPsec offload\n",
			 err);
		octep_mbox_fini(&ips->mbox);
		kfree(ips);
		return 0;
	}
	if (octep_ipsec_has(ips, OCTEP_SDP_FEAT_POLICY))
		for (i = 0; i < OCTEP_SDP_IPSEC_NCNT; i++)
			ips->hw_base[i] = octep_rd64(oct,
						     OCTEP_SDP_IPSEC_CNT(i));
	/* A previous driver may have left entries: nobody owns them now. */
	if (octep_ipsec_has(ips, OCTEP_SDP_FEAT_LIST)) {
		err = octep_ipsec_resync(ips);
		if (err)
			dev_warn(oct->dev, "resync with the flow table failed (%d)\n",
				 err);
	}
	oct->ipsec = ips;
	return 0;
}

/**
 * octep_ipsec_netdev_setup() - offer ESP offload on the netdev
 * @oct: device
 * @nd: its netdev, before register_netdev()
 */
void octep_ipsec_netdev_setup(struct octep_dev *oct, struct net_device *nd)
{
	struct octep_ipsec *ips = oct->ipsec;

	if (!ips)
		return;
	ips->netdev = nd;
	nd->xfrmdev_ops = &octep_xfrmdev_ops;
	nd->features |= NETIF_F_HW_ESP | NETIF_F_HW_ESP_TX_CSUM;
	nd->hw_features |= NETIF_F_HW_ESP | NETIF_F_HW_ESP_TX_CSUM;
	nd->hw_enc_features |= NETIF_F_HW_ESP | NETIF_F_HW_ESP_TX_CSUM;
}

/**
 * octep_ipsec_fini() - drop the offload after the netdev is unregistered
 * @oct: device
 *
 * Unregistering flushed every offloaded state and policy; this deletes
 * their entries in the block (one try: if the mailbox fails, what is left
 * is reported and freed by the next probe's resync) and stops the mailbox.
 */
void octep_ipsec_fini(struct octep_dev *oct)
{
	struct octep_ipsec *ips = oct->ipsec;
	struct octep_ipsec_sa *sa, *tmp;
	unsigned int left;

	if (!ips)
		return;
	spin_lock_bh(&ips->lock);
	/* Read without the lock by octep_ipsec_leaked(). */
	WRITE_ONCE(ips->dying, true);
	spin_unlock_bh(&ips->lock);
	cancel_delayed_work_sync(&ips->stats_work);
	/*
	 * One try for the queued deletes, unless the worker's last run found
	 * the mailbox failing (ctl_fails, the worker's alone: read once it
	 * cannot run): a failing mailbox costs removal one timeout at most.
	 */
	cancel_delayed_work_sync(&ips->ctl_work);
	if (!ips->ctl_fails) {
		mod_delayed_work(system_wq, &ips->ctl_work, 0);
		flush_delayed_work(&ips->ctl_work);
		cancel_delayed_work_sync(&ips->ctl_work);
	}
	WARN_ON(!list_empty(&ips->sas));
	spin_lock_bh(&ips->lock);
	left = ips->n_dead + ips->n_orphans;
	list_splice_init(&ips->orphans, &ips->dead);
	list_for_each_entry_safe(sa, tmp, &ips->dead, node)
		octep_ipsec_forget(ips, sa);
	INIT_LIST_HEAD(&ips->dead);
	spin_unlock_bh(&ips->lock);
	if (left)
		dev_warn(oct->dev,
			 "%u flow entries left in the block (the mailbox failed): the next probe's resync frees them\n",
			 left);
	octep_mbox_fini(&ips->mbox);
	/*
	 * A late answer may have queued the worker (octep_ipsec_leaked())
	 * until free_irq() above: it finds the mailbox down and dying set.
	 */
	cancel_delayed_work_sync(&ips->ctl_work);
	xa_destroy(&ips->in_sas);
	xa_destroy(&ips->owned);
	oct->ipsec = NULL;
	/* Pairs with the RCU readers of ips in the datapath (none left). */
	synchronize_rcu();
	kfree(ips);
}
