/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The engine's life (run.c): set-up and tear-down as one ordered stage table, and the
 * main thread's loop between them (signals, stats, audits, the watch, a handover).
 * main.c alone calls these; the core's types are engine.h.
 */
#ifndef XPILE_ENG_RUN_H
#define XPILE_ENG_RUN_H

struct engine;

int eng_setup(struct engine *e); /* 0, ENG_SETUP_FAILED or ENG_BAD_INPUT (engine.h) */
int eng_run(struct engine *e); /* returns the process exit status */
/* Undoes the stages set-up reached, in reverse; after a failed set-up too. */
void eng_teardown(struct engine *e);

#endif /* XPILE_ENG_RUN_H */
