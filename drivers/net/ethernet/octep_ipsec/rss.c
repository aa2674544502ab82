// SPDX-License-Identifier: GPL-2.0
/*
 * octep_ipsec: receive side scaling, the block's RSS registers
 * (octep_sdp.h, "Receive side scaling").
 *
 * The driver keeps the key and the indirection table (ethtool -x/-X, in
 * ethtool.c) and programs the block from them when the datapath comes up,
 * once its rings are enabled, and on every change; RSS is turned off when
 * the datapath goes down. The block reads the registers per frame, so a
 * change needs no quiesce: frames in flight while it is written may be
 * steered by old and new registers mixed, to a ring one of them names.
 *
 * The default table spreads over the rings in use and follows ethtool -L
 * until the user sets a table (netif_is_rxfh_configured()); the ethtool
 * core refuses a ring count below a ring the user's table names.
 */
#include <linux/ethtool.h>
#include <linux/netdevice.h>
#include <linux/rtnetlink.h>
#include <linux/unaligned.h>

#include "octep_ipsec.h"

static void octep_rss_default_indir(struct octep_dev *oct)
{
	unsigned int i;

	for (i = 0; i < OCTEP_SDP_RSS_INDIR_SIZE; i++)
		oct->rss_indir[i] = ethtool_rxfh_indir_default(i, oct->num_rings);
}

/**
 * octep_rss_init() - a random key and the default table, at probe
 * @oct: device, its ring count set
 */
void octep_rss_init(struct octep_dev *oct)
{
	netdev_rss_key_fill(oct->rss_key, sizeof(oct->rss_key));
	octep_rss_default_indir(oct);
}

/**
 * octep_rss_follow_rings() - the default table for the rings in use
 * @oct: device, under RTNL, its ring count set
 *
 * Rebuilds the table for @oct->num_rings unless the user set one. Does not
 * program the block (octep_rss_write()).
 */
void octep_rss_follow_rings(struct octep_dev *oct)
{
	ASSERT_RTNL();
	if (!netif_is_rxfh_configured(oct->netdev))
		octep_rss_default_indir(oct);
}

/* @regs registers from @off on, eight bytes of @bytes each, first in 7:0. */
static void octep_rss_wr_bytes(struct octep_dev *oct, u32 off, const u8 *bytes,
			       unsigned int regs)
{
	unsigned int i;

	for (i = 0; i < regs; i++)
		octep_wr64(oct, off + i * 8, get_unaligned_le64(bytes + i * 8));
}

/**
 * octep_rss_write() - program the key and the table, and enable RSS
 * @oct: device, under RTNL, its rings enabled: an entry naming a ring
 *	that is not enabled drops the frames it gets
 *
 * The enable is written last: a block that sees it sees the key and table.
 * Nothing on a block without our RSS registers (sdp->rss).
 */
void octep_rss_write(struct octep_dev *oct)
{
	ASSERT_RTNL();
	if (!oct->sdp->rss)
		return;
	octep_rss_wr_bytes(oct, OCTEP_SDP_RSS_KEY(0), oct->rss_key,
			   OCTEP_SDP_RSS_KEY_REGS);
	octep_rss_wr_bytes(oct, OCTEP_SDP_RSS_INDIR(0), oct->rss_indir,
			   OCTEP_SDP_RSS_INDIR_REGS);
	octep_wr64(oct, OCTEP_SDP_RSS_CTL, OCTEP_SDP_RSS_CTL_ENA);
}

/**
 * octep_rss_disable() - turn RSS off, before the rings go
 * @oct: device
 *
 * The block then spreads over the leading run of enabled rings, as it
 * does for a host that never programmed RSS.
 */
void octep_rss_disable(struct octep_dev *oct)
{
	if (oct->sdp->rss)
		octep_wr64(oct, OCTEP_SDP_RSS_CTL, 0);
}
