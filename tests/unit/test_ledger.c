// SPDX-License-Identifier: BSD-3-Clause
/*
 * The frame ledger: counts per place, the state byte per frame (always), the debug
 * checks, and audits that fail on every kind of discrepancy (a frame lost, a frame
 * held twice, a transition from a place the frame is not in, a frame that is not the
 * UMEM's), quiescent and live.
 */
#include <errno.h>
#include <string.h>

#include "xpile/ledger.h"
#include "xpile/log.h"
#include "xt.h"

#define N 64
#define STRIDE 2112

static __u64 handles[N];

static __u64 strip(void *ctx, __u64 addr)
{
	return addr & ((1ull << 48) - 1);
}

static struct xp_ledger *make(bool debug)
{
	struct xp_ledger_opts o = { .sz = sizeof(o),
				    .handles = handles,
				    .nframes = N,
				    .max_accts = 4,
				    .debug = debug,
				    .handle_of = strip };
	struct xp_ledger *l = NULL;
	__u32 i;

	for (i = 0; i < N; i++)
		handles[i] = (__u64)i * STRIDE;
	if (xp_ledger_create(&o, &l))
		return NULL;
	return l;
}

static void round_trip(bool debug)
{
	struct xp_ledger *l = make(debug);
	struct xp_ledger_acct *a, *b;
	struct xp_ledger_report r;
	__s64 obs[XP_PLACE_MAX] = { -1, -1, -1, -1 };
	__u64 rx[4];
	int i;

	XT_REQUIRE(l);
	XT_REQUIRE(xp_ledger_acct_new(l, &a) == 0);
	XT_REQUIRE(xp_ledger_acct_new(l, &b) == 0);
	/* Thread a fills 8, receives 4 of them (with an offset in the upper bits),
	 * sends them; thread b completes them (frames migrate between threads). */
	xp_ledger_move(a, XP_PLACE_FREE, XP_PLACE_FILL, handles, 8);
	for (i = 0; i < 4; i++)
		rx[i] = handles[i] | (256ull << 48);
	xp_ledger_move(a, XP_PLACE_FILL, XP_PLACE_APP, rx, 4);
	xp_ledger_move(a, XP_PLACE_APP, XP_PLACE_TX, rx, 4);
	obs[XP_PLACE_FREE] = N - 8;
	XT_EQ(xp_ledger_audit(l, obs, &r), 0);
	XT_EQ(r.place[XP_PLACE_FILL], 4);
	XT_EQ(r.place[XP_PLACE_TX], 4);
	xp_ledger_move(b, XP_PLACE_TX, XP_PLACE_FREE, handles, 4);
	obs[XP_PLACE_FREE] = N - 4;
	XT_EQ(xp_ledger_audit(l, obs, &r), 0);
	XT_CHECK(r.ok);
	XT_EQ(r.place[XP_PLACE_FREE], N - 4);
	/* The state bytes exist with or without debug. */
	XT_EQ(r.state[XP_PLACE_FILL], 4);
	XT_EQ(r.state[XP_PLACE_FREE], N - 4);
	XT_EQ(xp_ledger_frames_in(l, XP_PLACE_FILL, rx, 4), 4);
	XT_EQ(rx[0], handles[4]);
	XT_EQ(xp_ledger_state_of(l, handles[4] | (256ull << 48)), XP_PLACE_FILL);
	XT_EQ(xp_ledger_state_of(l, handles[0]), XP_PLACE_FREE);
	XT_EQ(xp_ledger_state_of(l, 1ull << 40), XP_PLACE_NONE);
	xp_ledger_destroy(l);
}

static void counts(void)
{
	round_trip(false);
}

static void debug_states(void)
{
	round_trip(true);
}

/* The allocator holds one frame less than the ledger says: lost. One more: held twice. */
static void lost_and_twice(void)
{
	struct xp_ledger *l = make(false);
	struct xp_ledger_acct *a;
	struct xp_ledger_report r;
	__s64 obs[XP_PLACE_MAX] = { N - 1, -1, -1, -1 };

	XT_REQUIRE(l);
	XT_REQUIRE(xp_ledger_acct_new(l, &a) == 0);
	XT_EQ(xp_ledger_audit(l, obs, &r), -EUCLEAN);
	XT_CHECK(!r.ok);
	XT_CHECK(strstr(r.why, "lost") != NULL);
	obs[XP_PLACE_FREE] = N + 1;
	XT_EQ(xp_ledger_audit(l, obs, &r), -EUCLEAN);
	XT_CHECK(strstr(r.why, "held twice") != NULL);
	/* A place that went negative (more left than entered). */
	xp_ledger_move(a, XP_PLACE_APP, XP_PLACE_FREE, handles, 1);
	XT_EQ(xp_ledger_audit(l, NULL, &r), -EUCLEAN);
	xp_ledger_destroy(l);
}

