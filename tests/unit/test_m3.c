// SPDX-License-Identifier: BSD-3-Clause
/* M3 fill order: each core's first frames cover channels and L1/L2 sets evenly. */
#include <errno.h>

#include "xpile/log.h"
#include "xpile/umem.h"
#include "xt.h"

static int cmp_u64(const void *a, const void *b)
{
	__u64 x = *(const __u64 *)a, y = *(const __u64 *)b;

	return x < y ? -1 : x > y;
}

/*
 * Every bin of the histogram of handles[0..k) within +-1 of uniform: a uniform
 * integer histogram holds floor(k/bins) or ceil(k/bins) per bin, so each bin must
 * lie in [floor - 1, ceil + 1].
 */
static int even(const struct xp_layout *l, enum xp_spread what, const __u64 *h, __u32 k)
{
	__u32 nb = xp_layout_spread_bins(l, what), bins[4096] = { 0 };
	double mean = (double)k / nb;

	for (__u32 i = 0; i < k; i++)
		bins[xp_spread_bin(l, what, h[i] + l->data_off)]++;
	for (__u32 b = 0; b < nb; b++)
		if (bins[b] + 1 < k / nb || bins[b] > (k + nb - 1) / nb + 1) {
			fprintf(stderr,
				"  %ux%u@%u: spread %d over %u frames: bin %u has %u, mean %.2f\n",
				l->topo.channels, l->topo.ranks, l->topo.interleave, (int)what, k,
				b, bins[b], mean);
			return 0;
		}
	return 1;
}

static void check_order(const struct xp_layout *l, __u32 ncores, __u64 seed, int sets)
{
	static const __u32 ks[] = { 8, 32, 64, 100, 256, 1024 };
	__u64 *h = calloc(l->nframes, sizeof(*h)), *s = calloc(l->nframes, sizeof(*s));
	/* The order serves the configured interleave granularity. */
	enum xp_spread ch = l->topo.interleave == 256  ? XP_SPREAD_CH256 :
			    l->topo.interleave == 4096 ? XP_SPREAD_CH4K :
							 XP_SPREAD_CH64;

	XT_REQUIRE(h && s);
	XT_REQUIRE(xp_layout_fill_order(l, ncores, seed, h) == 0);
	/* A permutation of all frames. */
	memcpy(s, h, l->nframes * sizeof(*s));
	qsort(s, l->nframes, sizeof(*s), cmp_u64);
	for (__u32 i = 0; i < l->nframes; i++)
		if (!XT_EQ(s[i], xp_layout_frame(l, i)))
			break;
	for (__u32 c = 0; c < ncores; c++) {
		__u32 first, count;

		xp_layout_core_slice(l, ncores, c, &first, &count);
		for (unsigned j = 0; j < sizeof(ks) / sizeof(ks[0]) && ks[j] <= count; j++) {
			XT_CHECK(even(l, ch, h + first, ks[j]));
			if (sets)
				XT_CHECK(even(l, XP_SPREAD_L1, h + first, ks[j]));
			/* Random dispersal moves whole containers: L2 evenness is the
			 * address-order fill's. */
			if (sets && !seed)
				XT_CHECK(even(l, XP_SPREAD_L2, h + first, ks[j]));
		}
	}
	/* Any bulk of 32 anywhere in the complete rounds: channels even. */
	for (__u32 i = 0; i + 32 <= l->nframes / 2; i += 7)
		if (!XT_CHECK(even(l, ch, h + i, 32)))
			break;
	free(h);
	free(s);
}

