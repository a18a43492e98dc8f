/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The route action (XP_ACT_ROUTE): IP forwarding in XDP by the kernel's own FIB and
 * neighbour table (bpf_fib_lookup()), for the packets that need nothing else; every
 * other packet goes on to the engine, which forwards, punts or drops it as before
 * (user/modes/router.c). So the kernel stays the control plane: a route or neighbour
 * it changes is in force for the next packet, with no mirror in between.
 *
 * Forwarded here: unicast to the ingress port's MAC, IPv4 without options or fragments
 * and IPv6 without hop-by-hop or fragment headers, a hop limit above 1, a lookup that
 * finds a resolved neighbour on a device in xp_route_via. The TTL drops by one (the
 * IPv4 checksum as the kernel's ip_decrease_ttl() updates it), the MACs become the
 * egress port's and the neighbour's, and the frame leaves by bpf_redirect(). Anything
 * else is counted by reason (enum xp_route_miss) and not touched.
 *
 * IPv4 flows skip the lookup while their answer is in the flow cache (steer_abi.h,
 * XP_ROUTE_CACHE_SLOTS): the kernel's lookup and the two xp_route_via lookups were
 * most of the action's cost (docs/router.md). It is on only while the router's
 * control thread, which hears every change the answer depends on, keeps xp_route_gen.
 */
#ifndef XPILE_BPF_ROUTE_H
#define XPILE_BPF_ROUTE_H

#include <linux/bpf.h>
#include <linux/if_ether.h>
#include <linux/in.h>
#include <linux/ip.h>
#include <linux/ipv6.h>
#include <bpf/bpf_endian.h>
#include <bpf/bpf_helpers.h>

#include "steer_abi.h"

#ifndef AF_INET
#define AF_INET 2
#endif
#ifndef AF_INET6
#define AF_INET6 10
#endif

#define XP_ROUTE_NOT_ROUTED (-1)

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, XP_ROUTE_VIA_MAX);
	__type(key, __u32);
	__type(value, struct xp_route_via);
} xp_route_via SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct xp_route_stats);
} xp_route_cnt SEC(".maps");

/* One flow's answer: what the lookup was asked (the key), what it said, and under which
 * generation. Per CPU, so its writer is its only reader: no torn entry. */
struct xp_route_flow {
	__be32 saddr, daddr;
	__u32 ports; /* sport, dport as in the packet; 0 for other protocols */
	__u32 in; /* the lookup's device */
	__u8 tos, proto;
	__u16 mtu; /* the lookup's: a larger packet is looked up (frag_needed) */
	__u32 gen; /* xp_route_gen's value read before the lookup */
	__u32 born; /* jiffies at the lookup, low 32 bits */
	__u32 out; /* the port it leaves by */
	__u8 imac[6]; /* the ingress port's: the frames' destination */
	__u8 dmac[6]; /* the neighbour's */
	__u8 smac[6]; /* the egress port's */
	__u16 pad;
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, XP_ROUTE_CACHE_SLOTS);
	__type(key, __u32);
	__type(value, struct xp_route_flow);
} xp_route_cache SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u32);
} xp_route_gen SEC(".maps");

_Static_assert((XP_ROUTE_CACHE_SLOTS & (XP_ROUTE_CACHE_SLOTS - 1)) == 0, "a power of two");

static __always_inline __u32 xp_route_flow_slot(__be32 s, __be32 d, __u32 ports, __u32 in)
{
	__u32 h = (__u32)s * 0x9e3779b1u ^ (__u32)d * 0x85ebca6bu ^ ports * 0xc2b2ae35u ^ in;

	h ^= h >> 15;
	h *= 0x2c1b3c6du;
	h ^= h >> 12;
	return h & (XP_ROUTE_CACHE_SLOTS - 1);
}

/* The protocols whose first 4 bytes are the ports the kernel's multipath hash uses. */
static __always_inline int xp_route_has_ports(__u8 proto)
{
	return proto == IPPROTO_TCP || proto == IPPROTO_UDP || proto == IPPROTO_SCTP;
}

/* The ports word of the cache key: the L4 ports the kernel's multipath hash may use. */
static __always_inline __u32 xp_route_flow_ports(const struct iphdr *ip, const void *end)
{
	const __u32 *l4 = (const void *)(ip + 1);

	if (xp_route_has_ports(ip->protocol) && (const void *)(l4 + 1) <= end)
		return *l4;
	return 0;
}

static __always_inline int xp_route_miss(struct xp_route_stats *st, __u32 v6, __u32 why)
{
	if (st)
		st->miss[v6 & 1][why < XP_RM_MAX ? why : 0]++;
	return XP_ROUTE_NOT_ROUTED;
}

static __always_inline int xp_mac_eq(const __u8 *a, const __u8 *b)
{
	return *(const __u32 *)a == *(const __u32 *)b &&
	       *(const __u16 *)(a + 4) == *(const __u16 *)(b + 4);
}

/* The ports for the kernel's multipath hash (fib_multipath_hash_policy 1 and 3 hash
 * them): without them every flow between two hosts takes one ECMP leg. */
