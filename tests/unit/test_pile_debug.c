// SPDX-License-Identifier: BSD-3-Clause
/*
 * Debug mode (XP_POOL_F_DEBUG), both backends, cached and uncached: double frees,
 * puts beyond N, foreign, out-of-UMEM and misaligned handles are refused with
 * -EINVAL, a clear message, and no change at all; the audit proves
 * free + cached + in use == N and catches a handle the pool lost track of.
 */
#include "pile_check.h"

static enum xp_pool_backend backend;
static __u32 cache_size; /* 0: uncached calls */

static struct xp_pool *mk(__u32 n)
{
	struct xp_pool *p = pc_pool(n, (struct xp_pool_opts){
					       .backend = backend,
					       .flags = XP_POOL_F_DEBUG,
					       .umem_size = PC_BASE + (n + 8) * PC_STRIDE,
					       .handle_align = PC_STRIDE,
				       });

	XT_CHECK(p && xp_pool_debug(p));
	return p;
}

static int get(struct xp_pool *p, struct xp_cache *c, __u64 *objs, __u32 n)
{
	return c ? xp_cache_get(c, objs, n) : xp_pool_get(p, objs, n);
}

static int put(struct xp_pool *p, struct xp_cache *c, const __u64 *objs, __u32 n)
{
	return c ? xp_cache_put(c, objs, n) : xp_pool_put(p, objs, n);
}

/* A refused put: -EINVAL, the expected message, and nothing moved. */
#define REFUSED(p, c, objs, n, msg)                                  \
	do {                                                         \
		__u32 a_ = xp_pool_avail(p), c_ = xp_pool_cached(p); \
		XT_EQ(put(p, c, objs, n), -EINVAL);                  \
		XT_CHECK(pc_logged(msg));                            \
		XT_EQ(xp_pool_avail(p), a_);                         \
		XT_EQ(xp_pool_cached(p), c_);                        \
		XT_EQ(xp_pool_audit(p), 0);                          \
	} while (0)

static void detections(void)
{
	__u32 n = 200;
	struct xp_pool *p = mk(n);
	struct xp_cache *c = NULL;
	__u64 buf[64], bad[3];

	XT_REQUIRE(p);
	if (cache_size)
		XT_EQ(xp_cache_create(p, cache_size, &c), 0);
	XT_EQ(get(p, c, buf, 40), 0);
	XT_EQ(xp_pool_in_use(p), 40);
	XT_EQ(put(p, c, buf, 10), 0);
	/* double free: the same 10 again, or one of them inside a good batch */
	REFUSED(p, c, buf, 10, "double free");
	bad[0] = buf[20];
	bad[1] = buf[5];
	REFUSED(p, c, bad, 2, "double free");
	XT_EQ(xp_pool_in_use(p), 30); /* buf[20] was rolled back to in use */
	/* the same handle twice in one batch */
	bad[0] = buf[21];
	bad[1] = buf[21];
	REFUSED(p, c, bad, 2, "double free");
	/* foreign: a frame of the UMEM that is not in this pool */
	bad[0] = PC_BASE + (n + 1) * PC_STRIDE;
	REFUSED(p, c, bad, 1, "not from this pool");
	bad[0] = PC_BASE + (n + 100) * PC_STRIDE;
	REFUSED(p, c, bad, 1, "outside the UMEM");
	bad[0] = buf[22] + 64;
	REFUSED(p, c, bad, 1, "not aligned");
	/* a put beyond N: everything back, then one more */
	XT_EQ(put(p, c, buf + 10, 30), 0);
	XT_EQ(xp_pool_in_use(p), 0);
	REFUSED(p, c, buf, 1, "double free");
	XT_EQ(xp_pool_avail(p) + xp_pool_cached(p), n);
	xp_cache_destroy(c);
	XT_EQ(xp_pool_audit(p), 0);
	xp_pool_destroy(p);
}

