// SPDX-License-Identifier: BSD-3-Clause
/*
 * fwd: a wire between two ports. What arrives on A:q leaves on B:q and back; both
 * sockets share the UMEM and the worker, so the frame moves without a copy.
 */
#include "../engine.h"

static __u32 fwd_poll(struct eng_worker *w, struct eng_q *q)
{
	__u32 n = eng_rx(w, q, w->descs, w->e->cfg.batch);

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
