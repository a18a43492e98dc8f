/* SPDX-License-Identifier: BSD-3-Clause */
/* Small helpers the layout and region benchmarks share. */
#ifndef XPILE_BENCHUTIL_H
#define XPILE_BENCHUTIL_H

#include <linux/types.h>

/* Parses --@name @s into @out within [@lo, @hi]; prints "@cmd: ..." and returns -1 if not. */
int bench_parse_u32(const char *cmd, const char *name, const char *s, __u32 lo, __u32 hi,
		    __u32 *out);
/* Index of @s in @names[@n] into @out; prints the choices and returns -1 if absent. */
int bench_parse_enum(const char *cmd, const char *name, const char *s, const char *const *names,
		     int n, int *out);
/* Sorts @v and returns its median. */
double bench_median(double *v, __u32 n);
double bench_now_ns(void);
/* The 1-minute load average as text ("?" if unknown). */
const char *bench_loadavg(void);

#endif
