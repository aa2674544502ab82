// SPDX-License-Identifier: GPL-2.0
/*
 * octep_sim: the wire, octw<ID>, the far end of the block's link.
 *
 * What the wire transmits goes to the engine, which writes it into the
 * host's output rings; what the host transmits comes out of the wire as
 * received frames (through GRO cells, as from a NIC's NAPI). The wire
 * offers checksum and TSO offload to its stack: the engine segments and
 * checksums in software, as the far end of a link would deliver MTU frames
 * with their checksums done.
 */
#include <linux/etherdevice.h>
#include <linux/netdevice.h>
#include <net/page_pool/types.h>

#include "octep_sim.h"

struct osim_wire_priv {
	struct osim_dev *dev;
};

static struct osim_dev *osim_wire_dev(struct net_device *ndev)
{
	return ((struct osim_wire_priv *)netdev_priv(ndev))->dev;
}

static netdev_tx_t osim_wire_xmit(struct sk_buff *skb, struct net_device *ndev)
{
	struct osim_dev *dev = osim_wire_dev(ndev);

	if (unlikely(test_bit(OSIM_F_DYING, &dev->flags))) {
		atomic64_inc(&dev->wire_drops);
		kfree_skb(skb);
		return NETDEV_TX_OK;
	}
	/* Serialized by the queue's xmit lock (one queue, no LLTX). */
	dev->wire_tx_pkts++;
	dev->wire_tx_bytes += skb->len;
	skb_queue_tail(&dev->wire_q, skb);
	if (skb_queue_len_lockless(&dev->wire_q) >= OSIM_WIRE_QLEN) {
		netif_stop_queue(ndev);
		/*
		 * Pairs with osim_wire_wake(): either it sees the queue
		 * stopped, or we see the engine's dequeue and wake it here.
		 */
		smp_mb__after_atomic();
		if (skb_queue_len_lockless(&dev->wire_q) < OSIM_WIRE_QLEN)
			netif_wake_queue(ndev);
	}
	osim_engine_kick(dev);
	return NETDEV_TX_OK;
}

/**
 * osim_wire_wake() - restart the wire's queue once the engine took frames
 * @dev: device
 */
void osim_wire_wake(struct osim_dev *dev)
{
	/* Pairs with the barrier in osim_wire_xmit(). */
	smp_mb();
	if (netif_queue_stopped(dev->wire) &&
	    skb_queue_len_lockless(&dev->wire_q) < OSIM_WIRE_QLEN / 2)
		netif_wake_queue(dev->wire);
}

static int osim_wire_open(struct net_device *ndev)
{
	netif_carrier_on(ndev);
	netif_start_queue(ndev);
	return 0;
}

static int osim_wire_stop(struct net_device *ndev)
{
	netif_stop_queue(ndev);
	netif_carrier_off(ndev);
	return 0;
}

static void osim_wire_stats(struct net_device *ndev,
			    struct rtnl_link_stats64 *s)
{
	struct osim_dev *dev = osim_wire_dev(ndev);

	/* Single writers (xmit lock, engine); 64-bit reads do not tear. */
	s->tx_packets = READ_ONCE(dev->wire_tx_pkts);
	s->tx_bytes = READ_ONCE(dev->wire_tx_bytes);
	s->rx_packets = READ_ONCE(dev->wire_rx_pkts);
	s->rx_bytes = READ_ONCE(dev->wire_rx_bytes);
	s->tx_dropped = atomic64_read(&dev->wire_drops);
}

static int osim_wire_init(struct net_device *ndev)
{
	return gro_cells_init(&osim_wire_dev(ndev)->gro, ndev);
}

static void osim_wire_uninit(struct net_device *ndev)
{
	gro_cells_destroy(&osim_wire_dev(ndev)->gro);
}

static const struct net_device_ops osim_wire_ops = {
	.ndo_init		= osim_wire_init,
	.ndo_uninit		= osim_wire_uninit,
	.ndo_open		= osim_wire_open,
	.ndo_stop		= osim_wire_stop,
	.ndo_start_xmit		= osim_wire_xmit,
	.ndo_get_stats64	= osim_wire_stats,
	.ndo_set_mac_address	= eth_mac_addr,
	.ndo_validate_addr	= eth_validate_addr,
};

/**
 * osim_wire_create() - create and register the wire netdev octw<ID>
 * @dev: device
 *
 * Return: 0 or a negative errno.
 */
int osim_wire_create(struct osim_dev *dev)
{
	struct page_pool_params pp = {
		.order = 0,
		.pool_size = OSIM_WIRE_POOL,
		.nid = NUMA_NO_NODE,
	};
	char name[IFNAMSIZ];
	struct net_device *ndev;
	int err;

	skb_queue_head_init(&dev->wire_q);
	/* Not DMA-mapped: the model writes the pages with the CPU. */
	dev->wire_pp = page_pool_create(&pp);
	if (IS_ERR(dev->wire_pp)) {
		err = PTR_ERR(dev->wire_pp);
		dev->wire_pp = NULL;
		return err;
	}
	snprintf(name, sizeof(name), "octw%u", dev->id);
	ndev = alloc_netdev(sizeof(struct osim_wire_priv), name,
			    NET_NAME_PREDICTABLE, ether_setup);
	if (!ndev) {
		err = -ENOMEM;
		goto err_pool;
	}
	((struct osim_wire_priv *)netdev_priv(ndev))->dev = dev;
	SET_NETDEV_DEV(ndev, &dev->dev);
	ndev->netdev_ops = &osim_wire_ops;
	ndev->features = NETIF_F_SG | NETIF_F_HW_CSUM | NETIF_F_HIGHDMA |
			 NETIF_F_TSO | NETIF_F_TSO6 | NETIF_F_TSO_ECN;
	ndev->hw_features = ndev->features;
	ndev->max_mtu = 9000;
	eth_hw_addr_random(ndev);
	netif_carrier_off(ndev);
	dev->wire = ndev;
	err = register_netdev(ndev);
	if (err) {
		dev->wire = NULL;
		free_netdev(ndev);
		goto err_pool;
	}
	return 0;

err_pool:
	page_pool_destroy(dev->wire_pp);
	dev->wire_pp = NULL;
	return err;
}

/**
 * osim_wire_destroy() - unregister the wire; drop what it had queued
 * @dev: device; the engine is stopped
 */
void osim_wire_destroy(struct osim_dev *dev)
{
	if (!dev->wire)
		return;
	unregister_netdev(dev->wire);
	skb_queue_purge(&dev->wire_q);
	free_netdev(dev->wire);
	dev->wire = NULL;
	/* Pages still in the peer's sockets come back to it later. */
	page_pool_destroy(dev->wire_pp);
	dev->wire_pp = NULL;
}
