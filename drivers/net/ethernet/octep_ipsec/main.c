// SPDX-License-Identifier: GPL-2.0
/*
 * octep_ipsec: module, the core's probe/remove, and the two ways in: the
 * auxiliary driver for the octep_sim model ("octep_sim.sdp") and a
 * pci_driver for OCTEON SDP physical functions. Both hand the core a
 * struct octep_sdp_dev (register ops, ring IRQs, DMA device).
 *
 * The PCI glue has run on no OCTEON hardware, only in QEMU on octep-vfu's
 * PCI function (scripts/vm --pci, pci_probe.sh). It maps BAR0 and the
 * MSI-X vectors and provides the register ops; firmware readiness, ring
 * ownership and the MAC from the control mailbox are not done (see the
 * .rst).
 */
#include <linux/auxiliary_bus.h>
#include <linux/debugfs.h>
#include <linux/fault-inject.h>
#include <linux/io-64-nonatomic-lo-hi.h>
#include <linux/module.h>
#include <linux/pci.h>
#include <linux/rtnetlink.h>
#include <linux/u64_stats_sync.h>
#include <linux/uaccess.h>

#include "octep_ipsec.h"

bool octep_resend;

module_param_named(resend, octep_resend, bool, 0444);
MODULE_PARM_DESC(resend,
		 "Diagnostic: write OUT_CNTS RESEND (bit 59) after each completed visit, as octeon_ep does (default 0)");

/* ------------------------------------------------ debugfs */

/*
 * octep_ipsec/ in debugfs: the fault attributes (below) and a directory
 * per device, named after the bound device, holding the test-only
 * switches "service" and "rearm". They are the tests' business, not the
 * module's interface: per device, and each set without a reload.
 */
static struct dentry *octep_dbg;

static const char * const octep_service_names[] = {
	[OCTEP_SERVICE_VISIT] = "visit",
	[OCTEP_SERVICE_PASS] = "pass",
};

static const char * const octep_rearm_names[] = {
	[OCTEP_REARM_REREAD] = "reread",
	[OCTEP_REARM_NONE] = "none",
};

/* One of @names, from a write: its index, or -EINVAL (-EFAULT). */
static int octep_dbg_word(const char __user *ubuf, size_t count,
			  const char * const *names, size_t n)
{
	char buf[16];

	if (!count || count >= sizeof(buf))
		return -EINVAL;
	if (copy_from_user(buf, ubuf, count))
		return -EFAULT;
	buf[count] = '\0';
	return __sysfs_match_string(names, n, buf);
}

static ssize_t octep_dbg_show(char __user *ubuf, size_t count, loff_t *ppos,
			      const char *word)
{
	char buf[16];
	int len = scnprintf(buf, sizeof(buf), "%s\n", word);

	return simple_read_from_buffer(ubuf, count, ppos, buf, len);
}

static ssize_t octep_service_read(struct file *file, char __user *ubuf,
				  size_t count, loff_t *ppos)
{
	struct octep_dev *oct = file->private_data;

	return octep_dbg_show(ubuf, count, ppos,
			      octep_service_names[READ_ONCE(oct->service)]);
}

/*
 * Refused (-EBUSY) while the datapath is up (the interface up) or an XDP
 * program is attached (the watchdog's pass runs none): what it set
 * up follows the servicing (the page pools' NAPI binding, the watchdog
 * timer's softirq mode), and a watchdog making passes beside a visit that
 * takes no pass flag would be two servicers in one ring. Down (@up is
 * false under RTNL: no NAPI, no page pool, the watchdog stopped), nothing
 * runs that reads it; RTNL keeps ndo_open and a resume out until the switch
 * is done.
 */
static ssize_t octep_service_write(struct file *file, const char __user *ubuf,
				   size_t count, loff_t *ppos)
{
	struct octep_dev *oct = file->private_data;
	int val, err = 0;

	val = octep_dbg_word(ubuf, count, octep_service_names,
			     ARRAY_SIZE(octep_service_names));
	if (val < 0)
		return val;
	rtnl_lock();
	if (val != oct->service) {
		/* service=pass's watchdog pass cannot run XDP. */
		if (oct->up || oct->xdp_prog)
			err = -EBUSY;
		else
			octep_wd_set_service(oct, val);
		/* The netdev outlives these files (octep_core_remove()). */
		if (!err && oct->netdev)
			octep_xdp_features(oct);
	}
	rtnl_unlock();
	if (err)
		return err;
	return count;
}

