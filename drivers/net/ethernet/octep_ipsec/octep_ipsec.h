/* SPDX-License-Identifier: GPL-2.0 */
/*
 * octep_ipsec: host driver for an OCTEON SDP block. Per-device and per-ring
 * state, and the calls between the driver's files.
 *
 * The receive servicing follows the field report "A visit is not a pass":
 * see rx.c for the visit and the mapping of its three rules onto NAPI.
 */
#ifndef _OCTEP_IPSEC_H
#define _OCTEP_IPSEC_H

#include <linux/bitfield.h>
#include <linux/hrtimer.h>
#include <linux/if_vlan.h>
#include <linux/interrupt.h>
#include <linux/netdevice.h>
#include <linux/seqlock.h>
#include <linux/skbuff.h>
#include <linux/spinlock.h>
#include <linux/u64_stats_sync.h>
#include <linux/workqueue.h>
#include <net/xdp.h>

#include "octep_compat.h"
#include "octep_sdp.h"

#define OCTEP_DRV_NAME		"octep_ipsec"

/* Ring sizes (descriptors); powers of two so an index is masked. */
#define OCTEP_RING_MIN		64
#define OCTEP_RING_MAX		4096
#define OCTEP_RING_DEF		1024

/*
 * A receive buffer is one page: headroom for the stack, then the block's
 * part (response header and packet, R_OUT_CONTROL bytes), then room for
 * skb_shared_info so the page becomes the skb's head without a copy.
 */
#define OCTEP_RX_HEADROOM	(NET_SKB_PAD + NET_IP_ALIGN)
#define OCTEP_RX_BUF_SIZE_AT(off) (PAGE_SIZE - (off) - \
				 SKB_DATA_ALIGN(sizeof(struct skb_shared_info)))
#define OCTEP_RX_BUF_SIZE	OCTEP_RX_BUF_SIZE_AT(OCTEP_RX_HEADROOM)
#define OCTEP_RX_MAX_PKT	(OCTEP_RX_BUF_SIZE - OCTEP_SDP_RESP_HDR_LEN)
#define OCTEP_MAX_MTU		(OCTEP_RX_MAX_PKT - ETH_HLEN - VLAN_HLEN)
/*
 * With an XDP program the block's part starts where the packet gets
 * XDP_PACKET_HEADROOM before it (the response header is read before the
 * program runs, which may write over it): a smaller buffer, one frame a
 * buffer (no multi-buffer), so a smaller MTU.
 */
#define OCTEP_RX_XDP_OFF	(XDP_PACKET_HEADROOM - OCTEP_SDP_RESP_HDR_LEN)
#define OCTEP_XDP_MAX_MTU	(OCTEP_RX_BUF_SIZE_AT(OCTEP_RX_XDP_OFF) - \
				 OCTEP_SDP_RESP_HDR_LEN - ETH_HLEN - VLAN_HLEN)

/*
 * Frames this short are copied into a small skb and their page goes back to
 * the pool (rx copybreak; the ethtool tunable rx-copybreak, up to the max).
 */
#define OCTEP_RX_COPYBREAK	512
#define OCTEP_RX_COPYBREAK_MAX	1024

/* A rescued ring whose first pass takes this many packets had been left. */
#define OCTEP_STALL_PKTS	32

/* Watchdog: default period, and how soon "the next tick" comes. */
#define OCTEP_RXWD_PERIOD_DEF_US 50000
#define OCTEP_RXWD_PERIOD_MAX_US 10000000
#define OCTEP_RXWD_PERIOD_MIN_US 100
#define OCTEP_RXWD_TICK_US	1000

/* ndo_tx_timeout after a queue stopped this long (the health check: 3x). */
#define OCTEP_TX_TIMEOUT	(3 * HZ)

/* Default coalescing: the appliance's packet level, no time threshold. */
#define OCTEP_RX_LEVEL_DEF	1
#define OCTEP_RX_TIME_DEF	0
#define OCTEP_RX_TIME_MAX	((u32)(OCTEP_SDP_INT_LEVELS_TIME >> 32))
/* Transmit completions: an interrupt for each, as before ethtool -C tx-*. */
#define OCTEP_TX_LEVEL_DEF	1
#define OCTEP_TX_TIME_DEF	0

/* Receive servicing (debugfs <dev>/service): the visit, or the old pass. */
enum octep_service {
	OCTEP_SERVICE_VISIT,
	OCTEP_SERVICE_PASS,
};

