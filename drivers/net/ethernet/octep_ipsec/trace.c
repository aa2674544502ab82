// SPDX-License-Identifier: GPL-2.0
/* octep_ipsec: the tracepoints' definitions (octep_trace.h). */
#include <linux/types.h>

#define CREATE_TRACE_POINTS
#include "octep_trace.h"
