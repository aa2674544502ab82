// SPDX-License-Identifier: GPL-2.0
/*
 * octep_ipsec: ethtool - statistics (-S), coalescing (-c/-C), rings
 * (-g/-G), channels (-l/-L), RSS (-x/-X; the block's side in rss.c), and
 * the per-queue statistics of the netdev netlink family (qstats). Every
 * change but RSS's is applied through a quiesce.
 */
#include <linux/ethtool.h>
#include <linux/log2.h>
#include <linux/rtnetlink.h>
#include <net/netdev_queues.h>

#include "octep_ipsec.h"

/* The values octep_rx_vals() reads from an output ring. */
enum octep_rx_stat {
	OCTEP_RXS_PACKETS,
	OCTEP_RXS_BYTES,
	OCTEP_RXS_DROPS,
	OCTEP_RXS_ALLOC_FAIL,
	OCTEP_RXS_CSUM_BAD,
	OCTEP_RXS_VISITS,
	OCTEP_RXS_PASSES,
	OCTEP_RXS_PASSES_MAX,
	OCTEP_RXS_OQ_DECLINED,
	OCTEP_RXS_OQ_HANDED,
	OCTEP_RXS_OQ_BOUND,
	OCTEP_RXS_OQ_UNSEEN,
	OCTEP_RXS_RESYNC,
	OCTEP_RXS_RXWD_RESCUES,
	OCTEP_RXS_RXWD_STALLS,
	OCTEP_RXS_TICK_REQUESTS,
	OCTEP_RXS_RESEND,
	OCTEP_RXS_RXWD_EARLY,
	OCTEP_RXS_REARM_RESCHED,
	OCTEP_RXS_OQ_DEFERRED,
	OCTEP_RXS_OQ_BUSY,
	OCTEP_RXS_COPYBREAK,
	OCTEP_RXS_RXWD_SKIPPED,
	OCTEP_RXS_XDP_DROP,
	OCTEP_RXS_XDP_TX,
	OCTEP_RXS_XDP_TX_ERR,
	OCTEP_RXS_XDP_REDIRECT,
	OCTEP_RXS_XDP_REDIRECT_ERR,
	OCTEP_RXS_XDP_ABORTED,
	OCTEP_N_RX
};

/* The values octep_tx_vals() reads from an input ring. */
enum octep_tx_stat {
	OCTEP_TXS_PACKETS,
	OCTEP_TXS_BYTES,
	OCTEP_TXS_DROPS,
	OCTEP_TXS_COMPLETIONS,
	OCTEP_TXS_STOPS,
	OCTEP_TXS_WAKES,
	OCTEP_TXS_DOORBELLS,
	OCTEP_TXS_CSUM_OFFLOAD,
	OCTEP_TXS_TSO,
	OCTEP_TXS_TSO_SEGS,
	OCTEP_TXS_ESP_GSO,
	OCTEP_TXS_ESP_GSO_SEGS,
	OCTEP_TXS_GATHER,
	OCTEP_TXS_LINEARIZE,
	OCTEP_TXS_EXCESS,
	OCTEP_TXS_XDP_XMIT,
	OCTEP_TXS_XDP_XMIT_ERR,
	OCTEP_N_TX
};

/**
 * struct octep_stat_name - how ethtool -S shows a ring counter
 * @ring: per ring, as rx<N>_@ring or tx<N>_@ring; NULL: not per ring
 * @total: the sum over the rings; NULL: no total
 *
 * ethtool -S holds only what no standard interface reports. Packets and
 * bytes are ip -s link's (ndo_get_stats64) and, per queue, qstats' (as are
 * alloc_fail, csum_bad, stops, wakes, csum_offload, tso, tso_segs): no
 * names. The drops are ip -s link's "dropped", but no standard counter
 * has them per queue: per ring only. A ring pair's interrupts are its
 * vector's line in /proc/interrupts (<netdev>-rxtx-<N>).
 */
struct octep_stat_name {
	const char *ring;
	const char *total;
};