/* Debug mode catches a bad transition where it happens. */
static void bad_transitions(void)
{
	struct xp_ledger *l = make(true);
	struct xp_ledger_acct *a;
	struct xp_ledger_report r;
	__u64 foreign = 5;

	XT_REQUIRE(l);
	XT_REQUIRE(xp_ledger_acct_new(l, &a) == 0);
	xp_set_log_fn(NULL);
	XT_EQ(xp_ledger_check(a, XP_PLACE_FREE, XP_PLACE_FILL, handles, 2, 8), 0);
	a->n[XP_PLACE_FREE] -= 2, a->n[XP_PLACE_FILL] += 2;
	/* Posted twice: the second post finds it in FILL already. */
	xp_ledger_move(a, XP_PLACE_FREE, XP_PLACE_FILL, handles, 1);
	/* Completed without being sent. */
	xp_ledger_move(a, XP_PLACE_TX, XP_PLACE_FREE, &handles[1], 1);
	/* Not a frame of this UMEM (inside frame 0, not its start). */
	xp_ledger_move(a, XP_PLACE_FILL, XP_PLACE_APP, &foreign, 1);
	XT_EQ(xp_ledger_audit(l, NULL, &r), -EUCLEAN);
	XT_EQ(r.bad_transitions, 3);
	xp_ledger_destroy(l);
}

/* Aligned chunks: ring addresses are handle + offset, all within the frame's slot. */
static void aligned_offsets(void)
{
	__u64 h[8], rx[8];
	struct xp_ledger_opts o = { .sz = sizeof(o), .handles = h, .nframes = 8 };
	struct xp_ledger *l;
	struct xp_ledger_acct *a;
	struct xp_ledger_report r;

	for (int i = 0; i < 8; i++) {
		h[i] = (__u64)i * 2048;
		rx[i] = h[i] + 256 + (__u64)i * 100;
	}
	XT_REQUIRE(xp_ledger_create(&o, &l) == 0);
	XT_REQUIRE(xp_ledger_acct_new(l, &a) == 0);
	xp_ledger_move(a, XP_PLACE_FREE, XP_PLACE_FILL, h, 8);
	xp_ledger_move(a, XP_PLACE_FILL, XP_PLACE_APP, rx, 8);
	xp_ledger_move(a, XP_PLACE_APP, XP_PLACE_FREE, rx, 3);
	XT_EQ(xp_ledger_audit(l, NULL, &r), 0);
	XT_EQ(r.state[XP_PLACE_APP], 5);
	XT_EQ(xp_ledger_state_of(l, h[7] + 2047), XP_PLACE_APP);
	XT_EQ(xp_ledger_state_of(l, h[0] + 100), XP_PLACE_FREE);
	xp_ledger_destroy(l);
}

/* Without debug a move still lands on the frame's byte: a byte that disagrees with the
 * counts (a frame moved from where it was not), an address that is no frame's, and one
 * beyond every frame are all caught by the next audit. */
static void bytes_catch(void)
{
	struct xp_ledger *l = make(false);
	struct xp_ledger_acct *a;
	struct xp_ledger_report r;
	__u64 gap = 32ull * 2048, far = 1ull << 30;

	XT_REQUIRE(l);
	XT_REQUIRE(xp_ledger_acct_new(l, &a) == 0);
	xp_set_log_fn(NULL);
	/* Frame 3 "received" twice: counts say 2 in APP, its byte says one. */
	xp_ledger_move(a, XP_PLACE_FREE, XP_PLACE_FILL, handles, 4);
	xp_ledger_move(a, XP_PLACE_FILL, XP_PLACE_APP, &handles[3], 1);
	xp_ledger_move(a, XP_PLACE_FILL, XP_PLACE_APP, &handles[3], 1);
	XT_EQ(xp_ledger_audit(l, NULL, &r), -EUCLEAN);
	XT_CHECK(strstr(r.why, "by state byte") != NULL);
	xp_ledger_destroy(l);

	/* Slot 32 lies between frames 31 (at 65472) and 32 (at 67584): no frame's. */
	l = make(false);
	XT_REQUIRE(l && xp_ledger_acct_new(l, &a) == 0);
	XT_EQ(xp_ledger_state_of(l, gap), XP_PLACE_NONE);
	xp_ledger_move(a, XP_PLACE_FREE, XP_PLACE_FILL, &gap, 1);
	XT_EQ(xp_ledger_audit(l, NULL, &r), -EUCLEAN);
	XT_CHECK(strstr(r.why, "no frame") != NULL);
	xp_ledger_destroy(l);

	l = make(false);
	XT_REQUIRE(l && xp_ledger_acct_new(l, &a) == 0);
	xp_ledger_move(a, XP_PLACE_FREE, XP_PLACE_FILL, &far, 1);
	XT_EQ(xp_ledger_audit(l, NULL, &r), -EUCLEAN);
	XT_EQ(r.bad_transitions, 1);
	xp_ledger_destroy(l);
}

