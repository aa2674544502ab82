/* SPDX-License-Identifier: GPL-2.0 */
/* Userspace stand-in for the kernel's <linux/stddef.h>: offsetof(). */
#ifndef _OCTEP_VFU_LINUX_STDDEF_H
#define _OCTEP_VFU_LINUX_STDDEF_H

#include_next <linux/stddef.h>
#include <stddef.h>

#endif
