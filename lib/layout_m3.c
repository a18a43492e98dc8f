// SPDX-License-Identifier: BSD-3-Clause
/*
 * M3-style per-core containers: the order a pool hands frames out in so that every
 * run of consecutive frames covers all channels and cache sets evenly.
 *
 * A frame's class is its header line modulo Q, one L1 period rounded to a whole
 * number of channel rounds (interleave lines x channels x ranks). Dealing one
 * frame per class per round, channel changing fastest, makes any window of W
 * frames hold W/m +-1 frames per residue modulo any m dividing Q: per channel and
 * per L1 set. Members are dealt in address order, so rounds walk the layout and,
 * with a stride prime to the set count, successive rounds cover the L2 sets too.
 * Where a layout reaches only some classes (aligned strides, 4 KiB pages) the
 * same dealing spreads over the classes it does reach.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "layout_internal.h"
#include "log_internal.h"
#include "rand_internal.h"
#include "xpile/layout.h"

static __u64 lcm64(__u64 a, __u64 b)
{
	return a / xp_gcd64(a, b) * b;
}

static __u64 header_class(const struct xp_layout *l, __u32 i, __u64 q)
{
	return (xp_layout_frame(l, i) + l->data_off) / XP_CACHE_LINE % q;
}

/*
 * Deal order of the classes: channel fastest, then the lines of one interleave
 * unit, then the rest, so consecutive frames change channel at every step even
 * with 256-byte or 4 KiB interleaving (natural order when it is 64 bytes).
 */
static __u64 class_at(const struct xp_layout *l, __u64 j)
{
	__u64 g = l->topo.interleave / XP_CACHE_LINE, ch = (__u64)l->topo.channels * l->topo.ranks;

	return ((j / (ch * g)) * ch + j % ch) * g + (j / ch) % g;
}

int xp_layout_fill_order(const struct xp_layout *l, __u32 ncores, __u64 seed, __u64 *handles_out)
{
	__u64 round = (__u64)l->topo.interleave / XP_CACHE_LINE * l->topo.channels * l->topo.ranks;
	__u64 q, group;
	__u32 n = l->nframes, *start, *fill, *active, nactive = 0, pos = 0, minrounds = ~0u;
	__u64 *byclass, rng = seed;

	/* A layout from xp_layout_compute() has its topology resolved. */
	if (!ncores || !handles_out || !l->nframes || !round || !l->topo.l1_sets ||
	    !l->topo.l2_sets || !l->frames_per_page || !l->rot_lines)
		return -EINVAL;
	q = lcm64(l->topo.l1_sets, round);
	group = lcm64(l->topo.l2_sets, round) / q;
	if (q > (1u << 20)) {
		xp_err("fill order: %llu header-line classes is beyond reason; check the "
		       "topology\n",
		       (unsigned long long)q);
		return -EINVAL;
	}
	start = calloc(q + 1, sizeof(*start));
	fill = calloc(q, sizeof(*fill));
	active = calloc(q, sizeof(*active));
	byclass = calloc(n, sizeof(*byclass));
	if (!start || !fill || !active || !byclass) {
		free(start);
		free(fill);
		free(active);
		free(byclass);
		return -ENOMEM;
	}
	/* Counting sort by class, address order inside a class. */
	for (__u32 i = 0; i < n; i++)
		start[header_class(l, i, q) + 1]++;
	for (__u64 c = 0; c < q; c++)
		start[c + 1] += start[c];
	for (__u32 i = 0; i < n; i++) {
		__u64 c = header_class(l, i, q);

		byclass[start[c] + fill[c]++] = xp_layout_frame(l, i);
	}
	for (__u64 slot = 0; slot < q; slot++) {
		__u64 c = class_at(l, slot);
		__u32 cnt = start[c + 1] - start[c];

		if (cnt) {
			active[nactive++] = (__u32)c;
			minrounds = cnt < minrounds ? cnt : minrounds;
		}
		fill[c] = 0;
	}
	/* One round per pass: the next frame of every class still holding frames. */
	while (nactive) {
		__u32 kept = 0;

		for (__u32 a = 0; a < nactive; a++) {
			__u32 c = active[a];

			handles_out[pos++] = byclass[start[c] + fill[c]++];
			if (start[c] + fill[c] < start[c + 1])
				active[kept++] = c;
		}
		nactive = kept;
	}
	/*
	 * Rounds taken in address order cover L2 sets too, a container of `group`
	 * rounds all of them once. Random dispersal moves whole containers (equal in
	 * size while every round is complete), so windows stay even.
	 */
	if (seed && minrounds != ~0u && minrounds / group > 1) {
		__u64 per_round = 0, csize, ncont = minrounds / group;

		for (__u64 c = 0; c < q; c++)
			per_round += start[c + 1] > start[c];
		csize = group * per_round;
		for (__u64 i = ncont - 1; i > 0; i--) {
			__u64 j = xp_rand_next(&rng) % (i + 1);

			if (j == i)
				continue;
			/* Swap containers i and j through the now unused class array. */
			memcpy(byclass, handles_out + i * csize, csize * sizeof(*byclass));
			memcpy(handles_out + i * csize, handles_out + j * csize,
			       csize * sizeof(*byclass));
			memcpy(handles_out + j * csize, byclass, csize * sizeof(*byclass));
		}
	}
	free(start);
	free(fill);
	free(active);
	free(byclass);
	return 0;
}

void xp_layout_core_slice(const struct xp_layout *l, __u32 ncores, __u32 core, __u32 *first,
			  __u32 *count)
{
	__u64 n = l->nframes;

	if (!ncores || core >= ncores) {
		*first = 0;
		*count = 0;
		return;
	}
	*first = (__u32)(n * core / ncores);
	*count = (__u32)(n * (core + 1) / ncores) - *first;
}

