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

struct xp_parsed {
	__u16 vlan; /* outer VLAN id, XP_STEER_VLAN_NONE when untagged */
	__u16 ethertype; /* after the VLAN tags, host order */
	__u16 sport, dport;
	__u8 family; /* 4, 6 or 0 */
	__u8 has_l4; /* l4proto is known (any IP packet) */
	__u8 has_ports; /* TCP/UDP header present (not a later fragment) */
	__u8 l4proto;
	__u8 saddr[16];
	__u8 daddr[16];
};

static __always_inline int xp_parse_ports(void *l4, void *end, struct xp_parsed *p)
{
	if (p->l4proto == IPPROTO_TCP) {
		struct tcphdr *th = l4;

		if ((void *)(th + 1) > end)
			return XP_PERR_TCP_TRUNC;
		if (th->doff < 5 || l4 + (__u64)th->doff * 4 > end)
			return XP_PERR_TCP_HDR;
		p->sport = bpf_ntohs(th->source);
		p->dport = bpf_ntohs(th->dest);
		p->has_ports = 1;
	} else if (p->l4proto == IPPROTO_UDP) {
		struct udphdr *uh = l4;

		if ((void *)(uh + 1) > end)
			return XP_PERR_UDP_TRUNC;
		p->sport = bpf_ntohs(uh->source);
		p->dport = bpf_ntohs(uh->dest);
		p->has_ports = 1;
	} else if (p->l4proto == IPPROTO_ICMP) {
		if (l4 + 8 > end)
			return XP_PERR_ICMP_TRUNC;
	} else if (p->l4proto == IPPROTO_ICMPV6) {
		if (l4 + 8 > end)
			return XP_PERR_ICMP6_TRUNC;
	}
	return XP_PARSE_OK;
}

static __always_inline int xp_parse_ip4(void *l3, void *end, struct xp_parsed *p)
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
	__builtin_memcpy(p->saddr, &ih->saddr, 4);
	__builtin_memcpy(p->daddr, &ih->daddr, 4);
	p->l4proto = ih->protocol;
	p->has_l4 = 1;
	/* Later fragments carry no L4 header: they match on addresses and protocol. */
	if (ih->frag_off & bpf_htons(0x1fff))
		return XP_PARSE_OK;
	return xp_parse_ports(l3 + hlen, end, p);
}

static __always_inline int xp_parse_ip6(void *l3, void *end, struct xp_parsed *p)
{
	struct ipv6hdr *ih = l3;
	void *cur = (void *)(ih + 1);
	__u8 nh;

	if (cur > end)
		return XP_PERR_IP6_TRUNC;
	p->family = 6;
	__builtin_memcpy(p->saddr, &ih->saddr, 16);
	__builtin_memcpy(p->daddr, &ih->daddr, 16);
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
			if ((void *)(eh + 2) > end)
				return XP_PERR_IP6_EXT_TRUNC;
			nh = eh[0];
			cur += (__u64)(eh[1] + 1) * 8;
			break;
		case IPPROTO_AH:
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
			return xp_parse_ports(cur, end, p);
		}
	}
	return XP_PERR_IP6_EXT_DEPTH;
}

/* Returns XP_PARSE_OK or an enum xp_perr. */
static __always_inline int xp_parse(void *data, void *end, struct xp_parsed *p)
{
	struct ethhdr *eth = data;
	void *cur = (void *)(eth + 1);
	__u16 proto;

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
		return xp_parse_ip4(cur, end, p);
	if (proto == ETH_P_IPV6)
		return xp_parse_ip6(cur, end, p);
	return XP_PARSE_OK;
}

#endif /* XPILE_BPF_PARSE_H */