static void test_hugepage_topologies(void)
{
	static const __u32 chans[][3] = { { 4, 1, 64 },	 { 2, 1, 64 }, { 8, 1, 64 },  { 4, 2, 64 },
					  { 3, 1, 64 },	 { 6, 1, 64 }, { 12, 2, 64 }, { 4, 1, 256 },
					  { 8, 2, 256 }, { 6, 1, 256 } };

	for (unsigned t = 0; t < sizeof(chans) / sizeof(chans[0]); t++)
		for (__u32 ncores = 1; ncores <= 4; ncores++) {
			struct xp_layout_opts o = {
				.sz = sizeof(o),
				.nframes = 6000,
				.page_size = XP_PAGE_2M,
				.topo = { .channels = chans[t][0],
					  .ranks = chans[t][1],
					  .interleave = chans[t][2],
					  .l1_sets = 64,
					  .l2_sets = 1024 },
			};
			struct xp_layout l;

			XT_REQUIRE(xp_layout_compute(&o, &l) == 0);
			check_order(&l, ncores, 0, 1);
			check_order(&l, ncores, 0xc0ffee + ncores, 1);
		}
}

static void test_headroom_and_frame_sizes(void)
{
	for (__u32 fs = 2048; fs <= 4096; fs += 1024) {
		struct xp_layout_opts o = { .sz = sizeof(o),
					    .nframes = 5000,
					    .frame_size = fs,
					    .headroom = 192,
					    .page_size = XP_PAGE_2M,
					    .topo = { .l1_sets = 64, .l2_sets = 1024 } };
		struct xp_layout l;

		XT_REQUIRE(xp_layout_compute(&o, &l) == 0);
		check_order(&l, 2, 7, 1);
	}
}

/* On 4 KiB pages the reachable offsets are fewer; channels stay even. */
static void test_4k_pages(void)
{
	struct xp_layout_opts o = { .sz = sizeof(o),
				    .nframes = 4096,
				    .page_size = XP_PAGE_4K,
				    .topo = { .l1_sets = 64, .l2_sets = 1024 } };
	struct xp_layout l;

	XT_REQUIRE(xp_layout_compute(&o, &l) == 0);
	check_order(&l, 2, 0, 0);
	check_order(&l, 2, 99, 0);
}

static void test_seed_disperses(void)
{
	struct xp_layout_opts o = { .sz = sizeof(o), .nframes = 16384, .page_size = XP_PAGE_2M };
	struct xp_layout l;
	static __u64 a[16384], b[16384], c[16384];
	__u32 same = 0;

	XT_REQUIRE(xp_layout_compute(&o, &l) == 0);
	XT_REQUIRE(xp_layout_fill_order(&l, 2, 0, a) == 0);
	XT_REQUIRE(xp_layout_fill_order(&l, 2, 1, b) == 0);
	XT_REQUIRE(xp_layout_fill_order(&l, 2, 1, c) == 0);
	XT_CHECK(!memcmp(b, c, sizeof(b))); /* reproducible */
	for (int i = 0; i < 16384; i++)
		same += a[i] == b[i];
	fprintf(stderr, "  %u of 16384 frames keep their place\n", same);
	XT_CHECK(same < 16384 / 2); /* whole containers moved */
	XT_EQ(xp_layout_fill_order(&l, 0, 0, a), -EINVAL);
	memset(&l, 0, sizeof(l)); /* never computed */
	XT_EQ(xp_layout_fill_order(&l, 1, 0, a), -EINVAL);
}

static void test_slices(void)
{
	struct xp_layout l = { .nframes = 1001 };
	__u32 first, count, total = 0;

	for (__u32 c = 0; c < 3; c++) {
		xp_layout_core_slice(&l, 3, c, &first, &count);
		XT_EQ(first, total);
		total += count;
	}
	XT_EQ(total, 1001);
	xp_layout_core_slice(&l, 3, 3, &first, &count);
	XT_EQ(count, 0);
}

int main(void)
{
	xp_set_log_fn(NULL);
	XT_RUN(test_hugepage_topologies);
	XT_RUN(test_headroom_and_frame_sizes);
	XT_RUN(test_4k_pages);
	XT_RUN(test_seed_disperses);
	XT_RUN(test_slices);
	return xt_done();
}
