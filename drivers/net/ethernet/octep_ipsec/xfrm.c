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
 *
 * This file holds the states' lifecycle, setup and the xfrmdev_ops; the
 * control channel is xfrm_ctl.c, policies xfrm_policy.c, the datapath
 * xfrm_rxtx.c, the counters xfrm_stats.c (their shared parts: xfrm.h).
 */
#include <linux/netdevice.h>
#include <net/bonding.h>
#include <net/xfrm.h>

#include "octep_ipsec.h"
#include "ipsec.h"
#include "xfrm.h"

#define OCTEP_IPSEC_FLOWS_DEF	2

static const struct xfrmdev_ops octep_xfrmdev_ops;

/**
 * octep_ipsec_of() - the offload of a netdev, if it is ours
 * @dev: a netdev the xfrm core or a bond handed us
 *
 * The xfrm core and a bond may hand us their own device, whose private
 * data is not ours.
 *
 * Return: the offload, or NULL if @dev is not our netdev.
 */
struct octep_ipsec *octep_ipsec_of(struct net_device *dev)
{
	if (!dev || dev->xfrmdev_ops != &octep_xfrmdev_ops)
		return NULL;
	return octep_from_netdev(dev)->ipsec;
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
	else if (x->encap && !(feat & OCTEP_SDP_FEAT_NATT))
		what = "NAT-T (ESP in UDP)";
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
	if (x->encap && x->encap->encap_type != UDP_ENCAP_ESPINUDP) {
		NL_SET_ERR_MSG_FMT_MOD(extack,
				       "Cannot offload encap type %u: only espinudp is",
				       x->encap->encap_type);
		return -EOPNOTSUPP;
	}
	/* The block sends RFC 3948's zero UDP checksum, which is IPv4's. */
	if (x->encap && x->props.family != AF_INET) {
		NL_SET_ERR_MSG_MOD(extack,
				   "Cannot offload NAT-T over IPv6: ESP in UDP/IPv6 needs a UDP checksum the block does not compute");
		return -EOPNOTSUPP;
	}
	/*
	 * Decrypted ESP in UDP goes up with its secpath before the encap
	 * socket's policy check, where 6.12 rejects a tunnel-mode state
	 * whenever the socket has a policy (an IKE daemon's bypass):
	 * software ESP would have taken it. Outbound is not affected.
	 */
	if (x->encap && x->xso.type == XFRM_DEV_OFFLOAD_CRYPTO &&
	    x->xso.dir == XFRM_DEV_OFFLOAD_IN &&
	    x->props.mode != XFRM_MODE_TRANSPORT) {
		NL_SET_ERR_MSG_MOD(extack,
				   "Cannot offload inbound NAT-T in tunnel mode with crypto offload: the IKE socket's policy would drop it; use packet offload");
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
	if (x->encap) {
		fl->encap = OCTEP_SDP_FLOW_ENCAP_ESPINUDP;
		fl->encap_sport = x->encap->encap_sport;
		fl->encap_dport = x->encap->encap_dport;
	}
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

static int octep_ipsec_flow_add(struct octep_ipsec *ips, struct xfrm_state *x,
				const struct octep_ipsec_sa *sa, u32 *handle)
{
	struct octep_sdp_mbox_flow fl;
	size_t len = sizeof(fl);
	__le64 h = 0;
	int err;

	octep_ipsec_fill(x, &fl);
	if (sa->l2)
		fl.l2 = sa->l2m;
	/* A block without NAT-T or L2 takes the body without their fields. */
	if (!octep_ipsec_has(ips, OCTEP_SDP_FEAT_L2))
		len = octep_ipsec_has(ips, OCTEP_SDP_FEAT_NATT) ?
		      OCTEP_SDP_MBOX_FLOW_V2_LEN : OCTEP_SDP_MBOX_FLOW_V1_LEN;
	err = octep_mbox_call(&ips->mbox, OCTEP_SDP_MBOX_FLOW_ADD, &fl, len,
			      &h, sizeof(h));
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

/**
 * octep_ipsec_room() - wait for room in a full table
 * @ips: the offload
 *
 * The add found the table full while deletes are queued: let ctl_work
 * finish a batch, for at most OCTEP_IPSEC_FULL_WAIT_MS.
 *
 * Return: true to try the add again.
 */
bool octep_ipsec_room(struct octep_ipsec *ips)
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

/**
 * octep_ipsec_add_begin() - an add is about to ask the block for an entry
 * @ips: the offload
 *
 * Until the entry is in ips->owned (octep_ipsec_own()) or the add failed
 * (octep_ipsec_add_end()), a resync must not free what it finds unowned.
 */
void octep_ipsec_add_begin(struct octep_ipsec *ips)
{
	atomic_inc(&ips->adds_inflight);
	atomic_inc(&ips->add_seq);
	/* Pairs with smp_rmb() in octep_ipsec_resync(). */
	smp_mb__after_atomic();
}

/**
 * octep_ipsec_own() - own the entry the block gave a handle, and end the add
 * @ips: the offload
 * @ent: the entry, its handle set
 *
 * On an error the caller queues the entry's delete (octep_ipsec_queue_dead()).
 *
 * Context: returns with ips->lock held.
 * Return: 0, or the error of the store.
 */
int octep_ipsec_own(struct octep_ipsec *ips, struct octep_ipsec_sa *ent)
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

/**
 * octep_ipsec_queue_dead() - queue an entry for ctl_work to delete
 * @ips: the offload
 * @ent: the entry, on no list
 *
 * Context: under ips->lock.
 */
void octep_ipsec_queue_dead(struct octep_ipsec *ips,
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
	/* And these ports (octep_ipsec_encap_stale() follows them). */
	if (x->encap) {
		sa->encap = true;
		sa->sport = x->encap->encap_sport;
		sa->dport = x->encap->encap_dport;
	}
	/* FLOW_ADD gives the block this high half (octep_ipsec_fill()). */
	if (x->replay_esn)
		sa->esn_hi = x->replay_esn->seq_hi;
	/* And this next hop, if the block is to address the frames. */
	octep_ipsec_nh_init(ips, x, sa);

	/*
	 * Never wait for the queue of deletes: only when the block says the
	 * SPI is taken, or the table full, may a queued delete be what is in
	 * the way, and then only that one is sent, or one batch awaited.
	 * Until the entry is in ips->owned a resync must not free what it
	 * finds unowned: adds_inflight and add_seq tell it so.
	 */
	octep_ipsec_add_begin(ips);
	err = octep_ipsec_flow_add(ips, x, sa, &handle);
	if ((err == -EEXIST && octep_ipsec_del_same(ips, sa, extack)) ||
	    (err == -ENOSPC && octep_ipsec_room(ips)))
		err = octep_ipsec_flow_add(ips, x, sa, &handle);
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
	if (!err) {
		list_add(&sa->node, &ips->sas);
		octep_ipsec_nh_added(sa);
	} else {
		octep_ipsec_queue_dead(ips, sa);
	}
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

/**
 * octep_ipsec_check_expire() - let the stack check a packet-offload state's limits
 * @x: the state, its counts just read from the block
 *
 * The stack never sees the packets, so it cannot tell when a byte or
 * packet limit is reached. With the block's counts fresh,
 * xfrm_state_check_expire() decides (it reads them back through
 * update_stats): a soft limit sends the soft expire to the key manager, a
 * hard one expires the state, which the xfrm timer then deletes.
 */
void octep_ipsec_check_expire(struct xfrm_state *x)
{
	spin_lock_bh(&x->lock);
	if (x->km.state == XFRM_STATE_VALID)
		xfrm_state_check_expire(x);
	spin_unlock_bh(&x->lock);
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
	INIT_LIST_HEAD(&ips->in_pols);
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
	octep_ipsec_nh_start(ips);
	nd->xfrmdev_ops = &octep_xfrmdev_ops;
	nd->features |= NETIF_F_HW_ESP | NETIF_F_HW_ESP_TX_CSUM;
	nd->hw_features |= NETIF_F_HW_ESP | NETIF_F_HW_ESP_TX_CSUM;
	nd->hw_enc_features |= NETIF_F_HW_ESP | NETIF_F_HW_ESP_TX_CSUM;
	if (!octep_ipsec_has(ips, OCTEP_SDP_FEAT_ESP_GSO))
		return;
	/*
	 * The stack marks crypto-offloaded frames encapsulated, so what it
	 * may leave to us for them is hw_enc_features: GSO_ESP needs TSO and
	 * the checksum there. octep_features_check() takes both back from
	 * every other encapsulated frame.
	 */
	nd->features |= NETIF_F_GSO_ESP;
	nd->hw_features |= NETIF_F_GSO_ESP;
	nd->hw_enc_features |= NETIF_F_GSO_ESP | NETIF_F_HW_CSUM |
			       NETIF_F_TSO | NETIF_F_TSO6 | NETIF_F_TSO_ECN;
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
	octep_ipsec_nh_stop(ips);
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
