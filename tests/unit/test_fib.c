// SPDX-License-Identifier: BSD-3-Clause
/*
 * The FIB in the kernel's terms (xpile/fib.h), without netlink: gateways resolved by
 * their neighbours, host routes for neighbours on connected subnets (and not where a
 * longer route says otherwise), local addresses first, ECMP by weight, metrics and
 * IPv4 aliases, IPv6 siblings, blackhole/unreachable/prohibit/unsupported, ports,
 * links going down, a resync's sweep, ids recycled.
 */
#include <errno.h>
#include <string.h>
#include <arpa/inet.h>
#include <linux/neighbour.h>
#include <linux/rtnetlink.h>
#include <sys/socket.h>

#include "fib_internal.h"
#include "xpile/fib.h"
#include "xpile/log.h"
#include "xt.h"

#define IF_A 10
#define IF_B 11
#define IF_C 12 /* no port */

static const __u8 MAC_A[6] = { 2, 0, 0, 0, 0, 0xa };
static const __u8 MAC_B[6] = { 2, 0, 0, 0, 0, 0xb };
static const __u8 MAC_H[6] = { 2, 0, 0, 0, 0, 0x11 };

static struct xp_fib *make(bool inplace)
{
	XP_OPTS(xp_fib_opts, o, .hugepages = XP_HUGE_NEVER, .inplace = inplace, .lpm4_groups = 64,
		.lpm6_groups = 256, .nexthops = 64, .groups = 16);
	struct xp_fib *f = NULL;

	if (xp_fib_create(&o, &f))
		return NULL;
	xp_fib_port_set(f, IF_A, 1);
	xp_fib_port_set(f, IF_B, 2);
	return f;
}

static __u32 ip4(const char *s)
{
	struct in_addr a;

	inet_pton(AF_INET, s, &a);
	return ntohl(a.s_addr);
}

static void a4(__u8 *out, const char *s)
{
	inet_pton(AF_INET, s, out);
}

static void a6(__u8 *out, const char *s)
{
	inet_pton(AF_INET6, s, out);
}

static struct xp_fib_route rt(__u8 family, const char *dst, __u8 len, __u8 type, __u32 prio)
{
	struct xp_fib_route r = {
		.family = family, .dst_len = len, .type = type, .priority = prio
	};

	if (family == AF_INET)
		a4(r.dst, dst);
	else
		a6(r.dst, dst);
	return r;
}

static struct xp_fib_path via(__u8 family, const char *gw, __u32 ifindex, __u16 weight)
{
	struct xp_fib_path p = { .ifindex = ifindex, .weight = weight, .has_gw = gw != NULL };

	if (gw && family == AF_INET)
		a4(p.gw, gw);
	else if (gw)
		a6(p.gw, gw);
	return p;
}

static int add(struct xp_fib *f, __u8 fam, const char *dst, __u8 len, const char *gw, __u32 ifindex,
	       __u32 prio, __u32 flags)
{
	struct xp_fib_route r = rt(fam, dst, len, RTN_UNICAST, prio);
	struct xp_fib_path p = via(fam, gw, ifindex, 1);

	return xp_fib_route_add(f, &r, &p, 1, flags);
}

static int del(struct xp_fib *f, __u8 fam, const char *dst, __u8 len, const char *gw, __u32 ifindex,
	       __u32 prio)
{
	struct xp_fib_route r = rt(fam, dst, len, RTN_UNICAST, prio);
	struct xp_fib_path p = via(fam, gw, ifindex, 1);

	return xp_fib_route_del(f, &r, &p, 1);
}

static int neigh4(struct xp_fib *f, const char *ip, __u32 ifindex, __u16 nud, const __u8 *mac)
{
	__u8 a[4];

	a4(a, ip);
	return xp_fib_neigh_set(f, AF_INET, a, ifindex, nud, mac);
}

/* Verdict for an IPv4 destination; fills *o. */
static enum xp_fib_verdict go4(struct xp_fib *f, const char *dst, __u32 hash, struct xp_fib_out *o)
{
	xp_fib_commit(f);
	return xp_fib_lookup4(f, ip4(dst), hash, o);
}

static enum xp_fib_verdict go6(struct xp_fib *f, const char *dst, struct xp_fib_out *o)
{
	__u8 a[16];

	a6(a, dst);
	xp_fib_commit(f);
	return xp_fib_lookup6(f, a, 0, o);
}

#define PUNTS(f, dst, why)                                   \
	do {                                                 \
		struct xp_fib_out o_;                        \
		XT_EQ(go4((f), (dst), 0, &o_), XP_FIB_PUNT); \
		XT_EQ(o_.reason, (why));                     \
	} while (0)

