// SPDX-License-Identifier: BSD-3-Clause
/*
 * Lazy iBuddy region allocator (see xpile/region.h).
 *
 * Per space, free memory is in three forms: a stack of loose single chunks, one
 * block being carved chunk by chunk, and classic buddy blocks. A single-chunk
 * allocation pops the stack or advances the carve cursor, and only when both are
 * empty takes the smallest buddy block as the new carve range (one list scan per
 * block, O(1) amortised); a single-chunk free pushes on the stack. Neither splits
 * nor coalesces. A multi-chunk request uses the buddy blocks and, when none is big
 * enough, first folds the loose chunks and the carve range back into them: the
 * deferred coalescing.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "log_internal.h"
#include "opts_internal.h"
#include "region_internal.h"

/* Singles are carved from blocks of at most 64 chunks. */
#define XP_CARVE_ORDER 6

static __u32 order_of(__u32 n)
{
	return n <= 1 ? 0 : 32 - (__u32)__builtin_clz(n - 1);
}

static void space_fini(struct xp_space *sp)
{
	free(sp->state);
	free(sp->next);
	free(sp->prev);
	free(sp->loose);
}

static int space_init(struct xp_space *sp, __u32 nchunks)
{
	sp->nchunks = nchunks;
	sp->max_order = order_of(nchunks);
	sp->state = calloc(nchunks, sizeof(*sp->state));
	sp->next = calloc(nchunks, sizeof(*sp->next));
	sp->prev = calloc(nchunks, sizeof(*sp->prev));
	sp->loose = calloc(nchunks, sizeof(*sp->loose));
	atomic_init(&sp->lock, 0);
	if (!sp->state || !sp->next || !sp->prev || !sp->loose) {
		space_fini(sp);
		return -ENOMEM;
	}
	for (__u32 o = 0; o <= XP_MAX_ORDER; o++)
		sp->head[o] = XP_NIL;
	sp->carve = sp->carve_end = 0;
	xp_buddy_free(sp, 0, sp->max_order);
	sp->free_chunks = nchunks;
	return 0;
}

int xp_region_create(const struct xp_region_opts *opts, struct xp_region **out)
{
	struct xp_region_opts oc;
	const struct xp_region_opts *o = &oc;
	struct xp_region *r;
	__u64 chunk, nchunks;
	__u32 spaces;
	int err;

	if (!XP_OPTS_LOAD_LOG("region", &oc, opts, xp_region_opts))
		return -EINVAL;
	if (!out)
		return -EINVAL;
	chunk = o->chunk ? o->chunk : 2u << 20;
	spaces = o->spaces ? o->spaces : 1;
	if (chunk < 4096 || (chunk & (chunk - 1))) {
		xp_err("region: chunk %llu is not a power of two >= 4096\n",
		       (unsigned long long)chunk);
		return -EINVAL;
	}
	nchunks = o->size / chunk;
	if (!o->size || o->size % chunk || nchunks % spaces ||
	    ((nchunks / spaces) & (nchunks / spaces - 1)) || nchunks / spaces > (1u << 31)) {
		xp_err("region: %llu bytes is not %u spaces of a power of two %llu-byte chunks\n",
		       (unsigned long long)o->size, spaces, (unsigned long long)chunk);
		return -EINVAL;
	}
	r = calloc(1, sizeof(*r));
	if (!r)
		return -ENOMEM;
	r->algo = o->algo;
	if (r->algo != XP_REGION_LAZY && r->algo != XP_REGION_EAGER) {
		free(r);
		return -EINVAL;
	}
	r->chunk_shift = (__u32)__builtin_ctzll(chunk);
	r->space_chunks = nchunks / spaces;
	r->spaces = aligned_alloc(64, sizeof(*r->spaces) * spaces);
	if (!r->spaces) {
		free(r);
		return -ENOMEM;
	}
	memset(r->spaces, 0, sizeof(*r->spaces) * spaces);
	for (r->nspaces = 0; r->nspaces < spaces; r->nspaces++) {
		err = space_init(&r->spaces[r->nspaces], (__u32)r->space_chunks);
		if (err) {
			xp_region_destroy(r);
			return err;
		}
	}
	*out = r;
	return 0;
}

void xp_region_destroy(struct xp_region *r)
{
	if (!r)
		return;
	for (__u32 s = 0; s < r->nspaces; s++)
		space_fini(&r->spaces[s]);
	free(r->spaces);
	free(r);
}

/* The deferred coalescing: loose chunks and the carve range back into blocks. */
static void space_coalesce(struct xp_space *sp)
{
	while (sp->nloose) {
		__u32 idx = sp->loose[--sp->nloose];

		sp->state[idx] = 0;
		xp_buddy_free(sp, idx, 0);
	}
	while (sp->carve < sp->carve_end) {
		__u32 o = (__u32)__builtin_ctz(sp->carve | (1u << sp->max_order));

		while (sp->carve + (1ull << o) > sp->carve_end)
			o--;
		xp_buddy_free(sp, sp->carve, o);
		sp->carve += 1u << o;
	}
	sp->coalesces++;
}

