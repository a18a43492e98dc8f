// SPDX-License-Identifier: BSD-3-Clause
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "log_internal.h"
#include "opts_internal.h"
#include "xpile/ledger.h"

/* Each account on lines of its own: workers moving frames never share a cache line. */
struct acct_slot {
	struct xp_ledger_acct a;
} __attribute__((aligned(128)));

struct xp_ledger {
	__u32 nframes;
	__u32 max_accts;
	__u32 naccts;
	__u32 shift;
	bool debug;
	__u64 nslots;
	__u8 *state; /* enum xp_place per slot, XP_PLACE_NONE where no frame starts */
	__u64 *slot_handle; /* the handle of each frame's slot (names frames in reports) */
	__u64 bad; /* bad transitions (atomic) */
	__u64 (*handle_of)(void *ctx, __u64 addr);
	void *ctx;
	struct acct_slot *accts;
};

static const char *const place_names[XP_PLACE_MAX] = {
	[XP_PLACE_FREE] = "free", [XP_PLACE_FILL] = "fill",   [XP_PLACE_APP] = "app",
	[XP_PLACE_TX] = "tx",	  [XP_PLACE_URING] = "uring",
};

const char *xp_place_name(enum xp_place p)
{
	return (unsigned int)p < XP_PLACE_MAX ? place_names[p] : "?";
}

static int cmp_u64(const void *a, const void *b)
{
	__u64 x = *(const __u64 *)a, y = *(const __u64 *)b;

	return x < y ? -1 : x > y;
}

/* The slot shift: the largest power of two not above the smallest handle distance,
 * so two handles never share a slot. -EINVAL on a handle given twice. */
static int pick_shift(const __u64 *sorted, __u32 n, __u32 *shift)
{
	__u64 gap = ~0ull;
	__u32 i;

	for (i = 1; i < n; i++) {
		if (sorted[i] == sorted[i - 1]) {
			xp_err("ledger: handle %#llx given twice\n", (unsigned long long)sorted[i]);
			return -EINVAL;
		}
		if (sorted[i] - sorted[i - 1] < gap)
			gap = sorted[i] - sorted[i - 1];
	}
	*shift = gap == ~0ull ? 12 : 63 - __builtin_clzll(gap);
	return 0;
}

int xp_ledger_create(const struct xp_ledger_opts *opts, struct xp_ledger **out)
{
	struct xp_ledger_opts oc;
	const struct xp_ledger_opts *o = &oc;
	struct xp_ledger *l;
	__u64 *sorted = NULL;
	__u32 i;
	int err;

	if (!XP_OPTS_LOAD_LOG("ledger", &oc, opts, xp_ledger_opts))
		return -EINVAL;
	if (!out || !o->nframes || !o->handles) {
		xp_err("ledger: invalid options (handles and a frame count are required)\n");
		return -EINVAL;
	}
	for (i = 0; i < o->nframes; i++) {
		if (o->handles[i] > XP_LEDGER_ADDR_MASK) {
			xp_err("ledger: handle %#llx beyond 48 bits\n",
			       (unsigned long long)o->handles[i]);
			return -EINVAL;
		}
	}
	l = calloc(1, sizeof(*l));
	sorted = malloc(sizeof(__u64) * o->nframes);
	if (!l || !sorted)
		goto nomem;
	l->nframes = o->nframes;
	l->max_accts = o->max_accts ? o->max_accts : 64;
	l->debug = o->debug;
	l->handle_of = o->handle_of;
	l->ctx = o->ctx;
	l->accts = aligned_alloc(128, sizeof(*l->accts) * l->max_accts);
	if (!l->accts)
		goto nomem;
	memset(l->accts, 0, sizeof(*l->accts) * l->max_accts);
	memcpy(sorted, o->handles, sizeof(__u64) * o->nframes);
	qsort(sorted, o->nframes, sizeof(__u64), cmp_u64);
	err = pick_shift(sorted, o->nframes, &l->shift);
	if (err)
		goto fail;
	l->nslots = (sorted[o->nframes - 1] >> l->shift) + 1;
	if (l->nslots > 64ull * o->nframes + 64) {
		xp_err("ledger: handles too sparse (%llu slots for %u frames: space them evenly)\n",
		       (unsigned long long)l->nslots, o->nframes);
		err = -EINVAL;
		goto fail;
	}
	l->state = malloc(l->nslots);
	l->slot_handle = malloc(sizeof(__u64) * l->nslots);
	if (!l->state || !l->slot_handle)
		goto nomem;
	memset(l->state, XP_PLACE_NONE, l->nslots);
	for (i = 0; i < o->nframes; i++) {
		__u64 s = sorted[i] >> l->shift;

		l->state[s] = XP_PLACE_FREE;
		l->slot_handle[s] = sorted[i];
	}
	free(sorted);
	*out = l;
	return 0;
nomem:
	err = -ENOMEM;
fail:
	free(sorted);
	xp_ledger_destroy(l);
	return err;
}

void xp_ledger_destroy(struct xp_ledger *l)
{
	if (!l)
		return;
	free(l->state);
	free(l->slot_handle);
	free(l->accts);
	free(l);
}

