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

/* What the classifier reads. The addresses go straight into the flow key (a u64 store
 * per word); the caller packs the rest into it (xp_fcache_l4(), xp_fcache_misc()). */
struct xp_parsed {
	struct xp_fcache_key k;
	__u16 vlan; /* outer VLAN id, XP_STEER_VLAN_NONE when untagged */
	__u16 ethertype; /* after the VLAN tags, host order */
	__u32 ports; /* xp_ports(): one store, read back whole by the key */
	__u8 family; /* 4, 6 or 0 */
	__u8 has_l4; /* l4proto is known (any IP packet) */
	__u8 has_ports; /* TCP/UDP header present (not a later fragment) */
	__u8 l4proto;
};

/* The source and destination port at @l4 (TCP and UDP alike) as sport | dport << 16,
 * host order: one 4-byte load, each half byte-swapped. */
static __always_inline __u32 xp_ports(const void *l4)
{
	__u32 v = *(const __u32 *)l4;

	return bpf_ntohl(v) >> 16 | (__u32)bpf_ntohs(v >> 16) << 16;
}

/* Checks the L4 header of protocol @proto at @l4; with @key also reads its ports. */
static __always_inline int xp_parse_ports(void *l4, void *end, struct xp_parsed *p, __u8 proto,
					  const int key)
{
	if (proto == IPPROTO_TCP) {
		struct tcphdr *th = l4;

		if ((void *)(th + 1) > end)
			return XP_PERR_TCP_TRUNC;
		if (th->doff < 5 || l4 + (__u64)th->doff * 4 > end)
			return XP_PERR_TCP_HDR;
	} else if (proto == IPPROTO_UDP) {
		struct udphdr *uh = l4;

		if ((void *)(uh + 1) > end)
			return XP_PERR_UDP_TRUNC;
	} else if (proto == IPPROTO_ICMP) {
		if (l4 + 8 > end)
			return XP_PERR_ICMP_TRUNC;
		return XP_PARSE_OK;
	} else if (proto == IPPROTO_ICMPV6) {
		if (l4 + 8 > end)
			return XP_PERR_ICMP6_TRUNC;
		return XP_PARSE_OK;
	} else {
		return XP_PARSE_OK;
	}
	if (key) {
		p->ports = xp_ports(l4);
		p->has_ports = 1;
	}
	return XP_PARSE_OK;
}

static __always_inline int xp_parse_ip4(void *l3, void *end, struct xp_parsed *p, const int key)
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
	p->family = 4;
	if (key) {
		p->k.addr[0] = ih->saddr;
		p->k.addr[2] = ih->daddr;
	}
	p->l4proto = ih->protocol;
	p->has_l4 = 1;
	/* Later fragments carry no L4 header: they match on addresses and protocol. */
	if (ih->frag_off & bpf_htons(0x1fff))
		return XP_PARSE_OK;
	return xp_parse_ports(l3 + hlen, end, p, p->l4proto, key);
}

static __always_inline int xp_parse_ip6(void *l3, void *end, struct xp_parsed *p, const int key)
{
	struct ipv6hdr *ih = l3;
	void *cur = (void *)(ih + 1);
	__u8 nh;

	if (cur > end)
		return XP_PERR_IP6_TRUNC;
	p->family = 6;
	if (key) {
		const __u32 *a = (const __u32 *)&ih->saddr;

		/* Four-byte aligned in the header: two loads per word. */
		p->k.addr[0] = a[0] | (__u64)a[1] << 32;
		p->k.addr[1] = a[2] | (__u64)a[3] << 32;
		p->k.addr[2] = a[4] | (__u64)a[5] << 32;
		p->k.addr[3] = a[6] | (__u64)a[7] << 32;
	}
	nh = ih->nexthdr;
	p->has_l4 = 1;
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
				p->l4proto = nh;
				return XP_PARSE_OK;
			}
			break;
		}
		default:
			p->l4proto = nh;
			if (cur > end)
				return XP_PERR_IP6_EXT_TRUNC;
			return xp_parse_ports(cur, end, p, nh, key);
		}
	}
	return XP_PERR_IP6_EXT_DEPTH;
}

/* The frames most traffic is: IPv4 without options, IPv6 straight to TCP or UDP, untagged
 * or with one 802.1Q tag. No loops and no per-option branches; the L4 checks are the
 * general ones. Returns XP_PARSE_SLOW for any other frame, which the general walk then
 * reads from the start, so both give the same fields and the same error. */
