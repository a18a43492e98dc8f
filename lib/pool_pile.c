// SPDX-License-Identifier: BSD-3-Clause
/*
 * The pile backend of the pool. See xpile/pool.h for the contract and docs/pile.md for the
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
 * - In front of the stacks, each stripe has a bank (struct bank): its full and its
 *   empty nodes as arrays of node indexes, taken by one exchange and never waited
 *   for. A whole-bulk get or put (every cache refill and flush) first tries home's
 *   bank: it moves a block of k indexes between the two arrays and copies the
 *   handles, one memcpy per run of consecutive nodes, without reading or writing a
 *   node header. A busy bank sends the caller to the stacks, which are lock-free, so
 *   no call ever waits for another. A bank keeps at most ecap empty nodes, budgeted
 *   in the node count, so the proof that nodes never run out is unchanged.
 */
#include <errno.h>
#include <sched.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "pool_pile.h"

/* Nodes beyond need for partial nodes held in flight (<= 3 per concurrent op). */
#define SPARE_NODES 96u
/* Empty nodes a bank may keep beyond its share of the full ones (4 flushes of 1024). */
#define BANK_EMPTY_EXTRA 128u
/* Yields before a put that finds no empty node concludes the pool is over capacity. */
#define NODE_RETRIES 1000

/* ---- node stacks ---- */

static inline __u64 mkhead(__u32 idx, __u64 old)
{
	return ((old >> 32) + 1) << 32 | idx;
}

/* The i-th stripe from @s, home first (no division: node_alloc runs it per flush). */
static inline __u32 stripe_nth(const struct pile *pl, __u32 s, __u32 i)
{
	return s + i < pl->nstripes ? s + i : s + i - pl->nstripes;
}

/* Takes bank @b if nobody has it; never waits (the caller has a lock-free way). */
static inline bool bank_take(struct bank *b)
{
	return !__atomic_load_n(&b->busy, __ATOMIC_RELAXED) &&
	       !__atomic_exchange_n(&b->busy, 1, __ATOMIC_ACQUIRE);
}

/* Publishes the full count for avail (a new tag: see xp_pile_avail) and lets go. */
static inline void bank_drop(const struct pile *pl, struct bank *b)
{
	__u64 v = __atomic_load_n(&b->ver, __ATOMIC_RELAXED);

	__atomic_store_n(&b->ver, ((v >> 32) + 1) << 32 | (pl->nnodes - b->ftop), __ATOMIC_RELEASE);
	__atomic_store_n(&b->busy, 0, __ATOMIC_RELEASE);
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
	__u32 contig; /* the top's contig, kept here so chain_add does not reload it */
};

static void chain_begin(const struct pile *pl, struct chain *c, const struct lfs *s)
{
	__u32 h = (__u32)__atomic_load_n(&s->head, __ATOMIC_RELAXED);

	*c = (struct chain){ .top = NIL, .bottom = NIL, .h = h, .hd = nd_depth(pl, h) };
}

static inline __attribute__((always_inline)) void chain_add(struct pile *pl, struct chain *c,
							    __u32 x)
{
	struct node *X = nd(pl, x);

	if (c->bottom == NIL)
		c->bottom = x;
	ST(X->next, c->top == NIL ? c->h : c->top);
	ST(X->rem, ++c->k);
	ST(X->tail, c->bottom);
	ST(X->after, c->h);
	ST(X->depth, c->hd + c->k);
	c->contig =
		(c->top == NIL) | ((c->top == x + 1) & c->contig); /* no branch: data-dependent */
	ST(X->contig, c->contig);
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

void xp_pile_release(struct pile *pl, __u32 s, struct stash *st, const __u32 *idx, __u32 k)
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

/* The handle lines of node @x (a bank reads or writes nothing else of a node). */
static inline void prefetch_objs(const struct pile *pl, __u32 x, int rw)
{
	const char *o = (const char *)nd_objs(pl, x);

	for (unsigned int line = 0; line < B * sizeof(__u64); line += 64) {
		if (rw)
			__builtin_prefetch(o + line, 1);
		else
			__builtin_prefetch(o + line, 0);
	}
}

static void prefetch_node(const struct pile *pl, __u32 x, int rw)
{
	prefetch_objs(pl, x, rw);
	if (rw)
		__builtin_prefetch(nd(pl, x), 1);
	else
		__builtin_prefetch(nd(pl, x), 0);
}

static inline __attribute__((always_inline)) __u32 cursor_next(const struct pile *pl,
							       struct cursor *c)
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

	while (s->extra) {
		for (i = 0; i < STASH_MAX && s->extra; i++, s->extra--)
			idx[i] = cursor_next(pl, &s->chain);
		xp_pile_release(pl, sp, st, idx, i);
	}
}

