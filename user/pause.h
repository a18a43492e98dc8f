/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The workers' pause: the main thread parks every running worker between two loop
 * turns (where it holds no frame), for a stop-the-world audit (audit.c) or a handover's
 * state (handover_serve.c, handover_take.c), and lets them go.
 */
#ifndef XPILE_ENG_PAUSE_H
#define XPILE_ENG_PAUSE_H

struct engine;

/* Parks every running worker (@why for the message when they do not within 1 s): 0 or
 * -ETIMEDOUT (then nothing is paused). */
int eng_pause(struct engine *e, const char *why);
void eng_resume(struct engine *e);

#endif /* XPILE_ENG_PAUSE_H */