static __always_inline void xp_route_ports(struct bpf_fib_lookup *fib, const void *l4,
					   const void *end, __u8 proto)
{
	if (xp_route_has_ports(proto) && l4 + 4 <= end) {
		fib->sport = ((const __be16 *)l4)[0];
		fib->dport = ((const __be16 *)l4)[1];
	}
}

static __always_inline void xp_ipv4_ttl_dec(struct iphdr *ip)
{
	/* ip_decrease_ttl(): RFC 1624 for the TTL, the high byte of its word. */
	__u32 sum = ip->check;

	sum += bpf_htons(0x0100);
	ip->check = (__u16)(sum + (sum >= 0xffff));
	ip->ttl--;
}

/* The frame forwarded by its flow's entry if it has a valid one, else
 * XP_ROUTE_NOT_ROUTED with the frame untouched (the lookup's path then decides and
 * counts). Only what the lookup would forward has an entry. */
static __always_inline int xp_route_cached(struct xdp_md *ctx, struct xp_route_stats *st, __u32 in,
					   __u32 gen)
{
	void *data = (void *)(long)ctx->data, *end = (void *)(long)ctx->data_end;
	struct ethhdr *eth = data;
	struct iphdr *ip = (void *)(eth + 1);
	const struct xp_route_flow *f;
	__u32 ports, slot;

	if ((void *)(ip + 1) > end || ip->ihl != 5 || ip->version != 4 ||
	    (ip->frag_off & bpf_htons(0x3fff)) || ip->ttl <= 1)
		return XP_ROUTE_NOT_ROUTED;
	ports = xp_route_flow_ports(ip, end);
	slot = xp_route_flow_slot(ip->saddr, ip->daddr, ports, in);
	f = bpf_map_lookup_elem(&xp_route_cache, &slot);
	if (!f || f->gen != gen || f->saddr != ip->saddr || f->daddr != ip->daddr ||
	    f->ports != ports || f->in != in || f->tos != ip->tos || f->proto != ip->protocol ||
	    bpf_ntohs(ip->tot_len) > f->mtu || !xp_mac_eq(eth->h_dest, f->imac) ||
	    (__u32)bpf_jiffies64() - f->born >= XP_ROUTE_FLOW_JIFFIES)
		return XP_ROUTE_NOT_ROUTED;
	xp_ipv4_ttl_dec(ip);
	__builtin_memcpy(eth->h_dest, f->dmac, ETH_ALEN);
	__builtin_memcpy(eth->h_source, f->smac, ETH_ALEN);
	if (st) {
		st->fwd[0]++;
		st->cached[0]++;
	}
	return bpf_redirect(f->out, 0);
}

/* Keeps the answer the lookup just gave for the IPv4 frame at @ip (its header as it
 * came: the TTL not yet decreased). */
static __always_inline void xp_route_remember(const struct iphdr *ip, const void *end, __u32 in,
					      __u32 gen, const struct bpf_fib_lookup *fib,
					      const struct xp_route_via *vi,
					      const struct xp_route_via *vo)
{
	__u32 ports = xp_route_flow_ports(ip, end);
	__u32 slot = xp_route_flow_slot(ip->saddr, ip->daddr, ports, in);
	struct xp_route_flow *f = bpf_map_lookup_elem(&xp_route_cache, &slot);

	if (!f)
		return;
	f->saddr = ip->saddr;
	f->daddr = ip->daddr;
	f->ports = ports;
	f->in = in;
	f->tos = ip->tos;
	f->proto = ip->protocol;
	f->mtu = fib->mtu_result;
	f->gen = gen;
	f->born = (__u32)bpf_jiffies64();
	f->out = vo->ifindex;
	__builtin_memcpy(f->imac, vi->mac, ETH_ALEN);
	__builtin_memcpy(f->dmac, fib->dmac, ETH_ALEN);
	__builtin_memcpy(f->smac, vo->mac, ETH_ALEN);
}

/*
 * Forwards the frame by the FIB of device @in (0: the receiving one): XDP_REDIRECT, or
 * XP_ROUTE_NOT_ROUTED with the frame untouched. Inlined into a function of the caller's
 * that acts on the result (steer.bpf.c: route_act()), so no value of the caller's has to
 * live across the call.
 */