int xp_ledger_acct_new(struct xp_ledger *l, struct xp_ledger_acct **out)
{
	struct xp_ledger_acct *a;

	if (l->naccts >= l->max_accts)
		return -ENOSPC;
	a = &l->accts[l->naccts++].a;
	a->ledger = l;
	a->state = l->state;
	a->nslots = l->nslots;
	a->shift = l->shift;
	a->debug = l->debug;
	*out = a;
	return 0;
}

/* Slot of @addr if it is a frame's (exactly its handle when the ledger has handle_of
 * and we are checking), else -1. */
static long slot_of(const struct xp_ledger *l, __u64 addr, bool exact)
{
	__u64 h = exact && l->handle_of ? l->handle_of(l->ctx, addr) : addr & XP_LEDGER_ADDR_MASK;
	__u64 s = (h & XP_LEDGER_ADDR_MASK) >> l->shift;

	if (s >= l->nslots || __atomic_load_n(&l->state[s], __ATOMIC_RELAXED) == XP_PLACE_NONE)
		return -1;
	if (exact && l->handle_of && l->slot_handle[s] != h)
		return -1;
	return (long)s;
}

static bool log_bad(struct xp_ledger *l)
{
	return __atomic_fetch_add(&l->bad, 1, __ATOMIC_RELAXED) < XP_LEDGER_LOG_MAX;
}

__u32 xp_ledger_check(struct xp_ledger_acct *a, enum xp_place from, enum xp_place to,
		      const __u64 *addrs, __u32 n, size_t stride)
{
	struct xp_ledger *l = a->ledger;
	const char *p = (const char *)addrs;
	__u32 i, bad = 0;

	for (i = 0; i < n; i++, p += stride) {
		__u64 addr = *(const __u64 *)p;
		long s = slot_of(l, addr, true);
		__u8 st;

		if (s < 0) {
			if (log_bad(l))
				xp_err("ledger: %s -> %s of %#llx: not a frame of this UMEM\n",
				       xp_place_name(from), xp_place_name(to),
				       (unsigned long long)addr);
			bad++;
			continue;
		}
		/* A frame in flight is only ever touched by the thread that holds it now. */
		st = __atomic_load_n(&l->state[s], __ATOMIC_RELAXED);
		if (a->debug && st != from) {
			if (log_bad(l))
				xp_err("ledger: %s -> %s of frame %#llx, but it is in %s (lost or held twice)\n",
				       xp_place_name(from), xp_place_name(to),
				       (unsigned long long)l->slot_handle[s], xp_place_name(st));
			bad++;
		}
		__atomic_store_n(&l->state[s], (__u8)to, __ATOMIC_RELAXED);
	}
	return bad;
}

void xp_ledger_stray(struct xp_ledger_acct *a, __u64 addr, enum xp_place to)
{
	if (a->debug)
		return;
	if (log_bad(a->ledger))
		xp_err("ledger: move to %s of %#llx: not a frame of this UMEM\n", xp_place_name(to),
		       (unsigned long long)addr);
}

__u32 xp_ledger_frames_in(struct xp_ledger *l, enum xp_place p, __u64 *out, __u32 max)
{
	__u32 n = 0;

	for (__u64 s = 0; s < l->nslots && n < max; s++)
		if (__atomic_load_n(&l->state[s], __ATOMIC_RELAXED) == p)
			out[n++] = l->slot_handle[s];
	return n;
}

int xp_ledger_state_of(const struct xp_ledger *l, __u64 addr)
{
	long s = slot_of(l, addr, false);

	return s < 0 ? XP_PLACE_NONE : __atomic_load_n(&l->state[s], __ATOMIC_RELAXED);
}

__u64 xp_ledger_moved(const struct xp_ledger *l)
{
	__u64 sum = 0;

	for (__u32 a = 0; a < l->naccts; a++)
		sum += __atomic_load_n(&l->accts[a].a.moved, __ATOMIC_RELAXED);
	return sum;
}

/* Frames per state byte; returns the frames with a state (nframes unless a move wrote
 * a slot that is no frame's). */
static __s64 scan(const struct xp_ledger *l, __s64 state[XP_PLACE_MAX])
{
	__u64 cnt[256] = { 0 };
	__s64 sum = 0;

	for (__u64 s = 0; s < l->nslots; s++)
		cnt[__atomic_load_n(&l->state[s], __ATOMIC_RELAXED)]++;
	for (int p = 0; p < 256; p++) {
		if (p < XP_PLACE_MAX)
			state[p] = (__s64)cnt[p];
		if (p != XP_PLACE_NONE)
			sum += (__s64)cnt[p];
	}
	return sum;
}

#define FAIL(r, ...)                                                       \
	do {                                                               \
		if ((r)->ok)                                               \
			snprintf((r)->why, sizeof((r)->why), __VA_ARGS__); \
		(r)->ok = false;                                           \
	} while (0)

/* The checks both audits share: places sum to the frames, none negative, each as
 * observed, every frame has exactly one state byte, no bad transition. */
