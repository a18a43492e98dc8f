// SPDX-License-Identifier: BSD-3-Clause
/*
 * The pile's stripes (xp_pool_opts.stripes): gets that steal across stripes keep
 * the all-or-nothing contract and the creation order, puts whose home has no empty
 * nodes gather them from other stripes, a walk over several homes matches a model
 * after every call, and the stripes' banks keep every node and handle accounted for,
 * also while a stalled thread holds them all.
 */
#include "pile_check.h"
#include "pool_internal.h"

static struct xp_pool *mk(__u32 n, __u32 stripes, __u32 max_caches)
{
	return pc_pool(n, (struct xp_pool_opts){ .stripes = stripes, .max_caches = max_caches });
}

static void invalid_stripes(void)
{
	struct xp_pool_opts o = { .sz = sizeof(o), .stripes = XP_PILE_STRIPES_MAX + 1 };
	struct xp_pool *p = (struct xp_pool *)1;
	__u64 *h = pc_handles(64);

	XT_EQ(xp_pool_create(h, 64, &o, &p), -EINVAL);
	XT_CHECK(pc_logged("stripes"));
	XT_CHECK(p == NULL);
	o.stripes = XP_PILE_STRIPES_MAX;
	XT_EQ(xp_pool_create(h, 64, &o, &p), 0);
	XT_EQ(xp_pool_avail(p), 64);
	XT_EQ(xp_pool_audit(p), 0);
	xp_pool_destroy(p);
	free(h);
}

/* Stripe s starts with the s-th slice: a fresh uncached get of all reads them in order. */
static void fresh_order_across(void)
{
	const __u32 n = 1000;
	struct xp_pool *p = mk(n, 4, 0);
	__u64 buf[1001];

	XT_REQUIRE(p);
	XT_EQ(xp_pool_get(p, buf, n), 0);
	for (__u32 i = 0; i < n; i++)
		if (!XT_EQ(buf[i], PC_BASE + i * PC_STRIDE))
			break;
	XT_EQ(xp_pool_avail(p), 0);
	XT_EQ(xp_pool_get(p, buf, 1), -ENOBUFS);
	XT_EQ(xp_pool_put(p, buf, n), 0);
	/* A refused get gathers across the stripes and gives all back (order may change). */
	XT_EQ(xp_pool_get(p, buf, n + 1), -ENOBUFS);
	XT_EQ(xp_pool_avail(p), n);
	XT_EQ(xp_pool_audit(p), 0);
	xp_pool_destroy(p);
}

/*
 * A stashless cache homed on stripe 1 takes everything (its home has half: the rest
 * is stolen), then returns everything: its home's free stack holds only the nodes
 * emptied there and stripe 0's not enough alone either, so the put gathers.
 */
static void steal_and_gather(void)
{
	const __u32 n = 32 * 300;
	struct xp_pool *p = mk(n, 2, 1);
	struct xp_cache *c0 = NULL, *c1 = NULL;
	__u64 *buf = malloc((n + 1) * sizeof(*buf)); /* the refused get of n + 1 */
	struct pc_held h;

	XT_REQUIRE(p && buf);
	pc_held_init(&h, n);
	XT_EQ(xp_cache_create(p, 64, &c0), 0); /* home 0, the only stash */
	XT_EQ(xp_cache_create(p, 0, &c1), 0); /* home 1, no stash */
	XT_EQ(xp_cache_get(c1, buf, n + 1), -ENOBUFS);
	XT_EQ(xp_pool_avail(p), n);
	XT_EQ(xp_cache_get(c1, buf, n), 0);
	XT_CHECK(pc_took(&h, buf, n));
	XT_EQ(xp_pool_avail(p), 0);
	XT_EQ(xp_cache_get(c0, buf, 1), -ENOBUFS);
	XT_EQ(xp_pool_audit(p), 0);
	pc_give_random(&h, buf, n, &(unsigned int){ 7 });
	XT_EQ(xp_cache_put(c1, buf, n), 0);
	XT_EQ(xp_pool_avail(p), n);
	XT_EQ(xp_pool_audit(p), 0);
	/* Now all on stripe 1: the cache homed on 0 refills by stealing. */
	XT_EQ(xp_cache_get(c0, buf, 40), 0);
	XT_EQ(xp_cache_put(c0, buf, 40), 0);
	xp_cache_destroy(c0);
	xp_cache_destroy(c1);
	XT_EQ(xp_pool_avail(p), n);
	XT_EQ(xp_pool_audit(p), 0);
	pc_held_fini(&h);
	free(buf);
	xp_pool_destroy(p);
}

