/* SPDX-License-Identifier: BSD-3-Clause */
/* The programs' clocks: monotonic for deadlines and rates, real time for timestamps. */
#ifndef XPILE_UTIL_CLOCK_H
#define XPILE_UTIL_CLOCK_H

#include <time.h>
#include <linux/types.h>

static inline __u64 ut_clock_ns(clockid_t id)
{
	struct timespec ts;

	clock_gettime(id, &ts);
	return (__u64)ts.tv_sec * 1000000000ull + (__u64)ts.tv_nsec;
}

/* CLOCK_MONOTONIC in ns. */
static inline __u64 ut_now_ns(void)
{
	return ut_clock_ns(CLOCK_MONOTONIC);
}

/* CLOCK_MONOTONIC in seconds. */
static inline double ut_now(void)
{
	return (double)ut_now_ns() / 1e9;
}

/* CLOCK_REALTIME in ns since the epoch (pcapng timestamps). */
static inline __u64 ut_realtime_ns(void)
{
	return ut_clock_ns(CLOCK_REALTIME);
}

#endif /* XPILE_UTIL_CLOCK_H */
