/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The frame ledger's audits (audit.c): live every --interval while the workers run
 * (each worker cuts its own state between loop turns), stop-the-world on SIGUSR1 or
 * --audit (the workers parked), and at exit, frame by frame, once every socket closed.
 * Each says where every frame is; any frame lost or held twice fails the run (exit
 * status 3). --ledger-debug (dom.h) also checks every move where it happens.
 */
#ifndef XPILE_ENG_AUDIT_H
#define XPILE_ENG_AUDIT_H

#include <linux/types.h>

struct engine;
struct eng_worker;
struct eng_q;

/* The ring split every audit reports, from the sockets' indices at a cut. */
struct eng_split {
	__s64 fill_ring, kernel_rx, rx_ring, tx_ring, kernel_tx, comp_ring;
	__s64 fill_side, tx_side; /* frames the sockets hold, from our own indices */
	char bad[160]; /* a ring index out of bounds, when set */
};

/* The worker's hook, between loop turns, when the main thread asked for a cut. */
void eng_cut_take(struct eng_worker *w);
void eng_cut_ring(struct eng_q *q); /* records q->cut from the rings now */
void eng_split_add(struct eng_split *s, const struct eng_q *q); /* adds q->cut */

/* The live audit of every domain: 0, or -EUCLEAN (reported, counted for the exit). */
int eng_audit_live(struct engine *e);
/* Parks the workers, audits every domain, lets them go: 0 or -EUCLEAN. */
int eng_audit_now(struct engine *e);
/* Every domain with the workers parked or gone (@when: "audit", "exit"): 0 or -EUCLEAN;
 * at exit, a live audit that failed fails it too. */
int eng_audit_stopped(struct engine *e, const char *when);
/* After the sockets closed: every frame back into its pile, proven frame by frame. */
int eng_audit_reclaim(struct engine *e);

#endif /* XPILE_ENG_AUDIT_H */
