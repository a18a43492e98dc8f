// SPDX-License-Identifier: BSD-3-Clause
/*
 * The pool without caches, for both backends: creation arguments, exact counts,
 * all-or-nothing gets, partial bulks and the odd sequences the pile RFC review ran,
 * and a long random single-threaded walk checked against a model after every call.
 */
#include "pile_check.h"

static enum xp_pool_backend backend;

static struct xp_pool *mk(__u32 n, __u32 flags)
{
	return pc_pool(n, (struct xp_pool_opts){ .backend = backend, .flags = flags });
}

static void invalid_creation(void)
{
	struct xp_pool_opts o = { .sz = sizeof(o), .backend = backend };
	struct xp_pool *p = (struct xp_pool *)1;
	__u64 *h = pc_handles(64);
	struct {
		struct xp_pool_opts o;
		__u64 future;
	} big = { .o = o, .future = 1 };

	XT_EQ(xp_pool_create(h, 0, &o, &p), -EINVAL);
	XT_CHECK(p == NULL);
	XT_CHECK(pc_logged("0 handles"));
	XT_EQ(xp_pool_create(NULL, 4, &o, &p), -EINVAL);
	XT_EQ(xp_pool_create(h, 4, &o, NULL), -EINVAL);
	o.backend = 7;
	XT_EQ(xp_pool_create(h, 4, &o, &p), -EINVAL);
	XT_CHECK(pc_logged("backend"));
	o.backend = backend;
	o.flags = 0x80;
	XT_EQ(xp_pool_create(h, 4, &o, &p), -EINVAL);
	XT_CHECK(pc_logged("flags"));
	o.flags = 0;
	big.o.sz = sizeof(big);
	XT_EQ(xp_pool_create(h, 4, &big.o, &p), -EINVAL);
	XT_CHECK(pc_logged("opts"));
	big.future = 0; /* unknown but zero fields are fine (newer caller, older lib) */
	XT_EQ(xp_pool_create(h, 4, &big.o, &p), 0);
	xp_pool_destroy(p);
	h[3] = h[1];
	XT_EQ(xp_pool_create(h, 4, &o, &p), -EINVAL);
	XT_CHECK(pc_logged("twice"));
	h[3] = PC_BASE + 3 * PC_STRIDE;
	o.umem_size = PC_BASE + 2 * PC_STRIDE;
	XT_EQ(xp_pool_create(h, 4, &o, &p), -EINVAL);
	XT_CHECK(pc_logged("outside the UMEM"));
	o.umem_size = 0;
	o.handle_align = 4096;
	XT_EQ(xp_pool_create(h, 4, &o, &p), -EINVAL);
	XT_CHECK(pc_logged("aligned"));
	/* NULL opts = defaults */
	XT_EQ(xp_pool_create(h, 4, NULL, &p), 0);
	XT_EQ(xp_pool_backend(p), XP_POOL_PILE);
	XT_EQ(xp_pool_size(p), 4);
	xp_pool_destroy(p);
	free(h);
}

static void pool_of_one(void)
{
	struct xp_pool *p = mk(1, 0);
	__u64 x = 0, y = 0;

	XT_REQUIRE(p);
	XT_EQ(xp_pool_avail(p), 1);
	XT_EQ(xp_pool_get(p, &x, 1), 0);
	XT_EQ(x, PC_BASE);
	XT_EQ(xp_pool_avail(p), 0);
	XT_EQ(xp_pool_in_use(p), 1);
	XT_EQ(xp_pool_get(p, &y, 1), -ENOBUFS);
	XT_EQ(xp_pool_put(p, &x, 1), 0);
	XT_EQ(xp_pool_avail(p), 1);
	XT_EQ(xp_pool_audit(p), 0);
	xp_pool_destroy(p);
}

static void zero_and_too_big(void)
{
	__u32 n = 100;
	struct xp_pool *p = mk(n, 0);
	__u64 buf[128] = { 0 };

	XT_REQUIRE(p);
	XT_EQ(xp_pool_get(p, buf, 0), 0);
	XT_EQ(xp_pool_put(p, buf, 0), 0);
	XT_EQ(xp_pool_avail(p), n);
	XT_EQ(xp_pool_get(p, buf, n + 1), -ENOBUFS);
	XT_EQ(xp_pool_get(p, buf, 128), -ENOBUFS);
	XT_EQ(xp_pool_avail(p), n);
	XT_EQ(xp_pool_audit(p), 0);
	xp_pool_destroy(p);
}

static void fresh_order(void)
{
	struct xp_pool *p = mk(100, 0);
	__u64 buf[32];

	XT_REQUIRE(p);
	XT_EQ(xp_pool_get(p, buf, 32), 0);
	for (int i = 0; i < 32; i++)
		XT_EQ(buf[i], PC_BASE + i * PC_STRIDE);
	xp_pool_destroy(p);
}

