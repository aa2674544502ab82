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

/* Per output ring, as rx<N>_<name>; totals use octep_rx_total_names. */
static const char * const octep_rx_names[] = {
	"packets", "bytes", "drops", "alloc_fail", "csum_bad",
	"interrupts", "visits", "passes", "passes_max",
	"oq_declined", "oq_handed", "oq_bound", "oq_unseen", "rx_resync",
	"rxwd_rescues", "rxwd_stalls", "tick_requests", "resend",
	"rxwd_early", "oq_rearm_resched", "oq_deferred", "oq_busy",
	"copybreak", "rxwd_skipped",
};

static const char * const octep_rx_total_names[] = {
	"rx_packets", "rx_bytes", "rx_drops", "rx_alloc_fail", "rx_csum_bad",
	"interrupts", "visits", "passes", "passes_max",
	"oq_declined", "oq_handed", "oq_bound", "oq_unseen", "rx_resync",
	"rxwd_rescues", "rxwd_stalls", "tick_requests", "resend",
	"rxwd_early", "oq_rearm_resched", "oq_deferred", "oq_busy",
	"rx_copybreak", "rxwd_skipped",
};

#define OCTEP_RX_PASSES_MAX	8	/* index of passes_max: a max, not a sum */

/*
 * The per-ring counters qstats carry (octep_stat_ops): packets, bytes,
 * alloc_fail, csum_bad; ethtool -S gives only their totals.
 */
#define OCTEP_RX_QSTATS		(BIT(0) | BIT(1) | BIT(3) | BIT(4))

/* Per input ring, as tx<N>_<name>; totals as tx_<name>. */
static const char * const octep_tx_names[] = {
	"packets", "bytes", "drops", "completions", "stops", "wakes",
	"doorbells", "csum_offload", "tso", "tso_segs", "gather",
	"linearize", "excess",
};

/* Carried by qstats: packets, bytes, stops, wakes, csum_offload, tso(_segs). */
#define OCTEP_TX_QSTATS		(BIT(0) | BIT(1) | BIT(4) | BIT(5) | BIT(7) | \
				 BIT(8) | BIT(9))

static const char * const octep_dev_names[] = {
	"rxwd_ticks", "rxwd_runs",
	"quiesce_cycles", "quiesce_waits", "quiesce_wait_max_us",
	"tx_timeouts", "rx_stall_reports", "ring_resets", "ring_rescues",
	"reconf_refused", "rx_bad_ext", "rx_bad_count", "tx_bad_count",
	"irq_storms",
};

#define OCTEP_N_RX	ARRAY_SIZE(octep_rx_names)
#define OCTEP_N_TX	ARRAY_SIZE(octep_tx_names)
#define OCTEP_N_DEV	ARRAY_SIZE(octep_dev_names)
#define OCTEP_N_RX_RING	(OCTEP_N_RX - hweight32(OCTEP_RX_QSTATS))
#define OCTEP_N_TX_RING	(OCTEP_N_TX - hweight32(OCTEP_TX_QSTATS))

static void octep_rx_vals(struct octep_oq *oq, u64 *v)
{
	const struct octep_rx_stats *s = &oq->stats;
	unsigned int start;

	do {
		start = u64_stats_fetch_begin(&s->syncp);
		v[0] = s->packets;
		v[1] = s->bytes;
		v[2] = s->drops;
		v[3] = s->alloc_fail;
		v[4] = s->csum_bad;
		v[6] = s->visits;
		v[7] = s->passes;
		v[8] = s->passes_max;
		v[11] = s->oq_bound;
		v[12] = s->oq_unseen;
		v[13] = s->rx_resync;
		v[15] = s->rxwd_stalls;
		v[16] = s->tick_requests;
		v[22] = s->copybreak;
	} while (u64_stats_fetch_retry(&s->syncp, start));
	v[5] = atomic64_read(&oq->interrupts);
	v[9] = atomic64_read(&oq->oq_declined);
	v[14] = atomic64_read(&oq->rxwd_rescues);
	v[17] = atomic64_read(&oq->resend);
	v[18] = atomic64_read(&oq->rxwd_early);
	v[19] = atomic64_read(&oq->rearm_resched);
	v[10] = atomic64_read(&oq->oq_handed);
	v[20] = atomic64_read(&oq->oq_deferred);
	v[21] = atomic64_read(&oq->oq_busy);
	v[23] = atomic64_read(&oq->rxwd_skipped);
}

static void octep_tx_vals(struct octep_iq *iq, u64 *v)
{
	const struct octep_tx_stats *s = &iq->stats, *c = &iq->cstats;
	unsigned int start;

	do {
		start = u64_stats_fetch_begin(&s->syncp);
		v[0] = s->packets;
		v[1] = s->bytes;
		v[2] = s->drops;
		v[6] = s->doorbells;
		v[7] = s->csum_offload;
		v[8] = s->tso;
		v[9] = s->tso_segs;
		v[10] = s->gather;
		v[11] = s->linearize;
		v[4] = s->stops;
	} while (u64_stats_fetch_retry(&s->syncp, start));
	do {
		start = u64_stats_fetch_begin(&c->syncp);
		v[3] = c->completions;
		v[5] = c->wakes;
		v[12] = c->excess;
	} while (u64_stats_fetch_retry(&c->syncp, start));
}

