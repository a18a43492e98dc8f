// SPDX-License-Identifier: BSD-3-Clause
/*
 * M3-style per-core containers: the order a pool hands frames out in so that every
 * run of consecutive frames covers all channels and cache sets evenly.
 *
 * A frame's class is its header line modulo Q, a common multiple of the L2 set
 * count and of one round of channels (interleave lines x channels x ranks). Dealing
 * one frame per class per round, classes in natural order, makes the handle
 * sequence walk consecutive line residues: any window of W frames then holds
 * W/m +-1 frames per residue modulo any m dividing Q, i.e. per channel and per
 * L1/L2 set. Where a layout reaches only some classes (aligned strides, 4 KiB
 * pages) the same dealing spreads over the classes it does reach.
 */
#include <errno.h>
#include <stdlib.h>

#include "log_internal.h"
#include "xpile/umem.h"

static __u64 gcd64(__u64 a, __u64 b)
{
	while (b) {
		__u64 t = a % b;

		a = b;
		b = t;
	}
	return a;
}

/* splitmix64: seeded, tiny, good enough to disperse frames over banks and rows. */
static __u64 next_rand(__u64 *s)
{
	__u64 z = (*s += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

static __u64 class_count(const struct xp_layout *l)
{
	__u64 round = (__u64)l->topo.interleave / XP_CACHE_LINE * l->topo.channels * l->topo.ranks;
	__u64 sets = l->topo.l2_sets > l->topo.l1_sets ? l->topo.l2_sets : l->topo.l1_sets;

	return sets / gcd64(sets, round) * round;
}

int xp_layout_fill_order(const struct xp_layout *l, __u32 ncores, __u64 seed, __u64 *handles_out)
{
	__u64 q = class_count(l), rng = seed;
	__u32 n = l->nframes, *start, *fill, *active, nactive = 0, pos = 0;
	__u64 *byclass;

	if (!ncores || !handles_out)
		return -EINVAL;
	if (q > (1u << 24)) {
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
		start[(xp_layout_frame(l, i) + l->data_off) / XP_CACHE_LINE % q + 1]++;
	for (__u64 c = 0; c < q; c++)
		start[c + 1] += start[c];
	for (__u32 i = 0; i < n; i++) {
		__u64 h = xp_layout_frame(l, i), c = (h + l->data_off) / XP_CACHE_LINE % q;

		byclass[start[c] + fill[c]++] = h;
	}
	for (__u64 c = 0; c < q; c++) {
		__u32 cnt = start[c + 1] - start[c];

		if (seed)
			for (__u32 j = cnt; j > 1; j--) {
				__u32 k = (__u32)(next_rand(&rng) % j);
				__u64 t = byclass[start[c] + j - 1];

				byclass[start[c] + j - 1] = byclass[start[c] + k];
				byclass[start[c] + k] = t;
			}
		if (cnt)
			active[nactive++] = (__u32)c;
		fill[c] = 0;
	}
	/* One container per round: the next member of every class still holding frames. */
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
