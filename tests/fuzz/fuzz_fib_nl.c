// SPDX-License-Identifier: BSD-3-Clause
/*
 * The rtnetlink mirror and the FIB behind it (lib/fib_nl.c, lib/fib.c): the input is a
 * buffer of rtnetlink messages (routes, multipath, neighbours, addresses, links, as the
 * kernel sends them, or broken), fed as notifications into one FIB.
 *
 * IPv4 routes shorter than /16 are lengthened to /16 before they are fed: a /0 writes
 * 16M root entries (20 ms), which would leave the fuzzer a few executions a second;
 * short prefixes are tests/unit/test_lpm.c's.
 *
 * Properties:
 * - nothing crashes or leaks, whatever the lengths, attributes and nesting say;
 * - every lookup answers a verdict the header allows: forward to a mapped port, punt
 *   with a reason in range, drop only for a blackhole;
 * - a sweep of everything (a resync whose dump brought nothing) leaves the FIB empty:
 *   no route, prefix, nexthop, group, neighbour, host route or address left over, so
 *   the reference counts of every path through the code add up.
 */
#include <arpa/inet.h>

#include "fib_internal.h"
#include "fib_nl_internal.h"
#include "fuzz.h"
#include "xpile/fib.h"
#include "xpile/log.h"

static struct xp_fib *fib;
static struct xp_fib_nl *nl;

static int quiet(enum xp_log_level level, const char *fmt, va_list ap)
{
	return 0;
}

static void setup(void)
{
	XP_OPTS(xp_fib_opts, o, .hugepages = XP_HUGE_NEVER, .inplace = true, .lpm4_groups = 256,
		.lpm6_groups = 256, .nexthops = 256, .groups = 64);

	xp_set_log_fn(quiet);
	if (xp_fib_create(&o, &fib))
		abort();
	/* Ports for the low ifindexes the seeds use; 4 and up have none. */
	for (int i = 1; i < 4; i++)
		xp_fib_port_set(fib, (__u32)i, i);
	nl = xp_fib_nl_detached(fib, 0);
	if (!nl)
		abort();
}

static void check_lookup(__u32 dst)
{
	struct xp_fib_out o;
	enum xp_fib_verdict v = xp_fib_lookup4(fib, dst, dst * 2654435761u, &o);

	FUZZ_CHECK(v <= XP_FIB_DROP, "verdict %d", v);
	if (v == XP_FIB_FWD)
		FUZZ_CHECK(o.port >= 1 && o.port <= 3, "forwarded to unmapped port %u", o.port);
	else
		FUZZ_CHECK(o.reason > XP_FIB_R_NONE && o.reason < XP_FIB_R_NR, "reason %u",
			   o.reason);
	if (v == XP_FIB_DROP)
		FUZZ_CHECK(o.reason == XP_FIB_R_BLACKHOLE, "drop for %u", o.reason);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	setup();
	return 0;
}

/* A copy of @data with every IPv4 route at least /16 long (see the top). */
static uint8_t *lengthened(const uint8_t *data, size_t size)
{
	uint8_t *c = malloc(size ? size : 1);
	size_t off = 0;

	if (!c)
		abort();
	memcpy(c, data, size);
	while (off + 16 + 2 <= size) {
		__u32 len;
		__u16 type;

		memcpy(&len, c + off, 4);
		memcpy(&type, c + off + 4, 2);
		if (len < 16 || len > size - off)
			break;
		if ((type == 24 || type == 25) && len >= 18 && c[off + 16] == 2 && c[off + 17] < 16)
			c[off + 17] = 16;
		off += (len + 3) & ~3u;
	}
	return c;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct xp_fib_stats st;
	__u8 a6[16] = { 0x20, 0x01, 0x0d, 0xb8 };
	uint8_t *in = lengthened(data, size);

	xp_fib_nl_feed(nl, in, size);
	free(in);
	/* Addresses the seeds' routes cover, and some they do not. */
	for (__u32 i = 0; i < 64; i++)
		check_lookup(0xc6120000u + i * 0x0101u);
	for (__u32 i = 0; i < size && i < 256; i += 4) {
		__u32 w;

		memcpy(&w, data + i, size - i < 4 ? size - i : 4);
		check_lookup(ntohl(w));
		a6[15] = (__u8)w;
		{
			struct xp_fib_out o;

			FUZZ_CHECK(xp_fib_lookup6(fib, a6, w, &o) <= XP_FIB_DROP, "v6 verdict");
		}
	}
	xp_fib_resync_begin(fib, XP_FIB_SYNC_ROUTES | XP_FIB_SYNC_NEIGHS | XP_FIB_SYNC_ADDRS);
	xp_fib_resync_end(fib);
	xp_fib_sync(fib);
	xp_fib_stats(fib, &st);
	FUZZ_CHECK(!st.routes[0] && !st.routes[1] && !st.prefixes[0] && !st.prefixes[1],
		   "left after the sweep: routes %llu/%llu prefixes %llu/%llu",
		   (unsigned long long)st.routes[0], (unsigned long long)st.routes[1],
		   (unsigned long long)st.prefixes[0], (unsigned long long)st.prefixes[1]);
	FUZZ_CHECK(!st.nexthops && !st.nexthops_usable && !st.groups && !st.neighbours &&
			   !st.neighbours_usable && !st.host_routes && !st.local_addrs,
		   "left after the sweep: nexthops %llu (%llu usable) groups %llu neighbours %llu "
		   "(%llu usable) host routes %llu addresses %llu",
		   (unsigned long long)st.nexthops, (unsigned long long)st.nexthops_usable,
		   (unsigned long long)st.groups, (unsigned long long)st.neighbours,
		   (unsigned long long)st.neighbours_usable, (unsigned long long)st.host_routes,
		   (unsigned long long)st.local_addrs);
	for (int r = 0; r < XP_FIB_R_NR; r++)
		FUZZ_CHECK(!st.by_reason[r], "prefixes of reason %d left", r);
	for (int u = 0; u < XP_FIB_U_NR; u++)
		FUZZ_CHECK(!st.unsupported[u], "unsupported routes of kind %d left", u);
	FUZZ_CHECK(!st.lpm[0].routes && !st.lpm[1].routes && !st.lpm[0].groups_used &&
			   !st.lpm[1].groups_used,
		   "LPM not empty: %llu/%llu rules, %llu/%llu groups",
		   (unsigned long long)st.lpm[0].routes, (unsigned long long)st.lpm[1].routes,
		   (unsigned long long)st.lpm[0].groups_used,
		   (unsigned long long)st.lpm[1].groups_used);
	return 0;
}