static int octep_get_sset_count(struct net_device *netdev, int sset)
{
	struct octep_dev *oct = octep_from_netdev(netdev);

	if (sset != ETH_SS_STATS)
		return -EOPNOTSUPP;
	return OCTEP_N_RX + OCTEP_N_TX + OCTEP_N_DEV +
	       (OCTEP_N_RX_RING + OCTEP_N_TX_RING) * oct->max_rings +
	       octep_ipsec_stats_count(oct);
}

static void octep_get_strings(struct net_device *netdev, u32 sset, u8 *data)
{
	struct octep_dev *oct = octep_from_netdev(netdev);
	unsigned int i, q;

	if (sset != ETH_SS_STATS)
		return;
	for (i = 0; i < OCTEP_N_RX; i++)
		ethtool_puts(&data, octep_rx_total_names[i]);
	for (i = 0; i < OCTEP_N_TX; i++)
		ethtool_sprintf(&data, "tx_%s", octep_tx_names[i]);
	for (i = 0; i < OCTEP_N_DEV; i++)
		ethtool_puts(&data, octep_dev_names[i]);
	for (q = 0; q < oct->max_rings; q++) {
		for (i = 0; i < OCTEP_N_RX; i++)
			if (!(OCTEP_RX_QSTATS & BIT(i)))
				ethtool_sprintf(&data, "rx%u_%s", q,
						octep_rx_names[i]);
		for (i = 0; i < OCTEP_N_TX; i++)
			if (!(OCTEP_TX_QSTATS & BIT(i)))
				ethtool_sprintf(&data, "tx%u_%s", q,
						octep_tx_names[i]);
	}
	octep_ipsec_stats_strings(oct, &data);
}

static void octep_get_ethtool_stats(struct net_device *netdev,
				    struct ethtool_stats *stats, u64 *data)
{
	struct octep_dev *oct = octep_from_netdev(netdev);
	u64 *rx_tot = data, *tx_tot = data + OCTEP_N_RX;
	u64 *dev = tx_tot + OCTEP_N_TX, *ring = dev + OCTEP_N_DEV;
	u64 rx[OCTEP_N_RX], tx[OCTEP_N_TX];
	unsigned int i, q;

	memset(data, 0, (OCTEP_N_RX + OCTEP_N_TX + OCTEP_N_DEV) * sizeof(u64));
	for (q = 0; q < oct->max_rings; q++) {
		octep_rx_vals(&oct->qv[q].oq, rx);
		for (i = 0; i < OCTEP_N_RX; i++) {
			if (i == OCTEP_RX_PASSES_MAX)
				rx_tot[i] = max(rx_tot[i], rx[i]);
			else
				rx_tot[i] += rx[i];
			if (!(OCTEP_RX_QSTATS & BIT(i)))
				*ring++ = rx[i];
		}
		octep_tx_vals(&oct->qv[q].iq, tx);
		for (i = 0; i < OCTEP_N_TX; i++) {
			tx_tot[i] += tx[i];
			if (!(OCTEP_TX_QSTATS & BIT(i)))
				*ring++ = tx[i];
		}
	}
	dev[0] = atomic64_read(&oct->rxwd_ticks);
	dev[1] = atomic64_read(&oct->rxwd_runs);
	/* Written under RTNL, which ethtool holds here. */
	dev[2] = oct->quiesce_cycles;
	dev[3] = oct->quiesce_waits;
	dev[4] = div_u64(oct->quiesce_wait_max_ns, NSEC_PER_USEC);
	dev[5] = atomic64_read(&oct->tx_timeouts);
	dev[6] = atomic64_read(&oct->rx_stall_reports);
	dev[7] = atomic64_read(&oct->ring_resets);
	dev[8] = atomic64_read(&oct->ring_rescues);
	dev[9] = oct->reconf_refused;
	dev[10] = atomic64_read(&oct->rx_bad_ext);
	dev[11] = atomic64_read(&oct->rx_bad_count);
	dev[12] = atomic64_read(&oct->tx_bad_count);
	dev[13] = atomic64_read(&oct->irq_storms);
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
		s->rx_packets += rx[0];
		s->rx_bytes += rx[1];
		/* A buffer not posted drops nothing: qstats' alloc-fail. */
		s->rx_dropped += rx[2];
		s->rx_errors += rx[13];
		s->tx_packets += tx[0];
		s->tx_bytes += tx[1];
		s->tx_dropped += tx[2];
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
		rx->packets += v[0];
		rx->bytes += v[1];
		rx->alloc_fail += v[3];
		rx->csum_bad += v[4];
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
		tx->packets += v[0];
		tx->bytes += v[1];
		tx->stop += v[4];
		tx->wake += v[5];
		tx->needs_csum += v[7];
		tx->hw_gso_packets += v[8];
		tx->hw_gso_wire_packets += v[9];
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
