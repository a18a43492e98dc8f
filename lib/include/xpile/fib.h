/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The forwarding table of a router whose control plane is Linux: routes, nexthops,
 * ECMP groups, neighbours and local addresses in the kernel's terms, compiled into the
 * two LPM tables of xpile/lpm.h that workers look up inline, lock-free. The kernel's
 * state reaches it through xpile/fib_nl.h (rtnetlink); it can be programmed directly
 * too (tests, other control planes).
 *
 * What a lookup answers (enum xp_fib_verdict)
 * - XP_FIB_FWD: send out port P to MAC M (the caller rewrites the source MAC with the
 *   port's own, decrements the TTL).
 * - XP_FIB_PUNT with a reason: hand the packet to the kernel through the port's host
 *   TAP; the kernel does what the fast path does not (ICMP errors, ARP/ND resolution,
 *   local delivery, routes it cannot express here). Reasons: no route, local address,
 *   nexthop without a usable neighbour, via an interface that is no port, unreachable,
 *   prohibit, throw, special destinations (multicast, loopback, link-local, limited
 *   broadcast) and unsupported routes (encapsulation, nexthop objects, TOS, more than
 *   XP_FIB_ECMP_MAX paths, unknown types).
 * - XP_FIB_DROP: a blackhole route (the kernel would drop silently too).
 *
 * How it compiles the kernel's state (docs/router.md has the details)
 * - The installed route of a prefix is the kernel's choice: the lowest metric, then the
 *   first of IPv4's aliases (IPv6 multipath siblings are one route). Its hop is a
 *   nexthop (gateway, ifindex), an ECMP group of them (weights kept, the caller's flow
 *   hash picks the path), or a punt/drop reason.
 * - A nexthop's state is one 64-bit word that changes in place when its neighbour
 *   does: usable (REACHABLE, STALE, DELAY, PROBE, PERMANENT, with a MAC) and on a port
 *   -> forward; else punt (no neighbour / no port).
 * - A directly connected destination (a route without gateway) is punted until the
 *   kernel has resolved it; each usable neighbour then gets a host route (/32, /128) of
 *   its own, as VPP's adjacency routes, where the kernel would send to it directly (the
 *   longest route covering it is a connected route on its interface).
 * - Local addresses are host routes that punt; they win
 *   over everything, as the kernel's local table does.
 * - ifindex -> port is the caller's map (xp_fib_port_set): a route via a host TAP is a
 *   route via that TAP's port; an interface without a port punts.
 *
 * Consistency: one writer (the control thread) and lock-free readers, as xpile/lpm.h
 * says: with XP_LPM_DOUBLE (the default here) route changes become live together at
 * xp_fib_commit(); neighbour changes are one 64-bit store, live at once. Nexthop and
 * group ids are reused only after a grace period of the xp_qsbr given, so a reader
 * never follows an id into someone else's nexthop.
 *
 * Threading contract: as xpile/lpm.h (writer: everything but the lookups; readers:
 * xp_fib_lookup*(), registered with the qsbr and quiescent between bursts).
 * Errors are negative errnos; nothing prints but through the log hook (xpile/log.h),
 * once per kind of route the fast path cannot serve, at XP_LOG_INFO.
 */
#ifndef XPILE_FIB_H
#define XPILE_FIB_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>

#include "xpile/api.h"
#include "xpile/lpm.h"
#include "xpile/opts.h"
#include "xpile/qsbr.h"

