/* SPDX-License-Identifier: GPL-2.0 */
/*
 * octep_sim: a device model of the OCTEON SDP block (see
 * Documentation/networking/device_drivers/ethernet/octep_sim.rst).
 *
 * One file per concern: bus.c (the bus, new_device/del_device), dev.c (a
 * device's life), regs.c (the register window), rules.c (the block's
 * counting and interrupt rules, shared with the vfio-user server in vfu/),
 * irq.c (irq_chip, domain, and the rules' timers and sends), engine.c (the
 * kthread that moves packets),
 * wire.c (the far end of the link), debugfs.c (settings, counters, faults,
 * the test hooks).
 */
#ifndef _OCTEP_SIM_H
#define _OCTEP_SIM_H

#include <linux/device.h>
#include <linux/hrtimer.h>
#include <linux/irq_work.h>
#include <linux/netdevice.h>
#include <linux/skbuff.h>
#include <linux/smp.h>
#include <linux/spinlock.h>
#include <net/gro_cells.h>

#include "../ethernet/octep_ipsec/octep_compat.h"
#include "../ethernet/octep_ipsec/octep_sdp.h"
#include "rules.h"

struct page_pool;

#define OSIM_NAME		"octep_sim"
#define OSIM_MAX_ID		9999999		/* "octw" + ID fits IFNAMSIZ */
/* hwirq numbers: one per ring pair, then the mailbox. */
#define OSIM_HWIRQ_MBOX		OCTEP_SDP_MAX_RINGS
#define OSIM_NR_HWIRQ		(OCTEP_SDP_MAX_RINGS + 1)

/* Packets the engine takes in one batch, from the wire or from a ring. */
#define OSIM_BATCH		32
/*
 * Bytes of TSO frames one input ring's batch may copy: the copy runs under
 * the ring's lock with interrupts off (a ring disable must wait for it, or
 * the host would free buffers being read), so it is kept short.
 */
#define OSIM_TX_BATCH_BYTES	(128 * 1024)
/* Frames queued from the wire before its queue is stopped. */
#define OSIM_WIRE_QLEN		256
/* Pages the peer's receive buffers recycle through (a page a frame). */
#define OSIM_WIRE_POOL		1024

struct osim_dev;
struct osim_ring;
struct osim_ipsec;

/**
 * struct osim_cnt - a CNTS register and its INT_LEVELS, in the kernel model
 * @r: the rules' state (rules.h); its fields are written under the ring
 *	side's lock, @r.count with smp_store_release(), read by read64
 *	without the lock
 * @timer: the block's timer for this count, as the rules start and cancel it
 * @ring: ring pair this count belongs to
 * @is_in: the input side's count (IN_CNTS), else OUT_CNTS
 */
struct osim_cnt {
	struct osim_rules r;
	struct hrtimer timer;
	struct osim_ring *ring;
	bool is_in;
};

/**
 * struct osim_oq - an output ring (block to host, receive)
 * @lock: ring state, its count and @deferred; taken by the engine per batch
 *	and by every host write to the ring's registers
 * @baddr: SLIST_BADDR
 * @rsize: SLIST_RSIZE (descriptors)
 * @bufsize: OUT_CONTROL buffer size
 * @enabled: OUT_ENABLE bit 0, and the ring's memory was reachable
 * @desc: the descriptor ring, as the model reaches it
 * @head: next descriptor the block fills
 * @credits: buffers given by the host and not yet filled
 * @fill: fault: act as though there were no credits
 * @cnt: OUT_CNTS and OUT_INT_LEVELS
 * @deferred: packets counted whose buffer write is delayed (fault)
 * @delay_timer: writes @deferred when due
 * @inject: synthetic packets the engine still has to make (debugfs)
 * @inject_seq: sequence number of the next synthetic packet
 * @arrive_on_enable: fault: enables still to be preceded by a packet
 * @arrived_on_enable: packets so counted
 * @pkts: packets written to the host
 * @bytes: their bytes
 * @drop_credit: dropped for want of credits
 * @drop_big: dropped as larger than the buffer
 * @drop_disabled: dropped as the ring is not enabled
 * @drop_dma: dropped as a descriptor's address is not reachable
 * @delayed: buffers written after their count (fault)
 * @fill_faults: times the fill fault was set
 * @credit_excess: credits given beyond the ring size (ignored)
 */
