/* SPDX-License-Identifier: GPL-2.0 */
/*
 * octep_sim: the block's IPsec part. mbox.c is the control mailbox (the
 * register window and the worker that answers requests), flow.c the flow
 * table it programs, esp.c the ESP the engine applies on its two paths.
 */
#ifndef _OSIM_IPSEC_H
#define _OSIM_IPSEC_H

#include <linux/atomic.h>
#include <linux/bitops.h>
#include <linux/hashtable.h>
#include <linux/mutex.h>
#include <linux/skbuff.h>
#include <linux/spinlock.h>
#include <linux/workqueue.h>
#include <linux/xarray.h>

#include "../ethernet/octep_ipsec/octep_sdp.h"

struct osim_dev;
struct crypto_aead;

#define OSIM_FLOW_IN		0
#define OSIM_FLOW_OUT		1
#define OSIM_FLOW_CAP_DEF	4096
#define OSIM_FLOW_CAP_MAX	65536
/* Bit 31 of a handle says outbound; the rest is the entry's index. */
#define OSIM_FLOW_H_OUT		BIT(31)
#define OSIM_FLOW_HBITS		12
#define OSIM_POL_HBITS		12
#define OSIM_ICV_LEN		16
#define OSIM_IV_LEN		8
/* Commands counted one by one in debugfs mbox_cmds (the rest as one). */
#define OSIM_MBOX_NCMD		(OCTEP_SDP_MBOX_FLOW_L2 + 1)

/**
 * struct osim_flow - one flow-table entry (an ESP security association)
 * @hnode: in the inbound hash (SPI), inbound entries only
 * @onode: in the outbound hash (outer destination), packet offload only
 * @dead: on the teardown list, once unlinked
 * @handle: its handle (OSIM_FLOW_H_OUT for outbound)
 * @dir: OSIM_FLOW_IN or OSIM_FLOW_OUT
 * @family: 4 or 6 (outer)
 * @mode: OCTEP_SDP_FLOW_MODE_*
 * @type: OCTEP_SDP_FLOW_TYPE_*
 * @inner_family: packet-offload tunnel, outbound: 4, 6 or 0 for either
 * @reqid: the reqid policies name it by (packet offload, outbound)
 * @esn: 64-bit sequence numbers
 * @encap: OCTEP_SDP_FLOW_ENCAP_* (outer IPv4 only)
 * @sport: ESPINUDP: UDP source port, network order (under @lock: FLOW_ENCAP)
 * @dport: ESPINUDP: UDP destination port (inbound: under table_lock too,
 *	for ips->natt_ports)
 * @l2: outbound packet-offload tunnel: OCTEP_SDP_FLOW_L2_* (under @lock:
 *	FLOW_L2)
 * @h_source: L2_SET: the frames' source MAC (under @lock)
 * @h_dest: L2_SET: their destination MAC (under @lock)
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
 * @bytes: their bytes as the stack counts them: the plain text ESP carries
 *	for packet offload, the IP packet for crypto offload
 * @hard_packets: the hard packet limit (0: none); past it, dropped
 * @hard_bytes: the hard byte limit (0: none)
 * @bad_icv: inbound packets whose ICV failed
 * @replay: inbound packets the window refused
 */
struct osim_flow {
	struct hlist_node hnode;
	struct hlist_node onode;
	struct list_head dead;
	u32 handle;
	u8 dir;
	u8 family;
	u8 mode;
	u8 type;
	u8 inner_family;
	u32 reqid;
	bool esn;
	u8 encap;
	__be16 sport;
	__be16 dport;
	u8 l2;
	u8 h_source[ETH_ALEN];
	u8 h_dest[ETH_ALEN];
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
	u64 hard_packets;
	u64 hard_bytes;
	u64 bad_icv;
	u64 replay;
};