/* A move in two halves (the engine's ring loops): the same bytes and counts as one
 * move, and a stray address counted once, with or without debug. */
static void halves(void)
{
	for (int debug = 0; debug < 2; debug++) {
		struct xp_ledger *l = make(debug);
		struct xp_ledger_acct *a;
		struct xp_ledger_map m;
		struct xp_ledger_report r;
		__u64 far = 1ull << 30;

		XT_REQUIRE(l && xp_ledger_acct_new(l, &a) == 0);
		xp_set_log_fn(NULL);
		m = xp_ledger_map_get(a);
		xp_ledger_count(a, XP_PLACE_FREE, XP_PLACE_FILL, handles, 6, sizeof(__u64));
		for (int i = 0; i < 6; i++)
			xp_ledger_mark(&m, handles[i], XP_PLACE_FILL);
		XT_EQ(xp_ledger_audit(l, NULL, &r), 0);
		XT_EQ(r.state[XP_PLACE_FILL], 6);
		XT_EQ(xp_ledger_moved(l), 6);
		xp_ledger_count(a, XP_PLACE_FREE, XP_PLACE_FILL, &far, 1, sizeof(__u64));
		xp_ledger_mark(&m, far, XP_PLACE_FILL);
		XT_EQ(xp_ledger_audit(l, NULL, &r), -EUCLEAN);
		XT_EQ(r.bad_transitions, 1);
		xp_ledger_destroy(l);
	}
}

/* The live audit: exact on the cut, the bytes within the frames moved since. */
static void live(void)
{
	struct xp_ledger *l = make(false);
	struct xp_ledger_acct *a, *b;
	struct xp_ledger_cut cuts[2];
	struct xp_ledger_report r;
	__s64 obs[XP_PLACE_MAX] = { N - 8, 8, 0, -1 };

	XT_REQUIRE(l);
	XT_REQUIRE(xp_ledger_acct_new(l, &a) == 0);
	XT_REQUIRE(xp_ledger_acct_new(l, &b) == 0);
	xp_ledger_move(a, XP_PLACE_FREE, XP_PLACE_FILL, handles, 8);
	xp_ledger_cut_take(a, &cuts[0]);
	xp_ledger_cut_take(b, &cuts[1]);
	XT_EQ(xp_ledger_audit_live(l, cuts, 2, obs, &r), 0);
	XT_CHECK(r.live);
	XT_EQ(r.slack, 0);
	XT_EQ(r.place[XP_PLACE_FILL], 8);
	/* Moves after the cut: the bytes differ from the cut by at most what moved. */
	xp_ledger_move(a, XP_PLACE_FILL, XP_PLACE_APP, handles, 5);
	XT_EQ(xp_ledger_audit_live(l, cuts, 2, obs, &r), 0);
	XT_EQ(r.slack, 5);
	XT_EQ(r.state[XP_PLACE_APP], 5);
	XT_EQ(r.place[XP_PLACE_APP], 0);
	/* What the owners observed at the cut must match it exactly. */
	obs[XP_PLACE_FREE] = N - 9;
	XT_EQ(xp_ledger_audit_live(l, cuts, 2, obs, &r), -EUCLEAN);
	XT_CHECK(strstr(r.why, "lost") != NULL);
	obs[XP_PLACE_FREE] = N - 8;
	obs[XP_PLACE_FILL] = 9;
	XT_EQ(xp_ledger_audit_live(l, cuts, 2, obs, &r), -EUCLEAN);
	XT_CHECK(strstr(r.why, "held twice") != NULL);
	obs[XP_PLACE_FILL] = 8;
	/* A byte wrong by more than the slack: a fresh cut, one byte corrupted. */
	xp_ledger_cut_take(a, &cuts[0]);
	a->state[(handles[20] & XP_LEDGER_ADDR_MASK) >> a->shift] = XP_PLACE_TX;
	XT_EQ(xp_ledger_audit_live(l, cuts, 2, NULL, &r), -EUCLEAN);
	XT_CHECK(strstr(r.why, "only 0 moved") != NULL);
	/* Every account must be in the cut. */
	XT_EQ(xp_ledger_audit_live(l, cuts, 1, NULL, &r), -EINVAL);
	XT_EQ(xp_ledger_moved(l), 13);
	xp_ledger_destroy(l);
}

