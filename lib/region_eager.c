// SPDX-License-Identifier: BSD-3-Clause
/*
 * Classic eager buddy: every allocation splits down to its order, every free
 * coalesces up as far as the buddies allow. The baseline the lazy iBuddy is
 * measured against, and the block layer the lazy iBuddy itself uses for
 * multi-chunk requests.
 */
#include <errno.h>

#include "region_internal.h"

static void list_push(struct xp_space *sp, __u32 idx, __u32 order)
{
	__u32 h = sp->head[order];

	sp->next[idx] = h;
	sp->prev[idx] = XP_NIL;
	if (h != XP_NIL)
		sp->prev[h] = idx;
	sp->head[order] = idx;
	sp->state[idx] = XP_ST_BLOCK | order;
}

static void list_del(struct xp_space *sp, __u32 idx, __u32 order)
{
	__u32 n = sp->next[idx], p = sp->prev[idx];

	if (p != XP_NIL)
		sp->next[p] = n;
	else
		sp->head[order] = n;
	if (n != XP_NIL)
		sp->prev[n] = p;
	sp->state[idx] = 0;
}

__u32 xp_buddy_alloc(struct xp_space *sp, __u32 order)
{
	__u32 o = order, idx;

	while (o <= sp->max_order && sp->head[o] == XP_NIL)
		o++;
	if (o > sp->max_order)
		return XP_NIL;
	idx = sp->head[o];
	list_del(sp, idx, o);
	/* Split: the upper halves go back as smaller free blocks. */
	while (o > order) {
		o--;
		list_push(sp, idx + (1u << o), o);
	}
	return idx;
}

void xp_buddy_free(struct xp_space *sp, __u32 idx, __u32 order)
{
	while (order < sp->max_order) {
		__u32 b = idx ^ (1u << order);

		if (sp->state[b] != (XP_ST_BLOCK | order))
			break;
		list_del(sp, b, order);
		idx &= ~(1u << order);
		order++;
	}
	list_push(sp, idx, order);
}

int xp_region_eager_alloc(struct xp_region *r, __u32 order, __u32 hint, __u64 *off)
{
	for (__u32 k = 0; k < r->nspaces; k++) {
		__u32 s = (hint + k) % r->nspaces, idx;
		struct xp_space *sp = &r->spaces[s];

		xp_space_lock(sp);
		idx = xp_buddy_alloc(sp, order);
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

int xp_region_eager_free(struct xp_region *r, __u32 s, __u32 idx, __u32 order)
{
	struct xp_space *sp = &r->spaces[s];
	int err = 0;

	xp_space_lock(sp);
	if (sp->state[idx] != (XP_ST_ALLOC | order)) {
		err = -EINVAL;
	} else {
		xp_buddy_free(sp, idx, order);
		sp->free_chunks += 1ull << order;
	}
	xp_space_unlock(sp);
	return err;
}
