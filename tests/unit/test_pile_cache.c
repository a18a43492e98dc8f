// SPDX-License-Identifier: BSD-3-Clause
/*
 * Per-thread caches over both backends: every size is used exactly as given, the
 * cache never holds more than its size between calls, refill/flush move whole bulks
 * with hysteresis (no thrashing at a boundary), requests larger than the cache go
 * straight to the pool, failed gets change nothing, and stats add up.
 */
#include "pile_check.h"

static enum xp_pool_backend backend;

static struct xp_pool *mk(__u32 n)
{
	return pc_pool(n, (struct xp_pool_opts){ .backend = backend });
}

static void invalid_size(void)
{
	struct xp_pool *p = mk(64);
	struct xp_cache *c = (struct xp_cache *)1;

	XT_REQUIRE(p);
	XT_EQ(xp_cache_create(p, XP_CACHE_SIZE_MAX + 1, &c), -EINVAL);
	XT_CHECK(c == NULL);
	XT_CHECK(pc_logged("exceeds the maximum"));
	XT_EQ(xp_cache_create(NULL, 32, &c), -EINVAL);
	XT_EQ(xp_cache_create(p, XP_CACHE_SIZE_MAX, &c), 0);
	XT_EQ(c->size, XP_CACHE_SIZE_MAX);
	xp_cache_destroy(c);
	xp_pool_destroy(p);
}

/* Random cached traffic against a model, for one cache size. */
static void walk(__u32 size)
{
	__u32 n = 3000;
	struct xp_pool *p = mk(n);
	struct xp_cache *c = NULL;
	struct xp_cache_stats st;
	struct pc_held h;
	unsigned int seed = size * 7 + 1;
	__u64 *buf = malloc((n + 2) * sizeof(*buf));
	__u32 calls = 0;

	XT_REQUIRE(p);
	XT_EQ(xp_cache_create(p, size, &c), 0);
	XT_REQUIRE(c);
	XT_EQ(c->size, size); /* no rounding */
	pc_held_init(&h, n);
	for (int i = 0; i < 6000; i++) {
		__u32 r = (__u32)rand_r(&seed) % 16;
		__u32 k = r < 13 ? (__u32)rand_r(&seed) % 70 : (__u32)rand_r(&seed) % (n + 2);
		int err;

		if (rand_r(&seed) % 2) {
			__u32 cached = xp_cache_count(c), avail = xp_pool_avail(p);

			err = xp_cache_get(c, buf, k);
			XT_EQ(err, k <= n - h.count ? 0 : -ENOBUFS);
			if (err) { /* all-or-nothing: unchanged */
				XT_EQ(xp_cache_count(c), cached);
				XT_EQ(xp_pool_avail(p), avail);
			} else if (!pc_took(&h, buf, k)) {
				break;
			}
		} else {
			k = k < h.count ? k : h.count;
			pc_give_random(&h, buf, k, &seed);
			XT_EQ(xp_cache_put(c, buf, k), 0);
		}
		calls++;
		if (!XT_CHECK(xp_cache_count(c) <= size))
			break;
		XT_EQ(xp_pool_avail(p) + xp_cache_count(c) + h.count, n);
		if (i % 1000 == 0)
			PC_CONSERVED(p, &h);
	}
	PC_CONSERVED(p, &h);
	xp_cache_stats_get(c, &st);
	XT_EQ(st.get_hits + st.get_misses + st.put_hits + st.put_misses, calls);
	if (size >= 64)
		XT_CHECK(st.get_hits + st.put_hits > calls / 2);
	XT_EQ(xp_cache_flush(c), 0);
	XT_EQ(xp_cache_count(c), 0);
	PC_CONSERVED(p, &h);
	pc_give(&h, buf, h.count);
	XT_EQ(xp_cache_put(c, buf, n - xp_pool_avail(p)), 0);
	xp_cache_destroy(c);
	XT_EQ(xp_pool_avail(p), n);
	XT_EQ(xp_pool_audit(p), 0);
	pc_held_fini(&h);
	free(buf);
	xp_pool_destroy(p);
}

