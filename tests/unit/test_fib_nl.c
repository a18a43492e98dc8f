// SPDX-License-Identifier: BSD-3-Clause
/*
 * The rtnetlink mirror (xpile/fib_nl.h) against the real kernel: in a network
 * namespace of its own (unshare, gone with the process), `ip route/neigh/addr/link`
 * change the kernel's state and the mirror's lookups must follow: local addresses,
 * connected subnets and neighbours appearing and vanishing, gateways, multipath
 * (ECMP), replace, blackhole/prohibit/unreachable, encapsulation and nexthop objects
 * punted, IPv6 siblings, a link going down, a 10k-route `ip -batch` in and out, and a
 * resync after the notification socket overflowed. Needs root (CAP_SYS_ADMIN for the
 * namespace, CAP_NET_ADMIN for ip).
 */
#include <errno.h>
#include <net/if.h>
#include <poll.h>
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <arpa/inet.h>

#include "xpile/fib.h"
#include "xpile/fib_nl.h"
#include "xpile/log.h"
#include "xt.h"

static struct xp_fib *fib;
static struct xp_fib_nl *nl;
static unsigned int if_a, if_c;

static int sh(const char *fmt, ...)
{
	char cmd[1024];
	va_list ap;
	int rc;

	va_start(ap, fmt);
	vsnprintf(cmd, sizeof(cmd), fmt, ap);
	va_end(ap);
	rc = system(cmd);
	if (rc)
		fprintf(stderr, "  command failed (%d): %s\n", rc, cmd);
	return rc;
}

static double now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

/* Processes notifications until @done() holds (or 5 s pass). */
static bool follow(bool (*done)(void *), void *arg)
{
	double t0 = now();

	do {
		struct pollfd p = { .fd = xp_fib_nl_fd(nl), .events = POLLIN };

		if (xp_fib_nl_process(nl, 0) < 0)
			return false;
		if (done(arg))
			return true;
		poll(&p, 1, 20);
	} while (now() - t0 < 5);
	return done(arg);
}

/* Processes until the kernel has been quiet for 100 ms (bounded: 5 s). */
static void settle(void)
{
	double t0 = now(), quiet = now();

	while (now() - quiet < 0.1 && now() - t0 < 5) {
		struct pollfd p = { .fd = xp_fib_nl_fd(nl), .events = POLLIN };

		if (xp_fib_nl_process(nl, 0) > 0)
			quiet = now();
		poll(&p, 1, 20);
	}
}

struct want {
	const char *dst;
	enum xp_fib_verdict v;
	__u32 reason_or_port;
	__u32 hash;
};

static bool lookup_is(void *arg)
{
	const struct want *w = arg;
	struct xp_fib_out o;
	enum xp_fib_verdict v;
	__u8 a[16];

	if (strchr(w->dst, ':')) {
		inet_pton(AF_INET6, w->dst, a);
		v = xp_fib_lookup6(fib, a, w->hash, &o);
	} else {
		inet_pton(AF_INET, w->dst, a);
		v = xp_fib_lookup4(fib, ntohl(*(__u32 *)a), w->hash, &o);
	}
	return v == w->v && (v == XP_FIB_FWD ? o.port : o.reason) == w->reason_or_port;
}

/* After the mirror has caught up, @dst gives verdict @v with that reason or port. */
#define EXPECT(dst_, v_, rp_)                                                           \
	do {                                                                            \
		struct want w_ = { .dst = (dst_), .v = (v_), .reason_or_port = (rp_) }; \
		if (!XT_CHECK(follow(lookup_is, &w_)))                                  \
			fprintf(stderr, "  for %s\n", (dst_));                          \
	} while (0)

