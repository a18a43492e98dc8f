// SPDX-License-Identifier: BSD-3-Clause
/*
 * Classic eager buddy: every allocation splits down to its order, every free
 * coalesces up as far as the buddies allow. XP_REGION_EAGER is exactly this (the
 * baseline the lazy iBuddy is measured against); the lazy iBuddy uses it as its
 * block layer for multi-chunk requests. Callers hold the space lock.
 */
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