/* What a completing poll does after it re-enables the interrupt. */
enum octep_rearm {
	OCTEP_REARM_REREAD,	/* re-read the counts, reschedule if nonzero */
	OCTEP_REARM_NONE,	/* rely on the block latching a masked raise */
};

extern bool octep_resend;	/* module parameter "resend" */

/* oq->flags bits */
enum {
	OCTEP_OQ_TICK_REQ,	/* rule 3: this ring asked for the next tick */
	OCTEP_OQ_RESCUED,	/* the watchdog scheduled this ring unasked */
	OCTEP_OQ_REFILL,	/* buffers could not all be posted */
	OCTEP_OQ_PASS_HELD,	/* service=pass only: the old per-pass flag */
	OCTEP_OQ_COMPLETING,	/* the poll is completing: enable to come */
	OCTEP_OQ_VISITED,	/* a visit ended since the watchdog's last look */
	OCTEP_OQ_BAD,		/* a count no ring holds: left for the reset */
	OCTEP_OQ_STORM,		/* the pair's line disabled, its ring polled */
};

/**
 * enum octep_ask - who asked for a visit (the flight recorder's bits)
 * @OCTEP_ASK_IRQ: the ring pair's interrupt
 * @OCTEP_ASK_WATCHDOG: the receive watchdog: a rescue, or the tick a ring
 *	asked for
 * @OCTEP_ASK_REREAD: the re-read after the enable found work (rearm=reread)
 * @OCTEP_ASK_RESUME: the resume after a quiesce, which owes every ring one
 * @OCTEP_ASK_HEALTH: the health check's work, for a ring it found left
 * @OCTEP_ASK_STORM: the timer that polls a ring whose line is disabled
 *	for an interrupt storm (octep_storm_poll())
 */
enum octep_ask {
	OCTEP_ASK_IRQ,
	OCTEP_ASK_WATCHDOG,
	OCTEP_ASK_REREAD,
	OCTEP_ASK_RESUME,
	OCTEP_ASK_HEALTH,
	OCTEP_ASK_STORM,
};

/**
 * enum octep_visit_end - how a poll ended (the flight recorder)
 * @OCTEP_END_COMPLETED: SCHED given back: the interrupt re-enabled (or
 *	NAPI's deferral timer armed)
 * @OCTEP_END_BUDGET: the budget was used: NAPI polls again
 * @OCTEP_END_TX: transmit completions were left: NAPI polls again
 * @OCTEP_END_HANDED: the completion found a note and polls again
 * @OCTEP_END_BUSY: a busy poller or netpoll owns the ring and polls again
 * @OCTEP_END_GATED: a quiesce stopped the visit; the resume schedules it
 */
enum octep_visit_end {
	OCTEP_END_COMPLETED,
	OCTEP_END_BUDGET,
	OCTEP_END_TX,
	OCTEP_END_HANDED,
	OCTEP_END_BUSY,
	OCTEP_END_GATED,
};

/* Polls each ring's flight recorder keeps (the devlink health dump). */
#define OCTEP_VLOG_LEN		16

/**
 * struct octep_visit_rec - one NAPI poll of a ring pair, as recorded
 * @t_ns: when it ended (ktime_get_ns())
 * @count: the output count its first pass read
 * @taken: output buffers it took
 * @passes: passes it made
 * @asks: OCTEP_ASK_* bits set since the poll before; none: NAPI came back
 *	by itself (the poll before used its budget, or found a note)
 * @tick: it asked the watchdog for the next tick (rule 3)
 * @end: enum octep_visit_end
 */
struct octep_visit_rec {
	u64 t_ns;
	u32 count;
	u32 taken;
	u16 passes;
	u8 asks;
	u8 tick;
	u8 end;
};

/**
 * enum octep_note - what became of a look at a held ring (tracepoint)
 * @OCTEP_NOTE_DECLINED: a servicer found the ring held and left a note
 * @OCTEP_NOTE_HANDED: the holder found a note and polls again
 * @OCTEP_NOTE_DEFERRED: NAPI deferred the completion (its timer polls)
 * @OCTEP_NOTE_BUSY: a busy poller or netpoll owned the ring
 * @OCTEP_NOTE_REARM: the re-read after the enable rescheduled the ring
 */
enum octep_note {
	OCTEP_NOTE_DECLINED,
	OCTEP_NOTE_HANDED,
	OCTEP_NOTE_DEFERRED,
	OCTEP_NOTE_BUSY,
	OCTEP_NOTE_REARM,
};

