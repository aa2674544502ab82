// SPDX-License-Identifier: GPL-2.0
/*
 * octep_sim: debugfs, /sys/kernel/debug/octep_sim/octep_sim<ID>/.
 *
 * Settings and faults of the device, every counter of every ring (ring<N>/),
 * and the test hooks: regs (a register read or write through the same path
 * as the driver's), host_stub (rings and buffers set up by the model itself
 * when no driver is bound) and ring<N>/inject (synthetic packets into an
 * output ring). The .rst lists every file.
 *
 * Counters are read without the ring locks: each is written by one side at
 * a time and a 64-bit load does not tear on the machines this runs on; a
 * value may be one batch old.
 */
#include <linux/bitfield.h>
#include <linux/debugfs.h>
#include <linux/dma-mapping.h>
#include <linux/delay.h>
#include <linux/etherdevice.h>
#include <linux/seq_file.h>
#include <linux/uaccess.h>

#include "octep_sim.h"

static struct dentry *osim_dbg_root;

/* ------------------------------------------------- plain counters */

static int osim_u8_get(void *data, u64 *val)
{
	*val = READ_ONCE(*(u8 *)data);
	return 0;
}
DEFINE_DEBUGFS_ATTRIBUTE(osim_u8_fops, osim_u8_get, NULL, "%llu\n");

static int osim_u32_get(void *data, u64 *val)
{
	*val = READ_ONCE(*(u32 *)data);
	return 0;
}
DEFINE_DEBUGFS_ATTRIBUTE(osim_u32_fops, osim_u32_get, NULL, "%llu\n");

static int osim_u64_get(void *data, u64 *val)
{
	*val = READ_ONCE(*(u64 *)data);
	return 0;
}
DEFINE_DEBUGFS_ATTRIBUTE(osim_u64_fops, osim_u64_get, NULL, "%llu\n");

struct osim_dbg_field {
	const char *name;
	size_t off;
	size_t size;
};

/* A field of struct osim_ring; @t is its type (read as 1, 4 or 8 bytes). */
#define OSIM_RF(n, f, t) { n, offsetof(struct osim_ring, f), sizeof(t) }

static const struct osim_dbg_field osim_ring_fields[] = {
	/* output ring: state */
	OSIM_RF("out_count", oq.cnt.r.count, u32),
	OSIM_RF("out_level", oq.cnt.r.level, u32),
	OSIM_RF("out_time_us", oq.cnt.r.time_us, u32),
	OSIM_RF("out_int_ena", oq.cnt.r.ena, bool),
	OSIM_RF("out_latched", oq.cnt.r.latched, bool),
	OSIM_RF("out_enabled", oq.enabled, bool),
	OSIM_RF("out_credits", oq.credits, u32),
	OSIM_RF("out_head", oq.head, u32),
	OSIM_RF("out_rsize", oq.rsize, u32),
	OSIM_RF("out_bufsize", oq.bufsize, u32),
	/* output ring: interrupts */
	OSIM_RF("irq_crossing", oq.cnt.r.raised[OSIM_CAUSE_CROSSING], u64),
	OSIM_RF("irq_timer", oq.cnt.r.raised[OSIM_CAUSE_TIMER], u64),
	OSIM_RF("irq_timer_after_us", oq.cnt.r.timer_after_us, u64),
	OSIM_RF("irq_resend", oq.cnt.r.raised[OSIM_CAUSE_RESEND], u64),
	OSIM_RF("irq_latched", oq.cnt.r.latch_events, u64),
	OSIM_RF("irq_masked_dropped", oq.cnt.r.masked_dropped, u64),
	OSIM_RF("arrived_on_enable", oq.arrived_on_enable, u64),
	OSIM_RF("resend_writes", oq.cnt.r.resend_writes, u64),
	OSIM_RF("ack_excess", oq.cnt.r.ack_excess, u64),
	OSIM_RF("out_left", oq.cnt.r.left, u64),
	OSIM_RF("out_left_max_ns", oq.cnt.r.left_max_ns, u64),
	/* output ring: packets */
	OSIM_RF("out_pkts", oq.pkts, u64),
	OSIM_RF("out_bytes", oq.bytes, u64),
	OSIM_RF("drop_no_credit", oq.drop_credit, u64),
	OSIM_RF("drop_too_big", oq.drop_big, u64),
	OSIM_RF("drop_disabled", oq.drop_disabled, u64),
	OSIM_RF("drop_dma", oq.drop_dma, u64),
	OSIM_RF("credit_excess", oq.credit_excess, u64),
	OSIM_RF("delayed", oq.delayed, u64),
	OSIM_RF("fill_faults", oq.fill_faults, u64),
	/* input ring */
	OSIM_RF("in_count", iq.cnt.r.count, u32),
	OSIM_RF("in_level", iq.cnt.r.level, u32),
	OSIM_RF("in_time_us", iq.cnt.r.time_us, u32),
	OSIM_RF("in_int_ena", iq.cnt.r.ena, bool),
	OSIM_RF("in_latched", iq.cnt.r.latched, bool),
	OSIM_RF("in_enabled", iq.enabled, bool),
	OSIM_RF("in_pending", iq.pending, u32),
	OSIM_RF("in_head", iq.head, u32),
	OSIM_RF("in_rsize", iq.rsize, u32),
	OSIM_RF("irq_in_crossing", iq.cnt.r.raised[OSIM_CAUSE_CROSSING], u64),
	OSIM_RF("irq_in_timer", iq.cnt.r.raised[OSIM_CAUSE_TIMER], u64),
	OSIM_RF("irq_in_resend", iq.cnt.r.raised[OSIM_CAUSE_RESEND], u64),
	OSIM_RF("irq_in_latched", iq.cnt.r.latch_events, u64),
	OSIM_RF("irq_in_masked_dropped", iq.cnt.r.masked_dropped, u64),
	OSIM_RF("in_resend_writes", iq.cnt.r.resend_writes, u64),
	OSIM_RF("in_ack_excess", iq.cnt.r.ack_excess, u64),
	OSIM_RF("in_left", iq.cnt.r.left, u64),
	OSIM_RF("in_left_max_ns", iq.cnt.r.left_max_ns, u64),
	OSIM_RF("in_pkts", iq.pkts, u64),
	OSIM_RF("in_bytes", iq.bytes, u64),
	OSIM_RF("in_tso", iq.tso, u64),
	OSIM_RF("in_tso_segs", iq.tso_segs, u64),
	OSIM_RF("in_esp_tso", iq.esp_tso, u64),
	OSIM_RF("in_esp_tso_segs", iq.esp_tso_segs, u64),
	OSIM_RF("in_gather", iq.gather, u64),
	OSIM_RF("in_drop_bad", iq.drop_bad, u64),
	OSIM_RF("in_drop_link", iq.drop_link, u64),
	OSIM_RF("in_dbell_excess", iq.dbell_excess, u64),
	OSIM_RF("in_hangs", iq.hangs, u64),
	/* the line */
	OSIM_RF("irq_fired", irq_fired, atomic64_t),
	OSIM_RF("irq_lost", irq_lost, atomic64_t),
};