struct osim_oq {
	spinlock_t lock;	/* see above */
	u64 baddr;
	u32 rsize;
	u32 bufsize;
	bool enabled;
	struct octep_sdp_oq_desc *desc;
	u32 head;
	u32 credits;
	bool fill;
	struct osim_cnt cnt;
	struct sk_buff_head deferred;
	struct hrtimer delay_timer;
	atomic_t inject;
	u32 inject_seq;
	atomic_t arrive_on_enable;
	u64 arrived_on_enable;
	u64 pkts;
	u64 bytes;
	u64 drop_credit;
	u64 drop_big;
	u64 drop_disabled;
	u64 drop_dma;
	u64 delayed;
	u64 fill_faults;
	u64 credit_excess;
};

/**
 * struct osim_iq - an input ring (host to block, transmit)
 * @lock: ring state and its count; taken by the engine per batch and by
 *	every host write to the ring's registers
 * @baddr: IN_INSTR_BADDR
 * @rsize: IN_INSTR_RSIZE (instructions)
 * @control: IN_CONTROL (stored, no effect)
 * @enabled: IN_ENABLE bit 0, and the ring's memory was reachable
 * @instr: the instruction ring, as the model reaches it
 * @head: next instruction the block reads
 * @pending: instructions rung in IN_INSTR_DBELL and not yet read
 * @cnt: IN_CNTS and IN_INT_LEVELS
 * @pkts: frames taken from the host
 * @bytes: their bytes
 * @tso: TSO instructions cut into segments
 * @tso_segs: segments they made
 * @esp_tso: of the TSO instructions, those with ENCRYPT (ESP GSO)
 * @esp_tso_segs: the ESP packets they made
 * @gather: instructions with a gather list
 * @drop_bad: instructions refused (length, address, gather list, TSO
 *	headers); still counted done
 * @drop_link: frames dropped as the wire was down or no skb was had
 * @dbell_excess: instructions rung beyond the ring size (ignored)
 * @hung: fault: the block stops reading the ring though its enable bit
 *	reads set; cleared by a disable of the ring (a ring reset)
 * @hangs: times the fault was set
 */
struct osim_iq {
	spinlock_t lock;	/* see above */
	u64 baddr;
	u32 rsize;
	u64 control;
	bool enabled;
	struct octep_sdp_instr *instr;
	u32 head;
	u32 pending;
	struct osim_cnt cnt;
	u64 pkts;
	u64 bytes;
	u64 tso;
	u64 tso_segs;
	u64 esp_tso;
	u64 esp_tso_segs;
	u64 gather;
	u64 drop_bad;
	u64 drop_link;
	u64 dbell_excess;
	bool hung;
	u64 hangs;
};

/**
 * struct osim_ring - a ring pair and its interrupt
 * @dev: device
 * @idx: ring number (also its hwirq)
 * @oq: output ring
 * @iq: input ring
 * @lose_irq: fault: interrupts still to lose
 * @irq_lost: interrupts lost to the fault
 * @irq_fired: interrupts sent to Linux
 * @dbg: the ring's debugfs directory
 */
struct osim_ring {
	struct osim_dev *dev;
	unsigned int idx;
	struct osim_oq oq;
	struct osim_iq iq;
	atomic_t lose_irq;
	atomic64_t irq_lost;
	atomic64_t irq_fired;
	struct dentry *dbg;
};

