// SPDX-License-Identifier: BSD-3-Clause
/*
 * The ring moves every mode shares (rings.h). Each function runs on the worker owning
 * @q: rings, cache and ledger account are all single-threaded here.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "capture.h"
#include "dom.h"
#include "engine.h"
#include "rings.h"
#include "xpile/desc.h"

/* Fill as much as the ring takes, in bulks the dealer can give: a bulk the pile cannot
 * meet is halved until it can, so a UMEM smaller than the rings still fills what it has.
 * No ring holds more than its share of a small pool (dom.c eng_dom_fill_cap()). */
__u32 eng_refill(struct eng_worker *w, struct eng_q *q)
{
	struct xp_ring *fill = &q->xsk->fill;
	struct eng_wdom *wd = q->wd;
	__u32 batch = w->e->cfg.batch, total = 0, n, idx, i;
	__u32 held = (__u32)(q->c.fill_posted - q->c.rx_descs), cap = q->dom->fill_cap;
	__u32 room = held < cap ? cap - held : 0;
	struct xp_ledger_map m = xp_ledger_map_get(wd->acct);

	while (total < room && (n = xp_ring_prod_free(fill, batch)) > 0) {
		if (n > batch)
			n = batch;
		if (n > room - total)
			n = room - total;
		/* M3: the dealer hands out every channel's share, channels round-robin,
		 * whatever came back to this core. */
		while (n && xp_deal_get(wd->deal, w->scratch, n))
			n /= 2;
		if (!n) {
			q->c.fill_starved++;
			break;
		}
		xp_ring_prod_reserve(fill, n, &idx);
		xp_ledger_count(wd->acct, XP_PLACE_FREE, XP_PLACE_FILL, w->scratch, n,
				sizeof(__u64));
		for (i = 0; i < n; i++) {
			*xp_ring_addr(fill, idx + i) = w->scratch[i];
			xp_ledger_mark(&m, w->scratch[i], XP_PLACE_FILL);
		}
		total += n;
		if (total >= 4 * batch)
			break;
	}
	if (!total)
		return 0;
	xp_ring_prod_submit(fill);
	q->c.fill_posted += total;
	if (q->xsk->need_wakeup && xp_ring_needs_wakeup(fill)) {
		xp_xsk_wake_rx(q->xsk);
		q->c.rx_wakeups++;
	}
	return total;
}

/* A descriptor from the kernel is trusted only once it points inside one frame and
 * that frame is one we gave it (xpile/desc.h). */
static inline long frame_in(const struct eng_dom *d, const struct xp_ledger_acct *a, __u64 h,
			    enum xp_place p)
{
	return xp_desc_frame(a, d->starts, h, p);
}

int eng_dom_starts(struct eng_dom *d, const struct xp_ledger_acct *a)
{
	if (!xp_desc_starts_needed(&d->layout, a))
		return 0;
	d->starts = malloc(a->nslots * sizeof(*d->starts));
	if (!d->starts)
		return -ENOMEM;
	xp_desc_starts_fill(&d->layout, a, d->starts);
	return 0;
}

int eng_rings_setup(struct engine *e)
{
	for (__u32 k = 0; k < e->ndoms; k++) {
		struct eng_dom *d = &e->dom[k];

		for (__u32 i = 0; i < e->nworkers; i++)
			if (e->workers[i].wd[k].d) {
				if (eng_dom_starts(d, e->workers[i].wd[k].acct))
					return ut_say(-ENOMEM, "out of memory");
				break;
			}
	}
	return 0;
}

/*
 * Takes frame @addr (slot @s, checked in @from) to @to. The batch was counted first
 * (xp_ledger_count(): a live audit that sees a byte moved sees the move counted), so
 * the byte is one store, and a frame given twice in one batch is found at its second
 * check. A debug ledger checks and writes the byte in its count: one frame at a time.
 */
