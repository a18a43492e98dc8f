/* SPDX-License-Identifier: BSD-3-Clause */
/* The serving side of the handover (handover_serve.c): --handover PATH. */
#ifndef XPILE_ENG_HANDOVER_SERVE_H
#define XPILE_ENG_HANDOVER_SERVE_H

#include <signal.h>
#include <time.h>

struct engine;

/* What eng_ho_wait() returns when this engine has handed everything over. */
#define ENG_HO_DONE (-100)

/* --handover PATH: listen there (a successor does so once it has committed): 0 or
 * -errno (said). */
int ho_listen(struct engine *e);
/* The main loop's wait when --handover listens: up to @ts for a signal of @set
 * (returned as sigtimedwait() would) or a successor, served at once: ENG_HO_DONE once
 * everything is handed over. */
int eng_ho_wait(struct engine *e, const sigset_t *set, const struct timespec *ts, siginfo_t *si);

#endif /* XPILE_ENG_HANDOVER_SERVE_H */
