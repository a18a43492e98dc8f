// SPDX-License-Identifier: BSD-3-Clause
/*
 * The workers' counters as another thread reads them (counters.h): the stats lines
 * (stats.c) and the control socket (ctl_cmds.c).
 */
#include <string.h>

#include "counters.h"
#include "dom.h"
#include "engine.h"

/* Copies a struct of __u64 counters another thread is updating, one load each. */
void eng_snap_u64s(const void *from, void *to, size_t bytes)
{
	const __u64 *src = from;
	__u64 *dst = to;
	size_t i;

	for (i = 0; i < bytes / sizeof(__u64); i++)
		dst[i] = __atomic_load_n(&src[i], __ATOMIC_RELAXED);
}

/* An engine that only sends (txonly) counts a packet as sent once the kernel completed
 * it, so a down link shows 0 sent, not what sat in the TX ring. Completions carry no
 * length: the bytes are the posted bytes' completed share, exact for packets of one
 * size (txonly's) and once everything completed. A sender posts one frame per packet. */
static void sent_only(const struct engine *e, struct eng_counters *c)
{
	if (e->cfg.mode->needs_rx || c->completed >= c->tx_posted)
		return;
	c->tx_bytes =
		c->tx_posted ?
			(__u64)((unsigned __int128)c->tx_bytes * c->completed / c->tx_posted) :
			0;
	c->tx_packets = c->completed;
}

void eng_counters_snap(const struct engine *e, const struct eng_q *q, struct eng_counters *c)
{
	eng_snap_u64s(&q->c, c, sizeof(*c));
	sent_only(e, c);
}

void eng_alloc_sum(struct engine *e, const struct eng_dom *d, struct eng_alloc_sum *out)
{
	struct xp_cache_stats s;
	struct xp_deal_stats ds;
	__u32 i;

	memset(out, 0, sizeof(*out));
	for (i = 0; i < e->nworkers; i++) {
		const struct eng_wdom *wd = &e->workers[i].wd[d->id];

		if (wd->deal) {
			eng_snap_u64s(&wd->deal->st, &ds, sizeof(ds));
			out->deal.gets += ds.gets;
			out->deal.uneven += ds.uneven;
			out->deal.topups += ds.topups;
		}
		if (!wd->cache)
			continue;
		eng_snap_u64s(&wd->cache->st, &s, sizeof(s));
		out->cache.get_hits += s.get_hits;
		out->cache.put_hits += s.put_hits;
		out->cache.get_misses += s.get_misses;
		out->cache.put_misses += s.put_misses;
		out->cache.refills += s.refills;
		out->cache.flushes += s.flushes;
		out->cache.fails += s.fails;
	}
	for (i = 0; i < e->nq; i++)
		if (e->qs[i].dom == d)
			out->copied += __atomic_load_n(&e->qs[i].c.tx_copied, __ATOMIC_RELAXED);
}
