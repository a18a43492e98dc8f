/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * xpile-bench alloc: the per-core loop of DPDK's app/test/test_mempool_perf.c,
 * shared by the xpile side (alloc.c) and the optional DPDK side (alloc_dpdk.c) so
 * both run the very same code around their own inline get/put.
 */
#ifndef XPILE_BENCH_ALLOC_H
#define XPILE_BENCH_ALLOC_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <time.h>

struct alloc_params {
	unsigned int cache, cores, keep, get, put, nobjs, frame;
	double seconds;
	bool touch, verbose;
};

struct alloc_result {
	uint64_t objs; /* each object counted once per get + put */
	double secs;
	double cpu_secs; /* CPU time the thread got: less than secs on a loaded machine */
	double best; /* objects per second of the fastest round (see ALLOC_LOOP) */
	int err;
};

static inline double alloc_clock(clockid_t id)
{
	struct timespec ts;

	clock_gettime(id, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static inline double alloc_now(void)
{
	return alloc_clock(CLOCK_MONOTONIC);
}

/*
 * One core's run: get n_keep objects in bulks of n_get_bulk, optionally write one
 * cache line of each (ADDR(obj) gives its address), put them all back in bulks of
 * n_put_bulk; repeat for at least p->seconds. GET/PUT return 0 on success.
 * best is the rate of the fastest round of at least 16384 objects (the clock is read
 * once a round anyway): a round that no other job interrupted, so on a loaded
 * machine best moves far less than the mean rate does.
 */
#define ALLOC_LOOP(p, res, objs, GET, PUT, ADDR)                                               \
	do {                                                                                   \
		unsigned int iters_ = (p)->keep >= 16384 ? 1 : 16384 / (p)->keep;              \
		double t0_ = alloc_now(), c0_ = alloc_clock(CLOCK_THREAD_CPUTIME_ID), t_, tp_; \
		uint64_t n_ = 0;                                                               \
		(res)->err = 0;                                                                \
		(res)->best = 0;                                                               \
		tp_ = t0_;                                                                     \
		do {                                                                           \
			for (unsigned int it_ = 0; it_ < iters_; it_++) {                      \
				for (unsigned int i_ = 0; i_ < (p)->keep; i_ += (p)->get) {    \
					if (__builtin_expect(GET(&(objs)[i_], (p)->get), 0)) { \
						(res)->err = -ENOBUFS;                         \
						goto alloc_out_;                               \
					}                                                      \
					if ((p)->touch)                                        \
						for (unsigned int j_ = 0; j_ < (p)->get; j_++) \
							*(volatile uint64_t *)ADDR(            \
								(objs)[i_ + j_]) = j_;         \
				}                                                              \
				for (unsigned int i_ = 0; i_ < (p)->keep; i_ += (p)->put)      \
					PUT(&(objs)[i_], (p)->put);                            \
			}                                                                      \
			n_ += (uint64_t)iters_ * (p)->keep;                                    \
			t_ = alloc_now();                                                      \
			if (t_ > tp_ && (double)iters_ * (p)->keep > (res)->best * (t_ - tp_)) \
				(res)->best = (double)iters_ * (p)->keep / (t_ - tp_);         \
			tp_ = t_;                                                              \
		} while (t_ - t0_ < (p)->seconds);                                             \
		(res)->objs = n_;                                                              \
		(res)->secs = t_ - t0_;                                                        \
		(res)->cpu_secs = alloc_clock(CLOCK_THREAD_CPUTIME_ID) - c0_;                  \
alloc_out_:;                                                                                   \
	} while (0)

/* The DPDK side; without DPDK at build time alloc_dpdk_available() is false. */
bool alloc_dpdk_available(void);
int alloc_dpdk_init(const struct alloc_params *p);
/* Creates the mempool for one run: ops "ring_mp_mc", "stack" or "lf_stack". */
int alloc_dpdk_pool_create(const char *ops, const struct alloc_params *p, void **mp);
void alloc_dpdk_pool_free(void *mp);
/* Runs one core's loop on the calling (already pinned) thread. */
void alloc_dpdk_run(void *mp, const struct alloc_params *p, struct alloc_result *res);

#endif
