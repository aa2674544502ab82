/* SPDX-License-Identifier: GPL-2.0 */
/* Userspace stand-in for the kernel's <asm/barrier.h>. */
#ifndef _OCTEP_VFU_ASM_BARRIER_H
#define _OCTEP_VFU_ASM_BARRIER_H

/*
 * The release store rules.c publishes a count with, for the kernel
 * model's lockless reader: C11's. The server has one thread, so nothing
 * pairs with it there.
 */
#define smp_store_release(p, v)	__atomic_store_n(p, v, __ATOMIC_RELEASE)

#endif