static const struct octep_stat_name octep_rx_names[OCTEP_N_RX] = {
	[OCTEP_RXS_DROPS]		= { "drops", NULL },
	[OCTEP_RXS_VISITS]		= { "visits", "visits" },
	[OCTEP_RXS_PASSES]		= { "passes", "passes" },
	/* The total is the rings' maximum (octep_get_ethtool_stats()). */
	[OCTEP_RXS_PASSES_MAX]		= { "passes_max", "passes_max" },
	[OCTEP_RXS_OQ_DECLINED]		= { "oq_declined", "oq_declined" },
	[OCTEP_RXS_OQ_HANDED]		= { "oq_handed", "oq_handed" },
	[OCTEP_RXS_OQ_BOUND]		= { "oq_bound", "oq_bound" },
	[OCTEP_RXS_OQ_UNSEEN]		= { "oq_unseen", "oq_unseen" },
	[OCTEP_RXS_RESYNC]		= { "rx_resync", "rx_resync" },
	[OCTEP_RXS_RXWD_RESCUES]	= { "rxwd_rescues", "rxwd_rescues" },
	[OCTEP_RXS_RXWD_STALLS]		= { "rxwd_stalls", "rxwd_stalls" },
	[OCTEP_RXS_TICK_REQUESTS]	= { "tick_requests", "tick_requests" },
	[OCTEP_RXS_RESEND]		= { "resend", "resend" },
	[OCTEP_RXS_RXWD_EARLY]		= { "rxwd_early", "rxwd_early" },
	[OCTEP_RXS_REARM_RESCHED]	= { "oq_rearm_resched", "oq_rearm_resched" },
	[OCTEP_RXS_OQ_DEFERRED]		= { "oq_deferred", "oq_deferred" },
	[OCTEP_RXS_OQ_BUSY]		= { "oq_busy", "oq_busy" },
	[OCTEP_RXS_COPYBREAK]		= { "copybreak", "rx_copybreak" },
	[OCTEP_RXS_RXWD_SKIPPED]	= { "rxwd_skipped", "rxwd_skipped" },
	/* No standard counter has XDP's verdicts: per ring and totals. */
	[OCTEP_RXS_XDP_DROP]		= { "xdp_drop", "xdp_drop" },
	[OCTEP_RXS_XDP_TX]		= { "xdp_tx", "xdp_tx" },
	[OCTEP_RXS_XDP_TX_ERR]		= { "xdp_tx_err", "xdp_tx_err" },
	[OCTEP_RXS_XDP_REDIRECT]	= { "xdp_redirect", "xdp_redirect" },
	[OCTEP_RXS_XDP_REDIRECT_ERR]	= { "xdp_redirect_err", "xdp_redirect_err" },
	[OCTEP_RXS_XDP_ABORTED]		= { "xdp_aborted", "xdp_aborted" },
};

static const struct octep_stat_name octep_tx_names[OCTEP_N_TX] = {
	[OCTEP_TXS_DROPS]	= { "drops", NULL },
	[OCTEP_TXS_COMPLETIONS]	= { "completions", "tx_completions" },
	[OCTEP_TXS_DOORBELLS]	= { "doorbells", "tx_doorbells" },
	/* Of the TSO frames, those the block also encrypted. */
	[OCTEP_TXS_ESP_GSO]	= { "esp_gso", "tx_esp_gso" },
	[OCTEP_TXS_ESP_GSO_SEGS] = { "esp_gso_segs", "tx_esp_gso_segs" },
	[OCTEP_TXS_GATHER]	= { "gather", "tx_gather" },
	[OCTEP_TXS_LINEARIZE]	= { "linearize", "tx_linearize" },
	[OCTEP_TXS_EXCESS]	= { "excess", "tx_excess" },
	/* XDP_TX's and ndo_xdp_xmit's frames, queued or not. */
	[OCTEP_TXS_XDP_XMIT]	= { "xdp_xmit", "tx_xdp_xmit" },
	[OCTEP_TXS_XDP_XMIT_ERR] = { "xdp_xmit_err", "tx_xdp_xmit_err" },
};

static const char * const octep_dev_names[] = {
	"rxwd_ticks", "rxwd_runs",
	"quiesce_cycles", "quiesce_waits", "quiesce_wait_max_us",
	"tx_timeouts", "rx_stall_reports", "ring_resets", "ring_rescues",
	"reconf_refused", "rx_bad_ext", "rx_bad_count", "tx_bad_count",
	"irq_storms",
};

#define OCTEP_N_DEV	ARRAY_SIZE(octep_dev_names)

/* The names of @t[0..@n) ethtool -S shows per ring (@ring) or as totals. */
static unsigned int octep_stat_names(const struct octep_stat_name *t,
				     unsigned int n, bool ring)
{
	unsigned int i, c = 0;

	for (i = 0; i < n; i++)
		c += !!(ring ? t[i].ring : t[i].total);
	return c;
}

/* The totals ethtool -S shows: ring counters' and the device's own. */
static unsigned int octep_n_totals(void)
{
	return octep_stat_names(octep_rx_names, OCTEP_N_RX, false) +
	       octep_stat_names(octep_tx_names, OCTEP_N_TX, false) +
	       OCTEP_N_DEV;
}

