// SPDX-License-Identifier: GPL-2.0
/*
 * octep_sim: the hostile mode. The block is the driver's input as much as
 * the wire is: this mode makes it write, at a chosen rate and from a
 * seeded generator, what a broken or malicious block could, one kind at a
 * time or all at once, and counts each fault it injects so a test can hold
 * the driver's count of what it caught against it.
 *
 * The kinds are in enum osim_hk. A count fault is not injected again into
 * a count that still holds the last one: the driver resets the ring once
 * for it, and one injection is one thing to catch.
 */
#include <linux/bitfield.h>
#include <linux/debugfs.h>
#include <linux/etherdevice.h>

#include "octep_sim.h"

static const char *const osim_hk_names[OSIM_HK_NUM] = {
	[OSIM_HK_RX_LEN] = "rx_len",
	[OSIM_HK_RX_EXT] = "rx_ext",
	[OSIM_HK_RX_COUNT] = "rx_count",
	[OSIM_HK_TX_COUNT] = "tx_count",
	[OSIM_HK_MBOX] = "mbox",
	[OSIM_HK_MBOX_BAD] = "mbox_bad",
	[OSIM_HK_IRQ_STORM] = "irq_storm",
};

/* xorshift64*: reproducible from the seed, cheap, good enough for faults. */
static u64 osim_hostile_next(struct osim_hostile *h)
{
	u64 x = h->state;

	x ^= x >> 12;
	x ^= x << 25;
	x ^= x >> 27;
	h->state = x;
	return x * 0x2545f4914f6cdd1dULL;
}

/**
 * osim_hostile() - is this opportunity for a fault of @kind one?
 * @dev: the block
 * @kind: the fault
 * @rnd: if not NULL, a random number for the fault's shape
 *
 * Return: true with the fault counted as injected.
 */
bool osim_hostile(struct osim_dev *dev, enum osim_hk kind, u32 *rnd)
{
	struct osim_hostile *h = &dev->hostile;
	unsigned long flags;
	bool hit = false;
	u64 r;

	/* Set from debugfs; an opportunity that sees the old mask is fine. */
	if (likely(!(READ_ONCE(h->kinds) & BIT(kind))))
		return false;
	spin_lock_irqsave(&h->lock, flags);
	if (h->rate && (h->kinds & BIT(kind))) {
		r = osim_hostile_next(h);
		hit = (r >> 32) % h->rate == 0;
		if (hit) {
			h->injected[kind]++;
			if (rnd)
				*rnd = (u32)osim_hostile_next(h);
		}
	}
	spin_unlock_irqrestore(&h->lock, flags);
	return hit;
}

/**
 * osim_hostile_len() - a receive length no buffer of @bufsize holds
 * @bufsize: the ring's buffer size
 * @rnd: from osim_hostile()
 *
 * Return: below an Ethernet header (but not 0, which means "not yet
 * written"), past the buffer, or past anything 32 bits hold.
 */
u64 osim_hostile_len(u32 bufsize, u32 rnd)
{
	switch (rnd % 3) {
	case 0:
		return 1 + (rnd >> 8) % (ETH_HLEN - 1);
	case 1:
		return bufsize + 1 + (rnd >> 8) % 65536;
	default:
		return BIT_ULL(32) | rnd;
	}
}

static int osim_seed_set(void *data, u64 val)
{
	struct osim_hostile *h = data;

	spin_lock_irq(&h->lock);
	h->state = val ?: 1;	/* xorshift never leaves 0 */
	spin_unlock_irq(&h->lock);
	return 0;
}
DEFINE_DEBUGFS_ATTRIBUTE(osim_seed_fops, NULL, osim_seed_set, "%llu\n");

static int osim_rate_get(void *data, u64 *val)
{
	*val = READ_ONCE(((struct osim_hostile *)data)->rate);
	return 0;
}

static int osim_rate_set(void *data, u64 val)
{
	struct osim_hostile *h = data;

	if (val > U32_MAX)
		return -EINVAL;
	spin_lock_irq(&h->lock);
	h->rate = val;
	spin_unlock_irq(&h->lock);
	return 0;
}
DEFINE_DEBUGFS_ATTRIBUTE(osim_rate_fops, osim_rate_get, osim_rate_set,
			 "%llu\n");

static int osim_kinds_get(void *data, u64 *val)
{
	*val = READ_ONCE(((struct osim_hostile *)data)->kinds);
	return 0;
}

static int osim_kinds_set(void *data, u64 val)
{
	struct osim_hostile *h = data;

	if (val & ~(u64)GENMASK(OSIM_HK_NUM - 1, 0))
		return -EINVAL;
	spin_lock_irq(&h->lock);
	WRITE_ONCE(h->kinds, val);
	spin_unlock_irq(&h->lock);
	return 0;
}
DEFINE_DEBUGFS_ATTRIBUTE(osim_kinds_fops, osim_kinds_get, osim_kinds_set,
			 "%#llx\n");

static int osim_injected_show(struct seq_file *m, void *v)
{
	struct osim_hostile *h = m->private;
	u64 n[OSIM_HK_NUM];
	unsigned int k;

	spin_lock_irq(&h->lock);
	memcpy(n, h->injected, sizeof(n));
	spin_unlock_irq(&h->lock);
	for (k = 0; k < OSIM_HK_NUM; k++)
		seq_printf(m, "%s %llu\n", osim_hk_names[k], n[k]);
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(osim_injected);

static int osim_storm_fires_get(void *data, u64 *val)
{
	*val = atomic64_read(data);
	return 0;
}
DEFINE_DEBUGFS_ATTRIBUTE(osim_storm_fires_fops, osim_storm_fires_get, NULL,
			 "%llu\n");

/**
 * osim_hostile_init() - the hostile mode, off
 * @dev: the block, before its engine runs
 */
void osim_hostile_init(struct osim_dev *dev)
{
	spin_lock_init(&dev->hostile.lock);
	dev->hostile.state = 1;
}

/**
 * osim_hostile_debugfs() - the hostile/ directory: seed, rate, kinds and
 * what was injected
 * @dev: the block, its debugfs directory made
 */
void osim_hostile_debugfs(struct osim_dev *dev)
{
	struct osim_hostile *h = &dev->hostile;
	struct dentry *dir;

	dir = debugfs_create_dir("hostile", dev->dbg);
	debugfs_create_file_unsafe("seed", 0200, dir, h, &osim_seed_fops);
	debugfs_create_file_unsafe("rate", 0600, dir, h, &osim_rate_fops);
	debugfs_create_file_unsafe("kinds", 0600, dir, h, &osim_kinds_fops);
	debugfs_create_file("injected", 0400, dir, h, &osim_injected_fops);
	debugfs_create_file_unsafe("storm_fires", 0400, dir, &h->storm_fires,
				   &osim_storm_fires_fops);
}
