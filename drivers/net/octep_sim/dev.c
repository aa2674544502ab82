// SPDX-License-Identifier: GPL-2.0
/*
 * octep_sim: one device's life.
 *
 * Creation: the bus device (also the DMA device, 64-bit mask, no IOMMU),
 * rings, interrupts, the wire, the engine, debugfs, and last the auxiliary
 * device the driver binds to. Destruction runs the other way, and first of
 * all takes the auxiliary device away so that the driver quiesces and lets
 * go of rings, interrupts and buffers while the model still runs.
 */
#include <linux/dma-mapping.h>
#include <linux/etherdevice.h>
#include <linux/slab.h>

#include "octep_sim.h"
#include "ipsec.h"

static void osim_dev_release(struct device *d)
{
	struct osim_dev *dev = to_osim_dev(d);

	mutex_destroy(&dev->stub_lock);
	kfree(dev);
}

static void osim_aux_release(struct device *d)
{
	struct auxiliary_device *adev = to_auxiliary_dev(d);

	kfree(container_of(to_octep_sdp_dev(adev), struct osim_sdp, sdp));
}

static void osim_rings_init(struct osim_dev *dev)
{
	unsigned int i;

	for (i = 0; i < dev->num_rings; i++) {
		struct osim_ring *ring = &dev->rings[i];

		ring->dev = dev;
		ring->idx = i;
		osim_oq_init(&ring->oq);
		osim_cnt_init(&ring->oq.cnt, ring, false);
		spin_lock_init(&ring->iq.lock);
		osim_cnt_init(&ring->iq.cnt, ring, true);
		atomic_set(&ring->lose_irq, 0);
	}
}

/* Every timer of every ring stopped and no delayed write left. */
static void osim_rings_fini(struct osim_dev *dev)
{
	unsigned long flags;
	unsigned int i;

	for (i = 0; i < dev->num_rings; i++) {
		struct osim_ring *ring = &dev->rings[i];

		osim_cnt_stop(&ring->oq.cnt);
		osim_cnt_stop(&ring->iq.cnt);
		hrtimer_cancel(&ring->oq.delay_timer);
		spin_lock_irqsave(&ring->oq.lock, flags);
		osim_oq_flush_deferred(&ring->oq, false);
		spin_unlock_irqrestore(&ring->oq.lock, flags);
	}
}

static int osim_aux_add(struct osim_dev *dev)
{
	struct auxiliary_device *adev = &dev->asdp->sdp.adev;
	int err;

	adev->name = OCTEP_SDP_AUX_NAME;
	adev->id = dev->id;
	adev->dev.parent = &dev->dev;
	adev->dev.release = osim_aux_release;
	err = auxiliary_device_init(adev);
	if (err) {
		adev->dev.release = NULL;	/* the teardown frees asdp */
		return err;
	}
	err = auxiliary_device_add(adev);
	if (err) {
		auxiliary_device_uninit(adev);	/* frees asdp */
		dev->asdp = NULL;
		return err;
	}
	dev->aux_added = true;
	return 0;
}

/* Tear down whatever osim_dev_create() set up, in reverse. */
static void osim_dev_teardown(struct osim_dev *dev)
{
	osim_debugfs_dev_del(dev);
	if (dev->aux_added) {
		/* The driver unbinds: it quiesces and frees its rings. */
		auxiliary_device_delete(&dev->asdp->sdp.adev);
		dev->aux_added = false;
	}
	osim_stub_stop(dev);
	osim_rings_reset(dev);
	set_bit(OSIM_F_DYING, &dev->flags);
	osim_engine_stop(dev);
	osim_ipsec_fini(dev);
	osim_rings_fini(dev);
	osim_wire_destroy(dev);
	osim_engine_release(dev);
	osim_irq_fini(dev);
	if (dev->asdp) {
		struct auxiliary_device *adev = &dev->asdp->sdp.adev;

		/* Initialised means its release frees asdp. */
		if (adev->dev.release)
			auxiliary_device_uninit(adev);
		else
			kfree(dev->asdp);
		dev->asdp = NULL;
	}
}

/**
 * osim_dev_create() - create and register model device octep_sim<ID>
 * @id: ID
 * @num_rings: ring pairs, 1..OCTEP_SDP_MAX_RINGS
 * @bus: the octep_sim bus
 *
 * Return: the device, or an ERR_PTR().
 */
struct osim_dev *osim_dev_create(unsigned int id, unsigned int num_rings,
				 const struct bus_type *bus)
{
	struct octep_sdp_dev *sdp;
	struct osim_dev *dev;
	int err;

	dev = kzalloc(sizeof(*dev), GFP_KERNEL);
	if (!dev)
		return ERR_PTR(-ENOMEM);
	dev->id = id;
	dev->num_rings = num_rings;
	dev->resend_pending = OSIM_RESEND_NONZERO;
	dev->masked = OSIM_MASKED_LATCH;
	dev->left_ns = OSIM_LEFT_NS_DEF;
	mutex_init(&dev->stub_lock);
	osim_hostile_init(dev);
	atomic64_set(&dev->wire_drops, 0);
	atomic64_set(&dev->bad_regs, 0);

	device_initialize(&dev->dev);
	dev->dev.bus = bus;
	dev->dev.id = id;
	dev->dev.release = osim_dev_release;
	/* The DMA device: dma-direct, no IOMMU, every address reachable. */
	dev->dev.dma_mask = &dev->dev.coherent_dma_mask;
	err = dma_set_mask_and_coherent(&dev->dev, DMA_BIT_MASK(64));
	if (err)
		goto err_put;
	err = device_add(&dev->dev);
	if (err)
		goto err_put;

	osim_rings_init(dev);
	dev->asdp = kzalloc(sizeof(*dev->asdp), GFP_KERNEL);
	if (!dev->asdp) {
		err = -ENOMEM;
		goto err_del;
	}
	dev->asdp->dev = dev;
	sdp = &dev->asdp->sdp;
	sdp->ops = &osim_sdp_ops;
	sdp->dma_dev = &dev->dev;
	sdp->num_rings = num_rings;
	eth_random_addr(sdp->mac_addr);
	sdp->rss = true;
	sdp->port = true;

	err = osim_irq_init(dev);
	if (err)
		goto err_teardown;
	err = osim_wire_create(dev);
	if (err)
		goto err_teardown;
	err = osim_engine_start(dev);
	if (err)
		goto err_teardown;
	osim_debugfs_dev_add(dev);
	err = osim_ipsec_init(dev);
	if (err)
		goto err_teardown;
	err = osim_aux_add(dev);
	if (err)
		goto err_teardown;
	return dev;

err_teardown:
	osim_dev_teardown(dev);
err_del:
	device_del(&dev->dev);
err_put:
	put_device(&dev->dev);
	return ERR_PTR(err);
}

/**
 * osim_dev_destroy() - tear a device down, the driver first
 * @dev: device from osim_dev_create()
 *
 * Safe with the driver bound and traffic flowing.
 */
void osim_dev_destroy(struct osim_dev *dev)
{
	osim_dev_teardown(dev);
	device_del(&dev->dev);
	put_device(&dev->dev);
}
