/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Userspace stand-in for the kernel's <linux/auxiliary_bus.h>: octep_sdp.h
 * embeds an auxiliary device in struct octep_sdp_dev, which the server
 * never uses; its registers and descriptors are what it shares.
 */
#ifndef _OCTEP_VFU_LINUX_AUXILIARY_BUS_H
#define _OCTEP_VFU_LINUX_AUXILIARY_BUS_H

#include <stddef.h>

struct device;

struct auxiliary_device {
	int unused;
};

#ifndef container_of
#define container_of(ptr, type, member) \
	((type *)((char *)(ptr) - offsetof(type, member)))
#endif

#endif