#define FWDS(f, dst, prt, want_mac)                         \
	do {                                                \
		struct xp_fib_out o_;                       \
		XT_EQ(go4((f), (dst), 0, &o_), XP_FIB_FWD); \
		XT_EQ(o_.port, (prt));                      \
		XT_CHECK(!memcmp(o_.mac, (want_mac), 6));   \
	} while (0)

static void gateway_follows_neighbour(void)
{
	struct xp_fib *f = make(false);
	struct xp_fib_stats st;

	XT_REQUIRE(f);
	XT_EQ(add(f, AF_INET, "198.18.1.0", 24, NULL, IF_A, 0, 0), 0);
	XT_EQ(add(f, AF_INET, "198.19.0.0", 16, "198.18.1.2", IF_A, 0, 0), 0);
	PUNTS(f, "198.19.5.5", XP_FIB_R_NO_NEIGH); /* not resolved yet */
	PUNTS(f, "198.18.1.9", XP_FIB_R_NO_NEIGH); /* connected, no neighbour */
	PUNTS(f, "198.20.0.1", XP_FIB_R_NO_ROUTE);
	XT_EQ(neigh4(f, "198.18.1.2", IF_A, NUD_REACHABLE, MAC_A), 0);
	FWDS(f, "198.19.5.5", 1, MAC_A);
	/* The gateway is also a host on the subnet: it got a host route. */
	FWDS(f, "198.18.1.2", 1, MAC_A);
	XT_EQ(neigh4(f, "198.18.1.2", IF_A, NUD_STALE, MAC_B), 0);
	FWDS(f, "198.19.5.5", 1, MAC_B);
	XT_EQ(neigh4(f, "198.18.1.2", IF_A, NUD_FAILED, MAC_B), 0);
	PUNTS(f, "198.19.5.5", XP_FIB_R_NO_NEIGH);
	PUNTS(f, "198.18.1.2", XP_FIB_R_NO_NEIGH);
	XT_EQ(neigh4(f, "198.18.1.2", IF_A, NUD_PERMANENT, MAC_A), 0);
	FWDS(f, "198.19.5.5", 1, MAC_A);
	XT_EQ(xp_fib_neigh_del(f, AF_INET, (const __u8[]){ 198, 18, 1, 2 }, IF_A), 0);
	PUNTS(f, "198.19.5.5", XP_FIB_R_NO_NEIGH);
	/* NOARP and INCOMPLETE are no neighbours either. */
	XT_EQ(neigh4(f, "198.18.1.2", IF_A, NUD_NOARP, MAC_A), 0);
	PUNTS(f, "198.19.5.5", XP_FIB_R_NO_NEIGH);
	XT_EQ(neigh4(f, "198.18.1.2", IF_A, NUD_INCOMPLETE, NULL), 0);
	PUNTS(f, "198.19.5.5", XP_FIB_R_NO_NEIGH);
	xp_fib_stats(f, &st);
	XT_EQ(st.routes[0], 2);
	XT_EQ(st.neighbours, 1);
	XT_EQ(st.neighbours_usable, 0);
	XT_EQ(st.host_routes, 0);
	xp_fib_destroy(f);
}

/* A neighbour gets a host route only where the kernel would send to it directly. */
static void host_routes_where_connected(void)
{
	struct xp_fib *f = make(false);
	struct xp_fib_stats st;

	XT_REQUIRE(f);
	XT_EQ(add(f, AF_INET, "198.18.1.0", 24, NULL, IF_A, 0, 0), 0);
	XT_EQ(neigh4(f, "198.18.1.7", IF_A, NUD_REACHABLE, MAC_H), 0);
	XT_EQ(neigh4(f, "198.18.1.8", IF_B, NUD_REACHABLE, MAC_H), 0); /* wrong interface */
	FWDS(f, "198.18.1.7", 1, MAC_H);
	PUNTS(f, "198.18.1.8", XP_FIB_R_NO_NEIGH);
	/* A longer route via a gateway covers .7: the kernel sends it there. */
	XT_EQ(add(f, AF_INET, "198.18.1.4", 30, "198.18.1.2", IF_A, 0, 0), 0);
	PUNTS(f, "198.18.1.7", XP_FIB_R_NO_NEIGH);
	XT_EQ(neigh4(f, "198.18.1.2", IF_A, NUD_REACHABLE, MAC_A), 0);
	FWDS(f, "198.18.1.7", 1, MAC_A);
	XT_EQ(del(f, AF_INET, "198.18.1.4", 30, "198.18.1.2", IF_A, 0), 0);
	FWDS(f, "198.18.1.7", 1, MAC_H);
	/* A /32 route of its own, on-link on its interface: the neighbour serves it. */
	XT_EQ(add(f, AF_INET, "198.18.1.7", 32, NULL, IF_A, 0, 0), 0);
	FWDS(f, "198.18.1.7", 1, MAC_H);
	XT_EQ(del(f, AF_INET, "198.18.1.7", 32, NULL, IF_A, 0), 0);
	/* The connected route goes: no host route either. */
	XT_EQ(del(f, AF_INET, "198.18.1.0", 24, NULL, IF_A, 0), 0);
	PUNTS(f, "198.18.1.7", XP_FIB_R_NO_ROUTE);
	xp_fib_stats(f, &st);
	XT_EQ(st.host_routes, 0);
	XT_EQ(add(f, AF_INET, "198.18.0.0", 16, NULL, IF_A, 0, 0), 0);
	FWDS(f, "198.18.1.7", 1, MAC_H);
	xp_fib_stats(f, &st);
	XT_EQ(st.host_routes, 2); /* .7 and the gateway .2 */
	xp_fib_destroy(f);
}

