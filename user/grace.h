/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Grace periods (grace.c) for what the control thread replaces under running workers,
 * on libxpile's xpile/qsbr.h (e->grace, one slot per worker): each worker reports a
 * quiescent state at the top of every loop turn (worker.c), where it holds no pointer
 * to a punt set, a capture rule or a capture ring; it is offline while asleep in the
 * idle wait or a nap and while parked (an audit's or a handover's pause), so a sleeping
 * worker holds no grace period up. The control thread, after it unpublished something:
 * eng_grace_start(), then frees it once eng_grace_done() (or eng_grace_wait()) says so.
 */
#ifndef XPILE_ENG_GRACE_H
#define XPILE_ENG_GRACE_H

#include <stdbool.h>
#include <linux/types.h>

struct engine;

int eng_grace_setup(struct engine *e); /* set-up stage: -ENOMEM after one line */
void eng_grace_destroy(struct engine *e);
__u64 eng_grace_start(struct engine *e);
bool eng_grace_done(struct engine *e, __u64 token);
/* Waits for @token at most @timeout_ms: false if a worker stayed online without a turn
 * that long (a worker_main that never calls xp_worker_turn()). */
bool eng_grace_wait(struct engine *e, __u64 token, unsigned int timeout_ms);

#endif /* XPILE_ENG_GRACE_H */
