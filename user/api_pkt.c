// SPDX-License-Identifier: BSD-3-Clause
/*
 * xpile/pkt.h: a worker's per-burst calls, on the ring moves every mode shares
 * (rings.c) and the host TAP (tap.c), and the hold place the audits count.
 */
#include <errno.h>
#include <stddef.h>
#include <string.h>

#include "dom.h"
#include "engine.h"
#include "path.h"
#include "rings.h"
#include "tap.h"
#include "worker.h"
#include "xpile/pkt.h"

/* The handles are the rings' descriptors, copied as they are. */
_Static_assert(sizeof(struct xp_pkt) == sizeof(struct xdp_desc), "xp_pkt is xdp_desc");
_Static_assert(offsetof(struct xp_pkt, len) == offsetof(struct xdp_desc, len), "len");
_Static_assert(offsetof(struct xp_pkt, flags) == offsetof(struct xdp_desc, options), "flags");
_Static_assert(XP_PKT_MORE == XDP_PKT_CONTD, "XP_PKT_MORE");
_Static_assert(offsetof(struct eng_q, pub) == 0, "a queue's public head comes first");
_Static_assert(XP_BURST_MAX == ENG_MAX_BATCH, "one burst is one batch at most");

#define Q(q) ((struct eng_q *)(q))
#define W(w) ((struct eng_worker *)(w))
#define D(p) ((struct xdp_desc *)(p))

__u32 xp_rx_burst(struct xp_worker *w, struct xp_queue *q, struct xp_pkt *pkts, __u32 max)
{
	if (max > ENG_MAX_BATCH)
		max = ENG_MAX_BATCH;
	return eng_rx(W(w), Q(q), D(pkts), max);
}

/* Across two UMEMs: each packet copied into a fresh frame of @to's, counted in its
 * tx_copied; the source frames go back to their dealer at once (DPDK's net_af_xdp does
 * the same without a shared UMEM). Whole packets only: what finds no frame is dropped. */
static __u32 copy_across(struct eng_worker *w, struct eng_q *from, struct eng_q *to,
			 struct xdp_desc *d, __u32 n)
{
	const struct xp_layout *l = &to->dom->layout;
	struct eng_wdom *wd = to->wd;
	struct xdp_desc copies[ENG_MAX_BATCH];
	__u64 fresh[ENG_MAX_BATCH];
	__u32 got = n, m, i, room = l->chunk_size - l->data_off;

	while (got && xp_deal_get(wd->deal, fresh, got))
		got /= 2;
	m = got;
	while (m && m < n && (d[m - 1].options & XDP_PKT_CONTD))
		m--;
	if (m < got)
		xp_deal_put(wd->deal, fresh + m, got - m);
	for (i = m; i < n; i++)
		if (!(d[i].options & XDP_PKT_CONTD))
			to->c.tx_dropped++;
	xp_ledger_move(wd->acct, XP_PLACE_FREE, XP_PLACE_APP, fresh, m);
	for (i = 0; i < m; i++) {
		/* The kernel puts packets at data_off; a longer one still fits its frame. */
		__u32 off = d[i].len <= room ? l->data_off : l->chunk_size - d[i].len;

		copies[i].addr = xp_layout_tx_addr(l, fresh[i], off);
		copies[i].len = d[i].len;
		copies[i].options = d[i].options;
		memcpy(eng_data(to->dom, copies[i].addr), eng_data(from->dom, d[i].addr), d[i].len);
	}
	to->c.tx_copied += m;
	eng_free_descs(from->wd, w->scratch, d, n);
	return eng_tx(w, to, copies, m);
}

__u32 xp_tx_burst(struct xp_worker *w, struct xp_queue *to, struct xp_pkt *pkts, __u32 n,
		  const struct xp_queue *from)
{
	__u32 sent = 0, k;

	while (n) {
		k = n > ENG_MAX_BATCH ? ENG_MAX_BATCH : n;
		if (__builtin_expect(from && from->umem != to->umem, 0))
			sent += copy_across(W(w), Q(from), Q(to), D(pkts), k);
		else
			sent += eng_tx(W(w), Q(to), D(pkts), k);
		pkts += k;
		n -= k;
	}
	return sent;
}

