// SPDX-License-Identifier: BSD-3-Clause
/* M3 fill order: each core's first frames cover channels and L1/L2 sets evenly. */
#include <errno.h>

#include "xpile/log.h"
#include "xpile/pool.h"
#include "xpile/layout.h"
#include "xpile/mem.h"
#include "xt.h"

static int cmp_u64(const void *a, const void *b)
{
	__u64 x = *(const __u64 *)a, y = *(const __u64 *)b;

	return x < y ? -1 : x > y;
}

/*
 * How close to uniform the histogram of handles[0..k) over nb bins must be,
 * mean = k / nb:
 *   STRICT  every bin floor(mean) or ceil(mean) (max - min <= 1): what dealing
 *           round-robin gives;
 *   WITHIN1 every bin within 1 of the mean, |bin - mean| <= 1 ("+-1 of
 *           uniform" read literally; a bin may be 0 or 2 when mean is 1);
 *   LOOSE   [floor - 1, ceil + 1], for what neither holds for (stated where used).
 */
enum bound { STRICT, WITHIN1, LOOSE };

static int spread_ok(const struct xp_layout *l, enum xp_spread what, const __u64 *h, __u32 k,
		     enum bound bd)
{
	__u32 nb = xp_layout_spread_bins(l, what), bins[4096] = { 0 }, lo, hi;

	for (__u32 i = 0; i < k; i++)
		bins[xp_spread_bin(l, what, h[i] + l->data_off)]++;
	lo = k / nb;
	hi = (k + nb - 1) / nb;
	if (bd == WITHIN1) { /* integers in [mean - 1, mean + 1] */
		lo = k < nb ? 0 : (k - nb + nb - 1) / nb;
		hi = (k + nb) / nb;
	} else if (bd == LOOSE) {
		lo = lo ? lo - 1 : 0;
		hi++;
	}
	for (__u32 b = 0; b < nb; b++)
		if (bins[b] < lo || bins[b] > hi) {
			fprintf(stderr,
				"  %ux%u@%u: spread %d over %u frames: bin %u has %u, not %u..%u\n",
				l->topo.channels, l->topo.ranks, l->topo.interleave, (int)what, k,
				b, bins[b], lo, hi);
			return 0;
		}
	return 1;
}

/* L1 sets deal strictly when a channel round of lines (g x C) divides the L1 sets
 * or g is 1 (the deal is then plain address order). Else (6 channels at 256 B:
 * 192 classes, channel fastest) a prefix can hold an L1 set twice at a mean of
 * 0.83: LOOSE. */
static enum bound l1_bound(const struct xp_layout *l)
{
	__u32 g = l->topo.interleave / XP_CACHE_LINE, gc = g * l->topo.channels * l->topo.ranks;

	return g == 1 || l->topo.l1_sets % gc == 0 ? STRICT : LOOSE;
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
			XT_CHECK(spread_ok(l, ch, h + first, ks[j], STRICT));
			if (sets)
				XT_CHECK(spread_ok(l, XP_SPREAD_L1, h + first, ks[j], l1_bound(l)));
			/*
			 * L2: when the classes are one L1 period (C x g divides the L1
			 * sets) a round is a run of consecutive frames, so the first K
			 * frames stay within 1 of the mean (not strict: a page holds 993
			 * frames, so 1024 frames do not cover 1024 sets exactly once).
			 * With 3, 6 or 24 channel-ranks a round takes the lowest frame of
			 * each of 192 classes, and those can share an L2 set: LOOSE.
			 * Random dispersal moves whole containers: no L2 claim.
			 */
			if (sets && !seed)
				XT_CHECK(spread_ok(l, XP_SPREAD_L2, h + first, ks[j],
						   l->m3_classes == l->topo.l1_sets ? WITHIN1 :
										      LOOSE));
		}
	}
	/* Any bulk of 32 anywhere in the complete rounds: channels strict. */
	for (__u32 i = 0; i + 32 <= l->nframes / 2; i += 7)
		if (!XT_CHECK(spread_ok(l, ch, h + i, 32, STRICT)))
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