static void octep_rx_vals(struct octep_oq *oq, u64 *v)
{
	const struct octep_rx_stats *s = &oq->stats;
	unsigned int start;

	do {
		start = u64_stats_fetch_begin(&s->syncp);
		v[OCTEP_RXS_PACKETS] = s->packets;
		v[OCTEP_RXS_BYTES] = s->bytes;
		v[OCTEP_RXS_DROPS] = s->drops;
		v[OCTEP_RXS_ALLOC_FAIL] = s->alloc_fail;
		v[OCTEP_RXS_CSUM_BAD] = s->csum_bad;
		v[OCTEP_RXS_VISITS] = s->visits;
		v[OCTEP_RXS_PASSES] = s->passes;
		v[OCTEP_RXS_PASSES_MAX] = s->passes_max;
		v[OCTEP_RXS_OQ_BOUND] = s->oq_bound;
		v[OCTEP_RXS_OQ_UNSEEN] = s->oq_unseen;
		v[OCTEP_RXS_RESYNC] = s->rx_resync;
		v[OCTEP_RXS_RXWD_STALLS] = s->rxwd_stalls;
		v[OCTEP_RXS_TICK_REQUESTS] = s->tick_requests;
		v[OCTEP_RXS_COPYBREAK] = s->copybreak;
		v[OCTEP_RXS_XDP_DROP] = s->xdp_drop;
		v[OCTEP_RXS_XDP_TX] = s->xdp_tx;
		v[OCTEP_RXS_XDP_TX_ERR] = s->xdp_tx_err;
		v[OCTEP_RXS_XDP_REDIRECT] = s->xdp_redirect;
		v[OCTEP_RXS_XDP_REDIRECT_ERR] = s->xdp_redirect_err;
		v[OCTEP_RXS_XDP_ABORTED] = s->xdp_aborted;
	} while (u64_stats_fetch_retry(&s->syncp, start));
	v[OCTEP_RXS_OQ_DECLINED] = atomic64_read(&oq->oq_declined);
	v[OCTEP_RXS_OQ_HANDED] = atomic64_read(&oq->oq_handed);
	v[OCTEP_RXS_RXWD_RESCUES] = atomic64_read(&oq->rxwd_rescues);
	v[OCTEP_RXS_RESEND] = atomic64_read(&oq->resend);
	v[OCTEP_RXS_RXWD_EARLY] = atomic64_read(&oq->rxwd_early);
	v[OCTEP_RXS_REARM_RESCHED] = atomic64_read(&oq->rearm_resched);
	v[OCTEP_RXS_OQ_DEFERRED] = atomic64_read(&oq->oq_deferred);
	v[OCTEP_RXS_OQ_BUSY] = atomic64_read(&oq->oq_busy);
	v[OCTEP_RXS_RXWD_SKIPPED] = atomic64_read(&oq->rxwd_skipped);
}

static void octep_tx_vals(struct octep_iq *iq, u64 *v)
{
	const struct octep_tx_stats *s = &iq->stats, *c = &iq->cstats;
	unsigned int start;

	do {
		start = u64_stats_fetch_begin(&s->syncp);
		v[OCTEP_TXS_PACKETS] = s->packets;
		v[OCTEP_TXS_BYTES] = s->bytes;
		v[OCTEP_TXS_DROPS] = s->drops;
		v[OCTEP_TXS_STOPS] = s->stops;
		v[OCTEP_TXS_DOORBELLS] = s->doorbells;
		v[OCTEP_TXS_CSUM_OFFLOAD] = s->csum_offload;
		v[OCTEP_TXS_TSO] = s->tso;
		v[OCTEP_TXS_TSO_SEGS] = s->tso_segs;
		v[OCTEP_TXS_ESP_GSO] = s->esp_gso;
		v[OCTEP_TXS_ESP_GSO_SEGS] = s->esp_gso_segs;
		v[OCTEP_TXS_GATHER] = s->gather;
		v[OCTEP_TXS_LINEARIZE] = s->linearize;
		v[OCTEP_TXS_XDP_XMIT] = s->xdp_xmit;
		v[OCTEP_TXS_XDP_XMIT_ERR] = s->xdp_xmit_err;
	} while (u64_stats_fetch_retry(&s->syncp, start));
	do {
		start = u64_stats_fetch_begin(&c->syncp);
		v[OCTEP_TXS_COMPLETIONS] = c->completions;
		v[OCTEP_TXS_WAKES] = c->wakes;
		v[OCTEP_TXS_EXCESS] = c->excess;
	} while (u64_stats_fetch_retry(&c->syncp, start));
}

static int octep_get_sset_count(struct net_device *netdev, int sset)
{
	struct octep_dev *oct = octep_from_netdev(netdev);

	if (sset != ETH_SS_STATS)
		return -EOPNOTSUPP;
	return octep_n_totals() +
	       (octep_stat_names(octep_rx_names, OCTEP_N_RX, true) +
		octep_stat_names(octep_tx_names, OCTEP_N_TX, true)) *
	       oct->max_rings +
	       octep_ipsec_stats_count(oct);
}

