/* SPDX-License-Identifier: BSD-3-Clause */
/* Small helpers the benchmarks share. */
#ifndef XPILE_BENCHUTIL_H
#define XPILE_BENCHUTIL_H

#include <stddef.h>
#include <linux/types.h>

/* Sorts @v and returns its median. */
double bench_median(double *v, __u32 n);
double bench_now_ns(void);
/* The 1-minute load average as text ("?" if unknown). */
const char *bench_loadavg(void);
/* Runs tools/bench/@name (found above the binary, or under $XPILE_SRCDIR) with bash,
 * XB_XPILE and XB_SELF set beside the XB_* options: returns only on failure (2). */
int bench_exec_script(const char *cmd, const char *name);
/* DPDK's EAL with @mb MiB, once per process (dpdk_eal.c, only with XPILE_HAVE_DPDK):
 * 0, or -1 after a line naming xpile-bench @cmd. */
int bench_dpdk_eal_init(const char *cmd, size_t mb);

#endif
