/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Longest-prefix match for routing: IPv4 (xp_lpm) and IPv6 (xp_lpm6), a prefix to a
 * 32-bit next-hop id, looked up inline by workers that never lock.
 *
 * Layout (one "image", the memory readers touch)
 * - IPv4 is DIR-24-8, DPDK rte_lpm's design: a root of 2^24 entries indexed by the top
 *   24 bits, and groups of 256 entries (tbl8) indexed by the last byte for the /24s
 *   that hold a route longer than /24. A lookup is one load, or two.
 * - IPv6 is the same trie with a root of 2^16 (or 2^24) entries and groups of 256 for
 *   each further byte, as deep as the longest prefix under the address: a /48 is 5
 *   loads with the 16-bit root, 4 with the 24-bit one (docs/router.md measures both).
 * - Entries are 32 bits: a leaf (hop + 1, 0 = no route) or a group index with
 *   XP_LPM_EXT set. Prefixes are leaf-pushed: every entry holds the hop of the longest
 *   prefix covering it, so a lookup ends at the first leaf.
 * - The writer keeps, beside the image and never read by the data path, the depth of
 *   the rule behind each entry and the rules themselves (prefix, depth) -> hop. So a
 *   delete restores what the next shorter covering rule says (deleting a /24 under a
 *   /16 gives the /24's entries the /16's hop again, inside groups too) and a group
 *   whose entries all come from one rule above it folds back into its parent entry.
 * - Images are on 2 MiB hugepages when the opts allow and enough are free
 *   (xpile/mem.h), else on 4 KiB pages; faulted in at creation.
 *
 * Next hops: any id 0..XP_LPM_HOP_MAX (31 bits): the table gives it back untouched.
 * A lookup with no covering route returns XP_LPM_MISS. xpile/fib.h uses the top bits
 * for its kinds (a nexthop, an ECMP group, a punt or drop reason).
 *
 * Consistency for lock-free readers (enum xp_lpm_sync)
 * Every entry is written with one 32-bit atomic store and read with one atomic load,
 * so a lookup sees, for its address, either the old or the new answer of a route
 * change, never a torn entry; a group is filled before the entry that points to it is
 * stored (release), and a group unlinked is reused only after a grace period. Two ways
 * to publish a batch of changes:
 * - XP_LPM_INPLACE (one image): each add/del is live when it returns. A route that
 *   covers many entries (a /16 is 256 root entries) changes entry by entry, so for a
 *   few microseconds two addresses under it may get different answers; each answer is
 *   the old or the new one. Unlinked groups wait in a FIFO for a grace period of the
 *   caller's xp_qsbr (xpile/qsbr.h) before reuse.
 * - XP_LPM_DOUBLE (two images): adds and dels go to the standby image, which no reader
 *   looks at; xp_lpm_commit() makes the whole batch live at once with one pointer store
 *   (every lookup after it sees all of the batch, every lookup before it none), and
 *   the runs of entries the batch wrote are logged. The next change first waits for
 *   the grace period of that flip (readers quiescent once: one burst) and copies the
 *   logged runs from the live image into the old one, which is then the standby. Twice
 *   the image memory; the flip itself costs nothing to readers; a change is live at
 *   the commit after it.
 * A table without an xp_qsbr has no concurrent readers: grace periods are immediate.
 * Readers must not hold an entry pointer across a quiescent point: the lookups take
 * the live image afresh on every call.
 *
 * Threading contract
 * - One writer at a time: create, add, del, clear, commit, sync, destroy are the
 *   caller's control thread's (serialize them if there are several).
 * - xp_lpm_lookup*() may run on any number of threads concurrently with the writer,
 *   each reader registered with the table's xp_qsbr and quiescent between bursts.
 * - xp_lpm_get() and xp_lpm_stats() read the writer's state: writer thread only.
 *
 * Every function returns 0 or a negative errno and prints nothing; failures that need
 * a fix the caller can make (hugepages, sizes) are also described through the log
 * hook (xpile/log.h).
 */
#ifndef XPILE_LPM_H
#define XPILE_LPM_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>

#include "xpile/api.h"
#include "xpile/mem.h"
#include "xpile/opts.h"
#include "xpile/qsbr.h"