/* Empty the pool, then check every partial-bulk split gives back exactly what went in. */
static void sequence(const __u32 *puts, int nputs, const __u32 *gets, int ngets)
{
	__u32 n = 96 + 7;
	struct xp_pool *p = mk(n, 0);
	struct pc_held h;
	__u64 buf[256];

	XT_REQUIRE(p);
	pc_held_init(&h, n);
	XT_EQ(xp_pool_get(p, buf, n), 0);
	pc_took(&h, buf, n);
	XT_EQ(xp_pool_avail(p), 0);
	XT_EQ(xp_pool_get(p, buf, 1), -ENOBUFS);
	for (int i = 0; i < nputs; i++) {
		pc_give(&h, buf, puts[i]);
		XT_EQ(xp_pool_put(p, buf, puts[i]), 0);
		PC_CONSERVED(p, &h);
	}
	for (int i = 0; i < ngets; i++) {
		XT_EQ(xp_pool_get(p, buf, gets[i]), 0);
		XT_CHECK(pc_took(&h, buf, gets[i]));
		PC_CONSERVED(p, &h);
	}
	XT_EQ(xp_pool_avail(p), 0);
	XT_EQ(xp_pool_get(p, buf, 1), -ENOBUFS);
	pc_give(&h, buf, n);
	XT_EQ(xp_pool_put(p, buf, n), 0);
	XT_EQ(xp_pool_avail(p), n);
	XT_EQ(xp_pool_audit(p), 0);
	pc_held_fini(&h);
	xp_pool_destroy(p);
}

static void put_33_31_32_get_96(void)
{
	const __u32 puts[] = { 33, 31, 32 }, gets[] = { 96 };

	sequence(puts, 3, gets, 1);
}

static void put_64_get_40_get_24(void)
{
	const __u32 puts[] = { 64 }, gets[] = { 40, 24 };

	sequence(puts, 1, gets, 2);
}

static void odd_merges(void)
{
	const __u32 puts[] = { 1, 31, 5, 30, 2, 1, 26 }, gets[] = { 3, 33, 1, 31, 28 };

	sequence(puts, 7, gets, 5);
}

static void all_or_nothing(void)
{
	struct xp_pool *p = mk(100, 0);
	struct pc_held h;
	__u64 buf[128];

	XT_REQUIRE(p);
	pc_held_init(&h, 100);
	XT_EQ(xp_pool_get(p, buf, 60), 0);
	pc_took(&h, buf, 60);
	XT_EQ(xp_pool_get(p, buf, 41), -ENOBUFS);
	XT_EQ(xp_pool_get(p, buf, 64), -ENOBUFS);
	PC_CONSERVED(p, &h);
	XT_EQ(xp_pool_get(p, buf, 40), 0);
	XT_CHECK(pc_took(&h, buf, 40));
	PC_CONSERVED(p, &h);
	pc_give(&h, buf, 100);
	XT_EQ(xp_pool_put(p, buf, 100), 0);
	PC_CONSERVED(p, &h);
	pc_held_fini(&h);
	xp_pool_destroy(p);
}

/* Many sizes of pool against a model: every call's result and the counts must match. */
static void random_walk(void)
{
	const __u32 sizes[] = { 1, 2, 31, 32, 33, 63, 64, 65, 100, 1000, 4099 };
	unsigned int seed = 12345;
	__u64 *buf = malloc(5000 * sizeof(*buf));

	for (size_t s = 0; s < sizeof(sizes) / sizeof(sizes[0]); s++) {
		__u32 n = sizes[s];
		struct xp_pool *p = mk(n, 0);
		struct pc_held h;

		XT_REQUIRE(p);
		pc_held_init(&h, n);
		for (int i = 0; i < 4000; i++) {
			__u32 k = (__u32)rand_r(&seed) % (rand_r(&seed) % 4 ? 40 : n + 2);
			__u32 free_now = n - h.count;

			if (rand_r(&seed) % 2) {
				int err = xp_pool_get(p, buf, k);

				XT_EQ(err, k <= free_now ? 0 : -ENOBUFS);
				if (!err)
					pc_took(&h, buf, k);
			} else {
				k = k < h.count ? k : h.count;
				pc_give_random(&h, buf, k, &seed);
				XT_EQ(xp_pool_put(p, buf, k), 0);
			}
			XT_EQ(xp_pool_avail(p), n - h.count);
			if (i % 512 == 0)
				XT_EQ(xp_pool_audit(p), 0);
		}
		PC_CONSERVED(p, &h);
		pc_give(&h, buf, h.count);
		XT_EQ(xp_pool_put(p, buf, n - xp_pool_avail(p)), 0);
		XT_EQ(xp_pool_avail(p), n);
		pc_held_fini(&h);
		xp_pool_destroy(p);
	}
	free(buf);
}

static void run_all(void)
{
	XT_RUN(invalid_creation);
	XT_RUN(pool_of_one);
	XT_RUN(zero_and_too_big);
	XT_RUN(fresh_order);
	XT_RUN(put_33_31_32_get_96);
	XT_RUN(put_64_get_40_get_24);
	XT_RUN(odd_merges);
	XT_RUN(all_or_nothing);
	XT_RUN(random_walk);
}

int main(void)
{
	pc_log_capture();
	for (backend = XP_POOL_PILE; backend <= XP_POOL_RING; backend++) {
		fprintf(stderr, "backend %s\n", xp_pool_backend_name(backend));
		run_all();
	}
	return xt_done();
}
