/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Stats (stats.c): a live line per socket every --interval and a summary at exit, as
 * text or (--json) one JSON object per line, then the allocator figures; the main
 * thread reads the workers' counters and never writes them.
 */
#ifndef XPILE_ENG_STATS_H
#define XPILE_ENG_STATS_H

#include <stdbool.h>

struct engine;

/* Every socket's line (@final: the summary), the allocator's, and the live audit. */
void eng_stats_tick(struct engine *e, bool final);
void eng_stats_allocator(struct engine *e, bool final);

#endif /* XPILE_ENG_STATS_H */
