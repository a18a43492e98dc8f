// SPDX-License-Identifier: BSD-3-Clause
/*
 * fwd: a wire between two ports. What arrives on A:q leaves on B:q and back, on one
 * worker. With one UMEM (--umem shared, the default) the frame itself moves, no copy.
 * With a UMEM per port (--umem per-port) a frame of A's UMEM cannot go on B's TX ring
 * (the kernel reads TX addresses in B's UMEM): its bytes are copied into a frame of B's
 * domain, as DPDK's net_af_xdp does without a shared UMEM, and counted in B's
 * tx_copied; A's frame goes back to A's dealer at once.
 */
#include <string.h>

#include "../engine.h"

static __u32 copy_across(struct eng_worker *w, struct eng_q *q, struct eng_q *to, __u32 n)
{
	const struct xp_layout *l = &to->dom->layout;
	struct eng_wdom *wd = to->wd;
	struct xdp_desc copies[ENG_MAX_BATCH];
	__u64 fresh[ENG_MAX_BATCH];
	__u32 got = n, m, i, room = l->chunk_size - l->data_off;

	while (got && xp_deal_get(wd->deal, fresh, got))
		got /= 2;
	/* Whole packets only: the frames past the last whole one stay free. */
	m = got;
	while (m && m < n && (w->descs[m - 1].options & XDP_PKT_CONTD))
		m--;
	if (m < got)
		xp_deal_put(wd->deal, fresh + m, got - m);
	for (i = m; i < n; i++)
		if (!(w->descs[i].options & XDP_PKT_CONTD))
			to->c.tx_dropped++;
	xp_ledger_move(wd->acct, XP_PLACE_FREE, XP_PLACE_APP, fresh, m);
	for (i = 0; i < m; i++) {
		const struct xdp_desc *d = &w->descs[i];
		/* The kernel puts packets at data_off; a longer one still fits its frame. */
		__u32 off = d->len <= room ? l->data_off : l->chunk_size - d->len;

		copies[i].addr = xp_layout_tx_addr(l, fresh[i], off);
		copies[i].len = d->len;
		copies[i].options = d->options;
		memcpy(eng_data(to->dom, copies[i].addr), eng_data(q->dom, d->addr), d->len);
	}
	to->c.tx_copied += m;
	eng_free_descs(q->wd, w->scratch, w->descs, n);
	eng_tx(w, to, copies, m);
	return n;
}

static __u32 fwd_poll(struct eng_worker *w, struct eng_q *q)
{
	__u32 n = eng_rx(w, q, w->descs, w->e->cfg.batch);

	if (__builtin_expect(q->peer->dom != q->dom, 0))
		return n ? copy_across(w, q, q->peer, n) : 0;
	eng_tx(w, q->peer, w->descs, n);
	return n;
}

const struct eng_mode eng_mode_fwd = {
	.name = "fwd",
	.needs_rx = true,
	.nports_min = 2,
	.nports_max = 2,
	.poll = fwd_poll,
};
