// SPDX-License-Identifier: BSD-3-Clause
/* l2fwd: swap the Ethernet addresses and send the packet back out of its own queue. */
#include <string.h>

#include "../engine.h"

static __u32 l2fwd_poll(struct eng_worker *w, struct eng_q *q)
{
	__u32 n = eng_rx(w, q, w->descs, w->e->cfg.batch), i;
	bool head = true;

	for (i = 0; i < n; i++) {
		struct xdp_desc *d = &w->descs[i];

		/* Only a packet's first buffer holds the Ethernet header. */
		if (head && d->len >= 12) {
			unsigned char *p = eng_data(q->dom, d->addr), tmp[6];

			memcpy(tmp, p, 6);
			memcpy(p, p + 6, 6);
			memcpy(p + 6, tmp, 6);
		}
		head = !(d->options & XDP_PKT_CONTD);
	}
	eng_tx(w, q, w->descs, n);
	return n;
}

const struct eng_mode eng_mode_l2fwd = {
	.name = "l2fwd",
	.needs_rx = true,
	.nports_min = 1,
	.nports_max = ENG_MAX_PORTS,
	.poll = l2fwd_poll,
};
