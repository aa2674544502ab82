/* SPDX-License-Identifier: GPL-2.0 */
/* Userspace stand-in for the kernel's <linux/time64.h>: the units. */
#ifndef _OCTEP_VFU_LINUX_TIME64_H
#define _OCTEP_VFU_LINUX_TIME64_H

#define NSEC_PER_USEC		1000L
#define NSEC_PER_MSEC		1000000L
#define NSEC_PER_SEC		1000000000L

#endif