static ssize_t octep_rearm_read(struct file *file, char __user *ubuf,
				size_t count, loff_t *ppos)
{
	struct octep_dev *oct = file->private_data;

	return octep_dbg_show(ubuf, count, ppos,
			      octep_rearm_names[READ_ONCE(oct->rearm)]);
}

static ssize_t octep_rearm_write(struct file *file, const char __user *ubuf,
				 size_t count, loff_t *ppos)
{
	struct octep_dev *oct = file->private_data;
	int val;

	val = octep_dbg_word(ubuf, count, octep_rearm_names,
			     ARRAY_SIZE(octep_rearm_names));
	if (val < 0)
		return val;
	/* Any time: see the poll's read of it (octep_poll_ring()). */
	WRITE_ONCE(oct->rearm, val);
	return count;
}

static const struct file_operations octep_service_fops = {
	.owner = THIS_MODULE,
	.open = simple_open,
	.read = octep_service_read,
	.write = octep_service_write,
	.llseek = default_llseek,
};

static const struct file_operations octep_rearm_fops = {
	.owner = THIS_MODULE,
	.open = simple_open,
	.read = octep_rearm_read,
	.write = octep_rearm_write,
	.llseek = default_llseek,
};

/* Before the netdev: its files are there when the netdev appears. */
static void octep_dbg_dev_init(struct octep_dev *oct)
{
	oct->dbg = debugfs_create_dir(dev_name(oct->dev), octep_dbg);
	debugfs_create_file("service", 0600, oct->dbg, oct,
			    &octep_service_fops);
	debugfs_create_file("rearm", 0600, oct->dbg, oct, &octep_rearm_fops);
}

/* Waits out a read or write in progress (debugfs's removal does). */
static void octep_dbg_dev_fini(struct octep_dev *oct)
{
	debugfs_remove_recursive(oct->dbg);
	oct->dbg = NULL;
}

/**
 * octep_core_probe() - set up a device on an SDP block
 * @dev: the bound device (aux or PCI); names the devlink instance
 * @sdp: the block's register ops, ring IRQs and DMA device
 *
 * Return: the device, or an ERR_PTR.
 */
struct octep_dev *octep_core_probe(struct device *dev,
				   struct octep_sdp_dev *sdp)
{
	struct octep_dev *oct;
	unsigned int q;
	int err;

	if (!sdp->ops || !sdp->dma_dev || !sdp->num_rings ||
	    sdp->num_rings > OCTEP_SDP_MAX_RINGS) {
		dev_err(dev, "bad SDP block description (%u rings)\n",
			sdp->num_rings);
		return ERR_PTR(-EINVAL);
	}
	oct = octep_devlink_alloc(dev);
	if (!oct)
		return ERR_PTR(-ENOMEM);
	oct->dev = dev;
	oct->sdp = sdp;
	oct->max_rings = sdp->num_rings;
	oct->num_rings = sdp->num_rings;
	oct->rx_ring_size = OCTEP_RING_DEF;
	oct->tx_ring_size = OCTEP_RING_DEF;
	oct->rx_level = OCTEP_RX_LEVEL_DEF;
	oct->rx_copybreak = OCTEP_RX_COPYBREAK;
	oct->rx_time = OCTEP_RX_TIME_DEF;
	oct->tx_level = OCTEP_TX_LEVEL_DEF;
	oct->tx_time = OCTEP_TX_TIME_DEF;
	oct->rxwd_period_us = OCTEP_RXWD_PERIOD_DEF_US;
	oct->rxwd_skip_visited = true;
	oct->service = OCTEP_SERVICE_VISIT;
	oct->rearm = OCTEP_REARM_REREAD;
	for (q = 0; q < oct->max_rings; q++) {
		struct octep_qvec *qv = &oct->qv[q];

		qv->oct = oct;
		qv->idx = q;
		qv->irq = sdp->ring_irq[q];
		qv->oq.qv = qv;
		qv->iq.qv = qv;
		u64_stats_init(&qv->oq.stats.syncp);
		seqcount_init(&qv->oq.vlog_seq);
		u64_stats_init(&qv->iq.stats.syncp);
		u64_stats_init(&qv->iq.cstats.syncp);
		timer_setup(&qv->storm_timer, octep_storm_tick, 0);
	}
	octep_rss_init(oct);
	octep_wd_init(oct);
	err = octep_health_init(oct);
	if (err)
		goto err_free;