static void octep_get_strings(struct net_device *netdev, u32 sset, u8 *data)
{
	struct octep_dev *oct = octep_from_netdev(netdev);
	unsigned int i, q;

	if (sset != ETH_SS_STATS)
		return;
	for (i = 0; i < OCTEP_N_RX; i++)
		if (octep_rx_names[i].total)
			ethtool_puts(&data, octep_rx_names[i].total);
	for (i = 0; i < OCTEP_N_TX; i++)
		if (octep_tx_names[i].total)
			ethtool_puts(&data, octep_tx_names[i].total);
	for (i = 0; i < OCTEP_N_DEV; i++)
		ethtool_puts(&data, octep_dev_names[i]);
	for (q = 0; q < oct->max_rings; q++) {
		for (i = 0; i < OCTEP_N_RX; i++)
			if (octep_rx_names[i].ring)
				ethtool_sprintf(&data, "rx%u_%s", q,
						octep_rx_names[i].ring);
		for (i = 0; i < OCTEP_N_TX; i++)
			if (octep_tx_names[i].ring)
				ethtool_sprintf(&data, "tx%u_%s", q,
						octep_tx_names[i].ring);
	}
	octep_ipsec_stats_strings(oct, &data);
}

static void octep_get_ethtool_stats(struct net_device *netdev,
				    struct ethtool_stats *stats, u64 *data)
{
	struct octep_dev *oct = octep_from_netdev(netdev);
	u64 rx_tot[OCTEP_N_RX] = {}, tx_tot[OCTEP_N_TX] = {};
	u64 rx[OCTEP_N_RX], tx[OCTEP_N_TX];
	u64 *ring = data + octep_n_totals();
	unsigned int i, q;

	/* The rings' values after the totals, in get_strings' order. */
	for (q = 0; q < oct->max_rings; q++) {
		octep_rx_vals(&oct->qv[q].oq, rx);
		for (i = 0; i < OCTEP_N_RX; i++) {
			if (i == OCTEP_RXS_PASSES_MAX)
				rx_tot[i] = max(rx_tot[i], rx[i]);
			else
				rx_tot[i] += rx[i];
			if (octep_rx_names[i].ring)
				*ring++ = rx[i];
		}
		octep_tx_vals(&oct->qv[q].iq, tx);
		for (i = 0; i < OCTEP_N_TX; i++) {
			tx_tot[i] += tx[i];
			if (octep_tx_names[i].ring)
				*ring++ = tx[i];
		}
	}
	for (i = 0; i < OCTEP_N_RX; i++)
		if (octep_rx_names[i].total)
			*data++ = rx_tot[i];
	for (i = 0; i < OCTEP_N_TX; i++)
		if (octep_tx_names[i].total)
			*data++ = tx_tot[i];
	data[0] = atomic64_read(&oct->rxwd_ticks);
	data[1] = atomic64_read(&oct->rxwd_runs);
	/* Written under RTNL, which ethtool holds here. */
	data[2] = oct->quiesce_cycles;
	data[3] = oct->quiesce_waits;
	data[4] = div_u64(oct->quiesce_wait_max_ns, NSEC_PER_USEC);
	data[5] = atomic64_read(&oct->tx_timeouts);
	data[6] = atomic64_read(&oct->rx_stall_reports);
	data[7] = atomic64_read(&oct->ring_resets);
	data[8] = atomic64_read(&oct->ring_rescues);
	data[9] = oct->reconf_refused;
	data[10] = atomic64_read(&oct->rx_bad_ext);
	data[11] = atomic64_read(&oct->rx_bad_count);
	data[12] = atomic64_read(&oct->tx_bad_count);
	data[13] = atomic64_read(&oct->irq_storms);
	/* After the rings: ring now points past the last ring's values. */
	octep_ipsec_stats_values(oct, ring);
}

/**
 * octep_get_stats64() - ndo_get_stats64, summed over every ring pair
 * @netdev: our netdev
 * @s: filled in
 */
void octep_get_stats64(struct net_device *netdev, struct rtnl_link_stats64 *s)
{
	struct octep_dev *oct = octep_from_netdev(netdev);
	u64 rx[OCTEP_N_RX], tx[OCTEP_N_TX];
	unsigned int q;

	for (q = 0; q < oct->max_rings; q++) {
		octep_rx_vals(&oct->qv[q].oq, rx);
		octep_tx_vals(&oct->qv[q].iq, tx);
		s->rx_packets += rx[OCTEP_RXS_PACKETS];
		s->rx_bytes += rx[OCTEP_RXS_BYTES];
		/* A buffer not posted drops nothing: qstats' alloc-fail. */
		s->rx_dropped += rx[OCTEP_RXS_DROPS];
		s->rx_errors += rx[OCTEP_RXS_RESYNC];
		s->tx_packets += tx[OCTEP_TXS_PACKETS];
		s->tx_bytes += tx[OCTEP_TXS_BYTES];
		s->tx_dropped += tx[OCTEP_TXS_DROPS];
	}
}