static __always_inline int xp_route(struct xdp_md *ctx, __u32 in)
{
	void *data = (void *)(long)ctx->data, *end = (void *)(long)ctx->data_end;
	struct bpf_fib_lookup fib = {};
	const struct xp_route_via *vi, *vo;
	struct xp_route_stats *st;
	struct ethhdr *eth = data;
	__u32 zero = 0, key, v6 = 0, flags = 0, gen;
	const __u32 *genp;
	__be16 proto;
	long rc;

	st = bpf_map_lookup_elem(&xp_route_cnt, &zero);
	if ((void *)(eth + 1) > end)
		return xp_route_miss(st, 0, XP_RM_NOT_IP);
	in = in ? in : ctx->ingress_ifindex;
	/* Read before the lookup: an answer kept under it is stale once it changes. */
	genp = bpf_map_lookup_elem(&xp_route_gen, &zero);
	gen = genp ? *genp : 0;
	if (gen && eth->h_proto == bpf_htons(ETH_P_IP)) {
		rc = xp_route_cached(ctx, st, in, gen);
		if (rc != XP_ROUTE_NOT_ROUTED)
			return (int)rc;
		data = (void *)(long)ctx->data;
		end = (void *)(long)ctx->data_end;
		eth = data;
		if ((void *)(eth + 1) > end)
			return xp_route_miss(st, 0, XP_RM_NOT_IP);
	}
	key = in;
	vi = bpf_map_lookup_elem(&xp_route_via, &key);
	if (!vi)
		return xp_route_miss(st, 0, XP_RM_NO_PORT);
	if (!xp_mac_eq(eth->h_dest, vi->mac))
		return xp_route_miss(st, 0, XP_RM_NOT_OURS);
	proto = eth->h_proto;
	if (vi->table) {
		fib.tbid = vi->table;
		flags = BPF_FIB_LOOKUP_DIRECT | BPF_FIB_LOOKUP_TBID;
	}
	if (proto == bpf_htons(ETH_P_IP)) {
		struct iphdr *ip = (void *)(eth + 1);

		if ((void *)(ip + 1) > end)
			return xp_route_miss(st, 0, XP_RM_NOT_IP);
		if (ip->ihl != 5 || ip->version != 4)
			return xp_route_miss(st, 0, XP_RM_OPTIONS);
		if (ip->frag_off & bpf_htons(0x3fff))
			return xp_route_miss(st, 0, XP_RM_FRAGMENT);
		if (ip->ttl <= 1)
			return xp_route_miss(st, 0, XP_RM_TTL);
		fib.family = AF_INET;
		fib.tos = ip->tos;
		fib.l4_protocol = ip->protocol;
		fib.tot_len = bpf_ntohs(ip->tot_len);
		fib.ipv4_src = ip->saddr;
		fib.ipv4_dst = ip->daddr;
		xp_route_ports(&fib, ip + 1, end, ip->protocol);
	} else if (proto == bpf_htons(ETH_P_IPV6)) {
		struct ipv6hdr *ip6 = (void *)(eth + 1);

		v6 = 1;
		if ((void *)(ip6 + 1) > end)
			return xp_route_miss(st, 1, XP_RM_NOT_IP);
		if (ip6->nexthdr == 0) /* hop-by-hop: every router reads it */
			return xp_route_miss(st, 1, XP_RM_OPTIONS);
		if (ip6->nexthdr == 44)
			return xp_route_miss(st, 1, XP_RM_FRAGMENT);
		if (ip6->hop_limit <= 1)
			return xp_route_miss(st, 1, XP_RM_TTL);
		fib.family = AF_INET6;
		fib.flowinfo = *(__be32 *)ip6 & bpf_htonl(0x0fffffff);
		fib.l4_protocol = ip6->nexthdr;
		fib.tot_len = bpf_ntohs(ip6->payload_len) + sizeof(*ip6);
		__builtin_memcpy(fib.ipv6_src, &ip6->saddr, 16);
		__builtin_memcpy(fib.ipv6_dst, &ip6->daddr, 16);
		xp_route_ports(&fib, ip6 + 1, end, ip6->nexthdr);
	} else {
		return xp_route_miss(st, 0, XP_RM_NOT_IP);
	}
	fib.ifindex = key;
	rc = bpf_fib_lookup(ctx, &fib, sizeof(fib), flags);
	if (rc != BPF_FIB_LKUP_RET_SUCCESS)
		return xp_route_miss(st, v6, rc > 0 && rc <= XP_RM_FIB_LAST ? (__u32)rc : 0);
	key = fib.ifindex;
	vo = bpf_map_lookup_elem(&xp_route_via, &key);
	if (!vo || !(vo->flags & XP_ROUTE_VIA_F_EGRESS))
		return xp_route_miss(st, v6, XP_RM_NO_PORT);
	/* The frame again: the helper call leaves the verifier no packet bounds. */
	data = (void *)(long)ctx->data;
	end = (void *)(long)ctx->data_end;
	eth = data;
	if (!v6) {
		struct iphdr *ip = (void *)(eth + 1);

		if ((void *)(ip + 1) > end)
			return XP_ROUTE_NOT_ROUTED;
		if (gen)
			xp_route_remember(ip, end, in, gen, &fib, vi, vo);
		xp_ipv4_ttl_dec(ip);
	} else {
		struct ipv6hdr *ip6 = (void *)(eth + 1);

		if ((void *)(ip6 + 1) > end)
			return XP_ROUTE_NOT_ROUTED;
		ip6->hop_limit--;
	}
	__builtin_memcpy(eth->h_dest, fib.dmac, ETH_ALEN);
	__builtin_memcpy(eth->h_source, vo->mac, ETH_ALEN);
	if (st)
		st->fwd[v6]++;
	return bpf_redirect(vo->ifindex, 0);
}

#endif /* XPILE_BPF_ROUTE_H */
