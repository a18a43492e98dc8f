/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The ring moves every mode shares (rings.c), on the worker owning @q. What comes from
 * the kernel is checked before use: an RX descriptor or a completion address is taken
 * only when it points inside one frame of the queue's UMEM that the ledger has in fill
 * (RX) or tx (completion); anything else is counted in bad_descs and dropped.
 */
#ifndef XPILE_ENG_RINGS_H
#define XPILE_ENG_RINGS_H

#include <linux/types.h>
#include <linux/if_xdp.h>

struct engine;
struct eng_worker;
struct eng_q;
struct eng_dom;
struct eng_wdom;
struct xp_ledger_acct;

__u32 eng_refill(struct eng_worker *w, struct eng_q *q);
__u32 eng_complete(struct eng_worker *w, struct eng_q *q);
/* Up to @max descriptors from the RX ring (whole packets), captured (--capture); the
 * modes call eng_rx() (path.h), which also punts what is for the host TAP. */
__u32 eng_rx_ring(struct eng_worker *w, struct eng_q *q, struct xdp_desc *out, __u32 max);
__u32 eng_tx(struct eng_worker *w, struct eng_q *q, const struct xdp_desc *d, __u32 n);
/* Frees @n descriptors of @wd's domain to its dealer (@scratch: room for @n handles). */
void eng_free_descs(struct eng_wdom *wd, __u64 *scratch, const struct xdp_desc *d, __u32 n);
void eng_kick(struct eng_q *q);
/* d->starts, for the check that a kernel descriptor is a frame start (unaligned). */
int eng_dom_starts(struct eng_dom *d, const struct xp_ledger_acct *a);
/* The sockets stage: every domain's starts (after the frames stage made the accounts). */
int eng_rings_setup(struct engine *e);

#endif /* XPILE_ENG_RINGS_H */
