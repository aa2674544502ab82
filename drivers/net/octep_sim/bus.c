// SPDX-License-Identifier: GPL-2.0
/*
 * octep_sim: the bus, and the module.
 *
 *   echo "ID [NUM_RINGS]" > /sys/bus/octep_sim/new_device
 *   echo ID > /sys/bus/octep_sim/del_device
 *
 * make and remove device octep_sim<ID> with NUM_RINGS ring pairs (1 to
 * OCTEP_SDP_MAX_RINGS, default 1), after netdevsim's bus.
 */
#include <linux/device.h>
#include <linux/list.h>
#include <linux/module.h>
#include <linux/mutex.h>

#include "octep_sim.h"

static LIST_HEAD(osim_devs);
static DEFINE_MUTEX(osim_devs_lock);	/* osim_devs, osim_bus_up */
static bool osim_bus_up;

static struct osim_dev *osim_find(unsigned int id)
{
	struct osim_dev *dev;

	list_for_each_entry(dev, &osim_devs, list)
		if (dev->id == id)
			return dev;
	return NULL;
}

static const struct bus_type osim_bus;

/*
 * "ID [NUM_RINGS]": each a whole u32 in any base kstrtouint() takes (10,
 * 0x16, 010); a sign, an overflow or anything after them is refused.
 */
static int osim_parse_new(const char *buf, unsigned int *id,
			  unsigned int *rings)
{
	char tmp[48], *p = tmp, *tok[3];
	unsigned int *val[2] = { id, rings };
	int n = 0, i, err;

	if (strscpy(tmp, buf, sizeof(tmp)) < 0)
		return -EINVAL;
	while (n < 3 && (tok[n] = strsep(&p, " \t\n")))
		if (*tok[n])
			n++;
	if (n < 1 || n > 2)
		return -EINVAL;
	for (i = 0; i < n; i++) {
		err = kstrtouint(tok[i], 0, val[i]);
		if (err)
			return err;
	}
	return 0;
}

static ssize_t new_device_store(const struct bus_type *bus, const char *buf,
				size_t count)
{
	unsigned int id, rings = 1;
	struct osim_dev *dev;
	int err;

	err = osim_parse_new(buf, &id, &rings);
	if (err) {
		pr_err("octep_sim: new_device takes \"ID [NUM_RINGS]\", unsigned 32-bit numbers: %d\n",
		       err);
		return -EINVAL;
	}
	if (id > OSIM_MAX_ID) {
		pr_err("octep_sim: ID %u is above %u\n", id, OSIM_MAX_ID);
		return -EINVAL;
	}
	if (!rings || rings > OCTEP_SDP_MAX_RINGS) {
		pr_err("octep_sim: NUM_RINGS must be 1 to %u\n",
		       OCTEP_SDP_MAX_RINGS);
		return -EINVAL;
	}

	mutex_lock(&osim_devs_lock);
	err = -EBUSY;
	if (!osim_bus_up)
		goto out;
	err = -EEXIST;
	if (osim_find(id))
		goto out;
	dev = osim_dev_create(id, rings, &osim_bus);
	err = PTR_ERR_OR_ZERO(dev);
	if (!err)
		list_add_tail(&dev->list, &osim_devs);
out:
	mutex_unlock(&osim_devs_lock);
	return err ? err : count;
}
static BUS_ATTR_WO(new_device);

static ssize_t del_device_store(const struct bus_type *bus, const char *buf,
				size_t count)
{
	struct osim_dev *dev;
	unsigned int id;
	int err;

	err = kstrtouint(buf, 10, &id);
	if (err) {
		pr_err("octep_sim: del_device takes \"ID\"\n");
		return err;
	}
	mutex_lock(&osim_devs_lock);
	dev = osim_bus_up ? osim_find(id) : NULL;
	if (dev) {
		list_del(&dev->list);
		osim_dev_destroy(dev);
	}
	mutex_unlock(&osim_devs_lock);
	return dev ? count : -ENOENT;
}
static BUS_ATTR_WO(del_device);

static struct attribute *osim_bus_attrs[] = {
	&bus_attr_new_device.attr,
	&bus_attr_del_device.attr,
	NULL
};
ATTRIBUTE_GROUPS(osim_bus);

static const struct bus_type osim_bus = {
	.name		= OSIM_NAME,
	.dev_name	= OSIM_NAME,
	.bus_groups	= osim_bus_groups,
};

static int __init osim_init(void)
{
	int err;

	err = osim_debugfs_init();
	if (err)
		return err;
	err = bus_register(&osim_bus);
	if (err) {
		osim_debugfs_exit();
		return err;
	}
	mutex_lock(&osim_devs_lock);
	osim_bus_up = true;
	mutex_unlock(&osim_devs_lock);
	return 0;
}

static void __exit osim_exit(void)
{
	struct osim_dev *dev, *tmp;

	mutex_lock(&osim_devs_lock);
	osim_bus_up = false;
	list_for_each_entry_safe(dev, tmp, &osim_devs, list) {
		list_del(&dev->list);
		osim_dev_destroy(dev);
	}
	mutex_unlock(&osim_devs_lock);
	bus_unregister(&osim_bus);
	osim_debugfs_exit();
}

module_init(osim_init);
module_exit(osim_exit);
MODULE_DESCRIPTION("Device model of the OCTEON SDP block for octep_ipsec");
MODULE_LICENSE("GPL");
