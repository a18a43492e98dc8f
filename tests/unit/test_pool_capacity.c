// SPDX-License-Identifier: BSD-3-Clause
/*
 * Exact capacity in release mode (no XP_POOL_F_DEBUG), both backends, cached and
 * uncached: a put that would make the backend hold more than N is refused with
 * -ENOSPC, nothing put, one message; avail never exceeds N. What release mode does
 * not check (which handles): a foreign handle put while there is room is accepted,
 * and then the put that returns the last real handle is the one refused.
 */
#include <pthread.h>
#include <time.h>

#include "pile_check.h"

#define N 256u

static enum xp_pool_backend backend;
static __u32 stripes;

static struct xp_pool *mk(void)
{
	return pc_pool(N, (struct xp_pool_opts){ .backend = backend, .stripes = stripes });
}

/* Frames N..N+n-1 of the same UMEM: well-formed, never given to the pool. */
static __u64 *foreign(__u32 n)
{
	__u64 *h = pc_handles(N + n);

	memmove(h, h + N, n * sizeof(*h));
	return h;
}

/* The reproducer: 64 foreign puts into a full pool of 256 (avail was 320). */
static void full_uncached(void)
{
	struct xp_pool *p = mk();
	__u64 *f = foreign(64), buf[64];

	XT_REQUIRE(p);
	XT_EQ(xp_pool_avail(p), N);
	XT_EQ(xp_pool_put(p, f, 64), -ENOSPC);
	XT_CHECK(pc_logged("would hold more than N = 256"));
	for (__u32 i = 0; i < 64; i++)
		XT_EQ(xp_pool_put(p, &f[i], 1), -ENOSPC);
	XT_EQ(xp_pool_avail(p), N);
	XT_EQ(xp_pool_in_use(p), 0);
	XT_EQ(xp_pool_audit(p), 0);
	/* Double frees of real handles count the same. */
	XT_EQ(xp_pool_get(p, buf, 64), 0);
	XT_EQ(xp_pool_put(p, buf, 64), 0);
	XT_EQ(xp_pool_put(p, buf, 64), -ENOSPC);
	XT_EQ(xp_pool_put(p, buf, 33), -ENOSPC);
	XT_EQ(xp_pool_avail(p), N);
	XT_EQ(xp_pool_audit(p), 0);
	xp_pool_destroy(p);
	free(f);
}

/*
 * A put beyond N larger than all the spare nodes: the pile takes empty nodes before
 * its room check, so it must refuse at once rather than wait for nodes that cannot
 * come (bounded here at 1 s; it returns in microseconds), and leave no node taken.
 */
static void huge_foreign(void)
{
	struct xp_pool *p = mk();
	__u64 *f = foreign(8192);
	struct timespec t0, t1;

	XT_REQUIRE(p);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	XT_EQ(xp_pool_put(p, f, 8192), -ENOSPC);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	XT_CHECK((double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) * 1e-9 < 1.0);
	XT_EQ(xp_pool_avail(p), N);
	XT_EQ(xp_pool_audit(p), 0); /* every bulk node accounted for */
	xp_pool_destroy(p);
	free(f);
}

/* Release mode counts, it does not identify: the first foreign puts fit. */
static void room_only(void)
{
	struct xp_pool *p = mk();
	__u64 *f = foreign(64), buf[64];

	XT_REQUIRE(p);
	XT_EQ(xp_pool_get(p, buf, 40), 0);
	XT_EQ(xp_pool_put(p, f, 40), 0); /* room for 40: accepted */
	XT_EQ(xp_pool_avail(p), N);
	XT_EQ(xp_pool_put(p, buf, 1), -ENOSPC); /* now the real one is refused */
	XT_EQ(xp_pool_avail(p), N);
	XT_EQ(xp_pool_audit(p), -EUCLEAN); /* and the audit names the foreign ones */
	XT_CHECK(pc_logged("foreign"));
	xp_pool_destroy(p);
	free(f);
}

/* Through a cache: a hit takes them (the cache's own bound), the flush refuses. */
static void full_cached(void)
{
	const __u32 sizes[] = { 0, 1, 32, 33, 512 };

	for (__u32 k = 0; k < sizeof(sizes) / sizeof(sizes[0]); k++) {
		struct xp_pool *p = mk();
		struct xp_cache *c = NULL;
		__u64 *f = foreign(1024);
		__u32 put = 0, held;
		int err = 0;

		XT_REQUIRE(p);
		XT_EQ(xp_cache_create(p, sizes[k], &c), 0);
		XT_REQUIRE(c);
		/* 64 at once: a hit in a cache of 512, a bypass in one of 32. */
		err = xp_cache_put(c, f, 64);
		XT_CHECK(xp_pool_avail(p) <= N);
		if (sizes[k] < 64) {
			XT_EQ(err, -ENOSPC);
		} else {
			XT_EQ(err, 0);
			put = 64;
		}
		/* One at a time until the cache must flush: refused there, every time. */
		for (__u32 i = 64; i < 1024; i++) {
			err = xp_cache_put(c, &f[i], 1);
			put += !err;
			XT_CHECK(xp_pool_avail(p) <= N);
			if (err)
				XT_EQ(err, -ENOSPC);
		}
		held = xp_cache_count(c);
		XT_EQ(put, held); /* the cache kept what it took, the pool took none */
		XT_CHECK(held <= sizes[k] + sizes[k]);
		XT_EQ(xp_pool_avail(p), N);
		if (held) {
			XT_EQ(xp_cache_flush(c), -ENOSPC);
			XT_EQ(xp_cache_count(c), held);
		}
		XT_EQ(xp_pool_avail(p), N);
		pc_last_log[0] = 0;
		xp_cache_destroy(c); /* says it could not return them */
		XT_CHECK(!held || pc_logged("could not be returned"));
		XT_EQ(xp_pool_avail(p), N);
		XT_EQ(xp_pool_audit(p), 0);
		xp_pool_destroy(p);
		free(f);
	}
}