static void local_and_connected(void)
{
	EXPECT("198.18.1.1", XP_FIB_PUNT, XP_FIB_R_LOCAL);
	EXPECT("198.18.1.9", XP_FIB_PUNT, XP_FIB_R_NO_NEIGH);
	XT_EQ(sh("ip neigh add 198.18.1.9 lladdr 02:00:00:00:01:09 dev va nud reachable"), 0);
	EXPECT("198.18.1.9", XP_FIB_FWD, 1);
	/* Stale is still usable; noarp is no neighbour; gone is gone. */
	XT_EQ(sh("ip neigh replace 198.18.1.9 lladdr 02:00:00:00:01:09 dev va nud stale"), 0);
	EXPECT("198.18.1.9", XP_FIB_FWD, 1);
	XT_EQ(sh("ip neigh replace 198.18.1.9 lladdr 02:00:00:00:01:09 dev va nud noarp"), 0);
	EXPECT("198.18.1.9", XP_FIB_PUNT, XP_FIB_R_NO_NEIGH);
	XT_EQ(sh("ip neigh replace 198.18.1.9 lladdr 02:00:00:00:01:09 dev va nud permanent"), 0);
	EXPECT("198.18.1.9", XP_FIB_FWD, 1);
	XT_EQ(sh("ip neigh del 198.18.1.9 dev va"), 0);
	EXPECT("198.18.1.9", XP_FIB_PUNT, XP_FIB_R_NO_NEIGH);
	/* A second address: local at once, gone with its deletion. */
	XT_EQ(sh("ip addr add 198.18.1.100/24 dev va"), 0);
	EXPECT("198.18.1.100", XP_FIB_PUNT, XP_FIB_R_LOCAL);
	XT_EQ(sh("ip addr del 198.18.1.100/24 dev va"), 0);
	EXPECT("198.18.1.100", XP_FIB_PUNT, XP_FIB_R_NO_NEIGH);
	EXPECT("224.0.0.1", XP_FIB_PUNT, XP_FIB_R_SPECIAL);
}

static void gateways_and_multipath(void)
{
	struct xp_fib_out o;
	int seen[3] = { 0 };

	XT_EQ(sh("ip route add 198.19.0.0/24 via 198.18.1.2"), 0);
	EXPECT("198.19.0.1", XP_FIB_PUNT, XP_FIB_R_NO_NEIGH);
	XT_EQ(sh("ip neigh add 198.18.1.2 lladdr 02:00:00:00:01:02 dev va nud reachable"), 0);
	XT_EQ(sh("ip neigh add 198.18.2.2 lladdr 02:00:00:00:02:02 dev vc nud reachable"), 0);
	EXPECT("198.19.0.1", XP_FIB_FWD, 1);
	XT_EQ(sh("ip route replace 198.19.0.0/24 nexthop via 198.18.1.2 nexthop via 198.18.2.2 "
		 "weight 3"),
	      0);
	{
		struct want w = { "198.19.0.1", XP_FIB_FWD, 2, 0xffffffffu };

		XT_CHECK(follow(lookup_is, &w));
	}
	for (__u32 h = 0; h < 400; h++)
		if (xp_fib_lookup4(fib, 0xc6130001, h * 10737418u, &o) == XP_FIB_FWD && o.port < 3)
			seen[o.port]++;
	XT_CHECK(seen[1] > 60 && seen[1] < 140);
	XT_CHECK(seen[2] > 260 && seen[2] < 340);
	/* The gateway's neighbour vanishes: its share is punted, not black-holed. */
	XT_EQ(sh("ip neigh del 198.18.1.2 dev va"), 0);
	{
		struct want w = { "198.19.0.1", XP_FIB_PUNT, XP_FIB_R_NO_NEIGH, 0 };

		XT_CHECK(follow(lookup_is, &w));
	}
	XT_EQ(sh("ip route del 198.19.0.0/24"), 0);
	EXPECT("198.19.0.1", XP_FIB_PUNT, XP_FIB_R_NO_ROUTE);
	/* A metric: the better route wins, the other takes over when it goes. */
	XT_EQ(sh("ip route add 198.19.1.0/24 via 198.18.2.2 metric 200"), 0);
	XT_EQ(sh("ip route add 198.19.1.0/24 via 198.18.1.2 metric 100"), 0);
	EXPECT("198.19.1.1", XP_FIB_PUNT, XP_FIB_R_NO_NEIGH);
	XT_EQ(sh("ip route del 198.19.1.0/24 metric 100"), 0);
	EXPECT("198.19.1.1", XP_FIB_FWD, 2);
	XT_EQ(sh("ip route del 198.19.1.0/24"), 0);
	EXPECT("198.19.1.1", XP_FIB_PUNT, XP_FIB_R_NO_ROUTE);
}