static void osim_dbg_field(struct dentry *dir, const char *name, void *p,
			   size_t size)
{
	const struct file_operations *fops;

	switch (size) {
	case 1:
		fops = &osim_u8_fops;
		break;
	case 4:
		fops = &osim_u32_fops;
		break;
	default:
		fops = &osim_u64_fops;
		break;
	}
	debugfs_create_file_unsafe(name, 0400, dir, p, fops);
}

/* ------------------------------------------------- ring files */

static int osim_lose_get(void *data, u64 *val)
{
	*val = atomic_read(&((struct osim_ring *)data)->lose_irq);
	return 0;
}

static int osim_lose_set(void *data, u64 val)
{
	if (val > INT_MAX)
		return -EINVAL;
	atomic_set(&((struct osim_ring *)data)->lose_irq, val);
	return 0;
}
DEFINE_DEBUGFS_ATTRIBUTE(osim_lose_fops, osim_lose_get, osim_lose_set,
			 "%llu\n");

static int osim_aoe_get(void *data, u64 *val)
{
	*val = atomic_read(&((struct osim_ring *)data)->oq.arrive_on_enable);
	return 0;
}

static int osim_aoe_set(void *data, u64 val)
{
	if (val > INT_MAX)
		return -EINVAL;
	atomic_set(&((struct osim_ring *)data)->oq.arrive_on_enable, val);
	return 0;
}
DEFINE_DEBUGFS_ATTRIBUTE(osim_aoe_fops, osim_aoe_get, osim_aoe_set,
			 "%llu\n");

static int osim_fill_get(void *data, u64 *val)
{
	*val = READ_ONCE(((struct osim_ring *)data)->oq.fill);
	return 0;
}

static int osim_fill_set(void *data, u64 val)
{
	struct osim_oq *oq = &((struct osim_ring *)data)->oq;
	unsigned long flags;

	if (val > 1)
		return -EINVAL;
	spin_lock_irqsave(&oq->lock, flags);
	if (val && !oq->fill)
		oq->fill_faults++;
	oq->fill = val;
	spin_unlock_irqrestore(&oq->lock, flags);
	return 0;
}
DEFINE_DEBUGFS_ATTRIBUTE(osim_fill_fops, osim_fill_get, osim_fill_set,
			 "%llu\n");