/* Datapath counters (debugfs ipsec/<name>). */
enum osim_ipsec_cnt {
	OSIM_TX_ENCRYPT,	/* crypto offload: packets encrypted */
	OSIM_TX_ENCAP,		/* packet offload: packets encapsulated */
	OSIM_TX_NO_ENTRY,	/* dropped: handle names no outbound entry */
	OSIM_TX_BAD,		/* dropped: not a packet the entry can take */
	OSIM_TX_SEQ_OVERFLOW,	/* dropped: sequence space exhausted */
	OSIM_TX_EXPIRED,	/* dropped: the entry's hard limit reached */
	OSIM_RX_OK,		/* inbound ESP decrypted and verified */
	OSIM_RX_BAD_ICV,
	OSIM_RX_REPLAY,
	OSIM_RX_NO_ENTRY,	/* ESP with no inbound entry: passed as is */
	OSIM_RX_MALFORMED,
	OSIM_TX_CLASSIFY_ENCAP,	/* CLASSIFY: packets an IPSEC policy sent */
	OSIM_TX_CLASSIFY_BYTES,	/* their bytes as the host handed them */
	OSIM_TX_POL_BLOCK,	/* dropped: an outbound block policy */
	OSIM_TX_POL_NO_STATE,	/* dropped: an IPSEC policy, no entry */
	OSIM_RX_POL_BLOCK,	/* dropped: an inbound block policy */
	OSIM_RX_POL_MISMATCH,	/* dropped: clear under IPSEC, or wrong SA */
	OSIM_RX_EXPIRED,	/* dropped: the entry's hard limit reached */
	OSIM_TX_NATT,		/* ESP in UDP sent (both offload types) */
	OSIM_RX_NATT,		/* ESP in UDP decrypted and verified */
	OSIM_RX_NATT_PASS,	/* keepalive or IKE to a NAT-T port: up as is */
	OSIM_TX_NO_NEIGH,	/* dropped: the entry's next hop is on hold */
	OSIM_POL_NO_PORTS,	/* of the policy drops: ports unreadable */
	OSIM_IPSEC_NCNT,
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
 * @features: the OCTEP_SDP_FEAT_* bits GET_INFO announces
 * @mbox_requests: requests taken
 * @mbox_failed: requests failed by the fault
 * @mbox_timedout: requests left unanswered by the fault
 * @mbox_bad: malformed requests (dropped)
 * @mbox_cmds: requests taken by command (debugfs mbox_cmds); index 0
 *	counts the commands past OSIM_MBOX_NCMD
 * @table_lock: serializes table changes (the mailbox worker, teardown)
 * @flows: entries by index, inbound and outbound
 * @in_hash: inbound entries by SPI, for the engine (RCU)
 * @out_hash: outbound packet-offload entries by outer destination (RCU)
 * @pols: policies by index, inbound and outbound
 * @pgrps: each way's policy groups, one per distinct selector mask (RCU)
 * @pol_hash: policies by group and masked selector (RCU)
 * @npols: policies installed each way (read locklessly by the engine)
 * @next_pid: where each way's cyclic policy handle allocation goes on
 * @pol_seq: policies added, to order equal priorities
 * @pgrp_seq: groups made, each group's hash seed
 * @cap: capacity each way (debugfs, applies to later adds)
 * @used: entries installed each way
 * @next_id: where each way's cyclic handle allocation goes on
 * @natt_ports: UDP destination ports of inbound ESPINUDP entries (network
 *	order) to how many entries use each, as xarray values (RCU readers)
 * @changed: each way's packet-offload entries, by index, whose counters
 *	changed since FLOW_STATS_MANY reported them (osim_flow_changed())
 * @cnt: datapath counters, enum osim_ipsec_cnt
 * @warm: a cipher kept allocated so that adding an entry finds the
 *	algorithm instantiated (and self-tested) already
 * @hide: fault (debugfs): a flow or policy handle the datapath's lookups
 *	pass over, so that the block disagrees with the host on purpose
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
	u32 features;
	atomic64_t mbox_requests;
	atomic64_t mbox_failed;
	atomic64_t mbox_timedout;
	atomic64_t mbox_bad;
	atomic64_t mbox_cmds[OSIM_MBOX_NCMD];

	struct mutex table_lock;	/* see above */
	struct xarray flows[2];
	DECLARE_HASHTABLE(in_hash, OSIM_FLOW_HBITS);
	DECLARE_HASHTABLE(out_hash, OSIM_FLOW_HBITS);
	struct xarray pols[2];
	struct list_head pgrps[2];
	DECLARE_HASHTABLE(pol_hash, OSIM_POL_HBITS);
	u32 npols[2];
	u32 next_pid[2];
	u32 pol_seq;
	u32 pgrp_seq;
	u32 cap[2];
	u32 used[2];
	u32 next_id[2];
	struct xarray natt_ports;
	unsigned long changed[2][BITS_TO_LONGS(OSIM_FLOW_CAP_MAX + 1)];

	atomic64_t cnt[OSIM_IPSEC_NCNT];
	struct crypto_aead *warm;
	u32 hide;
	struct dentry *dbg;
};

/*
 * Is @handle the one the debugfs knob hides? The knob is a plain debugfs
 * u32; a lookup racing a write may see either value.
 */
static inline bool osim_hidden(const struct osim_ipsec *ips, u32 handle)
{
	return handle == READ_ONCE(ips->hide);
}

/**
 * osim_flow_changed() - mark a packet-offload entry's counters as changed
 * @ips: IPsec state
 * @f: the entry, f->lock held, its counters just moved
 *
 * For FLOW_STATS_MANY. The bit is tested first so that a busy entry does
 * not write the shared word on every packet. f->lock orders the mark with
 * the counts, and pairs with the lock osim_flow_stats_many() takes to read
 * them after it cleared the mark: a count whose critical section follows
 * that read's sees the clear (the read's unlock releases it) and marks the
 * entry again; one whose section precedes it is in what the read sees.
 */
static inline void osim_flow_changed(struct osim_ipsec *ips,
				     struct osim_flow *f)
{
	unsigned long i = f->handle & ~OSIM_FLOW_H_OUT;

