/* SPDX-License-Identifier: GPL-2.0 */
/*
 * octep_ipsec: the IPsec offload - the control mailbox client (mbox.c) and
 * the xfrm device offload on top of it (xfrm.c).
 */
#ifndef _OCTEP_IPSEC_XFRM_H
#define _OCTEP_IPSEC_XFRM_H

#include <linux/atomic.h>
#include <linux/bitfield.h>
#include <linux/list.h>
#include <linux/octep_sdp.h>
#include <linux/spinlock.h>
#include <linux/workqueue.h>
#include <linux/xarray.h>
#include <net/devlink.h>

struct octep_dev;
struct octep_iq;
struct octep_oq;
struct net_device;
struct sk_buff;

/* How long a mailbox request waits for its response. */
#define OCTEP_MBOX_TIMEOUT_MS	3000

#define OCTEP_MBOX_ORPHANS	16

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
 * @orphans: handles of entries added by FLOW_ADDs whose caller gave up
 * @n_orphans: how many are in @orphans
 * @orphan_work: queued when one is noted (it deletes them)
 * @ready: requests may be sent
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
	u32 orphans[OCTEP_MBOX_ORPHANS];
	unsigned int n_orphans;
	struct work_struct *orphan_work;
	bool ready;
	atomic64_t requests;
	atomic64_t timeouts;
	atomic64_t errors;
	atomic64_t stray;
};

int octep_mbox_init(struct octep_mbox *mb, struct octep_dev *oct, int irq);
void octep_mbox_fini(struct octep_mbox *mb);
bool octep_mbox_take_orphan(struct octep_mbox *mb, u32 *handle);
int octep_mbox_call(struct octep_mbox *mb, u8 cmd, const void *req,
		    size_t req_len, void *resp, size_t resp_len);

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
 * @lock: @sas, @out_sas, @out_pols, @in_pols, @pols, @dead and @in_sas
 *	changes
 * @sas: every offloaded state (struct octep_ipsec_sa)
 * @out_sas: packet-offload outbound states, newest first (RCU)
 * @out_pols: packet-offload outbound policies (RCU)
 * @in_pols: packet-offload inbound policies (RCU)
 * @n_in_pols: how many; read locklessly by octep_ipsec_rx_wanted()
 * @pols: every policy offloaded here, until it is freed
 * @in_sas: inbound states by handle, for the receive path (RCU)
 * @dead: handles whose entries are still to be deleted in the block
 * @del_work: deletes them (state_free may not sleep)
 * @stats_work: refreshes per-state counters from the block
 * @cnt: enum octep_ipsec_cnt
 */
struct octep_ipsec {
	struct octep_dev *oct;
	struct net_device *netdev;
	struct octep_mbox mbox;
	struct octep_sdp_mbox_info info;
	u8 flows;
	spinlock_t lock;	/* see above */
	struct list_head sas;
	struct list_head out_sas;
	struct list_head out_pols;
	struct list_head in_pols;
	unsigned int n_in_pols;
	struct list_head pols;
	struct xarray in_sas;
	struct list_head dead;
	struct work_struct del_work;
	struct delayed_work stats_work;
	atomic64_t cnt[OCTEP_IPSEC_NCNT];
};

/* xfrm.c */
int octep_ipsec_init(struct octep_dev *oct);
void octep_ipsec_netdev_setup(struct octep_dev *oct, struct net_device *nd);
void octep_ipsec_netdev_uninit(struct octep_dev *oct);
void octep_ipsec_fini(struct octep_dev *oct);
int octep_ipsec_tx_flags(struct octep_iq *iq, struct sk_buff *skb,
			 u64 *flags);
int octep_ipsec_rx_xfrm(struct octep_oq *oq, struct sk_buff *skb, u64 ext);

/**
 * octep_ipsec_rx_wanted() - must octep_ipsec_rx_xfrm() see this packet
 * @oq: the output ring
 * @ext: the response header's ext word
 *
 * Yes when the block says something about IPsec, and for every packet
 * while packet-offload inbound policies are installed: the stack trusts
 * the device to have dropped clear text those policies forbid.
 *
 * Return: true to call octep_ipsec_rx_xfrm().
 */
static inline bool octep_ipsec_rx_wanted(struct octep_oq *oq, u64 ext)
{
	struct octep_ipsec *ips = oq->qv->oct->ipsec;

	/* Pairs with WRITE_ONCE() in policy add/delete. */
	return FIELD_GET(OCTEP_SDP_RX_IPSEC_STATUS, ext) ||
	       (ips && READ_ONCE(ips->n_in_pols));
}

unsigned int octep_ipsec_stats_count(struct octep_dev *oct);
void octep_ipsec_stats_strings(struct octep_dev *oct, u8 **data);
void octep_ipsec_stats_values(struct octep_dev *oct, u64 *data);
u8 octep_ipsec_flows(struct octep_dev *oct);
int octep_ipsec_set_flows(struct octep_dev *oct, u8 flows,
			  struct netlink_ext_ack *extack);
int octep_ipsec_check_flows(u8 flows, struct netlink_ext_ack *extack);

#endif /* _OCTEP_IPSEC_XFRM_H */