#define XP_PARSE_SLOW (-2)

static __always_inline void xp_parsed_ip(struct xp_parsed *p, __u8 family, __u16 ethertype,
					 __u8 l4proto, __u16 vlan)
{
	p->family = family;
	p->ethertype = ethertype;
	p->l4proto = l4proto;
	p->vlan = vlan;
	p->has_l4 = 1;
	p->has_ports = 0;
	p->ports = 0;
}

static __always_inline int xp_parse_fast(void *data, void *end, struct xp_parsed *p, const int key)
{
	void *l3 = data + ETH_HLEN;
	__u16 proto, vlan = XP_STEER_VLAN_NONE;

	if (l3 > end)
		return XP_PARSE_SLOW;
	proto = *(__u16 *)(data + 12);
	if (proto == bpf_htons(ETH_P_8021Q)) {
		struct xp_vlan_hdr *vh = l3;

		if ((void *)(vh + 1) > end)
			return XP_PARSE_SLOW;
		vlan = bpf_ntohs(vh->tci) & 0x0fff;
		proto = vh->proto;
		l3 = vh + 1;
	}
	if (proto == bpf_htons(ETH_P_IP)) {
		struct iphdr *ih = l3;

		if ((void *)(ih + 1) > end || *(__u8 *)ih != 0x45) /* version 4, IHL 5 */
			return XP_PARSE_SLOW;
		if (key) {
			p->k.addr[0] = ih->saddr;
			p->k.addr[1] = 0;
			p->k.addr[2] = ih->daddr;
			p->k.addr[3] = 0;
			xp_parsed_ip(p, 4, ETH_P_IP, ih->protocol, vlan);
		}
		/* Later fragments carry no L4 header: they match on addresses and protocol. */
		if (ih->frag_off & bpf_htons(0x1fff))
			return XP_PARSE_OK;
		return xp_parse_ports(ih + 1, end, p, ih->protocol, key);
	}
	if (proto == bpf_htons(ETH_P_IPV6)) {
		struct ipv6hdr *ih = l3;

		if ((void *)(ih + 1) > end ||
		    (ih->nexthdr != IPPROTO_TCP && ih->nexthdr != IPPROTO_UDP))
			return XP_PARSE_SLOW;
		if (key) {
			const __u32 *a = (const __u32 *)&ih->saddr;

			p->k.addr[0] = a[0] | (__u64)a[1] << 32;
			p->k.addr[1] = a[2] | (__u64)a[3] << 32;
			p->k.addr[2] = a[4] | (__u64)a[5] << 32;
			p->k.addr[3] = a[6] | (__u64)a[7] << 32;
			xp_parsed_ip(p, 6, ETH_P_IPV6, ih->nexthdr, vlan);
		}
		return xp_parse_ports(ih + 1, end, p, ih->nexthdr, key);
	}
	return XP_PARSE_SLOW;
}

/* Returns XP_PARSE_OK or an enum xp_perr. Without @key (a constant) the fast path fills
 * nothing and the addresses and ports are not read: the checks, and so the errors, are
 * the same. */
static __always_inline int xp_parse(void *data, void *end, struct xp_parsed *p, const int key)
{
	struct ethhdr *eth = data;
	void *cur = (void *)(eth + 1);
	__u16 proto;
	int err = xp_parse_fast(data, end, p, key);

	if (err != XP_PARSE_SLOW)
		return err;
	if (key) {
		p->k.addr[0] = p->k.addr[1] = p->k.addr[2] = p->k.addr[3] = 0;
		p->ports = 0;
	}
	p->vlan = XP_STEER_VLAN_NONE;
	p->family = 0;
	p->has_l4 = 0;
	p->has_ports = 0;
	p->l4proto = 0;
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
			p->vlan = bpf_ntohs(vh->tci) & 0x0fff;
		proto = bpf_ntohs(vh->proto);
		cur = vh + 1;
	}
	p->ethertype = proto;
	if (proto == ETH_P_IP)
		return xp_parse_ip4(cur, end, p, key);
	if (proto == ETH_P_IPV6)
		return xp_parse_ip6(cur, end, p, key);
	return XP_PARSE_OK;
}

#endif /* XPILE_BPF_PARSE_H */