	lockdep_assert_held(&f->lock);
	if (f->type == OCTEP_SDP_FLOW_TYPE_PACKET &&
	    !test_bit(i, ips->changed[f->dir]))
		set_bit(i, ips->changed[f->dir]);
}

/* mbox.c */
int osim_ipsec_init(struct osim_dev *dev);
void osim_ipsec_fini(struct osim_dev *dev);
u64 osim_mbox_read(struct osim_dev *dev, u32 off);
void osim_mbox_write(struct osim_dev *dev, u32 off, u64 val);

static inline bool osim_mbox_reg(u32 off)
{
	return off >= OCTEP_SDP_MBOX_BASE && off < OCTEP_SDP_MBOX_END;
}

static inline bool osim_ipsec_cnt_reg(u32 off)
{
	return off >= OCTEP_SDP_IPSEC_CNT_BASE &&
	       off < OCTEP_SDP_IPSEC_CNT(OCTEP_SDP_IPSEC_NCNT) && !(off & 7);
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

/* policy.c */
/* Where the headers of a frame are (offsets from skb->data). */
struct osim_pkt {
	unsigned int l3;	/* IP header */
	unsigned int l4;	/* what follows the IP header(s) */
	unsigned int end;	/* end of the IP packet */
	u8 family;		/* 4 or 6 */
	u8 proto;		/* IPPROTO_* at l4 */
	bool frag;		/* an IP fragment: not ours to look into */
};

/**
 * struct osim_pkey - what a selector matches: a packet's fields, or the
 *	same masked as a policy group masks them (its hash key)
 * @saddr: source address (IPv4 in the first 4 bytes)
 * @daddr: destination address
 * @sport: TCP or UDP source port, network order
 * @dport: destination port
 * @family: 4 or 6, 0 for a group of either
 * @proto: IP protocol, 0 for a group that names none
 * @pad: zero (the key is hashed whole)
 */
struct osim_pkey {
	u8 saddr[16];
	u8 daddr[16];
	__be16 sport;
	__be16 dport;
	u8 family;
	u8 proto;
	u8 pad[2];
};

/**
 * struct osim_pol - one policy-table entry
 * @hnode: in ips->pol_hash
 * @dead: on a teardown list, once unlinked
 * @grp: its group (the selector's masks)
 * @handle: its handle (OCTEP_SDP_POL_H, OSIM_FLOW_H_OUT for outbound)
 * @seq: when it was added: of equal priorities the oldest wins
 * @priority: lower wins
 * @reqid: IPSEC: the template's reqid, 0 for any
 * @dir: OSIM_FLOW_IN or OSIM_FLOW_OUT
 * @action: OCTEP_SDP_POL_*
 * @mode: IPSEC: the template's mode
 * @tfamily: IPSEC, tunnel: the template's outer family
 * @key: the selector, masked as its group masks packets
 * @tsaddr: IPSEC, tunnel: the template's outer source
 * @tdaddr: IPSEC, tunnel: the template's outer destination
 * @tspi: IPSEC: the template's SPI, 0 for any
 */
struct osim_pol {
	struct hlist_node hnode;
	struct list_head dead;
	struct osim_pgrp *grp;
	u32 handle;
	u32 seq;
	u32 priority;
	u32 reqid;
	u8 dir;
	u8 action;
	u8 mode;
	u8 tfamily;
	struct osim_pkey key;
	u8 tsaddr[16];
	u8 tdaddr[16];
	__be32 tspi;
};

/* What a packet's classification said (osim_pol_out()). */
enum osim_verdict { OSIM_PASS, OSIM_DROP, OSIM_ENCAP };

void osim_pol_init(struct osim_ipsec *ips);
int osim_pol_add(struct osim_ipsec *ips, const __le64 *req,
		 unsigned int req_words, u32 *handle);
struct osim_pol *osim_pol_unlink(struct osim_ipsec *ips, u32 handle);
void osim_pol_free(struct osim_pol *pol);
void osim_pol_link_out(struct osim_ipsec *ips, struct osim_flow *f);
void osim_pol_unlink_out(struct osim_ipsec *ips, struct osim_flow *f);
u64 osim_ipsec_cnt_read(struct osim_dev *dev, u32 off);
enum osim_verdict osim_pol_out(struct osim_ipsec *ips,
			       const struct sk_buff *skb,
			       const struct osim_pkt *p,
			       struct osim_flow **f);
bool osim_pol_named(struct osim_ipsec *ips, const struct sk_buff *skb,
		    const struct osim_pkt *p);
u8 osim_pol_in(struct osim_ipsec *ips, const struct sk_buff *skb,
	       const struct osim_pkt *p, const struct osim_flow *f);
int osim_parse(struct sk_buff *skb, struct osim_pkt *p);

/* esp.c */
int osim_ipsec_tx(struct osim_dev *dev, struct sk_buff *skb, u64 flags,
		  u64 seq);
u64 osim_ipsec_rx(struct osim_dev *dev, struct sk_buff *skb);

#endif /* _OSIM_IPSEC_H */
