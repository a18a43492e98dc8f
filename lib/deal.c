// SPDX-License-Identifier: BSD-3-Clause
/*
 * The dealer's cold paths: creation, spills, top-ups and the deal itself.
 *
 * A get is a deal over the stacks of the channels the layout reaches; a stack
 * short of ceil(n / C) first pulls bulks from the cache, sorting each frame into
 * its stack. Pulled frames whose stack is full go back to the cache only once the
 * top-up is over: the cache is LIFO, and putting them back earlier would hand
 * the same frames out again on the next pull.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "log_internal.h"
#include "opts_internal.h"
#include "rand_internal.h"
#include "xpile/deal.h"

#define DEAL_DEFAULT_MAX_GET 256u
/* A top-up pulls at least this much by default: the cache's top is mostly what
 * full stacks spilled, so a small get must look deeper than 4 n to find the rest. */
#define DEAL_PULL_MIN 256u
#define DEAL_STACK_MIN 32u

/* Most frames a top-up for a get of @n pulls. */
static __u32 pull_limit(const struct xp_deal *d, __u32 n)
{
	if (d->pull_max)
		return d->pull_max;
	return 4 * n < DEAL_PULL_MIN ? DEAL_PULL_MIN : 4 * n;
}

/* Marks the channels frames of @l sit on; a channel no frame reaches (an aligned
 * layout at 64-byte interleave puts every header on one) is never waited for. */
static void find_present(struct xp_deal *d, const struct xp_layout *l)
{
	for (__u32 i = 0; i < l->nframes && d->npresent < d->nch; i++) {
		__u32 c = xp_deal_channel(d, xp_layout_frame(l, i));

		if (!(d->present >> c & 1)) {
			d->present |= 1ull << c;
			d->npresent++;
		}
	}
	for (__u32 c = 0, k = 0; c < d->nch; c++)
		if (d->present >> c & 1)
			d->order[k++] = (__u8)c;
}

int xp_deal_create(const struct xp_layout *l, struct xp_cache *cache,
		   const struct xp_deal_opts *opts, struct xp_deal **out)
{
	struct xp_deal_opts o;
	__u32 nch, need, limit, poolsz;
	struct xp_deal *d;

	if (!l || !cache || !out || !l->nframes) {
		xp_err("deal: NULL layout, cache or out pointer, or an empty layout\n");
		return -EINVAL;
	}
	*out = NULL;
	if (!XP_OPTS_LOAD_LOG("deal", &o, opts, xp_deal_opts))
		return -EINVAL;
	if (o.reserved_) {
		xp_err("deal: opts.reserved_ is set; zero the struct before setting fields\n");
		return -EINVAL;
	}
	nch = l->topo.channels * l->topo.ranks;
	if (!nch || nch > XP_DEAL_CHANNELS_MAX || !l->topo.interleave) {
		xp_err("deal: %u channels x ranks; a dealer keeps stacks for 1..%u\n", nch,
		       XP_DEAL_CHANNELS_MAX);
		return -EINVAL;
	}
	d = calloc(1, sizeof(*d));
	if (!d)
		return -ENOMEM;
	d->nch = nch;
	d->cache = cache;
	d->data_off = l->data_off;
	if (l->topo.interleave & (l->topo.interleave - 1))
		d->idiv = l->topo.interleave;
	else
		d->ishift = (__u32)__builtin_ctz(l->topo.interleave);
	d->chmask = nch & (nch - 1) ? 0 : nch - 1;
	d->chmagic = ~0ull / nch + 1;
	find_present(d, l);
	d->max_get = o.max_get ? o.max_get : DEAL_DEFAULT_MAX_GET;
	need = (d->max_get + d->npresent - 1) / d->npresent;
	d->cap = o.stack ? o.stack : 4 * need < DEAL_STACK_MIN ? DEAL_STACK_MIN : 4 * need;
	if (d->cap < need || d->cap < 2) {
		xp_err("deal: stacks of %u cannot hold a share of %u (max_get %u over %u "
		       "channels); raise opts.stack\n",
		       d->cap, need, d->max_get, d->npresent);
		free(d);
		return -EINVAL;
	}
	/* The surplus buffer holds whatever one top-up may pull. */
	d->pull_max = o.pull_max;
	d->rng = o.seed;
	poolsz = xp_pool_size(cache->pool);
	limit = o.pull_max == XP_DEAL_PULL_ALL ? poolsz : pull_limit(d, d->max_get);
	d->ovcap = (limit < poolsz ? limit : poolsz) + XP_PILE_BULK;
	d->over = calloc(d->ovcap, sizeof(*d->over));
	d->stk = calloc((size_t)nch * d->cap, sizeof(*d->stk));
	if (!d->over || !d->stk) {
		free(d->over);
		free(d->stk);
		free(d);
		return -ENOMEM;
	}
	*out = d;
	return 0;
}

int xp_deal_flush(struct xp_deal *d)
{
	int ret = 0;

	for (__u32 c = 0; c < d->nch; c++) {
		int err;

		if (!d->len[c])
			continue;
		err = xp_cache_put(d->cache, d->stk + (size_t)c * d->cap, d->len[c]);
		if (err) {
			ret = ret ? ret : err;
			continue;
		}
		d->count -= d->len[c];
		d->len[c] = 0;
	}
	return ret;
}

void xp_deal_destroy(struct xp_deal *d)
{
	if (!d)
		return;
	if (xp_deal_flush(d))
		xp_err("deal: %u frames the cache refused are dropped with the dealer\n", d->count);
	free(d->over);
	free(d->stk);
	free(d);
}