static void local_addresses_win(void)
{
	struct xp_fib *f = make(false);
	__u8 me[4];

	XT_REQUIRE(f);
	a4(me, "198.18.1.1");
	XT_EQ(add(f, AF_INET, "198.18.1.0", 24, NULL, IF_A, 0, 0), 0);
	XT_EQ(neigh4(f, "198.18.1.1", IF_A, NUD_REACHABLE, MAC_H), 0);
	XT_EQ(xp_fib_addr_add(f, AF_INET, me, IF_A), 0);
	XT_EQ(xp_fib_addr_add(f, AF_INET, me, IF_B), 0); /* the same address twice */
	PUNTS(f, "198.18.1.1", XP_FIB_R_LOCAL);
	XT_EQ(xp_fib_addr_del(f, AF_INET, me, IF_A), 0);
	PUNTS(f, "198.18.1.1", XP_FIB_R_LOCAL);
	XT_EQ(xp_fib_addr_del(f, AF_INET, me, IF_B), 0);
	FWDS(f, "198.18.1.1", 1, MAC_H);
	XT_EQ(xp_fib_addr_del(f, AF_INET, me, IF_B), -ENOENT);
	/* Special destinations never reach the table. */
	PUNTS(f, "224.0.0.5", XP_FIB_R_SPECIAL);
	PUNTS(f, "255.255.255.255", XP_FIB_R_SPECIAL);
	PUNTS(f, "127.0.0.1", XP_FIB_R_SPECIAL);
	xp_fib_destroy(f);
}

static void ecmp_by_weight(void)
{
	struct xp_fib *f = make(false);
	struct xp_fib_route r = rt(AF_INET, "198.19.0.0", 16, RTN_UNICAST, 0);
	struct xp_fib_path p[2] = { via(AF_INET, "198.18.1.2", IF_A, 1),
				    via(AF_INET, "198.18.2.2", IF_B, 3) };
	struct xp_fib_stats st;
	__u32 seen[3] = { 0 };

	XT_REQUIRE(f);
	XT_EQ(xp_fib_route_add(f, &r, p, 2, 0), 0);
	XT_EQ(neigh4(f, "198.18.1.2", IF_A, NUD_REACHABLE, MAC_A), 0);
	XT_EQ(neigh4(f, "198.18.2.2", IF_B, NUD_REACHABLE, MAC_B), 0);
	xp_fib_commit(f);
	for (__u32 h = 0; h < 4000; h++) {
		struct xp_fib_out o = { .port = 0 };

		XT_EQ(xp_fib_lookup4(f, ip4("198.19.3.4"), h * 1073741u, &o), XP_FIB_FWD);
		seen[o.port < 3 ? o.port : 0]++;
	}
	XT_CHECK(seen[1] > 800 && seen[1] < 1200); /* 1 : 3 */
	XT_CHECK(seen[2] > 2800 && seen[2] < 3200);
	/* One path's neighbour fails: its share punts, the other still forwards. */
	XT_EQ(neigh4(f, "198.18.1.2", IF_A, NUD_FAILED, MAC_A), 0);
	xp_fib_commit(f);
	seen[0] = seen[1] = seen[2] = 0;
	for (__u32 h = 0; h < 4000; h++) {
		struct xp_fib_out o = { .port = 0 };

		seen[xp_fib_lookup4(f, ip4("198.19.3.4"), h * 1073741u, &o) == XP_FIB_FWD ? o.port :
											    0]++;
	}
	XT_CHECK(seen[0] > 800 && seen[0] < 1200);
	XT_EQ(seen[1], 0);
	/* Two routes with the same paths share one group. */
	r = rt(AF_INET, "198.20.0.0", 16, RTN_UNICAST, 0);
	XT_EQ(xp_fib_route_add(f, &r, p, 2, 0), 0);
	xp_fib_stats(f, &st);
	XT_EQ(st.groups, 1);
	XT_EQ(st.nexthops, 2);
	/* Replaced by a single path: the group goes once no route holds it. */
	XT_EQ(xp_fib_route_add(f, &r, p, 1, XP_FIB_REPLACE), 0);
	r = rt(AF_INET, "198.19.0.0", 16, RTN_UNICAST, 0);
	XT_EQ(xp_fib_route_del(f, &r, p, 2), 0);
	xp_fib_stats(f, &st);
	XT_EQ(st.groups, 0);
	XT_EQ(st.nexthops, 1);
	XT_EQ(st.routes[0], 1);
	xp_fib_destroy(f);
}