/*
 * Room follows the caller's home stripe: handles got by caches on other stripes
 * come back through stripe 0 (uncached) and through each other's caches, and every
 * such legitimate put fits; only the one beyond N is refused.
 */
static void room_moves(void)
{
	struct xp_pool *p = mk();
	struct xp_cache *c[3] = { NULL };
	__u64 buf[3][80], extra;

	XT_REQUIRE(p);
	for (int i = 0; i < 3; i++) {
		XT_EQ(xp_cache_create(p, 0, &c[i]), 0);
		XT_REQUIRE(c[i]);
		XT_EQ(xp_cache_get(c[i], buf[i], 80), 0);
	}
	XT_EQ(xp_pool_get(p, &extra, 1), 0);
	XT_EQ(xp_pool_avail(p), N - 241);
	XT_EQ(xp_pool_put(p, buf[0], 80), 0); /* uncached: stripe 0 */
	XT_EQ(xp_cache_put(c[0], buf[1], 80), 0);
	XT_EQ(xp_cache_put(c[2], buf[2], 40), 0);
	XT_EQ(xp_cache_put(c[1], buf[2] + 40, 40), 0);
	XT_EQ(xp_pool_avail(p), N - 1);
	XT_EQ(xp_cache_put(c[1], buf[0], 2), -ENOSPC); /* 257 */
	XT_EQ(xp_pool_avail(p), N - 1);
	XT_EQ(xp_cache_put(c[2], &extra, 1), 0);
	XT_EQ(xp_pool_avail(p), N);
	XT_EQ(xp_pool_put(p, &extra, 1), -ENOSPC);
	XT_EQ(xp_pool_audit(p), 0);
	for (int i = 0; i < 3; i++)
		xp_cache_destroy(c[i]);
	xp_pool_destroy(p);
}

/*
 * Under load: two threads on their own caches (homes 0 and 1) get and put real
 * handles while this one keeps putting foreign ones. Every real put succeeds, the
 * backend never shows more than N, and at the end it holds at most N.
 */
struct worker {
	struct xp_pool *p;
	int *stop;
	__u64 refused;
	__u64 rounds;
};

static void *work(void *arg)
{
	struct worker *w = arg;
	struct xp_cache *c = NULL;
	__u64 buf[96];

	if (xp_cache_create(w->p, 64, &c))
		return NULL;
	while (!__atomic_load_n(w->stop, __ATOMIC_RELAXED)) {
		__u32 n = 1 + (__u32)(w->rounds * 37 % 96);

		if (xp_cache_get(c, buf, n))
			continue;
		if (xp_cache_put(c, buf, n)) {
			w->refused++;
			break;
		}
		w->rounds++;
	}
	xp_cache_destroy(c);
	return NULL;
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void under_load(void)
{
	struct xp_pool *p = mk();
	__u64 *f = foreign(64);
	struct worker w[2];
	pthread_t t[2];
	__u32 max = 0, accepted = 0;
	int stop = 0;
	double end = now_s() + 0.3;

	XT_REQUIRE(p);
	for (int i = 0; i < 2; i++) {
		w[i] = (struct worker){ .p = p, .stop = &stop };
		XT_EQ(pthread_create(&t[i], NULL, work, &w[i]), 0);
	}
	while (now_s() < end) {
		__u32 a = xp_pool_avail(p);

		max = a > max ? a : max;
		/* Accepted only while the workers hold enough; those then go back refused. */
		if (accepted < 64 && !xp_pool_put(p, &f[accepted], 1))
			accepted++;
	}
	__atomic_store_n(&stop, 1, __ATOMIC_RELAXED);
	for (int i = 0; i < 2; i++)
		pthread_join(t[i], NULL);
	fprintf(stderr,
		"  rounds %llu + %llu, foreign accepted %u, refused real puts %llu + %llu, "
		"max avail %u\n",
		(unsigned long long)w[0].rounds, (unsigned long long)w[1].rounds, accepted,
		(unsigned long long)w[0].refused, (unsigned long long)w[1].refused, max);
	XT_CHECK(max <= N);
	XT_CHECK(xp_pool_avail(p) <= N);
	XT_CHECK(w[0].rounds > 0 && w[1].rounds > 0);
	/* A real put is refused only after a foreign one took its room. */
	if (!accepted)
		XT_EQ(w[0].refused + w[1].refused, 0);
	xp_pool_destroy(p);
	free(f);
}

int main(void)
{
	const __u32 st[] = { 1, 2, 4 };

	pc_log_capture();
	for (backend = XP_POOL_PILE; backend <= XP_POOL_RING; backend++)
		for (int s = 0; s < 3; s++) {
			if (backend == XP_POOL_RING && s)
				break; /* stripes are the pile's */
			stripes = st[s];
			fprintf(stderr, "backend %s stripes %u\n", xp_pool_backend_name(backend),
				stripes);
			XT_RUN(full_uncached);
			XT_RUN(huge_foreign);
			XT_RUN(room_only);
			XT_RUN(full_cached);
			XT_RUN(room_moves);
			XT_RUN(under_load);
		}
	return xt_done();
}
