// SPDX-License-Identifier: BSD-3-Clause
/*
 * FIB readers against a writer (run under TSan too): routes switch between gateways,
 * single path and ECMP, so nexthop and group ids are freed and handed out again all the
 * time, and neighbours change their MAC in place; every answer a reader gets must be a
 * gateway the route may use (never an id reused for another route's gateway) with that
 * gateway's port and one of its MACs. Double-buffered, a delete and re-add in one commit
 * is never seen as "no route".
 *
 * 24 nexthop ids for 8 gateways: freed ones come back after a commit and a grace
 * period, over and over. Gateways g = 0..7 on port 1 + g % 2, MAC 02:00:00:00:v:g (v its version); route k
 * (198.19.k.0/24, k < 4) only ever uses gateways g % 4 == k.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <time.h>
#include <linux/neighbour.h>
#include <linux/rtnetlink.h>
#include <sys/socket.h>

#include "xpile/fib.h"
#include "xpile/qsbr.h"
#include "xt.h"

#define READERS 2
#define GWS 8

static struct xp_fib *fib;
static struct xp_qsbr *qsbr;
static bool dbl;
static atomic_bool stop;
static atomic_ulong lookups, bad, no_route;

static double now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static void *reader(void *arg)
{
	__u32 id, h = (__u32)(uintptr_t)arg * 0x9e3779b9u;

	if (xp_qsbr_register(qsbr, &id))
		return NULL;
	while (!atomic_load_explicit(&stop, memory_order_relaxed)) {
		for (__u32 i = 0; i < 32; i++) {
			__u32 k = i % 4, g;
			struct xp_fib_out o = { .reason = 0 };
			enum xp_fib_verdict v;

			h = h * 1664525u + 1013904223u;
			v = xp_fib_lookup4(fib, 0xc6130000u | k << 8 | (h >> 24), h, &o);
			if (v == XP_FIB_PUNT && o.reason == XP_FIB_R_NO_ROUTE && !dbl) {
				atomic_fetch_add(&no_route, 1);
				continue;
			}
			g = o.mac[5];
			if (v != XP_FIB_FWD || g >= GWS || g % 4 != k || o.port != 1 + g % 2 ||
			    o.mac[0] != 2) {
				if (atomic_fetch_add(&bad, 1) < 5)
					fprintf(stderr,
						"  route %u: verdict %d reason %u port %u gw %u\n",
						k, v, o.reason, o.port, g);
			}
		}
		atomic_fetch_add(&lookups, 32);
		xp_qsbr_quiescent(qsbr, id);
	}
	xp_qsbr_unregister(qsbr, id);
	return NULL;
}

static struct xp_fib_path gw(__u32 g)
{
	struct xp_fib_path p = { .ifindex = 10 + g % 2, .weight = 1, .has_gw = true };

	p.gw[0] = 198;
	p.gw[1] = 18;
	p.gw[2] = 1 + g % 2;
	p.gw[3] = 10 + g;
	return p;
}

static void neigh(__u32 g, __u8 v)
{
	struct xp_fib_path p = gw(g);
	__u8 mac[6] = { 2, 0, 0, 0, v, (__u8)g };

	xp_fib_neigh_set(fib, AF_INET, p.gw, p.ifindex, NUD_REACHABLE, mac);
}

static void route(__u32 k, __u32 how)
{
	struct xp_fib_route r = {
		.family = AF_INET, .dst_len = 24, .type = RTN_UNICAST, .dst = { 198, 19, (__u8)k }
	};
	struct xp_fib_path p[2] = { gw(k), gw(k + 4) };

	if (how == 0)
		xp_fib_route_add(fib, &r, &p[0], 1, XP_FIB_REPLACE);
	else if (how == 1)
		xp_fib_route_add(fib, &r, &p[1], 1, XP_FIB_REPLACE);
	else if (how == 2)
		xp_fib_route_add(fib, &r, p, 2, XP_FIB_REPLACE);
	else {
		/* Gone and back in one batch. */
		xp_fib_route_del(fib, &r, NULL, 0);
		xp_fib_route_add(fib, &r, &p[0], 1, 0);
	}
}

static void run(bool double_buffered)
{
	XP_OPTS(xp_fib_opts, o, .hugepages = XP_HUGE_NEVER, .inplace = !double_buffered,
		.lpm4_groups = 8, .lpm6_groups = 4, .nexthops = 24, .groups = 12);
	pthread_t th[READERS];
	__u64 rng = 1, changes = 0;
	double t0 = now();

	dbl = double_buffered;
	atomic_store(&stop, false);
	atomic_store(&lookups, 0);
	atomic_store(&bad, 0);
	atomic_store(&no_route, 0);
	XT_REQUIRE(!xp_qsbr_create(READERS, &qsbr));
	o.qsbr = qsbr;
	XT_REQUIRE(!xp_fib_create(&o, &fib));
	/* Gateway g is on ifindex 10 + g % 2, port 1 + g % 2. */
	xp_fib_port_set(fib, 10, 1);
	xp_fib_port_set(fib, 11, 2);
	for (__u32 g = 0; g < GWS; g++)
		neigh(g, 0);
	for (__u32 k = 0; k < 4; k++)
		route(k, 0);
	xp_fib_sync(fib);
	for (int i = 0; i < READERS; i++)
		XT_REQUIRE(!pthread_create(&th[i], NULL, reader, (void *)(uintptr_t)(i + 1)));
	while (now() - t0 < 1.2 && changes < 2000000) {
		rng = rng * 6364136223846793005ull + 1442695040888963407ull;
		if ((rng >> 60) == 0)
			neigh((__u32)(rng >> 40) % GWS, (__u8)(rng >> 32));
		else
			route((__u32)(rng >> 40) % 4, (__u32)(rng >> 33) % 4);
		if (++changes % 4 == 0)
			xp_fib_commit(fib);
	}
	xp_fib_commit(fib);
	atomic_store(&stop, true);
	for (int i = 0; i < READERS; i++)
		pthread_join(th[i], NULL);
	fprintf(stderr, "  %s: %llu changes, %lu lookups, %lu transient no-route\n",
		dbl ? "double" : "in place", (unsigned long long)changes, atomic_load(&lookups),
		atomic_load(&no_route));
	XT_EQ(atomic_load(&bad), 0);
	XT_CHECK(atomic_load(&lookups) > 0);
	{
		struct xp_fib_stats st;

		/* Ids were short never (a punt would be right then, and prove nothing),
		 * but few enough to be reused all along. */
		xp_fib_stats(fib, &st);
		XT_EQ(st.id_exhausted, 0);
	}
	xp_fib_destroy(fib);
	xp_qsbr_destroy(qsbr);
}

static void inplace_readers(void)
{
	run(false);
}

static void double_readers(void)
{
	run(true);
}

int main(void)
{
	XT_RUN(inplace_readers);
	XT_RUN(double_readers);
	return xt_done();
}