/**
 * enum octep_wd_find - what the watchdog did with a ring it found counted
 * @OCTEP_WD_ASKED: the ring asked for this tick (rule 3); scheduled
 * @OCTEP_WD_RESCUE: nobody asked: a ring left behind, scheduled
 * @OCTEP_WD_EARLY: its interrupt was enabled less than a tick ago
 * @OCTEP_WD_REFILL: buffers to post, no packet counted; scheduled
 * @OCTEP_WD_HELD: the ring was held: a note left for the holder
 */
enum octep_wd_find {
	OCTEP_WD_ASKED,
	OCTEP_WD_RESCUE,
	OCTEP_WD_EARLY,
	OCTEP_WD_REFILL,
	OCTEP_WD_HELD,
};

/**
 * struct octep_rx_stats - counters of one output ring
 * @packets: frames handed to the stack, or taken by the XDP program
 * @bytes: their bytes
 * @drops: frames dropped (bad length or status, no skb)
 * @alloc_fail: receive buffers that could not be allocated
 * @csum_bad: frames the block found a bad checksum in
 * @visits: NAPI polls of the ring
 * @passes: passes over the ring (reads of its count)
 * @passes_max: most passes in one visit
 * @oq_bound: visits that ended with the budget spent
 * @oq_unseen: counts read before the buffers they cover were written
 * @rx_resync: the ring's position taken back from the block
 * @rxwd_stalls: watchdog ticks that found the ring left
 * @tick_requests: visits that asked the watchdog for a tick
 * @copybreak: frames copied into a small skb
 * @xdp_drop: frames the XDP program dropped (XDP_DROP)
 * @xdp_tx: frames it sent back out (XDP_TX), queued on the pair's input ring
 * @xdp_tx_err: XDP_TX frames dropped: no room in the input ring
 * @xdp_redirect: frames it redirected (XDP_REDIRECT)
 * @xdp_redirect_err: redirects that failed, the frames dropped
 * @xdp_aborted: XDP_ABORTED and unknown verdicts, the frames dropped
 * @syncp: u64_stats sequence for 32-bit readers
 *
 * Written by whoever holds the ring: the NAPI poll (SCHED held) or, with
 * service=pass, the watchdog holding OCTEP_OQ_PASS_HELD. The counters that
 * servicers turned away or the interrupt handler write are atomics in
 * struct octep_oq.
 */
struct octep_rx_stats {
	u64 packets;
	u64 bytes;
	u64 drops;
	u64 alloc_fail;
	u64 csum_bad;
	u64 visits;
	u64 passes;
	u64 passes_max;
	u64 oq_bound;
	u64 oq_unseen;
	u64 rx_resync;
	u64 rxwd_stalls;
	u64 tick_requests;
	u64 copybreak;
	u64 xdp_drop;
	u64 xdp_tx;
	u64 xdp_tx_err;
	u64 xdp_redirect;
	u64 xdp_redirect_err;
	u64 xdp_aborted;
	struct u64_stats_sync syncp;
};

/**
 * struct octep_oq - an output ring (receive)
 * @qv: the ring pair this ring belongs to
 * @desc: descriptor ring (coherent DMA)
 * @desc_dma: its bus address
 * @pages: the page posted at each descriptor, NULL when not posted
 * @pp: the page pool the buffers come from
 * @size: descriptors
 * @head: next descriptor the block fills (next to read)
 * @fill: next descriptor to post
 * @posted: buffers credited to the block and not yet taken
 * @buf_off: where in a page the block's part (response header, packet)
 *	starts: OCTEP_RX_HEADROOM, or OCTEP_RX_XDP_OFF with an XDP program
 * @buf_size: the block's part's size (R_OUT_CONTROL)
 * @dma_dir: the page pool's mapping: bidirectional with an XDP program,
 *	whose XDP_TX sends the page out as it is
 * @xdp: laid out for XDP (set at install, with the program attached then)
 * @flags: OCTEP_OQ_* bits
 * @xdp_rxq: the ring's XDP receive queue info (memory model: @pp)
 * @stats: owner-written counters
 * @oq_declined: servicers turned away because the ring was held
 * @rxwd_rescues: rings the watchdog found with packets unasked
 * @rxwd_early: such rings whose interrupt had been enabled less than a tick
 *	before: its latched interrupt may still be on its way, not a rescue
 * @resend: RESEND writes (resend=1), after SCHED was given back
 * @rearm_resched: rings rescheduled by the re-read after the enable
 *	(rearm=reread) because a count was nonzero
 * @oq_handed: completions that found a note and kept the ring for NAPI
 * @oq_deferred: completions NAPI deferred (napi_defer_hard_irqs): its
 *	timer polls the ring, the interrupt stays off meanwhile
 * @oq_busy: completions declined because a busy poller or netpoll owned
 *	the ring; it polls again before letting go
 * @rxwd_skipped: watchdog looks passed over because a visit had ended
 *	since the last look (devlink param rxwd_skip_visited)
 * @vlog: the flight recorder: the last OCTEP_VLOG_LEN polls, written by
 *	the poll (the ring's owner) only, read by the devlink health dump
 * @vlog_seq: the recorder's write sequence (seqcount: one writer)
 * @vlog_head: polls recorded; the newest is vlog[(vlog_head - 1) %
 *	OCTEP_VLOG_LEN]
 */
