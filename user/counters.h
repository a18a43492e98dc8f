/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The workers' counters read from another thread (counters.c): one relaxed 64-bit load
 * each, so a reading may mix two batches. The stats lines and the control socket read
 * them alike.
 */
#ifndef XPILE_ENG_COUNTERS_H
#define XPILE_ENG_COUNTERS_H

#include <stddef.h>
#include <linux/types.h>

#include "xpile/deal.h"
#include "xpile/pool.h"

struct engine;
struct eng_dom;
struct eng_q;
struct eng_counters;

/* A domain's allocator figures summed over its workers. */
struct eng_alloc_sum {
	struct xp_cache_stats cache;
	struct xp_deal_stats deal;
	__u64 copied; /* frames copied in from another UMEM */
};

/* Copies a struct of __u64 counters another thread is updating, one load each. */
void eng_snap_u64s(const void *from, void *to, size_t bytes);
/* @q's counters (an engine that only sends: a packet counts as sent once completed). */
void eng_counters_snap(const struct engine *e, const struct eng_q *q, struct eng_counters *c);
void eng_alloc_sum(struct engine *e, const struct eng_dom *d, struct eng_alloc_sum *out);

#endif /* XPILE_ENG_COUNTERS_H */
