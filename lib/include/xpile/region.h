/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Region allocator: carves UMEMs out of one arena (e.g. an xp_mem of 2 MiB
 * hugepages) for a long-running node agent that creates and destroys sockets as
 * pods come and go. It hands out byte offsets into the arena in whole chunks.
 *
 * XP_REGION_LAZY is a lazy iBuddy: single-chunk allocation and free are O(1)
 * pushes and pops on a per-space stack of loose chunks, with no split and no
 * coalesce; loose chunks are coalesced into buddy blocks only when a multi-chunk
 * request finds no block big enough. The arena is split into several independent
 * buddy spaces, each with its own lock, so cores allocating with different hints
 * do not contend. XP_REGION_EAGER is the classic buddy (split on every allocation,
 * coalesce on every free), kept as the baseline; both share this interface.
 *
 * Thread-safe. Multi-chunk requests are rounded up to a power of two chunks; free
 * takes the same count that was allocated.
 */
#ifndef XPILE_REGION_H
#define XPILE_REGION_H

#include <linux/types.h>
#include <stddef.h>

#include "xpile/api.h"
#include "xpile/opts.h"

#ifdef __cplusplus
extern "C" {
#endif

struct xp_region;

enum xp_region_algo {
	XP_REGION_LAZY = 0, /* lazy iBuddy (default) */
	XP_REGION_EAGER, /* classic eager buddy, the baseline */
};

struct xp_region_opts {
	size_t sz; /* sizeof(struct xp_region_opts); the rule: xpile/opts.h */
	__u64 size; /* arena bytes: spaces x a power of two chunks */
	__u64 chunk; /* chunk bytes, a power of two >= 4096 (default 2 MiB) */
	__u32 spaces; /* independent buddy spaces, each locked alone (default 1) */
	enum xp_region_algo algo; /* default XP_REGION_LAZY */
};
#define xp_region_opts__last_field algo

struct xp_region_stats {
	__u64 free_chunks; /* all free chunks, loose or in blocks */
	__u64 loose_chunks; /* free single chunks not yet coalesced (lazy only) */
	__u64 largest_block; /* chunks in the largest free buddy block */
	__u64 free_blocks; /* free buddy blocks (loose chunks not counted) */
	__u64 coalesces; /* deferred coalescing passes run (lazy only) */
};

/*
 * Creates an allocator of byte offsets into an arena of @o->size bytes (it manages
 * offsets only; the caller maps the memory, e.g. with xp_mem_alloc()). *@out is the
 * caller's to xp_region_destroy(). -EINVAL: chunk not a power of two >= 4096, size
 * not spaces x a power of two chunks, unknown algo, the opts rule; -ENOMEM.
 */
XP_API int xp_region_create(const struct xp_region_opts *o, struct xp_region **out);
/* Frees the allocator (NULL is fine); offsets still allocated simply stop meaning
 * anything. */
XP_API void xp_region_destroy(struct xp_region *r);

/*
 * Allocates @nchunks contiguous chunks; *@off is the byte offset into the arena.
 * @hint picks the space tried first (e.g. the caller's CPU); others are tried when
 * it is exhausted. -ENOMEM when no space holds a run that long.
 */
XP_API int xp_region_alloc(struct xp_region *r, __u32 nchunks, __u32 hint, __u64 *off);
/* Frees what xp_region_alloc() returned; -EINVAL on a bad offset or double free. */
XP_API int xp_region_free(struct xp_region *r, __u64 off, __u32 nchunks);

/* Coalesces every loose chunk now (tests, or before a shutdown audit). */
XP_API void xp_region_coalesce(struct xp_region *r);
/* Fills @st, summed over the spaces (each locked in turn: a consistent view per space). */
XP_API void xp_region_stats(struct xp_region *r, struct xp_region_stats *st);
/* Chunks per space (the largest possible allocation) and the space count. */
XP_API __u64 xp_region_space_chunks(const struct xp_region *r);
XP_API __u32 xp_region_spaces(const struct xp_region *r);

#ifdef __cplusplus
}
#endif

#endif /* XPILE_REGION_H */