static void types_punted_or_dropped(void)
{
	struct xp_fib_stats st;

	XT_EQ(sh("ip route add blackhole 198.19.2.0/24"), 0);
	XT_EQ(sh("ip route add prohibit 198.19.3.0/24"), 0);
	XT_EQ(sh("ip route add unreachable 198.19.4.0/24"), 0);
	XT_EQ(sh("ip route add 198.19.5.0/24 encap ip id 100 dst 198.18.1.5 dev va"), 0);
	XT_EQ(sh("ip nexthop add id 5 via 198.18.1.2 dev va && "
		 "ip route add 198.19.6.0/24 nhid 5"),
	      0);
	XT_EQ(sh("ip route add 198.19.7.0/24 tos 0x10 via 198.18.1.2"), 0);
	EXPECT("198.19.2.1", XP_FIB_DROP, XP_FIB_R_BLACKHOLE);
	EXPECT("198.19.3.1", XP_FIB_PUNT, XP_FIB_R_PROHIBIT);
	EXPECT("198.19.4.1", XP_FIB_PUNT, XP_FIB_R_UNREACHABLE);
	EXPECT("198.19.5.1", XP_FIB_PUNT, XP_FIB_R_UNSUPPORTED);
	EXPECT("198.19.6.1", XP_FIB_PUNT, XP_FIB_R_UNSUPPORTED);
	EXPECT("198.19.7.1", XP_FIB_PUNT, XP_FIB_R_UNSUPPORTED);
	xp_fib_stats(fib, &st);
	XT_EQ(st.unsupported[XP_FIB_U_ENCAP], 1);
	XT_EQ(st.unsupported[XP_FIB_U_NH_ID], 1);
	XT_EQ(st.unsupported[XP_FIB_U_TOS], 1);
	XT_EQ(st.by_reason[XP_FIB_R_BLACKHOLE], 1);
	XT_EQ(sh("ip route del 198.19.2.0/24 && ip route del 198.19.3.0/24 && "
		 "ip route del 198.19.4.0/24 && ip route del 198.19.5.0/24 && "
		 "ip route del 198.19.6.0/24 && ip route del 198.19.7.0/24 tos 0x10 && "
		 "ip nexthop del id 5"),
	      0);
	EXPECT("198.19.2.1", XP_FIB_PUNT, XP_FIB_R_NO_ROUTE);
	EXPECT("198.19.7.1", XP_FIB_PUNT, XP_FIB_R_NO_ROUTE);
}

static void ipv6(void)
{
	struct xp_fib_stats st;

	EXPECT("2001:db8:1::1", XP_FIB_PUNT, XP_FIB_R_LOCAL);
	XT_EQ(sh("ip -6 neigh add 2001:db8:1::2 lladdr 02:00:00:00:01:62 dev va nud reachable"), 0);
	XT_EQ(sh("ip -6 neigh add 2001:db8:2::2 lladdr 02:00:00:00:02:62 dev vc nud reachable"), 0);
	EXPECT("2001:db8:1::2", XP_FIB_FWD, 1); /* a host route on the connected /64 */
	XT_EQ(sh("ip -6 route add 2001:db8:9::/48 via 2001:db8:1::2"), 0);
	EXPECT("2001:db8:9::1", XP_FIB_FWD, 1);
	XT_EQ(sh("ip -6 route append 2001:db8:9::/48 via 2001:db8:2::2"), 0);
	{
		bool done = false;

		for (int i = 0; i < 250 && !done; i++) {
			xp_fib_nl_process(nl, 0);
			xp_fib_stats(fib, &st);
			done = st.groups == 1;
			usleep(20000);
		}
		XT_CHECK(done);
	}
	XT_EQ(sh("ip -6 route del 2001:db8:9::/48 via 2001:db8:1::2"), 0);
	EXPECT("2001:db8:9::1", XP_FIB_FWD, 2);
	XT_EQ(sh("ip -6 route del 2001:db8:9::/48"), 0);
	EXPECT("2001:db8:9::1", XP_FIB_PUNT, XP_FIB_R_NO_ROUTE);
	EXPECT("fe80::1", XP_FIB_PUNT, XP_FIB_R_SPECIAL);
}