#ifdef __cplusplus
extern "C" {
#endif

enum xp_fib_verdict {
	XP_FIB_FWD = 0,
	XP_FIB_PUNT = 1,
	XP_FIB_DROP = 2,
};

/* Why a packet is punted or dropped; also the classes routes are counted in. */
enum xp_fib_reason {
	XP_FIB_R_NONE = 0, /* forwarded */
	XP_FIB_R_NO_ROUTE, /* nothing covers it: the kernel answers (ICMP unreachable) */
	XP_FIB_R_LOCAL, /* for this host: a local or broadcast address, a local route */
	XP_FIB_R_NO_NEIGH, /* nexthop or destination not resolved: the kernel resolves it */
	XP_FIB_R_NO_PORT, /* via an interface that is no port of the caller's */
	XP_FIB_R_UNREACHABLE, /* an unreachable route: the kernel sends the ICMP error */
	XP_FIB_R_PROHIBIT, /* a prohibit route: likewise */
	XP_FIB_R_THROW, /* a throw route: the kernel goes on with its other tables */
	XP_FIB_R_SPECIAL, /* multicast, loopback, link-local, limited broadcast, 0/8 */
	XP_FIB_R_UNSUPPORTED, /* a route the fast path cannot express (enum xp_fib_unsup) */
	XP_FIB_R_BLACKHOLE, /* a blackhole route: dropped */
	XP_FIB_R_NR,
};

/* What makes a route unsupported (counted; the route punts). */
enum xp_fib_unsup {
	XP_FIB_U_NONE = 0,
	XP_FIB_U_ENCAP, /* lightweight tunnel encapsulation (RTA_ENCAP: mpls, seg6, ...) */
	XP_FIB_U_NH_ID, /* a nexthop object (RTA_NH_ID) */
	XP_FIB_U_VIA, /* a gateway of another family (RTA_VIA) */
	XP_FIB_U_TOS, /* IPv4 TOS-keyed route */
	XP_FIB_U_WIDE, /* more paths than XP_FIB_ECMP_MAX */
	XP_FIB_U_DEVPATH, /* a multipath route with a path that has no gateway */
	XP_FIB_U_TYPE, /* a route type with no fast-path meaning (nat, xresolve, ...) */
	XP_FIB_U_NR,
};

/* Paths of one ECMP group after weights are spread over its slots. */
#define XP_FIB_ECMP_MAX 63u

/* Hop encoding in the LPM tables (ABI: read by the inline lookups). */
#define XP_FIB_KIND_SHIFT 29
#define XP_FIB_ID_MASK ((1u << XP_FIB_KIND_SHIFT) - 1)
#define XP_FIB_K_NH 0u /* a nexthop id */
#define XP_FIB_K_GROUP 1u /* an ECMP group id */
#define XP_FIB_K_PUNT 2u /* a reason */
#define XP_FIB_K_DROP 3u /* a reason */
#define XP_FIB_HOP(kind, id) ((kind) << XP_FIB_KIND_SHIFT | (id))
/* A nexthop word: bit 63 usable; then bits 48..62 port and 0..47 the MAC (byte 0 at
 * bit 40); else bits 0..7 the punt reason. */
#define XP_FIB_NH_USABLE (1ull << 63)

struct xp_fib_group {
	__u32 n; /* slots used, 1..XP_FIB_ECMP_MAX */
	__u32 nh[XP_FIB_ECMP_MAX]; /* nexthop ids, each repeated by its weight */
};

struct xp_fib_opts {
	size_t sz; /* sizeof(struct xp_fib_opts); the rule: xpile/opts.h */
	struct xp_qsbr *qsbr; /* the workers' quiescence; NULL: no concurrent readers */
	__u32 nexthops; /* nexthop objects (gateways and resolved hosts); 0 = 65536 */
	__u32 groups; /* ECMP groups; 0 = 4096 */
	__u32 lpm4_groups; /* xp_lpm_opts.groups of the IPv4 table; 0 = 16384 */
	__u32 lpm6_groups; /* of the IPv6 table; 0 = 16384 */
	__u32 routes_hint; /* routes expected; the stores grow past it; 0 = 1024 */
	enum xp_hugepages hugepages; /* of the LPM images */
	__u32 lpm6_root_bits; /* 0 = 16 */
	/* One image per table, each change live at once (XP_LPM_INPLACE); default two,
	 * a commit's changes live together (XP_LPM_DOUBLE). */
	bool inplace;
	/* Gateways on a port with no usable neighbour are queued, when their nexthop
	 * appears or their neighbour goes, for xpile/fib_nl.h to ask the kernel to resolve
	 * (RTM_NEWNEIGH with NTF_USE): the kernel resolves on its own only what it sends
	 * to, and a router's ECMP path the kernel's hash never picks would stay punted. */
	bool resolve_gateways;
	__u8 reserved_[2]; /* zero: the tail has no unnamed padding (xpile/opts.h) */
};
#define xp_fib_opts__last_field resolve_gateways

struct xp_fib_stats {
	__u64 routes[2]; /* [0] IPv4, [1] IPv6: routes held (every alias, every metric) */
	__u64 prefixes[2]; /* entries installed in the LPM tables */
	__u64 by_reason[XP_FIB_R_NR]; /* installed prefixes by what they do (NONE: forward) */
	__u64 unsupported[XP_FIB_U_NR]; /* routes held that are unsupported, by why */
	__u64 nexthops, nexthops_usable, groups;
	__u64 neighbours, neighbours_usable, host_routes, local_addrs;
	__u64 install_errors; /* prefixes the LPM refused (-ENOSPC: raise lpm*_groups) */
	__u64 id_exhausted; /* routes punted for want of a nexthop or group id */
	__u64 commits;
	struct xp_lpm_stats lpm[2];
};

/*
 * ABI (tests/unit/test_abi.c): the inline lookups read these in place.
 */
struct xp_fib {
	struct xp_lpm *lpm4;
	struct xp_lpm6 *lpm6;
	__u64 *nh; /* nexthop words, by id (atomic) */
	const struct xp_fib_group *grp; /* by id, immutable while referenced */
	void *priv;
};

/* One path of a route, as the kernel describes it. */
struct xp_fib_path {
	__u8 gw[16]; /* gateway, the route's family (IPv4: 4 bytes, network order) */
	__u32 ifindex;
	__u16 weight; /* 1..256; 0 reads as 1 */
	bool has_gw; /* false: on-link, the destination is the neighbour */
	bool dead; /* RTNH_F_DEAD: left out */
};

/* A route: the key and what it does. */
struct xp_fib_route {
	__u8 family; /* AF_INET, AF_INET6 */
	__u8 dst_len;
	__u8 type; /* RTN_UNICAST, RTN_BLACKHOLE, ... (linux/rtnetlink.h) */
	__u8 tos;
	__u8 dst[16];
	__u32 priority; /* metric */
	enum xp_fib_unsup unsupported; /* set by the caller for what it saw but cannot say */
};

/* xp_fib_route_add() flags, as the kernel's NLM_F_REPLACE and NLM_F_APPEND. */
#define XP_FIB_REPLACE (1u << 0)
#define XP_FIB_APPEND (1u << 1)

/* Creates an empty FIB into *@out (caller's, xp_fib_destroy()): -EINVAL, -ENOMEM. */
XP_API int xp_fib_create(const struct xp_fib_opts *opts, struct xp_fib **out);
XP_API void xp_fib_destroy(struct xp_fib *f);

/*
 * A route as the kernel announced it (RTM_NEWROUTE): @paths[@n] (n may be 0 for
 * blackhole, unreachable, ...). IPv4: a new alias of the key (dst, len, tos, metric)
 * in front, at the end with XP_FIB_APPEND, or in place of the first with
 * XP_FIB_REPLACE; an identical alias is not added twice. IPv6: the paths join the
 * route's (multipath siblings), or replace them with XP_FIB_REPLACE. 0, -EINVAL,
 * -ENOMEM. Shortages are counted and logged once: no nexthop or group id left
 * (id_exhausted), the route punts and the kernel forwards; no LPM group left
 * (install_errors), the prefix is not installed and its packets take the covering
 * route: size lpm4_groups/lpm6_groups for the table (xp_fib_stats.lpm says the use).
 */
XP_API int xp_fib_route_add(struct xp_fib *f, const struct xp_fib_route *r,
			    const struct xp_fib_path *paths, __u32 n, __u32 flags);
/* RTM_DELROUTE: IPv4, the alias equal to it (else the first of its key); IPv6, the
 * paths given (all when n is 0), the route when none is left. 0 or -ENOENT. */
XP_API int xp_fib_route_del(struct xp_fib *f, const struct xp_fib_route *r,
			    const struct xp_fib_path *paths, __u32 n);
/* A neighbour (RTM_NEWNEIGH): NUD state @nud (NUD_*), @mac NULL when it has none. */
XP_API int xp_fib_neigh_set(struct xp_fib *f, __u8 family, const __u8 *addr, __u32 ifindex,
			    __u16 nud, const __u8 mac[6]);
XP_API int xp_fib_neigh_del(struct xp_fib *f, __u8 family, const __u8 *addr, __u32 ifindex);
/* A local address (RTM_NEWADDR): punted. Subnet broadcasts need no entry: no neighbour
 * answers for them, so they punt as unresolved. */
XP_API int xp_fib_addr_add(struct xp_fib *f, __u8 family, const __u8 *addr, __u32 ifindex);
XP_API int xp_fib_addr_del(struct xp_fib *f, __u8 family, const __u8 *addr, __u32 ifindex);
/* The interface went down (IFF_UP off): IPv4 paths through it die, routes left
 * without one go (the kernel flushes them without a notification); up again revives
 * the paths of routes that stayed. */
XP_API int xp_fib_link_set(struct xp_fib *f, __u32 ifindex, bool up);
/* Maps @ifindex to port @port (0..32766), or unmaps it with -1. */
XP_API int xp_fib_port_set(struct xp_fib *f, __u32 ifindex, int port);
/* Publishes the changes (xp_lpm_commit of both tables) and recycles ids whose grace
 * period ended. Never waits for readers. */
XP_API int xp_fib_commit(struct xp_fib *f);
/* Commit and wait until nothing is pending (tests, shutdown). */
XP_API int xp_fib_sync(struct xp_fib *f);
XP_API void xp_fib_stats(const struct xp_fib *f, struct xp_fib_stats *st);
/* "no_route", "local", ... (static string; "?" out of range). */
XP_API const char *xp_fib_reason_name(enum xp_fib_reason r);
XP_API const char *xp_fib_unsup_name(enum xp_fib_unsup u);

struct xp_fib_out {
	__u8 mac[6]; /* FWD: destination MAC */
	__u16 port; /* FWD: output port */
	__u32 reason; /* PUNT, DROP: enum xp_fib_reason; FWD: XP_FIB_R_NONE */
};

/* What an LPM hop means: the slow part of the lookups below, for callers that run
 * xp_lpm_lookup_bulk() themselves. */
static inline enum xp_fib_verdict xp_fib_resolve(const struct xp_fib *f, __u32 hop, __u32 hash,
						 struct xp_fib_out *o)
{
	__u32 kind = hop >> XP_FIB_KIND_SHIFT, id = hop & XP_FIB_ID_MASK;
	__u64 w;

	if (kind == XP_FIB_K_GROUP) {
		const struct xp_fib_group *g = &f->grp[id];

		/* Multiply-shift: the hash's range onto n slots, no division. */
		id = g->nh[(__u32)(((__u64)hash * g->n) >> 32)];
		kind = XP_FIB_K_NH;
	}
	if (kind == XP_FIB_K_NH) {
		w = __atomic_load_n(&f->nh[id], __ATOMIC_RELAXED);
		if (__builtin_expect(!(w & XP_FIB_NH_USABLE), 0)) {
			o->reason = (__u32)(w & 0xff);
			return XP_FIB_PUNT;
		}
		for (int i = 0; i < 6; i++)
			o->mac[i] = (__u8)(w >> (40 - 8 * i));
		o->port = (__u16)((w >> 48) & 0x7fff);
		o->reason = XP_FIB_R_NONE;
		return XP_FIB_FWD;
	}
	if (hop == XP_LPM_MISS) {
		o->reason = XP_FIB_R_NO_ROUTE;
		return XP_FIB_PUNT;
	}
	o->reason = id;
	return kind == XP_FIB_K_DROP ? XP_FIB_DROP : XP_FIB_PUNT;
}

/* 0/8, 127/8, 224/4 and above (multicast, class E, limited broadcast): not routed. */
static inline bool xp_fib_special4(__u32 dst)
{
	__u32 b = dst >> 24;

	return b == 0 || b == 127 || b >= 224;
}

/* ::/127 (unspecified, loopback), fe80::/10 (link-local), ff00::/8 (multicast). */
static inline bool xp_fib_special6(const __u8 *a)
{
	if (a[0] == 0xff || (a[0] == 0xfe && (a[1] & 0xc0) == 0x80))
		return true;
	if (a[0])
		return false;
	for (int i = 1; i < 15; i++)
		if (a[i])
			return false;
	return a[15] <= 1;
}

/*
 * Where a packet to @dst (IPv4, host byte order) goes; @hash is the flow's hash (any
 * 32-bit hash of the 5-tuple, e.g. the NIC's RSS hash): it picks the ECMP path.
 */
static inline enum xp_fib_verdict xp_fib_lookup4(const struct xp_fib *f, __u32 dst, __u32 hash,
						 struct xp_fib_out *o)
{
	if (__builtin_expect(xp_fib_special4(dst), 0)) {
		o->reason = XP_FIB_R_SPECIAL;
		return XP_FIB_PUNT;
	}
	return xp_fib_resolve(f, xp_lpm_lookup(f->lpm4, dst), hash, o);
}

/* The same for IPv6 (@dst: 16 bytes, network order). */
static inline enum xp_fib_verdict xp_fib_lookup6(const struct xp_fib *f, const __u8 dst[16],
						 __u32 hash, struct xp_fib_out *o)
{
	if (__builtin_expect(xp_fib_special6(dst), 0)) {
		o->reason = XP_FIB_R_SPECIAL;
		return XP_FIB_PUNT;
	}
	return xp_fib_resolve(f, xp_lpm6_lookup(f->lpm6, dst), hash, o);
}

/* Largest burst of xp_fib_lookup4_bulk() (it keeps the hops on its stack). */
#define XP_FIB_BULK_MAX 256u

/* xp_fib_lookup4() of @n (<= XP_FIB_BULK_MAX) packets: the LPM prefetching bulk
 * lookup, then each hop resolved. */
static inline void xp_fib_lookup4_bulk(const struct xp_fib *f, const __u32 *dst, const __u32 *hash,
				       struct xp_fib_out *o, enum xp_fib_verdict *v, unsigned int n)
{
	__u32 hop[XP_FIB_BULK_MAX];

	if (n > XP_FIB_BULK_MAX)
		n = XP_FIB_BULK_MAX;
	xp_lpm_lookup_bulk(f->lpm4, dst, hop, n);
	for (unsigned int i = 0; i < n; i++) {
		if (__builtin_expect(xp_fib_special4(dst[i]), 0)) {
			o[i].reason = XP_FIB_R_SPECIAL;
			v[i] = XP_FIB_PUNT;
			continue;
		}
		v[i] = xp_fib_resolve(f, hop[i], hash[i], &o[i]);
	}
}

#ifdef __cplusplus
}
#endif

#endif /* XPILE_FIB_H */