static void types_and_unsupported(void)
{
	struct xp_fib *f = make(false);
	struct xp_fib_route r;
	struct xp_fib_stats st;
	struct xp_fib_out o;
	struct xp_fib_path p = via(AF_INET, "198.18.1.2", IF_A, 1);

	XT_REQUIRE(f);
	r = rt(AF_INET, "198.19.1.0", 24, RTN_BLACKHOLE, 0);
	XT_EQ(xp_fib_route_add(f, &r, NULL, 0, 0), 0);
	r = rt(AF_INET, "198.19.2.0", 24, RTN_UNREACHABLE, 0);
	XT_EQ(xp_fib_route_add(f, &r, NULL, 0, 0), 0);
	r = rt(AF_INET, "198.19.3.0", 24, RTN_PROHIBIT, 0);
	XT_EQ(xp_fib_route_add(f, &r, NULL, 0, 0), 0);
	r = rt(AF_INET, "198.19.4.0", 24, RTN_THROW, 0);
	XT_EQ(xp_fib_route_add(f, &r, NULL, 0, 0), 0);
	r = rt(AF_INET, "198.19.5.0", 24, RTN_UNICAST, 0);
	r.unsupported = XP_FIB_U_ENCAP;
	xp_set_log_fn(NULL);
	XT_EQ(xp_fib_route_add(f, &r, &p, 1, 0), 0);
	r = rt(AF_INET, "198.19.6.0", 24, RTN_NAT, 0);
	XT_EQ(xp_fib_route_add(f, &r, &p, 1, 0), 0);
	r = rt(AF_INET, "198.19.7.0", 24, RTN_UNICAST, 0);
	r.tos = 0x10;
	XT_EQ(xp_fib_route_add(f, &r, &p, 1, 0), 0);
	XT_EQ(go4(f, "198.19.1.1", 0, &o), XP_FIB_DROP);
	XT_EQ(o.reason, XP_FIB_R_BLACKHOLE);
	PUNTS(f, "198.19.2.1", XP_FIB_R_UNREACHABLE);
	PUNTS(f, "198.19.3.1", XP_FIB_R_PROHIBIT);
	PUNTS(f, "198.19.4.1", XP_FIB_R_THROW);
	PUNTS(f, "198.19.5.1", XP_FIB_R_UNSUPPORTED);
	PUNTS(f, "198.19.6.1", XP_FIB_R_UNSUPPORTED);
	PUNTS(f, "198.19.7.1", XP_FIB_R_UNSUPPORTED);
	xp_fib_stats(f, &st);
	XT_EQ(st.by_reason[XP_FIB_R_BLACKHOLE], 1);
	XT_EQ(st.by_reason[XP_FIB_R_UNSUPPORTED], 3);
	XT_EQ(st.unsupported[XP_FIB_U_ENCAP], 1);
	XT_EQ(st.unsupported[XP_FIB_U_TYPE], 1);
	XT_EQ(st.prefixes[0], 7);
	XT_EQ(strcmp(xp_fib_reason_name(XP_FIB_R_BLACKHOLE), "blackhole"), 0);
	XT_EQ(strcmp(xp_fib_unsup_name(XP_FIB_U_ENCAP), "encap"), 0);
	xp_fib_destroy(f);
}

