/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Frames a callback of the public API left unaccounted for (leak.c). A worker's frames
 * out with it in a domain (the ledger's APP count of its account) must be the ones it
 * holds (xp_pkt_hold()): the worker loop compares the two after each callback and each
 * own-loop turn; a difference is recorded at once and said at once with the debug
 * ledger, else by the main thread at the next audit.
 */
#ifndef XPILE_ENG_LEAK_H
#define XPILE_ENG_LEAK_H

#include "dom.h"
#include "engine.h"

/* Records and reports @out frames of @wd that @q's callback left behind. */
void eng_leak(struct eng_worker *w, struct eng_q *q, struct eng_wdom *wd, __s64 out);
/* The main thread, at each audit and at exit: says each new leak the workers recorded,
 * and, once they are gone, the frames still held. */
void eng_leaks_report(struct engine *e);

static inline void eng_leak_check(struct eng_worker *w, struct eng_q *q)
{
	struct eng_wdom *wd = q->wd;
	__s64 out = wd->acct->n[XP_PLACE_APP] - wd->held - wd->leaked;

	if (__builtin_expect(out != 0, 0))
		eng_leak(w, q, wd, out);
}

/* Every queue of @w (own-loop style: no callback boundary but the turn's). */
static inline void eng_leak_check_all(struct eng_worker *w)
{
	for (__u32 i = 0; i < w->nq; i++)
		eng_leak_check(w, w->q[i]);
}

#endif /* XPILE_ENG_LEAK_H */