/* IPv4 routes through a link that goes down vanish unannounced: the mirror follows. */
static void link_down(void)
{
	XT_EQ(sh("ip neigh replace 198.18.1.2 lladdr 02:00:00:00:01:02 dev va nud reachable"), 0);
	XT_EQ(sh("ip route add 198.19.10.0/24 via 198.18.2.2"), 0);
	XT_EQ(sh("ip route add 198.19.11.0/24 nexthop via 198.18.1.2 nexthop via 198.18.2.2"), 0);
	EXPECT("198.19.10.1", XP_FIB_FWD, 2);
	XT_EQ(sh("ip link set vc down"), 0);
	EXPECT("198.19.10.1", XP_FIB_PUNT, XP_FIB_R_NO_ROUTE);
	for (__u32 h = 0; h < 16; h++) {
		struct want w = { "198.19.11.1", XP_FIB_FWD, 1, h << 28 };

		XT_CHECK(follow(lookup_is, &w));
	}
	XT_EQ(sh("ip link set vc up && ip addr replace 198.18.2.1/24 dev vc"), 0);
	XT_EQ(sh("ip neigh replace 198.18.2.2 lladdr 02:00:00:00:02:02 dev vc nud reachable"), 0);
	XT_EQ(sh("ip route replace 198.19.10.0/24 via 198.18.2.2"), 0);
	EXPECT("198.19.10.1", XP_FIB_FWD, 2);
	XT_EQ(sh("ip route del 198.19.10.0/24; ip route del 198.19.11.0/24"), 0);
}

static bool routes_are(void *arg)
{
	struct xp_fib_stats st;

	xp_fib_stats(fib, &st);
	return st.routes[0] == *(__u64 *)arg;
}

static int write_batch(const char *path, const char *verb, __u32 n)
{
	FILE *f = fopen(path, "w");

	if (!f)
		return -1;
	for (__u32 i = 0; i < n; i++)
		fprintf(f, "route %s 198.19.%u.%u/30 via 198.18.1.2\n", verb, 64 + (i >> 6),
			(i & 63) << 2);
	return fclose(f);
}

/* 10k routes with one `ip -batch`, then gone with another. */
static void batch_10k(void)
{
	char path[] = "/tmp/xpile-fibnl-XXXXXX";
	int fd = mkstemp(path);
	struct xp_fib_stats st;
	__u64 base, want;
	double t0;

	XT_REQUIRE(fd >= 0);
	close(fd);
	settle();
	xp_fib_stats(fib, &st);
	base = st.routes[0];
	XT_EQ(write_batch(path, "add", 10000), 0);
	t0 = now();
	XT_EQ(sh("ip -batch %s", path), 0);
	want = base + 10000;
	if (!XT_CHECK(follow(routes_are, &want))) {
		struct xp_fib_nl_stats ns;

		xp_fib_stats(fib, &st);
		xp_fib_nl_stats(nl, &ns);
		fprintf(stderr,
			"  routes %llu want %llu; msgs %llu newroute %llu errors %llu "
			"enobufs %llu ignored %llu\n",
			(unsigned long long)st.routes[0], (unsigned long long)want,
			(unsigned long long)ns.msgs, (unsigned long long)ns.newroute,
			(unsigned long long)ns.errors, (unsigned long long)ns.enobufs,
			(unsigned long long)ns.ignored);
	}
	fprintf(stderr, "  10000 routes mirrored %.0f ms after ip -batch began\n",
		(now() - t0) * 1e3);
	EXPECT("198.19.64.1", XP_FIB_FWD, 1);
	EXPECT("198.19.220.61", XP_FIB_FWD, 1);
	EXPECT("198.19.220.65", XP_FIB_PUNT, XP_FIB_R_NO_ROUTE);
	XT_EQ(write_batch(path, "del", 10000), 0);
	XT_EQ(sh("ip -batch %s", path), 0);
	XT_CHECK(follow(routes_are, &base));
	EXPECT("198.19.64.1", XP_FIB_PUNT, XP_FIB_R_NO_ROUTE);
	unlink(path);
}

