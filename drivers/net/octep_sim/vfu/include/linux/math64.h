/* SPDX-License-Identifier: GPL-2.0 */
/* Userspace stand-in for the kernel's <linux/math64.h>: div_u64(). */
#ifndef _OCTEP_VFU_LINUX_MATH64_H
#define _OCTEP_VFU_LINUX_MATH64_H

#include <linux/types.h>

static inline u64 div_u64(u64 dividend, u32 divisor)
{
	return dividend / divisor;
}

#endif