static int osim_hang_get(void *data, u64 *val)
{
	*val = READ_ONCE(((struct osim_ring *)data)->iq.hung);
	return 0;
}

/* in_hang: 1 stops the block reading the input ring, enable bit kept. */
static int osim_hang_set(void *data, u64 val)
{
	struct osim_iq *iq = &((struct osim_ring *)data)->iq;
	unsigned long flags;

	if (val > 1)
		return -EINVAL;
	spin_lock_irqsave(&iq->lock, flags);
	if (val && !iq->hung)
		iq->hangs++;
	iq->hung = val;
	spin_unlock_irqrestore(&iq->lock, flags);
	if (!val)
		osim_engine_kick(((struct osim_ring *)data)->dev);
	return 0;
}
DEFINE_DEBUGFS_ATTRIBUTE(osim_hang_fops, osim_hang_get, osim_hang_set,
			 "%llu\n");

static int osim_inject_set(void *data, u64 val)
{
	struct osim_ring *ring = data;

	if (!val || val > (1 << 20))
		return -EINVAL;
	atomic_add(val, &ring->oq.inject);
	osim_engine_kick(ring->dev);
	return 0;
}
DEFINE_DEBUGFS_ATTRIBUTE(osim_inject_fops, NULL, osim_inject_set, "%llu\n");

/* Fault: count @val instructions done that the host never gave. */
static int osim_in_excess_set(void *data, u64 val)
{
	struct osim_iq *iq = &((struct osim_ring *)data)->iq;
	unsigned long flags;

	if (!val || val > U16_MAX)
		return -EINVAL;
	spin_lock_irqsave(&iq->lock, flags);
	osim_cnt_add(&iq->cnt, val);
	spin_unlock_irqrestore(&iq->lock, flags);
	return 0;
}
DEFINE_DEBUGFS_ATTRIBUTE(osim_in_excess_fops, NULL, osim_in_excess_set,
			 "%llu\n");

static const struct {
	const char *name;
	u32 start;
} osim_reg_names[] = {
	{ "IN_CONTROL", OCTEP_SDP_R_IN_CONTROL_START },
	{ "IN_ENABLE", OCTEP_SDP_R_IN_ENABLE_START },
	{ "IN_INSTR_BADDR", OCTEP_SDP_R_IN_INSTR_BADDR_START },
	{ "IN_INSTR_RSIZE", OCTEP_SDP_R_IN_INSTR_RSIZE_START },
	{ "IN_INSTR_DBELL", OCTEP_SDP_R_IN_INSTR_DBELL_START },
	{ "IN_CNTS", OCTEP_SDP_R_IN_CNTS_START },
	{ "IN_INT_LEVELS", OCTEP_SDP_R_IN_INT_LEVELS_START },
	{ "OUT_CNTS", OCTEP_SDP_R_OUT_CNTS_START },
	{ "OUT_INT_LEVELS", OCTEP_SDP_R_OUT_INT_LEVELS_START },
	{ "OUT_SLIST_BADDR", OCTEP_SDP_R_OUT_SLIST_BADDR_START },
	{ "OUT_SLIST_RSIZE", OCTEP_SDP_R_OUT_SLIST_RSIZE_START },
	{ "OUT_SLIST_DBELL", OCTEP_SDP_R_OUT_SLIST_DBELL_START },
	{ "OUT_CONTROL", OCTEP_SDP_R_OUT_CONTROL_START },
	{ "OUT_ENABLE", OCTEP_SDP_R_OUT_ENABLE_START },
};