static void metrics_and_aliases(void)
{
	struct xp_fib *f = make(false);
	struct xp_fib_stats st;

	XT_REQUIRE(f);
	XT_EQ(neigh4(f, "198.18.1.2", IF_A, NUD_REACHABLE, MAC_A), 0);
	XT_EQ(neigh4(f, "198.18.2.2", IF_B, NUD_REACHABLE, MAC_B), 0);
	XT_EQ(add(f, AF_INET, "198.19.0.0", 16, "198.18.2.2", IF_B, 200, 0), 0);
	XT_EQ(add(f, AF_INET, "198.19.0.0", 16, "198.18.1.2", IF_A, 100, 0), 0);
	FWDS(f, "198.19.0.1", 1, MAC_A); /* metric 100 beats 200 */
	XT_EQ(del(f, AF_INET, "198.19.0.0", 16, "198.18.1.2", IF_A, 100), 0);
	FWDS(f, "198.19.0.1", 2, MAC_B);
	/* An appended alias of the same key waits behind the first. */
	XT_EQ(add(f, AF_INET, "198.19.0.0", 16, "198.18.1.2", IF_A, 200, XP_FIB_APPEND), 0);
	FWDS(f, "198.19.0.1", 2, MAC_B);
	XT_EQ(del(f, AF_INET, "198.19.0.0", 16, "198.18.2.2", IF_B, 200), 0);
	FWDS(f, "198.19.0.1", 1, MAC_A);
	/* Replace takes the first alias' place. */
	XT_EQ(add(f, AF_INET, "198.19.0.0", 16, "198.18.2.2", IF_B, 200, XP_FIB_REPLACE), 0);
	FWDS(f, "198.19.0.1", 2, MAC_B);
	/* The same alias announced again (a dump after the event) is not doubled. */
	XT_EQ(add(f, AF_INET, "198.19.0.0", 16, "198.18.2.2", IF_B, 200, XP_FIB_APPEND), 0);
	xp_fib_stats(f, &st);
	XT_EQ(st.routes[0], 1);
	XT_EQ(del(f, AF_INET, "198.19.0.0", 16, "198.18.2.2", IF_B, 200), 0);
	PUNTS(f, "198.19.0.1", XP_FIB_R_NO_ROUTE);
	XT_EQ(del(f, AF_INET, "198.19.0.0", 16, "198.18.2.2", IF_B, 200), -ENOENT);
	xp_fib_destroy(f);
}

static void ipv6_siblings(void)
{
	struct xp_fib *f = make(false);
	struct xp_fib_route r = rt(AF_INET6, "2001:db8:9::", 48, RTN_UNICAST, 1024);
	struct xp_fib_path p1 = via(AF_INET6, "fe80::1", IF_A, 1),
			   p2 = via(AF_INET6, "fe80::2", IF_B, 1);
	struct xp_fib_stats st;
	struct xp_fib_out o;
	__u8 g1[16], g2[16], h[16];

	XT_REQUIRE(f);
	a6(g1, "fe80::1");
	a6(g2, "fe80::2");
	XT_EQ(xp_fib_neigh_set(f, AF_INET6, g1, IF_A, NUD_REACHABLE, MAC_A), 0);
	XT_EQ(xp_fib_neigh_set(f, AF_INET6, g2, IF_B, NUD_REACHABLE, MAC_B), 0);
	XT_EQ(xp_fib_route_add(f, &r, &p1, 1, 0), 0);
	XT_EQ(go6(f, "2001:db8:9::5", &o), XP_FIB_FWD);
	XT_EQ(o.port, 1);
	/* A sibling joins: ECMP. */
	XT_EQ(xp_fib_route_add(f, &r, &p2, 1, XP_FIB_APPEND), 0);
	xp_fib_stats(f, &st);
	XT_EQ(st.groups, 1);
	XT_EQ(st.routes[1], 1);
	/* One sibling goes. */
	XT_EQ(xp_fib_route_del(f, &r, &p1, 1), 0);
	XT_EQ(go6(f, "2001:db8:9::5", &o), XP_FIB_FWD);
	XT_EQ(o.port, 2);
	xp_fib_stats(f, &st);
	XT_EQ(st.groups, 0);
	XT_EQ(xp_fib_route_add(f, &r, &p1, 1, XP_FIB_REPLACE), 0);
	XT_EQ(go6(f, "2001:db8:9::5", &o), XP_FIB_FWD);
	XT_EQ(o.port, 1);
	/* Connected /64 and a host route for a neighbour on it. */
	r = rt(AF_INET6, "2001:db8:1::", 64, RTN_UNICAST, 256);
	XT_EQ(xp_fib_route_add(f, &r, &(struct xp_fib_path){ .ifindex = IF_A }, 1, 0), 0);
	XT_EQ(go6(f, "2001:db8:1::9", &o), XP_FIB_PUNT);
	XT_EQ(o.reason, XP_FIB_R_NO_NEIGH);
	a6(h, "2001:db8:1::9");
	XT_EQ(xp_fib_neigh_set(f, AF_INET6, h, IF_A, NUD_DELAY, MAC_H), 0);
	XT_EQ(go6(f, "2001:db8:1::9", &o), XP_FIB_FWD);
	XT_CHECK(!memcmp(o.mac, MAC_H, 6));
	XT_EQ(go6(f, "fe80::1", &o), XP_FIB_PUNT);
	XT_EQ(o.reason, XP_FIB_R_SPECIAL);
	XT_EQ(go6(f, "ff02::1", &o), XP_FIB_PUNT);
	/* Deleting the whole route (no paths given). */
	r = rt(AF_INET6, "2001:db8:9::", 48, RTN_UNICAST, 1024);
	XT_EQ(xp_fib_route_del(f, &r, NULL, 0), 0);
	XT_EQ(go6(f, "2001:db8:9::5", &o), XP_FIB_PUNT);
	XT_EQ(o.reason, XP_FIB_R_NO_ROUTE);
	xp_fib_destroy(f);
}

