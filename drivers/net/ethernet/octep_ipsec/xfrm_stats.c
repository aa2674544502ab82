// SPDX-License-Identifier: GPL-2.0
/*
 * octep_ipsec: the block's IPsec counters: per-state ones read back into
 * the states (packet offload), and the device's in ethtool -S and devlink.
 */
#include <linux/ethtool.h>
#include <net/xfrm.h>

#include "octep_ipsec.h"
#include "ipsec.h"
#include "xfrm.h"

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
	[OCTEP_IPSEC_RX_BACKSTOP] = "ipsec_rx_backstop",
};

/* Device-wide names after the per-state counters: the mailbox's. */
static const char * const octep_mbox_cnt_names[] = {
	"mbox_requests", "mbox_timeouts", "mbox_errors", "mbox_stray",
	"ipsec_states", "ipsec_del_pending", "ipsec_orphans",
	"ipsec_orphans_total", "ipsec_resyncs", "ipsec_resync_freed",
};

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

/*
 * Store the block's counts of handle @h in its entry, if that is still
 * @sa (with @sa NULL: whatever packet-offload entry owns @h), and check
 * the limits of its state. False when no entry owns @h while an add is
 * under way: the counts may be that add's entry's, reported before the
 * add took the handle.
 */
static bool octep_ipsec_stats_store(struct octep_ipsec *ips, u32 h,
				    struct octep_ipsec_sa *sa, u64 packets,
				    u64 bytes, u64 seq)
{
	struct octep_ipsec_sa *cur;
	struct xfrm_state *x = NULL;
	bool known = true;
	int inflight;

	spin_lock_bh(&ips->lock);
	/* Only compared: @sa may be freed unless it is still there. */
	cur = xa_load(&ips->owned, h);
	if (!cur) {
		inflight = atomic_read(&ips->adds_inflight);
		/* Pairs with octep_ipsec_own(): owned, then the add's end. */
		smp_rmb();
		cur = xa_load(&ips->owned, h);
		known = cur || !inflight;
	}
	if (cur && (sa ? cur == sa :
		    !cur->pol && cur->type == XFRM_DEV_OFFLOAD_PACKET)) {
		cur->hw.packets = cpu_to_le64(packets);
		cur->hw.bytes = cpu_to_le64(bytes);
		cur->hw.seq = cpu_to_le64(seq);
		/*
		 * Live, the state is not freed yet (state_free marks it dead
		 * under this lock); a zero count means it is on its way out,
		 * with no lifetime left to check.
		 */
		if (cur->where == OCTEP_SA_LIVE &&
		    octep_ipsec_has_limits(cur->x) &&
		    refcount_inc_not_zero(&cur->x->refcnt))
			x = cur->x;
	}
	spin_unlock_bh(&ips->lock);
	if (x) {
		octep_ipsec_check_expire(x);
		xfrm_state_put(x);
	}
	return known;
}

/* Is there a live packet-offload state to read counters for? */
static bool octep_ipsec_any_packet(struct octep_ipsec *ips)
{
	struct octep_ipsec_sa *sa;
	unsigned long idx;
	bool any = false;

	spin_lock_bh(&ips->lock);
	xa_for_each(&ips->owned, idx, sa) {
		if (sa->where == OCTEP_SA_LIVE && !sa->pol &&
		    sa->type == XFRM_DEV_OFFLOAD_PACKET) {
			any = true;
			break;
		}
	}
	spin_unlock_bh(&ips->lock);
	return any;
}

/*
 * Without FLOW_STATS_MANY: one FLOW_STATS a packet-offload state. Walks
 * ips->owned by handle, so a pass is linear in the states, and takes no
 * lock across a request. Return: whether there was any such state.
 */
static bool octep_ipsec_stats_each(struct octep_ipsec *ips)
{
	struct octep_sdp_mbox_flow_stats st;
	struct octep_ipsec_sa *sa;
	unsigned long idx = 0;
	bool any = false;
	__le64 req;

	for (;; idx++) {
		spin_lock_bh(&ips->lock);
		xa_for_each_start(&ips->owned, idx, sa, idx)
			if (sa->where == OCTEP_SA_LIVE && !sa->pol &&
			    sa->type == XFRM_DEV_OFFLOAD_PACKET)
				break;
		spin_unlock_bh(&ips->lock);
		if (!sa)
			break;
		any = true;
		req = cpu_to_le64(idx);
		if (octep_mbox_call(&ips->mbox, OCTEP_SDP_MBOX_FLOW_STATS, &req,
				    sizeof(req), &st, sizeof(st)))
			continue;
		octep_ipsec_stats_store(ips, idx, sa, le64_to_cpu(st.packets),
					le64_to_cpu(st.bytes),
					le64_to_cpu(st.seq));
	}
	return any;
}

