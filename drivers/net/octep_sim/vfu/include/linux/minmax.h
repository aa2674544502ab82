/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Userspace stand-in for the kernel's <linux/minmax.h>: min() and max(),
 * without the kernel's type check (the kernel build makes it).
 */
#ifndef _OCTEP_VFU_LINUX_MINMAX_H
#define _OCTEP_VFU_LINUX_MINMAX_H

#define min(x, y) ({ __typeof__(x) _x = (x); __typeof__(y) _y = (y); \
		     _x < _y ? _x : _y; })
#define max(x, y) ({ __typeof__(x) _x = (x); __typeof__(y) _y = (y); \
		     _x > _y ? _x : _y; })

#endif