/*
 * Uncached calls (stripe 0) and size-0 caches homed on stripes 0, 1, 2, 0 move
 * handles between stripes at random; a get must succeed exactly when the pool as a
 * whole holds enough (the boundary n - held and one more are tried often).
 */
static void walk_homes(void)
{
	const __u32 sizes[] = { 1, 33, 100, 1000, 4099 };
	unsigned int seed = 4242;
	__u64 *buf = malloc(5000 * sizeof(*buf));

	for (size_t s = 0; s < sizeof(sizes) / sizeof(sizes[0]); s++) {
		__u32 n = sizes[s];
		struct xp_pool *p = mk(n, 3, 0);
		struct xp_cache *c[4] = { 0 };
		struct pc_held h;

		XT_REQUIRE(p);
		pc_held_init(&h, n);
		for (int i = 0; i < 4; i++)
			XT_EQ(xp_cache_create(p, 0, &c[i]), 0);
		for (int i = 0; i < 4000; i++) {
			__u32 free_now = n - h.count, r = (__u32)rand_r(&seed), k;
			struct xp_cache *who = c[r % 5 < 4 ? r % 5 : 0];
			bool uncached = r % 5 == 4;

			r = (__u32)rand_r(&seed);
			k = r % 4 == 0 ? free_now + (r / 4) % 2 : r % 3 ? r % 70 : r % (n + 2);
			if (rand_r(&seed) % 2) {
				int err = uncached ? xp_pool_get(p, buf, k) :
						     xp_cache_get(who, buf, k);

				XT_EQ(err, k <= free_now ? 0 : -ENOBUFS);
				if (!err)
					pc_took(&h, buf, k);
			} else {
				k = k < h.count ? k : h.count;
				pc_give_random(&h, buf, k, &seed);
				XT_EQ(uncached ? xp_pool_put(p, buf, k) : xp_cache_put(who, buf, k),
				      0);
			}
			XT_EQ(xp_pool_avail(p), n - h.count);
			if (i % 256 == 0)
				XT_EQ(xp_pool_audit(p), 0);
		}
		PC_CONSERVED(p, &h);
		/* Each home takes back a share, then lets go of its stash. */
		for (int i = 0; i < 4; i++) {
			__u32 share = h.count / (__u32)(4 - i);

			pc_give(&h, buf, share);
			XT_EQ(xp_cache_put(c[i], buf, share), 0);
			xp_cache_destroy(c[i]);
		}
		XT_EQ(xp_pool_avail(p), n);
		XT_EQ(xp_pool_audit(p), 0);
		pc_held_fini(&h);
		xp_pool_destroy(p);
	}
	free(buf);
}

/* The end of a case: the caches go, the pool holds all @n and passes its audit. */
static void all_back(struct xp_pool *p, struct xp_cache **c, int nc, __u32 n, struct pc_held *h,
		     __u64 *buf)
{
	for (int i = 0; i < nc; i++)
		xp_cache_destroy(c[i]);
	XT_EQ(xp_pool_avail(p), n);
	XT_EQ(xp_pool_audit(p), 0);
	pc_held_fini(h);
	free(buf);
	xp_pool_destroy(p);
}

/*
 * The banks (docs/pile.md, "The bank"): a cache drains the whole pool in bulks and
 * fills it again, so whole-bulk refills and flushes run through its home's bank and
 * steal from the others' banks; then caches homed elsewhere do the same (their
 * banks fetch the empty nodes from the first one's), and uncached calls that are not
 * whole bulks split a bank's node through its stack. avail and the audit (every
 * node, in every bank) stay exact after each step.
 */
