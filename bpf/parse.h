/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * L2-L4 header parsing for the steer program. Every read is checked against data_end
 * first; on a short or malformed header the parser stops and returns the reason
 * (enum xp_perr), so the caller can apply the configured action and count it.
 */
#ifndef XPILE_BPF_PARSE_H
#define XPILE_BPF_PARSE_H

#include <linux/bpf.h>
#include <linux/if_ether.h>
#include <linux/in.h>
#include <linux/ip.h>
#include <linux/ipv6.h>
#include <linux/tcp.h>
#include <linux/udp.h>
#include <bpf/bpf_endian.h>
#include <bpf/bpf_helpers.h>

#include "steer_abi.h"

#define XP_PARSE_OK (-1)
#define XP_IP6_MAX_EXT 6 /* extension headers walked before giving up */

#ifndef ETH_P_8021AD
#define ETH_P_8021AD 0x88A8
#endif

struct xp_vlan_hdr {
	__be16 tci;
	__be16 proto;
};

/* What the classifier reads: the flow key, each word stored once and whole as the parse
 * goes (the caller adds the RX queue to k.misc), and the IP family. xp_parsed_*() read
 * the fields back out of the key. */
struct xp_parsed {
	struct xp_fcache_key k; /* k.l4: xp_fcache_l4(); k.misc: xp_fcache_misc(0, ...) */
	__u64 ha; /* xp_fcache_hash_addr() of k.addr, summed while the words are at hand */
	__u8 family; /* 4, 6 or 0 (not IP: no L4 protocol either) */
};

/* The source and destination address bytes (network order): IPv6 in addr[0..1] and
 * addr[2..3], IPv4 in addr[0]'s first and last four bytes. */
static __always_inline const __u8 *xp_parsed_src(const struct xp_parsed *p)
{
	return (const __u8 *)&p->k.addr[0];
}

static __always_inline const __u8 *xp_parsed_dst(const struct xp_parsed *p)
{
	const __u8 *a = (const __u8 *)p->k.addr;

	/* Hides the key's alignment: clang would make a + 4 into a | 4, which the verifier
	 * refuses on a pointer. */
	asm volatile("" : "+r"(a));
	return a + (p->family == 6 ? 16 : 4);
}

static __always_inline __u16 xp_parsed_sport(const struct xp_parsed *p)
{
	return p->k.l4;
}

static __always_inline __u16 xp_parsed_dport(const struct xp_parsed *p)
{
	return p->k.l4 >> 16;
}

/* The outer VLAN id, XP_STEER_VLAN_NONE when untagged. */
static __always_inline __u16 xp_parsed_vlan(const struct xp_parsed *p)
{
	return p->k.l4 >> 32;
}

/* After the VLAN tags, host order. */
static __always_inline __u16 xp_parsed_ethertype(const struct xp_parsed *p)
{
	return p->k.l4 >> 48;
}

/* Known for every IP packet (family != 0). */
static __always_inline __u8 xp_parsed_l4proto(const struct xp_parsed *p)
{
	return p->k.misc >> 16;
}

/* A TCP/UDP header is present (not a later fragment). */
static __always_inline __u8 xp_parsed_has_ports(const struct xp_parsed *p)
{
	return p->k.misc >> 24 & 1;
}

/* The 8 bytes at @p as one word, in memory order. In BPF one load even where the frame
 * puts them off an 8-byte boundary, which the verifier allows where the kernel has
 * efficient unaligned access (x86-64, arm64, ...; the Makefile sets XP_BPF_ALIGNED
 * elsewhere: two 4-byte loads); in C a memcpy, which is the same. */
static __always_inline __u64 xp_load64(const void *p)
{
#if defined(__bpf__) && !defined(XP_BPF_ALIGNED)
	return *(const __u64 *)(long)p; /* through long: clang forgets the 4-byte alignment */
#elif defined(__bpf__)
	const __u32 *w = p;

	return w[0] | (__u64)w[1] << 32; /* little-endian BPF */
#else
	__u64 v;

	__builtin_memcpy(&v, p, sizeof(v));
	return v;
#endif
}

/* The source and destination port at @l4 (TCP and UDP alike) as sport | dport << 16,
 * host order: one 4-byte load, each half byte-swapped. */
static __always_inline __u32 xp_ports(const void *l4)
{
	__u32 v = *(const __u32 *)l4;

	return bpf_ntohl(v) >> 16 | (__u32)bpf_ntohs(v >> 16) << 16;
}

/* The key's L4 words: @base holds the VLAN id and EtherType (xp_fcache_l4()). */
static __always_inline void xp_key_l4(struct xp_parsed *p, __u64 base, __u32 ports, __u8 proto,
				      __u8 has_ports)
{
	p->k.l4 = base | ports;
	p->k.misc = xp_fcache_misc(0, proto, has_ports);
}

/* Checks the L4 header of protocol @proto at @l4; with @key also fills the key's L4
 * words (its ports for TCP and UDP). */