static int osim_ring_regs_show(struct seq_file *s, void *unused)
{
	struct osim_ring *ring = s->private;
	unsigned int i;
	u32 off;

	for (i = 0; i < ARRAY_SIZE(osim_reg_names); i++) {
		off = OCTEP_SDP_RING_REG(osim_reg_names[i].start, ring->idx);
		seq_printf(s, "%-16s 0x%06x 0x%016llx\n", osim_reg_names[i].name,
			   off, osim_read64(ring->dev, off));
	}
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(osim_ring_regs);

/* ------------------------------------------------- device files */

static const char * const osim_resend_names[] = {
	[OSIM_RESEND_LEVEL] = "level",
	[OSIM_RESEND_NONZERO] = "nonzero",
	[OSIM_RESEND_NEVER] = "never",
};

static const char * const osim_masked_names[] = {
	[OSIM_MASKED_LATCH] = "latch",
	[OSIM_MASKED_DROP] = "drop",
};

/*
 * A device setting that is one of a few names: resend_pending, masked.
 * The rules read the u32 locklessly (READ_ONCE()): a change applies from
 * the next raise or RESEND on.
 */
struct osim_choice {
	const char * const *names;
	unsigned int n;
	size_t off;	/* of the u32 in struct osim_dev */
};

static const struct osim_choice osim_choice_resend = {
	osim_resend_names, ARRAY_SIZE(osim_resend_names),
	offsetof(struct osim_dev, resend_pending),
};

static const struct osim_choice osim_choice_masked = {
	osim_masked_names, ARRAY_SIZE(osim_masked_names),
	offsetof(struct osim_dev, masked),
};

static ssize_t osim_choice_read(const struct osim_choice *ch, struct file *f,
				char __user *ubuf, size_t len, loff_t *ppos)
{
	u32 *val = f->private_data + ch->off;
	char buf[16];
	int n;

	n = scnprintf(buf, sizeof(buf), "%s\n", ch->names[READ_ONCE(*val)]);
	return simple_read_from_buffer(ubuf, len, ppos, buf, n);
}

static ssize_t osim_choice_write(const struct osim_choice *ch, struct file *f,
				 const char __user *ubuf, size_t len)
{
	u32 *val = f->private_data + ch->off;
	char buf[16];
	int i;

	if (len >= sizeof(buf))
		return -EINVAL;
	if (copy_from_user(buf, ubuf, len))
		return -EFAULT;
	buf[len] = '\0';
	i = __sysfs_match_string(ch->names, ch->n, buf);
	if (i < 0)
		return i;
	WRITE_ONCE(*val, i);
	return len;
}

#define OSIM_CHOICE_FOPS(name)						\
static ssize_t osim_##name##_read(struct file *f, char __user *ubuf,	\
				  size_t len, loff_t *ppos)		\
{									\
	return osim_choice_read(&osim_choice_##name, f, ubuf, len, ppos); \
}									\
static ssize_t osim_##name##_write(struct file *f,			\
				   const char __user *ubuf,		\
				   size_t len, loff_t *ppos)		\
{									\
	return osim_choice_write(&osim_choice_##name, f, ubuf, len);	\
}									\
static const struct file_operations osim_##name##_fops = {		\
	.owner	= THIS_MODULE,						\
	.open	= simple_open,						\
	.read	= osim_##name##_read,					\
	.write	= osim_##name##_write,					\
	.llseek	= default_llseek,					\
}

OSIM_CHOICE_FOPS(resend);
OSIM_CHOICE_FOPS(masked);

static int osim_share_get(void *data, u64 *val)
{
	*val = READ_ONCE(((struct osim_dev *)data)->delay_share);
	return 0;
}

static int osim_share_set(void *data, u64 val)
{
	if (val > 1000)
		return -EINVAL;
	WRITE_ONCE(((struct osim_dev *)data)->delay_share, val);
	return 0;
}
DEFINE_DEBUGFS_ATTRIBUTE(osim_share_fops, osim_share_get, osim_share_set,
			 "%llu\n");

static int osim_delay_get(void *data, u64 *val)
{
	*val = READ_ONCE(((struct osim_dev *)data)->delay_ns);
	return 0;
}

static int osim_delay_set(void *data, u64 val)
{
	if (val > NSEC_PER_SEC * 10)
		return -EINVAL;
	WRITE_ONCE(((struct osim_dev *)data)->delay_ns, val);
	return 0;
}
DEFINE_DEBUGFS_ATTRIBUTE(osim_delay_fops, osim_delay_get, osim_delay_set,
			 "%llu\n");

static int osim_left_get(void *data, u64 *val)
{
	*val = READ_ONCE(((struct osim_dev *)data)->left_ns);
	return 0;
}

static int osim_left_set(void *data, u64 val)
{
	if (!val || val > NSEC_PER_SEC * 10)
		return -EINVAL;
	WRITE_ONCE(((struct osim_dev *)data)->left_ns, val);
	return 0;
}
DEFINE_DEBUGFS_ATTRIBUTE(osim_left_fops, osim_left_get, osim_left_set,
			 "%llu\n");

/*
 * host_sleep MS: a system sleep as the bound driver sees it - its suspend
 * callback, MS milliseconds, its resume callback - under the device lock,
 * as the PM core calls them; the block itself runs on. The VM cannot take
 * a real test sleep (pm_test): its root is on virtio-9p, which does not
 * come back from one.
 */
static int osim_sleep_set(void *data, u64 ms)
{
	const struct dev_pm_ops *pm;
	struct osim_dev *dev = data;
	struct device *d;
	int err;

	if (ms > 60 * MSEC_PER_SEC)
		return -EINVAL;
	if (!dev->aux_added)
		return -ENODEV;
	d = &dev->asdp->sdp.adev.dev;
	device_lock(d);
	/* NULL without CONFIG_PM_SLEEP (pm_sleep_ptr()): nothing to call. */
	pm = d->driver ? d->driver->pm : NULL;
	if (!pm || !pm->suspend || !pm->resume) {
		err = -ENODEV;
		goto out;
	}
	err = pm->suspend(d);
	if (err)
		goto out;
	msleep(ms);
	err = pm->resume(d);
out:
	device_unlock(d);
	return err;
}
DEFINE_DEBUGFS_ATTRIBUTE(osim_sleep_fops, NULL, osim_sleep_set, "%llu\n");

