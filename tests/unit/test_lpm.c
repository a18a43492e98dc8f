// SPDX-License-Identifier: BSD-3-Clause
/*
 * IPv4 LPM (xpile/lpm.h): DIR-24-8 answers against a brute-force reference over random
 * rule sets with adds, replaces and deletes, in both publishing modes; the covering
 * rule restored on delete, groups folded back, -ENOSPC leaving the table unchanged,
 * the bulk lookup, bad arguments.
 */
#include <errno.h>
#include <stdlib.h>

#include "xpile/log.h"
#include "xpile/lpm.h"
#include "xt.h"

#define IP(a, b, c, d) ((__u32)(a) << 24 | (__u32)(b) << 16 | (__u32)(c) << 8 | (__u32)(d))

static __u64 rng = 0x9e3779b97f4a7c15ull;

static __u32 rnd(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return (__u32)(rng >> 11);
}

static struct xp_lpm *make(enum xp_lpm_sync sync, __u32 groups)
{
	XP_OPTS(xp_lpm_opts, o, .sync = sync, .groups = groups, .hugepages = XP_HUGE_NEVER);
	struct xp_lpm *t = NULL;

	if (xp_lpm_create(&o, &t))
		return NULL;
	return t;
}

/* The reference: a plain list, longest match by scan. */
struct rule {
	__u32 addr, hop;
	__u8 depth;
	bool live;
};

static __u32 mask(__u8 d)
{
	return d ? ~0u << (32 - d) : 0;
}

static __u32 ref_lookup(const struct rule *r, __u32 n, __u32 a)
{
	int best = -1;

	for (__u32 i = 0; i < n; i++)
		if (r[i].live && (a & mask(r[i].depth)) == r[i].addr &&
		    (best < 0 || r[i].depth > r[best].depth))
			best = (int)i;
	return best < 0 ? XP_LPM_MISS : r[best].hop;
}

/* Addresses worth asking: random ones, and the edges of every rule. */
static __u32 probe(const struct rule *r, __u32 n, __u32 k)
{
	const struct rule *x = &r[rnd() % n];

	switch (k % 4) {
	case 0:
		return rnd();
	case 1:
		return x->addr;
	case 2:
		return x->addr | ~mask(x->depth);
	default:
		return x->addr | (rnd() & ~mask(x->depth));
	}
}

static __u8 rnd_depth(void)
{
	/* Many up to /24 (root only), many past it (groups), a few short ones covering
	 * much (a /6 writes 2^18 root entries: rare, to keep the suite fast). */
	__u32 r = rnd() % 64;

	if (r == 0)
		return rnd() % 9;
	if (r < 28)
		return 9 + rnd() % 16;
	return 25 + rnd() % 8;
}

static int check_all(struct xp_lpm *t, const struct rule *r, __u32 n, __u32 probes)
{
	int bad = 0;

	for (__u32 k = 0; k < probes; k++) {
		__u32 a = probe(r, n, k), want = ref_lookup(r, n, a), got = xp_lpm_lookup(t, a);

		if (got != want && bad++ < 5)
			fprintf(stderr, "  %08x: got %u want %u\n", a, got, want);
	}
	return bad;
}

static void random_ops(enum xp_lpm_sync sync)
{
	enum { N = 600 };
	static struct rule r[N];
	struct xp_lpm *t = make(sync, 4096);
	struct xp_lpm_stats st;
	__u32 n = 0;

	XT_REQUIRE(t);
	/* Clustered under few /8s so rules overlap and nest. */
	for (int round = 0; round < 3000; round++) {
		__u32 op = rnd() % 10;

		if (op < 6 && n < N) {
			__u8 d = rnd_depth();
			__u32 a = (IP(198, 18, 0, 0) | (rnd() & 0x0001ffff)) & mask(d);

			if (d < 15)
				a = (IP(198, 0, 0, 0) | (rnd() & 0x00ffffff)) & mask(d);
			for (__u32 i = 0; i < n; i++)
				if (r[i].live && r[i].addr == a && r[i].depth == d)
					r[i].live = false; /* a replace: the new entry wins */
			r[n] = (struct rule){
				.addr = a, .depth = d, .hop = rnd() % 100000, .live = true
			};
			XT_EQ(xp_lpm_add(t, a | (rnd() & ~mask(d)), d, r[n].hop), 0);
			n++;
		} else if (n) {
			struct rule *x = &r[rnd() % n];

			if (x->live) {
				XT_EQ(xp_lpm_del(t, x->addr, x->depth), 0);
				x->live = false;
			} else {
				__u32 h;
				bool other = false;

				for (__u32 i = 0; i < n; i++)
					other |= r[i].live && r[i].addr == x->addr &&
						 r[i].depth == x->depth;
				if (!other) {
					XT_EQ(xp_lpm_del(t, x->addr, x->depth), -ENOENT);
					XT_EQ(xp_lpm_get(t, x->addr, x->depth, &h), -ENOENT);
				}
			}
		}
		if (round % 50 == 49) {
			XT_EQ(xp_lpm_commit(t), 0);
			if (XT_EQ(check_all(t, r, n, 400), 0) == 0)
				break;
		}
	}
	XT_EQ(xp_lpm_commit(t), 0);
	XT_EQ(check_all(t, r, n, 20000), 0);
	/* Every rule gone: every group folded back, every entry empty. */
	for (__u32 i = 0; i < n; i++)
		if (r[i].live) {
			XT_EQ(xp_lpm_del(t, r[i].addr, r[i].depth), 0);
			r[i].live = false;
		}
	XT_EQ(xp_lpm_sync(t), 0);
	xp_lpm_stats(t, &st);
	XT_EQ(st.routes, 0);
	XT_EQ(st.groups_used, 0);
	XT_EQ(check_all(t, r, n, 2000), 0);
	xp_lpm_destroy(t);
}

