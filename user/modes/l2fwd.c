// SPDX-License-Identifier: BSD-3-Clause
/* l2fwd: swap the Ethernet addresses and send the packet back out of its own queue.
 * Public API only (xpile/engine.h, xpile/pkt.h). */
#include <string.h>

#include "xpile/engine.h"
#include "l2fwd.h"

static void l2fwd_burst(struct xp_worker *w, struct xp_queue *q, struct xp_pkt *pkts, __u32 n,
			void *arg)
{
	bool head = true;

	for (__u32 i = 0; i < n; i++) {
		/* Only a packet's first buffer holds the Ethernet header. */
		if (head && pkts[i].len >= 12) {
			unsigned char *p = xp_pkt_data(q, &pkts[i]), tmp[6];

			memcpy(tmp, p, 6);
			memcpy(p, p + 6, 6);
			memcpy(p + 6, tmp, 6);
		}
		head = !xp_pkt_more(&pkts[i]);
	}
	xp_tx_burst(w, q, pkts, n, NULL);
}

void eng_mode_l2fwd(struct xp_engine_opts *o)
{
	o->name = "l2fwd";
	o->on_burst = l2fwd_burst;
}
