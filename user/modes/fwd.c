// SPDX-License-Identifier: BSD-3-Clause
/*
 * fwd: a wire between two ports. What arrives on A:q leaves on B:q and back, on one
 * worker (.pair_queues). With one UMEM (--umem shared, the default) the frame itself
 * moves, no copy; with a UMEM per port xp_tx_burst() copies each packet into B's UMEM
 * (counted as B's tx_copied), as DPDK's net_af_xdp does without a shared UMEM. Public
 * API only (xpile/engine.h, xpile/pkt.h).
 */
#include "xpile/engine.h"
#include "fwd.h"

static void fwd_burst(struct xp_worker *w, struct xp_queue *q, struct xp_pkt *pkts, __u32 n,
		      void *arg)
{
	struct xp_queue *peer = xp_worker_find(w, q->port ^ 1, q->queue);

	xp_tx_burst(w, peer, pkts, n, q);
}

void eng_mode_fwd(struct xp_engine_opts *o)
{
	o->name = "fwd";
	o->on_burst = fwd_burst;
	o->nports_min = 2;
	o->nports_max = 2;
	o->pair_queues = true;
}