static inline void frame_take(struct xp_ledger_acct *a, long s, const __u64 *addr,
			      enum xp_place from, enum xp_place to)
{
	if (__builtin_expect(a->debug, 0))
		xp_ledger_count(a, from, to, addr, 1, sizeof(*addr));
	else
		__atomic_store_n(&a->state[s], (__u8)to, __ATOMIC_RELAXED);
}

__u32 eng_rx_ring(struct eng_worker *w, struct eng_q *q, struct xdp_desc *out, __u32 max)
{
	const struct eng_dom *dom = q->dom;
	const struct xp_layout *l = &dom->layout;
	struct xp_ledger_acct *a = q->wd->acct;
	struct xp_ring *rx = &q->xsk->rx;
	__u32 n, idx, i, k = 0, bad = 0, bad_last = 0, last = 0, ring_last = 0;
	__u64 bytes = 0, bytes_last = 0;
	struct ut_cap_ring *cr;
	long s;

	n = xp_ring_cons_peek(rx, max, &idx);
	if (!n)
		return 0;
	/* All of them counted fill -> app first; what is not taken is counted back. */
	if (!a->debug)
		xp_ledger_count(a, XP_PLACE_FILL, XP_PLACE_APP, NULL, n, 0);
	for (i = 0; i < n; i++) {
		const struct xdp_desc *d = xp_ring_desc(rx, idx + i);

		if (__builtin_expect(!xp_desc_rx_ok(l, d), 0) ||
		    __builtin_expect(
			    (s = frame_in(dom, a, xp_layout_handle(l, d->addr), XP_PLACE_FILL)) < 0,
			    0)) {
			bad++;
			continue;
		}
		frame_take(a, s, &d->addr, XP_PLACE_FILL, XP_PLACE_APP);
		out[k++] = *d;
		bytes += d->len;
		if (!(d->options & XDP_PKT_CONTD)) {
			last = k;
			ring_last = i + 1;
			bytes_last = bytes;
			bad_last = bad;
			q->c.rx_packets++;
		}
	}
	/* Multi-buffer: leave a packet's head frags in the ring until its tail arrives,
	 * so every batch holds whole packets (a chain longer than the batch goes as is). */
	if (last < k && last > 0) {
		rx->cached_cons -= n - ring_last;
		for (i = last; i < k; i++) /* back to fill: read, and taken, again next time */
			frame_take(a,
				   frame_in(dom, a, xp_layout_handle(l, out[i].addr), XP_PLACE_APP),
				   &out[i].addr, XP_PLACE_APP, XP_PLACE_FILL);
		k = last;
		bytes = bytes_last;
		bad = bad_last; /* the rest are read, and counted, again next time */
	}
	if (__builtin_expect(k < n, 0) && !a->debug)
		xp_ledger_count(a, XP_PLACE_APP, XP_PLACE_FILL, NULL, n - k, 0);
	q->c.rx_bytes += bytes;
	q->c.rx_descs += k;
	xp_ring_cons_release(rx);
	q->c.bad_descs += bad;
	if ((cr = eng_capture_ring(w)))
		eng_capture_batch(cr, w, q, out, k, UT_CAP_RX);
	return k;
}

void eng_free_descs(struct eng_wdom *wd, __u64 *scratch, const struct xdp_desc *d, __u32 n)
{
	const struct xp_layout *l = &wd->d->layout;
	struct xp_ledger_map m = xp_ledger_map_get(wd->acct);
	__u32 i;

	xp_ledger_count(wd->acct, XP_PLACE_APP, XP_PLACE_FREE, d, n, sizeof(*d));
	for (i = 0; i < n; i++) {
		scratch[i] = xp_layout_handle(l, d[i].addr);
		xp_ledger_mark(&m, d[i].addr, XP_PLACE_FREE);
	}
	xp_deal_put(wd->deal, scratch, n);
}

void eng_kick(struct eng_q *q)
{
	struct xp_ring *tx = &q->xsk->tx;

	if (tx->cached_prod == __atomic_load_n(tx->consumer, __ATOMIC_ACQUIRE))
		return;
	if (!q->xsk->need_wakeup || xp_ring_needs_wakeup(tx)) {
		xp_xsk_kick_tx(q->xsk);
		q->c.tx_kicks++;
	}
}

