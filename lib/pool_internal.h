/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The pool (xpile/pool.h) inside: shared by its front (lib/pool.c), its caches
 * (lib/pool_cache.c) and its two backends, the pile (lib/pool_pile.c) and the ring
 * (lib/pool_ring.c); not installed.
 */
#ifndef XPILE_POOL_INTERNAL_H
#define XPILE_POOL_INTERNAL_H

#include <pthread.h>
#include <stdbool.h>
#include <linux/types.h>

#include "pool_pile.h"

/*
 * Bounded MPMC ring of handles, DPDK ring_mp_mc style: producers reserve slots with
 * one CAS on prod.head, copy, then publish in order through prod.tail; consumers
 * likewise. Holds at most cap handles (exact, not rounded to a power of two). The
 * ring backend's data structure (lib/pool_ring.c); an AF_XDP ring is struct xp_ring.
 */
struct xp_mpmc;

int xp_mpmc_create(__u32 cap, struct xp_mpmc **out);
void xp_mpmc_destroy(struct xp_mpmc *r);
/* All or nothing: 0, or -ENOSPC (enqueue) / -ENOBUFS (dequeue) and nothing moved. */
int xp_mpmc_enqueue(struct xp_mpmc *r, const __u64 *objs, __u32 n);
int xp_mpmc_dequeue(struct xp_mpmc *r, __u64 *objs, __u32 n);
/* Quiescent views: the count, and the i-th queued handle (0 = next out). */
__u32 xp_mpmc_count(const struct xp_mpmc *r);
__u64 xp_mpmc_peek(const struct xp_mpmc *r, __u32 i);

enum { ST_FREE = 0, ST_USED = 1 };

struct cpriv {
	struct xp_cache *c;
	struct cpriv *prev, *next;
	struct stash stash;
	__u32 home; /* stripe */
	bool budgeted;
	__u8 last; /* XFER_*: the cache's last transfer, for the refill and flush sizes */
};

enum { XFER_NONE = 0, XFER_REFILL = 1, XFER_FLUSH = 2 };

struct xp_pool {
	struct pile pile;
	struct xp_mpmc *ring;
	enum xp_pool_backend backend;
	__u32 flags;
	__u32 n;
	__u64 umem_size;
	__u32 align;
	__u32 stash_budget; /* caches that may still get a stash (atomic) */
	__u64 *sorted; /* the N handles, sorted: membership and state index */
	__u64 stride; /* sorted[i] == sorted[0] + i * stride for all i (0: no) */
	__u8 *state; /* debug: ST_* per sorted index (atomic) */
	pthread_mutex_t lock;
	struct cpriv *caches;
	__u32 ncaches;
};

/* ---- backend dispatch: the cache code is the same for both ---- */

/* @cp: the calling cache, or NULL for an uncached call (no stash, stripe 0). */
static inline int be_get(struct xp_pool *p, __u64 *dst, __u32 n, struct cpriv *cp)
{
	if (p->backend == XP_POOL_RING)
		return xp_mpmc_dequeue(p->ring, dst, n);
	return xp_pile_get(&p->pile, cp ? cp->home : 0, dst, n, cp ? &cp->stash : NULL);
}

/* Logs a put the backend refused (-ENOSPC: it would hold more than N); returns @err. */
int xp_pool_put_refused(const struct xp_pool *p, __u32 n, int err);

/* Both backends refuse a put that would make them hold more than N: see xpile/pool.h. */
static inline int be_put(struct xp_pool *p, const __u64 *src, __u32 n, struct cpriv *cp)
{
	int err = p->backend == XP_POOL_RING ?
			  xp_mpmc_enqueue(p->ring, src, n) :
			  xp_pile_put(&p->pile, cp ? cp->home : 0, src, n, cp ? &cp->stash : NULL);

	return err ? xp_pool_put_refused(p, n, err) : 0;
}

static inline bool dbg(const struct xp_pool *p)
{
	return p->flags & XP_POOL_F_DEBUG;
}

/* Debug mode: flips @n handles from state @from to @to; on the first mismatch undoes and fails. */
int xp_pool_dbg_flip(struct xp_pool *p, const __u64 *objs, __u32 n, __u8 from, __u8 to,
		     const char *op);

#endif /* XPILE_POOL_INTERNAL_H */