static void size_0(void)
{
	walk(0);
}
static void size_1(void)
{
	walk(1);
}
static void size_31(void)
{
	walk(31);
}
static void size_32(void)
{
	walk(32);
}
static void size_33(void)
{
	walk(33);
}
static void size_250(void)
{
	walk(250);
}
static void size_512(void)
{
	walk(512);
}
static void size_1024(void)
{
	walk(1024);
}

/* 250 means 250: it holds exactly 250 without flushing, and flushes at 251. */
static void exact_size_250(void)
{
	struct xp_pool *p = mk(1000);
	struct xp_cache *c = NULL;
	struct xp_cache_stats st;
	__u64 buf[300];

	XT_REQUIRE(p);
	XT_EQ(xp_cache_create(p, 250, &c), 0);
	XT_EQ(xp_pool_get(p, buf, 251), 0);
	for (int i = 0; i < 250; i++)
		XT_EQ(xp_cache_put(c, &buf[i], 1), 0);
	XT_EQ(xp_cache_count(c), 250);
	xp_cache_stats_get(c, &st);
	XT_EQ(st.flushes, 0);
	XT_EQ(xp_cache_put(c, &buf[250], 1), 0);
	xp_cache_stats_get(c, &st);
	XT_EQ(st.flushes, 1);
	XT_EQ(st.objs_flushed % XP_PILE_BULK, 0);
	XT_CHECK(xp_cache_count(c) >= 125 - XP_PILE_BULK &&
		 xp_cache_count(c) <= 125 + XP_PILE_BULK);
	xp_cache_destroy(c);
	XT_EQ(xp_pool_avail(p), 1000);
	xp_pool_destroy(p);
}

/* A core alternating put/get of one bulk at the flush and refill boundaries. */
static void no_thrash(void)
{
	struct xp_pool *p = mk(4096);
	struct xp_cache *c = NULL;
	struct xp_cache_stats st;
	__u64 buf[512];

	XT_REQUIRE(p);
	XT_EQ(xp_cache_create(p, 512, &c), 0);
	XT_EQ(xp_pool_get(p, buf, 512), 0);
	XT_EQ(xp_cache_put(c, buf, 512), 0); /* full: the next put flushes */
	for (int i = 0; i < 1000; i++) {
		XT_EQ(xp_cache_put(c, buf, 32), 0);
		XT_EQ(xp_cache_get(c, buf, 32), 0);
	}
	xp_cache_stats_get(c, &st);
	XT_CHECK(st.flushes + st.refills <= 1);
	/* same at the empty end */
	XT_EQ(xp_cache_flush(c), 0);
	for (int i = 0; i < 1000; i++) {
		XT_EQ(xp_cache_get(c, buf, 32), 0);
		XT_EQ(xp_cache_put(c, buf, 32), 0);
	}
	xp_cache_stats_get(c, &st);
	XT_CHECK(st.refills <= 1);
	xp_cache_destroy(c);
	XT_EQ(xp_pool_avail(p), 4096);
	xp_pool_destroy(p);
}

/* With the pool never short, every transfer is whole bulks once the size allows. */
static void whole_bulks(void)
{
	const __u32 sizes[] = { 64, 100, 250, 512, 1024 };
	unsigned int seed = 99;
	__u64 buf[64];

	for (int s = 0; s < 5; s++) {
		struct xp_pool *p = mk(20000);
		struct xp_cache *c = NULL;
		struct xp_cache_stats st;
		struct pc_held h;

		XT_REQUIRE(p);
		pc_held_init(&h, 20000);
		XT_EQ(xp_cache_create(p, sizes[s], &c), 0);
		for (int i = 0; i < 20000; i++) {
			__u32 k = (__u32)rand_r(&seed) % 65;

			if (h.count + k < 4000 && rand_r(&seed) % 2) {
				XT_EQ(xp_cache_get(c, buf, k), 0);
				pc_took(&h, buf, k);
			} else {
				k = k < h.count ? k : h.count;
				pc_give_random(&h, buf, k, &seed);
				XT_EQ(xp_cache_put(c, buf, k), 0);
			}
		}
		xp_cache_stats_get(c, &st);
		XT_CHECK(st.refills > 0 && st.flushes > 0);
		XT_EQ(st.objs_refilled % XP_PILE_BULK, 0);
		XT_EQ(st.objs_flushed % XP_PILE_BULK, 0);
		PC_CONSERVED(p, &h);
		pc_give(&h, buf, 0);
		pc_held_fini(&h);
		xp_cache_destroy(c);
		xp_pool_destroy(p);
	}
}

