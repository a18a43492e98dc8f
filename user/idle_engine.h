/* SPDX-License-Identifier: BSD-3-Clause */
/* The idle policy's engine side (idle_engine.c); the policy itself is idle.h's. */
#ifndef XPILE_IDLE_ENGINE_H
#define XPILE_IDLE_ENGINE_H

#include <stdbool.h>

struct engine;

/* Before the workers start: what a wake-up costs here (measured on the first worker's
 * core unless --idle-wake-us gave it), then one line saying it, the thresholds it sets
 * and which busy-poll path is in use. */
void eng_idle_setup(struct engine *e);
/* Before the sockets: true where busy polling pays without --busy-poll, every port
 * deferring its IRQs (napi_defer_hard_irqs and gro_flush_timeout set, as the kernel's
 * AF_XDP busy-poll documentation has it): the sockets then prefer busy polling, and
 * each queue's worker drives its NAPI once the queue shows a NAPI id. */
bool eng_busy_poll_auto(const struct engine *e);
/* --json: one idle line per worker, its policy's choice and counts, at @t seconds. */
void eng_idle_stats(const struct engine *e, double t);

#endif /* XPILE_IDLE_ENGINE_H */
