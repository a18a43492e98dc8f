/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The data path as the modes see it: the ring moves (rings.h) with the host TAP's punt
 * after RX. Inline, so the TAP hook is a direct call from the mode (no function
 * pointer on the per-packet path) while rings.c, which the TAP's inject calls, knows
 * nothing of the TAP.
 */
#ifndef XPILE_ENG_PATH_H
#define XPILE_ENG_PATH_H

#include "dom.h"
#include "engine.h"
#include "rings.h"
#include "tap.h"

/* Up to @max received descriptors (whole packets); what is for the host has left the
 * batch for its TAP. */
static inline __u32 eng_rx(struct eng_worker *w, struct eng_q *q, struct xdp_desc *out, __u32 max)
{
	__u32 k = eng_rx_ring(w, q, out, max);

	if (w->tapw)
		k = eng_tap_rx(w, q, out, k);
	return k;
}

#endif /* XPILE_ENG_PATH_H */
