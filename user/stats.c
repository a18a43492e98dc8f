// SPDX-License-Identifier: BSD-3-Clause
/*
 * Stats: a live line per socket every --interval and a summary at exit, as text or
 * (--json) one JSON object per line per port/queue, then the allocator and the live
 * ledger lines. Runs on the main thread and only reads the workers' counters (aligned
 * 64-bit loads; a line may mix two batches); the ledger line comes from the workers'
 * own cuts (audit.c), which are consistent.
 */
#include <stdio.h>

#include "audit.h"
#include "dom.h"
#include "engine.h"
#include "counters.h"
#include "idle_engine.h"
#include "leak.h"
#include "stats.h"

static void line_json(struct engine *e, struct eng_q *q, const struct eng_counters *c, double dt,
		      double t, bool final)
{
	struct xp_xsk_stats ks = {};
	const struct eng_counters *p = &q->shown;
	char unsent[48] = "";

	/* Descriptors the kernel never took (a down link): never counted as sent. */
	if (final)
		snprintf(unsent, sizeof(unsent), ",\"tx_unsent\":%llu",
			 (unsigned long long)(c->tx_posted - c->completed));
	xp_xsk_stats(q->xsk, &ks);
	printf("{\"type\":\"%s\",\"time\":%.3f,\"port\":\"%s\",\"queue\":%u,\"mode\":\"%s\","
	       "\"zerocopy\":%s,\"rx_packets\":%llu,\"tx_packets\":%llu,\"rx_bytes\":%llu,"
	       "\"tx_bytes\":%llu,\"rx_pps\":%.0f,\"tx_pps\":%.0f,\"rx_bps\":%.0f,\"tx_bps\":%.0f,"
	       "\"tx_dropped\":%llu,\"bad_descs\":%llu,\"fill_starved\":%llu,\"tx_kicks\":%llu,"
	       "\"rx_dropped\":%llu,\"rx_invalid_descs\":%llu,\"tx_invalid_descs\":%llu,"
	       "\"rx_ring_full\":%llu,\"rx_fill_ring_empty_descs\":%llu,"
	       "\"tx_ring_empty_descs\":%llu,\"tx_copied\":%llu,\"umem\":%u%s}\n",
	       final ? "summary" : "interval", t, q->port->ifname, q->queue, e->cfg.mode->name,
	       q->xsk->zerocopy ? "true" : "false", (unsigned long long)c->rx_packets,
	       (unsigned long long)c->tx_packets, (unsigned long long)c->rx_bytes,
	       (unsigned long long)c->tx_bytes,
	       final ? c->rx_packets / (t > 0 ? t : 1) : (c->rx_packets - p->rx_packets) / dt,
	       final ? c->tx_packets / (t > 0 ? t : 1) : (c->tx_packets - p->tx_packets) / dt,
	       final ? c->rx_bytes * 8 / (t > 0 ? t : 1) : (c->rx_bytes - p->rx_bytes) * 8 / dt,
	       final ? c->tx_bytes * 8 / (t > 0 ? t : 1) : (c->tx_bytes - p->tx_bytes) * 8 / dt,
	       (unsigned long long)c->tx_dropped, (unsigned long long)c->bad_descs,
	       (unsigned long long)c->fill_starved, (unsigned long long)c->tx_kicks,
	       (unsigned long long)ks.rx_dropped, (unsigned long long)ks.rx_invalid_descs,
	       (unsigned long long)ks.tx_invalid_descs, (unsigned long long)ks.rx_ring_full,
	       (unsigned long long)ks.rx_fill_ring_empty_descs,
	       (unsigned long long)ks.tx_ring_empty_descs, (unsigned long long)c->tx_copied,
	       q->dom->id, unsent);
}

static void line_text(struct engine *e, struct eng_q *q, const struct eng_counters *c, double dt,
		      double t, bool final)
{
	struct xp_xsk_stats ks = {};
	const struct eng_counters *p = &q->shown;
	double div = final ? (t > 0 ? t : 1) : dt;
	const struct eng_counters *base = final ? &(struct eng_counters){} : p;

	xp_xsk_stats(q->xsk, &ks);
	fprintf(stderr,
		"%s%7.1fs %s:%u rx %10.0f pps %8.1f Mbps  tx %10.0f pps %8.1f Mbps  total rx %llu tx %llu  drop tx %llu krx %llu  ring_full %llu fill_empty %llu bad %llu\n",
		final ? "summary " : "", t, q->port->ifname, q->queue,
		(c->rx_packets - base->rx_packets) / div,
		(c->rx_bytes - base->rx_bytes) * 8 / div / 1e6,
		(c->tx_packets - base->tx_packets) / div,
		(c->tx_bytes - base->tx_bytes) * 8 / div / 1e6, (unsigned long long)c->rx_packets,
		(unsigned long long)c->tx_packets, (unsigned long long)c->tx_dropped,
		(unsigned long long)ks.rx_dropped, (unsigned long long)ks.rx_ring_full,
		(unsigned long long)ks.rx_fill_ring_empty_descs, (unsigned long long)c->bad_descs);
}

/* Busy polling on a queue the kernel gives no NAPI id polls nothing: --busy-poll says
 * so once, when the first packets have told the socket its queue's id; busy polling on
 * by itself (idle_engine.c) starts its recvfrom per pass only on a queue that has one. */
