// SPDX-License-Identifier: BSD-3-Clause
/*
 * The pile allocator. See xpile/pile.h for the contract and docs/pile.md for the
 * design and the proof that bulk nodes never run out. In short:
 *
 * - The pile is a Treiber stack of *full* nodes of XP_PILE_BULK handles in a
 *   preallocated node array. Its head is {index:32, tag:32} in one 64-bit word; every
 *   successful CAS bumps the tag (ABA). A chain of k nodes is linked privately and
 *   pushed with one CAS. Each node records how many nodes of its chain follow it
 *   (rem), the chain's last node (tail), the node under the chain (after) and its
 *   own depth, all written privately before the push. So a pop of k nodes reads
 *   only the header line of each chain's first node (a refill the size of the last
 *   flush reads one remote line, not k), a push reads only the old head's depth,
 *   and avail is O(1).
 * - Fewer than XP_PILE_BULK leftover handles live in one "odd" node published in a
 *   single atomic slot. Whoever has a leftover takes the slot, merges, pushes the
 *   node if it became full and republishes the rest. So the pile holds at most one
 *   partial node and never more than N handles.
 * - Empty nodes live in a second tagged stack and in per-cache stashes: a refill
 *   keeps the nodes it emptied, and the next flush fills them, so neither needs a
 *   second CAS.
 * - Both stacks exist once per stripe. A cache flushes to its home stripe and
 *   refills from it, so in the steady state a core's CASes and the nodes it copies
 *   stay in its own cache lines; a get that home cannot meet gathers across the
 *   stripes (all or nothing), and a put whose home has too few empty nodes takes
 *   them from another stripe. The odd slot stays single (it is rarely touched).
 */
#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/sysinfo.h>

#include "xpile/pile.h"
#include "log_internal.h"
#include "opts_internal.h"
#include "pool_internal.h"

#define B XP_PILE_BULK
#define NIL UINT32_MAX
/* Empty nodes a cache may keep; 32 covers the half-cache flush of a 2048 cache. */
#define STASH_MAX 32u
/* Nodes beyond need for partial nodes held in flight (<= 3 per concurrent op). */
#define SPARE_NODES 96u
/* Yields before a put that finds no empty node concludes the pool is over capacity. */
#define NODE_RETRIES 1000

enum { ST_FREE = 0, ST_USED = 1 };

struct node {
	/* Link fields are read by concurrent poppers before their CAS validates them. */
	__u32 next;
	__u32 rem; /* nodes of its pushed chain from here to tail, inclusive */
	__u32 tail; /* last node of that chain */
	__u32 after; /* the node under that chain (NIL at the bottom) */
	__u32 depth; /* nodes from here to the bottom of the stack, inclusive */
	__u32 contig; /* nodes from here to tail are indexes here, here + 1, ... */
	__u32 count;
	__u32 pad_[9];
	__u64 objs[B];
} __attribute__((aligned(64)));

struct lfs {
	__u64 head; /* tag << 32 | index */
} __attribute__((aligned(64)));

/*
 * Each written word has a line of its own, away from the read-mostly ones. The
 * full nodes live in one stack per stripe: with a single stack two cores pushing
 * and popping the same head measured 0.57x DPDK's ring at 2 cores (every CAS and
 * every node's handles crossed cores); a home stripe per cache keeps both local.
 */
struct stripe {
	struct lfs full;
	struct lfs free; /* nodes emptied from this stripe's full ones */
};

struct pile {
	struct node *nodes;
	__u32 nnodes;
	__u32 nstripes;
	struct stripe *sp; /* [nstripes] */
	__u32 next_home; /* creation counter for homes (atomic) */
	struct lfs odd; /* the partial node: 0 or index + 1 (no tag: see odd_give) */
};

struct stash {
	__u32 n;
	__u32 lim;
	__u32 idx[STASH_MAX];
};

struct cpriv {
	struct xp_cache *c;
	struct cpriv *prev, *next;
	struct stash stash;
	__u32 home; /* stripe */
	bool budgeted;
};