static void octep_get_drvinfo(struct net_device *netdev,
			      struct ethtool_drvinfo *info)
{
	struct octep_dev *oct = octep_from_netdev(netdev);

	strscpy(info->driver, OCTEP_DRV_NAME, sizeof(info->driver));
	strscpy(info->bus_info, dev_name(oct->dev), sizeof(info->bus_info));
}

static int octep_get_coalesce(struct net_device *netdev,
			      struct ethtool_coalesce *ec,
			      struct kernel_ethtool_coalesce *kec,
			      struct netlink_ext_ack *extack)
{
	struct octep_dev *oct = octep_from_netdev(netdev);

	ec->rx_max_coalesced_frames = oct->rx_level;
	ec->rx_coalesce_usecs = oct->rx_time;
	ec->tx_max_coalesced_frames = oct->tx_level;
	ec->tx_coalesce_usecs = oct->tx_time;
	return 0;
}

/*
 * Transmit completions free skbs and wake a stopped queue. A level above
 * the ring size never crosses; a level above 1 without a time threshold
 * leaves the completions below it to whatever next schedules the poll,
 * and a stopped queue with no receive traffic may wait for good.
 */
static int octep_check_tx_coalesce(struct octep_dev *oct,
				   const struct ethtool_coalesce *ec,
				   struct netlink_ext_ack *extack)
{
	if (!ec->tx_max_coalesced_frames) {
		NL_SET_ERR_MSG_MOD(extack, "tx-frames (the completion level) must be at least 1");
		return -EINVAL;
	}
	if (ec->tx_max_coalesced_frames > oct->tx_ring_size) {
		NL_SET_ERR_MSG_FMT_MOD(extack,
				       "tx-frames above the ring size (%u) would never interrupt",
				       oct->tx_ring_size);
		return -EINVAL;
	}
	if (ec->tx_max_coalesced_frames > 1 && !ec->tx_coalesce_usecs) {
		NL_SET_ERR_MSG_MOD(extack,
				   "tx-frames above 1 needs tx-usecs above 0, or completions below the level may never be reaped");
		return -EINVAL;
	}
	if (ec->tx_coalesce_usecs > OCTEP_RX_TIME_MAX) {
		NL_SET_ERR_MSG_FMT_MOD(extack, "tx-usecs is at most %u",
				       OCTEP_RX_TIME_MAX);
		return -EINVAL;
	}
	return 0;
}

static int octep_set_coalesce(struct net_device *netdev,
			      struct ethtool_coalesce *ec,
			      struct kernel_ethtool_coalesce *kec,
			      struct netlink_ext_ack *extack)
{
	struct octep_dev *oct = octep_from_netdev(netdev);
	bool quiesce = oct->up && !oct->quiesced;
	unsigned int q;
	int err;

	if (!ec->rx_max_coalesced_frames) {
		NL_SET_ERR_MSG_MOD(extack, "rx-frames (the packet level) must be at least 1");
		return -EINVAL;
	}
	if (ec->rx_max_coalesced_frames > oct->rx_ring_size) {
		NL_SET_ERR_MSG_FMT_MOD(extack,
				       "rx-frames above the ring size (%u) would never interrupt",
				       oct->rx_ring_size);
		return -EINVAL;
	}
	/*
	 * The visit ends on a pass that read zero, so with a level of 1 the
	 * next packet's crossing brings a servicer back. Above 1, a count
	 * left between zero and the level is brought back only by the
	 * block's time threshold; without one the ring waits for the
	 * watchdog's period.
	 */
	if (ec->rx_max_coalesced_frames > 1 && !ec->rx_coalesce_usecs) {
		NL_SET_ERR_MSG_MOD(extack,
				   "rx-frames above 1 needs rx-usecs above 0, or packets below the level wait for the watchdog");
		return -EINVAL;
	}
	if (ec->rx_coalesce_usecs > OCTEP_RX_TIME_MAX) {
		NL_SET_ERR_MSG_FMT_MOD(extack, "rx-usecs is at most %u",
				       OCTEP_RX_TIME_MAX);
		return -EINVAL;
	}
	err = octep_check_tx_coalesce(oct, ec, extack);
	if (err)
		return err;
	if (quiesce)
		octep_quiesce(oct);
	oct->rx_level = ec->rx_max_coalesced_frames;
	oct->rx_time = ec->rx_coalesce_usecs;
	oct->tx_level = ec->tx_max_coalesced_frames;
	oct->tx_time = ec->tx_coalesce_usecs;
	if (oct->up) {
		for (q = 0; q < oct->num_rings; q++) {
			struct octep_qvec *qv = &oct->qv[q];

			/*
			 * Quiesced: no poll writes the levels now, but an
			 * interrupt raised before the quiesce's disable
			 * reached the block may still be on its way, and its
			 * handler reads them (octep_regs_write_levels()).
			 */
			WRITE_ONCE(qv->oq_levels,
				   octep_regs_oq_levels(oct->rx_level,
							oct->rx_time));
			WRITE_ONCE(qv->iq_levels,
				   octep_regs_oq_levels(oct->tx_level,
							oct->tx_time));
			octep_regs_write_levels(qv, false);
		}
	}
	if (quiesce)
		octep_resume(oct);
	return 0;
}