static void bypass(void)
{
	struct xp_pool *p = mk(1000);
	struct xp_cache *c = NULL;
	struct xp_cache_stats st;
	__u64 buf[1001];

	XT_REQUIRE(p);
	XT_EQ(xp_cache_create(p, 64, &c), 0);
	XT_EQ(xp_cache_get(c, buf, 65), 0);
	XT_EQ(xp_cache_count(c), 0);
	XT_EQ(xp_pool_avail(p), 1000 - 65);
	XT_EQ(xp_cache_put(c, buf, 65), 0);
	XT_EQ(xp_cache_count(c), 0);
	XT_EQ(xp_pool_avail(p), 1000);
	XT_EQ(xp_cache_get(c, buf, 1001), -ENOBUFS);
	xp_cache_stats_get(c, &st);
	XT_EQ(st.bypasses, 3);
	XT_EQ(st.fails, 1);
	xp_cache_destroy(c);
	xp_pool_destroy(p);
}

/* A get the pool can only meet in part leaves both the cache and the pool as they were. */
static void get_fails_cleanly(void)
{
	struct xp_pool *p = mk(100);
	struct xp_cache *c = NULL;
	__u64 buf[120];

	XT_REQUIRE(p);
	XT_EQ(xp_cache_create(p, 64, &c), 0);
	XT_EQ(xp_pool_get(p, buf + 5, 90), 0);
	XT_EQ(xp_cache_put(c, buf + 90, 5), 0);
	/* cache 5, pool 10: 16 cannot be met (15 exist) */
	XT_EQ(xp_cache_get(c, buf + 95, 16), -ENOBUFS);
	XT_EQ(xp_cache_count(c), 5);
	XT_EQ(xp_pool_avail(p), 10);
	if (!XT_EQ(xp_pool_audit(p), 0))
		fprintf(stderr, "  audit: %s", pc_last_log);
	/* 15 can: the refill falls back from a whole bulk to the exact need */
	XT_EQ(xp_cache_get(c, buf + 90, 15), 0);
	XT_EQ(xp_cache_count(c), 0);
	XT_EQ(xp_pool_avail(p), 0);
	XT_EQ(xp_cache_put(c, buf + 5, 100), 0);
	xp_cache_destroy(c);
	XT_EQ(xp_pool_avail(p), 100);
	XT_EQ(xp_pool_audit(p), 0);
	xp_pool_destroy(p);
}

/* More caches than the stash budget still work; destroying them returns everything. */
static void many_caches(void)
{
	struct xp_pool *p = mk(5000);
	struct xp_cache *c[40];
	__u64 buf[64];

	XT_REQUIRE(p);
	for (int i = 0; i < 40; i++) {
		XT_EQ(xp_cache_create(p, 100 + i, &c[i]), 0);
		XT_EQ(xp_cache_get(c[i], buf, 64), 0);
		XT_EQ(xp_cache_put(c[i], buf, 64), 0);
	}
	XT_EQ(xp_pool_avail(p) + xp_pool_cached(p), 5000);
	XT_EQ(xp_pool_audit(p), 0);
	for (int i = 0; i < 40; i++)
		xp_cache_destroy(c[i]);
	XT_EQ(xp_pool_avail(p), 5000);
	XT_EQ(xp_pool_cached(p), 0);
	XT_EQ(xp_pool_audit(p), 0);
	xp_pool_destroy(p);
}

int main(void)
{
	pc_log_capture();
	for (backend = XP_POOL_PILE; backend <= XP_POOL_RING; backend++) {
		fprintf(stderr, "backend %s\n", xp_pool_backend_name(backend));
		XT_RUN(invalid_size);
		XT_RUN(size_0);
		XT_RUN(size_1);
		XT_RUN(size_31);
		XT_RUN(size_32);
		XT_RUN(size_33);
		XT_RUN(size_250);
		XT_RUN(size_512);
		XT_RUN(size_1024);
		XT_RUN(exact_size_250);
		XT_RUN(no_thrash);
		XT_RUN(whole_bulks);
		XT_RUN(bypass);
		XT_RUN(get_fails_cleanly);
		XT_RUN(many_caches);
	}
	return xt_done();
}