static void random_inplace(void)
{
	random_ops(XP_LPM_INPLACE);
}

static void random_double(void)
{
	random_ops(XP_LPM_DOUBLE);
}

/* The classic DIR-24-8 bug: deleting a /24 under a /16 must give its entries back the
 * /16's hop, also inside a group (a /26 under the /24). */
static void delete_restores_cover(void)
{
	struct xp_lpm *t = make(XP_LPM_INPLACE, 16);
	struct xp_lpm_stats st;

	XT_REQUIRE(t);
	XT_EQ(xp_lpm_add(t, IP(198, 18, 0, 0), 16, 1), 0);
	XT_EQ(xp_lpm_add(t, IP(198, 18, 5, 0), 24, 2), 0);
	XT_EQ(xp_lpm_add(t, IP(198, 18, 5, 64), 26, 3), 0);
	XT_EQ(xp_lpm_lookup(t, IP(198, 18, 5, 1)), 2);
	XT_EQ(xp_lpm_lookup(t, IP(198, 18, 5, 65)), 3);
	XT_EQ(xp_lpm_lookup(t, IP(198, 18, 6, 1)), 1);
	XT_EQ(xp_lpm_lookup(t, IP(198, 19, 0, 1)), XP_LPM_MISS);
	XT_EQ(xp_lpm_del(t, IP(198, 18, 5, 0), 24), 0);
	XT_EQ(xp_lpm_lookup(t, IP(198, 18, 5, 1)), 1); /* inside the group */
	XT_EQ(xp_lpm_lookup(t, IP(198, 18, 5, 200)), 1);
	XT_EQ(xp_lpm_lookup(t, IP(198, 18, 5, 65)), 3);
	xp_lpm_stats(t, &st);
	XT_EQ(st.groups_used, 1);
	/* The /26 goes: the group folds back into the /16's leaf. */
	XT_EQ(xp_lpm_del(t, IP(198, 18, 5, 64), 26), 0);
	XT_EQ(xp_lpm_lookup(t, IP(198, 18, 5, 65)), 1);
	xp_lpm_stats(t, &st);
	XT_EQ(st.groups_used, 0);
	/* And the other way round: the /16 goes, the /24 stays. */
	XT_EQ(xp_lpm_add(t, IP(198, 18, 5, 0), 24, 2), 0);
	XT_EQ(xp_lpm_del(t, IP(198, 18, 0, 0), 16), 0);
	XT_EQ(xp_lpm_lookup(t, IP(198, 18, 5, 9)), 2);
	XT_EQ(xp_lpm_lookup(t, IP(198, 18, 6, 9)), XP_LPM_MISS);
	xp_lpm_destroy(t);
}

