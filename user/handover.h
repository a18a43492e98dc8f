/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The engine's hot handover (docs/engine.md, "Handover"): `--handover PATH` serves a
 * successor on a Unix socket, `--take-over PATH` is that successor. The library pieces
 * (channel, UMEM and socket records, import) are xpile/handover.h; this file is the
 * engine's protocol over them: HELLO (new: version, config) -> OFFER (old: UMEM memfds,
 * socket fds, layout) -> READY (new: all mapped) -> the old engine parks its workers at
 * a batch boundary -> STATE (old: ledger, ring indices) -> OK (new: pool rebuilt and
 * checked) -> COMMIT (old: it will never touch the rings again) -> the new one polls,
 * the old one exits 0. Any failure before COMMIT leaves the old engine running.
 */
#ifndef XPILE_ENG_HANDOVER_H
#define XPILE_ENG_HANDOVER_H

#include <signal.h>
#include <linux/types.h>

struct engine;
struct eng_q;

/* What eng_ho_wait() returns when this engine has handed everything over. */
#define ENG_HO_DONE (-100)

/* eng_setup(), before the UMEM: --take-over connects and takes the offer (UMEM mapped,
 * layout and frames adopted); --handover listens. 0, or ENG_SETUP_FAILED /
 * -ENG_BAD_INPUT after one line. */
int eng_ho_setup(struct engine *e);
/* setup_sockets(): socket @q from the offer instead of a new one: 0 or -1 (said). */
int eng_ho_import_xsk(struct engine *e, struct eng_q *q);
/* eng_run(), the new side with its workers parked: the ledger, the pool, OK, COMMIT.
 * 0: ours, the workers may go; -1 (said): nothing is ours, the old engine keeps it. */
int eng_ho_take(struct engine *e);
/* The main loop's wait when --handover listens: up to @ts for a signal of @set
 * (returned as sigtimedwait() would) or a successor, served at once: ENG_HO_DONE once
 * everything is handed over. */
int eng_ho_wait(struct engine *e, const sigset_t *set, const struct timespec *ts, siginfo_t *si);
/* The main loop, new side: the pause line once every worker has polled again. */
void eng_ho_tick(struct engine *e);
/* Teardown: listener and connection closed, the socket path removed if still ours. */
void eng_ho_close(struct engine *e);

#endif /* XPILE_ENG_HANDOVER_H */
