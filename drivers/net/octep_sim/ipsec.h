/* SPDX-License-Identifier: GPL-2.0 */
/*
 * octep_sim: the block's IPsec part. mbox.c is the control mailbox (the
 * register window and the worker that answers requests), flow.c the flow
 * table it programs, esp.c the ESP the engine applies on its two paths.
 */
#ifndef _OSIM_IPSEC_H
#define _OSIM_IPSEC_H

#include <linux/atomic.h>
#include <linux/hashtable.h>
#include <linux/mutex.h>
#include <linux/octep_sdp.h>
#include <linux/skbuff.h>
#include <linux/spinlock.h>
#include <linux/workqueue.h>
#include <linux/xarray.h>

struct osim_dev;
struct crypto_aead;

#define OSIM_FLOW_IN		0
#define OSIM_FLOW_OUT		1
#define OSIM_FLOW_CAP_DEF	4096
#define OSIM_FLOW_CAP_MAX	65536
/* Bit 31 of a handle says outbound; the rest is the entry's index. */
#define OSIM_FLOW_H_OUT		BIT(31)
#define OSIM_FLOW_HBITS		10
#define OSIM_ICV_LEN		16
#define OSIM_IV_LEN		8

/**
 * struct osim_flow - one flow-table entry (an ESP security association)
 * @hnode: in the inbound hash (SPI), inbound entries only
 * @dead: on the teardown list, once unlinked
 * @handle: its handle (OSIM_FLOW_H_OUT for outbound)
 * @dir: OSIM_FLOW_IN or OSIM_FLOW_OUT
 * @family: 4 or 6 (outer)
 * @mode: OCTEP_SDP_FLOW_MODE_*
 * @type: OCTEP_SDP_FLOW_TYPE_*
 * @inner_family: packet-offload tunnel, outbound: 4, 6 or 0 for either
 * @esn: 64-bit sequence numbers
 * @spi: SPI, network order
 * @salt: rfc4106 nonce salt (part of the key given to the cipher)
 * @saddr: outer source address
 * @daddr: outer destination address
 * @aead: rfc4106(gcm(aes)), synchronous (the engine calls in any context)
 * @lock: @seq, @bitmap, @ip_id and the counters
 * @seq: outbound: the last sequence number sent; inbound: the highest
 *	sequence number accepted
 * @window: anti-replay window in packets, 0 for none
 * @wbits: bits in @bitmap (a multiple of BITS_PER_LONG)
 * @bitmap: bit (seq % @wbits) set when seq was accepted
 * @ip_id: outer IPv4 id for tunnel encapsulation
 * @packets: packets carried
 * @bytes: their bytes (the ESP packets, outer IP header on)
 * @bad_icv: inbound packets whose ICV failed
 * @replay: inbound packets the window refused
 */
struct osim_flow {
	struct hlist_node hnode;
	struct list_head dead;
	u32 handle;
	u8 dir;
	u8 family;
	u8 mode;
	u8 type;
	u8 inner_family;
	bool esn;
	__be32 spi;
	u8 salt[4];
	u8 saddr[16];
	u8 daddr[16];
	struct crypto_aead *aead;
	spinlock_t lock;	/* see above */
	u64 seq;
	u32 window;
	u32 wbits;
	unsigned long *bitmap;
	u16 ip_id;
	u64 packets;
	u64 bytes;
	u64 bad_icv;
	u64 replay;
};

/**
 * struct osim_ipsec - the block's IPsec state
 * @dev: the model device
 * @mbox_lock: the mailbox window (queues, indices, @int_ena)
 * @h2c: host-to-coprocessor queue
 * @c2h: coprocessor-to-host queue
 * @h2c_prod: H2C_PROD (host written)
 * @h2c_cons: H2C_CONS
 * @c2h_prod: C2H_PROD
 * @c2h_cons: C2H_CONS (host written)
 * @int_ena: MBOX_INT enable
 * @mbox_work: answers requests; queued by the H2C_PROD doorbell
 * @dying: no more mailbox work
 * @fail_next: fault: fail this many of the next requests with EIO
 * @timeout_next: fault: leave this many of the next requests unanswered
 * @fault_cmd: the command the faults apply to, 0 for any
 * @mbox_requests: requests taken
 * @mbox_failed: requests failed by the fault
 * @mbox_timedout: requests left unanswered by the fault
 * @mbox_bad: malformed requests (dropped)
 * @table_lock: serializes table changes (the mailbox worker, teardown)
 * @flows: entries by index, inbound and outbound
 * @in_hash: inbound entries by SPI, for the engine (RCU)
 * @cap: capacity each way (debugfs, applies to later adds)
 * @used: entries installed each way
 * @next_id: where each way's cyclic handle allocation goes on
 * @cnt: datapath counters, enum osim_ipsec_cnt
 * @warm: a cipher kept allocated so that adding an entry finds the
 *	algorithm instantiated (and self-tested) already
 * @dbg: debugfs directory "ipsec"
 */
