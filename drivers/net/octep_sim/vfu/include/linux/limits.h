/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Userspace stand-in for the kernel's <linux/limits.h>, over the UAPI
 * header of the same name.
 */
#ifndef _OCTEP_VFU_LINUX_LIMITS_H
#define _OCTEP_VFU_LINUX_LIMITS_H

#include_next <linux/limits.h>
#include <stdint.h>

#define U16_MAX			UINT16_MAX
#define U32_MAX			UINT32_MAX
#define U64_MAX			UINT64_MAX

#endif