/**
 * struct osim_hwirq - one interrupt line of the model
 * @dev: device
 * @hwirq: its number in the domain
 * @work: sends the interrupt from hard interrupt context on this CPU
 * @csd: sends it on @cpu
 * @cpu: CPU the interrupt is sent on (its affinity), or -1 for the CPU that
 *	raised it
 * @virq: the Linux IRQ it is mapped to (0: none)
 * @storm: the hostile mode's storm on this line (osim_storm_fn())
 * @storming: @storm is running
 */
struct osim_hwirq {
	struct osim_dev *dev;
	unsigned int hwirq;
	struct irq_work work;
	call_single_data_t csd;
	int cpu;
	unsigned int virq;
	struct hrtimer storm;
	unsigned long storming;
};

/**
 * struct osim_bucket - a token bucket for one direction of the link
 * @tokens: bytes that may still pass (negative: owed)
 * @last: when @tokens was last refilled
 */
struct osim_bucket {
	s64 tokens;
	ktime_t last;
};

/**
 * struct osim_stub - the host stub (debugfs host_stub): rings without a driver
 * @active: rings set up
 * @rsize: descriptors (instructions) per ring
 * @bufsize: receive buffer size
 * @oq_desc: each output ring's descriptors
 * @oq_desc_dma: and their DMA address
 * @iq_instr: each input ring's instructions
 * @iq_instr_dma: and their DMA address
 * @bufs: all receive buffers, one block
 * @bufs_dma: its DMA address
 */
struct osim_stub {
	bool active;
	u32 rsize;
	u32 bufsize;
	struct octep_sdp_oq_desc *oq_desc[OCTEP_SDP_MAX_RINGS];
	dma_addr_t oq_desc_dma[OCTEP_SDP_MAX_RINGS];
	struct octep_sdp_instr *iq_instr[OCTEP_SDP_MAX_RINGS];
	dma_addr_t iq_instr_dma[OCTEP_SDP_MAX_RINGS];
	void *bufs;
	dma_addr_t bufs_dma;
};

/**
 * struct osim_sdp - the auxiliary device and its way back to the model
 * @sdp: what the driver sees
 * @dev: the model device (valid while the auxiliary device is registered)
 */
struct osim_sdp {
	struct octep_sdp_dev sdp;
	struct osim_dev *dev;
};

/* dev->flags bits */
#define OSIM_F_KICK		0	/* the engine has work to look at */
#define OSIM_F_DYING		1	/* no more interrupts, no more work */
/*
 * Fault: the block fell off the bus (a surprise removal, a link down): the
 * host reads all ones and its writes go nowhere, and the block neither
 * interrupts nor touches host memory again. Set through debugfs, one way.
 */
#define OSIM_F_GONE		2

/**
 * enum osim_hk - what the hostile mode writes
 * @OSIM_HK_RX_LEN: a receive length below an Ethernet header or past the
 *	buffer
 * @OSIM_HK_RX_EXT: a checksum result the contract does not define
 * @OSIM_HK_RX_COUNT: an output count larger than any ring
 * @OSIM_HK_TX_COUNT: an input count larger than any ring
 * @OSIM_HK_MBOX: a mailbox response nobody asked for
 * @OSIM_HK_MBOX_BAD: a mailbox response with a wrong id, command or size
 * @OSIM_HK_IRQ_STORM: a ring pair's line that fires every
 *	OSIM_STORM_PERIOD_NS, enabled or not, until the kind is turned off
 * @OSIM_HK_NUM: the number of kinds
 */
enum osim_hk {
	OSIM_HK_RX_LEN,
	OSIM_HK_RX_EXT,
	OSIM_HK_RX_COUNT,
	OSIM_HK_TX_COUNT,
	OSIM_HK_MBOX,
	OSIM_HK_MBOX_BAD,
	OSIM_HK_IRQ_STORM,
	OSIM_HK_NUM
};

/* How often a storming line fires: 20 kHz. */
#define OSIM_STORM_PERIOD_NS	(50 * NSEC_PER_USEC)

