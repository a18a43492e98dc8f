// SPDX-License-Identifier: BSD-3-Clause
/* rxdrop: receive and free; the baseline of what the kernel can deliver. Public API
 * only (xpile/engine.h, xpile/pkt.h). */
#include "xpile/engine.h"
#include "rxdrop.h"

static void rxdrop_burst(struct xp_worker *w, struct xp_queue *q, struct xp_pkt *pkts, __u32 n,
			 void *arg)
{
	xp_pkt_free(w, q, pkts, n);
}

void eng_mode_rxdrop(struct xp_engine_opts *o)
{
	o->name = "rxdrop";
	o->on_burst = rxdrop_burst;
}