	err = octep_ipsec_init(oct);
	if (err)
		goto err_health;
	octep_dbg_dev_init(oct);
	err = octep_netdev_create(oct);
	if (err)
		goto err_dbg;
	err = octep_devlink_register(oct);
	if (err)
		goto err_netdev;
	return oct;

err_netdev:
	/* Its files first, as at removal: "service" reaches the netdev. */
	octep_dbg_dev_fini(oct);
	octep_netdev_destroy(oct);
	goto err_ipsec;
err_dbg:
	octep_dbg_dev_fini(oct);
err_ipsec:
	octep_ipsec_fini(oct);
err_health:
	octep_health_fini(oct);
err_free:
	octep_devlink_free(oct);
	return ERR_PTR(err);
}

/**
 * octep_core_remove() - undo octep_core_probe(); closes the netdev
 * @oct: device
 */
void octep_core_remove(struct octep_dev *oct)
{
	octep_devlink_unregister(oct);
	/*
	 * The debugfs files before the netdev: a "service" write sets its
	 * xdp_features, and removing the files waits for one in flight.
	 */
	octep_dbg_dev_fini(oct);
	octep_netdev_destroy(oct);
	/* After the netdev: unregistering flushed the offloaded states. */
	octep_ipsec_fini(oct);
	octep_health_fini(oct);
	octep_devlink_free(oct);
}

/* ------------------------------------------------ auxiliary: octep_sim */

/*
 * A ring enabled before we program any is in use by another agent on the
 * block: on the model, its host stub (debugfs host_stub "start"), which
 * refuses to start while a driver is bound. Binding by hand through sysfs
 * would otherwise take its rings from under it. The driver core holds the
 * device lock across probe, and the stub checks for a driver under the
 * same lock, so one of the two always sees the other.
 */
static bool octep_aux_rings_in_use(struct octep_sdp_dev *sdp)
{
	unsigned int q, n = min_t(unsigned int, sdp->num_rings,
				  OCTEP_SDP_MAX_RINGS);

	if (!sdp->ops)
		return false;	/* octep_core_probe() refuses it */
	for (q = 0; q < n; q++)
		if ((sdp->ops->read64(sdp, OCTEP_SDP_R_OUT_ENABLE(q)) |
		     sdp->ops->read64(sdp, OCTEP_SDP_R_IN_ENABLE(q))) &
		    OCTEP_SDP_RING_ENABLE)
			return true;
	return false;
}

static int octep_aux_probe(struct auxiliary_device *adev,
			   const struct auxiliary_device_id *id)
{
	struct octep_sdp_dev *sdp = to_octep_sdp_dev(adev);
	struct octep_dev *oct;

	if (octep_aux_rings_in_use(sdp)) {
		dev_err(&adev->dev,
			"the block's rings are enabled by another user (the model's host_stub?): not binding\n");
		return -EBUSY;
	}
	oct = octep_core_probe(&adev->dev, sdp);
	if (IS_ERR(oct))
		return PTR_ERR(oct);
	auxiliary_set_drvdata(adev, oct);
	return 0;
}

static void octep_aux_remove(struct auxiliary_device *adev)
{
	octep_core_remove(auxiliary_get_drvdata(adev));
}

/* System sleep: the block is not ours to power down, only our rings. */
static int octep_aux_suspend(struct device *dev)
{
	octep_netdev_suspend(dev_get_drvdata(dev));
	return 0;
}

static int octep_aux_resume(struct device *dev)
{
	return octep_netdev_resume(dev_get_drvdata(dev));
}

static DEFINE_SIMPLE_DEV_PM_OPS(octep_aux_pm_ops, octep_aux_suspend,
				octep_aux_resume);

static const struct auxiliary_device_id octep_aux_ids[] = {
	{ .name = "octep_sim." OCTEP_SDP_AUX_NAME },
	{ }
};
MODULE_DEVICE_TABLE(auxiliary, octep_aux_ids);

static struct auxiliary_driver octep_aux_driver = {
	.name = "ipsec",
	.probe = octep_aux_probe,
	.remove = octep_aux_remove,
	.id_table = octep_aux_ids,
	.driver = {
		.pm = pm_sleep_ptr(&octep_aux_pm_ops),
	},
};

/* ------------------------------------------------ PCI: OCTEON SDP PF */

/* MSI-X vectors before the first ring's, per chip (octeon_ep's CN9K). */
#define OCTEP_CN9K_NON_RING_VECS	16
#define OCTEP_PCI_MAX_RINGS		8

struct octep_pci {
	struct octep_sdp_dev sdp;
	void __iomem *bar0;
	struct octep_dev *oct;
};

static u64 octep_pci_read64(struct octep_sdp_dev *sdp, u32 off)
{
	struct octep_pci *p = container_of(sdp, struct octep_pci, sdp);

	return readq(p->bar0 + off);
}