struct octep_oq {
	struct octep_qvec *qv;
	struct octep_sdp_oq_desc *desc;
	dma_addr_t desc_dma;
	struct page **pages;
	struct page_pool *pp;
	u32 size;
	u32 head;
	u32 fill;
	u32 posted;
	u32 buf_off;
	u32 buf_size;
	enum dma_data_direction dma_dir;
	bool xdp;
	unsigned long flags;
	struct xdp_rxq_info xdp_rxq;
	struct octep_rx_stats stats;
	atomic64_t oq_declined;
	atomic64_t rxwd_rescues;
	atomic64_t rxwd_early;
	atomic64_t resend;
	atomic64_t rearm_resched;
	atomic64_t oq_handed;
	atomic64_t oq_deferred;
	atomic64_t oq_busy;
	atomic64_t rxwd_skipped;
	struct octep_visit_rec vlog[OCTEP_VLOG_LEN];
	seqcount_t vlog_seq;
	u32 vlog_head;
};

/*
 * Gather entries a frame may use: its head and every fragment, up to what
 * the instruction's OCTEP_SDP_TX_GATHER holds; a frame with more pieces is
 * linearized.
 */
#define OCTEP_TX_SG_MAX		min(MAX_SKB_FRAGS + 1, OCTEP_SDP_TX_GATHER_MAX)

/**
 * struct octep_tx_buf - what one instruction carries
 * @skb: the frame, or NULL for an XDP frame
 * @xdpf: the XDP frame (@skb NULL): XDP_TX's or ndo_xdp_xmit()'s
 * @dma: bus address of the linear frame (@nsg == 0)
 * @len: its length
 * @nsg: gather entries used; their addresses are in the ring's gather list
 * @head: gather entry 0 is the skb's head (mapped single, not as a page)
 * @pool: @xdpf is in a page of our page pool, mapped by it (XDP_TX): not
 *	ours to unmap
 */
struct octep_tx_buf {
	struct sk_buff *skb;
	struct xdp_frame *xdpf;
	dma_addr_t dma;
	u32 len;
	u8 nsg;
	bool head;
	bool pool;
};

struct octep_tx_stats {
	u64 packets;
	u64 bytes;
	u64 drops;
	u64 completions;
	u64 stops;
	u64 wakes;
	u64 doorbells;
	u64 csum_offload;
	u64 tso;
	u64 tso_segs;
	u64 esp_gso;
	u64 esp_gso_segs;
	u64 gather;
	u64 linearize;
	u64 excess;
	u64 xdp_xmit;
	u64 xdp_xmit_err;
	struct u64_stats_sync syncp;
};

/**
 * struct octep_iq - an input ring (transmit)
 * @qv: the ring pair
 * @instr: instruction ring (coherent DMA)
 * @instr_dma: its bus address
 * @bufs: what each instruction carries
 * @sg: gather lists, OCTEP_TX_SG_MAX entries per instruction (coherent DMA)
 * @sg_dma: their bus address
 * @size: instructions
 * @head: next slot to write (ndo_start_xmit only)
 * @tail: next slot to complete (the poll only)
 * @pending: instructions written since the last doorbell
 * @stats: xmit's counters (its completions, wakes and excess stay zero),
 *	XDP's included: its frames are queued under the same xmit lock
 * @cstats: the completion's counters: completions, wakes, excess
 */
struct octep_iq {
	struct octep_qvec *qv;
	struct octep_sdp_instr *instr;
	dma_addr_t instr_dma;
	struct octep_tx_buf *bufs;
	struct octep_sdp_sg *sg;
	dma_addr_t sg_dma;
	u32 size;
	/*
	 * Above, read-mostly (set up under RTNL). Then what ndo_start_xmit
	 * writes, under the queue's xmit lock, and what the completion
	 * writes, under the pair's NAPI: each from a line of its own, so
	 * neither CPU takes the other's line for every packet.
	 */
	u32 head ____cacheline_aligned_in_smp;
	u32 pending;
	struct octep_tx_stats stats;
	u32 tail ____cacheline_aligned_in_smp;
	struct octep_tx_stats cstats;
};