static void bank_drain_refill(void)
{
	const __u32 stripes[] = { 1, 2, 4 }, n = 32 * 500 + 7;

	for (size_t t = 0; t < sizeof(stripes) / sizeof(stripes[0]); t++) {
		struct xp_pool *p = mk(n, stripes[t], 0);
		struct xp_cache *c[3] = { NULL };
		__u64 *buf = malloc((n + 64) * sizeof(*buf));
		struct pc_held h;
		__u32 got;

		XT_REQUIRE(p && buf);
		pc_held_init(&h, n);
		for (int i = 0; i < 3; i++)
			XT_EQ(xp_cache_create(p, 512, &c[i]), 0);
		for (int round = 0; round < 6; round++) {
			struct xp_cache *who = c[round % 3];

			for (int i = 0; i < 3; i++)
				XT_EQ(xp_cache_flush(c[i]), 0);
			for (got = 0; got + 64 <= n; got += 64)
				if (!XT_EQ(xp_cache_get(who, buf + got, 64), 0))
					break;
			XT_CHECK(pc_took(&h, buf, got));
			XT_EQ(xp_pool_avail(p) + xp_pool_cached(p), n - got);
			XT_EQ(xp_pool_audit(p), 0);
			XT_EQ(xp_cache_get(who, buf + got, 64), -ENOBUFS);
			pc_give_random(&h, buf, got, &(unsigned int){ 11 + round });
			for (__u32 i = 0; i < got; i += 64)
				XT_EQ(xp_cache_put(who, buf + i, 64), 0);
			XT_EQ(xp_pool_avail(p) + xp_pool_cached(p), n);
			XT_EQ(xp_pool_audit(p), 0);
		}
		for (int i = 0; i < 3; i++)
			XT_EQ(xp_cache_flush(c[i]), 0);
		XT_EQ(xp_pool_avail(p), n);
		/* Uncached: 40 takes a bank's node apart; 33 + 31 + 64 and back. */
		XT_EQ(xp_pool_get(p, buf, 40), 0);
		XT_EQ(xp_pool_get(p, buf + 40, 33), 0);
		XT_EQ(xp_pool_get(p, buf + 73, 31), 0);
		XT_EQ(xp_pool_get(p, buf + 104, 64), 0);
		XT_CHECK(pc_took(&h, buf, 168));
		XT_EQ(xp_pool_avail(p), n - 168);
		XT_EQ(xp_pool_audit(p), 0);
		pc_give(&h, buf, 168);
		XT_EQ(xp_pool_put(p, buf, 168), 0);
		XT_EQ(xp_pool_put(p, buf, 32), -ENOSPC); /* one bulk beyond N */
		XT_EQ(xp_pool_avail(p), n);
		XT_EQ(xp_pool_get(p, buf, n), 0);
		XT_EQ(xp_pool_put(p, buf, n), 0);
		all_back(p, c, 3, n, &h, buf);
	}
}

/* Every bank held, as by threads stalled inside them (their nodes stay theirs). */
static void banks_hold(struct xp_pool *p, __u32 busy)
{
	for (__u32 s = 0; s < p->pile.nstripes; s++)
		__atomic_store_n(&p->pile.sp[s].bank.busy, busy, __ATOMIC_RELEASE);
}

/* Handles in full nodes of banks held: out of reach until their holders let go. */
static __u32 banks_hidden(const struct xp_pool *p)
{
	__u32 n = 0;

	for (__u32 s = 0; s < p->pile.nstripes; s++)
		n += bank_nfull(&p->pile.sp[s].bank) * B;
	return n;
}

/*
 * With every bank held (threads stalled in them) nobody waits: refills and flushes go
 * to the stripes' lock-free stacks and steal across stripes. (node_gather, which
 * collects empty nodes from several stripes' stacks, needs every stack short at once,
 * which the banks' node budget now makes rare; this does not reach it.) Exactly what
 * lies outside the held banks can be taken,
 * by any home, in bulks and odd sizes, and all of it put back through another home;
 * released, the banks serve again and the whole pool can be taken. avail and the
 * audit are exact throughout.
 */