static void ports_and_links(void)
{
	struct xp_fib *f = make(false);
	struct xp_fib_route r = rt(AF_INET, "198.20.0.0", 16, RTN_UNICAST, 0);
	struct xp_fib_path p[2] = { via(AF_INET, "198.18.1.2", IF_A, 1),
				    via(AF_INET, "198.18.2.2", IF_B, 1) };
	struct xp_fib_stats st;

	XT_REQUIRE(f);
	XT_EQ(neigh4(f, "198.18.1.2", IF_A, NUD_REACHABLE, MAC_A), 0);
	XT_EQ(neigh4(f, "198.18.2.2", IF_B, NUD_REACHABLE, MAC_B), 0);
	XT_EQ(neigh4(f, "198.18.3.2", IF_C, NUD_REACHABLE, MAC_B), 0);
	XT_EQ(add(f, AF_INET, "198.19.0.0", 16, "198.18.1.2", IF_A, 0, 0), 0);
	XT_EQ(add(f, AF_INET, "198.21.0.0", 16, "198.18.3.2", IF_C, 0, 0), 0);
	XT_EQ(xp_fib_route_add(f, &r, p, 2, 0), 0);
	PUNTS(f, "198.21.0.1", XP_FIB_R_NO_PORT);
	XT_EQ(xp_fib_port_set(f, IF_C, 7), 0);
	FWDS(f, "198.21.0.1", 7, MAC_B);
	XT_EQ(xp_fib_port_set(f, IF_C, -1), 0);
	PUNTS(f, "198.21.0.1", XP_FIB_R_NO_PORT);
	XT_EQ(xp_fib_port_set(f, IF_C, 32767), -EINVAL);
	/* IF_A goes down: its single-path route is flushed, the ECMP route keeps IF_B. */
	XT_EQ(xp_fib_link_set(f, IF_A, false), 0);
	PUNTS(f, "198.19.0.1", XP_FIB_R_NO_ROUTE);
	for (__u32 h = 0; h < 64; h++) {
		struct xp_fib_out o;

		XT_EQ(go4(f, "198.20.0.1", h << 26, &o), XP_FIB_FWD);
		XT_EQ(o.port, 2);
	}
	XT_EQ(xp_fib_link_set(f, IF_A, true), 0);
	xp_fib_stats(f, &st);
	XT_EQ(st.routes[0], 2);
	XT_EQ(st.groups, 1);
	xp_fib_destroy(f);
}

