/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The dealer: a per-core front of a pile cache that makes every refill cover the
 * memory channels evenly.
 *
 * xp_layout_disperse() orders a refill, but which frames a refill gets is what came
 * back to the cache, and traffic returns them in any channel mix. The dealer keeps
 * one LIFO stack of free frames per channel (the channel of a frame's first header
 * line after the headroom, at the layout's interleave granularity, as
 * xp_layout_m3_channel() and xp_topo_channel() define it). A put sorts handles into
 * their stacks; a get deals them round-robin, channel changing fastest and
 * continuing where the previous get stopped, so consecutive gets together walk the
 * channels too. A stack short of its share first pulls bulks from the cache.
 *
 *   xp_deal (per core, single-threaded, like its cache)
 *        | spills of half a stack / pulls of XP_PILE_BULK
 *   xp_cache -> xp_pool
 *
 * Guarantee: a get of n deals each channel the layout reaches floor or ceil of
 * n / C (C = those channels) whenever the dealer plus what it pulls hold ceil(n / C)
 * of each. To even channels out a get pulls at most opts.pull_max frames (default
 * max(4 n, 256); it pulls on regardless while it holds fewer than n); with
 * XP_DEAL_PULL_ALL it pulls until the cache and pool are empty, so it is even
 * whenever the dealer, the cache and the pool hold enough of every channel. When
 * a channel runs out, the others stay within 1 of each other, and the get counts
 * in st.uneven. Frames in the dealer are free frames of its core.
 *
 * Threading: like xp_cache, one thread at a time per dealer.
 */
#ifndef XPILE_DEAL_H
#define XPILE_DEAL_H

#include <linux/types.h>
#include <stddef.h>

#include "xpile/api.h"
#include "xpile/opts.h"
#include "xpile/pool.h"
#include "xpile/layout.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Most channels x ranks a dealer keeps stacks for. */
#define XP_DEAL_CHANNELS_MAX 64u
/* opts.pull_max: pull until the cache and the pool run dry. */
#define XP_DEAL_PULL_ALL (~0u)

struct xp_deal_opts {
	size_t sz; /* sizeof(struct xp_deal_opts); the rule: xpile/opts.h */
	/* Largest get the caller makes (default 256). Sizes the stacks; a larger get
	 * is dealt in parts of this size, each even on its own. */
	__u32 max_get;
	/* Frames a channel's stack holds before half of it spills to the cache;
	 * 0 = 4 x ceil(max_get / C), at least 32. At least ceil(max_get / C). */
	__u32 stack;
	/* Most frames one get pulls from the cache to even out its channels;
	 * 0 = max(4 x n, 256), XP_DEAL_PULL_ALL = as many as the pool holds. */
	__u32 pull_max;
	__u32 reserved_; /* zero */
	/* Non-zero: M3's random dispersal. Each frame a get deals from a channel is
	 * taken from a random depth of that channel's stack (splitmix64 from this
	 * seed) instead of its top, spreading refills over DRAM rows and banks at
	 * the price of the LIFO's cache-warm frames. Channel evenness is unchanged. */
	__u64 seed;
};
#define xp_deal_opts__last_field seed

struct xp_deal_stats {
	__u64 gets; /* successful gets */
	__u64 uneven; /* ... of which a channel ran out before its share */
	__u64 topups; /* gets that pulled from the cache */
	__u64 pulled; /* frames pulled from the cache */
	__u64 spilled; /* frames spilled to the cache (full stacks, pull surplus) */
	__u64 fails; /* gets refused with -ENOBUFS, puts refused by a spill */
};

/* Public only so that xp_deal_put() can be inline; read-only outside lib/deal.c. ABI:
 * that inline code reads and writes it in place in callers, so the layout is frozen
 * for libxpile.so.0 (tests/unit/test_abi.c). */