static int octep_get_tunable(struct net_device *netdev,
			     const struct ethtool_tunable *tuna, void *data)
{
	struct octep_dev *oct = octep_from_netdev(netdev);

	if (tuna->id != ETHTOOL_RX_COPYBREAK)
		return -EOPNOTSUPP;
	*(u32 *)data = oct->rx_copybreak;
	return 0;
}

/* rx-copybreak: frames up to this many bytes are copied (0: none). */
static int octep_set_tunable(struct net_device *netdev,
			     const struct ethtool_tunable *tuna,
			     const void *data)
{
	struct octep_dev *oct = octep_from_netdev(netdev);
	u32 v = *(const u32 *)data;

	if (tuna->id != ETHTOOL_RX_COPYBREAK)
		return -EOPNOTSUPP;
	if (v > OCTEP_RX_COPYBREAK_MAX) {
		netdev_info(netdev, "rx-copybreak %u is above %u\n", v,
			    OCTEP_RX_COPYBREAK_MAX);
		return -EINVAL;
	}
	/* Pairs with the READ_ONCE() at the start of each pass. */
	WRITE_ONCE(oct->rx_copybreak, v);
	return 0;
}

static void octep_get_ringparam(struct net_device *netdev,
				struct ethtool_ringparam *ring,
				struct kernel_ethtool_ringparam *kring,
				struct netlink_ext_ack *extack)
{
	struct octep_dev *oct = octep_from_netdev(netdev);

	ring->rx_max_pending = OCTEP_RING_MAX;
	ring->tx_max_pending = OCTEP_RING_MAX;
	ring->rx_pending = oct->rx_ring_size;
	ring->tx_pending = oct->tx_ring_size;
}

static bool octep_ring_size_ok(u32 n)
{
	return n >= OCTEP_RING_MIN && n <= OCTEP_RING_MAX && is_power_of_2(n);
}

static int octep_set_ringparam(struct net_device *netdev,
			       struct ethtool_ringparam *ring,
			       struct kernel_ethtool_ringparam *kring,
			       struct netlink_ext_ack *extack)
{
	struct octep_dev *oct = octep_from_netdev(netdev);

	if (ring->rx_mini_pending || ring->rx_jumbo_pending) {
		NL_SET_ERR_MSG_MOD(extack, "no mini or jumbo rings");
		return -EINVAL;
	}
	if (!octep_ring_size_ok(ring->rx_pending) ||
	    !octep_ring_size_ok(ring->tx_pending)) {
		NL_SET_ERR_MSG_FMT_MOD(extack,
				       "ring sizes are powers of two from %u to %u",
				       OCTEP_RING_MIN, OCTEP_RING_MAX);
		return -EINVAL;
	}
	if (ring->rx_pending < oct->rx_level) {
		NL_SET_ERR_MSG_MOD(extack, "rx ring smaller than the packet level (rx-frames)");
		return -EINVAL;
	}
	if (ring->tx_pending < oct->tx_level) {
		NL_SET_ERR_MSG_MOD(extack, "tx ring smaller than the completion level (tx-frames)");
		return -EINVAL;
	}
	if (ring->rx_pending == oct->rx_ring_size &&
	    ring->tx_pending == oct->tx_ring_size)
		return 0;
	return octep_reconfigure(oct, oct->num_rings, ring->rx_pending,
				 ring->tx_pending);
}

static void octep_get_channels(struct net_device *netdev,
			       struct ethtool_channels *ch)
{
	struct octep_dev *oct = octep_from_netdev(netdev);

	ch->max_combined = oct->max_rings;
	ch->combined_count = oct->num_rings;
}

static int octep_set_channels(struct net_device *netdev,
			      struct ethtool_channels *ch)
{
	struct octep_dev *oct = octep_from_netdev(netdev);