/**
 * struct octep_ring_health - what the health check saw of a ring pair
 * @checked_ns: when it last looked (ktime_get_ns())
 * @out_cnt: OUT_CNTS count it read
 * @in_cnt: IN_CNTS count it read
 * @out_on: OUT_ENABLE read set
 * @in_on: IN_ENABLE read set
 * @visits: the output ring's visits when it looked
 * @iq_tail: the input ring's completion index when it looked
 * @iq_inflight: instructions in flight when it looked
 * @iq_moved_ns: when it last saw a completion, or nothing in flight
 * @finding: what it found wrong, NULL for nothing
 * @rx_stalls: receive stalls found on this ring pair
 * @tx_dead: times it found the input ring dead
 *
 * Written by the health check under RTNL; read
 * without it by the devlink dump, which may see a check half done.
 */
struct octep_ring_health {
	u64 checked_ns;
	u32 out_cnt;
	u32 in_cnt;
	bool out_on;
	bool in_on;
	u64 visits;
	u32 iq_tail;
	u32 iq_inflight;
	u64 iq_moved_ns;
	const char *finding;
	u32 rx_stalls;
	u32 tx_dead;
};

/**
 * struct octep_ring_mem - a ring pair's memory, allocated before it is used
 * @desc: output ring descriptors (coherent DMA)
 * @desc_dma: their bus address
 * @pages: the output ring's buffer pages, all NULL
 * @oq_size: output ring descriptors
 * @instr: input ring instructions (coherent DMA)
 * @instr_dma: their bus address
 * @sg: the input ring's gather lists (coherent DMA)
 * @sg_dma: their bus address
 * @bufs: what each instruction carries, all empty
 * @iq_size: input ring instructions
 *
 * What can fail in bringing a ring pair up is allocated into one of these
 * while the old rings still carry traffic (octep_rings_prepare()); the
 * rings are then swapped in by octep_oq_install() and octep_iq_install().
 */
struct octep_ring_mem {
	struct octep_sdp_oq_desc *desc;
	dma_addr_t desc_dma;
	struct page **pages;
	u32 oq_size;
	struct octep_sdp_instr *instr;
	dma_addr_t instr_dma;
	struct octep_sdp_sg *sg;
	dma_addr_t sg_dma;
	struct octep_tx_buf *bufs;
	u32 iq_size;
};

/**
 * struct octep_qvec - a ring pair, its interrupt and its NAPI context
 * @oct: the device
 * @idx: ring number
 * @napi: the NAPI context; its SCHED bit is the ring's flag (rx.c)
 * @oq: output ring
 * @iq: input ring
 * @oq_levels: OUT_INT_LEVELS without the enable bit
 * @iq_levels: IN_INT_LEVELS without the enable bit
 * @enabled_ns: when a poll last re-enabled the interrupt (ktime_get_ns())
 * @asks: OCTEP_ASK_* bits: who asked for a visit since the poll took them
 *	(octep_qv_schedule() sets, octep_napi_poll() takes)
 * @inside: polls of this pair past their entry and not yet returned; the
 *	quiesce waits for zero (octep_poll_enter())
 * @irq: Linux IRQ
 * @irq_requested: @irq is requested
 * @irq_armed: the enable bit as we last wrote it (octep_regs_write_levels())
 * @irq_off_hits: interrupts that came while @irq_armed was clear, since it
 *	was last set; written by the handler and reset at the enable, both
 *	without a lock: a lost update miscounts one interrupt
 * @irq_empty: polls in a row an interrupt asked for that found nothing
 *	to do (octep_storm_count())
 * @storm_until: when a line disabled for a storm is tried again (jiffies)
 * @storm_timer: polls the ring pair while its line is disabled
 * @health: what the health check saw (health.c)
 * @name: IRQ name
 */
struct octep_qvec {
	struct octep_dev *oct;
	unsigned int idx;
	struct napi_struct napi;
	struct octep_oq oq;
	struct octep_iq iq;
	u64 oq_levels;
	u64 iq_levels;
	u64 enabled_ns;
	unsigned long asks;
	atomic_t inside;
	int irq;
	bool irq_requested;
	bool irq_armed;
	u32 irq_off_hits;
	u32 irq_empty;
	unsigned long storm_until;
	struct timer_list storm_timer;
	struct octep_ring_health health;
	char name[IFNAMSIZ + 16];
} ____cacheline_aligned_in_smp;