static __u32 lazy_alloc_one(struct xp_space *sp)
{
	__u32 idx, o;

	if (sp->nloose)
		return sp->loose[--sp->nloose];
	if (sp->carve < sp->carve_end)
		return sp->carve++;
	/*
	 * Smallest block first, and at most XP_CARVE_ORDER of it: big blocks stay
	 * whole for multi-chunk requests, which then seldom need a coalescing pass.
	 */
	for (o = 0; o <= sp->max_order && sp->head[o] == XP_NIL; o++)
		;
	if (o > sp->max_order)
		return XP_NIL;
	if (o > XP_CARVE_ORDER)
		o = XP_CARVE_ORDER;
	idx = xp_buddy_alloc(sp, o);
	sp->carve = idx + 1;
	sp->carve_end = idx + (1u << o);
	return idx;
}

/* Lazy: singles from the loose stack or the carve range, blocks coalesced on demand. */
static __u32 lazy_take(struct xp_space *sp, __u32 order)
{
	__u32 idx;

	if (!order)
		return lazy_alloc_one(sp);
	idx = xp_buddy_alloc(sp, order);
	if (idx == XP_NIL && sp->free_chunks >= 1ull << order &&
	    (sp->nloose || sp->carve < sp->carve_end)) {
		space_coalesce(sp);
		idx = xp_buddy_alloc(sp, order);
	}
	return idx;
}

static void lazy_put(struct xp_space *sp, __u32 idx, __u32 order)
{
	if (order) {
		xp_buddy_free(sp, idx, order);
		return;
	}
	sp->state[idx] = XP_ST_LOOSE;
	sp->loose[sp->nloose++] = idx;
}

static int region_alloc(struct xp_region *r, __u32 order, __u32 hint, __u64 *off)
{
	for (__u32 k = 0; k < r->nspaces; k++) {
		__u32 s = (hint + k) % r->nspaces, idx;
		struct xp_space *sp = &r->spaces[s];

		xp_space_lock(sp);
		idx = r->algo == XP_REGION_LAZY ? lazy_take(sp, order) : xp_buddy_alloc(sp, order);
		if (idx != XP_NIL) {
			sp->state[idx] = XP_ST_ALLOC | order;
			sp->free_chunks -= 1ull << order;
		}
		xp_space_unlock(sp);
		if (idx != XP_NIL) {
			*off = ((__u64)s * r->space_chunks + idx) << r->chunk_shift;
			return 0;
		}
	}
	return -ENOMEM;
}

static int region_free(struct xp_region *r, __u32 s, __u32 idx, __u32 order)
{
	struct xp_space *sp = &r->spaces[s];
	int err = 0;

	xp_space_lock(sp);
	if (sp->state[idx] != (XP_ST_ALLOC | order)) {
		err = -EINVAL;
	} else {
		if (r->algo == XP_REGION_LAZY)
			lazy_put(sp, idx, order);
		else
			xp_buddy_free(sp, idx, order);
		sp->free_chunks += 1ull << order;
	}
	xp_space_unlock(sp);
	return err;
}

int xp_region_alloc(struct xp_region *r, __u32 nchunks, __u32 hint, __u64 *off)
{
	__u32 order = order_of(nchunks);

	if (!r || !nchunks || !off)
		return -EINVAL;
	if ((1ull << order) > r->space_chunks)
		return -ENOMEM;
	return region_alloc(r, order, hint, off);
}

int xp_region_free(struct xp_region *r, __u64 off, __u32 nchunks)
{
	__u64 g;
	__u32 order = order_of(nchunks), s, idx;

	if (!r || !nchunks || off & ((1ull << r->chunk_shift) - 1))
		return -EINVAL;
	g = off >> r->chunk_shift;
	s = (__u32)(g / r->space_chunks);
	idx = (__u32)(g % r->space_chunks);
	if (s >= r->nspaces || idx & ((1u << order) - 1) || (1ull << order) > r->space_chunks)
		return -EINVAL;
	return region_free(r, s, idx, order);
}

void xp_region_coalesce(struct xp_region *r)
{
	for (__u32 s = 0; s < r->nspaces; s++) {
		xp_space_lock(&r->spaces[s]);
		space_coalesce(&r->spaces[s]);
		xp_space_unlock(&r->spaces[s]);
	}
}

void xp_region_stats(struct xp_region *r, struct xp_region_stats *st)
{
	memset(st, 0, sizeof(*st));
	for (__u32 s = 0; s < r->nspaces; s++) {
		struct xp_space *sp = &r->spaces[s];

		xp_space_lock(sp);
		st->free_chunks += sp->free_chunks;
		st->loose_chunks += sp->nloose + (sp->carve_end - sp->carve);
		st->coalesces += sp->coalesces;
		for (__u32 o = 0; o <= sp->max_order; o++)
			for (__u32 i = sp->head[o]; i != XP_NIL; i = sp->next[i]) {
				st->free_blocks++;
				if ((1ull << o) > st->largest_block)
					st->largest_block = 1ull << o;
			}
		xp_space_unlock(sp);
	}
}

__u64 xp_region_space_chunks(const struct xp_region *r)
{
	return r->space_chunks;
}

__u32 xp_region_spaces(const struct xp_region *r)
{
	return r->nspaces;
}