static __always_inline int xp_parse_l4(void *l4, void *end, struct xp_parsed *p, __u8 proto,
				       __u64 base, const int key)
{
	/* TCP expected: one compare first, not a compare tree with ICMP's and UDP's. */
	if (__builtin_expect(proto == IPPROTO_TCP, 1)) {
		struct tcphdr *th = l4;
		__u8 b;

		if ((void *)(th + 1) > end)
			return XP_PERR_TCP_TRUNC;
		/* The data offset is byte 12's high nibble: doff < 5 is the byte below 0x50,
		 * doff * 4 its top six bits shifted down two. */
		b = *((const __u8 *)th + 12);
		if (b < 0x50 || l4 + (b >> 2 & 0x3c) > end)
			return XP_PERR_TCP_HDR;
	} else if (proto == IPPROTO_UDP) {
		struct udphdr *uh = l4;

		if ((void *)(uh + 1) > end)
			return XP_PERR_UDP_TRUNC;
	} else {
		if (proto == IPPROTO_ICMP && l4 + 8 > end)
			return XP_PERR_ICMP_TRUNC;
		if (proto == IPPROTO_ICMPV6 && l4 + 8 > end)
			return XP_PERR_ICMP6_TRUNC;
		if (key)
			xp_key_l4(p, base, 0, proto, 0);
		return XP_PARSE_OK;
	}
	if (key)
		xp_key_l4(p, base, xp_ports(l4), proto, 1);
	return XP_PARSE_OK;
}

/* @base: the VLAN id and EtherType part of the key's l4 word. */
static __always_inline int xp_parse_ip4(void *l3, void *end, struct xp_parsed *p, __u64 base,
					const int key)
{
	struct iphdr *ih = l3;
	__u32 hlen;

	if ((void *)(ih + 1) > end)
		return XP_PERR_IP4_TRUNC;
	if (ih->version != 4 || ih->ihl < 5)
		return XP_PERR_IP4_HDR;
	hlen = ih->ihl * 4;
	if (l3 + hlen > end)
		return XP_PERR_IP4_OPT_TRUNC;
	if (key) {
		p->family = 4;
		p->k.addr[0] = xp_load64(&ih->saddr); /* saddr, daddr: adjacent */
		p->ha = xp_fcache_hash_addr(p->k.addr, 0);
	}
	/* Later fragments carry no L4 header: they match on addresses and protocol. */
	if (ih->frag_off & bpf_htons(0x1fff)) {
		if (key)
			xp_key_l4(p, base, 0, ih->protocol, 0);
		return XP_PARSE_OK;
	}
	return xp_parse_l4(l3 + hlen, end, p, ih->protocol, base, key);
}

/* The four key words of an IPv6 header's addresses. */
static __always_inline void xp_key_ip6(struct xp_parsed *p, const struct ipv6hdr *ih)
{
	const __u8 *a = (const __u8 *)&ih->saddr;

	p->k.addr[0] = xp_load64(a);
	p->k.addr[1] = xp_load64(a + 8);
	p->k.addr[2] = xp_load64(a + 16);
	p->k.addr[3] = xp_load64(a + 24);
	p->ha = xp_fcache_hash_addr(p->k.addr, 1);
}

static __always_inline int xp_parse_ip6(void *l3, void *end, struct xp_parsed *p, __u64 base,
					const int key)
{
	struct ipv6hdr *ih = l3;
	void *cur = (void *)(ih + 1);
	__u8 nh;

	if (cur > end)
		return XP_PERR_IP6_TRUNC;
	if (key) {
		p->family = 6;
		xp_key_ip6(p, ih);
	}
	nh = ih->nexthdr;
	/* One pass per extension header and one for the upper-layer header after the
	 * last of them: six headers before TCP/UDP take seven passes. */
#pragma unroll
	for (int i = 0; i < XP_IP6_MAX_EXT + 1; i++) {
		__u8 *eh = cur;

		switch (nh) {
		case IPPROTO_HOPOPTS:
		case IPPROTO_ROUTING:
		case IPPROTO_DSTOPTS:
		case 135: /* mobility */
			if (i == XP_IP6_MAX_EXT) /* a seventh: too deep before it is read */
				return XP_PERR_IP6_EXT_DEPTH;
			if ((void *)(eh + 2) > end)
				return XP_PERR_IP6_EXT_TRUNC;
			nh = eh[0];
			cur += (__u64)(eh[1] + 1) * 8;
			break;
		case IPPROTO_AH:
			if (i == XP_IP6_MAX_EXT) /* a seventh: too deep before it is read */
				return XP_PERR_IP6_EXT_DEPTH;
			if ((void *)(eh + 2) > end)
				return XP_PERR_IP6_EXT_TRUNC;
			nh = eh[0];
			cur += (__u64)(eh[1] + 2) * 4;
			break;
		case IPPROTO_FRAGMENT: {
			struct frag_hdr {
				__u8 nexthdr, reserved;
				__be16 frag_off;
				__be32 id;
			} *fh = cur;

			if (i == XP_IP6_MAX_EXT) /* a seventh: too deep before it is read */
				return XP_PERR_IP6_EXT_DEPTH;
			if ((void *)(fh + 1) > end)
				return XP_PERR_IP6_EXT_TRUNC;
			nh = fh->nexthdr;
			cur += sizeof(*fh);
			if (fh->frag_off & bpf_htons(0xfff8)) { /* not the first fragment */
				if (key)
					xp_key_l4(p, base, 0, nh, 0);
				return XP_PARSE_OK;
			}
			break;
		}
		default:
			if (cur > end)
				return XP_PERR_IP6_EXT_TRUNC;
			return xp_parse_l4(cur, end, p, nh, base, key);
		}
	}
	return XP_PERR_IP6_EXT_DEPTH;
}

