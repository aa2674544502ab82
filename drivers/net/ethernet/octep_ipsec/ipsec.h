/* SPDX-License-Identifier: GPL-2.0 */
/*
 * octep_ipsec: the IPsec offload - the control mailbox client (mbox.c) and
 * the xfrm device offload on top of it (xfrm*.c).
 */
#ifndef _OCTEP_IPSEC_XFRM_H
#define _OCTEP_IPSEC_XFRM_H

#include <linux/atomic.h>
#include <linux/bitfield.h>
#include <linux/list.h>
#include <linux/spinlock.h>
#include <linux/wait.h>
#include <linux/workqueue.h>
#include <linux/xarray.h>
#include <net/devlink.h>

#include "octep_sdp.h"

struct octep_dev;
struct octep_iq;
struct octep_oq;
struct octep_ipsec_sa;
struct net_device;
struct sk_buff;

/* How long a mailbox request waits for its response. */
#define OCTEP_MBOX_TIMEOUT_MS	3000

/**
 * struct octep_mbox - the host side of the control mailbox
 * @oct: the device
 * @lock: the H2C producer side, the C2H consumer side and @pending
 * @pending: requests waiting for their response (struct octep_mbox_req)
 * @next_id: id of the next request
 * @h2c_prod: H2C_PROD as we last wrote it
 * @c2h_cons: C2H_CONS as we last wrote it
 * @h2c_size: H2C queue size in words
 * @c2h_size: C2H queue size in words
 * @irq: the mailbox interrupt
 * @leaked: called (under @lock, from the interrupt handler) when a FLOW_ADD
 *	answered with success after its caller gave up: an entry nobody owns
 * @recover: the devlink reporter's recover (under the devlink lock): what
 *	a timeout may have left in the block is for the owner to resync
 * @reporter: the devlink health reporter "mbox"
 * @report_work: reports a failure to @reporter (outside the caller's locks)
 * @fail_cmd: command of the last failed request (under @lock)
 * @fail_id: its id
 * @fail_err: its error
 * @fail_ns: when it failed (ktime_get_ns())
 * @reports: failures are reported (the devlink instance is registered)
 * @ready: requests may be sent
 * @down: the last request got no response, and none has since (under
 *	@lock; read without it by octep_mbox_down())
 * @gone: the device read all ones: off the bus, nothing will answer
 *	(under @lock; said once)
 * @requests: requests sent
 * @timeouts: requests whose response did not come in time
 * @errors: requests the coprocessor answered with an error status
 * @stray: responses that matched no waiting request (late ones)
 */
struct octep_mbox {
	struct octep_dev *oct;
	spinlock_t lock;	/* see above */
	struct list_head pending;
	u32 next_id;
	u32 h2c_prod;
	u32 c2h_cons;
	u32 h2c_size;
	u32 c2h_size;
	int irq;
	void (*leaked)(struct octep_mbox *mb);
	void (*recover)(struct octep_mbox *mb);
	struct devlink_health_reporter *reporter;
	struct work_struct report_work;
	u8 fail_cmd;
	u32 fail_id;
	int fail_err;
	u64 fail_ns;
	bool reports;
	bool ready;
	bool down;
	bool gone;
	atomic64_t requests;
	atomic64_t timeouts;
	atomic64_t errors;
	atomic64_t stray;
};

int octep_mbox_init(struct octep_mbox *mb, struct octep_dev *oct, int irq);
void octep_mbox_fini(struct octep_mbox *mb);
int octep_mbox_call(struct octep_mbox *mb, u8 cmd, const void *req,
		    size_t req_len, void *resp, size_t resp_len);
void octep_mbox_reports(struct octep_mbox *mb, bool on);

/**
 * octep_mbox_down() - whether the coprocessor stopped answering
 * @mb: mailbox
 *
 * True from a request that timed out until a request is answered again
 * (the owner's resync, which the reporter's recover queues, retries).
 * A caller that holds a lock others wait on, as a state add holds the
 * xfrm configuration mutex, refuses at once instead of waiting out
 * another timeout.
 *
 * Return: true while the mailbox is down.
 */
static inline bool octep_mbox_down(const struct octep_mbox *mb)
{
	return READ_ONCE(mb->down);
}

/* Counters of the IPsec offload (ethtool -S), enum order = name order. */
enum octep_ipsec_cnt {
	OCTEP_IPSEC_TX_PACKETS,		/* handed to the block to encrypt */
	OCTEP_IPSEC_TX_BYTES,
	OCTEP_IPSEC_RX_PACKETS,		/* decrypted and verified by the block */
	OCTEP_IPSEC_RX_BYTES,
	OCTEP_IPSEC_OUT_DROP,		/* tx: offload asked, not possible */
	OCTEP_IPSEC_IN_DROP,		/* rx: ok, but for an SA let go */
	OCTEP_IPSEC_RX_BAD_ICV,
	OCTEP_IPSEC_RX_REPLAY,
	OCTEP_IPSEC_RX_NO_ENTRY,	/* ESP the table has no entry for */
	OCTEP_IPSEC_RX_MALFORMED,
	OCTEP_IPSEC_RX_CLEAR_DROP,	/* clear text an inbound policy forbids */
	OCTEP_IPSEC_RX_POL_BLOCK,	/* an inbound block policy */
	OCTEP_IPSEC_RX_TMPL_MISMATCH,	/* decrypted, but no policy takes it */
	OCTEP_IPSEC_RX_EXPIRED,		/* its state past the hard limit */
	OCTEP_IPSEC_RX_BACKSTOP,	/* clear text the block let through */
	OCTEP_IPSEC_NCNT,
};