/* A resync: what the new dump shows stays, the rest goes. */
static void resync_sweeps(void)
{
	struct xp_fib *f = make(false);
	struct xp_fib_stats st;
	__u8 me[4];

	XT_REQUIRE(f);
	a4(me, "198.18.1.1");
	XT_EQ(add(f, AF_INET, "198.18.1.0", 24, NULL, IF_A, 0, 0), 0);
	XT_EQ(add(f, AF_INET, "198.19.0.0", 16, "198.18.1.2", IF_A, 0, 0), 0);
	XT_EQ(add(f, AF_INET, "198.19.0.0", 16, "198.18.1.3", IF_A, 0, XP_FIB_APPEND), 0);
	XT_EQ(add(f, AF_INET, "198.20.0.0", 16, "198.18.1.2", IF_A, 0, 0), 0);
	XT_EQ(neigh4(f, "198.18.1.2", IF_A, NUD_REACHABLE, MAC_A), 0);
	XT_EQ(neigh4(f, "198.18.1.3", IF_A, NUD_REACHABLE, MAC_B), 0);
	XT_EQ(xp_fib_addr_add(f, AF_INET, me, IF_A), 0);
	xp_fib_resync_begin(f, XP_FIB_SYNC_ROUTES | XP_FIB_SYNC_NEIGHS | XP_FIB_SYNC_ADDRS);
	XT_EQ(add(f, AF_INET, "198.18.1.0", 24, NULL, IF_A, 0, 0), 0);
	/* The key's aliases come in kernel order: now .3 first. */
	XT_EQ(add(f, AF_INET, "198.19.0.0", 16, "198.18.1.3", IF_A, 0, 0), 0);
	XT_EQ(neigh4(f, "198.18.1.2", IF_A, NUD_REACHABLE, MAC_A), 0);
	XT_EQ(neigh4(f, "198.18.1.3", IF_A, NUD_REACHABLE, MAC_B), 0);
	xp_fib_resync_end(f);
	FWDS(f, "198.19.0.1", 1, MAC_B);
	PUNTS(f, "198.20.0.1", XP_FIB_R_NO_ROUTE);
	PUNTS(f, "198.18.1.1", XP_FIB_R_NO_NEIGH); /* no longer local */
	xp_fib_stats(f, &st);
	XT_EQ(st.routes[0], 2);
	XT_EQ(st.local_addrs, 0);
	XT_EQ(st.host_routes, 2);
	xp_fib_destroy(f);
}

/* Ids freed go back only after a commit and a grace period, then are reused. */
static void ids_recycled(void)
{
	XP_OPTS(xp_fib_opts, o, .hugepages = XP_HUGE_NEVER, .nexthops = 2, .groups = 1,
		.lpm4_groups = 4, .lpm6_groups = 4);
	struct xp_qsbr *q = NULL;
	struct xp_fib *f = NULL;
	struct xp_fib_stats st;
	__u32 reader;

	XT_REQUIRE(!xp_qsbr_create(2, &q));
	o.qsbr = q;
	XT_REQUIRE(!xp_fib_create(&o, &f));
	xp_fib_port_set(f, IF_A, 1);
	XT_REQUIRE(!xp_qsbr_register(q, &reader));
	XT_EQ(add(f, AF_INET, "198.19.0.0", 16, "198.18.1.2", IF_A, 0, 0), 0);
	XT_EQ(add(f, AF_INET, "198.20.0.0", 16, "198.18.1.3", IF_A, 0, 0), 0);
	XT_EQ(add(f, AF_INET, "198.21.0.0", 16, "198.18.1.4", IF_A, 0, 0), 0);
	xp_fib_stats(f, &st);
	XT_EQ(st.id_exhausted, 1);
	XT_EQ(st.nexthops, 2);
	PUNTS(f, "198.21.0.1", XP_FIB_R_NO_NEIGH);
	xp_qsbr_quiescent(q, reader); /* the reader's burst ended */
	XT_EQ(del(f, AF_INET, "198.19.0.0", 16, "198.18.1.2", IF_A, 0), 0);
	XT_EQ(xp_fib_commit(f), 0);
	/* The reader has not been quiescent since: the freed id waits, and the next
	 * change waits for the reader (here it goes offline, so the writer goes on). */
	xp_qsbr_offline(q, reader);
	XT_EQ(add(f, AF_INET, "198.22.0.0", 16, "198.18.1.5", IF_A, 0, 0), 0);
	xp_fib_stats(f, &st);
	XT_EQ(st.nexthops, 2);
	XT_EQ(st.id_exhausted, 1);
	XT_EQ(xp_qsbr_unregister(q, reader), 0);
	xp_fib_destroy(f);
	xp_qsbr_destroy(q);
}

/* Double-buffered: route changes are live at the commit, not before. */
static void double_commit(void)
{
	struct xp_fib *f = make(false);
	struct xp_fib_out o;

	XT_REQUIRE(f);
	XT_EQ(neigh4(f, "198.18.1.2", IF_A, NUD_REACHABLE, MAC_A), 0);
	XT_EQ(add(f, AF_INET, "198.19.0.0", 16, "198.18.1.2", IF_A, 0, 0), 0);
	XT_EQ(xp_fib_lookup4(f, ip4("198.19.0.1"), 0, &o), XP_FIB_PUNT);
	XT_EQ(o.reason, XP_FIB_R_NO_ROUTE);
	XT_EQ(xp_fib_commit(f), 0);
	XT_EQ(xp_fib_lookup4(f, ip4("198.19.0.1"), 0, &o), XP_FIB_FWD);
	xp_fib_destroy(f);
	f = make(true);
	XT_REQUIRE(f);
	XT_EQ(neigh4(f, "198.18.1.2", IF_A, NUD_REACHABLE, MAC_A), 0);
	XT_EQ(add(f, AF_INET, "198.19.0.0", 16, "198.18.1.2", IF_A, 0, 0), 0);
	XT_EQ(xp_fib_lookup4(f, ip4("198.19.0.1"), 0, &o), XP_FIB_FWD);
	xp_fib_destroy(f);
}

