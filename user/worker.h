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

#endif /* XPILE_ENG_WORKER_H */
