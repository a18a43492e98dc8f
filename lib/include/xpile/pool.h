/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The pool: the frame allocator. It holds a fixed set of N UMEM frame handles (u64
 * offsets, opaque to it) shared by all cores, with a private per-thread cache in
 * front of it, and keeps the free handles in one of two backends:
 *
 *   xp_cache (one per thread, LIFO array, no atomics on a hit)
 *        | whole bulks of XP_PILE_BULK, with hysteresis
 *   xp_pool (shared), backend
 *     "pile" (XP_POOL_PILE, default): stacks of bulks, one per stripe (a cache's
 *            home; others are stolen from only when home is short): an array of
 *            bulks that no call ever waits for, in front of lock-free stacks;
 *     "ring" (XP_POOL_RING): a bounded MPMC ring of handles, DPDK's classic design.
 *
 * So "the pool" is the allocator and "the pile" one of its backends (the project's
 * name comes from it, and so do this header's and XP_PILE_*'s names).
 *
 * Threading contract
 * - A pool is shared: xp_pool_get(), xp_pool_put() and xp_cache_create() may be
 *   called from any thread at any time.
 * - A cache belongs to one thread at a time: xp_cache_get(), xp_cache_put(),
 *   xp_cache_flush() and xp_cache_destroy() on one cache must not run concurrently
 *   (hand a cache over to another thread only with a happens-before, e.g. a join).
 * - xp_pool_avail() may be called at any time (under load it is an estimate, never
 *   above N). xp_pool_cached(), xp_pool_in_use() and xp_pool_audit() read the
 *   caches and need quiescence (no get/put running); all are exact then. Under
 *   load an all-or-nothing get may fail while other threads hold objects in flight.
 * - xp_pool_destroy() requires every cache of the pool destroyed first.
 *
 * Capacity contract: the backend never holds more than N handles, in every mode.
 * - Release mode checks the count, not the handles: a put that would make the
 *   backend hold more than N (uncached xp_pool_put(), a cache's flush or bypass,
 *   xp_cache_flush()) fails with -ENOSPC, puts none of the batch and logs one line.
 *   Both backends, exact at quiescence and never exceeded under load (the pile
 *   takes "room" on the caller's home stripe before a push and gives it back after
 *   a pop: one CAS on a line of its own, on the slow path only). The inline cache
 *   hit paths check only the cache's own bound, so a surplus put into a cache is
 *   refused when that cache next flushes (the cache keeps it; destroy logs it).
 *   Which handles are put is not checked: a foreign or double-freed handle put while
 *   the backend has room is taken, and a later, legitimate put is then the one
 *   refused; xp_pool_audit() finds it (foreign, held twice, free + cached > N).
 * - XP_POOL_F_DEBUG checks every handle of every get and put, cache hits included:
 *   not from this pool, outside umem_size, misaligned, or already free (a double
 *   free, which covers every put beyond N) fails the whole call with -EINVAL, a
 *   message naming the handle, and no change.
 *
 * Every function returns 0 or a negative errno; failures are also reported through
 * the log hook (xpile/log.h). Nothing aborts.
 */
#ifndef XPILE_PILE_H
#define XPILE_PILE_H

#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <string.h>
#include <linux/types.h>

#include "xpile/api.h"
#include "xpile/opts.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Handles per bulk of the pile: the unit of refill, flush and of the shared stack. */
#define XP_PILE_BULK 32u
/* Largest cache size accepted by xp_cache_create() (0 = no cache). */
#define XP_CACHE_SIZE_MAX 4096u
/* Most stripes (independent shared piles, see xp_pool_opts.stripes). */
#define XP_PILE_STRIPES_MAX 64u

enum xp_pool_backend {
	XP_POOL_PILE = 0, /* per-stripe stacks of bulks of XP_PILE_BULK, non-blocking (default) */
	XP_POOL_RING = 1, /* bounded MPMC ring of handles (DPDK ring_mp_mc style) */
};

/* Checks every handle on every get/put; costs nothing on the hot path when off. */
#define XP_POOL_F_DEBUG (1u << 0)

