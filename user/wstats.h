/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A worker's own time accounts, as OVS's pmd-stats-show gives them: the cycles of loop
 * turns that did work (moved packets or frames: busy) and of those that did not (idle,
 * sleeps included), the turns, the sleeps and the wake-ups (a sleep the next turn
 * found work after).
 * Written by the worker alone, one timestamp counter read per turn and plain stores;
 * the control thread reads them with relaxed loads (ctl_cmds.c), so a reading may mix
 * two turns and never costs the worker a shared cache line it writes.
 */
#ifndef XPILE_ENG_WSTATS_H
#define XPILE_ENG_WSTATS_H

#include <stdbool.h>
#include <linux/types.h>

#include "clock.h"

struct eng_wstats {
	__u64 busy_cycles, idle_cycles; /* turns that did work / did not */
	__u64 turns, sleeps, wakeups;
	__u64 last; /* the previous turn's end (worker only) */
	bool slept; /* the previous turn ended in a sleep (worker only) */
};

/* A cycle counter: the TSC on x86 (constant rate on every CPU since Nehalem), the
 * virtual counter on arm64, else nanoseconds; rates come from wall time (ctl_cmds.c). */
static inline __u64 eng_cycles(void)
{
#if defined(__x86_64__) || defined(__i386__)
	return __builtin_ia32_rdtsc();
#elif defined(__aarch64__)
	__u64 v;

	__asm__ volatile("mrs %0, cntvct_el0" : "=r"(v));
	return v;
#else
	return ut_now_ns();
#endif
}

static inline void eng_wstats_store(__u64 *p, __u64 v)
{
	__atomic_store_n(p, v, __ATOMIC_RELAXED);
}

/* End of a loop turn that did @work (packets and frames moved). */
static inline void eng_wstats_turn(struct eng_wstats *s, __u32 work)
{
	__u64 now = eng_cycles(), d = s->last ? now - s->last : 0;

	s->last = now;
	eng_wstats_store(&s->turns, s->turns + 1);
	if (work) {
		eng_wstats_store(&s->busy_cycles, s->busy_cycles + d);
		if (s->slept)
			eng_wstats_store(&s->wakeups, s->wakeups + 1);
	} else {
		eng_wstats_store(&s->idle_cycles, s->idle_cycles + d);
	}
	s->slept = false;
}

/* Before an idle sleep. */
static inline void eng_wstats_sleep(struct eng_wstats *s)
{
	eng_wstats_store(&s->sleeps, s->sleeps + 1);
	s->slept = true;
}

#endif /* XPILE_ENG_WSTATS_H */