static void check_places(const struct xp_ledger *l, const __s64 observed[XP_PLACE_MAX],
			 struct xp_ledger_report *r)
{
	__s64 sum = 0, stated;

	r->nframes = l->nframes;
	stated = scan(l, r->state);
	r->bad_transitions = __atomic_load_n(&l->bad, __ATOMIC_RELAXED);
	r->ok = true;
	for (int p = 0; p < XP_PLACE_MAX; p++)
		sum += r->place[p];
	if (sum != l->nframes)
		FAIL(r, "places sum to %lld frames, the UMEM has %u", (long long)sum, l->nframes);
	if (stated != l->nframes)
		FAIL(r,
		     "%lld frames have a state byte, the UMEM has %u (a move of an address that is no frame)",
		     (long long)stated, l->nframes);
	for (int p = 0; p < XP_PLACE_MAX; p++) {
		if (r->place[p] < 0)
			FAIL(r, "%lld frames in %s (more left than entered)",
			     (long long)r->place[p], xp_place_name(p));
		if (observed && observed[p] >= 0 && observed[p] != r->place[p])
			FAIL(r, "%s: ledger says %lld frames, %lld observed (%s)", xp_place_name(p),
			     (long long)r->place[p], (long long)observed[p],
			     observed[p] < r->place[p] ? "lost" : "held twice");
	}
}

int xp_ledger_audit(struct xp_ledger *l, const __s64 observed[XP_PLACE_MAX],
		    struct xp_ledger_report *r)
{
	memset(r, 0, sizeof(*r));
	r->place[XP_PLACE_FREE] = l->nframes;
	for (__u32 a = 0; a < l->naccts; a++)
		for (int p = 0; p < XP_PLACE_MAX; p++)
			r->place[p] += l->accts[a].a.n[p];
	check_places(l, observed, r);
	for (int p = 0; p < XP_PLACE_MAX; p++)
		if (r->state[p] != r->place[p])
			FAIL(r, "%s: %lld frames counted, %lld by state byte", xp_place_name(p),
			     (long long)r->place[p], (long long)r->state[p]);
	if (r->bad_transitions)
		FAIL(r, "%llu bad transitions (frames lost or held twice)",
		     (unsigned long long)r->bad_transitions);
	return r->ok ? 0 : -EUCLEAN;
}

int xp_ledger_audit_live(struct xp_ledger *l, const struct xp_ledger_cut *cuts, __u32 ncuts,
			 const __s64 observed[XP_PLACE_MAX], struct xp_ledger_report *r)
{
	__u64 moved = 0;

	memset(r, 0, sizeof(*r));
	r->live = true;
	if (!cuts || ncuts != l->naccts)
		return -EINVAL;
	r->place[XP_PLACE_FREE] = l->nframes;
	for (__u32 a = 0; a < ncuts; a++) {
		for (int p = 0; p < XP_PLACE_MAX; p++)
			r->place[p] += cuts[a].n[p];
		moved += cuts[a].moved;
	}
	check_places(l, observed, r);
	/* Read after the scan: every frame whose byte differs from the cut moved since,
	 * and its move was counted before its byte was written. */
	/* TSan does not model fences (gcc's -Wtsan); this one orders the scan's loads
	 * before the moved counts, which the race detector need not see. */
#if defined(__SANITIZE_THREAD__) && !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wtsan"
#endif
	__atomic_thread_fence(__ATOMIC_ACQUIRE);
#if defined(__SANITIZE_THREAD__) && !defined(__clang__)
#pragma GCC diagnostic pop
#endif
	r->slack = xp_ledger_moved(l) - moved;
	for (int p = 0; p < XP_PLACE_MAX; p++) {
		__s64 d = r->state[p] - r->place[p];

		if ((__u64)(d < 0 ? -d : d) > r->slack)
			FAIL(r,
			     "%s: %lld frames at the cut, %lld by state byte, only %llu moved since",
			     xp_place_name(p), (long long)r->place[p], (long long)r->state[p],
			     (unsigned long long)r->slack);
	}
	if (r->bad_transitions)
		FAIL(r, "%llu bad transitions (frames lost or held twice)",
		     (unsigned long long)r->bad_transitions);
	return r->ok ? 0 : -EUCLEAN;
}
#undef FAIL

void xp_ledger_report_print(const struct xp_ledger_report *r, FILE *f)
{
	fprintf(f, "ledger: %s: %u frames: free %lld fill %lld app %lld tx %lld uring %lld",
		r->ok ? "ok" : "FAILED", r->nframes, (long long)r->place[XP_PLACE_FREE],
		(long long)r->place[XP_PLACE_FILL], (long long)r->place[XP_PLACE_APP],
		(long long)r->place[XP_PLACE_TX], (long long)r->place[XP_PLACE_URING]);
	if (r->live)
		fprintf(f, " (live; state bytes within %llu moves)", (unsigned long long)r->slack);
	else if (r->ok)
		fprintf(f, " (state bytes agree)");
	fputc('\n', f);
	if (!r->ok)
		fprintf(f, "ledger: discrepancy: %s\n", r->why);
}
