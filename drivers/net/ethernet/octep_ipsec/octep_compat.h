/* SPDX-License-Identifier: GPL-2.0 */
/*
 * octep_compat.h - what the two modules need from kernels newer than the
 * reference (Debian's 6.12), when built out of tree.
 *
 * The code is written against the newer interface; for 6.12 this header
 * supplies it. The top-level Kbuild probes the target tree's headers and
 * defines OCTEP_HAVE_* for what the tree already has. Inside a 6.12
 * kernel tree nothing is defined and the 6.12 fallbacks below apply.
 */
#ifndef _OCTEP_COMPAT_H
#define _OCTEP_COMPAT_H

#include <linux/hrtimer.h>

#ifndef OCTEP_HAVE_HRTIMER_SETUP
/* 6.13 introduced hrtimer_setup(); later kernels removed hrtimer_init(). */
static inline void
hrtimer_setup(struct hrtimer *timer,
	      enum hrtimer_restart (*function)(struct hrtimer *),
	      clockid_t clock_id, enum hrtimer_mode mode)
{
	hrtimer_init(timer, clock_id, mode);
	timer->function = function;
}
#endif

#endif /* _OCTEP_COMPAT_H */