static void octep_pci_write64(struct octep_sdp_dev *sdp, u32 off, u64 val)
{
	struct octep_pci *p = container_of(sdp, struct octep_pci, sdp);

	writeq(val, p->bar0 + off);
}

static const struct octep_sdp_ops octep_pci_ops = {
	.read64 = octep_pci_read64,
	.write64 = octep_pci_write64,
};

/* CN9K SDP PFs, whose register layout octep_sdp.h is. */
static const struct pci_device_id octep_pci_ids[] = {
	{ PCI_VDEVICE(CAVIUM, 0xb100), OCTEP_CN9K_NON_RING_VECS }, /* CN98 */
	{ PCI_VDEVICE(CAVIUM, 0xb200), OCTEP_CN9K_NON_RING_VECS }, /* CN93 */
	{ PCI_VDEVICE(CAVIUM, 0xb400), OCTEP_CN9K_NON_RING_VECS }, /* CNF95N */
	{ }
};

static int octep_pci_probe(struct pci_dev *pdev, const struct pci_device_id *id)
{
	unsigned int non_ring, rings, q;
	struct octep_dev *oct;
	struct octep_pci *p;
	int err, nvec;

	/* Bound by driver_override only (octep_pci_driver): check the ID. */
	id = pci_match_id(octep_pci_ids, pdev);
	if (!id)
		return -ENODEV;
	non_ring = id->driver_data;

	p = devm_kzalloc(&pdev->dev, sizeof(*p), GFP_KERNEL);
	if (!p)
		return -ENOMEM;
	err = pcim_enable_device(pdev);
	if (err)
		return err;
	err = dma_set_mask_and_coherent(&pdev->dev, DMA_BIT_MASK(64));
	if (err)
		return err;
	p->bar0 = pcim_iomap_region(pdev, 0, OCTEP_DRV_NAME);
	if (IS_ERR(p->bar0))
		return PTR_ERR(p->bar0);
	pci_set_master(pdev);

	rings = min_t(unsigned int, num_online_cpus(), OCTEP_PCI_MAX_RINGS);
	nvec = pci_alloc_irq_vectors(pdev, non_ring + 1, non_ring + rings,
				     PCI_IRQ_MSIX);
	if (nvec < 0)
		return nvec;
	rings = nvec - non_ring;

	p->sdp.ops = &octep_pci_ops;
	p->sdp.dma_dev = &pdev->dev;
	p->sdp.num_rings = rings;
	p->sdp.mbox_irq = pci_irq_vector(pdev, 0);
	for (q = 0; q < rings; q++)
		p->sdp.ring_irq[q] = pci_irq_vector(pdev, non_ring + q);
	/* The MAC comes from the firmware's mailbox: not done, random. */
	/* What a slot reset restores (octep_pci_slot_reset()). */
	pci_save_state(pdev);

	oct = octep_core_probe(&pdev->dev, &p->sdp);
	if (IS_ERR(oct)) {
		pci_free_irq_vectors(pdev);
		return PTR_ERR(oct);
	}
	p->oct = oct;
	pci_set_drvdata(pdev, p);
	return 0;
}

static void octep_pci_remove(struct pci_dev *pdev)
{
	struct octep_pci *p = pci_get_drvdata(pdev);

	octep_core_remove(p->oct);
	pci_free_irq_vectors(pdev);
}

/* The same core suspend and resume as the auxiliary driver's. */
static int octep_pci_suspend(struct device *dev)
{
	struct octep_pci *p = dev_get_drvdata(dev);

	octep_netdev_suspend(p->oct);
	return 0;
}

static int octep_pci_resume(struct device *dev)
{
	struct octep_pci *p = dev_get_drvdata(dev);

	return octep_netdev_resume(p->oct);
}

static DEFINE_SIMPLE_DEV_PM_OPS(octep_pci_pm_ops, octep_pci_suspend,
				octep_pci_resume);

/*
 * AER: the rings go as for a sleep (nothing touches the block meanwhile),
 * and come back once the slot is reset. The flow table lives in the
 * block's firmware, which a link reset does not clear.
 */
static pci_ers_result_t octep_pci_error_detected(struct pci_dev *pdev,
						 pci_channel_state_t state)
{
	struct octep_pci *p = pci_get_drvdata(pdev);

	octep_netdev_suspend(p->oct);
	if (state == pci_channel_io_perm_failure)
		return PCI_ERS_RESULT_DISCONNECT;
	return PCI_ERS_RESULT_NEED_RESET;
}