struct xp_pool_opts {
	size_t sz; /* sizeof(struct xp_pool_opts); the rule: xpile/opts.h */
	enum xp_pool_backend backend;
	__u32 flags; /* XP_POOL_F_* */
	/* Debug checks: every handle < umem_size (0: unchecked) and a multiple of
	 * handle_align (0 or 1: unchecked). Checked on the creation list always. */
	__u64 umem_size;
	__u32 handle_align;
	/* Caches that get a private stash of empty bulk nodes (faster pile flushes).
	 * More caches may be created; they work, only without a stash.
	 * 0 = number of configured CPUs (at least 4). */
	__u32 max_caches;
	/* Pile backend: independent shared piles ("stripes"). Each cache has a home
	 * stripe (creation order); flushes go home, refills take from home and steal
	 * from the others only when home is short, so cores do not share a hot stack
	 * head. Uncached calls use stripe 0. 0 = online CPUs, at most
	 * XP_PILE_STRIPES_MAX. Ignored by the ring backend. */
	__u32 stripes;
	__u32 reserved_; /* zero: the tail has no unnamed padding (xpile/opts.h) */
};
#define xp_pool_opts__last_field stripes

struct xp_pool;

struct xp_cache_stats {
	__u64 get_hits; /* get calls served by the private array alone */
	__u64 put_hits; /* put calls served by the private array alone */
	__u64 get_misses; /* get calls that went to the slow path */
	__u64 put_misses; /* put calls that went to the slow path */
	__u64 refills; /* transfers pool -> cache */
	__u64 flushes; /* transfers cache -> pool */
	__u64 objs_refilled;
	__u64 objs_flushed;
	__u64 bypasses; /* requests larger than the cache sent straight to the pool */
	__u64 fails; /* gets refused with -ENOBUFS, puts refused */
};

/*
 * A per-thread cache. The fields are public only so that the hit paths can be
 * inline; treat them as read-only and use the functions below. ABI: the inline
 * paths compiled into callers read and write len, put_lim, dlen, st and objs in
 * place, so this layout is frozen for libxpile.so.0 (tests/unit/test_abi.c).
 */
struct xp_cache {
	__u32 len; /* objects the inline paths may take (0 in debug mode) */
	__u32 put_lim; /* inline put if len + n <= put_lim (0 in debug mode) */
	__u32 size; /* the size given at creation, unrounded */
	__u32 dlen; /* objects held in debug mode */
	struct xp_pool *pool;
	struct xp_cache_stats st;
	/* private to lib/pool_cache.c */
	void *priv;
	__u32 cap;
	__u32 pad_;
	__u64 objs[] __attribute__((aligned(64)));
};

/*
 * Creates a pool holding exactly the @n handles in @handles (copied; order kept,
 * so the first handles given are the first handed out by an uncached get), with
 * @opts (NULL: defaults). *@out is the caller's to xp_pool_destroy(). Fails with
 * -EINVAL on n == 0, duplicate handles, handles outside umem_size or misaligned,
 * unknown flags/backend or non-zero unknown opts bytes; -ENOMEM.
 */
XP_API int xp_pool_create(const __u64 *handles, __u32 n, const struct xp_pool_opts *opts,
			  struct xp_pool **out);
/* Frees the pool (NULL is fine). Every cache of it must be destroyed first (logged if
 * not; the caches then point at freed memory). */
XP_API void xp_pool_destroy(struct xp_pool *p);

/*
 * Uncached, thread-safe bulk get/put. Get is all-or-nothing: 0 with @n handles in
 * @objs, or -ENOBUFS and nothing taken. n == 0 succeeds. Put takes the @n handles
 * of @objs (copied) back and returns 0, or -ENOSPC if the backend would then hold
 * more than N (more puts than gets; nothing put), or in debug mode -EINVAL
 * (foreign, misaligned, out-of-UMEM or double-freed handle; nothing put).
 */
XP_API int xp_pool_get(struct xp_pool *p, __u64 *objs, __u32 n);
XP_API int xp_pool_put(struct xp_pool *p, const __u64 *objs, __u32 n);

/* N, the handles the pool was created with. */
XP_API __u32 xp_pool_size(const struct xp_pool *p);
/* Free handles in the backend (not in caches); any time, an estimate under load. */
XP_API __u32 xp_pool_avail(const struct xp_pool *p);
/* Handles held by all caches of the pool; exact at quiescence. */
XP_API __u32 xp_pool_cached(const struct xp_pool *p);
/* N - avail - cached: handles out with the application; exact at quiescence. */
XP_API __u32 xp_pool_in_use(const struct xp_pool *p);
/* The backend the pool was created with. */
XP_API enum xp_pool_backend xp_pool_backend(const struct xp_pool *p);
/* "pile", "ring", or "unknown" for a value outside the enum (static string). */
XP_API const char *xp_pool_backend_name(enum xp_pool_backend b);
/* Whether the pool was created with XP_POOL_F_DEBUG. */
XP_API bool xp_pool_debug(const struct xp_pool *p);