static void check_busy_poll(struct engine *e, struct eng_q *q, const struct eng_counters *c)
{
	__u32 id;

	if (!(e->cfg.busy_poll || e->busy_auto) || q->napi_checked || !c->rx_packets)
		return;
	q->napi_checked = true;
	if (xp_xsk_napi_id(q->xsk, &id))
		return;
	if (e->busy_auto && id) {
		__atomic_store_n(&q->busy_live, true, __ATOMIC_RELAXED);
		ut_say(0,
		       "%s:%u: busy polling NAPI %u from its worker (the interface defers its IRQs)",
		       q->port->ifname, q->queue, id);
	} else if (e->busy_auto) {
		ut_say(0,
		       "%s:%u: the kernel gives this queue no NAPI id (veth, or a driver without busy-poll support): not busy polled, its softirq serves it",
		       q->port->ifname, q->queue);
	} else if (!id) {
		ut_say(0,
		       "%s:%u: --busy-poll has nothing to poll: the kernel gives this queue no NAPI id (veth, or a driver without busy-poll support); its softirq serves it as without the option",
		       q->port->ifname, q->queue);
	}
}

void eng_stats_tick(struct engine *e, bool final)
{
	__u64 now = eng_now_ns();
	double dt = (now - e->last_tick_ns) / 1e9, t = (now - e->start_ns) / 1e9;
	struct eng_counters c;
	__u32 i;

	if (dt <= 0)
		dt = 1e-9;
	for (i = 0; i < e->nq; i++) {
		struct eng_q *q = &e->qs[i];

		eng_counters_snap(e, q, &c);
		check_busy_poll(e, q, &c);
		if (e->cfg.silent)
			;
		else if (e->cfg.json)
			line_json(e, q, &c, dt, t, final);
		else if (!e->cfg.quiet || final)
			line_text(e, q, &c, dt, t, final);
		q->shown = c;
	}
	eng_idle_stats(e, t);
	if (!final && !e->cfg.silent && (e->cfg.json || !e->cfg.quiet))
		eng_stats_allocator(e, false);
	/* Every interval: where every frame is, proven without pausing (audit.c). */
	if (!final) {
		eng_audit_live(e);
		eng_leaks_report(e);
	}
	if (e->cfg.json)
		fflush(stdout);
	e->last_tick_ns = now;
}

/* Allocator figures of one domain: exact at exit (workers gone), estimates while they
 * run. */
static void allocator_dom(struct engine *e, const struct eng_dom *d, bool final)
{
	const char *backend = xp_pool_backend_name(xp_pool_backend(d->pool));
	struct eng_alloc_sum as;
	const struct xp_cache_stats *sum = &as.cache;
	const struct xp_deal_stats *dsum = &as.deal;
	char umem[24] = "";
	__u64 copied;

	eng_alloc_sum(e, d, &as);
	copied = as.copied;
	if (e->cfg.json) {
		printf("{\"type\":\"allocator\",\"when\":\"%s\",\"umem\":%u,\"backend\":\"%s\",\"frames\":%u,\"avail\":%u,"
		       "\"cached\":%u,\"get_hits\":%llu,\"put_hits\":%llu,\"get_misses\":%llu,"
		       "\"put_misses\":%llu,\"refills\":%llu,\"flushes\":%llu,\"fails\":%llu,"
		       "\"deals\":%llu,\"deals_uneven\":%llu,\"deal_topups\":%llu,\"tx_copied\":%llu}\n",
		       final ? "exit" : "interval", d->id, backend, xp_pool_size(d->pool),
		       xp_pool_avail(d->pool), xp_pool_cached(d->pool),
		       (unsigned long long)sum->get_hits, (unsigned long long)sum->put_hits,
		       (unsigned long long)sum->get_misses, (unsigned long long)sum->put_misses,
		       (unsigned long long)sum->refills, (unsigned long long)sum->flushes,
		       (unsigned long long)sum->fails, (unsigned long long)dsum->gets,
		       (unsigned long long)dsum->uneven, (unsigned long long)dsum->topups,
		       (unsigned long long)copied);
		return;
	}
	if (e->ndoms > 1)
		snprintf(umem, sizeof(umem), " (UMEM %u)", d->id);
	fprintf(stderr,
		"%sallocator%s: %s, %u frames, %u in pile, %u cached; cache gets %llu hit %llu miss, puts %llu hit %llu miss, %llu refills, %llu flushes, %llu refused; dealt %llu, %llu not channel-even, %llu top-ups",
		final ? "" : "         ", umem, backend, xp_pool_size(d->pool),
		xp_pool_avail(d->pool), xp_pool_cached(d->pool), (unsigned long long)sum->get_hits,
		(unsigned long long)sum->get_misses, (unsigned long long)sum->put_hits,
		(unsigned long long)sum->put_misses, (unsigned long long)sum->refills,
		(unsigned long long)sum->flushes, (unsigned long long)sum->fails,
		(unsigned long long)dsum->gets, (unsigned long long)dsum->uneven,
		(unsigned long long)dsum->topups);
	if (copied)
		fprintf(stderr, "; %llu frames copied in from the other UMEM",
			(unsigned long long)copied);
	fprintf(stderr, "\n");
}

void eng_stats_allocator(struct engine *e, bool final)
{
	if (e->cfg.silent)
		return;
	for (__u32 i = 0; i < e->ndoms; i++)
		allocator_dom(e, &e->dom[i], final);
}
