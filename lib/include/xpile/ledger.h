/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The frame ledger: every UMEM frame is in exactly one place at any time, and the
 * ledger knows which.
 *
 *   FREE  the pile or a core's cache          (the allocator proves which, xp_pool_audit)
 *   FILL  a fill ring, the kernel, an RX ring (posted for receive, not yet consumed)
 *   APP   the application                     (consumed from RX or allocated for TX)
 *   TX    a TX ring, the kernel, a completion ring (posted for transmit, not completed)
 *   URING in flight in io_uring                (a write from the frame or a read into it
 *                                               posted, not completed: a host TAP's I/O)
 *
 * Always on: one state byte per frame (enum xp_place), written by every move, and
 * per-thread counts. Each thread moves frames through its own account (struct
 * xp_ledger_acct): counts are thread-private additions, and the byte of a frame is
 * written only by the thread that holds the frame, so nothing is shared or atomic.
 * A frame's byte is found without a search: its slot is (address & 48 bits) >> shift,
 * shift being the largest power of two not above the smallest distance between two
 * handles (a frame's bytes never reach the next frame's slot). Which sub-place of
 * FILL or TX (ring, kernel, ring) a frame is in is the kernel's business: callers
 * read it from the ring indices.
 *
 * Debug mode (opts.debug) also checks every transition against the byte: a frame
 * received that was never posted, completed twice, freed while in a ring or handed
 * out twice is counted and logged where it happens (first XP_LEDGER_LOG_MAX).
 *
 * Audits. xp_ledger_audit() is exact at quiescence (every account's owner stopped
 * between batches): counts, bytes and what the caller observed must all agree.
 * xp_ledger_audit_live() needs no pause: it takes a cut (each owner copies its
 * account between two moves, xp_ledger_cut_take(), at its own moment) and checks
 * the cut exactly against what the owners observed at their cut, and the state
 * bytes against the cut within the frames moved since (exact when none moved).
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
	XP_PLACE_URING,
	XP_PLACE_MAX,
};
/* State byte of a slot that is no frame's. */
#define XP_PLACE_NONE 0xff
/* The address bits that locate a frame (unaligned-chunk UMEMs carry an offset above). */
#define XP_LEDGER_ADDR_MASK ((1ull << 48) - 1)

#define XP_LEDGER_LOG_MAX 8

struct xp_ledger;

/* Per-thread account: counts are deltas from the initial state (all frames FREE).
 * ABI: xp_ledger_move() updates it in place in callers (tests/unit/test_abi.c). */
struct xp_ledger_acct {
	__s64 n[XP_PLACE_MAX];
	struct xp_ledger *ledger;
	__u8 *state; /* the ledger's state bytes, one per slot */
	__u64 nslots;
	__u64 moved; /* frames moved through this account, ever (live-audit bound) */
	__u32 shift; /* slot of an address: (addr & XP_LEDGER_ADDR_MASK) >> shift */
	bool debug;
};

struct xp_ledger_opts {
	size_t sz; /* sizeof(struct xp_ledger_opts); the rule: xpile/opts.h */
	const __u64 *handles; /* every frame's handle (copied), any order */
	__u32 nframes;
	__u32 max_accts; /* threads that will move frames (default 64) */
	bool debug; /* every transition checked against the frame's state byte */
	/* Maps a ring address (upper bits allowed) to its frame handle (debug checks: the
	 * address must then be exactly a frame's; NULL: any address in its slot). */
	__u64 (*handle_of)(void *ctx, __u64 addr);
	void *ctx;
};
#define xp_ledger_opts__last_field ctx

/*
 * Creates a ledger of @o->nframes frames, all FREE, with room for @o->max_accts
 * accounts. Ring addresses handed to moves must locate their frame by their low 48
 * bits: the handle itself (unaligned chunks: the offset rides above), or handle +
 * offset where handles are aligned to their spacing (aligned chunks). *@out is the
 * caller's to xp_ledger_destroy(). -EINVAL: no handles or no frames, a handle given
 * twice, handles so sparse that the state bytes would take over 64 per frame, the
 * opts rule; -ENOMEM.
 */