struct osim_ipsec {
	struct osim_dev *dev;

	spinlock_t mbox_lock;	/* see above */
	u64 h2c[OCTEP_SDP_MBOX_Q_WORDS];
	u64 c2h[OCTEP_SDP_MBOX_Q_WORDS];
	u32 h2c_prod;
	u32 h2c_cons;
	u32 c2h_prod;
	u32 c2h_cons;
	u64 int_ena;
	struct delayed_work mbox_work;
	bool dying;
	atomic_t fail_next;
	atomic_t timeout_next;
	u32 fault_cmd;
	u32 features;		/* GET_INFO's OCTEP_SDP_FEAT_* bits */
	atomic64_t mbox_requests;
	atomic64_t mbox_failed;
	atomic64_t mbox_timedout;
	atomic64_t mbox_bad;

	struct mutex table_lock;	/* see above */
	struct xarray flows[2];
	DECLARE_HASHTABLE(in_hash, OSIM_FLOW_HBITS);
	u32 cap[2];
	u32 used[2];
	u32 next_id[2];

	atomic64_t cnt[16];
	struct crypto_aead *warm;
	struct dentry *dbg;
};

/* Datapath counters (debugfs ipsec/<name>). */
enum osim_ipsec_cnt {
	OSIM_TX_ENCRYPT,	/* crypto offload: packets encrypted */
	OSIM_TX_ENCAP,		/* packet offload: packets encapsulated */
	OSIM_TX_NO_ENTRY,	/* dropped: handle names no outbound entry */
	OSIM_TX_BAD,		/* dropped: not a packet the entry can take */
	OSIM_TX_SEQ_OVERFLOW,	/* dropped: sequence space exhausted */
	OSIM_RX_OK,		/* inbound ESP decrypted and verified */
	OSIM_RX_BAD_ICV,
	OSIM_RX_REPLAY,
	OSIM_RX_NO_ENTRY,	/* ESP with no inbound entry: passed as is */
	OSIM_RX_MALFORMED,
	OSIM_IPSEC_NCNT,
};

/* mbox.c */
int osim_ipsec_init(struct osim_dev *dev);
void osim_ipsec_fini(struct osim_dev *dev);
u64 osim_mbox_read(struct osim_dev *dev, u32 off);
void osim_mbox_write(struct osim_dev *dev, u32 off, u64 val);

static inline bool osim_mbox_reg(u32 off)
{
	return off >= OCTEP_SDP_MBOX_BASE && off < OCTEP_SDP_MBOX_END;
}

/* flow.c */
void osim_flow_table_init(struct osim_ipsec *ips);
void osim_flow_table_fini(struct osim_ipsec *ips);
int osim_flow_cmd(struct osim_ipsec *ips, u8 cmd, const __le64 *req,
		  unsigned int req_words, __le64 *resp,
		  unsigned int *resp_words);
struct osim_flow *osim_flow_lookup_in(struct osim_ipsec *ips, u8 family,
				      __be32 spi, const void *daddr);
struct osim_flow *osim_flow_lookup_out(struct osim_ipsec *ips, u32 handle);
u64 osim_seq_infer(u64 top, u32 lo, u32 win);
bool osim_replay_check(const struct osim_flow *f, u64 seq);
void osim_replay_advance(struct osim_flow *f, u64 seq);

/* esp.c */
int osim_ipsec_tx(struct osim_dev *dev, struct sk_buff *skb, u64 flags);
u64 osim_ipsec_rx(struct osim_dev *dev, struct sk_buff *skb);

#endif /* _OSIM_IPSEC_H */
