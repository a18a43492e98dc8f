// SPDX-License-Identifier: BSD-3-Clause
/*
 * The pool's per-thread caches: LIFO arrays whose hit paths are inline in
 * xpile/pool.h; here are their creation, flush and the slow paths (refill, flush,
 * bypass), the same for both backends. See docs/pile.md, "Caches".
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "xpile/pool.h"
#include "log_internal.h"
#include "pool_internal.h"

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
	cpriv(c)->last = XFER_NONE; /* idle: the next transfer starts from s/2 again */
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
		xp_pile_release(&p->pile, cp->home, NULL, cp->stash.idx, cp->stash.n);
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
	/*
	 * Refill to about s/2 after serving n, in whole bulks when they fit in s; a
	 * second refill in a row (a core that only allocates) fills to s - n instead,
	 * so that it moves about twice as much per transfer (docs/pile.md, "Transfer
	 * sizes"): still room for a put of n before a flush, never above s.
	 */
	need = n - len;
	want = round_down(cpriv(c)->last == XFER_REFILL ? s - len : need + s / 2);
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
	cpriv(c)->last = XFER_REFILL;
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
	/*
	 * Flush the coldest (bottom) handles, keep about s/2 hot ones; a second flush
	 * in a row (a core that only frees) keeps about n, enough for a get of n.
	 */
	total = len + n;
	memcpy(&c->objs[len], objs, (size_t)n * sizeof(__u64));
	need = total - s;
	f = round_down(cpriv(c)->last == XFER_FLUSH ? total - n : total - s / 2);
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
	cpriv(c)->last = XFER_FLUSH;
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
		xp_pool_dbg_flip(p, objs, n, ST_FREE, ST_USED, "get:");
	return err;
}

int xp_cache_put_slow(struct xp_cache *c, const __u64 *objs, __u32 n)
{
	struct xp_pool *p = c->pool;
	int err;

	if (!dbg(p))
		return cache_put(c, &c->len, objs, n);
	err = xp_pool_dbg_flip(p, objs, n, ST_USED, ST_FREE, "put:");
	if (err)
		return err;
	err = cache_put(c, &c->dlen, objs, n);
	if (err)
		xp_pool_dbg_flip(p, objs, n, ST_FREE, ST_USED, "put undo:");
	return err;
}