static void banks_stalled(void)
{
	const __u32 stripes[] = { 1, 2, 4 }, n = 32 * 400 + 5;
	unsigned int seed = 99;

	for (size_t t = 0; t < sizeof(stripes) / sizeof(stripes[0]); t++) {
		struct xp_pool *p = mk(n, stripes[t], 0);
		struct xp_cache *c[4] = { NULL };
		__u64 *buf = malloc((n + 64) * sizeof(*buf));
		struct pc_held h;
		__u32 got, hidden;

		XT_REQUIRE(p && buf);
		pc_held_init(&h, n);
		for (int i = 0; i < 4; i++)
			XT_EQ(xp_cache_create(p, i % 2 ? 0 : 256, &c[i]), 0);
		/* Every full node out of the banks, then every bank stalls (empty nodes in
		 * them stay there), and all of it goes back to the stripes' stacks. */
		XT_EQ(xp_cache_get(c[0], buf, n), 0);
		XT_CHECK(pc_took(&h, buf, n));
		banks_hold(p, 1);
		hidden = banks_hidden(p);
		XT_EQ(hidden, 0);
		pc_give_random(&h, buf, n, &seed);
		for (got = 0; got < n;) {
			__u32 k = 1 + (__u32)rand_r(&seed) % 200;

			k = k < n - got ? k : n - got;
			XT_EQ(xp_cache_put(c[got % 4], buf + got, k), 0);
			got += k;
		}
		for (int i = 0; i < 4; i++)
			XT_EQ(xp_cache_flush(c[i]), 0);
		XT_EQ(xp_pool_avail(p), n);
		XT_EQ(xp_pool_audit(p), 0);
		for (int round = 0; round < 8; round++) {
			struct xp_cache *who = c[round % 4];

			/* Everything within reach, in random sizes, halving a refused one. */
			for (got = 0;;) {
				__u32 k = 1 + (__u32)rand_r(&seed) % 97;

				while (k && xp_cache_get(who, buf + got, k))
					k /= 2;
				if (!k)
					break;
				got += k;
			}
			XT_CHECK(pc_took(&h, buf, got));
			XT_EQ(got, n - hidden);
			XT_EQ(xp_pool_audit(p), 0);
			/* Back through another home, whose stripe may have no empty nodes. */
			pc_give_random(&h, buf, got, &seed);
			XT_EQ(xp_cache_put(c[(round + 1) % 4], buf, got), 0);
			for (int i = 0; i < 4; i++)
				XT_EQ(xp_cache_flush(c[i]), 0);
			XT_EQ(xp_pool_avail(p), n);
			XT_EQ(xp_pool_audit(p), 0);
			XT_EQ(banks_hidden(p), hidden); /* nobody touched a held bank */
		}
		/* Each home takes a share, so the empty nodes lie on every stripe's stack,
		 * then one put of all of it through a home without a stash. */
		for (got = 0; got < n - hidden;) {
			__u32 k = (n - hidden) / 4 + 1;

			k = k < n - hidden - got ? k : n - hidden - got;
			if (!XT_EQ(xp_cache_get(c[got * 4 / (n - hidden)], buf + got, k), 0))
				break;
			got += k;
		}
		XT_CHECK(pc_took(&h, buf, got));
		pc_give(&h, buf, got);
		XT_EQ(xp_cache_put(c[1], buf, got), 0);
		for (int i = 0; i < 4; i++)
			XT_EQ(xp_cache_flush(c[i]), 0);
		XT_EQ(xp_pool_avail(p), n);
		XT_EQ(xp_pool_audit(p), 0);
		banks_hold(p, 0);
		XT_EQ(xp_cache_get(c[2], buf, n), 0);
		XT_CHECK(pc_took(&h, buf, n));
		pc_give(&h, buf, n);
		XT_EQ(xp_cache_put(c[3], buf, n), 0);
		all_back(p, c, 4, n, &h, buf);
	}
}

int main(void)
{
	pc_log_capture();
	XT_RUN(invalid_stripes);
	XT_RUN(fresh_order_across);
	XT_RUN(steal_and_gather);
	XT_RUN(walk_homes);
	XT_RUN(bank_drain_refill);
	XT_RUN(banks_stalled);
	return xt_done();
}
