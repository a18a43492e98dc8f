// SPDX-License-Identifier: BSD-3-Clause
/* Region allocators (lazy iBuddy and eager buddy): no overlap, full coalescing, O(1) singles. */
#include <errno.h>

#include "xpile/log.h"
#include "xpile/region.h"
#include "xt.h"

#define CHUNK 4096ull

struct live {
	__u64 off;
	__u32 n;
};

static __u64 rng_state = 88172645463325252ull;

static __u64 rnd(void)
{
	rng_state ^= rng_state << 13;
	rng_state ^= rng_state >> 7;
	rng_state ^= rng_state << 17;
	return rng_state;
}

static __u32 rounded(__u32 n)
{
	__u32 p = 1;

	while (p < n)
		p <<= 1;
	return p;
}

static struct xp_region *make(enum xp_region_algo algo, __u32 spaces, __u64 per_space)
{
	struct xp_region_opts o = { .sz = sizeof(o),
				    .size = spaces * per_space * CHUNK,
				    .chunk = CHUNK,
				    .spaces = spaces,
				    .algo = algo };
	struct xp_region *r = NULL;

	if (xp_region_create(&o, &r))
		return NULL;
	return r;
}

static void check_full(struct xp_region *r)
{
	struct xp_region_stats st;

	xp_region_coalesce(r);
	xp_region_stats(r, &st);
	XT_EQ(st.free_chunks, xp_region_spaces(r) * xp_region_space_chunks(r));
	XT_EQ(st.loose_chunks, 0);
	XT_EQ(st.free_blocks, xp_region_spaces(r));
	XT_EQ(st.largest_block, xp_region_space_chunks(r));
}

static void workload(enum xp_region_algo algo, __u32 spaces)
{
	enum { PER = 512, OPS = 20000 };
	struct xp_region *r = make(algo, spaces, PER);
	static struct live live[PER * 8];
	static __u8 used[PER * 8];
	__u32 nlive = 0, total = PER * spaces;
	__u64 fails = 0;

	XT_REQUIRE(r);
	memset(used, 0, sizeof(used));
	for (int op = 0; op < OPS; op++) {
		if (nlive && (rnd() % 100 < 45 || nlive == PER * 8)) {
			__u32 k = rnd() % nlive;
			struct live l = live[k];

			for (__u32 c = 0; c < rounded(l.n); c++)
				used[l.off / CHUNK + c] = 0;
			XT_EQ(xp_region_free(r, l.off, l.n), 0);
			live[k] = live[--nlive];
		} else {
			__u32 n = rnd() % 100 < 90 ? 1 : 2 + rnd() % 40;
			__u64 off;

			if (xp_region_alloc(r, n, (__u32)rnd(), &off)) {
				fails++;
				continue;
			}
			if (!XT_CHECK(off % CHUNK == 0 && off / CHUNK + rounded(n) <= total))
				break;
			/* Aligned to its size, like any buddy block. */
			XT_EQ((off / CHUNK) % rounded(n), 0);
			for (__u32 c = 0; c < rounded(n); c++) {
				if (!XT_CHECK(!used[off / CHUNK + c]))
					goto out;
				used[off / CHUNK + c] = 1;
			}
			live[nlive++] = (struct live){ off, n };
		}
	}
out:
	fprintf(stderr, "    algo %d spaces %u: %llu allocations refused (full)\n", (int)algo,
		spaces, (unsigned long long)fails);
	while (nlive) {
		nlive--;
		XT_EQ(xp_region_free(r, live[nlive].off, live[nlive].n), 0);
	}
	check_full(r);
	xp_region_destroy(r);
}

static void test_workload_lazy(void)
{
	workload(XP_REGION_LAZY, 1);
	workload(XP_REGION_LAZY, 4);
}

static void test_workload_eager(void)
{
	workload(XP_REGION_EAGER, 1);
	workload(XP_REGION_EAGER, 4);
}

/* Singles never split or coalesce; a multi-chunk request triggers the one pass. */
static void test_lazy_defers_coalescing(void)
{
	struct xp_region *r = make(XP_REGION_LAZY, 1, 64);
	struct xp_region_stats st;
	__u64 offs[64], big;

	XT_REQUIRE(r);
	for (int i = 0; i < 64; i++)
		XT_REQUIRE(xp_region_alloc(r, 1, 0, &offs[i]) == 0);
	XT_EQ(xp_region_alloc(r, 1, 0, &big), -ENOMEM);
	for (int round = 0; round < 100; round++) {
		XT_EQ(xp_region_free(r, offs[round % 64], 1), 0);
		XT_EQ(xp_region_alloc(r, 1, 0, &offs[round % 64]), 0);
	}
	for (int i = 0; i < 64; i++)
		XT_EQ(xp_region_free(r, offs[i], 1), 0);
	xp_region_stats(r, &st);
	XT_EQ(st.coalesces, 0);
	XT_EQ(st.free_blocks, 0); /* all 64 loose: nothing merged yet */
	XT_EQ(st.loose_chunks, 64);
	/* The whole space at once: only possible after the deferred coalescing. */
	XT_EQ(xp_region_alloc(r, 64, 0, &big), 0);
	XT_EQ(big, 0);
	xp_region_stats(r, &st);
	XT_EQ(st.coalesces, 1);
	XT_EQ(st.free_chunks, 0);
	XT_EQ(xp_region_free(r, big, 64), 0);
	check_full(r);
	xp_region_destroy(r);
}

static void test_errors(void)
{
	struct xp_region_opts o = { .sz = sizeof(o), .size = 96 * CHUNK, .chunk = CHUNK };
	struct xp_region *r = NULL;
	__u64 off;

	XT_EQ(xp_region_create(&o, &r), -EINVAL); /* 96 is no power of two */
	o.spaces = 3;
	XT_EQ(xp_region_create(&o, &r), 0); /* 3 x 32 */
	XT_REQUIRE(r);
	XT_EQ(xp_region_space_chunks(r), 32);
	XT_EQ(xp_region_alloc(r, 33, 0, &off), -ENOMEM);
	XT_EQ(xp_region_alloc(r, 0, 0, &off), -EINVAL);
	XT_EQ(xp_region_alloc(r, 3, 2, &off), 0);
	XT_EQ(off / CHUNK / 32, 2); /* the hinted space */
	XT_EQ(xp_region_free(r, off, 1), -EINVAL); /* wrong count */
	XT_EQ(xp_region_free(r, off + 1, 3), -EINVAL); /* not a chunk */
	XT_EQ(xp_region_free(r, 96 * CHUNK, 1), -EINVAL);
	XT_EQ(xp_region_free(r, off, 3), 0);
	XT_EQ(xp_region_free(r, off, 3), -EINVAL); /* double free */
	XT_EQ(xp_region_alloc(r, 1, 0, &off), 0);
	XT_EQ(xp_region_free(r, off, 1), 0);
	XT_EQ(xp_region_free(r, off, 1), -EINVAL);
	check_full(r);
	xp_region_destroy(r);
	o.chunk = 3000;
	XT_EQ(xp_region_create(&o, &r), -EINVAL);
	o.chunk = CHUNK;
	o.algo = 7;
	XT_EQ(xp_region_create(&o, &r), -EINVAL);
}

int main(void)
{
	xp_set_log_fn(NULL);
	XT_RUN(test_workload_lazy);
	XT_RUN(test_workload_eager);
	XT_RUN(test_lazy_defers_coalescing);
	XT_RUN(test_errors);
	return xt_done();
}