/* A count no ring can hold: what the count faults add. */
#define OSIM_HOSTILE_COUNT	BIT(24)

/**
 * struct osim_hostile - the hostile mode's state
 * @lock: guards the rest
 * @state: the generator, from the seed
 * @rate: one opportunity in @rate becomes a fault; 0 for none
 * @kinds: the kinds on, a mask of BIT(enum osim_hk)
 * @injected: faults injected, per kind (for irq_storm: storms started)
 * @storm_fires: interrupts the storms raised, held ones included
 */
struct osim_hostile {
	spinlock_t lock;	/* the generator, rate, kinds, counts */
	u64 state;
	u32 rate;
	u32 kinds;
	u64 injected[OSIM_HK_NUM];
	atomic64_t storm_fires;
};

/**
 * struct osim_dev - one simulated SDP block
 * @dev: the device on the octep_sim bus, octep_sim<ID>; also the DMA device
 * @list: on the bus's list of devices
 * @id: ID given to new_device
 * @num_rings: ring pairs
 * @rings: ring pairs
 * @asdp: the auxiliary device, octep_sim.sdp.<ID>
 * @aux_added: @asdp was added to the auxiliary bus
 * @wire: the wire netdev, octw<ID>
 * @wire_q: frames the wire sent, for the engine
 * @wire_pp: the page pool of the frames the wire receives (the peer's
 *	receive buffers)
 * @gro: the wire's receive path (GRO) for frames from the host
 * @wire_tx_pkts: frames the wire sent (host direction)
 * @wire_tx_bytes: their bytes
 * @wire_rx_pkts: frames the wire received (from the host)
 * @wire_rx_bytes: their bytes
 * @wire_drops: frames dropped by the model outside any ring (bad checksum
 *	request, segmentation or allocation failure, device going away)
 * @bad_regs: register accesses at offsets that name nothing
 * @rss_ctl: RSS_CTL as written; stored with smp_store_release() after the
 *	key and table, read by the engine with smp_load_acquire()
 * @rss_key: RSS_KEY registers as written
 * @rss_indir: RSS_INDIR registers as written
 * @rss_drops: frames whose indirection entry named a ring not enabled
 *	(engine only)
 * @domain: irq domain
 * @fwnode: its fwnode
 * @hwirqs: interrupt lines
 * @engine: the engine's kthread
 * @flags: OSIM_F_*
 * @engine_cpu: the engine's CPU, -1 for any
 * @engine_wakeups: times the engine woke up to look for work
 * @stall_until: fault: the engine does nothing until then
 * @stalls: stall faults injected
 * @link_mbps: link rate in Mbit/s each way, 0 = unlimited
 * @bucket_rx: token bucket towards the host
 * @bucket_tx: token bucket towards the wire
 * @resend_pending: enum osim_resend_pending
 * @masked: enum osim_masked
 * @delay_ns: fault: how long a delayed buffer write waits
 * @left_ns: a count silent this long is a ring left (struct osim_rules)
 * @delay_share: fault: share of packets delayed, per mille
 * @regs_off: offset the debugfs regs file reads
 * @stub: the host stub
 * @stub_lock: serializes host_stub commands
 * @dbg: debugfs directory
 * @ipsec: mailbox and flow table (ipsec.h)
 * @hostile: the hostile mode (hostile.c)
 */
struct osim_dev {
	struct device dev;
	struct list_head list;
	unsigned int id;
	unsigned int num_rings;
	struct osim_ring rings[OCTEP_SDP_MAX_RINGS];
	struct osim_sdp *asdp;
	bool aux_added;