/* The coldest half goes: the top stays hot for the next deal. */
int xp_deal_spill(struct xp_deal *d, __u32 ch)
{
	__u64 *s = d->stk + (size_t)ch * d->cap;
	__u32 half = d->cap / 2;
	int err = xp_cache_put(d->cache, s, half);

	if (err) {
		d->st.fails++;
		return err;
	}
	memmove(s, s + half, (size_t)(d->cap - half) * sizeof(*s));
	d->len[ch] -= half;
	d->count -= half;
	d->st.spilled += half;
	return 0;
}

/* Present channels holding fewer than @need. */
static __u32 count_short(const struct xp_deal *d, __u32 need)
{
	__u32 nshort = 0;

	for (__u64 m = d->present; m; m &= m - 1)
		nshort += d->len[__builtin_ctzll(m)] < need;
	return nshort;
}

/* Room for one more bulk of surplus. Past the pull budget only a get that would
 * otherwise fail asks, and that is rare enough to pay for a realloc. */
static bool over_room(struct xp_deal *d, __u32 nov)
{
	__u32 poolsz = xp_pool_size(d->cache->pool) + XP_PILE_BULK, cap;
	__u64 *p;

	if (nov + XP_PILE_BULK <= d->ovcap)
		return true;
	cap = d->ovcap * 2 < poolsz ? d->ovcap * 2 : poolsz;
	if (cap <= d->ovcap || !(p = realloc(d->over, (size_t)cap * sizeof(*p))))
		return false;
	d->over = p;
	d->ovcap = cap;
	return true;
}

/* Pulls bulks from the cache until every channel holds @need (within the pull
 * budget) and the dealer holds @n (until the pool runs dry). Returns the channels
 * still short. */
static __u32 top_up(struct xp_deal *d, __u32 n, __u32 need, __u32 nshort)
{
	__u32 limit = pull_limit(d, n), pulled = 0, nov = 0;
	__u64 buf[XP_PILE_BULK];

	d->st.topups++;
	while ((d->count < n || (nshort && pulled < limit)) && over_room(d, nov)) {
		__u32 k = XP_PILE_BULK;

		while (k && xp_cache_get(d->cache, buf, k))
			k /= 2;
		if (!k)
			break;
		pulled += k;
		for (__u32 i = 0; i < k; i++) {
			__u32 c = xp_deal_channel(d, buf[i]);

			if (d->len[c] == d->cap) {
				d->over[nov++] = buf[i];
				continue;
			}
			d->stk[(size_t)c * d->cap + d->len[c]++] = buf[i];
			d->count++;
			nshort -= d->len[c] == need && (d->present >> c & 1);
		}
	}
	d->st.pulled += pulled;
	if (nov) {
		/* Taken from the cache a moment ago: only a full pool could refuse them. */
		if (xp_cache_put(d->cache, d->over, nov) &&
		    xp_pool_put(d->cache->pool, d->over, nov))
			xp_err("deal: the pool refused %u frames the cache had just given\n", nov);
		d->st.spilled += nov;
	}
	return nshort;
}

/* Pops channel @c's frame at a random depth: swap it to the top, then pop. */
static __u64 pop_random(struct xp_deal *d, __u32 c)
{
	__u64 *stk = d->stk + (size_t)c * d->cap;
	__u32 top = --d->len[c];
	__u32 j = xp_rand_below(&d->rng, top + 1);
	__u64 h = stk[j];

	stk[j] = stk[top];
	return h;
}

/* Round-robin over the present channels from d->next, skipping empty stacks. */
static void deal(struct xp_deal *d, __u64 *out, __u32 n)
{
	__u32 k = d->next, i = 0;

	while (i < n) {
		__u32 c = d->order[k];

		if (d->len[c])
			out[i++] = d->rng ? pop_random(d, c) :
					    d->stk[(size_t)c * d->cap + --d->len[c]];
		if (++k == d->npresent)
			k = 0;
	}
	d->next = k;
	d->count -= n;
}

static int get_part(struct xp_deal *d, __u64 *out, __u32 n)
{
	__u32 need = (n + d->npresent - 1) / d->npresent, nshort = count_short(d, need);
	__u32 before[XP_DEAL_CHANNELS_MAX], lo = n / d->npresent;

	if (nshort || d->count < n)
		nshort = top_up(d, n, need, nshort);
	if (d->count < n) {
		d->st.fails++;
		return -ENOBUFS;
	}
	if (nshort)
		memcpy(before, d->len, d->nch * sizeof(before[0]));
	deal(d, out, n);
	d->st.gets++;
	/* Even: every channel dealt floor or ceil of n / C (sure when none was short). */
	if (nshort)
		for (__u64 m = d->present; m; m &= m - 1) {
			__u32 c = (__u32)__builtin_ctzll(m);

			if (before[c] - d->len[c] < lo || before[c] - d->len[c] > need) {
				d->st.uneven++;
				break;
			}
		}
	return 0;
}

int xp_deal_get(struct xp_deal *d, __u64 *out, __u32 n)
{
	for (__u32 done = 0; done < n;) {
		__u32 k = n - done < d->max_get ? n - done : d->max_get;
		int err = get_part(d, out + done, k);

		if (err) {
			/* All or nothing: the parts already dealt go back. */
			if (done && xp_deal_put(d, out, done))
				xp_err("deal: %u frames could not be taken back\n", done);
			return err;
		}
		done += k;
	}
	return 0;
}
