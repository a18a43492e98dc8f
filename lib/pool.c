// SPDX-License-Identifier: BSD-3-Clause
/*
 * The pool's front: creation and the backend choice, the uncached get and put, the
 * debug mode's state byte per handle, and the audit. The caches are in
 * lib/pool_cache.c, the backends in lib/pool_pile.c and lib/pool_ring.c; see
 * xpile/pool.h for the contract and docs/pile.md for the design.
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/sysinfo.h>

#include "xpile/pool.h"
#include "log_internal.h"
#include "opts_internal.h"
#include "pool_internal.h"

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

int xp_pool_dbg_flip(struct xp_pool *p, const __u64 *objs, __u32 n, __u8 from, __u8 to,
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

/* ---- pool ---- */

static int cmp_u64(const void *a, const void *b)
{
	__u64 x = *(const __u64 *)a, y = *(const __u64 *)b;

	return x < y ? -1 : x > y;
}

int xp_pool_create(const __u64 *handles, __u32 n, const struct xp_pool_opts *opts,
		   struct xp_pool **out)
{
	struct xp_pool_opts o;
	struct xp_pool *p;
	int err;

	if (!out || (!handles && n)) {
		xp_err("pool: NULL handles or out pointer\n");
		return -EINVAL;
	}
	*out = NULL;
	if (!XP_OPTS_LOAD_LOG("pool", &o, opts, xp_pool_opts))
		return -EINVAL;
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
		err = xp_mpmc_create(n, &p->ring);
		if (!err)
			err = xp_mpmc_enqueue(p->ring, handles, n);
	} else {
		err = xp_pile_init(&p->pile, handles, n, o.max_caches, o.stripes);
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
	xp_mpmc_destroy(p->ring);
	free(p->pile.nodes);
	free(p->pile.objs);
	free(p->pile.sp);
	free(p->pile.bidx);
	free(p->sorted);
	free(p->state);
	pthread_mutex_destroy(&p->lock);
	free(p);
}

int xp_pool_put_refused(const struct xp_pool *p, __u32 n, int err)
{
	xp_err("pool: a put of %u handles refused: the %s would hold more than N = %u "
	       "(more puts than gets: a double free or a foreign handle; XP_POOL_F_DEBUG "
	       "names it)\n",
	       n, xp_pool_backend_name(p->backend), p->n);
	return err;
}

int xp_pool_get(struct xp_pool *p, __u64 *objs, __u32 n)
{
	int err = be_get(p, objs, n, NULL);

	if (!err && dbg(p))
		xp_pool_dbg_flip(p, objs, n, ST_FREE, ST_USED, "get:");
	return err;
}

int xp_pool_put(struct xp_pool *p, const __u64 *objs, __u32 n)
{
	int err;

	if (dbg(p) && (err = xp_pool_dbg_flip(p, objs, n, ST_USED, ST_FREE, "put:")))
		return err;
	err = be_put(p, objs, n, NULL);
	if (err && dbg(p))
		xp_pool_dbg_flip(p, objs, n, ST_FREE, ST_USED, "put undo:");
	return err;
}

__u32 xp_pool_size(const struct xp_pool *p)
{
	return p->n;
}

__u32 xp_pool_avail(const struct xp_pool *p)
{
	return p->backend == XP_POOL_RING ? xp_mpmc_count(p->ring) : xp_pile_avail(&p->pile);
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
			audit_add(a, nd_objs(pl, x), B, "the pile");
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
		__u32 cnt = xp_mpmc_count(p->ring);

		for (__u32 i = 0; i < cnt && !a.err; i++) {
			__u64 h = xp_mpmc_peek(p->ring, i);

			audit_add(&a, &h, 1, "the ring");
		}
	} else {
		struct pile *pl = &p->pile;
		__u64 o = __atomic_load_n(&pl->odd.head, __ATOMIC_ACQUIRE);

		for (__u32 s = 0; s < pl->nstripes; s++) {
			const struct bank *b = &pl->sp[s].bank;

			nodes += audit_stack(&a, &pl->sp[s].full, true);
			nodes += audit_stack(&a, &pl->sp[s].free, false);
			if (b->ftop > pl->nnodes || b->etop > pl->ecap ||
			    bank_nfull(b) != pl->nnodes - b->ftop) {
				xp_err("audit: stripe %u's bank is malformed\n", s);
				a.err = -EUCLEAN;
				break;
			}
			/* A bank's full nodes hold B handles whatever their count field says. */
			for (__u32 i = b->ftop; i < pl->nnodes && !a.err; i++) {
				if (b->full[i] >= pl->nnodes) {
					xp_err("audit: stripe %u's bank holds node %u\n", s,
					       b->full[i]);
					a.err = -EUCLEAN;
				} else {
					audit_add(&a, nd_objs(pl, b->full[i]), B, "a bank");
				}
			}
			nodes += pl->nnodes - b->ftop + pl->ecap - b->etop;
		}
		if (o && !a.err) {
			struct node *O = nd(pl, (__u32)(o - 1));

			if (!O->count || O->count >= B) {
				xp_err("audit: odd node holds %u handles\n", O->count);
				a.err = -EUCLEAN;
			}
			audit_add(&a, nd_objs(pl, (__u32)(o - 1)), O->count, "the odd node");
			nodes++;
		}
	}
	free_objs = a.count;
	if (!a.err && p->backend == XP_POOL_PILE) {
		__u64 room = 0;

		for (__u32 s = 0; s < p->pile.nstripes; s++)
			room += __atomic_load_n(&p->pile.sp[s].room, __ATOMIC_RELAXED);
		if (room + free_objs != p->n) {
			xp_err("audit: room %llu + %u free != N = %u (capacity count broken)\n",
			       (unsigned long long)room, free_objs, p->n);
			a.err = -EUCLEAN;
		}
	}
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