static int osim_stall_get(void *data, u64 *val)
{
	struct osim_dev *dev = data;
	s64 left = ktime_ms_delta(READ_ONCE(dev->stall_until), ktime_get());

	*val = max_t(s64, left, 0);
	return 0;
}

static int osim_stall_set(void *data, u64 val)
{
	struct osim_dev *dev = data;

	if (val > 60000)
		return -EINVAL;
	WRITE_ONCE(dev->stall_until, ktime_add_ms(ktime_get(), val));
	if (val)
		dev->stalls++;
	return 0;
}
DEFINE_DEBUGFS_ATTRIBUTE(osim_stall_fops, osim_stall_get, osim_stall_set,
			 "%llu\n");

static int osim_gone_get(void *data, u64 *val)
{
	*val = test_bit(OSIM_F_GONE, &((struct osim_dev *)data)->flags);
	return 0;
}

static int osim_gone_set(void *data, u64 val)
{
	struct osim_dev *dev = data;

	if (val != 1)
		return -EINVAL;
	set_bit(OSIM_F_GONE, &dev->flags);
	osim_engine_kick(dev);
	return 0;
}
DEFINE_DEBUGFS_ATTRIBUTE(osim_gone_fops, osim_gone_get, osim_gone_set,
			 "%llu\n");

static int osim_cpu_get(void *data, u64 *val)
{
	*val = (s64)READ_ONCE(((struct osim_dev *)data)->engine_cpu);
	return 0;
}

static int osim_cpu_set(void *data, u64 val)
{
	s64 cpu = (s64)val;

	if (cpu < -1 || cpu > INT_MAX)
		return -EINVAL;
	return osim_engine_set_cpu(data, cpu);
}
DEFINE_DEBUGFS_ATTRIBUTE_SIGNED(osim_cpu_fops, osim_cpu_get, osim_cpu_set,
				"%lld\n");

static int osim_mbps_get(void *data, u64 *val)
{
	*val = READ_ONCE(((struct osim_dev *)data)->link_mbps);
	return 0;
}

static int osim_mbps_set(void *data, u64 val)
{
	if (val > 1000000)
		return -EINVAL;
	WRITE_ONCE(((struct osim_dev *)data)->link_mbps, val);
	return 0;
}
DEFINE_DEBUGFS_ATTRIBUTE(osim_mbps_fops, osim_mbps_get, osim_mbps_set,
			 "%llu\n");

static int osim_atomic64_get(void *data, u64 *val)
{
	*val = atomic64_read(data);
	return 0;
}
DEFINE_DEBUGFS_ATTRIBUTE(osim_atomic64_fops, osim_atomic64_get, NULL,
			 "%llu\n");

/* regs: write "OFF VAL" to write, "OFF" to choose what a read returns. */
static ssize_t osim_regs_read(struct file *f, char __user *ubuf, size_t len,
			      loff_t *ppos)
{
	struct osim_dev *dev = f->private_data;
	u32 off = READ_ONCE(dev->regs_off);
	char buf[48];
	int n;

	n = scnprintf(buf, sizeof(buf), "0x%06x 0x%016llx\n", off,
		      osim_read64(dev, off));
	return simple_read_from_buffer(ubuf, len, ppos, buf, n);
}

static ssize_t osim_regs_write(struct file *f, const char __user *ubuf,
			       size_t len, loff_t *ppos)
{
	struct osim_dev *dev = f->private_data;
	char buf[64], extra;
	u64 val;
	u32 off;
	int n;

	if (len >= sizeof(buf))
		return -EINVAL;
	if (copy_from_user(buf, ubuf, len))
		return -EFAULT;
	buf[len] = '\0';
	n = sscanf(buf, "%i %lli %c", &off, &val, &extra);
	if (n < 1 || n > 2 || off & 7)
		return -EINVAL;
	WRITE_ONCE(dev->regs_off, off);
	if (n == 2)
		osim_write64(dev, off, val);
	return len;
}

static const struct file_operations osim_regs_fops = {
	.owner	= THIS_MODULE,
	.open	= simple_open,
	.read	= osim_regs_read,
	.write	= osim_regs_write,
	.llseek	= default_llseek,
};

/* ------------------------------------------------- host stub */