/*
 * Walks the backend and every cache (at quiescence) and checks that no handle is
 * duplicated or foreign and that free + cached <= N; for the pile backend also that
 * every bulk node is accounted for. In debug mode it also counts the handles marked
 * in use and proves free + cached + in_use == N. Returns 0, -ENOMEM, or -EUCLEAN
 * with the first violation logged.
 */
XP_API int xp_pool_audit(struct xp_pool *p);

/*
 * Creates a cache of @size objects (0..XP_CACHE_SIZE_MAX, used exactly as given;
 * 0 = every call goes to the pool) for pool @p, which must outlive it. The cache
 * keeps at most @size objects between calls. Refill tops it up to about size/2 and
 * flush returns the coldest objects so that about size/2 hot ones stay, both in
 * whole bulks of XP_PILE_BULK whenever the size allows; a second refill in a row
 * fills to about size - n, a second flush in a row keeps about n (a core that only
 * allocates or only frees moves more per transfer). *@out is the caller's to
 * xp_cache_destroy(). -EINVAL on a NULL argument or size > XP_CACHE_SIZE_MAX, -ENOMEM.
 */
XP_API int xp_cache_create(struct xp_pool *p, __u32 size, struct xp_cache **out);
/* Returns every cached object to the pool, then frees the cache (NULL is fine). */
XP_API void xp_cache_destroy(struct xp_cache *c);
/* Returns every cached object to the pool (e.g. when a worker goes idle): 0, or the
 * pool's -ENOSPC (over capacity; the objects stay cached). */
XP_API int xp_cache_flush(struct xp_cache *c);

/* Objects the cache holds now. */
static inline __u32 xp_cache_count(const struct xp_cache *c)
{
	return c->len + c->dlen;
}

/* Copies the cache's counters to @out. */
static inline void xp_cache_stats_get(const struct xp_cache *c, struct xp_cache_stats *out)
{
	*out = c->st;
}

/* Slow path of xp_cache_get() (refill, bypass, debug checks); call that instead. */
XP_API int xp_cache_get_slow(struct xp_cache *c, __u64 *objs, __u32 n);
/* Slow path of xp_cache_put() (flush, bypass, debug checks); call that instead. */
XP_API int xp_cache_put_slow(struct xp_cache *c, const __u64 *objs, __u32 n);

/*
 * The hit paths' copy. Whole bulks of up to 4 are copied inline, 256 bytes at a
 * time with a constant size the compiler unrolls into vector moves: libc's memcpy
 * was 61% of a hit and its call most of the rest (docs/pile.md, "The hit path").
 * Anything else goes to memcpy.
 */
static inline void xp_cache__copy(__u64 *dst, const __u64 *src, __u32 n)
{
	if (__builtin_expect(n % XP_PILE_BULK == 0 && n <= 4 * XP_PILE_BULK, 1)) {
		for (__u32 i = 0; i < n; i += XP_PILE_BULK)
			__builtin_memcpy(dst + i, src + i, XP_PILE_BULK * sizeof(__u64));
		return;
	}
	memcpy(dst, src, (size_t)n * sizeof(__u64));
}

/*
 * Takes @n handles: 0, or -ENOBUFS with the cache and the pool unchanged. A hit is a
 * bounds check, a copy and two stores. Requests larger than the cache size go to
 * the pool directly.
 */
static inline int xp_cache_get(struct xp_cache *c, __u64 *objs, __u32 n)
{
	if (__builtin_expect(n <= c->len, 1)) {
		c->len -= n;
		xp_cache__copy(objs, &c->objs[c->len], n);
		c->st.get_hits++;
		return 0;
	}
	return xp_cache_get_slow(c, objs, n);
}

/*
 * Returns @n handles: 0, or a negative errno and nothing put: -ENOSPC when the flush
 * this put needs would make the backend hold more than N, -EINVAL in debug mode.
 * A hit checks only the cache's bound (see the capacity contract above).
 */
static inline int xp_cache_put(struct xp_cache *c, const __u64 *objs, __u32 n)
{
	if (__builtin_expect(n <= c->put_lim - c->len, 1)) {
		xp_cache__copy(&c->objs[c->len], objs, n);
		c->len += n;
		c->st.put_hits++;
		return 0;
	}
	return xp_cache_put_slow(c, objs, n);
}

#ifdef __cplusplus
}
#endif

#endif /* XPILE_PILE_H */
