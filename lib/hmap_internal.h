/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * An intrusive chained hash map for the library's control-plane tables (the FIB's
 * prefixes, nexthops, groups, neighbours): objects embed a struct xp_hnode, the caller
 * hashes and compares. Grows by doubling at load 1; single-threaded. Not installed.
 */
#ifndef XPILE_HMAP_INTERNAL_H
#define XPILE_HMAP_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>

struct xp_hnode {
	struct xp_hnode *next;
	__u64 hash;
};

struct xp_hmap {
	struct xp_hnode **b;
	__u64 mask;
	__u64 count;
};

/* Room for about @hint objects before the first growth: 0 or -ENOMEM. */
int xp_hmap_init(struct xp_hmap *m, size_t hint);
void xp_hmap_fini(struct xp_hmap *m);
/* Links @n under @hash (duplicates are the caller's business). Never fails: a growth
 * that finds no memory leaves the map longer-chained. */
void xp_hmap_insert(struct xp_hmap *m, struct xp_hnode *n, __u64 hash);
void xp_hmap_remove(struct xp_hmap *m, struct xp_hnode *n);

/* The first object after @from (NULL: from the start) of @hash's chain with that hash;
 * the caller compares keys. */
static inline struct xp_hnode *xp_hmap_next(const struct xp_hmap *m, __u64 hash,
					    const struct xp_hnode *from)
{
	struct xp_hnode *n = from ? from->next : m->b[hash & m->mask];

	while (n && n->hash != hash)
		n = n->next;
	return n;
}

/* Every object, in no order; @n may be removed inside the loop body (uses @tmp). */
#define xp_hmap_each(m, n, tmp)                                         \
	for (__u64 xp_hb_ = 0; (m)->b && xp_hb_ <= (m)->mask; xp_hb_++) \
		for ((n) = (m)->b[xp_hb_]; (n) && ((tmp) = (n)->next, 1); (n) = (tmp))

/* A 64-bit hash of @len bytes (murmur3's finalizer over 8-byte words). */
__u64 xp_hash_bytes(const void *p, size_t len, __u64 seed);

#endif