XP_API int xp_ledger_create(const struct xp_ledger_opts *o, struct xp_ledger **out);
/* Frees the ledger and every account it handed out (NULL is fine). */
XP_API void xp_ledger_destroy(struct xp_ledger *l);
/* A new account for one thread, owned by the ledger (lives as long as it): 0, or
 * -ENOSPC once max_accts accounts exist. */
XP_API int xp_ledger_acct_new(struct xp_ledger *l, struct xp_ledger_acct **out);
/* "free", "fill", "app", "tx", "uring", or "?" outside the enum (static strings). */
XP_API const char *xp_place_name(enum xp_place p);

/* Cold part of xp_ledger_move (debug mode): checks and updates the state bytes of the
 * @n frames at @addrs (@stride bytes apart), logging the first XP_LEDGER_LOG_MAX bad
 * transitions. Returns the number of bad transitions. */
XP_API __u32 xp_ledger_check(struct xp_ledger_acct *a, enum xp_place from, enum xp_place to,
			     const __u64 *addrs, __u32 n, size_t stride);

/* Cold part of xp_ledger_mark(): an address beyond the last slot is never written; it
 * counts (and logs) as a bad transition. Nothing in debug mode, where the check has
 * dealt with it. */
XP_API void xp_ledger_stray(struct xp_ledger_acct *a, __u64 addr, enum xp_place to);

/*
 * A move in two halves, for callers that already loop over the frames (a ring copy):
 * xp_ledger_count() once per batch (the counts; debug mode: also the check and the
 * bytes), then xp_ledger_mark() per frame inside the caller's loop (the byte: a mask,
 * a shift, a bound and a store) through a map taken from the account once per batch
 * (a local copy, so the byte stores cannot make the compiler reload the account).
 * The count must come first: a live audit that sees a byte changed must also see the
 * move counted (its bound, xp_ledger_audit_live()).
 */
struct xp_ledger_map {
	__u8 *state;
	__u64 nslots; /* 0 in debug mode: the check writes the bytes */
	__u32 shift;
	struct xp_ledger_acct *acct;
};

static inline struct xp_ledger_map xp_ledger_map_get(struct xp_ledger_acct *a)
{
	struct xp_ledger_map m = { a->state, a->debug ? 0 : a->nslots, a->shift, a };

	return m;
}

static inline void xp_ledger_mark(const struct xp_ledger_map *m, __u64 addr, enum xp_place to)
{
	__u64 s = (addr & XP_LEDGER_ADDR_MASK) >> m->shift;

	if (__builtin_expect(s < m->nslots, 1))
		__atomic_store_n(&m->state[s], (__u8)to, __ATOMIC_RELAXED);
	else
		xp_ledger_stray(m->acct, addr, to);
}

/* The counts half of a move of @n frames @from -> @to (addresses as for
 * xp_ledger_move_strided(), read only in debug mode). */
static inline void xp_ledger_count(struct xp_ledger_acct *a, enum xp_place from, enum xp_place to,
				   const void *addrs, __u32 n, size_t stride)
{
	a->n[from] -= n;
	a->n[to] += n;
	a->moved += n;
	/* The count before the bytes (a compiler barrier on x86). */
	__atomic_thread_fence(__ATOMIC_RELEASE);
	if (__builtin_expect(a->debug, 0))
		xp_ledger_check(a, from, to, (const __u64 *)addrs, n, stride);
}

/*
 * Records that @n frames moved @from -> @to. @addrs are their ring addresses (upper
 * bits allowed), @stride the byte distance between consecutive addresses (8 for a
 * __u64 array, sizeof(struct xdp_desc) for descriptors). Each frame's state byte is
 * written; debug mode checks it first.
 */
static inline void xp_ledger_move_strided(struct xp_ledger_acct *a, enum xp_place from,
					  enum xp_place to, const void *addrs, __u32 n,
					  size_t stride)
{
	struct xp_ledger_map m = xp_ledger_map_get(a);
	const char *p = (const char *)addrs;

	xp_ledger_count(a, from, to, addrs, n, stride);
	for (__u32 i = 0; i < n; i++, p += stride)
		xp_ledger_mark(&m, *(const __u64 *)p, to);
}

