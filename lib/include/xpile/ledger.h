/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The frame ledger: every UMEM frame is in exactly one place at any time.
 *
 *   FREE  the pile or a core's cache          (the allocator proves which, xp_pool_audit)
 *   FILL  a fill ring, the kernel, an RX ring (posted for receive, not yet consumed)
 *   APP   the application                     (consumed from RX or allocated for TX)
 *   TX    a TX ring, the kernel, a completion ring (posted for transmit, not completed)
 *
 * Each thread moves frames through its own account (struct xp_ledger_acct): a move is
 * two additions on thread-private counters, so counting costs nothing shared. The ring
 * split (fill ring vs kernel vs RX ring) is read from the ring indices when auditing.
 *
 * Debug mode (opts.debug) keeps one state byte per frame and checks every transition:
 * a frame received that was never posted, completed twice, freed while in a ring or
 * handed out twice is counted and logged where it happens (first XP_LEDGER_LOG_MAX).
 * Off, the check is one predictable branch.
 *
 * An audit (xp_ledger_audit) is exact only at quiescence: every account's owner stopped
 * between batches. It compares the ledger with what the caller observed independently
 * (the pool's free count, the rings), and fails on any difference.
 */
#ifndef XPILE_LEDGER_H
#define XPILE_LEDGER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <linux/types.h>

#include "xpile/api.h"
#include "xpile/opts.h"

#ifdef __cplusplus
extern "C" {
#endif

enum xp_place {
	XP_PLACE_FREE,
	XP_PLACE_FILL,
	XP_PLACE_APP,
	XP_PLACE_TX,
	XP_PLACE_MAX,
};

#define XP_LEDGER_LOG_MAX 8

struct xp_ledger;

/* Per-thread account: counts are deltas from the initial state (all frames FREE).
 * ABI: xp_ledger_move() updates it in place in callers (tests/unit/test_abi.c). */
struct xp_ledger_acct {
	__s64 n[XP_PLACE_MAX];
	struct xp_ledger *ledger;
	bool debug;
};

struct xp_ledger_opts {
	size_t sz; /* sizeof(struct xp_ledger_opts); the rule: xpile/opts.h */
	const __u64 *handles; /* every frame's handle (copied), any order */
	__u32 nframes;
	__u32 max_accts; /* threads that will move frames (default 64) */
	bool debug; /* per-frame state byte, every transition checked */
	/* Maps a ring address (upper bits allowed) to its frame handle (debug lookups). */
	__u64 (*handle_of)(void *ctx, __u64 addr);
	void *ctx;
};
#define xp_ledger_opts__last_field ctx

/*
 * Creates a ledger of @o->nframes frames, all FREE, with room for @o->max_accts
 * accounts; the handles are copied (debug mode sorts them to find a frame's state
 * byte). *@out is the caller's to xp_ledger_destroy(). -EINVAL: no handles or no
 * frames, a handle given twice (debug mode), the opts rule; -ENOMEM.
 */
XP_API int xp_ledger_create(const struct xp_ledger_opts *o, struct xp_ledger **out);
/* Frees the ledger and every account it handed out (NULL is fine). */
XP_API void xp_ledger_destroy(struct xp_ledger *l);
/* A new account for one thread, owned by the ledger (lives as long as it): 0, or
 * -ENOSPC once max_accts accounts exist. */
XP_API int xp_ledger_acct_new(struct xp_ledger *l, struct xp_ledger_acct **out);
/* "free", "fill", "app", "tx", or "?" outside the enum (static strings). */
XP_API const char *xp_place_name(enum xp_place p);

/* Cold part of xp_ledger_move (debug mode): checks and updates the state bytes of the
 * @n frames at @addrs (@stride bytes apart), logging the first XP_LEDGER_LOG_MAX bad
 * transitions. Returns the number of bad transitions. */
XP_API __u32 xp_ledger_check(struct xp_ledger_acct *a, enum xp_place from, enum xp_place to,
			     const __u64 *addrs, __u32 n, size_t stride);

/*
 * Records that @n frames moved @from -> @to. @addrs are their ring addresses (upper
 * bits allowed), @stride the byte distance between consecutive addresses (8 for a
 * __u64 array, sizeof(struct xdp_desc) for descriptors); only read in debug mode.
 */
static inline void xp_ledger_move_strided(struct xp_ledger_acct *a, enum xp_place from,
					  enum xp_place to, const void *addrs, __u32 n,
					  size_t stride)
{
	a->n[from] -= n;
	a->n[to] += n;
	if (__builtin_expect(a->debug, 0))
		xp_ledger_check(a, from, to, (const __u64 *)addrs, n, stride);
}

/* xp_ledger_move_strided() over a plain array of ring addresses. */
static inline void xp_ledger_move(struct xp_ledger_acct *a, enum xp_place from, enum xp_place to,
				  const __u64 *addrs, __u32 n)
{
	xp_ledger_move_strided(a, from, to, addrs, n, sizeof(__u64));
}

struct xp_ledger_report {
	__s64 place[XP_PLACE_MAX]; /* frames per place, summed over accounts */
	__s64 state[XP_PLACE_MAX]; /* debug: frames per state byte (else -1) */
	__u64 bad_transitions; /* debug: transitions that did not match the state */
	__u32 nframes;
	bool ok;
	char why[256]; /* first discrepancy, when !ok */
};

/*
 * Audits at quiescence. @observed_free is what the allocator holds (pile + caches), or
 * -1 if unknown; @observed[place] likewise for the other places (-1 = not checked).
 * Returns 0 when every frame is in exactly one place and the ledger matches what was
 * observed, -EUCLEAN otherwise (with the reason in r->why).
 */
XP_API int xp_ledger_audit(struct xp_ledger *l, const __s64 observed[XP_PLACE_MAX],
			   struct xp_ledger_report *r);
/* One-line (ok) or multi-line (not ok) report. */
XP_API void xp_ledger_report_print(const struct xp_ledger_report *r, FILE *f);

/*
 * Debug mode: writes to @out up to @max handles of frames whose state is @p (e.g. what
 * the kernel still held in FILL/TX when its sockets closed); returns how many.
 */
XP_API __u32 xp_ledger_frames_in(struct xp_ledger *l, enum xp_place p, __u64 *out, __u32 max);

#ifdef __cplusplus
}
#endif

#endif /* XPILE_LEDGER_H */
