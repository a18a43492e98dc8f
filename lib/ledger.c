// SPDX-License-Identifier: BSD-3-Clause
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "log_internal.h"
#include "opts_internal.h"
#include "xpile/ledger.h"

struct xp_ledger {
	__u32 nframes;
	__u32 max_accts;
	__u32 naccts;
	bool debug;
	__u64 *sorted; /* handles, ascending: state index by binary search */
	__u8 *state; /* debug: enum xp_place per frame */
	__u64 bad; /* debug: bad transitions (atomic) */
	__u64 (*handle_of)(void *ctx, __u64 addr);
	void *ctx;
	struct xp_ledger_acct *accts;
};

static const char *const place_names[XP_PLACE_MAX] = {
	[XP_PLACE_FREE] = "free",
	[XP_PLACE_FILL] = "fill",
	[XP_PLACE_APP] = "app",
	[XP_PLACE_TX] = "tx",
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

int xp_ledger_create(const struct xp_ledger_opts *opts, struct xp_ledger **out)
{
	struct xp_ledger_opts oc;
	const struct xp_ledger_opts *o = &oc;
	struct xp_ledger *l;
	__u32 i;

	if (!XP_OPTS_LOAD_LOG("ledger", &oc, opts, xp_ledger_opts))
		return -EINVAL;
	if (!out || !o->nframes || !o->handles) {
		xp_err("ledger: invalid options (handles and a frame count are required)\n");
		return -EINVAL;
	}
	l = calloc(1, sizeof(*l));
	if (!l)
		return -ENOMEM;
	l->nframes = o->nframes;
	l->max_accts = o->max_accts ? o->max_accts : 64;
	l->debug = o->debug;
	l->handle_of = o->handle_of;
	l->ctx = o->ctx;
	l->accts = calloc(l->max_accts, sizeof(*l->accts));
	if (!l->accts)
		goto nomem;
	if (l->debug) {
		l->sorted = malloc(sizeof(__u64) * o->nframes);
		l->state = calloc(o->nframes, 1); /* XP_PLACE_FREE == 0 */
		if (!l->sorted || !l->state)
			goto nomem;
		memcpy(l->sorted, o->handles, sizeof(__u64) * o->nframes);
		qsort(l->sorted, o->nframes, sizeof(__u64), cmp_u64);
		for (i = 1; i < o->nframes; i++) {
			if (l->sorted[i] == l->sorted[i - 1]) {
				xp_err("ledger: handle %#llx given twice\n",
				       (unsigned long long)l->sorted[i]);
				xp_ledger_destroy(l);
				return -EINVAL;
			}
		}
	}
	*out = l;
	return 0;
nomem:
	xp_ledger_destroy(l);
	return -ENOMEM;
}

void xp_ledger_destroy(struct xp_ledger *l)
{
	if (!l)
		return;
	free(l->sorted);
	free(l->state);
	free(l->accts);
	free(l);
}

int xp_ledger_acct_new(struct xp_ledger *l, struct xp_ledger_acct **out)
{
	struct xp_ledger_acct *a;

	if (l->naccts >= l->max_accts)
		return -ENOSPC;
	a = &l->accts[l->naccts++];
	a->ledger = l;
	a->debug = l->debug;
	*out = a;
	return 0;
}

static long find(const struct xp_ledger *l, __u64 h)
{
	long lo = 0, hi = (long)l->nframes - 1;

	while (lo <= hi) {
		long mid = lo + (hi - lo) / 2;

		if (l->sorted[mid] == h)
			return mid;
		if (l->sorted[mid] < h)
			lo = mid + 1;
		else
			hi = mid - 1;
	}
	return -1;
}

__u32 xp_ledger_check(struct xp_ledger_acct *a, enum xp_place from, enum xp_place to,
		      const __u64 *addrs, __u32 n, size_t stride)
{
	struct xp_ledger *l = a->ledger;
	const char *p = (const char *)addrs;
	__u32 i, bad = 0;

	for (i = 0; i < n; i++, p += stride) {
		__u64 addr = *(const __u64 *)p;
		__u64 h = l->handle_of ? l->handle_of(l->ctx, addr) : addr;
		long idx = find(l, h);
		__u8 st;

		if (idx < 0) {
			if (__atomic_fetch_add(&l->bad, 1, __ATOMIC_RELAXED) < XP_LEDGER_LOG_MAX)
				xp_err("ledger: %s -> %s of %#llx: not a frame of this UMEM\n",
				       xp_place_name(from), xp_place_name(to),
				       (unsigned long long)addr);
			bad++;
			continue;
		}
		/* A frame in flight is only ever touched by the thread that owns it now. */
		st = __atomic_load_n(&l->state[idx], __ATOMIC_RELAXED);
		if (st != from) {
			if (__atomic_fetch_add(&l->bad, 1, __ATOMIC_RELAXED) < XP_LEDGER_LOG_MAX)
				xp_err("ledger: %s -> %s of frame %#llx, but it is in %s (lost or held twice)\n",
				       xp_place_name(from), xp_place_name(to),
				       (unsigned long long)h, xp_place_name(st));
			bad++;
		}
		__atomic_store_n(&l->state[idx], (__u8)to, __ATOMIC_RELAXED);
	}
	return bad;
}

__u32 xp_ledger_frames_in(struct xp_ledger *l, enum xp_place p, __u64 *out, __u32 max)
{
	__u32 i, n = 0;

	if (!l->debug)
		return 0;
	for (i = 0; i < l->nframes && n < max; i++)
		if (l->state[i] == p)
			out[n++] = l->sorted[i];
	return n;
}

int xp_ledger_audit(struct xp_ledger *l, const __s64 observed[XP_PLACE_MAX],
		    struct xp_ledger_report *r)
{
	__s64 sum = 0;
	__u32 i, a;
	int p;

	memset(r, 0, sizeof(*r));
	r->nframes = l->nframes;
	r->place[XP_PLACE_FREE] = l->nframes;
	for (a = 0; a < l->naccts; a++)
		for (p = 0; p < XP_PLACE_MAX; p++)
			r->place[p] += l->accts[a].n[p];
	for (p = 0; p < XP_PLACE_MAX; p++) {
		sum += r->place[p];
		r->state[p] = l->debug ? 0 : -1;
	}
	if (l->debug)
		for (i = 0; i < l->nframes; i++)
			r->state[l->state[i] < XP_PLACE_MAX ? l->state[i] : 0]++;
	r->bad_transitions = __atomic_load_n(&l->bad, __ATOMIC_RELAXED);
	r->ok = true;

#define FAIL(...)                                                      \
	do {                                                           \
		if (r->ok)                                             \
			snprintf(r->why, sizeof(r->why), __VA_ARGS__); \
		r->ok = false;                                         \
	} while (0)

	if (sum != l->nframes)
		FAIL("places sum to %lld frames, the UMEM has %u", (long long)sum, l->nframes);
	for (p = 0; p < XP_PLACE_MAX; p++) {
		if (r->place[p] < 0)
			FAIL("%lld frames in %s (more left than entered)", (long long)r->place[p],
			     xp_place_name(p));
		if (observed && observed[p] >= 0 && observed[p] != r->place[p])
			FAIL("%s: ledger says %lld frames, %lld observed (%s)", xp_place_name(p),
			     (long long)r->place[p], (long long)observed[p],
			     observed[p] < r->place[p] ? "lost" : "held twice");
		if (l->debug && r->state[p] != r->place[p])
			FAIL("%s: %lld frames counted, %lld by state", xp_place_name(p),
			     (long long)r->place[p], (long long)r->state[p]);
	}
	if (r->bad_transitions)
		FAIL("%llu bad transitions (frames lost or held twice)",
		     (unsigned long long)r->bad_transitions);
#undef FAIL
	return r->ok ? 0 : -EUCLEAN;
}

void xp_ledger_report_print(const struct xp_ledger_report *r, FILE *f)
{
	fprintf(f, "ledger: %s: %u frames: free %lld fill %lld app %lld tx %lld",
		r->ok ? "ok" : "FAILED", r->nframes, (long long)r->place[XP_PLACE_FREE],
		(long long)r->place[XP_PLACE_FILL], (long long)r->place[XP_PLACE_APP],
		(long long)r->place[XP_PLACE_TX]);
	if (r->state[0] >= 0)
		fprintf(f, " (debug: per-frame states agree%s)", r->bad_transitions ? " NOT" : "");
	fputc('\n', f);
	if (!r->ok)
		fprintf(f, "ledger: discrepancy: %s\n", r->why);
}