static void default_host_and_replace(void)
{
	struct xp_lpm *t = make(XP_LPM_INPLACE, 16);
	__u32 h = 0;

	XT_REQUIRE(t);
	XT_EQ(xp_lpm_add(t, 0, 0, 7), 0);
	XT_EQ(xp_lpm_lookup(t, IP(1, 2, 3, 4)), 7);
	XT_EQ(xp_lpm_lookup(t, 0xffffffff), 7);
	XT_EQ(xp_lpm_add(t, IP(198, 18, 1, 1), 32, 8), 0);
	XT_EQ(xp_lpm_lookup(t, IP(198, 18, 1, 1)), 8);
	XT_EQ(xp_lpm_lookup(t, IP(198, 18, 1, 2)), 7);
	/* Same prefix again: a replace, one rule. */
	XT_EQ(xp_lpm_add(t, IP(198, 18, 1, 1), 32, 9), 0);
	XT_EQ(xp_lpm_lookup(t, IP(198, 18, 1, 1)), 9);
	XT_EQ(xp_lpm_get(t, IP(198, 18, 1, 1), 32, &h), 0);
	XT_EQ(h, 9);
	/* Hop 0 and the largest hop are ordinary hops. */
	XT_EQ(xp_lpm_add(t, IP(198, 18, 2, 0), 24, 0), 0);
	XT_EQ(xp_lpm_add(t, IP(198, 18, 3, 0), 24, XP_LPM_HOP_MAX), 0);
	XT_EQ(xp_lpm_lookup(t, IP(198, 18, 2, 2)), 0);
	XT_EQ(xp_lpm_lookup(t, IP(198, 18, 3, 3)), XP_LPM_HOP_MAX);
	XT_EQ(xp_lpm_del(t, 0, 0), 0);
	XT_EQ(xp_lpm_lookup(t, IP(1, 2, 3, 4)), XP_LPM_MISS);
	XT_EQ(xp_lpm_lookup(t, IP(198, 18, 1, 1)), 9);
	xp_lpm_clear(t);
	XT_EQ(xp_lpm_lookup(t, IP(198, 18, 1, 1)), XP_LPM_MISS);
	XT_EQ(xp_lpm_get(t, IP(198, 18, 1, 1), 32, &h), -ENOENT);
	XT_EQ(xp_lpm_add(t, IP(198, 18, 1, 1), 32, 3), 0);
	XT_EQ(xp_lpm_lookup(t, IP(198, 18, 1, 1)), 3);
	xp_lpm_destroy(t);
}

/* No group left: the add fails and nothing changed. */
static void out_of_groups(void)
{
	struct xp_lpm *t = make(XP_LPM_INPLACE, 2);
	struct xp_lpm_stats st;

	XT_REQUIRE(t);
	XT_EQ(xp_lpm_add(t, IP(198, 18, 0, 0), 16, 1), 0);
	XT_EQ(xp_lpm_add(t, IP(198, 18, 1, 128), 25, 2), 0);
	XT_EQ(xp_lpm_add(t, IP(198, 18, 2, 128), 25, 3), 0);
	XT_EQ(xp_lpm_add(t, IP(198, 18, 2, 192), 26, 4), 0); /* same group */
	XT_EQ(xp_lpm_add(t, IP(198, 18, 3, 128), 25, 5), -ENOSPC);
	XT_EQ(xp_lpm_lookup(t, IP(198, 18, 3, 129)), 1);
	xp_lpm_stats(t, &st);
	XT_EQ(st.routes, 4);
	XT_EQ(st.groups_used, 2);
	XT_EQ(xp_lpm_del(t, IP(198, 18, 1, 128), 25), 0);
	XT_EQ(xp_lpm_add(t, IP(198, 18, 3, 128), 25, 5), 0);
	XT_EQ(xp_lpm_lookup(t, IP(198, 18, 3, 129)), 5);
	xp_lpm_destroy(t);
}

/* Double: nothing is visible before the commit, all of it after. */
static void double_publishes_at_commit(void)
{
	struct xp_lpm *t = make(XP_LPM_DOUBLE, 16);
	struct xp_lpm_stats st;

	XT_REQUIRE(t);
	XT_EQ(xp_lpm_add(t, IP(198, 18, 0, 0), 16, 1), 0);
	XT_EQ(xp_lpm_add(t, IP(198, 18, 7, 7), 32, 2), 0);
	XT_EQ(xp_lpm_lookup(t, IP(198, 18, 7, 7)), XP_LPM_MISS);
	XT_EQ(xp_lpm_commit(t), 0);
	XT_EQ(xp_lpm_lookup(t, IP(198, 18, 7, 7)), 2);
	XT_EQ(xp_lpm_lookup(t, IP(198, 18, 7, 8)), 1);
	/* The next batch starts from the caught-up standby. */
	XT_EQ(xp_lpm_del(t, IP(198, 18, 7, 7), 32), 0);
	XT_EQ(xp_lpm_add(t, IP(198, 18, 9, 0), 24, 3), 0);
	XT_EQ(xp_lpm_lookup(t, IP(198, 18, 7, 7)), 2);
	XT_EQ(xp_lpm_lookup(t, IP(198, 18, 9, 1)), 1);
	XT_EQ(xp_lpm_commit(t), 0);
	XT_EQ(xp_lpm_lookup(t, IP(198, 18, 7, 7)), 1);
	XT_EQ(xp_lpm_lookup(t, IP(198, 18, 9, 1)), 3);
	XT_EQ(xp_lpm_sync(t), 0);
	xp_lpm_stats(t, &st);
	XT_EQ(st.images, 2);
	XT_EQ(st.flips, 2);
	XT_CHECK(st.replays >= 2);
	XT_EQ(st.full_copies, 0);
	XT_EQ(st.groups_used, 0);
	xp_lpm_destroy(t);
}