#ifdef __cplusplus
extern "C" {
#endif

/* What a lookup returns when no route covers the address. */
#define XP_LPM_MISS 0xffffffffu
/* The largest next-hop id a table stores. */
#define XP_LPM_HOP_MAX 0x7ffffffeu
/* Entry encoding (ABI: read by the inline lookups): a group index, not a leaf. */
#define XP_LPM_EXT 0x80000000u
/* IPv4 root entries; groups start after them. */
#define XP_LPM_TBL24 (1u << 24)

enum xp_lpm_sync {
	XP_LPM_INPLACE = 0, /* one image, each change live on return (default) */
	XP_LPM_DOUBLE = 1, /* two images, a batch live at once at xp_lpm_commit() */
};

struct xp_lpm_opts {
	size_t sz; /* sizeof(struct xp_lpm_opts); the rule: xpile/opts.h */
	/* Groups of 256 entries (1 KiB) per image. IPv4: one for each /24 holding a route
	 * longer than /24; IPv6: one for each byte level a prefix crosses below the root.
	 * An add that needs more fails with -ENOSPC. 0 = 1024. */
	__u32 groups;
	/* Rules expected: the rule store starts at this size and grows. 0 = 1024. */
	__u32 routes_hint;
	enum xp_lpm_sync sync;
	enum xp_hugepages hugepages; /* of the images: XP_HUGE_AUTO (default) warns on 4 KiB */
	struct xp_qsbr *qsbr; /* the readers' quiescence; NULL: no concurrent readers */
	/* xp_lpm6 only: root stride, 16 (default, 256 KiB) or 24 bits (64 MiB); 0 or 24
	 * for xp_lpm. */
	__u32 root_bits;
	int numa_node; /* with bind_node: the images' node */
	bool bind_node;
	__u8 reserved_[7]; /* zero: the tail has no unnamed padding (xpile/opts.h) */
};
#define xp_lpm_opts__last_field bind_node

struct xp_lpm_stats {
	__u64 routes; /* rules held */
	__u64 groups_used, groups_max;
	__u64 image_bytes; /* one image: what the readers touch */
	__u64 bytes; /* everything: images, the writer's depths and rules, the log */
	__u64 adds, dels, commits; /* calls that succeeded */
	__u64 flips; /* double: commits that published a batch */
	__u64 replays, replayed_entries; /* double: standby catch-ups and entries copied */
	__u64 full_copies; /* double: catch-ups that copied the whole image (log overflow) */
	__u64 grace_waits; /* times the writer had to wait for readers */
	__u64 deferred; /* in place: groups waiting for a grace period now */
	__u32 page_size; /* of the images */
	__u32 images; /* 1 or 2 */
};

/*
 * ABI (tests/unit/test_abi.c): the inline lookups read these fields in place. The
 * image readers use is *active; everything else is behind priv.
 */
struct xp_lpm {
	__u32 *active;
	void *priv;
};

struct xp_lpm6 {
	__u32 *active;
	__u32 groups_at; /* 1 << root_bits */
	__u8 root_shift; /* 32 - root_bits */
	__u8 root_bytes; /* root_bits / 8 */
	__u16 pad_;
	void *priv;
};

/*
 * Creates an empty IPv4 table with @opts (NULL: defaults) into *@out, the caller's to
 * xp_lpm_destroy(). -EINVAL (opts rule, groups above 2^22, root_bits not 0 or 24),
 * -ENOMEM (also XP_HUGE_REQUIRE with too few hugepages, logged with the sysctl).
 */
XP_API int xp_lpm_create(const struct xp_lpm_opts *opts, struct xp_lpm **out);
/* Frees the table (NULL is fine). No reader may look it up any more. */
XP_API void xp_lpm_destroy(struct xp_lpm *t);
/*
 * Adds @addr/@depth (host byte order, bits past @depth ignored; depth 0..32) -> @hop
 * (0..XP_LPM_HOP_MAX), or replaces the hop of that exact prefix. 0, -EINVAL (depth or
 * hop out of range), -ENOSPC (no group left: the table is unchanged), -ENOMEM.
 */
XP_API int xp_lpm_add(struct xp_lpm *t, __u32 addr, __u8 depth, __u32 hop);
/* Deletes exactly @addr/@depth: its entries take the next shorter covering rule's hop
 * (or none). 0, -ENOENT (no such rule), -EINVAL. */
XP_API int xp_lpm_del(struct xp_lpm *t, __u32 addr, __u8 depth);
/* The hop of exactly @addr/@depth (not a lookup): 0 with *@hop, or -ENOENT. */
XP_API int xp_lpm_get(const struct xp_lpm *t, __u32 addr, __u8 depth, __u32 *hop);
/* Deletes every rule (one pass over the image, live as add/del are). */
XP_API void xp_lpm_clear(struct xp_lpm *t);
/*
 * Publishes: double, the batch since the last commit becomes live at once; in place,
 * changes are live already and this returns groups whose grace period has ended to
 * the free list. Never waits for readers. 0.
 */
XP_API int xp_lpm_commit(struct xp_lpm *t);
/* Commit, then wait for readers until nothing is pending (the standby caught up,
 * every deferred group free): for tests, benchmarks and shutdown. 0. */
XP_API int xp_lpm_sync(struct xp_lpm *t);
XP_API void xp_lpm_stats(const struct xp_lpm *t, struct xp_lpm_stats *st);

/* The IPv6 twins: @addr is 16 bytes in network order, depth 0..128. */
XP_API int xp_lpm6_create(const struct xp_lpm_opts *opts, struct xp_lpm6 **out);
XP_API void xp_lpm6_destroy(struct xp_lpm6 *t);
XP_API int xp_lpm6_add(struct xp_lpm6 *t, const __u8 addr[16], __u8 depth, __u32 hop);
XP_API int xp_lpm6_del(struct xp_lpm6 *t, const __u8 addr[16], __u8 depth);
XP_API int xp_lpm6_get(const struct xp_lpm6 *t, const __u8 addr[16], __u8 depth, __u32 *hop);
XP_API void xp_lpm6_clear(struct xp_lpm6 *t);
XP_API int xp_lpm6_commit(struct xp_lpm6 *t);
XP_API int xp_lpm6_sync(struct xp_lpm6 *t);
XP_API void xp_lpm6_stats(const struct xp_lpm6 *t, struct xp_lpm_stats *st);

/* The live image, loaded once per lookup (acquire: a flipped-to image is complete). */
static inline const __u32 *xp_lpm__image(__u32 *const *active)
{
	return __atomic_load_n(active, __ATOMIC_ACQUIRE);
}

static inline __u32 xp_lpm__entry(const __u32 *img, size_t i)
{
	/* Acquire: a group an in-place writer just linked was filled before the link. */
	return __atomic_load_n(&img[i], __ATOMIC_ACQUIRE);
}

static inline __u32 xp_lpm__find(const __u32 *img, __u32 addr)
{
	__u32 e = xp_lpm__entry(img, addr >> 8);

	if (__builtin_expect(e & XP_LPM_EXT, 0))
		e = xp_lpm__entry(img,
				  XP_LPM_TBL24 + ((size_t)(e & ~XP_LPM_EXT) << 8) + (addr & 0xff));
	return e - 1; /* a leaf holds hop + 1; 0 (no route) becomes XP_LPM_MISS */
}

/* The hop of the longest prefix covering @addr (host byte order), or XP_LPM_MISS. */
static inline __u32 xp_lpm_lookup(const struct xp_lpm *t, __u32 addr)
{
	return xp_lpm__find(xp_lpm__image(&t->active), addr);
}

/* How far ahead the bulk lookups prefetch: a whole burst of 32 before its lookups
 * was the fastest of 0, 4, 8, 16, 32, 64 (docs/router.md);
 * 0 turns prefetching off. */
#ifndef XP_LPM_PREFETCH
#define XP_LPM_PREFETCH 32u
#endif

/*
 * xp_lpm_lookup() of @n addresses (a burst) into @hop[], all against one image, root
 * entries prefetched XP_LPM_PREFETCH addresses ahead so their misses overlap.
 */
static inline void xp_lpm_lookup_bulk(const struct xp_lpm *t, const __u32 *addr, __u32 *hop,
				      unsigned int n)
{
	const __u32 *img = xp_lpm__image(&t->active);
	unsigned int i;

	for (i = 0; i < n && i < XP_LPM_PREFETCH; i++)
		__builtin_prefetch(&img[addr[i] >> 8]);
	for (i = 0; i < n; i++) {
		if (i + XP_LPM_PREFETCH < n)
			__builtin_prefetch(&img[addr[i + XP_LPM_PREFETCH] >> 8]);
		hop[i] = xp_lpm__find(img, addr[i]);
	}
}

static inline size_t xp_lpm6__root(const struct xp_lpm6 *t, const __u8 *a)
{
	__u32 w = (__u32)a[0] << 24 | (__u32)a[1] << 16 | (__u32)a[2] << 8 | a[3];

	return w >> t->root_shift;
}

static inline __u32 xp_lpm6__find(const struct xp_lpm6 *t, const __u32 *img, const __u8 *a)
{
	__u32 e = xp_lpm__entry(img, xp_lpm6__root(t, a));

	/* A group at the last byte holds leaves only, so this ends by a[15]. */
	for (unsigned int i = t->root_bytes; e & XP_LPM_EXT; i++)
		e = xp_lpm__entry(img, t->groups_at + ((size_t)(e & ~XP_LPM_EXT) << 8) + a[i]);
	return e - 1;
}

/* The hop of the longest prefix covering @addr (16 bytes, network order), or XP_LPM_MISS. */
static inline __u32 xp_lpm6_lookup(const struct xp_lpm6 *t, const __u8 addr[16])
{
	return xp_lpm6__find(t, xp_lpm__image(&t->active), addr);
}

/* xp_lpm6_lookup() of @n addresses (16 bytes each, packed) into @hop[], prefetching. */
static inline void xp_lpm6_lookup_bulk(const struct xp_lpm6 *t, const __u8 (*addr)[16], __u32 *hop,
				       unsigned int n)
{
	const __u32 *img = xp_lpm__image(&t->active);
	unsigned int i;

	for (i = 0; i < n && i < XP_LPM_PREFETCH; i++)
		__builtin_prefetch(&img[xp_lpm6__root(t, addr[i])]);
	for (i = 0; i < n; i++) {
		if (i + XP_LPM_PREFETCH < n)
			__builtin_prefetch(&img[xp_lpm6__root(t, addr[i + XP_LPM_PREFETCH])]);
		hop[i] = xp_lpm6__find(t, img, addr[i]);
	}
}

#ifdef __cplusplus
}
#endif

#endif /* XPILE_LPM_H */
