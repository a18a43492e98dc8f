/* SPDX-License-Identifier: BSD-3-Clause */
/* The taking side of the handover (handover_take.c): --take-over PATH. */
#ifndef XPILE_ENG_HANDOVER_TAKE_H
#define XPILE_ENG_HANDOVER_TAKE_H

struct engine;
struct eng_q;

/* Connect, say HELLO, take the OFFER and map its UMEMs (eng_ho_setup()). */
int ho_take_offer(struct engine *e);
/* The sockets stage: socket @q from the offer instead of a new one: 0 or -errno (said). */
int eng_ho_import_xsk(struct engine *e, struct eng_q *q);
/* eng_run(), with the workers parked: the ledger, the pool, OK, COMMIT. 0: ours, the
 * workers may go; -errno (said): nothing is ours, the old engine keeps it. */
int eng_ho_take(struct engine *e);
/* The main loop: the pause line once every worker has polled again. */
void eng_ho_tick(struct engine *e);

#endif /* XPILE_ENG_HANDOVER_TAKE_H */
