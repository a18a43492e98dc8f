/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Region allocator: carves UMEMs out of one arena for a long-running process that
 * creates and destroys sockets as they come and go. It hands out byte offsets into the
 * arena in whole chunks; xp_arena_* below puts it over a memfd mapping (the engine's).
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
#include "xpile/mem.h"
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

/*
 * Arena: one memfd-backed mapping (2 MiB hugetlb or 4 KiB shmem, xpile/mem.h) with a
 * region allocator over it, from which a process carves every large buffer it needs
 * (UMEMs, buffers registered with io_uring) on one NUMA node. Lazy twice over: the
 * mapping reserves only address space (MAP_NORESERVE), and a carve gets real pages
 * (fallocate() on the memfd, bound to the node, then faulted in) for the bytes asked
 * only, while its offset range is a whole power of two chunks; a free punches them
 * back out. xp_arena_mem()->fd is the memfd, which another process can map (hot
 * handover). Thread-safe like the region allocator; carving is not for the data path.
 */
struct xp_arena;

struct xp_arena_opts {
	size_t sz; /* sizeof(struct xp_arena_opts); the rule: xpile/opts.h */
	__u64 size; /* address space, rounded up to spaces x a power of two chunks */
	__u64 chunk; /* carve granule, a power of two, at least the page (default 2 MiB) */
	__u32 spaces; /* region spaces (default 1) */
	enum xp_hugepages hugepages; /* XP_HUGE_AUTO: 2 MiB pages if @size of them is free */
	int numa_node; /* -1: no bind; else every carve's pages are bound to this node */
	enum xp_region_algo algo;
};
#define xp_arena_opts__last_field algo

/* One carve: @base is arena base + @off, the memfd offset too. */
struct xp_arena_buf {
	void *base;
	__u64 off;
	__u64 size; /* bytes backed by pages: the request rounded up to the page */
	__u32 nchunks; /* offset range held, in chunks (a power of two) */
	__u32 reserved_;
};

/*
 * Creates an arena. XP_HUGE_AUTO takes 2 MiB pages when xp_hugepages_free() covers
 * @o->size, else 4 KiB ones with one warning naming the sysctl; XP_HUGE_REQUIRE fails
 * at a carve the pages cannot back. -EINVAL (the opts rule, a bad chunk, size 0), or
 * memfd_create's, mmap's negative errno; each logged.
 */
XP_API int xp_arena_create(const struct xp_arena_opts *o, struct xp_arena **out);
/* Unmaps the arena and closes its memfd (NULL is fine); carves still held die with it. */
XP_API void xp_arena_destroy(struct xp_arena *a);
/*
 * Carves @bytes, backed and faulted in on the arena's node. -ENOMEM: no offset range
 * that long is free, or the pages are missing (hugepages: logged with the
 * `echo N > /proc/sys/vm/nr_hugepages` that fixes it); -EINVAL: @bytes 0 or NULL @out;
 * mbind()'s negative errno when the arena's node cannot be bound (logged).
 */
XP_API int xp_arena_alloc(struct xp_arena *a, __u64 bytes, __u32 hint, struct xp_arena_buf *out);
/* Gives a carve's pages back to the kernel and its range to the region; -EINVAL if
 * @b is not a live carve of @a. Clears @b->base. */
XP_API int xp_arena_free(struct xp_arena *a, struct xp_arena_buf *b);
/* The arena's mapping: base, size, page size, node and the memfd (fd). */
XP_API const struct xp_mem *xp_arena_mem(const struct xp_arena *a);
/* Bytes of the arena backed by pages now (the sum of live carves' sizes). */
XP_API __u64 xp_arena_backed(const struct xp_arena *a);

#ifdef __cplusplus
}
#endif

#endif /* XPILE_REGION_H */
