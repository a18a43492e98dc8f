// SPDX-License-Identifier: BSD-3-Clause
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "benchutil.h"

static int cmp_double(const void *x, const void *y)
{
	double a = *(const double *)x, b = *(const double *)y;

	return a < b ? -1 : a > b;
}

double bench_median(double *v, __u32 n)
{
	qsort(v, n, sizeof(*v), cmp_double);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

double bench_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e9 + ts.tv_nsec;
}

const char *bench_loadavg(void)
{
	static char load[64];
	FILE *f = fopen("/proc/loadavg", "r");

	strcpy(load, "?");
	if (f) {
		if (!fgets(load, sizeof(load), f))
			strcpy(load, "?");
		(void)fclose(f); /* read only: nothing to lose */
		load[strcspn(load, " ")] = 0;
	}
	return load;
}