/**
 * struct octep_dev - one SDP block and its netdev (devlink priv)
 * @dev: the device we are bound to (aux or PCI)
 * @sdp: register accessors, IRQs, DMA device
 * @netdev: our netdev
 * @devlink: our devlink instance
 * @max_rings: ring pairs the block has
 * @num_rings: ring pairs in use (ethtool -L)
 * @rx_copybreak: ethtool rx-copybreak; read by the polls without a lock
 * @up: the datapath is set up (rings allocated, NAPIs added)
 * @quiesced: servicing stopped by octep_quiesce() (no poll inside, the
 *	interrupts off, the watchdog stopped); also the gate: a poll that
 *	finds it set leaves the rings alone. Written under RTNL, read by the
 *	polls without it (octep_poll_enter())
 * @napi_off: the NAPIs are disabled as well (a datapath just set up, or
 *	one about to be freed: octep_tx_stop())
 * @ipsec: state of the IPsec offload (xfrm*.c), NULL without it
 * @rx_ring_size: ethtool -G rx
 * @tx_ring_size: ethtool -G tx
 * @rx_level: OUT_INT_LEVELS packet level (ethtool -C rx-frames)
 * @rx_time: OUT_INT_LEVELS time threshold (ethtool -C rx-usecs)
 * @tx_level: IN_INT_LEVELS packet level (ethtool -C tx-frames)
 * @tx_time: IN_INT_LEVELS time threshold (ethtool -C tx-usecs)
 * @qv: ring pairs; statistics survive ring reallocation
 * @wd_timer: the receive watchdog (watchdog.c)
 * @wd_lock: serializes arming @wd_timer and @wd_on
 * @wd_on: the watchdog may be armed
 * @rxwd_period_us: devlink param rxwd_period_us (0: off)
 * @rxwd_skip_visited: devlink param rxwd_skip_visited
 * @rxwd_ticks: watchdog expiries
 * @rxwd_runs: expiries that found packets
 * @quiesce_cycles: quiesces done
 * @quiesce_waits: quiesces that had to wait for a poll to leave
 * @quiesce_wait_max_ns: longest such wait
 * @health_work: the periodic health check of the rings (health.c)
 * @reset_work: recovers the rings the check or a timeout found dead
 * @reset_flags: OCTEP_RESET_* bits: what @reset_work is to do
 * @rescue_mask: ring pairs @reset_work is to schedule a visit of
 * @off_bus: the device read all ones when a reset was due: the reset waits
 *	until it answers again (health.c); under RTNL
 * @rx_stall: the devlink health reporter "rx_stall"
 * @report_lock: makes a report and octep_health_reports() exclusive
 * @reporting: @rx_stall may report: devlink is registered; under
 *	@report_lock
 * @tx_timeouts: transmit rings found dead (ndo_tx_timeout, or the check)
 * @rx_stall_reports: receive stalls reported to devlink
 * @ring_resets: datapath resets done to recover
 * @ring_rescues: visits scheduled to recover a left ring pair
 * @reconf_refused: reconfigurations refused because the new rings could
 *	not be prepared (the old ones kept); under RTNL
 * @rx_bad_ext: received buffers whose checksum result the contract does
 *	not define (taken as "not checked")
 * @rx_bad_count: output counts larger than the ring (the rings reset)
 * @tx_bad_count: input counts larger than the ring (the rings reset)
 * @irq_storms: ring pair lines disabled for interrupts the block sent
 *	while they were off (octep_storm_poll())
 * @xdp_prog: the attached XDP program, NULL for none; written under RTNL
 *	(a change to or from NULL only with the polls quiesced, as the rings
 *	are laid out for it), read by the polls
 * @rss_key: the RSS hash key (ethtool -X hkey); under RTNL
 * @rss_indir: the RSS indirection table, a ring per entry; under RTNL
 * @service: enum octep_service (debugfs "service", for the tests);
 *	changed under RTNL, only while @up is false
 * @rearm: enum octep_rearm (debugfs "rearm", for the tests); changed at
 *	any time, read once by each completing poll
 * @dbg: the device's debugfs directory, octep_ipsec/<device>
 */
