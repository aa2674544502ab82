/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Userspace stand-in for the kernel's <linux/types.h>: what octep_sdp.h
 * and the server use of it, over the UAPI header of the same name.
 */
#ifndef _OCTEP_VFU_LINUX_TYPES_H
#define _OCTEP_VFU_LINUX_TYPES_H

#include_next <linux/types.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef __u8 u8;
typedef __u16 u16;
typedef __u32 u32;
typedef __u64 u64;

#endif