struct xp_pool {
	struct pile pile;
	struct xp_ring *ring;
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

/* ---- node stacks ---- */

#define LD(x) __atomic_load_n(&(x), __ATOMIC_RELAXED)
#define ST(x, v) __atomic_store_n(&(x), (v), __ATOMIC_RELAXED)

static inline struct node *nd(const struct pile *pl, __u32 i)
{
	return &pl->nodes[i];
}

static inline __u64 mkhead(__u32 idx, __u64 old)
{
	return ((old >> 32) + 1) << 32 | idx;
}

/* Nodes from @x to the bottom; may read garbage if @x is concurrently popped. */
static __u32 nd_depth(const struct pile *pl, __u32 x)
{
	return x < pl->nnodes ? LD(nd(pl, x)->depth) : 0;
}

/* The i-th stripe from @s, home first (no division: node_alloc runs it per flush). */
static inline __u32 stripe_nth(const struct pile *pl, __u32 s, __u32 i)
{
	return s + i < pl->nstripes ? s + i : s + i - pl->nstripes;
}

/* Nodes in stack @s now (an estimate under load). */
static __u32 lfs_depth(const struct pile *pl, const struct lfs *s)
{
	return nd_depth(pl, (__u32)__atomic_load_n(&s->head, __ATOMIC_ACQUIRE));
}

/*
 * A private chain built bottom-up (each node added goes on top), for one stack.
 * What depends on that stack's head (the node under the chain, and depths) is
 * written while building, from the head seen at chain_begin(); lfs_push() rewrites
 * it only if the head moved meanwhile, so a push normally walks nothing.
 */
struct chain {
	__u32 top, bottom, k;
	__u32 h, hd; /* the head the chain expects to sit on, and its depth */
};

static void chain_begin(const struct pile *pl, struct chain *c, const struct lfs *s)
{
	__u32 h = (__u32)__atomic_load_n(&s->head, __ATOMIC_RELAXED);

	*c = (struct chain){ .top = NIL, .bottom = NIL, .h = h, .hd = nd_depth(pl, h) };
}

static void chain_add(struct pile *pl, struct chain *c, __u32 x)
{
	struct node *X = nd(pl, x);

	if (c->bottom == NIL)
		c->bottom = x;
	ST(X->next, c->top == NIL ? c->h : c->top);
	ST(X->rem, ++c->k);
	ST(X->tail, c->bottom);
	ST(X->after, c->h);
	ST(X->depth, c->hd + c->k);
	ST(X->contig, c->top == NIL || (c->top == x + 1 && LD(nd(pl, c->top)->contig)));
	c->top = x;
}

/* Pushes a chain with one CAS. */
static void lfs_push(struct pile *pl, struct lfs *s, struct chain *c)
{
	__u64 old = __atomic_load_n(&s->head, __ATOMIC_RELAXED);

	for (;;) {
		__u32 h = (__u32)old, d = nd_depth(pl, h);

		if (h != c->h || d != c->hd) {
			__u32 x = c->top;

			ST(nd(pl, c->bottom)->next, h);
			for (;;) {
				ST(nd(pl, x)->depth, d + LD(nd(pl, x)->rem));
				ST(nd(pl, x)->after, h);
				if (x == c->bottom)
					break;
				x = LD(nd(pl, x)->next);
			}
			c->h = h;
			c->hd = d;
		}
		if (__atomic_compare_exchange_n(&s->head, &old, mkhead(c->top, old), true,
						__ATOMIC_RELEASE, __ATOMIC_RELAXED))
			return;
	}
}

/*
 * Pops @k nodes with one CAS; they stay linked by next from *first. Up to @slack
 * more are taken when that spares a walk into the last chain; *got says how many.
 * -ENOBUFS if the stack holds fewer than k at one instant.
 */
static int lfs_pop(struct pile *pl, struct lfs *s, __u32 k, __u32 slack, __u32 *first, __u32 *got)
{
	__u64 old = __atomic_load_n(&s->head, __ATOMIC_ACQUIRE);
	const __u32 nn = pl->nnodes;

	for (;;) {
		__u32 h = (__u32)old, cur = h, l = NIL, need = k, extra = 0, nxt;
		bool stale = false;

		if (h == NIL || nd_depth(pl, h) < k) {
			__u64 now = __atomic_load_n(&s->head, __ATOMIC_ACQUIRE);

			if (now == old)
				return -ENOBUFS;
			old = now;
			continue;
		}
		/*
		 * Whole chains are skipped through their first node's header; the last
		 * one may be taken in part, walking next. Links read here may be stale;
		 * the CAS on the tagged head rejects those.
		 */
		nxt = NIL;
		while (need && !stale) {
			struct node *C = nd(pl, cur);
			__u32 r = LD(C->rem), t = LD(C->tail);

			if (!r || t >= nn) {
				stale = true;
			} else if (r <= need) {
				need -= r;
				cur = nxt = LD(C->after);
				stale = need && cur >= nn;
			} else if (r - need <= slack) {
				extra = r - need;
				need = 0;
				nxt = LD(C->after);
			} else if (LD(C->contig)) {
				l = cur + need - 1;
				need = 0;
				stale = l >= nn;
				if (!stale)
					nxt = LD(nd(pl, l)->next);
			} else {
				for (l = cur; --need && !stale; stale = l >= nn)
					l = LD(nd(pl, l)->next);
				if (!stale)
					nxt = LD(nd(pl, l)->next);
			}
		}
		if (stale) {
			old = __atomic_load_n(&s->head, __ATOMIC_ACQUIRE);
			continue;
		}
		if (__atomic_compare_exchange_n(&s->head, &old, mkhead(nxt, old), true,
						__ATOMIC_ACQUIRE, __ATOMIC_ACQUIRE)) {
			*first = h;
			*got = k + extra;
			return 0;
		}
	}
}

/* ---- empty nodes: stash first, then the shared free stack ---- */

/* Keeps empty nodes in the stash, the rest on stripe @s's free stack. */
static void node_release(struct pile *pl, __u32 s, struct stash *st, const __u32 *idx, __u32 k)
{
	struct chain c;
	__u32 i = 0;

	if (st)
		for (; i < k && st->n < st->lim; i++)
			st->idx[st->n++] = idx[i];
	/* Bottom-up from the last: nodes popped in index order stay contiguous. */
	chain_begin(pl, &c, &pl->sp[s].free);
	while (k > i)
		chain_add(pl, &c, idx[--k]);
	if (c.k)
		lfs_push(pl, &pl->sp[s].free, &c);
}

/* A chain walker over empty nodes taken from a stash and from the free stack. */
/*
 * Walks a popped chain of @left nodes we own. A contiguous run (x, x + 1, ...) needs
 * no pointer chasing, so its nodes' misses are all started at once; elsewhere the
 * next node is prefetched as soon as its index is known.
 */
struct cursor {
	__u32 x, run, left;
	int rw; /* prefetch for write */
};

static void prefetch_node(const struct pile *pl, __u32 x, int rw)
{
	for (unsigned int line = 0; line < sizeof(struct node); line += 64) {
		if (rw)
			__builtin_prefetch((const char *)nd(pl, x) + line, 1);
		else
			__builtin_prefetch((const char *)nd(pl, x) + line, 0);
	}
}

static __u32 cursor_next(const struct pile *pl, struct cursor *c)
{
	__u32 x = c->x;

	if (!c->run) {
		const struct node *X = nd(pl, x);

		c->run = LD(X->contig) ? LD(X->rem) : 1;
		if (c->run > c->left)
			c->run = c->left;
		for (__u32 i = 1; i < c->run && i <= STASH_MAX; i++)
			prefetch_node(pl, x + i, c->rw);
	}
	c->left--;
	if (--c->run) {
		c->x = x + 1;
	} else {
		c->x = LD(nd(pl, x)->next);
		if (c->left)
			prefetch_node(pl, c->x, c->rw);
	}
	return x;
}

struct node_src {
	const __u32 *stash;
	__u32 nstash;
	struct cursor chain; /* popped from the free stack, used after the stash ones */
	__u32 extra; /* nodes popped beyond the need, left on chain at the end */
};

static __u32 node_src_next(struct pile *pl, struct node_src *s)
{
	if (s->nstash)
		return s->stash[--s->nstash];
	return cursor_next(pl, &s->chain);
}

/* Stashes the nodes a pop took beyond the need (see lfs_pop's slack). */
static void node_src_done(struct pile *pl, __u32 sp, struct stash *st, struct node_src *s)
{
	__u32 idx[STASH_MAX], i;

	for (i = 0; i < s->extra; i++)
		idx[i] = cursor_next(pl, &s->chain);
	if (i)
		node_release(pl, sp, st, idx, i);
}

/*
 * Moves up to @want empty nodes from the other stripes' free stacks onto stripe @s's,
 * for a put that found no free stack with enough on its own. The mover owns them only
 * between its pop and its push (no wait in between), so others' retries stay short.
 * Returns how many it moved.
 */
static __u32 node_gather(struct pile *pl, __u32 s, __u32 want)
{
	struct chain c;
	__u32 moved = 0;

	chain_begin(pl, &c, &pl->sp[s].free);
	for (__u32 i = 1; i < pl->nstripes && moved < want; i++) {
		struct lfs *f = &pl->sp[stripe_nth(pl, s, i)].free;
		__u32 d = lfs_depth(pl, f), got;
		struct cursor cur = { .rw = 1 };

		if (d > want - moved)
			d = want - moved;
		if (!d || lfs_pop(pl, f, d, 0, &cur.x, &got))
			continue;
		/* cursor_next reads a node's links before chain_add rewrites them. */
		for (cur.left = got; cur.left;)
			chain_add(pl, &c, cursor_next(pl, &cur));
		moved += got;
	}
	if (c.k)
		lfs_push(pl, &pl->sp[s].free, &c);
	return moved;
}

/* Empty nodes for a put to stripe @s: the stash, then home's free stack, then others'. */
static int node_alloc(struct pile *pl, __u32 s, struct stash *st, __u32 k, struct node_src *out)
{
	__u32 from_stash = st ? (st->n < k ? st->n : k) : 0, got, i;
	int tries = 0;

	out->nstash = from_stash;
	out->chain = (struct cursor){ .x = NIL, .rw = 1 };
	out->extra = 0;
	if (st) {
		st->n -= from_stash;
		out->stash = &st->idx[st->n];
	}
	if (k == from_stash)
		return 0;
	for (;;) {
		for (i = 0; i < pl->nstripes; i++)
			if (!lfs_pop(pl, &pl->sp[stripe_nth(pl, s, i)].free, k - from_stash,
				     st ? st->lim - st->n : 0, &out->chain.x, &got))
				goto found;
		/* Only nodes held by concurrent ops can make this wait; see pile.md. */
		if (++tries > NODE_RETRIES) {
			if (st)
				st->n += from_stash; /* the stash slots still hold them */
			return -ENOSPC;
		}
		if (!node_gather(pl, s, k - from_stash))
			sched_yield();
	}
found:
	out->extra = got - (k - from_stash);
	out->chain.left = got;
	return 0;
}

/* ---- the odd slot: the one partial node ---- */

static __u32 odd_take(struct pile *pl)
{
	__u64 o = __atomic_exchange_n(&pl->odd.head, 0, __ATOMIC_ACQ_REL);

	return o ? (__u32)(o - 1) : NIL;
}

static void push_one(struct pile *pl, __u32 s, __u32 x)
{
	struct chain c;

	chain_begin(pl, &c, &pl->sp[s].full);
	chain_add(pl, &c, x);
	lfs_push(pl, &pl->sp[s].full, &c);
}

/*
 * Publishes partial node @x, merging with whatever partial node got there first.
 * The slot needs no tag: it is only taken by exchange and only filled from empty,
 * and "empty" means the same whatever happened in between.
 */
static void odd_give(struct pile *pl, struct stash *st, __u32 s, __u32 x)
{
	for (;;) {
		__u64 zero = 0;
		__u32 o, cx, co;
		struct node *X, *O;

		if (__atomic_compare_exchange_n(&pl->odd.head, &zero, (__u64)x + 1, false,
						__ATOMIC_RELEASE, __ATOMIC_RELAXED))
			return;
		o = odd_take(pl);
		if (o == NIL)
			continue;
		X = nd(pl, x);
		O = nd(pl, o);
		cx = LD(X->count);
		co = LD(O->count);
		if (co + cx >= B) {
			__u32 mv = B - co;

			memcpy(&O->objs[co], &X->objs[cx - mv], mv * sizeof(__u64));
			ST(O->count, B);
			push_one(pl, s, o);
			cx -= mv;
			ST(X->count, cx);
			if (!cx) {
				node_release(pl, s, st, &x, 1);
				return;
			}
		} else {
			memcpy(&O->objs[co], X->objs, cx * sizeof(__u64));
			ST(O->count, co + cx);
			node_release(pl, s, st, &x, 1);
			x = o;
		}
	}
}

/* ---- pile backend ---- */

/* Takes @n handles from stripe @s (and the odd node): all or nothing. */
static int stripe_get(struct pile *pl, __u32 s, __u64 *dst, __u32 n, struct stash *st)
{
	__u32 q = n / B, r = n % B, o = NIL, c = 0, k, got, i;
	struct cursor cur = { .x = NIL };
	__u32 emptied[64], ne = 0;

	if (!n)
		return 0;
	if (r) {
		o = odd_take(pl);
		c = o == NIL ? 0 : LD(nd(pl, o)->count);
	}
	k = q + (r > c);
	if (k && lfs_pop(pl, &pl->sp[s].full, k, 0, &cur.x, &got)) {
		if (o != NIL)
			odd_give(pl, st, s, o);
		return -ENOBUFS;
	}
	cur.left = k;
	for (i = 0; i < q; i++) {
		__u32 x = cursor_next(pl, &cur);

		memcpy(dst + (size_t)i * B, nd(pl, x)->objs, B * sizeof(__u64));
		emptied[ne++] = x;
		if (ne == 64) {
			node_release(pl, s, st, emptied, ne);
			ne = 0;
		}
	}
	dst += (size_t)q * B;
	if (r && r <= c) {
		struct node *O = nd(pl, o);

		ST(O->count, c - r);
		memcpy(dst, &O->objs[c - r], r * sizeof(__u64));
		if (LD(O->count))
			odd_give(pl, st, s, o);
		else
			emptied[ne++] = o;
	} else if (r) {
		__u32 l = cursor_next(pl, &cur), from_l = r - c;
		struct node *L = nd(pl, l);

		if (c) {
			memcpy(dst, nd(pl, o)->objs, c * sizeof(__u64));
			emptied[ne++] = o;
		}
		ST(L->count, B - from_l);
		memcpy(dst + c, &L->objs[B - from_l], from_l * sizeof(__u64));
		odd_give(pl, st, s, l);
	}
	if (ne)
		node_release(pl, s, st, emptied, ne);
	return 0;
}

/* Returns @n handles to stripe @s. */
static int pile_put(struct pile *pl, __u32 s, const __u64 *src, __u32 n, struct stash *st)
{
	__u32 q = n / B, r = n % B, spare = NIL, o;
	struct chain c;
	struct node_src ns;
	int err;

	if (!n)
		return 0;
	err = node_alloc(pl, s, st, q + (r != 0), &ns);
	if (err)
		return err;
	/* Fill bottom-up: the first (coldest) handles sink deepest. */
	chain_begin(pl, &c, &pl->sp[s].full);
	for (__u32 i = 0; i < q; i++) {
		__u32 x = node_src_next(pl, &ns);
		struct node *X = nd(pl, x);

		memcpy(X->objs, src + (size_t)i * B, B * sizeof(__u64));
		ST(X->count, B);
		chain_add(pl, &c, x);
	}
	src += (size_t)q * B;
	if (r) {
		spare = node_src_next(pl, &ns);
		o = odd_take(pl);
		if (o != NIL) {
			struct node *O = nd(pl, o);
			__u32 co = LD(O->count), mv = B - co < r ? B - co : r;

			memcpy(&O->objs[co], src, mv * sizeof(__u64));
			ST(O->count, co + mv);
			src += mv;
			r -= mv;
			if (LD(O->count) < B) {
				odd_give(pl, st, s, o);
			} else {
				chain_add(pl, &c, o);
			}
		}
	}
	if (c.k)
		lfs_push(pl, &pl->sp[s].full, &c);
	if (r) {
		ST(nd(pl, spare)->count, r);
		memcpy(nd(pl, spare)->objs, src, r * sizeof(__u64));
		odd_give(pl, st, s, spare);
	} else if (spare != NIL) {
		node_release(pl, s, st, &spare, 1);
	}
	node_src_done(pl, s, st, &ns);
	return 0;
}

/*
 * Takes @n handles for a cache whose home is stripe @s: from home alone if it can
 * (the steady state: one CAS on a line this core owns), else gathered across the
 * stripes, home first. Greedy is exact at quiescence: whole nodes from each stripe
 * while the request has a whole node left, then the remainder from the odd node or
 * one more node, so it fails only if 32 * (full nodes) + odd < n. All or nothing:
 * on a shortfall the handles gathered go back home (the same set of free handles).
 */
static int pile_get(struct pile *pl, __u32 s, __u64 *dst, __u32 n, struct stash *st)
{
	__u32 got = 0, i, t, k, d;
	int err = stripe_get(pl, s, dst, n, st);

	if (!err || pl->nstripes == 1)
		return err;
	for (i = 0; i < pl->nstripes; i++) {
		t = stripe_nth(pl, s, i);
		/* A pop that loses a race re-reads the depth; an empty stripe ends it. */
		while ((k = (n - got) / B) && (d = lfs_depth(pl, &pl->sp[t].full)))
			if (!stripe_get(pl, t, dst + got, (k < d ? k : d) * B, st))
				got += (k < d ? k : d) * B;
	}
	for (i = 0; got < n && n - got < B && i < pl->nstripes; i++)
		if (!stripe_get(pl, stripe_nth(pl, s, i), dst + got, n - got, st))
			got = n;
	if (got == n)
		return 0;
	/* They were free a moment ago, so nodes for them exist once calls return theirs. */
	while (got && pile_put(pl, s, dst, got, st))
		sched_yield();
	return -ENOBUFS;
}

/*
 * The full stacks and the odd slot are several words: a bulk moved from one to another
 * between reading them would count twice. Double-collect: retry until every tagged
 * full head stayed put from the first read to the second, so all describe the
 * instant the odd slot was read (a move between a stack and the odd node changes that
 * stack's tag; the odd count is read inside the window), and the result never
 * exceeds N even under load.
 */
static __u32 pile_avail(const struct pile *pl)
{
	__u64 h[XP_PILE_STRIPES_MAX], o;
	__u32 n, s;

	for (;;) {
		for (n = 0, s = 0; s < pl->nstripes; s++) {
			h[s] = __atomic_load_n(&pl->sp[s].full.head, __ATOMIC_ACQUIRE);
			n += nd_depth(pl, (__u32)h[s]) * B;
		}
		o = __atomic_load_n(&pl->odd.head, __ATOMIC_ACQUIRE);
		n += o ? LD(nd(pl, (__u32)(o - 1))->count) : 0;
		/* nstripes is fixed at create: h[0..nstripes) was filled above */
		for (s = 0; s < pl->nstripes; s++)
			/* NOLINTNEXTLINE(clang-analyzer-core.UndefinedBinaryOperatorResult) */
			if (__atomic_load_n(&pl->sp[s].full.head, __ATOMIC_ACQUIRE) != h[s])
				break;
		if (s == pl->nstripes && __atomic_load_n(&pl->odd.head, __ATOMIC_ACQUIRE) == o)
			return n;
	}
}

static int pile_init(struct pile *pl, const __u64 *handles, __u32 n, __u32 max_caches,
		     __u32 nstripes)
{
	__u32 q = n / B, r = n % B, f = q + (r != 0), i, s;
	struct chain full, free;

	pl->nnodes = q + 1 + SPARE_NODES + max_caches * STASH_MAX;
	pl->nstripes = nstripes;
	if (posix_memalign((void **)&pl->nodes, 64, (size_t)pl->nnodes * sizeof(struct node)) ||
	    posix_memalign((void **)&pl->sp, 64, nstripes * sizeof(struct stripe)))
		return -ENOMEM;
	memset(pl->nodes, 0, (size_t)pl->nnodes * sizeof(struct node));
	for (s = 0; s < nstripes; s++)
		pl->sp[s].full.head = pl->sp[s].free.head = NIL;
	pl->odd.head = 0;
	chain_begin(pl, &free, &pl->sp[0].free);
	/*
	 * Node i holds handles[32i..32i+31]; stripe s gets nodes [q*s/S, q*(s+1)/S) as
	 * one contiguous chain, lowest on top, so stripe 0 (uncached calls) hands out the
	 * first handles first and a larger get continues into stripe 1, 2, ...
	 */
	for (s = nstripes; s-- > 0;) {
		chain_begin(pl, &full, &pl->sp[s].full);
		for (i = (__u32)((__u64)q * (s + 1) / nstripes); i-- > (__u64)q * s / nstripes;) {
			memcpy(nd(pl, i)->objs, handles + (size_t)i * B, B * sizeof(__u64));
			ST(nd(pl, i)->count, B);
			chain_add(pl, &full, i);
		}
		if (full.k)
			lfs_push(pl, &pl->sp[s].full, &full);
	}
	if (r) {
		memcpy(nd(pl, q)->objs, handles + (size_t)q * B, r * sizeof(__u64));
		ST(nd(pl, q)->count, r);
		pl->odd.head = (__u64)q + 1;
	}
	for (i = pl->nnodes; i-- > f;)
		chain_add(pl, &free, i);
	lfs_push(pl, &pl->sp[0].free, &free);
	return 0;
}

/* ---- backend dispatch: the cache code is the same for both ---- */

/* @cp: the calling cache, or NULL for an uncached call (no stash, stripe 0). */
static int be_get(struct xp_pool *p, __u64 *dst, __u32 n, struct cpriv *cp)
{
	if (p->backend == XP_POOL_RING)
		return xp_ring_dequeue(p->ring, dst, n);
	return pile_get(&p->pile, cp ? cp->home : 0, dst, n, cp ? &cp->stash : NULL);
}

static int be_put(struct xp_pool *p, const __u64 *src, __u32 n, struct cpriv *cp)
{
	if (p->backend == XP_POOL_RING)
		return xp_ring_enqueue(p->ring, src, n);
	return pile_put(&p->pile, cp ? cp->home : 0, src, n, cp ? &cp->stash : NULL);
}

/* ---- debug: one state byte per handle ---- */

static long handle_index(const struct xp_pool *p, __u64 h)
{
	size_t lo = 0, hi = p->n;

	/* UMEM frames are nearly always evenly spaced: then no search at all. */
	if (p->stride) {
		__u64 off = h - p->sorted[0];

		return h >= p->sorted[0] && off % p->stride == 0 && off / p->stride < p->n ?
			       (long)(off / p->stride) :
			       -1;
	}
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;

		if (p->sorted[mid] < h)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < p->n && p->sorted[lo] == h ? (long)lo : -1;
}

static int handle_check(const struct xp_pool *p, __u64 h, const char *what)
{
	if (p->umem_size && h >= p->umem_size) {
		xp_err("pool: %s handle 0x%llx is outside the UMEM (size 0x%llx)\n", what,
		       (unsigned long long)h, (unsigned long long)p->umem_size);
		return -EINVAL;
	}
	if (p->align > 1 && h % p->align) {
		xp_err("pool: %s handle 0x%llx is not aligned to %u\n", what, (unsigned long long)h,
		       p->align);
		return -EINVAL;
	}
	return 0;
}

/* Flips @n handles from state @from to @to; on the first mismatch undoes and fails. */
static int dbg_flip(struct xp_pool *p, const __u64 *objs, __u32 n, __u8 from, __u8 to,
		    const char *op)
{
	__u32 i;
	int err = 0;

	for (i = 0; i < n; i++) {
		long ix;
		__u8 exp = from;

		err = handle_check(p, objs[i], op);
		if (err)
			break;
		ix = handle_index(p, objs[i]);
		if (ix < 0) {
			xp_err("pool: %s handle 0x%llx is not from this pool\n", op,
			       (unsigned long long)objs[i]);
			err = -EINVAL;
			break;
		}
		if (!__atomic_compare_exchange_n(&p->state[ix], &exp, to, false, __ATOMIC_RELAXED,
						 __ATOMIC_RELAXED)) {
			if (to == ST_FREE)
				xp_err("pool: double free of handle 0x%llx (already free; a put "
				       "beyond N is refused)\n",
				       (unsigned long long)objs[i]);
			else
				xp_err("pool: handle 0x%llx handed out twice (corruption)\n",
				       (unsigned long long)objs[i]);
			err = -EINVAL;
			break;
		}
	}
	if (err)
		while (i--)
			__atomic_store_n(&p->state[handle_index(p, objs[i])], from,
					 __ATOMIC_RELAXED);
	return err;
}

static inline bool dbg(const struct xp_pool *p)
{
	return p->flags & XP_POOL_F_DEBUG;
}

/* ---- pool ---- */

static int cmp_u64(const void *a, const void *b)
{
	__u64 x = *(const __u64 *)a, y = *(const __u64 *)b;

	return x < y ? -1 : x > y;
}

int xp_pool_create(const __u64 *handles, __u32 n, const struct xp_pool_opts *opts,
		   struct xp_pool **out)
{
	struct xp_pool_opts o = { .sz = sizeof(o) };
	struct xp_pool *p;
	int err;

