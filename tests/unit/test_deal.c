// SPDX-License-Identifier: BSD-3-Clause
/*
 * The dealer: every refill is channel-even (each channel floor or ceil of n / C)
 * whenever enough frames of every channel are free, through random frees of
 * random subsets in random order, random get sizes and another core taking frames
 * from the same pool; nothing duplicated or lost; all-or-nothing on shortage.
 */
#include <errno.h>

#include "xpile/deal.h"
#include "xpile/log.h"
#include "xpile/pool.h"
#include "xpile/layout.h"
#include "xpile/mem.h"
#include "xt.h"

#define NFRAMES 4096u

static __u64 rnd(__u64 *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

struct topo {
	__u32 channels, ranks, interleave;
};

struct world {
	struct xp_layout l;
	struct xp_pool *p;
	struct xp_cache *c;
	struct xp_deal *d;
	__u64 order[NFRAMES];
	__u32 tot[XP_DEAL_CHANNELS_MAX]; /* frames per channel in the layout */
	__u32 np; /* channels the layout reaches */
};

static int world_init_seeded(struct world *w, const struct topo *t, enum xp_layout_kind kind,
			     __u32 headroom, bool debug, __u32 pull_max, __u64 deal_seed)
{
	struct xp_layout_opts o = { .sz = sizeof(o),
				    .nframes = NFRAMES,
				    .headroom = headroom,
				    .kind = kind,
				    .page_size = XP_PAGE_2M,
				    .topo = { .channels = t->channels,
					      .ranks = t->ranks,
					      .interleave = t->interleave,
					      .l1_sets = 64,
					      .l2_sets = 1024 } };
	struct xp_pool_opts po = { .sz = sizeof(po) };
	struct xp_deal_opts dopts = {
		.sz = sizeof(dopts), .max_get = 256, .pull_max = pull_max, .seed = deal_seed
	};

	memset(w, 0, sizeof(*w));
	if (!XT_CHECK(xp_layout_compute(&o, &w->l) == 0) ||
	    !XT_CHECK(xp_layout_fill_order(&w->l, 2, 0, w->order) == 0))
		return -1;
	po.flags = debug ? XP_POOL_F_DEBUG : 0;
	po.umem_size = w->l.area_size;
	if (!XT_CHECK(xp_pool_create(w->order, NFRAMES, &po, &w->p) == 0))
		return -1;
	if (!XT_CHECK(xp_cache_create(w->p, 256, &w->c) == 0) ||
	    !XT_CHECK(xp_deal_create(&w->l, w->c, &dopts, &w->d) == 0))
		return -1;
	for (__u32 i = 0; i < NFRAMES; i++) {
		__u64 h = xp_layout_frame(&w->l, i);
		__u32 ch = xp_deal_channel(w->d, h);

		/* The dealer's channel is the M3 one. */
		if (!XT_EQ(ch, xp_topo_channel(&w->l.topo, h + w->l.data_off, t->interleave)))
			return -1;
		if (w->l.m3_classes &&
		    !XT_EQ(ch, xp_layout_m3_channel(&w->l, xp_layout_m3_class(&w->l, h))))
			return -1;
		w->np += !w->tot[ch]++;
	}
	XT_EQ(w->np, w->d->npresent);
	return 0;
}

static int world_init(struct world *w, const struct topo *t, enum xp_layout_kind kind,
		      __u32 headroom, bool debug, __u32 pull_max)
{
	return world_init_seeded(w, t, kind, headroom, debug, pull_max, 0);
}

static void world_fini(struct world *w)
{
	xp_deal_destroy(w->d);
	xp_cache_destroy(w->c);
	xp_pool_destroy(w->p);
}

static __u32 free_frames(struct world *w)
{
	return xp_deal_count(w->d) + xp_pool_avail(w->p) + xp_pool_cached(w->p);
}

/* Takes k random handles out of a[0..*n), in random order, into out. */
static void take_random(__u64 *a, __u32 *n, __u64 *out, __u32 k, __u64 *s)
{
	for (__u32 i = 0; i < k; i++) {
		__u32 j = (__u32)(rnd(s) % *n);

		out[i] = a[j];
		a[j] = a[--*n];
	}
}

struct tally {
	__u32 gets, eligible, even, short_fails;
};

/*
 * Random churn. @strict: the dealer pulls as much as the pool holds, so every get
 * with ceil(n / C) of each channel free must be even (asserted); otherwise the
 * share is tallied.
 */
static void churn(const struct topo *t, enum xp_layout_kind kind, __u32 headroom, bool debug,
		  bool strict, __u32 iters, __u64 seed, __u64 deal_seed, struct tally *ty)
{
	static struct world w;
	static __u64 held[NFRAMES], other[NFRAMES];
	static unsigned char state[NFRAMES]; /* 1: held by the test */
	__u32 nheld = 0, nother = 0, heldc[XP_DEAL_CHANNELS_MAX] = { 0 };
	__u32 otherc[XP_DEAL_CHANNELS_MAX] = { 0 };
	__u64 s = seed, out[256];
	struct xp_deal_stats st;
	__u64 uneven_seen = 0;

	memset(state, 0, sizeof(state));
	if (world_init_seeded(&w, t, kind, headroom, debug, strict ? XP_DEAL_PULL_ALL : 0,
			      deal_seed)) {
		world_fini(&w);
		return;
	}
	for (__u32 it = 0; it < iters; it++) {
		__u32 r = (__u32)(rnd(&s) % 10), n = 1 + (__u32)(rnd(&s) % 256);

		if (r < 4) {
			__u32 nfree = NFRAMES - nheld - nother, need = (n + w.np - 1) / w.np;
			__u32 bins[XP_DEAL_CHANNELS_MAX] = { 0 }, mx = 0, mn = ~0u;
			bool eligible = true, all_left = true;
			int err;

			for (__u32 c = 0; c < w.l.topo.channels * w.l.topo.ranks; c++)
				if (w.tot[c] && w.tot[c] - heldc[c] - otherc[c] < need)
					eligible = false;
			err = xp_deal_get(w.d, out, n);
			if (nfree < n) {
				XT_EQ(err, -ENOBUFS);
				if (!XT_EQ(free_frames(&w), nfree))
					break;
				continue;
			}
			if (err) {
				/* Past the pull budget a get still pulls until it has n. */
				XT_EQ(err, 0);
				ty->short_fails++;
				if (!XT_EQ(free_frames(&w), nfree))
					break;
				continue;
			}
			for (__u32 i = 0; i < n; i++) {
				__u32 idx, ch;

				if (!XT_EQ(xp_layout_frame_index(&w.l, out[i], &idx), 0) ||
				    !XT_EQ(xp_layout_frame(&w.l, idx), out[i]) ||
				    !XT_EQ(state[idx], 0))
					goto out;
				state[idx] = 1;
				ch = xp_deal_channel(w.d, out[i]);
				bins[ch]++;
				heldc[ch]++;
				held[nheld++] = out[i];
			}
			for (__u32 c = 0; c < w.l.topo.channels * w.l.topo.ranks; c++) {
				if (!w.tot[c])
					continue;
				mx = bins[c] > mx ? bins[c] : mx;
				mn = bins[c] < mn ? bins[c] : mn;
			}
			/* Round-robin: a channel with frames left is within 1 of the best
			 * served; with every channel left, the deal walked them in order. */
			for (__u32 c = 0; c < w.l.topo.channels * w.l.topo.ranks; c++) {
				if (!XT_CHECK(!w.d->len[c] || bins[c] + 1 >= mx))
					goto out;
				if (w.tot[c] && !w.d->len[c])
					all_left = false;
			}
			ty->gets++;
			ty->eligible += eligible;
			if (eligible && mx - mn <= 1)
				ty->even++;
			if (strict && eligible && !XT_CHECK(mx - mn <= 1)) {
				fprintf(stderr,
					"  %ux%u@%u %s hr %u: get of %u: %u..%u per channel\n",
					t->channels, t->ranks, t->interleave,
					kind ? "aligned" : "interleaved", headroom, n, mn, mx);
				goto out;
			}
			uneven_seen += mx - mn > 1;
			/* Channel changes fastest, continuing round-robin. */
			if (all_left)
				for (__u32 i = 1; i < n && w.np > 1; i++) {
					__u32 a = xp_deal_channel(w.d, out[i - 1]);
					__u32 b = xp_deal_channel(w.d, out[i]);
					__u32 k = 0;

					while (w.d->order[k] != a)
						k++;
					if (!XT_EQ(b, w.d->order[(k + 1) % w.np]))
						goto out;
				}
		} else if (r < 8 && nheld) {
			__u32 k = n < nheld ? n : nheld;

			take_random(held, &nheld, out, k, &s);
			for (__u32 i = 0; i < k; i++) {
				__u32 idx;

				xp_layout_frame_index(&w.l, out[i], &idx);
				state[idx] = 0;
				heldc[xp_deal_channel(w.d, out[i])]--;
			}
			if (!XT_EQ(xp_deal_put(w.d, out, k), 0))
				goto out;
		} else if (r == 8) {
			__u32 k = n % 64 + 1;

			if (nother + k <= NFRAMES && xp_pool_get(w.p, other + nother, k) == 0) {
				for (__u32 i = 0; i < k; i++)
					otherc[xp_deal_channel(w.d, other[nother + i])]++;
				nother += k;
			}
		} else if (r == 9 && nother) {
			__u32 k = n % 64 + 1;

			k = k < nother ? k : nother;
			take_random(other, &nother, out, k, &s);
			for (__u32 i = 0; i < k; i++)
				otherc[xp_deal_channel(w.d, out[i])]--;
			XT_REQUIRE(xp_pool_put(w.p, out, k) == 0);
		}
		if (!XT_EQ(free_frames(&w), NFRAMES - nheld - nother))
			break;
	}
	/* The dealer counted exactly the uneven gets. */
	xp_deal_stats_get(w.d, &st);
	XT_EQ(st.uneven, uneven_seen);
out:
	/* Nothing lost: everything back, flushed, audited. */
	XT_EQ(xp_deal_put(w.d, held, nheld), 0);
	XT_EQ(xp_pool_put(w.p, other, nother), 0);
	XT_EQ(xp_deal_flush(w.d), 0);
	XT_EQ(xp_deal_count(w.d), 0);
	XT_EQ(xp_cache_flush(w.c), 0);
	XT_EQ(xp_pool_avail(w.p), NFRAMES);
	XT_EQ(xp_pool_audit(w.p), 0);
	world_fini(&w);
}

static const struct topo topos[] = {
	{ 4, 1, 64 }, { 2, 1, 64 },  { 3, 1, 64 },  { 8, 2, 64 },
	{ 6, 1, 64 }, { 4, 1, 256 }, { 6, 1, 256 }, { 1, 1, 64 },
};

static void sweep(bool strict)
{
	struct tally all = { 0 };
	__u64 seed = strict ? 12345 : 777;

	for (__u32 t = 0; t < sizeof(topos) / sizeof(topos[0]); t++)
		for (int kind = 0; kind < 2; kind++)
			for (__u32 hr = 0; hr <= 256; hr += 256) {
				struct tally ty = { 0 };

				seed += 0x9e3779b9;
				/* Half the configurations take M3's random pick. */
				churn(&topos[t], kind, hr, (t + hr / 256) & 1, strict, 10000, seed,
				      kind ? 0 : seed, &ty);
				XT_CHECK(ty.gets > 500);
				all.gets += ty.gets;
				all.eligible += ty.eligible;
				all.even += ty.even;
				all.short_fails += ty.short_fails;
			}
	fprintf(stderr,
		"  pull %s: %u gets, %u with every channel's share free, %u of those even; "
		"%u refused with enough free\n",
		strict ? "all" : "default", all.gets, all.eligible, all.even, all.short_fails);
	if (!strict) /* bounded pulls: even nearly always, all-or-nothing always */
		XT_CHECK(all.even >= all.eligible - all.eligible / 100);
}

static void test_churn_pull_all(void)
{
	sweep(true);
}

static void test_churn_default(void)
{
	sweep(false);
}

/* A shortage changes nothing; a get larger than max_get is dealt in even parts. */
static void test_shortage_and_parts(void)
{
	static struct world w;
	static __u64 out[NFRAMES];
	const struct topo t = { 4, 1, 64 };
	__u32 bins[4] = { 0 };

	if (world_init(&w, &t, XP_LAYOUT_INTERLEAVED, 0, true, 0)) {
		world_fini(&w);
		return;
	}
	XT_EQ(xp_deal_get(w.d, out, NFRAMES + 1), -ENOBUFS);
	XT_EQ(free_frames(&w), NFRAMES);
	XT_EQ(xp_deal_get(w.d, out, 0), 0);
	XT_EQ(xp_deal_get(w.d, out, 1000), 0); /* parts of 256, 256, 256, 232 */
	for (__u32 i = 0; i < 1000; i++)
		bins[xp_deal_channel(w.d, out[i])]++;
	for (__u32 c = 0; c < 4; c++)
		XT_EQ(bins[c], 250);
	XT_EQ(xp_deal_get(w.d, out + 1000, NFRAMES - 1000), 0);
	XT_EQ(free_frames(&w), 0);
	XT_EQ(xp_deal_get(w.d, out, 1), -ENOBUFS);
	XT_EQ(xp_deal_put(w.d, out, NFRAMES), 0);
	XT_EQ(free_frames(&w), NFRAMES);
	XT_CHECK(xp_deal_count(w.d) <= 4 * w.d->cap);
	XT_EQ(xp_deal_flush(w.d), 0);
	XT_EQ(xp_cache_flush(w.c), 0);
	XT_EQ(xp_pool_audit(w.p), 0);
	world_fini(&w);
}

static void test_create_errors(void)
{
	static struct world w;
	const struct topo t = { 4, 1, 64 };
	struct xp_deal_opts o = { .sz = sizeof(o) };
	struct xp_deal *d;
	struct {
		struct xp_deal_opts o;
		char extra[8];
	} big = { 0 };

	if (world_init(&w, &t, XP_LAYOUT_INTERLEAVED, 0, false, 0)) {
		world_fini(&w);
		return;
	}
	XT_EQ(xp_deal_create(NULL, w.c, NULL, &d), -EINVAL);
	XT_EQ(xp_deal_create(&w.l, NULL, NULL, &d), -EINVAL);
	XT_EQ(xp_deal_create(&w.l, w.c, NULL, NULL), -EINVAL);
	o.max_get = 64;
	o.stack = 15; /* a share of 64 over 4 channels is 16 */
	XT_EQ(xp_deal_create(&w.l, w.c, &o, &d), -EINVAL);
	o.stack = 16;
	XT_EQ(xp_deal_create(&w.l, w.c, &o, &d), 0);
	XT_EQ(d->cap, 16);
	xp_deal_destroy(d);
	o.reserved_ = 1;
	XT_EQ(xp_deal_create(&w.l, w.c, &o, &d), -EINVAL);
	big.o = o;
	big.o.sz = sizeof(big);
	big.o.reserved_ = 0;
	XT_EQ(xp_deal_create(&w.l, w.c, &big.o, &d), 0);
	xp_deal_destroy(d);
	big.extra[3] = 1;
	XT_EQ(xp_deal_create(&w.l, w.c, &big.o, &d), -EINVAL);
	xp_deal_destroy(NULL);
	world_fini(&w);
}

/*
 * The pool's top is one channel only: the pull budget runs out with nothing but
 * surplus, and the get keeps pulling (surplus buffer grown) until it can deal.
 */
static void test_pull_past_budget(void)
{
	static struct world w;
	static __u64 all[NFRAMES], out[256];
	const struct topo t = { 8, 2, 64 };
	struct xp_deal_opts o = { .sz = sizeof(o), .max_get = 256, .stack = 16, .pull_max = 32 };
	__u32 n0 = 0, bins[16] = { 0 }, ovcap;

	if (world_init(&w, &t, XP_LAYOUT_INTERLEAVED, 0, false, 0)) {
		world_fini(&w);
		return;
	}
	xp_deal_destroy(w.d);
	XT_REQUIRE(xp_deal_create(&w.l, w.c, &o, &w.d) == 0);
	ovcap = w.d->ovcap;
	XT_REQUIRE(xp_pool_get(w.p, all, NFRAMES) == 0);
	/* Channel 0 last, so on top of the pile. */
	for (__u32 i = 0; i < NFRAMES; i++)
		if (xp_deal_channel(w.d, all[i]))
			XT_REQUIRE(xp_pool_put(w.p, all + i, 1) == 0);
		else
			all[n0++] = all[i];
	XT_REQUIRE(xp_pool_put(w.p, all, n0) == 0);
	XT_CHECK(n0 > 64);
	XT_EQ(xp_deal_get(w.d, out, 256), 0);
	XT_CHECK(w.d->ovcap > ovcap);
	for (__u32 i = 0; i < 256; i++)
		bins[xp_deal_channel(w.d, out[i])]++;
	for (__u32 c = 0; c < 16; c++)
		XT_EQ(bins[c], 16);
	XT_EQ(xp_deal_put(w.d, out, 256), 0);
	XT_EQ(xp_deal_flush(w.d), 0);
	XT_EQ(xp_cache_flush(w.c), 0);
	XT_EQ(xp_pool_avail(w.p), NFRAMES);
	XT_EQ(xp_pool_audit(w.p), 0);
	world_fini(&w);
}

/* A double free reaches the debug-mode pool when its stack spills: the put says so. */
static void test_spill_refused(void)
{
	static struct world w;
	const struct topo t = { 1, 1, 64 };
	struct xp_deal_opts o = { .sz = sizeof(o), .max_get = 8, .stack = 8 };
	struct xp_deal_stats st;
	__u64 h[4];
	int err = 0;

	if (world_init(&w, &t, XP_LAYOUT_INTERLEAVED, 0, true, 0)) {
		world_fini(&w);
		return;
	}
	xp_deal_destroy(w.d);
	XT_REQUIRE(xp_deal_create(&w.l, w.c, &o, &w.d) == 0);
	XT_EQ(xp_deal_get(w.d, h, 4), 0);
	XT_EQ(xp_deal_put(w.d, h, 4), 0);
	for (int i = 0; i < 40 && !err; i++)
		err = xp_deal_put(w.d, h, 1); /* h[0] again and again */
	XT_EQ(err, -EINVAL);
	xp_deal_stats_get(w.d, &st);
	XT_EQ(st.fails, 1);
	XT_EQ(xp_deal_count(w.d), w.d->len[0]);
	XT_EQ(w.d->len[0], 8); /* full, the refused half kept */
	world_fini(&w);
}

/* Deals @n of a fresh 4-channel world's frames with dealer seed @seed into @out,
 * counting their channels into @bins. */
static void deal_fresh(__u64 seed, __u64 *out, __u32 n, __u32 *bins)
{
	static struct world w;
	const struct topo t = { 4, 1, 64 };

	if (!world_init_seeded(&w, &t, XP_LAYOUT_INTERLEAVED, 0, false, 0, seed)) {
		__u64 warm[256];

		/* Fill the stacks deep enough that a random depth means something. */
		XT_EQ(xp_deal_get(w.d, warm, 256), 0);
		XT_EQ(xp_deal_put(w.d, warm, 256), 0);
		XT_EQ(xp_deal_get(w.d, out, n), 0);
		for (__u32 i = 0; i < n; i++)
			bins[xp_deal_channel(w.d, out[i])]++;
	}
	world_fini(&w);
}

/* The seeded pick is reproducible, differs between seeds and from the LIFO, and
 * keeps every channel's share (the churn checks evenness with seeds too). */
static void test_seeded_pick(void)
{
	__u64 a[64], b[64], c[64], lifo[64];
	__u32 same_ab = 0, same_ac = 0, same_lifo = 0, bins[4][4] = { { 0 } };

	deal_fresh(42, a, 64, bins[0]);
	deal_fresh(42, b, 64, bins[1]);
	deal_fresh(43, c, 64, bins[2]);
	deal_fresh(0, lifo, 64, bins[3]);
	for (__u32 i = 0; i < 64; i++) {
		same_ab += a[i] == b[i];
		same_ac += a[i] == c[i];
		same_lifo += a[i] == lifo[i];
	}
	XT_EQ(same_ab, 64);
	XT_CHECK(same_ac < 32);
	XT_CHECK(same_lifo < 32);
	for (__u32 k = 0; k < 4; k++)
		for (__u32 ch = 0; ch < 4; ch++)
			XT_EQ(bins[k][ch], 16);
}

int main(void)
{
	xp_set_log_fn(NULL);
	XT_RUN(test_create_errors);
	XT_RUN(test_shortage_and_parts);
	XT_RUN(test_spill_refused);
	XT_RUN(test_pull_past_budget);
	XT_RUN(test_churn_pull_all);
	XT_RUN(test_churn_default);
	XT_RUN(test_seeded_pick);
	return xt_done();
}
