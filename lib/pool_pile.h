/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The pile backend of the pool (lib/pool_pile.c): per-stripe lock-free stacks of
 * bulk nodes. Shared with the pool front (lib/pool.c: audit) and the caches
 * (lib/pool_cache.c: stashes); not installed.
 */
#ifndef XPILE_POOL_PILE_H
#define XPILE_POOL_PILE_H

#include <stdint.h>
#include <linux/types.h>

#include "xpile/pool.h"

#define B XP_PILE_BULK
#define NIL UINT32_MAX
/* Empty nodes a cache may keep; 32 covers the half-cache flush of a 2048 cache. */
#define STASH_MAX 32u

/*
 * A bulk node's header. The handles live apart (struct pile.objs), so that the
 * headers are dense (two per line) and a bulk moves 4 lines of handles, as a ring
 * of handles does, plus its share of a header line (docs/pile.md, "Where the
 * miss path's cycles go").
 */
struct node {
	/* Link fields are read by concurrent poppers before their CAS validates them. */
	__u32 next;
	__u32 rem; /* nodes of its pushed chain from here to tail, inclusive */
	__u32 tail; /* last node of that chain */
	__u32 after; /* the node under that chain (NIL at the bottom) */
	__u32 depth; /* nodes from here to the bottom of the stack, inclusive */
	__u32 contig; /* nodes from here to tail are indexes here, here + 1, ... */
	__u32 count;
	__u32 pad_;
} __attribute__((aligned(32)));

struct lfs {
	__u64 head; /* tag << 32 | index */
} __attribute__((aligned(64)));

/*
 * A stripe's bank: its full and its empty nodes as two arrays of node indexes, each
 * a stack growing down (full[ftop..nnodes) hold full nodes, full[ftop] on top).
 * Whoever takes the bank (busy: 0 -> 1 by exchange) moves a block of k indexes
 * between them and copies the handles of those k nodes, with no header to read or
 * write and no link to follow; a block keeps its order, so nodes that were
 * consecutive stay so and their handles move as one memcpy. Nobody waits for a
 * busy bank: the caller uses the lock-free stacks of the same stripe instead (see
 * docs/pile.md, "The bank").
 */
struct bank {
	__u32 busy; /* atomic: 1 while taken */
	/* Read and written only by the taker: full[ftop..nnodes), empty[etop..ecap). */
	__u32 ftop, etop;
	__u32 pad_;
	__u64 ver; /* atomic: tag << 32 | full nodes, written by the taker on drop */
	__u32 *full; /* [nnodes] */
	__u32 *empty; /* [ecap]: at most ecap empty nodes, budgeted in nnodes */
};

/*
 * Each written word has a line of its own, away from the read-mostly ones. The
 * full nodes live in one stack per stripe: with a single stack two cores pushing
 * and popping the same head measured 0.57x DPDK's ring at 2 cores (every CAS and
 * every node's handles crossed cores); a home stripe per cache keeps both local.
 */
struct stripe {
	struct lfs full;
	struct lfs free; /* nodes emptied from this stripe's full ones */
	/*
	 * Room: how many more handles the pile may take, the part charged to this
	 * stripe (the sum over stripes is N minus the handles in the pile, exact at
	 * quiescence). A put takes room before it pushes, a get gives it back after
	 * it pops, both on the caller's home stripe, so a core's steady state touches
	 * only its own line and the pile never holds more than N (see room_take).
	 */
	__u64 room __attribute__((aligned(64)));
	struct bank bank __attribute__((aligned(64)));
};

struct pile { // NOLINT(clang-analyzer-optin.performance.Padding): stripes and room counters sit on their own cache lines on purpose
	struct node *nodes;
	__u64 (*objs)[B]; /* [nnodes]: node i's handles, 64-byte aligned */
	struct stripe *sp; /* [nstripes] */
	__u32 *bidx; /* the banks' index arrays, nnodes + ecap per stripe */
	__u32 ecap; /* empty nodes a bank may hold */
	__u32 nnodes;
	__u32 nstripes;
	__u32 next_home; /* creation counter for homes (atomic) */
	__u32 n; /* N: the handles the pool was created with */
	__u32 room_lock; /* serializes room_gather (atomic) */
	struct lfs odd; /* the partial node: 0 or index + 1 (no tag: see odd_give) */
};

struct stash {
	__u32 n;
	__u32 lim;
	__u32 idx[STASH_MAX];
};

#define LD(x) __atomic_load_n(&(x), __ATOMIC_RELAXED)
#define ST(x, v) __atomic_store_n(&(x), (v), __ATOMIC_RELAXED)

static inline struct node *nd(const struct pile *pl, __u32 i)
{
	return &pl->nodes[i];
}

static inline __u64 *nd_objs(const struct pile *pl, __u32 i)
{
	return pl->objs[i];
}

/* Full nodes in bank @b at its last drop. */
static inline __u32 bank_nfull(const struct bank *b)
{
	return (__u32)__atomic_load_n(&b->ver, __ATOMIC_ACQUIRE);
}

/* Nodes from @x to the bottom; may read garbage if @x is concurrently popped. */
static inline __u32 nd_depth(const struct pile *pl, __u32 x)
{
	return x < pl->nnodes ? LD(nd(pl, x)->depth) : 0;
}

/* Fills the stacks with @handles: stripe s gets the s-th share, in order. */
int xp_pile_init(struct pile *pl, const __u64 *handles, __u32 n, __u32 max_caches, __u32 nstripes);
/*
 * Get and put for a caller whose home is stripe @s, with its stash @st (NULL for an
 * uncached call). Get is all or nothing (-ENOBUFS); put is all or nothing too: it
 * fails with -ENOSPC and puts nothing when the pile would hold more than N.
 */
int xp_pile_get(struct pile *pl, __u32 s, __u64 *dst, __u32 n, struct stash *st);
int xp_pile_put(struct pile *pl, __u32 s, const __u64 *src, __u32 n, struct stash *st);
/* Free handles in the stacks and the odd node: exact at quiescence, never above N. */
__u32 xp_pile_avail(const struct pile *pl);
/* Keeps empty nodes in the stash @st (may be NULL), the rest on stripe @s's free stack. */
void xp_pile_release(struct pile *pl, __u32 s, struct stash *st, const __u32 *idx, __u32 k);

#endif /* XPILE_POOL_PILE_H */