	struct net_device *wire;
	struct sk_buff_head wire_q;
	struct gro_cells gro;
	struct page_pool *wire_pp;
	u64 wire_tx_pkts;
	u64 wire_tx_bytes;
	u64 wire_rx_pkts;
	u64 wire_rx_bytes;
	atomic64_t wire_drops;
	atomic64_t bad_regs;
	/*
	 * RSS registers: written by the host, one register a store, read by
	 * the engine without a lock, a register a load. A key or table the
	 * host changes under traffic may steer a frame by a mix of old and
	 * new registers: to a ring one of them names, as on the block.
	 */
	u64 rss_ctl;
	u64 rss_key[OCTEP_SDP_RSS_KEY_REGS];
	u64 rss_indir[OCTEP_SDP_RSS_INDIR_REGS];
	u64 rss_drops;

	struct irq_domain *domain;
	struct fwnode_handle *fwnode;
	struct osim_hwirq hwirqs[OSIM_NR_HWIRQ];

	struct task_struct *engine;
	unsigned long flags;
	int engine_cpu;
	u64 engine_wakeups;
	ktime_t stall_until;
	u64 stalls;
	u32 link_mbps;
	struct osim_bucket bucket_rx;
	struct osim_bucket bucket_tx;

	u32 resend_pending;
	u32 masked;
	u64 delay_ns;
	u32 delay_share;
	u64 left_ns;

	u32 regs_off;
	struct osim_stub stub;
	struct mutex stub_lock;	/* host_stub commands */
	struct dentry *dbg;
	struct osim_ipsec *ipsec;
	struct osim_hostile hostile;
};

static inline struct osim_dev *to_osim_dev(struct device *dev)
{
	return container_of(dev, struct osim_dev, dev);
}

/* dev.c */
struct osim_dev *osim_dev_create(unsigned int id, unsigned int num_rings,
				 const struct bus_type *bus);
void osim_dev_destroy(struct osim_dev *dev);

/* regs.c */
extern const struct octep_sdp_ops osim_sdp_ops;
u64 osim_read64(struct osim_dev *dev, u32 off);
void osim_write64(struct osim_dev *dev, u32 off, u64 val);
void *osim_dma_va(struct osim_dev *dev, u64 addr, size_t len);
void osim_rings_reset(struct osim_dev *dev);

/* irq.c */
int osim_irq_init(struct osim_dev *dev);
void osim_irq_fini(struct osim_dev *dev);
void osim_cnt_init(struct osim_cnt *c, struct osim_ring *ring, bool is_in);
void osim_cnt_add(struct osim_cnt *c, u32 n);
void osim_cnt_host_write(struct osim_cnt *c, u64 val);
void osim_cnt_levels_write(struct osim_cnt *c, u64 val);
void osim_cnt_stop(struct osim_cnt *c);
bool osim_fire(struct osim_dev *dev, unsigned int hwirq);

/* engine.c */
int osim_engine_start(struct osim_dev *dev);
void osim_engine_stop(struct osim_dev *dev);
void osim_engine_release(struct osim_dev *dev);
void osim_engine_kick(struct osim_dev *dev);
int osim_engine_set_cpu(struct osim_dev *dev, int cpu);
void osim_oq_init(struct osim_oq *oq);
void osim_oq_flush_deferred(struct osim_oq *oq, bool write);
void osim_oq_arrive_on_enable(struct osim_dev *dev, struct osim_oq *oq);

/* hostile.c */
void osim_hostile_init(struct osim_dev *dev);
void osim_hostile_debugfs(struct osim_dev *dev);
bool osim_hostile(struct osim_dev *dev, enum osim_hk kind, u32 *rnd);
u64 osim_hostile_len(u32 bufsize, u32 rnd);

/* wire.c */
int osim_wire_create(struct osim_dev *dev);
void osim_wire_destroy(struct osim_dev *dev);
void osim_wire_wake(struct osim_dev *dev);

/* debugfs.c */
int osim_debugfs_init(void);
void osim_debugfs_exit(void);
void osim_debugfs_dev_add(struct osim_dev *dev);
void osim_debugfs_dev_del(struct osim_dev *dev);
void osim_stub_stop(struct osim_dev *dev);

#endif /* _OCTEP_SIM_H */