#define OSIM_STUB_MAX_BYTES	(16 << 20)
#define OSIM_STUB_SHOW		8	/* buffers whose length word is shown */

static void osim_stub_free(struct osim_dev *dev)
{
	struct osim_stub *st = &dev->stub;
	unsigned int r;

	for (r = 0; r < dev->num_rings; r++) {
		if (st->oq_desc[r])
			dma_free_coherent(&dev->dev,
					  st->rsize * sizeof(*st->oq_desc[r]),
					  st->oq_desc[r], st->oq_desc_dma[r]);
		if (st->iq_instr[r])
			dma_free_coherent(&dev->dev,
					  st->rsize * sizeof(*st->iq_instr[r]),
					  st->iq_instr[r], st->iq_instr_dma[r]);
		st->oq_desc[r] = NULL;
		st->iq_instr[r] = NULL;
	}
	if (st->bufs)
		dma_free_coherent(&dev->dev,
				  (size_t)dev->num_rings * st->rsize * st->bufsize +
				  ETH_ZLEN, st->bufs, st->bufs_dma);
	st->bufs = NULL;
	st->active = false;
}

/* The frame the stub transmits sits after the receive buffers. */
static size_t osim_stub_frame_off(struct osim_dev *dev)
{
	return (size_t)dev->num_rings * dev->stub.rsize * dev->stub.bufsize;
}

static int osim_stub_start(struct osim_dev *dev, u32 rsize, u32 bufsize)
{
	struct osim_stub *st = &dev->stub;
	unsigned int r, i;
	struct ethhdr *eth;
	size_t bytes;

	if (st->active)
		return -EBUSY;
	if (!rsize || rsize > 4096 || bufsize < 64 ||
	    bufsize > FIELD_MAX(OCTEP_SDP_OUT_CTL_BUFSIZE))
		return -EINVAL;
	bytes = (size_t)dev->num_rings * rsize * bufsize;
	if (bytes > OSIM_STUB_MAX_BYTES)
		return -EINVAL;

	st->rsize = rsize;
	st->bufsize = bufsize;
	st->bufs = dma_alloc_coherent(&dev->dev, bytes + ETH_ZLEN,
				      &st->bufs_dma, GFP_KERNEL);
	if (!st->bufs)
		goto nomem;
	eth = st->bufs + bytes;
	eth_broadcast_addr(eth->h_dest);
	ether_addr_copy(eth->h_source, dev->asdp->sdp.mac_addr);
	eth->h_proto = htons(ETH_P_802_EX1);	/* local experimental */

	for (r = 0; r < dev->num_rings; r++) {
		st->oq_desc[r] = dma_alloc_coherent(&dev->dev,
						    rsize * sizeof(*st->oq_desc[r]),
						    &st->oq_desc_dma[r], GFP_KERNEL);
		st->iq_instr[r] = dma_alloc_coherent(&dev->dev,
						     rsize * sizeof(*st->iq_instr[r]),
						     &st->iq_instr_dma[r], GFP_KERNEL);
		if (!st->oq_desc[r] || !st->iq_instr[r])
			goto nomem;
		for (i = 0; i < rsize; i++)
			st->oq_desc[r][i].buffer_ptr =
				cpu_to_le64(st->bufs_dma +
					    ((size_t)r * rsize + i) * bufsize);
	}
	st->active = true;

	/* Program the rings as a host would; interrupt levels are the test's. */
	for (r = 0; r < dev->num_rings; r++) {
		osim_write64(dev, OCTEP_SDP_R_OUT_ENABLE(r), 0);
		osim_write64(dev, OCTEP_SDP_R_OUT_SLIST_BADDR(r),
			     st->oq_desc_dma[r]);
		osim_write64(dev, OCTEP_SDP_R_OUT_SLIST_RSIZE(r), rsize);
		osim_write64(dev, OCTEP_SDP_R_OUT_CONTROL(r), bufsize);
		osim_write64(dev, OCTEP_SDP_R_OUT_ENABLE(r),
			     OCTEP_SDP_RING_ENABLE);
		osim_write64(dev, OCTEP_SDP_R_OUT_SLIST_DBELL(r), rsize);
		osim_write64(dev, OCTEP_SDP_R_IN_ENABLE(r), 0);
		osim_write64(dev, OCTEP_SDP_R_IN_INSTR_BADDR(r),
			     st->iq_instr_dma[r]);
		osim_write64(dev, OCTEP_SDP_R_IN_INSTR_RSIZE(r), rsize);
		osim_write64(dev, OCTEP_SDP_R_IN_ENABLE(r),
			     OCTEP_SDP_RING_ENABLE);
	}
	return 0;

nomem:
	osim_stub_free(dev);
	return -ENOMEM;
}

/**
 * osim_stub_stop() - the host stub lets go: rings off, memory freed
 * @dev: device
 */