/* A socket too small for a burst loses notifications (ENOBUFS): the resync that
 * follows brings the mirror level with the kernel again. */
static void overflow_resyncs(void)
{
	XP_OPTS(xp_fib_nl_opts, o, .rcvbuf = 4096);
	char path[] = "/tmp/xpile-fibnl-XXXXXX";
	int fd = mkstemp(path);
	struct xp_fib_nl_stats ns;
	struct xp_fib_nl *small = NULL;
	struct xp_fib_nl *big = nl;
	__u64 want;
	struct xp_fib_stats st;

	XT_REQUIRE(fd >= 0);
	close(fd);
	settle();
	xp_fib_stats(fib, &st);
	XT_REQUIRE(!xp_fib_nl_open(fib, &o, &small));
	nl = small;
	want = st.routes[0] + 3000;
	XT_EQ(write_batch(path, "add", 3000), 0);
	XT_EQ(sh("ip -batch %s", path), 0);
	XT_CHECK(follow(routes_are, &want));
	xp_fib_nl_stats(small, &ns);
	XT_CHECK(ns.enobufs > 0);
	XT_CHECK(ns.resyncs > 0);
	XT_EQ(write_batch(path, "del", 3000), 0);
	XT_EQ(sh("ip -batch %s", path), 0);
	want -= 3000;
	XT_CHECK(follow(routes_are, &want));
	xp_fib_nl_close(small);
	nl = big;
	/* The other mirror lost nothing it cannot recover from either. */
	XT_EQ(xp_fib_nl_resync(nl), 0);
	xp_fib_nl_stats(nl, &ns);
	XT_EQ(ns.errors, 0);
	unlink(path);
}

int main(void)
{
	XP_OPTS(xp_fib_opts, fo, .hugepages = XP_HUGE_NEVER, .lpm4_groups = 1024,
		.lpm6_groups = 1024);

	if (geteuid())
		XT_SKIP("needs root (a network namespace of its own, ip route/neigh): run as root");
	if (unshare(CLONE_NEWNET))
		XT_SKIP("unshare(CLONE_NEWNET): %s", strerror(errno));
	if (sh("ip link set lo up && ip link add va type veth peer name vb && "
	       "ip link add vc type veth peer name vd && "
	       "for i in va vb vc vd; do ip link set $i up; done && "
	       "ip addr add 198.18.1.1/24 dev va && ip addr add 198.18.2.1/24 dev vc && "
	       "ip -6 addr add 2001:db8:1::1/64 dev va nodad && "
	       "ip -6 addr add 2001:db8:2::1/64 dev vc nodad"))
		XT_SKIP("cannot set up veths in the test's namespace (iproute2 missing?)");
	if_a = if_nametoindex("va");
	if_c = if_nametoindex("vc");
	if (xp_fib_create(&fo, &fib) || xp_fib_port_set(fib, if_a, 1) ||
	    xp_fib_port_set(fib, if_c, 2))
		XT_SKIP("cannot create the FIB");
	xp_set_log_fn(NULL);
	if (xp_fib_nl_open(fib, NULL, &nl)) {
		fprintf(stderr, "FAIL: xp_fib_nl_open\n");
		return 1;
	}
	XT_RUN(local_and_connected);
	XT_RUN(gateways_and_multipath);
	XT_RUN(types_punted_or_dropped);
	XT_RUN(ipv6);
	XT_RUN(link_down);
	XT_RUN(batch_10k);
	XT_RUN(overflow_resyncs);
	xp_fib_nl_close(nl);
	xp_fib_destroy(fib);
	return xt_done();
}
