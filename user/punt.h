/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The host TAP's punt rules (punt.c): what --punt gave, and what the control socket
 * adds and deletes while the engine runs (`punt add|del|list`). The workers read the
 * set in force through one pointer (acquire) and never wait: a change builds a new set
 * and publishes it; the set it replaced is retired and freed once a grace period has
 * passed (worker.h: every worker had a turn, or slept, since), at the next change or
 * the control thread's next tick. A run takes any number of changes.
 */
#ifndef XPILE_ENG_PUNT_H
#define XPILE_ENG_PUNT_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>

#include "xpile/steer.h"

#define ENG_PUNT_MAX 16

struct engine;

struct eng_punt_set {
	__u32 n;
	__u32 id[ENG_PUNT_MAX];
	struct xp_rule r[ENG_PUNT_MAX];
	char text[ENG_PUNT_MAX][128];
	/* Retired (replaced): the grace period's token, the next older retired set. */
	__u64 token;
	struct eng_punt_set *older;
};

struct eng_punt {
	struct eng_punt_set *cur; /* published with release, read with acquire */
	struct eng_punt_set *retired; /* newest first, each waiting for its grace period */
	__u32 next_id, nretired;
	__u64 changes, freed; /* in this run */
	pthread_mutex_t mu; /* changes and reclamation (the control thread) */
};

/* The taps' set-up: the set --punt gives (@first, or NULL: empty). 0 or -ENOMEM. */
int eng_punt_init(struct engine *e, const struct xp_rule *first);
void eng_punt_free(struct engine *e);
/* Adds @text (rule words, no action): its id, or -errno with why in @why. */
int eng_punt_add(struct engine *e, const char *text, char *why, size_t len);
/* Deletes rule @id: 0, -ENOENT, or -ENOMEM. */
int eng_punt_del(struct engine *e, __u32 id);
/* Frees the retired sets whose grace period has passed (the control thread's tick). */
void eng_punt_reclaim(struct engine *e);

/* The worker's test: does a rule in force match? */
static inline bool eng_punt_match(const struct eng_punt *p, const __u8 *pkt, __u32 len, __u32 queue)
{
	const struct eng_punt_set *s = __atomic_load_n(&p->cur, __ATOMIC_ACQUIRE);

	for (__u32 i = 0; i < s->n; i++)
		if (xp_rule_match(&s->r[i], pkt, len, queue))
			return true;
	return false;
}

#endif /* XPILE_ENG_PUNT_H */