/* Posts @n descriptors (whole packets) on @q's TX ring; what does not fit is freed and
 * counted as dropped. The burst is kicked at once: a lone packet never waits. */
__u32 eng_tx(struct eng_worker *w, struct eng_q *q, const struct xdp_desc *d, __u32 n)
{
	struct xp_ring *tx = &q->xsk->tx;
	struct xp_ledger_map m;
	__u32 got, idx, i, pkts = 0;
	struct ut_cap_ring *cr;
	__u64 bytes = 0;

	if (!n)
		return 0;
	got = xp_ring_prod_free(tx, n);
	if (got < n) {
		eng_complete(w, q);
		got = xp_ring_prod_free(tx, n);
	}
	if (got >= n) {
		got = n;
	} else {
		/* Cut at a packet boundary: a half-sent chain would corrupt the next one. */
		while (got && (d[got - 1].options & XDP_PKT_CONTD))
			got--;
		for (i = got; i < n; i++)
			if (!(d[i].options & XDP_PKT_CONTD))
				q->c.tx_dropped++;
		eng_free_descs(q->wd, w->scratch, d + got, n - got);
	}
	if (!got)
		return 0;
	if ((cr = eng_capture_ring(w)))
		eng_capture_batch(cr, w, q, d, got, UT_CAP_TX);
	xp_ring_prod_reserve(tx, got, &idx);
	m = xp_ledger_map_get(q->wd->acct);
	xp_ledger_count(q->wd->acct, XP_PLACE_APP, XP_PLACE_TX, d, got, sizeof(*d));
	for (i = 0; i < got; i++) {
		*xp_ring_desc(tx, idx + i) = d[i];
		xp_ledger_mark(&m, d[i].addr, XP_PLACE_TX);
		bytes += d[i].len;
		pkts += !(d[i].options & XDP_PKT_CONTD);
	}
	xp_ring_prod_submit(tx);
	q->tx_inflight += got;
	q->c.tx_posted += got;
	q->c.tx_packets += pkts;
	q->c.tx_bytes += bytes;
	eng_kick(q);
	return got;
}

/* Completed TX frames go back to this core's dealer in one bulk: those the ledger has
 * in tx, once each; any other address is counted bad and dropped (frame_in()). */
__u32 eng_complete(struct eng_worker *w, struct eng_q *q)
{
	const struct eng_dom *dom = q->dom;
	const struct xp_layout *l = &dom->layout;
	struct xp_ledger_acct *a = q->wd->acct;
	struct xp_ring *comp = &q->xsk->comp;
	__u32 n, idx, i, k = 0;
	long s;

	if (!q->tx_inflight)
		return 0;
	n = xp_ring_cons_peek(comp, ENG_MAX_BATCH, &idx);
	if (!n) {
		eng_kick(q);
		return 0;
	}
	if (!a->debug)
		xp_ledger_count(a, XP_PLACE_TX, XP_PLACE_FREE, NULL, n, 0);
	for (i = 0; i < n; i++) {
		__u64 h = xp_layout_handle(l, *xp_ring_addr(comp, idx + i));

		if (__builtin_expect(h >= l->area_size, 0) ||
		    __builtin_expect((s = frame_in(dom, a, h, XP_PLACE_TX)) < 0, 0)) {
			q->c.bad_descs++;
			continue;
		}
		w->scratch[k] = h;
		frame_take(a, s, &w->scratch[k++], XP_PLACE_TX, XP_PLACE_FREE);
	}
	xp_ring_cons_release(comp);
	if (__builtin_expect(k < n, 0) && !a->debug)
		xp_ledger_count(a, XP_PLACE_FREE, XP_PLACE_TX, NULL, n - k, 0);
	if (k)
		xp_deal_put(q->wd->deal, w->scratch, k);
	q->tx_inflight -= n;
	q->c.completed += n;
	/* Copy mode sends at most a budget per kick: kick again until the ring drains. */
	eng_kick(q);
	return n;
}