	if (!ch->combined_count || ch->combined_count > oct->max_rings ||
	    ch->rx_count || ch->tx_count || ch->other_count)
		return -EINVAL;
	if (ch->combined_count == oct->num_rings)
		return 0;
	return octep_reconfigure(oct, ch->combined_count, oct->rx_ring_size,
				 oct->tx_ring_size);
}

static int octep_get_rxnfc(struct net_device *netdev,
			   struct ethtool_rxnfc *cmd, u32 *rule_locs)
{
	struct octep_dev *oct = octep_from_netdev(netdev);

	if (cmd->cmd != ETHTOOL_GRXRINGS)
		return -EOPNOTSUPP;
	cmd->data = oct->num_rings;
	return 0;
}

/* Without the RSS registers (sdp->rss) there is no key and no table. */
static u32 octep_get_rxfh_key_size(struct net_device *netdev)
{
	return octep_from_netdev(netdev)->sdp->rss ? OCTEP_SDP_RSS_KEY_SIZE : 0;
}

static u32 octep_get_rxfh_indir_size(struct net_device *netdev)
{
	return octep_from_netdev(netdev)->sdp->rss ? OCTEP_SDP_RSS_INDIR_SIZE : 0;
}

static int octep_get_rxfh(struct net_device *netdev,
			  struct ethtool_rxfh_param *rxfh)
{
	struct octep_dev *oct = octep_from_netdev(netdev);
	unsigned int i;

	rxfh->hfunc = ETH_RSS_HASH_TOP;
	if (rxfh->indir)
		for (i = 0; i < OCTEP_SDP_RSS_INDIR_SIZE; i++)
			rxfh->indir[i] = oct->rss_indir[i];
	if (rxfh->key)
		memcpy(rxfh->key, oct->rss_key, sizeof(oct->rss_key));
	return 0;
}

/* The core checked each entry against ETHTOOL_GRXRINGS: a ring in use. */
static int octep_set_rxfh(struct net_device *netdev,
			  struct ethtool_rxfh_param *rxfh,
			  struct netlink_ext_ack *extack)
{
	struct octep_dev *oct = octep_from_netdev(netdev);
	unsigned int i;

	if (!oct->sdp->rss) {
		NL_SET_ERR_MSG_MOD(extack, "the block's RSS is not programmable by this driver");
		return -EOPNOTSUPP;
	}
	if (rxfh->rss_context) {
		NL_SET_ERR_MSG_MOD(extack, "the block has one RSS context");
		return -EOPNOTSUPP;
	}
	if (rxfh->hfunc != ETH_RSS_HASH_NO_CHANGE &&
	    rxfh->hfunc != ETH_RSS_HASH_TOP) {
		NL_SET_ERR_MSG_MOD(extack, "the block hashes with Toeplitz only");
		return -EOPNOTSUPP;
	}
	if (rxfh->input_xfrm && rxfh->input_xfrm != RXH_XFRM_NO_CHANGE) {
		NL_SET_ERR_MSG_MOD(extack, "the block has no symmetric hashing");
		return -EOPNOTSUPP;
	}
	if (rxfh->indir)
		for (i = 0; i < OCTEP_SDP_RSS_INDIR_SIZE; i++)
			oct->rss_indir[i] = rxfh->indir[i];
	if (rxfh->key)
		memcpy(oct->rss_key, rxfh->key, sizeof(oct->rss_key));
	/* Down: octep_datapath_up() programs it. */
	if (oct->up)
		octep_rss_write(oct);
	return 0;
}

/*
 * The port's rate is the block's PORT_SPEED (sdp->port), which the block
 * sets; there is no autonegotiation between the block and the wire to
 * report, and nothing for ethtool -s to change.
 */
static int octep_get_link_ksettings(struct net_device *netdev,
				    struct ethtool_link_ksettings *ks)
{
	struct octep_dev *oct = octep_from_netdev(netdev);

	ethtool_link_ksettings_zero_link_mode(ks, supported);
	ethtool_link_ksettings_zero_link_mode(ks, advertising);
	ks->base.port = PORT_OTHER;
	ks->base.autoneg = AUTONEG_DISABLE;
	if (oct->sdp->port && netif_carrier_ok(netdev)) {
		ks->base.speed = (u32)octep_rd64(oct, OCTEP_SDP_PORT_SPEED);
		ks->base.duplex = DUPLEX_FULL;
	} else {
		ks->base.speed = SPEED_UNKNOWN;
		ks->base.duplex = DUPLEX_UNKNOWN;
	}
	return 0;
}