/* The audit counts in-use handles independently of the pool's own counters. */
static void audit_proves(void)
{
	__u32 n = 333;
	struct xp_pool *p = mk(n);
	struct xp_cache *c = NULL;
	unsigned int seed = 5;
	struct pc_held h;
	__u64 buf[128];

	XT_REQUIRE(p);
	pc_held_init(&h, n);
	if (cache_size)
		XT_EQ(xp_cache_create(p, cache_size, &c), 0);
	for (int i = 0; i < 3000; i++) {
		__u32 k = (__u32)rand_r(&seed) % 100;

		if (rand_r(&seed) % 2) {
			if (!get(p, c, buf, k))
				pc_took(&h, buf, k);
		} else {
			k = k < h.count ? k : h.count;
			pc_give_random(&h, buf, k, &seed);
			XT_EQ(put(p, c, buf, k), 0);
		}
		if (i % 300 == 0)
			PC_CONSERVED(p, &h);
	}
	PC_CONSERVED(p, &h);
	pc_give(&h, buf, h.count < 128 ? h.count : 128);
	xp_cache_destroy(c);
	pc_held_fini(&h);
	xp_pool_destroy(p);
}

/*
 * The audit must fail when the pool holds garbage. Without debug mode nothing stops
 * a double free or a foreign put, so make both happen and let the audit find them.
 */
static void audit_catches(void)
{
	struct xp_pool_opts o = { .sz = sizeof(o), .backend = backend };
	__u64 *h = pc_handles(64), x, y[2], foreign = 0x42;
	struct xp_pool *p = NULL;

	XT_EQ(xp_pool_create(h, 64, &o, &p), 0);
	XT_REQUIRE(p);
	XT_EQ(xp_pool_get(p, &x, 1), 0);
	XT_EQ(xp_pool_put(p, &x, 1), 0);
	XT_EQ(xp_pool_audit(p), 0);
	XT_EQ(xp_pool_get(p, y, 2), 0);
	XT_EQ(xp_pool_put(p, y, 1), 0);
	XT_EQ(xp_pool_put(p, y, 1), 0); /* undetected without debug mode ... */
	XT_EQ(xp_pool_audit(p), -EUCLEAN); /* ... but the audit sees it */
	XT_CHECK(pc_logged("held twice"));
	xp_pool_destroy(p);
	XT_EQ(xp_pool_create(h, 64, &o, &p), 0);
	XT_EQ(xp_pool_get(p, &x, 1), 0);
	XT_EQ(xp_pool_put(p, &foreign, 1), 0);
	XT_EQ(xp_pool_audit(p), -EUCLEAN);
	XT_CHECK(pc_logged("foreign"));
	xp_pool_destroy(p);
	free(h);
}

/* Handles that are not evenly spaced take the searched path: same detections. */
static void uneven_handles(void)
{
	__u32 n = 100;
	__u64 *h = pc_handles(n + 1), buf[100], gap;
	struct xp_pool_opts o = { .sz = sizeof(o), .backend = backend, .flags = XP_POOL_F_DEBUG };
	struct xp_pool *p = NULL;

	gap = h[7];
	h[7] = h[n]; /* frame 7 missing, frame n present */
	XT_EQ(xp_pool_create(h, n, &o, &p), 0);
	XT_REQUIRE(p);
	XT_EQ(xp_pool_get(p, buf, n), 0);
	XT_EQ(xp_pool_put(p, &gap, 1), -EINVAL);
	XT_CHECK(pc_logged("not from this pool"));
	XT_EQ(xp_pool_put(p, buf, 50), 0);
	XT_EQ(xp_pool_put(p, buf + 49, 1), -EINVAL);
	XT_CHECK(pc_logged("double free"));
	XT_EQ(xp_pool_in_use(p), 50);
	XT_EQ(xp_pool_audit(p), 0);
	XT_EQ(xp_pool_put(p, buf + 50, 50), 0);
	XT_EQ(xp_pool_avail(p), n);
	XT_EQ(xp_pool_audit(p), 0);
	xp_pool_destroy(p);
	free(h);
}

int main(void)
{
	const __u32 sizes[] = { 0, 1, 33, 512 };

	pc_log_capture();
	for (backend = XP_POOL_PILE; backend <= XP_POOL_RING; backend++)
		for (int s = 0; s < 4; s++) {
			cache_size = sizes[s];
			fprintf(stderr, "backend %s cache %u\n", xp_pool_backend_name(backend),
				cache_size);
			XT_RUN(detections);
			XT_RUN(audit_proves);
			if (!s) {
				XT_RUN(audit_catches);
				XT_RUN(uneven_handles);
			}
		}
	return xt_done();
}