/* The frames most traffic is: IPv4 without options, IPv6 straight to TCP or UDP, untagged
 * or with one 802.1Q tag. No loops and no per-option branches; the L4 checks are the
 * general ones. Returns XP_PARSE_SLOW for any other frame, which the general walk then
 * reads from the start, so both give the same key and the same error. */
#define XP_PARSE_SLOW (-2)

static __always_inline int xp_parse_fast(void *data, void *end, struct xp_parsed *p, const int key)
{
	void *l3 = data + ETH_HLEN;
	__u64 base = (__u64)XP_STEER_VLAN_NONE << 32;
	__u16 proto;

	if (l3 > end)
		return XP_PARSE_SLOW;
	proto = *(__u16 *)(data + 12);
	if (proto == bpf_htons(ETH_P_8021Q)) {
		struct xp_vlan_hdr *vh = l3;

		if ((void *)(vh + 1) > end)
			return XP_PARSE_SLOW;
		base = (__u64)(bpf_ntohs(vh->tci) & 0x0fff) << 32;
		proto = vh->proto;
		l3 = vh + 1;
	}
	if (proto == bpf_htons(ETH_P_IP)) {
		struct iphdr *ih = l3;

		if ((void *)(ih + 1) > end || *(__u8 *)ih != 0x45) /* version 4, IHL 5 */
			return XP_PARSE_SLOW;
		if (key) {
			p->family = 4;
			p->k.addr[0] = xp_load64(&ih->saddr); /* saddr, daddr: adjacent */
			p->k.addr[1] = 0;
			p->k.addr[2] = 0;
			p->k.addr[3] = 0;
			p->ha = xp_fcache_hash_addr(p->k.addr, 0);
		}
		base |= (__u64)ETH_P_IP << 48;
		/* Later fragments carry no L4 header: they match on addresses and protocol. */
		if (ih->frag_off & bpf_htons(0x1fff)) {
			if (key)
				xp_key_l4(p, base, 0, ih->protocol, 0);
			return XP_PARSE_OK;
		}
		return xp_parse_l4(ih + 1, end, p, ih->protocol, base, key);
	}
	if (proto == bpf_htons(ETH_P_IPV6)) {
		struct ipv6hdr *ih = l3;

		if ((void *)(ih + 1) > end ||
		    (ih->nexthdr != IPPROTO_TCP && ih->nexthdr != IPPROTO_UDP))
			return XP_PARSE_SLOW;
		if (key) {
			p->family = 6;
			xp_key_ip6(p, ih);
		}
		return xp_parse_l4(ih + 1, end, p, ih->nexthdr, base | (__u64)ETH_P_IPV6 << 48,
				   key);
	}
	return XP_PARSE_SLOW;
}

/* Returns XP_PARSE_OK or an enum xp_perr. With @key (a constant) the key and family are
 * filled; without it nothing is stored and the addresses and ports are not read: the
 * checks, and so the errors, are the same. */
static __always_inline int xp_parse(void *data, void *end, struct xp_parsed *p, const int key)
{
	struct ethhdr *eth = data;
	void *cur = (void *)(eth + 1);
	__u16 proto, vlan = XP_STEER_VLAN_NONE;
	__u64 base;
	int err = xp_parse_fast(data, end, p, key);

	if (err != XP_PARSE_SLOW)
		return err;
	if (key) {
		p->k.addr[0] = p->k.addr[1] = p->k.addr[2] = p->k.addr[3] = 0;
		p->ha = 0;
		p->family = 0;
	}
	if (cur > end)
		return XP_PERR_ETH_TRUNC;
	proto = bpf_ntohs(eth->h_proto);
#pragma unroll
	for (int i = 0; i < 3; i++) {
		struct xp_vlan_hdr *vh = cur;

		if (proto != ETH_P_8021Q && proto != ETH_P_8021AD)
			break;
		if (i == 2)
			return XP_PERR_VLAN_DEPTH;
		if ((void *)(vh + 1) > end)
			return XP_PERR_VLAN_TRUNC;
		if (i == 0)
			vlan = bpf_ntohs(vh->tci) & 0x0fff;
		proto = bpf_ntohs(vh->proto);
		cur = vh + 1;
	}
	base = (__u64)vlan << 32 | (__u64)proto << 48;
	if (proto == ETH_P_IP)
		return xp_parse_ip4(cur, end, p, base, key);
	if (proto == ETH_P_IPV6)
		return xp_parse_ip6(cur, end, p, base, key);
	if (key)
		xp_key_l4(p, base, 0, 0, 0);
	return XP_PARSE_OK;
}

#endif /* XPILE_BPF_PARSE_H */