struct octep_dev {
	/*
	 * Line 0, read-mostly: what every poll and xmit reads (sdp, netdev,
	 * num_rings, rx_copybreak, the gate, ipsec, service, rearm), written
	 * only under RTNL, at probe and remove, or (rearm) by a test's
	 * debugfs write. No ring's NAPI and nothing a ring writes shares it.
	 */
	struct device *dev;
	struct octep_sdp_dev *sdp;
	struct net_device *netdev;
	struct devlink *devlink;
	unsigned int max_rings;
	unsigned int num_rings;
	u32 rx_copybreak;
	bool up;
	bool quiesced;
	bool napi_off;
	void *ipsec;
	enum octep_service service;
	enum octep_rearm rearm;

	u32 rx_ring_size;
	u32 tx_ring_size;
	u32 rx_level;
	u32 rx_time;
	u32 tx_level;
	u32 tx_time;
	/* Each ring pair from a line of its own (the qvec's alignment). */
	struct octep_qvec qv[OCTEP_SDP_MAX_RINGS];

	struct hrtimer wd_timer;
	spinlock_t wd_lock;	/* arming of wd_timer, wd_on */
	bool wd_on;
	u32 rxwd_period_us;
	bool rxwd_skip_visited;
	atomic64_t rxwd_ticks;
	atomic64_t rxwd_runs;

	u64 quiesce_cycles;
	u64 quiesce_waits;
	u64 quiesce_wait_max_ns;

	struct delayed_work health_work;
	struct work_struct reset_work;
	unsigned long reset_flags;
	atomic_long_t rescue_mask;
	bool off_bus;
	struct devlink_health_reporter *rx_stall;
	struct mutex report_lock;	/* a report against reporting */
	bool reporting;
	atomic64_t tx_timeouts;
	atomic64_t rx_stall_reports;
	atomic64_t ring_resets;
	atomic64_t ring_rescues;
	u64 reconf_refused;
	atomic64_t rx_bad_ext;
	atomic64_t rx_bad_count;
	atomic64_t tx_bad_count;
	atomic64_t irq_storms;

	struct bpf_prog *xdp_prog;

	u8 rss_key[OCTEP_SDP_RSS_KEY_SIZE];
	u8 rss_indir[OCTEP_SDP_RSS_INDIR_SIZE];

	struct dentry *dbg;
};

/* Register access: every access goes through the block's ops. */
static inline u64 octep_rd64(struct octep_dev *oct, u32 off)
{
	return oct->sdp->ops->read64(oct->sdp, off);
}

/*
 * A ring's OUT_CNTS or IN_CNTS count. All ones is a block gone (removed,
 * or off the bus), which counts nothing; anything else past the ring is
 * the block's error (octep_ring_bad()).
 */
static inline u64 octep_cnt_rd(struct octep_dev *oct, u32 off)
{
	u64 v = octep_rd64(oct, off);

	return v == U64_MAX ? 0 : v & OCTEP_SDP_CNTS_COUNT;
}

static inline void octep_wr64(struct octep_dev *oct, u32 off, u64 val)
{
	oct->sdp->ops->write64(oct->sdp, off, val);
}

static inline struct octep_dev *octep_from_netdev(struct net_device *netdev)
{
	return *(struct octep_dev **)netdev_priv(netdev);
}

/* main.c */
struct octep_dev *octep_core_probe(struct device *dev,
				   struct octep_sdp_dev *sdp);
void octep_core_remove(struct octep_dev *oct);

/* regs.c */
void octep_regs_oq_setup(struct octep_qvec *qv);
void octep_regs_iq_setup(struct octep_qvec *qv);
void octep_regs_ring_disable(struct octep_qvec *qv);
void octep_regs_write_levels(struct octep_qvec *qv, bool enable);
u64 octep_regs_oq_levels(u32 level, u32 time);

/* netdev.c */
int octep_netdev_create(struct octep_dev *oct);
void octep_netdev_destroy(struct octep_dev *oct);
void octep_netdev_suspend(struct octep_dev *oct);
int octep_netdev_resume(struct octep_dev *oct);
void octep_xdp_features(struct octep_dev *oct);
void octep_quiesce(struct octep_dev *oct);
void octep_resume(struct octep_dev *oct);
int octep_reconfigure(struct octep_dev *oct, unsigned int rings,
		      u32 rx_size, u32 tx_size);
int octep_reconfigure_xdp(struct octep_dev *oct, unsigned int rings,
			  u32 rx_size, u32 tx_size, struct bpf_prog *prog);
bool octep_qv_schedule(struct octep_qvec *qv, enum octep_ask ask);
void octep_storm_poll(struct octep_qvec *qv);
void octep_storm_tick(struct timer_list *t);
void octep_storm_count(struct octep_qvec *qv, bool empty);