static pci_ers_result_t octep_pci_slot_reset(struct pci_dev *pdev)
{
	pci_restore_state(pdev);
	pci_save_state(pdev);
	pci_set_master(pdev);
	return PCI_ERS_RESULT_RECOVERED;
}

static void octep_pci_err_resume(struct pci_dev *pdev)
{
	struct octep_pci *p = pci_get_drvdata(pdev);

	if (octep_netdev_resume(p->oct))
		dev_err(&pdev->dev, "no rings after the error recovery\n");
}

/*
 * A function-level reset (sysfs reset, a VMM's): the block forgets every
 * ring register under us. The rings go as for a sleep and are programmed
 * again once the PCI core has restored config space, rather than waiting
 * a watchdog period for the dead-ring check to notice and reset them.
 */
static void octep_pci_reset_prepare(struct pci_dev *pdev)
{
	struct octep_pci *p = pci_get_drvdata(pdev);

	octep_netdev_suspend(p->oct);
}

static void octep_pci_reset_done(struct pci_dev *pdev)
{
	struct octep_pci *p = pci_get_drvdata(pdev);

	if (octep_netdev_resume(p->oct))
		dev_err(&pdev->dev, "no rings after the function reset\n");
}

static const struct pci_error_handlers octep_pci_err_handlers = {
	.error_detected = octep_pci_error_detected,
	.slot_reset = octep_pci_slot_reset,
	.resume = octep_pci_err_resume,
	.reset_prepare = octep_pci_reset_prepare,
	.reset_done = octep_pci_reset_done,
};

/*
 * No id_table and no module alias: these functions are octeon_ep's, and
 * a device runs this personality only when its admin says so through
 * driver_override (the PCI core then matches any device; probe checks).
 */
static struct pci_driver octep_pci_driver = {
	.name = OCTEP_DRV_NAME,
	.probe = octep_pci_probe,
	.remove = octep_pci_remove,
	.driver.pm = pm_sleep_ptr(&octep_pci_pm_ops),
	.err_handler = &octep_pci_err_handlers,
};

#ifdef CONFIG_FAULT_INJECTION
/*
 * Allocation failures on demand, for the reconfiguration tests: the ring
 * memory a change prepares, and the receive refill. The kernel's
 * fail_function would do, but its kprobe runs should_fail() in int3
 * context, where lockdep (6.12) reports the entropy pool's lock; these
 * run in the caller's own context.
 */
static DECLARE_FAULT_ATTR(octep_fail_ring_alloc_attr);
static DECLARE_FAULT_ATTR(octep_fail_refill_attr);

/**
 * octep_fail_ring_alloc() - fail this ring memory allocation?
 *
 * Return: true when debugfs octep_ipsec/fail_ring_alloc says so.
 */
bool octep_fail_ring_alloc(void)
{
	return should_fail(&octep_fail_ring_alloc_attr, 1);
}

/**
 * octep_fail_refill() - fail this receive buffer allocation?
 *
 * Return: true when debugfs octep_ipsec/fail_refill says so.
 */
bool octep_fail_refill(void)
{
	return should_fail(&octep_fail_refill_attr, 1);
}

static void octep_fault_init(void)
{
	if (!IS_ENABLED(CONFIG_FAULT_INJECTION_DEBUG_FS))
		return;
	fault_create_debugfs_attr("fail_ring_alloc", octep_dbg,
				  &octep_fail_ring_alloc_attr);
	fault_create_debugfs_attr("fail_refill", octep_dbg,
				  &octep_fail_refill_attr);
}
#else
static void octep_fault_init(void) { }
#endif

static int __init octep_init(void)
{
	int err;

	octep_dbg = debugfs_create_dir(OCTEP_DRV_NAME, NULL);
	octep_fault_init();
	err = auxiliary_driver_register(&octep_aux_driver);
	if (err)
		goto err_dbg;
	err = pci_register_driver(&octep_pci_driver);
	if (err)
		goto err_aux;
	return 0;

err_aux:
	auxiliary_driver_unregister(&octep_aux_driver);
err_dbg:
	debugfs_remove_recursive(octep_dbg);
	return err;
}
module_init(octep_init);

static void __exit octep_exit(void)
{
	pci_unregister_driver(&octep_pci_driver);
	auxiliary_driver_unregister(&octep_aux_driver);
	debugfs_remove_recursive(octep_dbg);
}
module_exit(octep_exit);

MODULE_DESCRIPTION("Marvell OCTEON SDP host driver with IPsec offload");
MODULE_LICENSE("GPL");