/* Gives back every node of @s, none used: the stash's to the stash, the rest released. */
static void node_src_undo(struct pile *pl, __u32 sp, struct stash *st, struct node_src *s)
{
	if (st)
		st->n += s->nstash; /* the stash slots still hold them */
	s->extra = s->chain.left;
	node_src_done(pl, sp, st, s);
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
	/* Then the banks' empty nodes, home's too (those not busy). */
	for (__u32 i = 0; i < pl->nstripes && moved < want; i++) {
		struct bank *b = &pl->sp[stripe_nth(pl, s, i)].bank;

		if (!bank_take(b))
			continue;
		for (; b->etop < pl->ecap && moved < want; moved++)
			chain_add(pl, &c, b->empty[b->etop++]);
		bank_drop(pl, b);
	}
	if (c.k)
		lfs_push(pl, &pl->sp[s].free, &c);
	return moved;
}

/*
 * Empty nodes for a put of @n handles to stripe @s: the stash, then home's free stack,
 * then others'. It runs before the put's room check, so before it waits for nodes it
 * refuses a put the pile has no room for (-ENOSPC, as the room check would).
 */
static int node_alloc(struct pile *pl, __u32 s, struct stash *st, __u32 k, __u32 n,
		      struct node_src *out)
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
		if (++tries > NODE_RETRIES || (__u64)xp_pile_avail(pl) + n > pl->n) {
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

/* ---- the banks: a stripe's nodes as arrays of indexes (see struct bank) ---- */

/*
 * The end of the run of consecutive node indexes in @blk[] that starts at @i (< @k).
 * A block pushed in order comes back in order, so most transfers are a few runs, and
 * the handles of a run are one memcpy, copied like the slots of a ring.
 */
static inline __u32 blk_run(const __u32 *blk, __u32 i, __u32 k)
{
	while (++i < k && blk[i] == blk[i - 1] + 1)
		;
	return i;
}

/* Copies the handles of the @k nodes @blk[] to @dst, prefetching each next run. */
static inline __attribute__((always_inline)) void blk_out(const struct pile *pl, __u64 *dst,
							  const __u32 *blk, __u32 k)
{
	for (__u32 i = 0, j; i < k; i = j) {
		j = blk_run(blk, i, k);
		if (j < k)
			prefetch_objs(pl, blk[j], 0);
		memcpy(dst + (size_t)i * B, nd_objs(pl, blk[i]),
		       (size_t)(j - i) * B * sizeof(__u64));
	}
}

/* Copies @src into the @k nodes @blk[], prefetching each next run for write. */
static inline __attribute__((always_inline)) void blk_in(const struct pile *pl, const __u64 *src,
							 const __u32 *blk, __u32 k)
{
	for (__u32 i = 0, j; i < k; i = j) {
		j = blk_run(blk, i, k);
		if (j < k)
			prefetch_objs(pl, blk[j], 1);
		memcpy(nd_objs(pl, blk[i]), src + (size_t)i * B,
		       (size_t)(j - i) * B * sizeof(__u64));
	}
}

/*
 * Takes up to @kmax full nodes (at least @kmin, else none) from stripe @t's bank into
 * @dst; their nodes go to the same bank's empty array. Returns the nodes taken: 0
 * also when the bank is busy.
 */
static __u32 bank_get(struct pile *pl, __u32 t, __u64 *dst, __u32 kmax, __u32 kmin)
{
	struct bank *b = &pl->sp[t].bank;
	__u32 k, keep;

	if (bank_nfull(b) < kmin || !bank_take(b))
		return 0;
	k = pl->nnodes - b->ftop;
	if (k > kmax)
		k = kmax;
	if (k < kmin || !k) {
		bank_drop(pl, b);
		return 0;
	}
	blk_out(pl, dst, &b->full[b->ftop], k);
	/* The emptied nodes stay in the bank up to its cap, the rest go to the free stack. */
	keep = k < b->etop ? k : b->etop;
	b->etop -= keep;
	memcpy(&b->empty[b->etop], &b->full[b->ftop], keep * sizeof(__u32));
	b->ftop += k;
	if (keep < k)
		xp_pile_release(pl, t, NULL, &b->full[b->ftop - (k - keep)], k - keep);
	bank_drop(pl, b);
	return k;
}

/*
 * Home bank @b (taken) has fewer than @need (<= ecap) empty nodes: moves some in from
 * the stash, the other banks (those not busy) and the free stacks, never beyond its
 * cap (so the banks never hold more empty nodes than the node count budgets).
 */
static void bank_fetch_empty(struct pile *pl, __u32 s, struct bank *b, struct stash *st, __u32 need)
{
	__u32 have = pl->ecap - b->etop, i, got;

	while (st && st->n && have < need) {
		b->empty[--b->etop] = st->idx[--st->n];
		have++;
	}
	for (i = 1; i < pl->nstripes && have < need; i++) {
		struct bank *o = &pl->sp[stripe_nth(pl, s, i)].bank;
		__u32 m;

		if (!bank_take(o))
			continue;
		m = pl->ecap - o->etop;
		if (m > b->etop)
			m = b->etop;
		b->etop -= m;
		memcpy(&b->empty[b->etop], &o->empty[o->etop], m * sizeof(__u32));
		o->etop += m;
		have += m;
		bank_drop(pl, o);
	}
	for (i = 0; i < pl->nstripes && have < need; i++) {
		struct lfs *f = &pl->sp[stripe_nth(pl, s, i)].free;
		__u32 d = lfs_depth(pl, f);
		struct cursor cur = { .rw = 1 };

		if (d > need - have + STASH_MAX)
			d = need - have + STASH_MAX;
		if (d > b->etop)
			d = b->etop;
		if (!d || lfs_pop(pl, f, d, 0, &cur.x, &got))
			continue;
		/* In the order popped: a contiguous chain becomes one run. */
		b->etop -= got;
		cur.left = got;
		for (__u32 j = 0; j < got; j++)
			b->empty[b->etop + j] = cursor_next(pl, &cur);
		have += got;
	}
}

/*
 * Puts @k full bulks from @src into home bank @s: false (nothing done) when it is busy
 * or no empty nodes are to be had without waiting.
 */
static bool bank_put(struct pile *pl, __u32 s, const __u64 *src, __u32 k, struct stash *st)
{
	struct bank *b = &pl->sp[s].bank;

	if (k > pl->ecap || !bank_take(b))
		return false;
	if (pl->ecap - b->etop < k)
		bank_fetch_empty(pl, s, b, st, k);
	if (pl->ecap - b->etop < k) {
		bank_drop(pl, b);
		return false;
	}
	blk_in(pl, src, &b->empty[b->etop], k);
	b->ftop -= k;
	memcpy(&b->full[b->ftop], &b->empty[b->etop], k * sizeof(__u32));
	b->etop += k;
	bank_drop(pl, b);
	return true;
}

/* Moves bank @t's top full node onto @t's full stack (for a get's remainder). */
static bool bank_spill(struct pile *pl, __u32 t)
{
	struct bank *b = &pl->sp[t].bank;
	__u32 x;

	if (!bank_nfull(b) || !bank_take(b))
		return false;
	if (b->ftop == pl->nnodes) {
		bank_drop(pl, b);
		return false;
	}
	x = b->full[b->ftop++];
	bank_drop(pl, b);
	ST(nd(pl, x)->count, B);
	push_one(pl, t, x);
	return true;
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

			memcpy(&nd_objs(pl, o)[co], &nd_objs(pl, x)[cx - mv], mv * sizeof(__u64));
			ST(O->count, B);
			push_one(pl, s, o);
			cx -= mv;
			ST(X->count, cx);
			if (!cx) {
				xp_pile_release(pl, s, st, &x, 1);
				return;
			}
		} else {
			memcpy(&nd_objs(pl, o)[co], nd_objs(pl, x), cx * sizeof(__u64));
			ST(O->count, co + cx);
			xp_pile_release(pl, s, st, &x, 1);
			x = o;
		}
	}
}

