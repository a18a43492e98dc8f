// SPDX-License-Identifier: BSD-3-Clause
/* rxdrop: receive and free; the baseline of what the kernel can deliver. */
#include "../engine.h"

static __u32 rxdrop_poll(struct eng_worker *w, struct eng_q *q)
{
	__u32 n = eng_rx(w, q, w->descs, w->e->cfg.batch);

	if (n)
		eng_free_descs(q->wd, w->scratch, w->descs, n);
	return n;
}

const struct eng_mode eng_mode_rxdrop = {
	.name = "rxdrop",
	.needs_rx = true,
	.nports_min = 1,
	.nports_max = ENG_MAX_PORTS,
	.poll = rxdrop_poll,
};