/* xp_ledger_move_strided() over a plain array of ring addresses. */
static inline void xp_ledger_move(struct xp_ledger_acct *a, enum xp_place from, enum xp_place to,
				  const __u64 *addrs, __u32 n)
{
	xp_ledger_move_strided(a, from, to, addrs, n, sizeof(__u64));
}

struct xp_ledger_report {
	__s64 place[XP_PLACE_MAX]; /* frames per place, summed over accounts (or the cut) */
	__s64 state[XP_PLACE_MAX]; /* frames per state byte */
	__u64 bad_transitions; /* transitions that did not match the state (debug), moves of
				  addresses beyond the last slot (always) */
	__u64 slack; /* live: frames moved between the cut and the end of the byte scan */
	__u32 nframes;
	bool ok;
	bool live; /* from xp_ledger_audit_live() */
	char why[256]; /* first discrepancy, when !ok */
};

/*
 * Audits at quiescence. @observed[place] is what the caller found independently in
 * that place (e.g. FREE: what the allocator holds), -1 = not checked; NULL: none.
 * Returns 0 when every frame is in exactly one place, the counts and the state bytes
 * agree and the ledger matches what was observed, -EUCLEAN otherwise (the first
 * reason in r->why).
 */
XP_API int xp_ledger_audit(struct xp_ledger *l, const __s64 observed[XP_PLACE_MAX],
			   struct xp_ledger_report *r);

/* One account's counts at one moment of its owner's choosing (between two moves). */
struct xp_ledger_cut {
	__s64 n[XP_PLACE_MAX];
	__u64 moved;
};

/* Called by the account's owner thread: copies its counts into @c. */
static inline void xp_ledger_cut_take(const struct xp_ledger_acct *a, struct xp_ledger_cut *c)
{
	for (int p = 0; p < XP_PLACE_MAX; p++)
		c->n[p] = a->n[p];
	c->moved = a->moved;
}

/* Frames moved through every account so far (relaxed loads: any thread, any time). */
XP_API __u64 xp_ledger_moved(const struct xp_ledger *l);

/*
 * Audits while the accounts' owners keep moving frames. @cuts holds one cut per
 * account (xp_ledger_cut_take() by each owner, in any order; @ncuts must be the number
 * of accounts created); @observed[place] what the owners observed in that place at
 * their cuts (-1 = not checked). Exact: the cut's places sum to the frames, none is
 * negative, each matches @observed; every frame has a state byte, none is no frame's.
 * Within bounds: the bytes, scanned after the cut, differ from the cut's counts by at
 * most r->slack per place, the frames moved since the cut (0 when nothing moved: exact).
 * 0, -EUCLEAN (reason in r->why), -EINVAL (@ncuts is not the number of accounts).
 */
XP_API int xp_ledger_audit_live(struct xp_ledger *l, const struct xp_ledger_cut *cuts, __u32 ncuts,
				const __s64 observed[XP_PLACE_MAX], struct xp_ledger_report *r);
/* One-line (ok) or multi-line (not ok) report. */
XP_API void xp_ledger_report_print(const struct xp_ledger_report *r, FILE *f);

/*
 * Writes to @out up to @max handles of frames whose state is @p, in handle order
 * (e.g. what the kernel still held in FILL/TX when its sockets closed); returns how
 * many. Exact at quiescence.
 */
XP_API __u32 xp_ledger_frames_in(struct xp_ledger *l, enum xp_place p, __u64 *out, __u32 max);
/* State of the frame at ring address @addr: an enum xp_place, or XP_PLACE_NONE if the
 * address is no frame's (relaxed: any thread, exact at quiescence). */
XP_API int xp_ledger_state_of(const struct xp_ledger *l, __u64 addr);

#ifdef __cplusplus
}
#endif

#endif /* XPILE_LEDGER_H */