/* ---- room: the capacity check ---- */

static bool room_try(__u64 *room, __u32 n)
{
	__u64 r = LD(*room);

	while (r >= n)
		if (__atomic_compare_exchange_n(room, &r, r - n, true, __ATOMIC_RELAXED,
						__ATOMIC_RELAXED))
			return true;
	return false;
}

/*
 * Home is short of room: move all the other stripes' room home, under a lock so that
 * no other gatherer holds room in transit (which could make a put fail that fits).
 * Refuses only when the handles in the pile at one instant (xp_pile_avail's double
 * collect) plus @n exceed N: a put of handles that are out of the pool never
 * qualifies, so it waits for the room held by calls in flight (a get credits room
 * after its pop) instead, bounded like node_alloc.
 */
static int room_gather(struct pile *pl, __u32 s, __u32 n)
{
	int err = 0, tries = 0;

	while (__atomic_exchange_n(&pl->room_lock, 1, __ATOMIC_ACQUIRE))
		sched_yield();
	for (;;) {
		__u64 got = 0;

		for (__u32 i = 1; i < pl->nstripes; i++)
			got += __atomic_exchange_n(&pl->sp[stripe_nth(pl, s, i)].room, 0,
						   __ATOMIC_RELAXED);
		if (got)
			__atomic_fetch_add(&pl->sp[s].room, got, __ATOMIC_RELAXED);
		if (room_try(&pl->sp[s].room, n))
			break;
		if ((__u64)xp_pile_avail(pl) + n > pl->n || ++tries > NODE_RETRIES) {
			err = -ENOSPC;
			break;
		}
		sched_yield();
	}
	__atomic_store_n(&pl->room_lock, 0, __ATOMIC_RELEASE);
	return err;
}