	if (!out || (!handles && n)) {
		xp_err("pool: NULL handles or out pointer\n");
		return -EINVAL;
	}
	*out = NULL;
	if (opts) {
		if (!xp_opts_copy(&o,
				  offsetof(struct xp_pool_opts, xp_pool_opts__last_field) +
					  sizeof(o.xp_pool_opts__last_field),
				  opts, opts->sz, offsetof(struct xp_pool_opts, backend))) {
			xp_err("pool: opts.sz %zu is invalid or unknown opts fields are set; "
			       "zero the struct and set sz = sizeof(struct xp_pool_opts)\n",
			       opts->sz);
			return -EINVAL;
		}
	}
	if (!n) {
		xp_err("pool: a pool of 0 handles is invalid; give at least one\n");
		return -EINVAL;
	}
	if (o.backend != XP_POOL_PILE && o.backend != XP_POOL_RING) {
		xp_err("pool: unknown backend %d; use XP_POOL_PILE or XP_POOL_RING\n", o.backend);
		return -EINVAL;
	}
	if (o.flags & ~XP_POOL_F_DEBUG) {
		xp_err("pool: unknown flags 0x%x\n", o.flags & ~XP_POOL_F_DEBUG);
		return -EINVAL;
	}
	if (o.stripes > XP_PILE_STRIPES_MAX) {
		xp_err("pool: %u stripes exceed the maximum %u\n", o.stripes, XP_PILE_STRIPES_MAX);
		return -EINVAL;
	}
	if (!o.stripes) {
		int ncpu = get_nprocs();

		o.stripes = ncpu < 1 ? 1 : (__u32)ncpu;
		if (o.stripes > XP_PILE_STRIPES_MAX)
			o.stripes = XP_PILE_STRIPES_MAX;
	}
	if (posix_memalign((void **)&p, 64, sizeof(*p)))
		return -ENOMEM;
	memset(p, 0, sizeof(*p));
	p->backend = o.backend;
	p->flags = o.flags;
	p->n = n;
	p->umem_size = o.umem_size;
	p->align = o.handle_align;
	if (!o.max_caches) {
		int ncpu = get_nprocs_conf();

		o.max_caches = ncpu < 4 ? 4 : (__u32)ncpu;
	}
	p->stash_budget = o.max_caches;
	pthread_mutex_init(&p->lock, NULL);
	err = -ENOMEM;
	p->sorted = malloc((size_t)n * sizeof(__u64));
	if (!p->sorted)
		goto fail;
	memcpy(p->sorted, handles, (size_t)n * sizeof(__u64));
	qsort(p->sorted, n, sizeof(__u64), cmp_u64);
	err = -EINVAL;
	p->stride = n > 1 ? p->sorted[1] - p->sorted[0] : 1;
	for (__u32 i = 0; i < n; i++) {
		if (handle_check(p, p->sorted[i], "creation"))
			goto fail;
		if (i && p->sorted[i] - p->sorted[i - 1] != p->stride)
			p->stride = 0;
		if (i && p->sorted[i] == p->sorted[i - 1]) {
			xp_err("pool: handle 0x%llx is given twice\n",
			       (unsigned long long)p->sorted[i]);
			goto fail;
		}
	}
	err = -ENOMEM;
	if (dbg(p) && !(p->state = calloc(n, 1)))
		goto fail;
	if (p->backend == XP_POOL_RING) {
		err = xp_ring_create(n, &p->ring);
		if (!err)
			err = xp_ring_enqueue(p->ring, handles, n);
	} else {
		err = pile_init(&p->pile, handles, n, o.max_caches, o.stripes);
	}
	if (err)
		goto fail;
	*out = p;
	return 0;
fail:
	xp_pool_destroy(p);
	return err;
}

void xp_pool_destroy(struct xp_pool *p)
{
	if (!p)
		return;
	if (p->caches)
		xp_err("pool: destroyed with %u caches alive; destroy them first\n", p->ncaches);
	xp_ring_destroy(p->ring);
	free(p->pile.nodes);
	free(p->pile.sp);
	free(p->sorted);
	free(p->state);
	pthread_mutex_destroy(&p->lock);
	free(p);
}

int xp_pool_get(struct xp_pool *p, __u64 *objs, __u32 n)
{
	int err = be_get(p, objs, n, NULL);

	if (!err && dbg(p))
		dbg_flip(p, objs, n, ST_FREE, ST_USED, "get:");
	return err;
}

int xp_pool_put(struct xp_pool *p, const __u64 *objs, __u32 n)
{
	int err;

	if (dbg(p) && (err = dbg_flip(p, objs, n, ST_USED, ST_FREE, "put:")))
		return err;
	err = be_put(p, objs, n, NULL);
	if (err && dbg(p))
		dbg_flip(p, objs, n, ST_FREE, ST_USED, "put undo:");
	return err;
}

__u32 xp_pool_size(const struct xp_pool *p)
{
	return p->n;
}

__u32 xp_pool_avail(const struct xp_pool *p)
{
	return p->backend == XP_POOL_RING ? xp_ring_count(p->ring) : pile_avail(&p->pile);
}

__u32 xp_pool_cached(const struct xp_pool *p)
{
	struct xp_pool *mp = (struct xp_pool *)p; /* the list lock only */
	__u32 sum = 0;

	pthread_mutex_lock(&mp->lock);
	for (struct cpriv *cp = p->caches; cp; cp = cp->next)
		sum += xp_cache_count(cp->c);
	pthread_mutex_unlock(&mp->lock);
	return sum;
}

__u32 xp_pool_in_use(const struct xp_pool *p)
{
	return p->n - xp_pool_avail(p) - xp_pool_cached(p);
}

enum xp_pool_backend xp_pool_backend(const struct xp_pool *p)
{
	return p->backend;
}

const char *xp_pool_backend_name(enum xp_pool_backend b)
{
	return b == XP_POOL_RING ? "ring" : b == XP_POOL_PILE ? "pile" : "unknown";
}

bool xp_pool_debug(const struct xp_pool *p)
{
	return dbg(p);
}

/* ---- audit ---- */

struct audit {
	struct xp_pool *p;
	__u64 *seen; /* bitmap over sorted indexes */
	__u32 count;
	int err;
};

static void audit_add(struct audit *a, const __u64 *objs, __u32 n, const char *where)
{
	for (__u32 i = 0; i < n && !a->err; i++) {
		long ix = handle_index(a->p, objs[i]);

		if (ix < 0) {
			xp_err("audit: foreign handle 0x%llx in %s\n", (unsigned long long)objs[i],
			       where);
			a->err = -EUCLEAN;
		} else if (a->seen[ix / 64] & (1ull << (ix % 64))) {
			xp_err("audit: handle 0x%llx held twice (seen again in %s)\n",
			       (unsigned long long)objs[i], where);
			a->err = -EUCLEAN;
		} else {
			a->seen[ix / 64] |= 1ull << (ix % 64);
			a->count++;
		}
	}
}

/* Walks one node stack; returns its node count, or flags a cycle / bad link. */
static __u32 audit_stack(struct audit *a, const struct lfs *s, bool full)
{
	const struct pile *pl = &a->p->pile;
	__u32 x = (__u32)__atomic_load_n(&s->head, __ATOMIC_ACQUIRE), k = 0;
	__u32 depth = nd_depth(pl, x);

	for (; x != NIL && !a->err; x = nd(pl, x)->next) {
		if (x >= pl->nnodes || ++k > pl->nnodes) {
			xp_err("audit: %s stack has a bad link or a cycle\n",
			       full ? "pile" : "free");
			a->err = -EUCLEAN;
		} else if (full) {
			if (nd(pl, x)->count != B) {
				xp_err("audit: pile node %u holds %u handles, not %u\n", x,
				       nd(pl, x)->count, B);
				a->err = -EUCLEAN;
			}
			audit_add(a, nd(pl, x)->objs, B, "the pile");
		}
	}
	if (!a->err && k != depth) {
		xp_err("audit: %s stack depth %u but %u nodes linked\n", full ? "pile" : "free",
		       depth, k);
		a->err = -EUCLEAN;
	}
	return k;
}

int xp_pool_audit(struct xp_pool *p)
{
	struct audit a = { .p = p };
	__u32 free_objs, cached = 0, nodes = 0, in_use = 0;

	a.seen = calloc((p->n + 63) / 64, sizeof(__u64));
	if (!a.seen)
		return -ENOMEM;
	if (p->backend == XP_POOL_RING) {
		__u32 cnt = xp_ring_count(p->ring);

		for (__u32 i = 0; i < cnt && !a.err; i++) {
			__u64 h = xp_ring_peek(p->ring, i);

			audit_add(&a, &h, 1, "the ring");
		}
	} else {
		struct pile *pl = &p->pile;
		__u64 o = __atomic_load_n(&pl->odd.head, __ATOMIC_ACQUIRE);

		for (__u32 s = 0; s < pl->nstripes; s++) {
			nodes += audit_stack(&a, &pl->sp[s].full, true);
			nodes += audit_stack(&a, &pl->sp[s].free, false);
		}
		if (o && !a.err) {
			struct node *O = nd(pl, (__u32)(o - 1));

			if (!O->count || O->count >= B) {
				xp_err("audit: odd node holds %u handles\n", O->count);
				a.err = -EUCLEAN;
			}
			audit_add(&a, O->objs, O->count, "the odd node");
			nodes++;
		}
	}
	free_objs = a.count;
	pthread_mutex_lock(&p->lock);
	for (struct cpriv *cp = p->caches; cp && !a.err; cp = cp->next) {
		audit_add(&a, cp->c->objs, xp_cache_count(cp->c), "a cache");
		nodes += cp->stash.n;
	}
	pthread_mutex_unlock(&p->lock);
	cached = a.count - free_objs;
	if (!a.err && p->backend == XP_POOL_PILE && nodes != p->pile.nnodes) {
		xp_err("audit: %u of %u bulk nodes accounted for (node leak)\n", nodes,
		       p->pile.nnodes);
		a.err = -EUCLEAN;
	}
	if (!a.err && a.count > p->n) {
		xp_err("audit: %u free + %u cached > N = %u\n", free_objs, cached, p->n);
		a.err = -EUCLEAN;
	}
	if (!a.err && dbg(p)) {
		for (__u32 i = 0; i < p->n && !a.err; i++) {
			bool used = __atomic_load_n(&p->state[i], __ATOMIC_RELAXED) == ST_USED;
			bool seen = a.seen[i / 64] & (1ull << (i % 64));

			in_use += used;
			if (used == seen) {
				xp_err("audit: handle 0x%llx is %s but %s\n",
				       (unsigned long long)p->sorted[i], used ? "in use" : "free",
				       seen ? "held by the pool" : "nowhere in the pool");
				a.err = -EUCLEAN;
			}
		}
		if (!a.err && free_objs + cached + in_use != p->n) {
			xp_err("audit: free %u + cached %u + in use %u != N %u\n", free_objs,
			       cached, in_use, p->n);
			a.err = -EUCLEAN;
		}
	}
	free(a.seen);
	return a.err;
}

/* ---- caches ---- */

static inline struct cpriv *cpriv(struct xp_cache *c)
{
	return c->priv;
}

int xp_cache_create(struct xp_pool *p, __u32 size, struct xp_cache **out)
{
	struct xp_cache *c;
	struct cpriv *cp;
	__u32 budget;

	if (!p || !out) {
		xp_err("cache: NULL pool or out pointer\n");
		return -EINVAL;
	}
	*out = NULL;
	if (size > XP_CACHE_SIZE_MAX) {
		xp_err("cache: size %u exceeds the maximum %u\n", size, XP_CACHE_SIZE_MAX);
		return -EINVAL;
	}
	/* Twice the size: a miss may hold size + n (n <= size) before it settles. */
	if (posix_memalign((void **)&c, 64, sizeof(*c) + 2 * (size_t)size * sizeof(__u64)))
		return -ENOMEM;
	cp = calloc(1, sizeof(*cp));
	if (!cp) {
		free(c);
		return -ENOMEM;
	}
	memset(c, 0, sizeof(*c));
	c->size = size;
	c->put_lim = dbg(p) ? 0 : size;
	c->cap = 2 * size;
	c->pool = p;
	c->priv = cp;
	cp->c = c;
	budget = __atomic_load_n(&p->stash_budget, __ATOMIC_RELAXED);
	while (p->backend == XP_POOL_PILE && budget &&
	       !__atomic_compare_exchange_n(&p->stash_budget, &budget, budget - 1, true,
					    __ATOMIC_RELAXED, __ATOMIC_RELAXED))
		;
	if (p->backend == XP_POOL_PILE && budget) {
		cp->budgeted = true;
		cp->stash.lim = STASH_MAX;
	}
	/* Creation order spreads caches evenly; a thread per core gets a stripe each. */
	if (p->backend == XP_POOL_PILE)
		cp->home = __atomic_fetch_add(&p->pile.next_home, 1, __ATOMIC_RELAXED) %
			   p->pile.nstripes;
	pthread_mutex_lock(&p->lock);
	cp->next = p->caches;
	if (p->caches)
		p->caches->prev = cp;
	p->caches = cp;
	p->ncaches++;
	pthread_mutex_unlock(&p->lock);
	*out = c;
	return 0;
}

int xp_cache_flush(struct xp_cache *c)
{
	__u32 *lenp = dbg(c->pool) ? &c->dlen : &c->len;
	int err = be_put(c->pool, c->objs, *lenp, cpriv(c));

	if (err)
		return err;
	if (*lenp) {
		c->st.flushes++;
		c->st.objs_flushed += *lenp;
	}
	*lenp = 0;
	return 0;
}

void xp_cache_destroy(struct xp_cache *c)
{
	struct cpriv *cp;
	struct xp_pool *p;

	if (!c)
		return;
	cp = c->priv;
	p = c->pool;
	if (xp_cache_flush(c))
		xp_err("cache: %u handles could not be returned (pool over capacity)\n",
		       xp_cache_count(c));
	if (cp->stash.n)
		node_release(&p->pile, cp->home, NULL, cp->stash.idx, cp->stash.n);
	if (cp->budgeted)
		__atomic_fetch_add(&p->stash_budget, 1, __ATOMIC_RELAXED);
	pthread_mutex_lock(&p->lock);
	if (cp->prev)
		cp->prev->next = cp->next;
	else
		p->caches = cp->next;
	if (cp->next)
		cp->next->prev = cp->prev;
	p->ncaches--;
	pthread_mutex_unlock(&p->lock);
	free(cp);
	free(c);
}

static inline __u32 round_down(__u32 x)
{
	return x / B * B;
}

static inline __u32 round_up(__u32 x)
{
	return (x + B - 1) / B * B;
}

/* Shared by the normal and debug slow paths; *lenp is len or dlen. */
static int cache_get(struct xp_cache *c, __u32 *lenp, __u64 *objs, __u32 n)
{
	__u32 len = *lenp, s = c->size, need, want;
	struct xp_pool *p = c->pool;
	int err;

	if (n <= len) {
		len -= n;
		memcpy(objs, &c->objs[len], (size_t)n * sizeof(__u64));
		*lenp = len;
		c->st.get_hits++;
		return 0;
	}
	c->st.get_misses++;
	if (n > s) {
		c->st.bypasses++;
		err = be_get(p, objs, n, cpriv(c));
		/* The pool alone may be short of what pool + this cache can meet. */
		if (err && len && !(err = be_get(p, objs, n - len, cpriv(c)))) {
			memcpy(objs + n - len, c->objs, (size_t)len * sizeof(__u64));
			*lenp = 0;
		}
		c->st.fails += !!err;
		return err;
	}
	/* Refill to about s/2 after serving n, in whole bulks when they fit in s. */
	need = n - len;
	want = round_down(need + s / 2);
	if (want < need)
		want = round_up(need);
	if (len + want > s + n)
		want = s + n - len;
	err = be_get(p, &c->objs[len], want, cpriv(c));
	if (err && want != need)
		err = be_get(p, &c->objs[len], want = need, cpriv(c));
	if (err) {
		c->st.fails++;
		return err;
	}
	c->st.refills++;
	c->st.objs_refilled += want;
	len += want - n;
	memcpy(objs, &c->objs[len], (size_t)n * sizeof(__u64));
	*lenp = len;
	return 0;
}

static int cache_put(struct xp_cache *c, __u32 *lenp, const __u64 *objs, __u32 n)
{
	__u32 len = *lenp, s = c->size, total, need, f;
	struct xp_pool *p = c->pool;
	int err;

	if (n <= s - len) {
		memcpy(&c->objs[len], objs, (size_t)n * sizeof(__u64));
		*lenp = len + n;
		c->st.put_hits++;
		return 0;
	}
	c->st.put_misses++;
	if (n > s) {
		c->st.bypasses++;
		err = be_put(p, objs, n, cpriv(c));
		c->st.fails += !!err;
		return err;
	}
	/* Flush the coldest (bottom) handles, keep about s/2 hot ones. */
	total = len + n;
	memcpy(&c->objs[len], objs, (size_t)n * sizeof(__u64));
	need = total - s;
	f = round_down(total - s / 2);
	if (f < need)
		f = round_up(need);
	if (f > total)
		f = total;
	err = be_put(p, c->objs, f, cpriv(c));
	if (err) {
		c->st.fails++;
		return err;
	}
	memmove(c->objs, &c->objs[f], (size_t)(total - f) * sizeof(__u64));
	*lenp = total - f;
	c->st.flushes++;
	c->st.objs_flushed += f;
	return 0;
}

int xp_cache_get_slow(struct xp_cache *c, __u64 *objs, __u32 n)
{
	struct xp_pool *p = c->pool;
	int err;

	if (!dbg(p))
		return cache_get(c, &c->len, objs, n);
	err = cache_get(c, &c->dlen, objs, n);
	if (!err)
		dbg_flip(p, objs, n, ST_FREE, ST_USED, "get:");
	return err;
}

int xp_cache_put_slow(struct xp_cache *c, const __u64 *objs, __u32 n)
{
	struct xp_pool *p = c->pool;
	int err;

	if (!dbg(p))
		return cache_put(c, &c->len, objs, n);
	err = dbg_flip(p, objs, n, ST_USED, ST_FREE, "put:");
	if (err)
		return err;
	err = cache_put(c, &c->dlen, objs, n);
	if (err)
		dbg_flip(p, objs, n, ST_FREE, ST_USED, "put undo:");
	return err;
}