/* resolve_gateways: a gateway on a port without a usable neighbour is queued once when
 * its nexthop appears and again when its neighbour goes; not one without a port, not
 * one already resolved, nothing without the option. */
static void gateways_to_resolve(void)
{
	XP_OPTS(xp_fib_opts, o, .hugepages = XP_HUGE_NEVER, .lpm4_groups = 64, .lpm6_groups = 256,
		.nexthops = 64, .groups = 16, .resolve_gateways = true);
	struct xp_fib *f = NULL;
	struct xp_fib_gw g[4];
	__u8 want[4];

	XT_EQ(xp_fib_create(&o, &f), 0);
	xp_fib_port_set(f, IF_A, 1);
	XT_EQ(add(f, AF_INET, "198.18.20.0", 24, "198.18.1.2", IF_A, 0, 0), 0);
	XT_EQ(add(f, AF_INET, "198.18.21.0", 24, "198.18.1.2", IF_A, 0, 0), 0); /* shared */
	XT_EQ(add(f, AF_INET, "198.18.22.0", 24, "198.18.3.2", IF_C, 0, 0), 0); /* no port */
	XT_EQ(xp_fib_resolve_take(f, g, 4), 1);
	a4(want, "198.18.1.2");
	XT_EQ(g[0].family, AF_INET);
	XT_EQ(g[0].ifindex, IF_A);
	XT_CHECK(!memcmp(g[0].addr, want, 4));
	XT_EQ(xp_fib_resolve_take(f, g, 4), 0);
	/* Resolved: a new route through it asks nothing; the neighbour gone, it is asked. */
	XT_EQ(neigh4(f, "198.18.1.2", IF_A, NUD_REACHABLE, MAC_A), 0);
	XT_EQ(add(f, AF_INET, "198.18.23.0", 24, "198.18.1.2", IF_A, 0, 0), 0);
	XT_EQ(xp_fib_resolve_take(f, g, 4), 0);
	XT_EQ(xp_fib_neigh_del(f, AF_INET, want, IF_A), 0);
	XT_EQ(xp_fib_resolve_take(f, g, 4), 1);
	PUNTS(f, "198.18.20.1", XP_FIB_R_NO_NEIGH);
	xp_fib_destroy(f);

	f = make(false); /* without the option */
	XT_EQ(add(f, AF_INET, "198.18.20.0", 24, "198.18.1.2", IF_A, 0, 0), 0);
	XT_EQ(xp_fib_resolve_take(f, g, 4), 0);
	xp_fib_destroy(f);
}

static void bad_arguments(void)
{
	struct xp_fib *f = make(false);
	struct xp_fib_route r = rt(AF_INET, "198.19.0.0", 33, RTN_UNICAST, 0);

	XT_REQUIRE(f);
	XT_EQ(xp_fib_route_add(f, &r, NULL, 0, 0), -EINVAL);
	r.dst_len = 16;
	r.family = AF_PACKET;
	XT_EQ(xp_fib_route_add(f, &r, NULL, 0, 0), -EINVAL);
	r.family = AF_INET;
	XT_EQ(xp_fib_route_add(f, &r, NULL, 1, 0), -EINVAL);
	XT_EQ(xp_fib_route_del(f, &r, NULL, 0), -ENOENT);
	XT_EQ(xp_fib_neigh_del(f, AF_INET, (const __u8[4]){ 1 }, IF_A), -ENOENT);
	XT_EQ(xp_fib_neigh_set(NULL, AF_INET, (const __u8[4]){ 1 }, IF_A, 0, NULL), -EINVAL);
	XT_EQ(xp_fib_route_add(NULL, &r, NULL, 0, 0), -EINVAL);
	xp_fib_destroy(NULL);
	xp_fib_destroy(f);
}

int main(void)
{
	XT_RUN(gateway_follows_neighbour);
	XT_RUN(host_routes_where_connected);
	XT_RUN(local_addresses_win);
	XT_RUN(ecmp_by_weight);
	XT_RUN(types_and_unsupported);
	XT_RUN(metrics_and_aliases);
	XT_RUN(ipv6_siblings);
	XT_RUN(ports_and_links);
	XT_RUN(resync_sweeps);
	XT_RUN(ids_recycled);
	XT_RUN(double_commit);
	XT_RUN(gateways_to_resolve);
	XT_RUN(bad_arguments);
	return xt_done();
}