/* One compare and one CAS on the home stripe's own line: the flush's capacity check. */
static int room_take(struct pile *pl, __u32 s, __u32 n)
{
	return room_try(&pl->sp[s].room, n) ? 0 : room_gather(pl, s, n);
}

static void room_give(struct pile *pl, __u32 s, __u32 n)
{
	__atomic_fetch_add(&pl->sp[s].room, n, __ATOMIC_RELAXED);
}

/* ---- pile backend ---- */

/*
 * Takes @n handles from stripe @s (and the odd node): all or nothing. With @give !=
 * NIL it gives their room back to stripe @give as soon as they left the shared
 * places, before the copy: the add then follows the pop's CAS with no stores of its
 * own to drain (measured: see docs/pile.md, "Where the miss path's cycles go").
 */
static int stripe_get(struct pile *pl, __u32 s, __u64 *dst, __u32 n, struct stash *st, __u32 give)
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
	if (give != NIL)
		room_give(pl, give, n);
	cur.left = k;
	for (i = 0; i < q; i++) {
		__u32 x = cursor_next(pl, &cur);

		memcpy(dst + (size_t)i * B, nd_objs(pl, x), B * sizeof(__u64));
		emptied[ne++] = x;
		if (ne == 64) {
			xp_pile_release(pl, s, st, emptied, ne);
			ne = 0;
		}
	}
	dst += (size_t)q * B;
	if (r && r <= c) {
		struct node *O = nd(pl, o);

		ST(O->count, c - r);
		memcpy(dst, &nd_objs(pl, o)[c - r], r * sizeof(__u64));
		if (LD(O->count))
			odd_give(pl, st, s, o);
		else
			emptied[ne++] = o;
	} else if (r) {
		__u32 l = cursor_next(pl, &cur), from_l = r - c;
		struct node *L = nd(pl, l);

		if (c) {
			memcpy(dst, nd_objs(pl, o), c * sizeof(__u64));
			emptied[ne++] = o;
		}
		ST(L->count, B - from_l);
		memcpy(dst + c, &nd_objs(pl, l)[B - from_l], from_l * sizeof(__u64));
		odd_give(pl, st, s, l);
	}
	if (ne)
		xp_pile_release(pl, s, st, emptied, ne);
	return 0;
}

/*
 * Returns @n handles to stripe @s; with @take it takes their room first, right after
 * the empty nodes (so the room CAS follows node_alloc's pop with nothing to drain),
 * and before any handle lands: a refused put gives the nodes back untouched.
 */
