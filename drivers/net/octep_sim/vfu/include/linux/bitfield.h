/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Userspace stand-in for the kernel's <linux/bitfield.h>: FIELD_GET() and
 * FIELD_PREP() on the constant 64-bit masks of octep_sdp.h.
 */
#ifndef _OCTEP_VFU_LINUX_BITFIELD_H
#define _OCTEP_VFU_LINUX_BITFIELD_H

#define FIELD_GET(mask, reg) \
	((__typeof__(mask))(((reg) & (mask)) >> __builtin_ctzll(mask)))
#define FIELD_PREP(mask, val) \
	((((__typeof__(mask))(val)) << __builtin_ctzll(mask)) & (mask))

#endif