/* ---- Refills: xp_layout_disperse() ---- */

static __u64 test_rand(__u64 *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

/*
 * Round-robin until a bucket runs out, checked at every prefix of @b[0..n)
 * (bucket ids < nb): a bucket with handles still to come never trails the
 * fullest bucket by more than 1. While no bucket has run out, that is every
 * bin at floor(k/used) or ceil(k/used), used = buckets the bulk has at all;
 * checked separately as the headline bound.
 */
static int rr_ok(const __u32 *b, __u32 n, __u32 nb, const char *what)
{
	__u32 tot[4096] = { 0 }, cnt[4096] = { 0 }, used = 0, least = ~0u, mx = 0;

	for (__u32 i = 0; i < n; i++)
		used += !tot[b[i]]++;
	for (__u32 x = 0; x < nb; x++)
		if (tot[x] && tot[x] < least)
			least = tot[x];
	for (__u32 k = 1; k <= n; k++) {
		mx = ++cnt[b[k - 1]] > mx ? cnt[b[k - 1]] : mx;
		for (__u32 x = 0; x < nb; x++) {
			if (cnt[x] < tot[x] && cnt[x] + 1 < mx) {
				fprintf(stderr,
					"  %s: prefix %u of %u: bucket %u has %u of %u, another %u\n",
					what, k, n, x, cnt[x], tot[x], mx);
				return 0;
			}
			if (k <= used * least && tot[x] &&
			    (cnt[x] < k / used || cnt[x] > (k + used - 1) / used)) {
				fprintf(stderr,
					"  %s: prefix %u of %u: bucket %u has %u, not %u..%u\n",
					what, k, n, x, cnt[x], k / used, (k + used - 1) / used);
				return 0;
			}
		}
	}
	return 1;
}

/*
 * The whole guarantee of one dispersed bulk @h[0..n) that came from @in: same
 * handles; channels round-robin until one runs out; inside each channel, its
 * classes the same way.
 */
static int disperse_ok(const struct xp_layout *l, const __u64 *in, const __u64 *h, __u32 n)
{
	__u32 nch = l->topo.channels * l->topo.ranks, ch[XP_DISPERSE_MAX], sub[XP_DISPERSE_MAX];
	__u64 a[XP_DISPERSE_MAX], b[XP_DISPERSE_MAX];
	int ok = 1;

	memcpy(a, in, n * sizeof(*a));
	memcpy(b, h, n * sizeof(*b));
	qsort(a, n, sizeof(*a), cmp_u64);
	qsort(b, n, sizeof(*b), cmp_u64);
	if (memcmp(a, b, n * sizeof(*a))) {
		fprintf(stderr, "  dispersal changed the handles\n");
		return 0;
	}
	for (__u32 i = 0; i < n; i++)
		ch[i] = xp_layout_m3_channel(l, xp_layout_m3_class(l, h[i]));
	ok &= rr_ok(ch, n, nch, "channels");
	for (__u32 c = 0; c < nch && ok; c++) {
		__u32 m = 0;

		for (__u32 i = 0; i < n; i++)
			if (ch[i] == c)
				sub[m++] = xp_layout_m3_class(l, h[i]);
		ok &= rr_ok(sub, m, l->m3_classes, "classes of a channel");
	}
	return ok;
}

/* The channel at the configured interleave is the class's channel. */
static enum xp_spread ch_spread(const struct xp_layout *l)
{
	return l->topo.interleave == 256  ? XP_SPREAD_CH256 :
	       l->topo.interleave == 4096 ? XP_SPREAD_CH4K :
					    XP_SPREAD_CH64;
}

static void check_disperse(const struct xp_layout *l, __u64 seed)
{
	static const __u32 sizes[] = { 1, 2, 7, 32, 64, 100, 256, 300 };
	__u32 n = l->nframes, *idx = calloc(n, sizeof(*idx));
	__u64 s = 0x9e3779b9 ^ seed, rng = seed, in[600], h[600];

	XT_REQUIRE(idx && l->m3_classes);
	for (__u32 i = 0; i < n; i++)
		idx[i] = i;
	for (__u32 t = 0; t < 40; t++)
		for (unsigned z = 0; z < sizeof(sizes) / sizeof(sizes[0]); z++) {
			__u32 k = sizes[z];

			/* A random set of distinct frames, in random order. */
			for (__u32 i = 0; i < k; i++) {
				__u32 j = i + (__u32)(test_rand(&s) % (n - i)), x = idx[i];

				idx[i] = idx[j];
				idx[j] = x;
				in[i] = xp_layout_frame(l, idx[i]);
			}
			/* Every other trial lopsided: 3 of 4 handles from channel 0's frames. */
			if (t & 1)
				for (__u32 i = 0, j = k; i < k && j < n; i++) {
					if (i % 4 == 3)
						continue;
					while (j < n &&
					       xp_layout_m3_channel(
						       l, xp_layout_m3_class(
								  l, xp_layout_frame(l, idx[j]))))
						j++;
					if (j < n)
						in[i] = xp_layout_frame(l, idx[j++]);
				}
			memcpy(h, in, k * sizeof(*h));
			xp_layout_disperse(l, h, k, seed ? &rng : NULL);
			/* Past XP_DISPERSE_MAX the guarantee is per chunk. */
			for (__u32 o = 0; o < k; o += XP_DISPERSE_MAX) {
				__u32 m = k - o < XP_DISPERSE_MAX ? k - o : XP_DISPERSE_MAX;

				if (!XT_CHECK(disperse_ok(l, in + o, h + o, m))) {
					free(idx);
					return;
				}
			}
		}
	/* The class's channel is the channel of the header line. */
	for (__u32 i = 0; i < n; i += 13) {
		__u64 f = xp_layout_frame(l, i);

		XT_EQ(xp_layout_m3_channel(l, xp_layout_m3_class(l, f)),
		      xp_spread_bin(l, ch_spread(l), f + l->data_off));
	}
	free(idx);
}

static struct xp_layout topo_layout(const __u32 *t, __u32 page, __u32 nframes)
{
	struct xp_layout_opts o = {
		.sz = sizeof(o),
		.nframes = nframes,
		.page_size = page,
		.topo = { .channels = t[0],
			  .ranks = t[1],
			  .interleave = t[2],
			  .l1_sets = 64,
			  .l2_sets = 1024 },
	};
	struct xp_layout l = { 0 };

	xp_layout_compute(&o, &l);
	return l;
}

static const __u32 topos[][3] = { { 4, 1, 64 },	 { 2, 1, 64 },	{ 8, 1, 64 },  { 4, 2, 64 },
				  { 3, 1, 64 },	 { 6, 1, 64 },	{ 12, 2, 64 }, { 4, 1, 256 },
				  { 8, 2, 256 }, { 6, 1, 256 }, { 4, 1, 4096 } };

static void test_disperse_random_sets(void)
{
	for (unsigned t = 0; t < sizeof(topos) / sizeof(topos[0]); t++) {
		struct xp_layout l = topo_layout(topos[t], XP_PAGE_2M, 6000);

		check_disperse(&l, 0);
		check_disperse(&l, 0x5eed + t);
		l = topo_layout(topos[t], XP_PAGE_4K, 3000);
		check_disperse(&l, 0);
	}
}

/*
 * Handles covering every class equally (what the fill order starts each core
 * with, in any order) come out dealt like the fill order: every prefix holds each
 * channel and each L1 set floor(k/bins) or ceil(k/bins) times.
 */
static void test_disperse_full_rounds(void)
{
	for (unsigned t = 0; t < sizeof(topos) / sizeof(topos[0]); t++) {
		struct xp_layout l = topo_layout(topos[t], XP_PAGE_2M, 6000);
		__u32 q = l.m3_classes, per[4096] = { 0 }, k = 0, m = q <= 64 ? 4 : 1;
		__u64 *h = calloc(q * m, sizeof(*h)), s = 7 + t, rng = t;
		/*
		 * L1 sets as l1_bound() says. At 4 KiB interleave (a channel round
		 * is 4 L1 periods) the channels' turns take the same L1 set: no claim.
		 */
		int l1_near = l.topo.interleave / XP_CACHE_LINE * l.topo.channels * l.topo.ranks <=
			      l.topo.l1_sets;

		XT_REQUIRE(h);
		for (__u32 i = 0; i < l.nframes && k < q * m; i++) {
			__u64 f = xp_layout_frame(&l, i);
			__u32 x = xp_layout_m3_class(&l, f);

			if (per[x] < m) {
				per[x]++;
				h[k++] = f;
			}
		}
		XT_REQUIRE(k == q * m);
		for (__u32 i = k - 1; i > 0; i--) {
			__u32 j = (__u32)(test_rand(&s) % (i + 1));
			__u64 x = h[i];

			h[i] = h[j];
			h[j] = x;
		}
		for (int seeded = 0; seeded < 2; seeded++) {
			xp_layout_disperse(&l, h, k, seeded ? &rng : NULL);
			for (__u32 w = 1; w <= k && w <= XP_DISPERSE_MAX; w++) {
				if (!XT_CHECK(spread_ok(&l, ch_spread(&l), h, w, STRICT)) ||
				    !XT_CHECK(!l1_near ||
					      spread_ok(&l, XP_SPREAD_L1, h, w, l1_bound(&l)))) {
					fprintf(stderr, "  topology %u seeded %d\n", t, seeded);
					break;
				}
			}
		}
		free(h);
	}
}

/*
 * Traffic churn through a real pool and cache: refills of a worker's fill ring
 * take bulks of 64 from its cache; frames come back in random bulk sizes, in
 * random order (@fifo 0: RX of several queues, TX completions) or in the order
 * they were posted (@fifo 1: one RX ring); another core takes and returns
 * frames through the pool. Every refill, dispersed, meets the round-robin
 * guarantee (asserted). How even the bulks' contents are is what traffic
 * returned: printed. @ahead > 0: the refill takes 64 + ahead handles, posts the
 * first 64 of the dispersed bulk and puts the rest back (a look-ahead the engine
 * does not do; printed to show what it would buy).
 */
static void churn(int fifo, __u32 ahead)
{
	struct xp_layout_opts o = { .sz = sizeof(o),
				    .nframes = 4096,
				    .page_size = XP_PAGE_2M,
				    .topo = { .l1_sets = 64, .l2_sets = 1024 } };
	struct xp_pool_opts po = { .sz = sizeof(po) };
	struct xp_layout l;
	struct xp_pool *p;
	struct xp_cache *c;
	static __u64 order[4096], held[4096], other[4096];
	__u64 s = 42, rng = 43, in[XP_DISPERSE_MAX], h[XP_DISPERSE_MAX];
	__u32 nheld = 0, nother = 0, refills = 0, even_bulks = 0;

	XT_REQUIRE(xp_layout_compute(&o, &l) == 0);
	XT_REQUIRE(xp_layout_fill_order(&l, 2, 0, order) == 0);
	XT_REQUIRE(xp_pool_create(order, 4096, &po, &p) == 0);
	XT_REQUIRE(xp_cache_create(p, 512, &c) == 0);
	for (__u32 it = 0; it < 20000; it++) {
		__u32 r = (__u32)(test_rand(&s) % 8), k = 1 + (__u32)(test_rand(&s) % 64);

		if (r < 3 && nheld < 2048 && xp_cache_get(c, in, 64 + ahead) == 0) {
			__u32 nb = l.topo.channels, bins[64] = { 0 }, mn = ~0u, mx = 0;

			memcpy(h, in, sizeof(h[0]) * (64 + ahead));
			xp_layout_disperse(&l, h, 64 + ahead, it & 1 ? &rng : NULL);
			if (!XT_CHECK(disperse_ok(&l, in, h, 64 + ahead)))
				break;
			if (ahead)
				XT_REQUIRE(xp_cache_put(c, h + 64, ahead) == 0);
			for (__u32 i = 0; i < 64; i++)
				bins[xp_layout_m3_channel(&l, xp_layout_m3_class(&l, h[i]))]++;
			for (__u32 b = 0; b < nb; b++) {
				mn = bins[b] < mn ? bins[b] : mn;
				mx = bins[b] > mx ? bins[b] : mx;
			}
			refills++;
			even_bulks += mx - mn <= 1;
			memcpy(held + nheld, h, sizeof(h[0]) * 64);
			nheld += 64;
		} else if (r < 6 && nheld) {
			k = k < nheld ? k : nheld;
			if (fifo) {
				memcpy(in, held, k * sizeof(in[0]));
				memmove(held, held + k, (nheld -= k) * sizeof(held[0]));
			} else {
				for (__u32 i = 0; i < k; i++) {
					__u32 j = (__u32)(test_rand(&s) % nheld);

					in[i] = held[j];
					held[j] = held[--nheld];
				}
			}
			XT_REQUIRE(xp_cache_put(c, in, k) == 0);
		} else if (r == 6 && nother + k <= 4096 && xp_pool_get(p, other + nother, k) == 0) {
			nother += k;
		} else if (r == 7 && nother) {
			k = k < nother ? k : nother;
			nother -= k;
			XT_REQUIRE(xp_pool_put(p, other + nother, k) == 0);
		}
	}
	fprintf(stderr,
		"  returns %s, look-ahead %u: %u refills of 64, %u with channels within 1 of "
		"each other over the whole bulk\n",
		fifo ? "in order" : "random", ahead, refills, even_bulks);
	XT_CHECK(refills > 1000);
	/* Nothing lost on the way. */
	XT_CHECK(xp_cache_put(c, held, nheld) == 0);
	XT_CHECK(xp_pool_put(p, other, nother) == 0);
	XT_CHECK(xp_cache_flush(c) == 0);
	XT_EQ(xp_pool_avail(p), 4096);
	xp_cache_destroy(c);
	xp_pool_destroy(p);
}

static void test_disperse_churn_random(void)
{
	churn(0, 0);
	churn(0, 32);
	churn(0, 64);
}

static void test_disperse_churn_in_order(void)
{
	churn(1, 0);
	churn(1, 32);
	churn(1, 64);
}

static void test_disperse_edges(void)
{
	struct xp_layout l = topo_layout(topos[0], XP_PAGE_2M, 1000);
	struct xp_layout none = l;
	__u64 h[3] = { xp_layout_frame(&l, 5), xp_layout_frame(&l, 4), xp_layout_frame(&l, 9) };
	__u64 keep[3], rng = 1;

	memcpy(keep, h, sizeof(h));
	xp_layout_disperse(&l, h, 0, NULL);
	xp_layout_disperse(&l, h, 0, &rng);
	XT_CHECK(!memcmp(keep, h, sizeof(h)));
	none.m3_classes = 0; /* beyond XP_M3_CLASSES_MAX: order left alone */
	xp_layout_disperse(&none, h, 3, NULL);
	XT_CHECK(!memcmp(keep, h, sizeof(h)));
	/* Reproducible per seed. */
	{
		__u64 a[256], b[256], r1 = 5, r2 = 5;

		for (__u32 i = 0; i < 256; i++)
			a[i] = b[i] = xp_layout_frame(&l, i * 3);
		xp_layout_disperse(&l, a, 256, &r1);
		xp_layout_disperse(&l, b, 256, &r2);
		XT_CHECK(!memcmp(a, b, sizeof(a)));
	}
}

int main(void)
{
	xp_set_log_fn(NULL);
	XT_RUN(test_hugepage_topologies);
	XT_RUN(test_headroom_and_frame_sizes);
	XT_RUN(test_4k_pages);
	XT_RUN(test_seed_disperses);
	XT_RUN(test_slices);
	XT_RUN(test_disperse_random_sets);
	XT_RUN(test_disperse_full_rounds);
	XT_RUN(test_disperse_churn_random);
	XT_RUN(test_disperse_churn_in_order);
	XT_RUN(test_disperse_edges);
	return xt_done();
}