/*
 * One chunk of xp_layout_disperse(). A class is named by its channel c and its
 * place x' among that channel's classes in address order; xp_layout_compute()
 * keeps both under 64, so a channel's classes with handles left are a bit mask,
 * and so are the channels. Round r of a channel takes member r of every class in
 * its mask, lowest bit first; the next mask keeps the classes holding more than
 * r + 1. Then round P overall takes the P-th handle of every channel the same
 * way. Only register masks carry from round to round: no sort, no divide, no
 * data-dependent branch per handle, O(n + classes).
 */
static void disperse_chunk(const struct xp_layout *l, __u64 *h, __u32 n, __u64 *rng)
{
	__u32 q = l->m3_classes, nch = l->topo.channels * l->topo.ranks;
	__u32 g = l->topo.interleave / XP_CACHE_LINE, lg = (__u32)__builtin_ctz(g);
	__u32 lper = (__u32)__builtin_ctz(q / nch), lmax = 0;
	__u16 cnt[XP_M3_CLASSES_MAX], start[XP_M3_CLASSES_MAX], ys[XP_DISPERSE_MAX];
	__u16 chlen[XP_M3_CHANNELS_MAX], base[XP_DISPERSE_MAX + 1];
	__u64 sorted[XP_DISPERSE_MAX], stock[XP_M3_CHANNELS_MAX], act[XP_DISPERSE_MAX + 1];

	if (rng)
		for (__u32 i = n - 1; i > 0; i--) {
			/* Multiply-shift range reduction: no divide, bias < 2^-24. */
			__u32 j = xp_rand_below(rng, i + 1);
			__u64 t = h[i];

			h[i] = h[j];
			h[j] = t;
		}
	memset(cnt, 0, q * sizeof(cnt[0]));
	if (!(nch & (nch - 1))) {
		/* Powers of two (the common topologies): masks and shifts only. */
		__u32 lch = (__u32)__builtin_ctz(nch);

		for (__u32 i = 0; i < n; i++) {
			__u32 x = (__u32)((h[i] + l->data_off) / XP_CACHE_LINE) & (q - 1);
			__u32 u = x >> lg;

			ys[i] = (__u16)((u & (nch - 1)) << lper | (u >> lch) << lg | (x & (g - 1)));
			cnt[ys[i]]++;
		}
	} else {
		for (__u32 i = 0; i < n; i++) {
			__u32 x = xp_layout_m3_class(l, h[i]), u = x >> lg;
			__u32 blk = (__u32)((u * l->m3_chinv) >> 32), c = u - blk * nch;

			ys[i] = (__u16)(c << lper | blk << lg | (x & (g - 1)));
			cnt[ys[i]]++;
		}
	}
	/* Counting sort by class (input order kept inside a class); per channel, the
	 * mask of classes present and the handle count. */
	for (__u32 c = 0, y = 0, sum = 0; c < nch; c++) {
		__u64 mask = 0;
		__u32 from = sum;

		for (__u32 xp = 0; xp < 1u << lper; xp++, y++) {
			start[y] = (__u16)sum;
			sum += cnt[y];
			mask |= (__u64)(cnt[y] != 0) << xp;
		}
		stock[c] = mask;
		chlen[c] = (__u16)(sum - from);
		lmax = chlen[c] > lmax ? chlen[c] : lmax;
	}
	for (__u32 i = 0; i < n; i++)
		sorted[start[ys[i]]++] = h[i];
	/* Round P overall holds the P-th handle of each channel with more than P,
	 * channels ascending: act[P] names them, base[P] is where the round starts. */
	memset(act, 0, (lmax + 1) * sizeof(act[0]));
	for (__u32 c = 0; c < nch; c++)
		if (chlen[c]) /* in rounds 0..chlen[c] - 1 */
			act[chlen[c] - 1] |= 1ull << c;
	for (__u32 p = lmax; p-- > 0;)
		act[p] |= act[p + 1];
	base[0] = 0;
	for (__u32 p = 0; p < lmax; p++)
		base[p + 1] = (__u16)(base[p] + __builtin_popcountll(act[p]));
	/* Round r of channel c: member r of each class in its mask, lowest first;
	 * its p-th handle goes straight to its place in overall round p. */
	for (__u32 c = 0; c < nch; c++) {
		__u64 below = (1ull << c) - 1;
		__u32 p = 0;

		for (__u64 mask = stock[c], r = 0; mask; r++) {
			__u64 next = 0;

			for (__u64 m = mask; m; m &= m - 1, p++) {
				__u32 xp = (__u32)__builtin_ctzll(m), y = c << lper | xp;

				/* start[y] ends class y now: member r is cnt[y] - r back.
				 * p < chlen[c] <= lmax: base[0..lmax] is set above. */
				/* NOLINTNEXTLINE(clang-analyzer-core.UndefinedBinaryOperatorResult) */
				h[base[p] + __builtin_popcountll(act[p] & below)] =
					sorted[start[y] - cnt[y] + r];
				next |= (__u64)(cnt[y] > r + 1) << xp;
			}
			mask = next;
		}
	}
}

void xp_layout_disperse(const struct xp_layout *l, __u64 *h, __u32 n, __u64 *rng)
{
	if (!l->m3_classes || n < 2) /* nothing to order, or a class count out of reach */
		return;
	for (__u32 done = 0; done < n; done += XP_DISPERSE_MAX)
		disperse_chunk(l, h + done, n - done < XP_DISPERSE_MAX ? n - done : XP_DISPERSE_MAX,
			       rng);
}