const struct ethtool_ops octep_ethtool_ops = {
	.supported_coalesce_params = ETHTOOL_COALESCE_RX_USECS |
				     ETHTOOL_COALESCE_RX_MAX_FRAMES |
				     ETHTOOL_COALESCE_TX_USECS |
				     ETHTOOL_COALESCE_TX_MAX_FRAMES,
	.get_drvinfo		= octep_get_drvinfo,
	.get_link		= ethtool_op_get_link,
	.get_link_ksettings	= octep_get_link_ksettings,
	.get_sset_count		= octep_get_sset_count,
	.get_strings		= octep_get_strings,
	.get_ethtool_stats	= octep_get_ethtool_stats,
	.get_coalesce		= octep_get_coalesce,
	.set_coalesce		= octep_set_coalesce,
	.get_tunable		= octep_get_tunable,
	.set_tunable		= octep_set_tunable,
	.get_ringparam		= octep_get_ringparam,
	.set_ringparam		= octep_set_ringparam,
	.get_channels		= octep_get_channels,
	.set_channels		= octep_set_channels,
	.get_rxnfc		= octep_get_rxnfc,
	.get_rxfh_key_size	= octep_get_rxfh_key_size,
	.get_rxfh_indir_size	= octep_get_rxfh_indir_size,
	.get_rxfh		= octep_get_rxfh,
	.set_rxfh		= octep_set_rxfh,
};

/* Sets @rx to the sum of the qstats-carried counters of rings [from, to). */
static void octep_qstat_rx(struct octep_dev *oct, unsigned int from,
			   unsigned int to, struct netdev_queue_stats_rx *rx)
{
	u64 v[OCTEP_N_RX];
	unsigned int q;

	rx->packets = 0;
	rx->bytes = 0;
	rx->alloc_fail = 0;
	rx->csum_bad = 0;
	for (q = from; q < to; q++) {
		octep_rx_vals(&oct->qv[q].oq, v);
		rx->packets += v[OCTEP_RXS_PACKETS];
		rx->bytes += v[OCTEP_RXS_BYTES];
		rx->alloc_fail += v[OCTEP_RXS_ALLOC_FAIL];
		rx->csum_bad += v[OCTEP_RXS_CSUM_BAD];
	}
}

/* Sets @tx to the sum of the qstats-carried counters of rings [from, to). */
static void octep_qstat_tx(struct octep_dev *oct, unsigned int from,
			   unsigned int to, struct netdev_queue_stats_tx *tx)
{
	u64 v[OCTEP_N_TX];
	unsigned int q;

	tx->packets = 0;
	tx->bytes = 0;
	tx->stop = 0;
	tx->wake = 0;
	tx->needs_csum = 0;
	tx->hw_gso_packets = 0;
	tx->hw_gso_wire_packets = 0;
	for (q = from; q < to; q++) {
		octep_tx_vals(&oct->qv[q].iq, v);
		tx->packets += v[OCTEP_TXS_PACKETS];
		tx->bytes += v[OCTEP_TXS_BYTES];
		tx->stop += v[OCTEP_TXS_STOPS];
		tx->wake += v[OCTEP_TXS_WAKES];
		tx->needs_csum += v[OCTEP_TXS_CSUM_OFFLOAD];
		tx->hw_gso_packets += v[OCTEP_TXS_TSO];
		tx->hw_gso_wire_packets += v[OCTEP_TXS_TSO_SEGS];
	}
}

static void octep_get_queue_stats_rx(struct net_device *netdev, int idx,
				     struct netdev_queue_stats_rx *rx)
{
	octep_qstat_rx(octep_from_netdev(netdev), idx, idx + 1, rx);
}

static void octep_get_queue_stats_tx(struct net_device *netdev, int idx,
				     struct netdev_queue_stats_tx *tx)
{
	octep_qstat_tx(octep_from_netdev(netdev), idx, idx + 1, tx);
}

/*
 * A ring pair's counters live as long as the device, across -L: the rings
 * beyond the live queues are the base, so that base plus queues is the
 * device's history, which ndo_get_stats64 sums too. The core calls this and
 * the per-queue ops under RTNL, which also orders them after a -L.
 */
static void octep_get_base_stats(struct net_device *netdev,
				 struct netdev_queue_stats_rx *rx,
				 struct netdev_queue_stats_tx *tx)
{
	struct octep_dev *oct = octep_from_netdev(netdev);

	octep_qstat_rx(oct, netdev->real_num_rx_queues, oct->max_rings, rx);
	octep_qstat_tx(oct, netdev->real_num_tx_queues, oct->max_rings, tx);
}

/* qstats: `ynl --family netdev --dump qstats-get` and ethtool 6.10+. */
const struct netdev_stat_ops octep_stat_ops = {
	.get_queue_stats_rx	= octep_get_queue_stats_rx,
	.get_queue_stats_tx	= octep_get_queue_stats_tx,
	.get_base_stats		= octep_get_base_stats,
};