void osim_stub_stop(struct osim_dev *dev)
{
	unsigned int r;

	mutex_lock(&dev->stub_lock);
	if (dev->stub.active) {
		for (r = 0; r < dev->num_rings; r++) {
			osim_write64(dev, OCTEP_SDP_R_OUT_ENABLE(r), 0);
			osim_write64(dev, OCTEP_SDP_R_IN_ENABLE(r), 0);
		}
		osim_stub_free(dev);
	}
	mutex_unlock(&dev->stub_lock);
}

/* "tx RING N": N instructions of one 60-byte frame, then the doorbell. */
static int osim_stub_tx(struct osim_dev *dev, u32 r, u32 n)
{
	struct osim_stub *st = &dev->stub;
	u32 head, i;

	if (!st->active)
		return -ENODEV;
	if (r >= dev->num_rings || !n || n > st->rsize)
		return -EINVAL;
	/* The model's own head: the stub writes where the block will read. */
	head = READ_ONCE(dev->rings[r].iq.head) +
	       READ_ONCE(dev->rings[r].iq.pending);
	for (i = 0; i < n; i++) {
		struct octep_sdp_instr *ins = &st->iq_instr[r][(head + i) % st->rsize];

		ins->dptr = cpu_to_le64(st->bufs_dma + osim_stub_frame_off(dev));
		ins->flags = cpu_to_le64(FIELD_PREP(OCTEP_SDP_TX_LEN, ETH_ZLEN));
		ins->csum = 0;
	}
	dma_wmb();
	osim_write64(dev, OCTEP_SDP_R_IN_INSTR_DBELL(r), n);
	return 0;
}

static ssize_t osim_stub_read(struct file *f, char __user *ubuf, size_t len,
			      loff_t *ppos)
{
	struct osim_dev *dev = f->private_data;
	struct osim_stub *st = &dev->stub;
	unsigned int r, i;
	size_t size = 64 + dev->num_rings * (16 + OSIM_STUB_SHOW * 24);
	ssize_t ret;
	char *buf;
	int n;

	buf = kmalloc(size, GFP_KERNEL);
	if (!buf)
		return -ENOMEM;
	mutex_lock(&dev->stub_lock);
	if (!st->active) {
		n = scnprintf(buf, size, "inactive\n");
		goto out;
	}
	n = scnprintf(buf, size, "active rsize=%u bufsize=%u\n", st->rsize,
		      st->bufsize);
	for (r = 0; r < dev->num_rings; r++) {
		n += scnprintf(buf + n, size - n, "ring%u", r);
		for (i = 0; i < min(st->rsize, OSIM_STUB_SHOW); i++) {
			struct octep_sdp_resp_hdr *h;

			h = st->bufs + ((size_t)r * st->rsize + i) * st->bufsize;
			n += scnprintf(buf + n, size - n, " len%u=%llu", i,
				       be64_to_cpu(READ_ONCE(h->length)));
		}
		n += scnprintf(buf + n, size - n, "\n");
	}
out:
	mutex_unlock(&dev->stub_lock);
	ret = simple_read_from_buffer(ubuf, len, ppos, buf, n);
	kfree(buf);
	return ret;
}

static ssize_t osim_stub_write(struct file *f, const char __user *ubuf,
			       size_t len, loff_t *ppos)
{
	struct osim_dev *dev = f->private_data;
	char buf[64], cmd[8];
	u32 a, b;
	int n, err;

	if (len >= sizeof(buf))
		return -EINVAL;
	if (copy_from_user(buf, ubuf, len))
		return -EFAULT;
	buf[len] = '\0';
	n = sscanf(buf, "%7s %u %u", cmd, &a, &b);
	if (n < 1)
		return -EINVAL;
	if (!strcmp(cmd, "stop") && n == 1) {
		osim_stub_stop(dev);
		return len;
	}
	mutex_lock(&dev->stub_lock);
	if (!strcmp(cmd, "start") && n == 3) {
		struct device *adev = &dev->asdp->sdp.adev.dev;

		/*
		 * A driver owns the rings. Under the device lock, which the
		 * driver core holds across a probe: a bind that comes after
		 * sees the rings enabled and refuses (octep_ipsec checks).
		 */
		device_lock(adev);
		err = adev->driver ? -EBUSY : osim_stub_start(dev, a, b);
		device_unlock(adev);
	} else if (!strcmp(cmd, "tx") && n == 3) {
		err = osim_stub_tx(dev, a, b);
	} else {
		err = -EINVAL;
	}
	mutex_unlock(&dev->stub_lock);
	return err ? err : len;
}