static int pile_put(struct pile *pl, __u32 s, const __u64 *src, __u32 n, struct stash *st,
		    bool take)
{
	__u32 q = n / B, r = n % B, spare = NIL, o;
	struct chain c;
	struct node_src ns;
	int err;

	if (!n)
		return 0;
	err = node_alloc(pl, s, st, q + (r != 0), n, &ns);
	if (err)
		return err;
	if (take) {
		err = room_take(pl, s, n);
		if (err) {
			node_src_undo(pl, s, st, &ns);
			return err;
		}
	}
	/* Fill bottom-up: the first (coldest) handles sink deepest. */
	chain_begin(pl, &c, &pl->sp[s].full);
	for (__u32 i = 0; i < q; i++) {
		__u32 x = node_src_next(pl, &ns);
		struct node *X = nd(pl, x);

		memcpy(nd_objs(pl, x), src + (size_t)i * B, B * sizeof(__u64));
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

			memcpy(&nd_objs(pl, o)[co], src, mv * sizeof(__u64));
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
		memcpy(nd_objs(pl, spare), src, r * sizeof(__u64));
		odd_give(pl, st, s, spare);
	} else if (spare != NIL) {
		xp_pile_release(pl, s, st, &spare, 1);
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
	int err = stripe_get(pl, s, dst, n, st, s);

	/* Even with one stripe: home's bank, not its stack, holds most nodes. */
	if (!err)
		return err;
	for (i = 0; i < pl->nstripes; i++) {
		t = stripe_nth(pl, s, i);
		/*
		 * The bank, then the stack. A pop that loses a race re-reads the depth; a
		 * stripe whose bank is empty or busy and whose stack is empty ends it.
		 */
		while ((k = (n - got) / B)) {
			__u32 m = bank_get(pl, t, dst + got, k, 1);

			if (m) {
				got += m * B;
				continue;
			}
			d = lfs_depth(pl, &pl->sp[t].full);
			if (!d)
				break;
			if (!stripe_get(pl, t, dst + got, (k < d ? k : d) * B, st, NIL))
				got += (k < d ? k : d) * B;
		}
	}
	/* The remainder: the odd node, or one more node (from a bank: through its stack). */
	for (i = 0; got < n && n - got < B && i < pl->nstripes; i++) {
		t = stripe_nth(pl, s, i);
		if (!stripe_get(pl, t, dst + got, n - got, st, NIL) ||
		    (bank_spill(pl, t) && !stripe_get(pl, t, dst + got, n - got, st, NIL)))
			got = n;
	}
	if (got == n) {
		room_give(pl, s, n);
		return 0;
	}
	/* They were free a moment ago, so nodes for them exist once calls return theirs. */
	while (got && pile_put(pl, s, dst, got, st, false))
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
__u32 xp_pile_avail(const struct pile *pl)
{
	__u64 h[XP_PILE_STRIPES_MAX], v[XP_PILE_STRIPES_MAX], o;
	__u32 n, s;

	for (;;) {
		for (n = 0, s = 0; s < pl->nstripes; s++) {
			h[s] = __atomic_load_n(&pl->sp[s].full.head, __ATOMIC_ACQUIRE);
			v[s] = __atomic_load_n(&pl->sp[s].bank.ver, __ATOMIC_ACQUIRE);
			n += (nd_depth(pl, (__u32)h[s]) + (__u32)v[s]) * B;
		}
		o = __atomic_load_n(&pl->odd.head, __ATOMIC_ACQUIRE);
		n += o ? LD(nd(pl, (__u32)(o - 1))->count) : 0;
		/* nstripes is fixed at create: h[0..nstripes) was filled above */
		for (s = 0; s < pl->nstripes; s++)
			/* NOLINTNEXTLINE(clang-analyzer-core.UndefinedBinaryOperatorResult) */
			if (__atomic_load_n(&pl->sp[s].full.head, __ATOMIC_ACQUIRE) != h[s] ||
			    /* NOLINTNEXTLINE(clang-analyzer-core.UndefinedBinaryOperatorResult) */
			    __atomic_load_n(&pl->sp[s].bank.ver, __ATOMIC_ACQUIRE) != v[s])
				break;
		if (s == pl->nstripes && __atomic_load_n(&pl->odd.head, __ATOMIC_ACQUIRE) == o)
			return n;
	}
}

/*
 * Room is taken before the handles land and given back after they left, so the
 * handles in the pile never exceed N - (sum of room) <= N, whatever runs at once.
 */
int xp_pile_put(struct pile *pl, __u32 s, const __u64 *src, __u32 n, struct stash *st)
{
	int err;

	if (!n || n % B)
		return pile_put(pl, s, src, n, st, true);
	/* Whole bulks (every cache flush): room first, then home's bank if free. */
	err = room_take(pl, s, n);
	if (err || bank_put(pl, s, src, n / B, st))
		return err;
	err = pile_put(pl, s, src, n, st, false);
	if (err)
		room_give(pl, s, n);
	return err;
}

/* Room comes back as soon as the handles left the bank or the stacks (see stripe_get). */
int xp_pile_get(struct pile *pl, __u32 s, __u64 *dst, __u32 n, struct stash *st)
{
	/* Whole bulks (every cache refill) that home's bank holds: its fast path. */
	if (n && !(n % B) && bank_get(pl, s, dst, n / B, n / B)) {
		room_give(pl, s, n);
		return 0;
	}
	return pile_get(pl, s, dst, n, st);
}

int xp_pile_init(struct pile *pl, const __u64 *handles, __u32 n, __u32 max_caches, __u32 nstripes)
{
	__u32 q = n / B, r = n % B, f = q + (r != 0), i, s;
	struct chain free;

	/*
	 * Each bank keeps up to twice its share of the nodes empty (on 2 stripes: all of
	 * them, so one core can drain the pool and fill it again without the free stacks),
	 * plus a few flushes' worth; nnodes budgets them all (docs/pile.md, "The bank").
	 */
	pl->ecap = (2 * q + nstripes - 1) / nstripes;
	pl->ecap = (pl->ecap < q ? pl->ecap : q) + BANK_EMPTY_EXTRA;
	pl->nnodes = q + 1 + SPARE_NODES + max_caches * STASH_MAX + nstripes * pl->ecap;
	pl->nstripes = nstripes;
	pl->n = n;
	pl->room_lock = 0;
	if (posix_memalign((void **)&pl->nodes, 64, (size_t)pl->nnodes * sizeof(struct node)) ||
	    posix_memalign((void **)&pl->objs, 64, (size_t)pl->nnodes * sizeof(*pl->objs)) ||
	    posix_memalign((void **)&pl->sp, 64, nstripes * sizeof(struct stripe)) ||
	    !(pl->bidx = malloc((size_t)nstripes * (pl->nnodes + pl->ecap) * sizeof(__u32))))
		return -ENOMEM;
	memset(pl->nodes, 0, (size_t)pl->nnodes * sizeof(struct node));
	for (s = 0; s < nstripes; s++) {
		struct bank *b = &pl->sp[s].bank;

		pl->sp[s].full.head = pl->sp[s].free.head = NIL;
		pl->sp[s].room = 0; /* full: no room anywhere */
		*b = (struct bank){ .ftop = pl->nnodes, .etop = pl->ecap };
		b->full = pl->bidx + (size_t)s * (pl->nnodes + pl->ecap);
		b->empty = b->full + pl->nnodes;
	}
	pl->odd.head = 0;
	chain_begin(pl, &free, &pl->sp[0].free);
	/*
	 * Node i holds handles[32i..32i+31]; stripe s's bank gets nodes [q*s/S, q*(s+1)/S)
	 * in order, lowest on top, so stripe 0 (uncached calls) hands out the first
	 * handles first and a larger get continues into stripe 1, 2, ... The empty nodes
	 * start on stripe 0's free stack; banks take them from there as they need them.
	 */
	for (s = nstripes; s-- > 0;) {
		struct bank *b = &pl->sp[s].bank;

		for (i = (__u32)((__u64)q * (s + 1) / nstripes); i-- > (__u64)q * s / nstripes;) {
			memcpy(nd_objs(pl, i), handles + (size_t)i * B, B * sizeof(__u64));
			ST(nd(pl, i)->count, B);
			b->full[--b->ftop] = i;
		}
		b->ver = pl->nnodes - b->ftop;
	}
	if (r) {
		memcpy(nd_objs(pl, q), handles + (size_t)q * B, r * sizeof(__u64));
		ST(nd(pl, q)->count, r);
		pl->odd.head = (__u64)q + 1;
	}
	for (i = pl->nnodes; i-- > f;)
		chain_add(pl, &free, i);
	lfs_push(pl, &pl->sp[0].free, &free);
	return 0;
}