/* Per-state counters kept for ip -s xfrm state (update_stats). */
#define OCTEP_IPSEC_STATS_MS	1000

/**
 * struct octep_ipsec - the IPsec offload of one device (oct->ipsec)
 * @oct: the device
 * @netdev: its netdev
 * @mbox: the control mailbox
 * @info: what GET_INFO said
 * @flows: devlink param ipsec_flows (0, 1, 2)
 * @lock: @sas, @pols, @n_out_pols, @n_in_pols, @in_pols, @dead and
 *	@in_sas changes
 * @sas: every offloaded state (struct octep_ipsec_sa)
 * @n_out_pols: outbound policies in the block's table; read locklessly
 *	by octep_ipsec_tx_flags()
 * @n_in_pols: inbound policies in the block's table, those on @in_pols;
 *	read locklessly by octep_ipsec_rx_wanted() and the backstop
 * @in_pols: the inbound policies in the block's table (struct
 *	octep_ipsec_pol) in the block's match order, the lowest priority
 *	value first, then the oldest; walked under RCU by the backstop
 * @hw_base: the block's OCTEP_SDP_IPSEC_CNT counters at probe
 * @hw_mib: the block's transmit drop counters as @stats_work last added
 *	them to /proc/net/xfrm_stat (only @stats_work touches them)
 * @pols: every policy offloaded here, until it is freed
 * @in_sas: inbound states by handle, for the receive path (RCU)
 * @owned: every state that has an entry in the block, by handle, live or
 *	dead (struct octep_ipsec_sa); changed under @lock, read under RCU
 *	or @lock; an entry is freed only after it leaves @owned
 * @dead: freed states whose entries are still to be deleted in the block
 * @n_dead: how many are on @dead or in ctl_work's batch (deletes not done)
 * @orphans: freed states whose delete failed: kept for a resync
 * @n_orphans: how many are on @orphans
 * @flags: OCTEP_IPSEC_F_*
 * @dying: the device goes away: the worker tries once and stops
 * @adds_inflight: flow adds sent whose entry is not yet in @owned
 * @add_seq: flow adds started; a resync frees nothing if it moved
 * @del_batches: delete batches done (read locklessly by a waiting add)
 * @ctl_fails: consecutive worker runs that could not finish (back-off)
 * @drained: woken after each delete batch
 * @ctl_work: deletes the entries of @dead in batches, resyncs, sends ESN
 *	updates; nobody waits for it but removal
 * @batch: @ctl_work's batch of states being deleted
 * @stats_work: refreshes per-state counters from the block, and adds the
 *	block's transmit drops to the stack's xfrm MIB
 * @stats_all: @stats_work's next FLOW_STATS_MANY pass asks for every
 *	state, not the changed ones (only @stats_work touches it)
 * @orphans_total: entries that leaked (failed deletes, late adds)
 * @resyncs: resyncs with the block done
 * @resync_freed: leaked entries a resync freed (deleted, or found gone)
 * @cnt: enum octep_ipsec_cnt
 * @netevent_nb: follows the next hops of tunnel entries (xfrm_nh.c)
 */
struct octep_ipsec {
	struct octep_dev *oct;
	struct net_device *netdev;
	struct octep_mbox mbox;
	struct octep_sdp_mbox_info info;
	u8 flows;
	spinlock_t lock;	/* see above */
	struct list_head sas;
	unsigned int n_out_pols;
	unsigned int n_in_pols;
	struct list_head in_pols;
	u64 hw_base[OCTEP_SDP_IPSEC_NCNT];
	u64 hw_mib[OCTEP_SDP_IPSEC_NCNT];
	struct list_head pols;
	struct xarray in_sas;
	struct xarray owned;
	struct list_head dead;
	unsigned int n_dead;
	struct list_head orphans;
	unsigned int n_orphans;
	unsigned long flags;
	bool dying;
	atomic_t adds_inflight;
	atomic_t add_seq;
	unsigned long del_batches;
	unsigned int ctl_fails;
	wait_queue_head_t drained;
	struct delayed_work ctl_work;
	struct octep_ipsec_sa *batch[OCTEP_SDP_MBOX_DEL_MANY_MAX];
	struct delayed_work stats_work;
	bool stats_all;
	atomic64_t orphans_total;
	atomic64_t resyncs;
	atomic64_t resync_freed;
	atomic64_t cnt[OCTEP_IPSEC_NCNT];
	struct notifier_block netevent_nb;
};