struct xp_deal {
	__u32 nch; /* channels x ranks */
	__u32 cap; /* stack capacity per channel */
	__u32 count; /* frames held */
	__u32 next; /* place in order[] the next deal starts at */
	__u32 data_off; /* header line = handle + data_off */
	__u32 ishift; /* log2(interleave), or 0 with idiv set */
	__u32 idiv; /* interleave when not a power of two, else 0 */
	__u32 chmask; /* nch - 1 when nch is a power of two, else 0 */
	__u64 chmagic; /* ~0 / nch + 1: Lemire's x % nch for 32-bit x */
	struct xp_cache *cache;
	struct xp_deal_stats st;
	__u64 present; /* channels the layout has frames on */
	__u32 npresent;
	__u32 max_get, pull_max, ovcap;
	__u64 *over; /* pull surplus, back to the cache after a top-up */
	__u64 *stk; /* nch stacks of cap handles */
	__u64 rng; /* opts.seed's splitmix64 state; 0 = LIFO */
	__u32 len[XP_DEAL_CHANNELS_MAX];
	__u8 order[XP_DEAL_CHANNELS_MAX]; /* the present channels, ascending */
};

/*
 * Creates a dealer for frames of @l in front of @cache (which it fills from and
 * spills to; the caller keeps owning it and destroys it after the dealer), with
 * @opts (NULL: defaults); @l is read only here. *@out is the caller's to
 * xp_deal_destroy(). -EINVAL: a NULL argument or an empty layout, channels x ranks
 * beyond XP_DEAL_CHANNELS_MAX, stack below ceil(max_get / C), non-zero unknown opts;
 * -ENOMEM.
 */
XP_API int xp_deal_create(const struct xp_layout *l, struct xp_cache *cache,
			  const struct xp_deal_opts *opts, struct xp_deal **out);
/* Flushes, then frees the dealer (NULL is fine). */
XP_API void xp_deal_destroy(struct xp_deal *d);
/* Every held frame back to the cache: 0, or the cache's error (frames it refused stay). */
XP_API int xp_deal_flush(struct xp_deal *d);

/* Frames the dealer holds now. */
static inline __u32 xp_deal_count(const struct xp_deal *d)
{
	return d->count;
}

/* Copies the dealer's counters to @out. */
static inline void xp_deal_stats_get(const struct xp_deal *d, struct xp_deal_stats *out)
{
	*out = d->st;
}

/* Channel (0..nch-1) of frame handle @h: what the stacks are sorted by. */
static inline __u32 xp_deal_channel(const struct xp_deal *d, __u64 h)
{
	__u64 x = h + d->data_off;

	x = __builtin_expect(d->idiv != 0, 0) ? x / d->idiv : x >> d->ishift;
	if (__builtin_expect(d->chmask || d->nch == 1, 1))
		return (__u32)x & d->chmask;
	if (__builtin_expect(x >> 32, 0))
		return (__u32)(x % d->nch);
	return (__u32)(((unsigned __int128)(d->chmagic * x) * d->nch) >> 64);
}

/* Slow path of xp_deal_put(): spills half of channel @ch's full stack to the cache.
 * 0 or the cache's negative errno. Call xp_deal_put() instead. */
XP_API int xp_deal_spill(struct xp_deal *d, __u32 ch);

/*
 * Takes back @n free frame handles (frame starts: xp_layout_handle() of ring
 * addresses). 0, or the cache's negative errno if a full stack could not spill
 * (debug-mode pool refusing a handle, or a full pool): then the handles from
 * that one on were not taken (xp_deal_count() tells how many were).
 */
static inline int xp_deal_put(struct xp_deal *d, const __u64 *h, __u32 n)
{
	for (__u32 i = 0; i < n; i++) {
		__u32 ch = xp_deal_channel(d, h[i]);

		if (__builtin_expect(d->len[ch] == d->cap, 0)) {
			int err = xp_deal_spill(d, ch);

			if (err)
				return err;
		}
		d->stk[(size_t)ch * d->cap + d->len[ch]++] = h[i];
		d->count++;
	}
	return 0;
}

/*
 * Deals @n handles to @out, channels round-robin (see the top of this file).
 * All-or-nothing: 0, or -ENOBUFS when the dealer, the cache and the pool hold
 * fewer than @n; frames it pulled meanwhile stay in the dealer, nothing is lost.
 */
XP_API int xp_deal_get(struct xp_deal *d, __u64 *out, __u32 n);

#ifdef __cplusplus
}
#endif

#endif /* XPILE_DEAL_H */
