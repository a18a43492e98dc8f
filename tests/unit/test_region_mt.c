// SPDX-License-Identifier: BSD-3-Clause
/* Region allocators under 2 threads (run under TSan too): no chunk owned twice, full coalescing. */
#include <pthread.h>
#include <stdatomic.h>
#include <time.h>

#include "xpile/log.h"
#include "xpile/region.h"
#include "xt.h"

#define CHUNK 4096ull
#define PER 1024
#define SPACES 2
#define THREADS 2
#define OPS 60000

static struct xp_region *region;
static _Atomic __u8 owner[PER * SPACES];
static atomic_int overlaps, errors;

struct worker {
	pthread_t tid;
	__u32 id;
	__u64 rng;
};

static __u64 rnd(struct worker *w)
{
	w->rng ^= w->rng << 13;
	w->rng ^= w->rng >> 7;
	w->rng ^= w->rng << 17;
	return w->rng;
}

static __u32 rounded(__u32 n)
{
	__u32 p = 1;

	while (p < n)
		p <<= 1;
	return p;
}

static void *run(void *arg)
{
	struct worker *w = arg;
	struct {
		__u64 off;
		__u32 n;
	} live[512];
	__u32 nlive = 0;
	struct timespec t0, t;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (int op = 0; op < OPS; op++) {
		if (!(op & 1023)) {
			clock_gettime(CLOCK_MONOTONIC, &t);
			if (t.tv_sec - t0.tv_sec > 6) /* bounded under a slow sanitizer */
				break;
		}
		if (nlive && (rnd(w) % 100 < 48 || nlive == 512)) {
			__u32 k = rnd(w) % nlive;

			for (__u32 c = 0; c < rounded(live[k].n); c++)
				atomic_store(&owner[live[k].off / CHUNK + c], 0);
			if (xp_region_free(region, live[k].off, live[k].n))
				atomic_fetch_add(&errors, 1);
			live[k] = live[--nlive];
		} else {
			__u32 n = rnd(w) % 100 < 90 ? 1 : 2 + rnd(w) % 30;
			__u64 off;

			if (xp_region_alloc(region, n, w->id, &off))
				continue;
			for (__u32 c = 0; c < rounded(n); c++)
				if (atomic_exchange(&owner[off / CHUNK + c], (__u8)(w->id + 1)))
					atomic_fetch_add(&overlaps, 1);
			live[nlive].off = off;
			live[nlive++].n = n;
		}
	}
	while (nlive) {
		nlive--;
		for (__u32 c = 0; c < rounded(live[nlive].n); c++)
			atomic_store(&owner[live[nlive].off / CHUNK + c], 0);
		if (xp_region_free(region, live[nlive].off, live[nlive].n))
			atomic_fetch_add(&errors, 1);
	}
	return NULL;
}

static void hammer(enum xp_region_algo algo)
{
	struct xp_region_opts o = { .sz = sizeof(o),
				    .size = PER * SPACES * CHUNK,
				    .chunk = CHUNK,
				    .spaces = SPACES,
				    .algo = algo };
	struct worker w[THREADS];
	struct xp_region_stats st;

	XT_REQUIRE(xp_region_create(&o, &region) == 0);
	atomic_store(&overlaps, 0);
	atomic_store(&errors, 0);
	for (__u32 i = 0; i < THREADS; i++) {
		w[i] = (struct worker){ .id = i, .rng = 0x9e3779b97f4a7c15ull * (i + 1) };
		XT_REQUIRE(pthread_create(&w[i].tid, NULL, run, &w[i]) == 0);
	}
	for (__u32 i = 0; i < THREADS; i++)
		pthread_join(w[i].tid, NULL);
	XT_EQ(atomic_load(&overlaps), 0);
	XT_EQ(atomic_load(&errors), 0);
	xp_region_coalesce(region);
	xp_region_stats(region, &st);
	XT_EQ(st.free_chunks, PER * SPACES);
	XT_EQ(st.free_blocks, SPACES);
	XT_EQ(st.largest_block, PER);
	xp_region_destroy(region);
}

static void test_lazy_two_threads(void)
{
	hammer(XP_REGION_LAZY);
}

static void test_eager_two_threads(void)
{
	hammer(XP_REGION_EAGER);
}

int main(void)
{
	xp_set_log_fn(NULL);
	XT_RUN(test_lazy_two_threads);
	XT_RUN(test_eager_two_threads);
	return xt_done();
}