/* ips->flags: a FLOW_ADD succeeded after its caller gave up. */
#define OCTEP_IPSEC_F_RESYNC	0

#if IS_ENABLED(CONFIG_OCTEP_IPSEC_XFRM)

/* xfrm.c, xfrm_ctl.c, xfrm_policy.c, xfrm_rxtx.c */
int octep_ipsec_init(struct octep_dev *oct);
void octep_ipsec_netdev_setup(struct octep_dev *oct, struct net_device *nd);
void octep_ipsec_netdev_uninit(struct octep_dev *oct);
void octep_ipsec_fini(struct octep_dev *oct);
void octep_ipsec_mac_changed(struct octep_dev *oct);
void octep_ipsec_reports(struct octep_dev *oct, bool on);
int octep_ipsec_tx_flags(struct octep_iq *iq, struct sk_buff *skb,
			 u64 *flags);
int octep_ipsec_rx_xfrm(struct octep_oq *oq, struct sk_buff *skb, u64 ext);

/**
 * octep_ipsec_rx_wanted() - must octep_ipsec_rx_xfrm() see this packet
 * @oq: the output ring
 * @ext: the response header's ext word
 *
 * Yes when the block says something about IPsec (its policy table has
 * dropped what inbound policies forbid, the stack trusting it to), and
 * for everything while inbound policies are offloaded (the backstop).
 *
 * Return: true to call octep_ipsec_rx_xfrm().
 */
static inline bool octep_ipsec_rx_wanted(struct octep_oq *oq, u64 ext)
{
	struct octep_ipsec *ips = oq->qv->oct->ipsec;

	/*
	 * Pairs with the WRITE_ONCE()s under ips->lock in policy add and
	 * delete. A stale zero lets by a frame racing with the first
	 * inbound policy's add, as software does one that comes before the
	 * policy is inserted (octep_ipsec_rx_backstop() says more).
	 */
	return FIELD_GET(OCTEP_SDP_RX_IPSEC_STATUS, ext) ||
	       (ips && READ_ONCE(ips->n_in_pols));
}

/* xfrm_stats.c, xfrm.c */
unsigned int octep_ipsec_stats_count(struct octep_dev *oct);
void octep_ipsec_stats_strings(struct octep_dev *oct, u8 **data);
void octep_ipsec_stats_values(struct octep_dev *oct, u64 *data);
int octep_ipsec_info_put(struct octep_dev *oct, struct devlink_info_req *req);
u8 octep_ipsec_flows(struct octep_dev *oct);
int octep_ipsec_set_flows(struct octep_dev *oct, u8 flows,
			  struct netlink_ext_ack *extack);
int octep_ipsec_check_flows(u8 flows, struct netlink_ext_ack *extack);

#else /* !CONFIG_OCTEP_IPSEC_XFRM: a plain NIC, every SA in software */

static inline int octep_ipsec_init(struct octep_dev *oct)
{
	return 0;
}

static inline void octep_ipsec_netdev_setup(struct octep_dev *oct,
					    struct net_device *nd)
{
}

static inline void octep_ipsec_mac_changed(struct octep_dev *oct)
{
}

static inline void octep_ipsec_netdev_uninit(struct octep_dev *oct)
{
}

static inline void octep_ipsec_fini(struct octep_dev *oct)
{
}

static inline void octep_ipsec_reports(struct octep_dev *oct, bool on)
{
}

static inline int octep_ipsec_tx_flags(struct octep_iq *iq,
				       struct sk_buff *skb, u64 *flags)
{
	return 0;
}

static inline int octep_ipsec_rx_xfrm(struct octep_oq *oq,
				      struct sk_buff *skb, u64 ext)
{
	return 0;
}

/* As with the offload and no flow table: what the block says is ignored. */
static inline bool octep_ipsec_rx_wanted(struct octep_oq *oq, u64 ext)
{
	return false;
}

static inline unsigned int octep_ipsec_stats_count(struct octep_dev *oct)
{
	return 0;
}

static inline void octep_ipsec_stats_strings(struct octep_dev *oct,
					     u8 **data)
{
}

static inline void octep_ipsec_stats_values(struct octep_dev *oct,
					    u64 *data)
{
}

static inline int octep_ipsec_info_put(struct octep_dev *oct,
				       struct devlink_info_req *req)
{
	return 0;
}

static inline u8 octep_ipsec_flows(struct octep_dev *oct)
{
	return 0;
}

static inline int octep_ipsec_check_flows(u8 flows,
					  struct netlink_ext_ack *extack)
{
	if (!flows)
		return 0;
	NL_SET_ERR_MSG_MOD(extack,
			   "This build has no IPsec offload (CONFIG_OCTEP_IPSEC_XFRM)");
	return -EOPNOTSUPP;
}

static inline int octep_ipsec_set_flows(struct octep_dev *oct, u8 flows,
					struct netlink_ext_ack *extack)
{
	return octep_ipsec_check_flows(flows, extack);
}

#endif /* CONFIG_OCTEP_IPSEC_XFRM */

#endif /* _OCTEP_IPSEC_XFRM_H */
