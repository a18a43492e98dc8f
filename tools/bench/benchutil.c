// SPDX-License-Identifier: BSD-3-Clause
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "benchutil.h"

int bench_parse_u32(const char *cmd, const char *name, const char *s, __u32 lo, __u32 hi,
		    __u32 *out)
{
	char *end;
	unsigned long v;

	errno = 0;
	v = strtoul(s, &end, 0);
	if (errno || *end || !*s || v < lo || v > hi) {
		fprintf(stderr, "%s: --%s '%s' must be a number in %u..%u\n", cmd, name, s, lo, hi);
		return -1;
	}
	*out = (__u32)v;
	return 0;
}

int bench_parse_enum(const char *cmd, const char *name, const char *s, const char *const *names,
		     int n, int *out)
{
	for (int i = 0; i < n; i++)
		if (!strcmp(s, names[i])) {
			*out = i;
			return 0;
		}
	fprintf(stderr, "%s: --%s '%s': use", cmd, name, s);
	for (int i = 0; i < n; i++)
		fprintf(stderr, "%s %s", i ? (i == n - 1 ? " or" : ",") : "", names[i]);
	fprintf(stderr, "\n");
	return -1;
}

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