static const struct file_operations osim_stub_fops = {
	.owner	= THIS_MODULE,
	.open	= simple_open,
	.read	= osim_stub_read,
	.write	= osim_stub_write,
	.llseek	= default_llseek,
};

/* ------------------------------------------------- directories */

static void osim_debugfs_ring_add(struct osim_ring *ring)
{
	struct dentry *dir;
	char name[16];
	unsigned int i;

	snprintf(name, sizeof(name), "ring%u", ring->idx);
	dir = debugfs_create_dir(name, ring->dev->dbg);
	ring->dbg = dir;
	for (i = 0; i < ARRAY_SIZE(osim_ring_fields); i++)
		osim_dbg_field(dir, osim_ring_fields[i].name,
			       (void *)ring + osim_ring_fields[i].off,
			       osim_ring_fields[i].size);
	debugfs_create_file_unsafe("lose_irq", 0600, dir, ring, &osim_lose_fops);
	debugfs_create_file_unsafe("arrive_on_enable", 0600, dir, ring,
				   &osim_aoe_fops);
	debugfs_create_file_unsafe("fill", 0600, dir, ring, &osim_fill_fops);
	debugfs_create_file_unsafe("in_hang", 0600, dir, ring, &osim_hang_fops);
	debugfs_create_file_unsafe("inject", 0200, dir, ring, &osim_inject_fops);
	debugfs_create_file_unsafe("in_excess", 0200, dir, ring,
				   &osim_in_excess_fops);
	debugfs_create_file("regs", 0400, dir, ring, &osim_ring_regs_fops);
}

/**
 * osim_debugfs_dev_add() - create octep_sim<ID>/ and its files
 * @dev: device, rings and engine ready
 */
void osim_debugfs_dev_add(struct osim_dev *dev)
{
	struct dentry *dir;
	unsigned int i;

	dir = debugfs_create_dir(dev_name(&dev->dev), osim_dbg_root);
	dev->dbg = dir;
	debugfs_create_file("resend_pending", 0600, dir, dev, &osim_resend_fops);
	debugfs_create_file("masked", 0600, dir, dev, &osim_masked_fops);
	debugfs_create_file_unsafe("delay_ns", 0600, dir, dev, &osim_delay_fops);
	debugfs_create_file_unsafe("delay_share", 0600, dir, dev,
				   &osim_share_fops);
	debugfs_create_file_unsafe("stall_ms", 0600, dir, dev, &osim_stall_fops);
	debugfs_create_file_unsafe("surprise", 0600, dir, dev, &osim_gone_fops);
	debugfs_create_file_unsafe("left_ns", 0600, dir, dev, &osim_left_fops);
	debugfs_create_file_unsafe("host_sleep", 0200, dir, dev,
				   &osim_sleep_fops);
	debugfs_create_file_unsafe("engine_cpu", 0600, dir, dev, &osim_cpu_fops);
	debugfs_create_file_unsafe("link_mbps", 0600, dir, dev, &osim_mbps_fops);
	osim_dbg_field(dir, "stalls", &dev->stalls, sizeof(dev->stalls));
	osim_dbg_field(dir, "engine_wakeups", &dev->engine_wakeups,
		       sizeof(dev->engine_wakeups));
	osim_dbg_field(dir, "num_rings", &dev->num_rings,
		       sizeof(dev->num_rings));
	debugfs_create_file_unsafe("wire_drops", 0400, dir, &dev->wire_drops,
				   &osim_atomic64_fops);
	debugfs_create_file_unsafe("bad_regs", 0400, dir, &dev->bad_regs,
				   &osim_atomic64_fops);
	osim_dbg_field(dir, "rss_drops", &dev->rss_drops,
		       sizeof(dev->rss_drops));
	debugfs_create_file("regs", 0600, dir, dev, &osim_regs_fops);
	debugfs_create_file("host_stub", 0600, dir, dev, &osim_stub_fops);
	for (i = 0; i < dev->num_rings; i++)
		osim_debugfs_ring_add(&dev->rings[i]);
	osim_hostile_debugfs(dev);
}

/**
 * osim_debugfs_dev_del() - remove octep_sim<ID>/; waits out readers/writers
 * @dev: device
 */
void osim_debugfs_dev_del(struct osim_dev *dev)
{
	debugfs_remove(dev->dbg);
	dev->dbg = NULL;
}

/**
 * osim_debugfs_init() - create /sys/kernel/debug/octep_sim
 *
 * Return: 0 (debugfs failures are not fatal).
 */
int osim_debugfs_init(void)
{
	osim_dbg_root = debugfs_create_dir(OSIM_NAME, NULL);
	return 0;
}

/**
 * osim_debugfs_exit() - remove /sys/kernel/debug/octep_sim
 */
void osim_debugfs_exit(void)
{
	debugfs_remove(osim_dbg_root);
}
