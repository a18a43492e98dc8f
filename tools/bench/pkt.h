/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Crafting packets for the steer program (xpile-bench xdp, tests/bpf): Ethernet,
 * up to two VLAN tags, IPv4 with options and fragments, IPv6 with extension headers,
 * TCP/UDP/ICMP/ICMPv6. pkt_build() also records where each header ends and which
 * parse error a packet cut before that point must produce.
 */
#ifndef XPILE_TEST_PKT_H
#define XPILE_TEST_PKT_H

#include <arpa/inet.h>
#include <stdbool.h>
#include <string.h>
#include <linux/types.h>

#include "steer_abi.h"

#define PKT_MAX 10000

struct pkt_spec {
	int nvlan;
	__u16 vlan[2];
	__u16 tpid[2]; /* 0: 802.1Q; set 0x88a8 for 802.1ad */
	__u16 ethertype; /* for non-IP frames (family 0) */
	int family; /* 4, 6 or 0 */
	const char *src, *dst;
	int ip4_optlen; /* bytes of IPv4 options, multiple of 4 */
	__u16 frag; /* IPv4/IPv6 fragment offset in 8-byte units (later fragment) */
	int ihl; /* override IHL (malformed tests) */
	int n6ext;
	__u8 ext[8]; /* IPv6 extension header types, in order */
	__u8 l4; /* IPPROTO_*; 0 none */
	__u16 sport, dport;
	int tcp_doff; /* default 5 */
	int payload;
};

struct pkt {
	__u8 buf[PKT_MAX];
	__u32 len;
	int nseg;
	struct {
		__u32 end;
		int reason;
	} seg[24];
};

static inline void pkt_seg(struct pkt *p, __u32 end, int reason)
{
	p->seg[p->nseg].end = end;
	p->seg[p->nseg].reason = reason;
	p->nseg++;
}

/* Reason a packet cut to @len must give, or -1 if its headers are complete. */
static inline int pkt_trunc_reason(const struct pkt *p, __u32 len)
{
	for (int i = 0; i < p->nseg; i++)
		if (len < p->seg[i].end)
			return p->seg[i].reason;
	return -1;
}

static inline __u32 pkt_headers_end(const struct pkt *p)
{
	return p->nseg ? p->seg[p->nseg - 1].end : 0;
}

static inline void put16(__u8 *b, __u16 v)
{
	b[0] = v >> 8;
	b[1] = v;
}

static inline int pkt_build(const struct pkt_spec *s, struct pkt *p)
{
	__u8 *b = p->buf;
	__u32 o = 12, l3, l4;
	__u8 proto_field;

	memset(p, 0, sizeof(*p));
	/* two MAC addresses, bytes not a string */
	/* NOLINTNEXTLINE(bugprone-not-null-terminated-result) */
	memcpy(b, "\x02\x00\x00\x00\x00\x02\x02\x00\x00\x00\x00\x01", 12);
	pkt_seg(p, 14, XP_PERR_ETH_TRUNC);
	for (int i = 0; i < s->nvlan; i++) {
		put16(b + o, s->tpid[i] ? s->tpid[i] : 0x8100);
		put16(b + o + 2, s->vlan[i]);
		o += 4;
		pkt_seg(p, o + 2, XP_PERR_VLAN_TRUNC);
	}
	put16(b + o, s->family == 4 ? 0x0800 : s->family == 6 ? 0x86dd : s->ethertype);
	o += 2;
	l3 = o;
	if (s->family == 4) {
		int hl = 20 + s->ip4_optlen;

		b[o] = 0x40 | (s->ihl ? s->ihl : hl / 4);
		b[o + 8] = 64;
		b[o + 9] = s->l4;
		put16(b + o + 6, s->frag);
		if (inet_pton(AF_INET, s->src ? s->src : "198.18.0.1", b + o + 12) != 1 ||
		    inet_pton(AF_INET, s->dst ? s->dst : "198.18.0.2", b + o + 16) != 1)
			return -1;
		for (int i = 0; i < s->ip4_optlen; i++)
			b[o + 20 + i] = 1; /* NOP options */
		pkt_seg(p, o + 20, XP_PERR_IP4_TRUNC);
		if (s->ip4_optlen)
			pkt_seg(p, o + hl, XP_PERR_IP4_OPT_TRUNC);
		o += hl;
	} else if (s->family == 6) {
		__u8 *nh = b + o + 6;

		b[o] = 0x60;
		b[o + 7] = 64;
		if (inet_pton(AF_INET6, s->src ? s->src : "2001:db8::1", b + o + 8) != 1 ||
		    inet_pton(AF_INET6, s->dst ? s->dst : "2001:db8::2", b + o + 24) != 1)
			return -1;
		o += 40;
		pkt_seg(p, o, XP_PERR_IP6_TRUNC);
		for (int i = 0; i < s->n6ext; i++) {
			__u8 t = s->ext[i];
			__u32 len = t == 44 ? 8 : t == 51 ? 12 : 16;

			*nh = t;
			nh = b + o;
			if (t == 51)
				b[o + 1] = len / 4 - 2;
			else if (t == 44)
				put16(b + o + 2, s->frag << 3);
			else
				b[o + 1] = len / 8 - 1;
			o += len;
			pkt_seg(p, o, XP_PERR_IP6_EXT_TRUNC);
		}
		*nh = s->l4 ? s->l4 : 59; /* no next header */
	}
	(void)proto_field;
	l4 = o;
	if (s->family && !(s->frag & 0x1fff)) { /* later fragments carry no L4 header */
		if (s->l4 == IPPROTO_TCP) {
			int doff = s->tcp_doff ? s->tcp_doff : 5;

			put16(b + o, s->sport);
			put16(b + o + 2, s->dport);
			b[o + 12] = doff << 4;
			pkt_seg(p, o + 20, XP_PERR_TCP_TRUNC);
			if (doff > 5)
				pkt_seg(p, o + doff * 4, XP_PERR_TCP_HDR);
			o += doff > 5 ? doff * 4 : 20;
		} else if (s->l4 == IPPROTO_UDP) {
			put16(b + o, s->sport);
			put16(b + o + 2, s->dport);
			put16(b + o + 4, 8 + s->payload);
			o += 8;
			pkt_seg(p, o, XP_PERR_UDP_TRUNC);
		} else if (s->l4 == IPPROTO_ICMP || s->l4 == IPPROTO_ICMPV6) {
			b[o] = s->l4 == IPPROTO_ICMP ? 8 : 128;
			o += 8;
			pkt_seg(p, o,
				s->l4 == IPPROTO_ICMP ? XP_PERR_ICMP_TRUNC : XP_PERR_ICMP6_TRUNC);
		}
	}
	(void)l4;
	if (o + s->payload > PKT_MAX)
		return -1;
	memset(b + o, 0xab, s->payload);
	o += s->payload;
	if (s->family == 4)
		put16(b + l3 + 2, o - l3);
	else if (s->family == 6)
		put16(b + l3 + 4, o - l3 - 40);
	if (o < 60) /* Ethernet minimum; padding is not header */
		o = 60;
	p->len = o;
	return 0;
}

#endif