static void bad_options(void)
{
	struct xp_ledger_opts o = { .sz = sizeof(o), .handles = handles, .nframes = 0 };
	struct xp_ledger *l;
	__u64 dup[2] = { 0, 0 };

	xp_set_log_fn(NULL);
	XT_EQ(xp_ledger_create(&o, &l), -EINVAL);
	o.nframes = 2;
	o.handles = dup;
	XT_EQ(xp_ledger_create(&o, &l), -EINVAL);
	o.debug = true;
	XT_EQ(xp_ledger_create(&o, &l), -EINVAL);
	o.debug = false;
	/* Beyond 48 address bits, and so sparse the bytes would dwarf the frames. */
	dup[1] = 1ull << 50;
	XT_EQ(xp_ledger_create(&o, &l), -EINVAL);
	{
		__u64 sparse[3] = { 0, 64, 1ull << 30 };

		o.handles = sparse;
		o.nframes = 3;
		XT_EQ(xp_ledger_create(&o, &l), -EINVAL);
	}
}

/* Frames in flight in io_uring (a host TAP's write from a frame, a read into one) have
 * their own place: audits count them and the observed count must agree; one that never
 * came back is caught at the end. */
static void uring(void)
{
	__u64 h[4] = { 0, 2048, 4096, 6144 };
	struct xp_ledger_opts o = { .sz = sizeof(o), .handles = h, .nframes = 4, .debug = true };
	__s64 obs[XP_PLACE_MAX] = { 1, 0, 1, 0, 2 };
	struct xp_ledger *l;
	struct xp_ledger_acct *a;
	struct xp_ledger_report r;

	XT_REQUIRE(xp_ledger_create(&o, &l) == 0);
	XT_REQUIRE(xp_ledger_acct_new(l, &a) == 0);
	XT_EQ(strcmp(xp_place_name(XP_PLACE_URING), "uring"), 0);
	xp_ledger_move(a, XP_PLACE_FREE, XP_PLACE_URING, h, 2); /* reads posted */
	xp_ledger_move(a, XP_PLACE_FREE, XP_PLACE_APP, &h[2], 1);
	XT_EQ(xp_ledger_audit(l, obs, &r), 0);
	XT_EQ(r.place[XP_PLACE_URING], 2);
	XT_EQ(r.state[XP_PLACE_URING], 2);
	XT_EQ(xp_ledger_state_of(l, h[1] + 300), XP_PLACE_URING);
	obs[XP_PLACE_URING] = 1; /* the ring says one: the other is lost */
	XT_EQ(xp_ledger_audit(l, obs, &r), -EUCLEAN);
	xp_ledger_move(a, XP_PLACE_URING, XP_PLACE_APP, h, 1); /* a read completed */
	xp_ledger_move(a, XP_PLACE_APP, XP_PLACE_URING, &h[2], 1); /* a punt written */
	xp_ledger_move(a, XP_PLACE_URING, XP_PLACE_FREE, &h[1], 2);
	xp_ledger_move(a, XP_PLACE_APP, XP_PLACE_FREE, h, 1);
	obs[XP_PLACE_FREE] = 4;
	obs[XP_PLACE_APP] = obs[XP_PLACE_URING] = 0;
	XT_EQ(xp_ledger_audit(l, obs, &r), 0);
	/* Leaving io_uring from a place the frame is not in: a bad transition. */
	xp_ledger_move(a, XP_PLACE_URING, XP_PLACE_FREE, h, 1);
	XT_EQ(xp_ledger_audit(l, NULL, &r), -EUCLEAN);
	XT_EQ(r.bad_transitions, 1);
	xp_ledger_destroy(l);
}

int main(void)
{
	XT_RUN(counts);
	XT_RUN(debug_states);
	XT_RUN(lost_and_twice);
	XT_RUN(bad_transitions);
	XT_RUN(aligned_offsets);
	XT_RUN(bytes_catch);
	XT_RUN(halves);
	XT_RUN(live);
	XT_RUN(bad_options);
	XT_RUN(uring);
	return xt_done();
}
