// SPDX-License-Identifier: BSD-3-Clause
/*
 * The frame ledger: counts per place, the debug state per frame, and audits that fail
 * on every kind of discrepancy (a frame lost, a frame held twice, a transition from a
 * place the frame is not in, a frame that is not the UMEM's).
 */
#include <errno.h>

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
	if (debug) {
		XT_EQ(r.state[XP_PLACE_FILL], 4);
		XT_EQ(xp_ledger_frames_in(l, XP_PLACE_FILL, rx, 4), 4);
		XT_EQ(rx[0], handles[4]);
	}
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

static void bad_options(void)
{
	struct xp_ledger_opts o = { .sz = sizeof(o), .handles = handles, .nframes = 0 };
	struct xp_ledger *l;
	__u64 dup[2] = { 0, 0 };

	xp_set_log_fn(NULL);
	XT_EQ(xp_ledger_create(&o, &l), -EINVAL);
	o.nframes = 2;
	o.handles = dup;
	o.debug = true;
	XT_EQ(xp_ledger_create(&o, &l), -EINVAL);
}

int main(void)
{
	XT_RUN(counts);
	XT_RUN(debug_states);
	XT_RUN(lost_and_twice);
	XT_RUN(bad_transitions);
	XT_RUN(bad_options);
	return xt_done();
}
