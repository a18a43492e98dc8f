/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Helpers for the pile allocator suites: handle sets that look like UMEM frames,
 * a tracker of the handles a test holds (catches loss and duplication), and a log
 * hook that keeps the last library message for checks on error reporting.
 */
#ifndef XPILE_TESTS_PILE_CHECK_H
#define XPILE_TESTS_PILE_CHECK_H

#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "xpile/log.h"
#include "xpile/pool.h"
#include "xt.h"

#define PC_STRIDE 2048ull /* frame size of the fake UMEM */
#define PC_BASE 0x100000ull

/* Handle of frame i: PC_BASE + i * PC_STRIDE. */
static inline __u64 *pc_handles(__u32 n)
{
	__u64 *h = malloc((n ? n : 1) * sizeof(*h));

	for (__u32 i = 0; i < n; i++)
		h[i] = PC_BASE + i * PC_STRIDE;
	return h;
}

/* A pool of frames 0..n-1 with the given opts (sz is set here). */
static inline struct xp_pool *pc_pool(__u32 n, struct xp_pool_opts o)
{
	struct xp_pool *p = NULL;
	__u64 *h = pc_handles(n);

	o.sz = sizeof(o);
	XT_EQ(xp_pool_create(h, n, &o, &p), 0);
	free(h);
	return p;
}

static inline long pc_index(__u64 h, __u32 n)
{
	if (h < PC_BASE || (h - PC_BASE) % PC_STRIDE || (h - PC_BASE) / PC_STRIDE >= n)
		return -1;
	return (long)((h - PC_BASE) / PC_STRIDE);
}

/* Which handles the test holds (got from the pool and not yet returned). */
struct pc_held {
	__u32 n;
	__u32 count;
	unsigned char *in;
	__u64 *list; /* the held handles, in no particular order */
};

static inline void pc_held_init(struct pc_held *h, __u32 n)
{
	h->n = n;
	h->count = 0;
	h->in = calloc(n ? n : 1, 1);
	h->list = malloc((n ? n : 1) * sizeof(__u64));
}

static inline void pc_held_fini(struct pc_held *h)
{
	free(h->in);
	free(h->list);
}

/* Records handles just got; false (and a failed check) on a foreign or duplicate one. */
static inline bool pc_took(struct pc_held *h, const __u64 *objs, __u32 n)
{
	for (__u32 i = 0; i < n; i++) {
		long ix = pc_index(objs[i], h->n);

		if (!XT_CHECK(ix >= 0) || !XT_CHECK(!h->in[ix])) {
			fprintf(stderr, "  bad handle 0x%llx\n", (unsigned long long)objs[i]);
			return false;
		}
		h->in[ix] = 1;
		h->list[h->count++] = objs[i];
	}
	return true;
}

/* Removes the last @n held handles into @objs (to give them back). */
static inline void pc_give(struct pc_held *h, __u64 *objs, __u32 n)
{
	for (__u32 i = 0; i < n; i++) {
		__u64 x = h->list[--h->count];

		h->in[pc_index(x, h->n)] = 0;
		objs[i] = x;
	}
}

/* Removes n random held handles (so puts return a mixed order). */
static inline void pc_give_random(struct pc_held *h, __u64 *objs, __u32 n, unsigned int *seed)
{
	for (__u32 i = 0; i < n; i++) {
		__u32 j = (__u32)rand_r(seed) % h->count;
		__u64 x = h->list[j];

		h->list[j] = h->list[--h->count];
		h->in[pc_index(x, h->n)] = 0;
		objs[i] = x;
	}
}

static char pc_last_log[512];
static int pc_log_count;

static int pc_log_hook(enum xp_log_level level, const char *fmt, va_list ap)
{
	if (level > XP_LOG_WARN)
		return 0;
	pc_log_count++;
	return vsnprintf(pc_last_log, sizeof(pc_last_log), fmt, ap);
}

/* Captures library messages from now on; pc_logged() checks the last one. */
static inline void pc_log_capture(void)
{
	xp_set_log_fn(pc_log_hook);
	pc_last_log[0] = 0;
}

static inline bool pc_logged(const char *needle)
{
	bool ok = strstr(pc_last_log, needle) != NULL;

	if (!ok)
		fprintf(stderr, "  expected a message with '%s', last was '%s'\n", needle,
			pc_last_log);
	pc_last_log[0] = 0;
	return ok;
}

/* Exact conservation at quiescence: pool + caches + what the test holds == N. */
#define PC_CONSERVED(p, held)                                                                 \
	do {                                                                                  \
		XT_EQ(xp_pool_avail(p) + xp_pool_cached(p) + (held)->count, xp_pool_size(p)); \
		XT_EQ(xp_pool_in_use(p), (held)->count);                                      \
		XT_EQ(xp_pool_audit(p), 0);                                                   \
	} while (0)

#endif
