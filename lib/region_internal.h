/* SPDX-License-Identifier: BSD-3-Clause */
/* Buddy space shared by the lazy iBuddy (region.c) and the eager buddy (region_eager.c). */
#ifndef XPILE_REGION_INTERNAL_H
#define XPILE_REGION_INTERNAL_H

#include <sched.h>
#include <stdatomic.h>

#include "xpile/region.h"

#define XP_NIL (~0u)
#define XP_MAX_ORDER 32

/* state[i]: what chunk i is. Interior chunks of blocks and allocated chunks are 0. */
#define XP_ST_BLOCK 0x40 /* head of a free buddy block; low bits are its order */
#define XP_ST_LOOSE 0x80 /* a free single chunk on the lazy stack */
#define XP_ST_ALLOC 0x20 /* head of an allocation; low bits are its order */
#define XP_ST_ORDER 0x1f

struct xp_space {
	atomic_int lock; /* held for a few dozen instructions: spin, then yield */
	__u32 nchunks, max_order;
	__u8 *state;
	__u32 *next, *prev; /* free block lists, by chunk index */
	__u32 head[XP_MAX_ORDER + 1]; /* per order */
	__u32 *loose, nloose; /* lazy: stack of free single chunks */
	__u32 carve, carve_end; /* lazy: block being handed out chunk by chunk */
	__u64 free_chunks, coalesces;
} __attribute__((aligned(64)));

struct xp_region {
	enum xp_region_algo algo;
	__u32 nspaces, chunk_shift;
	__u64 space_chunks;
	struct xp_space *spaces;
};

static inline void xp_space_lock(struct xp_space *sp)
{
	for (unsigned spins = 0;; spins++) {
		if (!atomic_load_explicit(&sp->lock, memory_order_relaxed) &&
		    !atomic_exchange_explicit(&sp->lock, 1, memory_order_acquire))
			return;
		if (spins > 64)
			sched_yield(); /* the holder may be preempted on a busy machine */
		else
			__builtin_ia32_pause();
	}
}

static inline void xp_space_unlock(struct xp_space *sp)
{
	atomic_store_explicit(&sp->lock, 0, memory_order_release);
}

/* Classic buddy on one space; the caller holds sp->lock. */
__u32 xp_buddy_alloc(struct xp_space *sp, __u32 order);
void xp_buddy_free(struct xp_space *sp, __u32 idx, __u32 order);

#endif