/*
 * The flight recorder's "who asked": set before the napi_schedule_prep() it
 * goes with, taken by the next poll (octep_napi_poll()). An ask that races
 * a poll's start is credited to the poll after it, which the note it left
 * brings; the record is a diagnosis, not a count.
 */
static inline void octep_visit_ask(struct octep_qvec *qv, enum octep_ask ask)
{
	if (!test_bit(ask, &qv->asks))
		set_bit(ask, &qv->asks);
}

void octep_oq_vlog_read(struct octep_oq *oq, struct octep_visit_rec *recs,
			unsigned int *n);

/* main.c: fault injection (debugfs octep_ipsec/fail_*), for the tests */
#ifdef CONFIG_FAULT_INJECTION
bool octep_fail_ring_alloc(void);
bool octep_fail_refill(void);
#else
static inline bool octep_fail_ring_alloc(void) { return false; }
static inline bool octep_fail_refill(void) { return false; }
#endif

/* rx.c */
int octep_oq_mem_alloc(struct octep_qvec *qv, struct octep_ring_mem *m,
		       u32 size);
void octep_oq_mem_free(struct octep_dev *oct, struct octep_ring_mem *m);
int octep_oq_install(struct octep_qvec *qv, struct octep_ring_mem *m);
void octep_oq_free(struct octep_qvec *qv);
u32 octep_oq_refill(struct octep_oq *oq);
int octep_napi_poll(struct napi_struct *napi, int budget);
bool octep_pass_watchdog_ring(struct octep_qvec *qv);

/* tx.c */
int octep_iq_mem_alloc(struct octep_dev *oct, struct octep_ring_mem *m,
		       u32 size);
void octep_iq_mem_free(struct octep_dev *oct, struct octep_ring_mem *m);
void octep_iq_install(struct octep_qvec *qv, struct octep_ring_mem *m);
void octep_iq_free(struct octep_qvec *qv);
bool octep_iq_reap(struct octep_iq *iq, int budget);
netdev_tx_t octep_start_xmit(struct sk_buff *skb, struct net_device *netdev);
netdev_features_t octep_features_check(struct sk_buff *skb,
				       struct net_device *netdev,
				       netdev_features_t features);
bool octep_xdp_tx(struct octep_qvec *qv, struct xdp_frame *xdpf);
void octep_xdp_tx_flush(struct octep_qvec *qv);
int octep_xdp_xmit(struct net_device *netdev, int n, struct xdp_frame **frames,
		   u32 flags);

/* watchdog.c */
void octep_wd_init(struct octep_dev *oct);
void octep_wd_start(struct octep_dev *oct);
void octep_wd_stop(struct octep_dev *oct);
void octep_wd_request_tick(struct octep_oq *oq);
void octep_wd_set_period(struct octep_dev *oct, u32 period_us);
void octep_wd_set_service(struct octep_dev *oct, enum octep_service service);

/* ethtool.c */
extern const struct ethtool_ops octep_ethtool_ops;
extern const struct netdev_stat_ops octep_stat_ops;
void octep_get_stats64(struct net_device *netdev,
		       struct rtnl_link_stats64 *s);

/* rss.c */
void octep_rss_init(struct octep_dev *oct);
void octep_rss_follow_rings(struct octep_dev *oct);
void octep_rss_write(struct octep_dev *oct);
void octep_rss_disable(struct octep_dev *oct);

/* health.c */
enum {
	OCTEP_RESET_FULL,	/* reset_flags: datapath down and up */
};

int octep_health_init(struct octep_dev *oct);
void octep_health_fini(struct octep_dev *oct);
void octep_health_start(struct octep_dev *oct);
void octep_health_reports(struct octep_dev *oct, bool on);
void octep_health_cancel(struct octep_dev *oct);
void octep_tx_timeout(struct net_device *netdev, unsigned int txqueue);
void octep_ring_bad(struct octep_qvec *qv, atomic64_t *ctr, const char *reg,
		    u64 cnt);

/* devlink.c */
struct octep_dev *octep_devlink_alloc(struct device *dev);
void octep_devlink_free(struct octep_dev *oct);
int octep_devlink_register(struct octep_dev *oct);
void octep_devlink_unregister(struct octep_dev *oct);

/*
 * IPsec offload (ipsec.h, xfrm_rxtx.c): the datapath calls it at two places,
 * octep_ipsec_tx_flags() in transmit and octep_ipsec_rx_xfrm() in receive
 * for a packet whose ext word has a nonzero OCTEP_SDP_RX_IPSEC_STATUS.
 */
#include "ipsec.h"

#endif /* _OCTEP_IPSEC_H */