/*
 * With FLOW_STATS_MANY: the block reports the states whose counts changed
 * since it last did, a few to a request; idle states cost nothing. The
 * block takes them as reported when it answers, so a pass that loses a
 * response, or that may have dropped the counts of an add's entry before
 * the add took its handle, has the next pass ask for every state
 * (OCTEP_SDP_STATS_ALL). Return: whether there was any state to read.
 */
static bool octep_ipsec_stats_many(struct octep_ipsec *ips)
{
	__le64 resp[OCTEP_SDP_MBOX_MAX_BODY - 1];
	const struct octep_sdp_mbox_stats_rec *rec = (void *)&resp[2];
	u64 next, flags;
	unsigned int i, n;
	u32 cursor = 0;
	__le64 req[2];

	if (!octep_ipsec_any_packet(ips))
		return false;
	flags = ips->stats_all ? OCTEP_SDP_STATS_ALL : 0;
	ips->stats_all = false;
	do {
		req[0] = cpu_to_le64(cursor);
		req[1] = cpu_to_le64(flags);
		/*
		 * A response shorter than the count it gives leaves the rest
		 * as it was: zeros, not the last response's records or the
		 * stack's.
		 */
		memset(resp, 0, sizeof(resp));
		if (octep_mbox_call(&ips->mbox, OCTEP_SDP_MBOX_FLOW_STATS_MANY,
				    req, sizeof(req), resp, sizeof(resp))) {
			ips->stats_all = true;
			break;
		}
		next = le64_to_cpu(resp[0]);
		n = min_t(u64, le64_to_cpu(resp[1]),
			  OCTEP_SDP_MBOX_STATS_MANY_MAX);
		for (i = 0; i < n; i++)
			if (!octep_ipsec_stats_store(ips,
						     le64_to_cpu(rec[i].handle),
						     NULL,
						     le64_to_cpu(rec[i].packets),
						     le64_to_cpu(rec[i].bytes),
						     le64_to_cpu(rec[i].seq)))
				ips->stats_all = true;
		/* A cursor that does not move on would never end the pass. */
		if (!(next & OCTEP_SDP_MBOX_LIST_DONE) && (u32)next <= cursor) {
			ips->stats_all = true;
			break;
		}
		cursor = (u32)next;
	} while (!(next & OCTEP_SDP_MBOX_LIST_DONE));
	return true;
}

/**
 * octep_ipsec_stats_work() - read the block's counters of packet-offload states
 * @work: ips->stats_work
 *
 * Every OCTEP_IPSEC_STATS_MS while a packet-offload state (or anything
 * the block can drop what we send for) is offloaded. An entry is looked up
 * again before its counters are written (it is freed only after it leaves
 * ips->owned). Also checks the limits of the states read that have them.
 */
void octep_ipsec_stats_work(struct work_struct *work)
{
	struct octep_ipsec *ips = container_of(to_delayed_work(work),
					       struct octep_ipsec, stats_work);
	bool again = false;

	/* While anything offloaded can make the block drop what we send. */
	if (octep_ipsec_tx_mib(ips) &&
	    (READ_ONCE(ips->n_out_pols) || !list_empty_careful(&ips->sas)))
		again = true;
	if (octep_ipsec_has(ips, OCTEP_SDP_FEAT_STATS_MANY))
		again |= octep_ipsec_stats_many(ips);
	else
		again |= octep_ipsec_stats_each(ips);
	if (again)
		queue_delayed_work(system_wq, &ips->stats_work,
				   msecs_to_jiffies(OCTEP_IPSEC_STATS_MS));
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

/**
 * octep_ipsec_update_stats() - xdo_dev_state_update_stats
 * @x: a packet-offload state
 *
 * The stack does not count; the block does, as the stack would
 * (xfrm_output_one(), xfrm_input()). The counts are at most
 * OCTEP_IPSEC_STATS_MS old. Replay and ICV drops are charged to the state
 * as they happen: octep_ipsec_rx_account(). Also notices moved NAT-T
 * ports, for every offload type.
 *
 * Context: atomic.
 */
void octep_ipsec_update_stats(struct xfrm_state *x)
{
	struct octep_ipsec_sa *sa = (void *)x->xso.offload_handle;
	u64 packets, bytes, seq;

	/*
	 * The stack calls this (under x->lock) from the timer that
	 * xfrm_state_update() starts: a NAT-T port change is seen here.
	 */
	if (sa)
		octep_ipsec_encap_stale(sa, x);
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
