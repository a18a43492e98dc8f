/* SPDX-License-Identifier: BSD-3-Clause */
/* Small helpers the benchmarks share. */
#ifndef XPILE_BENCHUTIL_H
#define XPILE_BENCHUTIL_H

#include <linux/types.h>

/* Sorts @v and returns its median. */
double bench_median(double *v, __u32 n);
double bench_now_ns(void);
/* The 1-minute load average as text ("?" if unknown). */
const char *bench_loadavg(void);
/* Runs tools/bench/@name (found above the binary, or under $XPILE_SRCDIR) with bash,
 * XB_XPILE and XB_SELF set beside the XB_* options: returns only on failure (2). */
int bench_exec_script(const char *cmd, const char *name);

#endif
