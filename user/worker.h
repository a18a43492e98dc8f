/* SPDX-License-Identifier: BSD-3-Clause */
/* The per-core loop (worker.c): one pinned thread per core owning its queues' sockets. */
#ifndef XPILE_ENG_WORKER_H
#define XPILE_ENG_WORKER_H

#include <stdbool.h>
#include <linux/types.h>

/* The thread of worker @arg (a struct eng_worker): loops until the engine stops and the
 * worker drained, or it is handed over. */
void *eng_worker_main(void *arg);
/* Own-loop style, on the worker's thread: the top of a turn (false: leave the loop) and
 * its bottom after @work packets (the idle policy). */
struct eng_worker;
bool eng_turn_begin(struct eng_worker *w);
void eng_turn_end(struct eng_worker *w, __u32 work);

/*
 * Grace periods (e->grace, lib's xpile/qsbr.h): each worker reports a quiescent state at
 * the top of every loop turn, where it holds no pointer to a punt set, a capture rule or
 * a capture ring; it is offline while asleep in the idle wait or a nap and while parked
 * (an audit's or a handover's pause), so a sleeping worker holds no grace period up.
 * The control thread, after it unpublished something: eng_grace_start(), then frees it
 * once eng_grace_done() (or eng_grace_wait()) says so.
 */
struct engine;
int eng_grace_setup(struct engine *e); /* set-up stage: -ENOMEM after one line */
void eng_grace_destroy(struct engine *e);
__u64 eng_grace_start(struct engine *e);
bool eng_grace_done(struct engine *e, __u64 token);
/* Waits for @token at most @timeout_ms: false if a worker stayed online without a turn
 * that long (a worker_main that never calls xp_worker_turn()). */
bool eng_grace_wait(struct engine *e, __u64 token, unsigned int timeout_ms);

#endif /* XPILE_ENG_WORKER_H */