void xp_pkt_free(struct xp_worker *w, struct xp_queue *q, const struct xp_pkt *pkts, __u32 n)
{
	__u32 k;

	while (n) {
		k = n > ENG_MAX_BATCH ? ENG_MAX_BATCH : n;
		eng_free_descs(Q(q)->wd, W(w)->scratch, (const struct xdp_desc *)pkts, k);
		pkts += k;
		n -= k;
	}
}

__u32 xp_pkt_alloc(struct xp_worker *w, struct xp_queue *xq, struct xp_pkt *pkts, __u32 n)
{
	struct eng_q *q = Q(xq);
	const struct xp_layout *l = &q->dom->layout;
	__u64 *h = W(w)->scratch;

	if (n > ENG_MAX_BATCH)
		n = ENG_MAX_BATCH;
	while (n && xp_deal_get(q->wd->deal, h, n))
		n /= 2;
	if (!n) {
		q->c.fill_starved++; /* a sender starved as a fill ring would be */
		return 0;
	}
	xp_ledger_move(q->wd->acct, XP_PLACE_FREE, XP_PLACE_APP, h, n);
	for (__u32 i = 0; i < n; i++) {
		pkts[i].addr = xp_layout_tx_addr(l, h[i], l->data_off);
		pkts[i].len = 0;
		pkts[i].flags = 0;
	}
	return n;
}

__u32 xp_tx_room(struct xp_worker *w, const struct xp_queue *q)
{
	/* The kernel's index is read only when the cached view has less than a burst. */
	return xp_ring_prod_free(&Q(q)->xsk->tx, XP_BURST_MAX);
}

int xp_pkt_punt(struct xp_worker *w, struct xp_queue *q, const struct xp_pkt *pkts, __u32 n)
{
	return eng_tap_punt(W(w), Q(q), (const struct xdp_desc *)pkts, n);
}

void xp_pkt_hold(struct xp_worker *w, struct xp_queue *q, const struct xp_pkt *pkts, __u32 n)
{
	Q(q)->wd->held += n;
}

void xp_pkt_unhold(struct xp_worker *w, struct xp_queue *q, const struct xp_pkt *pkts, __u32 n)
{
	Q(q)->wd->held -= n;
}

__u64 xp_worker_held(const struct xp_worker *w, const struct xp_queue *q)
{
	return (__u64)Q(q)->wd->held;
}

__u32 xp_worker_id(const struct xp_worker *w)
{
	return W(w)->id;
}

int xp_worker_core(const struct xp_worker *w)
{
	return W(w)->core;
}

__u32 xp_worker_nqueues(const struct xp_worker *w)
{
	return W(w)->nq;
}

struct xp_queue *xp_worker_queue(struct xp_worker *w, __u32 i)
{
	return i < W(w)->nq ? &W(w)->q[i]->pub : NULL;
}

struct xp_queue *xp_worker_find(struct xp_worker *w, __u32 port, __u32 queue)
{
	for (__u32 i = 0; i < W(w)->nq; i++)
		if (W(w)->q[i]->pub.port == port && W(w)->q[i]->queue == queue)
			return &W(w)->q[i]->pub;
	return NULL;
}

struct xp_engine *xp_worker_engine(struct xp_worker *w)
{
	return (struct xp_engine *)W(w)->e;
}

bool xp_worker_turn(struct xp_worker *w)
{
	return eng_turn_begin(W(w));
}

void xp_worker_idle(struct xp_worker *w, __u32 work)
{
	eng_turn_end(W(w), work);
}

bool xp_worker_stopping(const struct xp_worker *w)
{
	return __atomic_load_n(&W(w)->e->stop, __ATOMIC_ACQUIRE);
}

void xp_worker_done(struct xp_worker *w)
{
	W(w)->done = true;
}