/* A batch that logs more runs than the log holds: the catch-up copies everything. */
static void double_full_copy(void)
{
	struct xp_lpm *t = make(XP_LPM_DOUBLE, 16);
	struct xp_lpm_stats st;
	__u32 n = 0;

	XT_REQUIRE(t);
	/* Every other /24 of 198.0.0.0/8 and beyond: 2^21 runs of one entry. */
	for (__u32 i = 0; i < (1u << 21); i++)
		n += !xp_lpm_add(t, IP(100, 0, 0, 0) + (i << 9), 24, i & 0xffff);
	XT_EQ(n, 1u << 21);
	XT_EQ(xp_lpm_commit(t), 0);
	XT_EQ(xp_lpm_sync(t), 0);
	xp_lpm_stats(t, &st);
	XT_EQ(st.full_copies, 1);
	XT_EQ(xp_lpm_add(t, IP(198, 18, 0, 0), 15, 77), 0);
	XT_EQ(xp_lpm_commit(t), 0);
	XT_EQ(xp_lpm_lookup(t, IP(100, 0, 2, 1)), 1);
	XT_EQ(xp_lpm_lookup(t, IP(100, 0, 3, 1)), XP_LPM_MISS);
	XT_EQ(xp_lpm_lookup(t, IP(198, 19, 3, 1)), 77);
	xp_lpm_destroy(t);
}

static void bulk_matches_single(void)
{
	struct xp_lpm *t = make(XP_LPM_INPLACE, 256);
	__u32 addr[77], hop[77];

	XT_REQUIRE(t);
	for (int i = 0; i < 2000; i++) {
		__u8 d = 12 + rnd() % 21;

		XT_CHECK(!xp_lpm_add(t, IP(198, 18, 0, 0) | (rnd() & 0x1ffff), d, rnd() % 50) ||
			 d > 24);
	}
	for (int r = 0; r < 100; r++) {
		for (int i = 0; i < 77; i++)
			addr[i] = IP(198, 18, 0, 0) | (rnd() & 0x1ffff);
		xp_lpm_lookup_bulk(t, addr, hop, (unsigned int)(r % 78));
		for (int i = 0; i < r % 78; i++)
			XT_EQ(hop[i], xp_lpm_lookup(t, addr[i]));
	}
	xp_lpm_destroy(t);
}

static void bad_arguments(void)
{
	struct xp_lpm *t = make(XP_LPM_INPLACE, 4);
	struct xp_lpm *u = NULL;
	__u32 h;

	XT_REQUIRE(t);
	XT_EQ(xp_lpm_add(t, 0, 33, 1), -EINVAL);
	XT_EQ(xp_lpm_add(t, 0, 8, XP_LPM_HOP_MAX + 1), -EINVAL);
	XT_EQ(xp_lpm_add(NULL, 0, 8, 1), -EINVAL);
	XT_EQ(xp_lpm_del(t, 0, 33), -EINVAL);
	XT_EQ(xp_lpm_del(t, 0, 8), -ENOENT);
	XT_EQ(xp_lpm_get(t, 0, 8, NULL), -EINVAL);
	XT_EQ(xp_lpm_get(t, 0, 8, &h), -ENOENT);
	xp_set_log_fn(NULL);
	{
		XP_OPTS(xp_lpm_opts, o, .root_bits = 16);
		XT_EQ(xp_lpm_create(&o, &u), -EINVAL);
	}
	{
		XP_OPTS(xp_lpm_opts, o, .groups = (1u << 22) + 1);
		XT_EQ(xp_lpm_create(&o, &u), -EINVAL);
	}
	{
		XP_OPTS(xp_lpm_opts, o, .sync = 2);
		XT_EQ(xp_lpm_create(&o, &u), -EINVAL);
	}
	{
		/* A newer caller's field this build does not know. */
		struct {
			struct xp_lpm_opts o;
			__u64 more;
		} big = { .o.sz = sizeof(big), .more = 1 };
		XT_EQ(xp_lpm_create(&big.o, &u), -EINVAL);
	}
	XT_EQ(xp_lpm_create(NULL, NULL), -EINVAL);
	XT_CHECK(u == NULL);
	xp_lpm_destroy(NULL);
	xp_lpm_destroy(t);
}

int main(void)
{
	XT_RUN(delete_restores_cover);
	XT_RUN(default_host_and_replace);
	XT_RUN(out_of_groups);
	XT_RUN(double_publishes_at_commit);
	XT_RUN(double_full_copy);
	XT_RUN(random_inplace);
	XT_RUN(random_double);
	XT_RUN(bulk_matches_single);
	XT_RUN(bad_arguments);
	return xt_done();
}
