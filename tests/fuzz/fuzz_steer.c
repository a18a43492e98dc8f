// SPDX-License-Identifier: BSD-3-Clause
/*
 * The steer XDP program (build/bpf/steer.o, loaded and given its rules through the
 * library) under BPF_PROG_TEST_RUN with generated, mutated and raw frames. Each frame's
 * verdict and every counter it moves (verdict packets and bytes, parse-error reasons,
 * per-rule packets and bytes) must match a reference classifier written here from the
 * documented semantics (docs/steer.md "Parsing" and "Actions and counters",
 * bpf/steer_abi.h), not from bpf/parse.h.
 *
 * The rule set is fixed and uses every field kind: queue, VLAN, EtherType (by name and
 * number), source and destination prefixes of both families (/0 to /128), L4 protocol
 * by name and number, single ports and ranges, and every action (pass, drop, tx,
 * redirect, xsk, xsk slot). No AF_XDP socket is registered, so XSK verdicts are the
 * documented fallback: PASS, counted under xsk_nosock and pass.
 *
 * Both entry points run: xp_steer (single buffer, counts data_end - data) on one veth
 * and xp_steer_frags (counts bpf_xdp_get_buff_len()) on the other, frames of one
 * buffer (multi-buffer frames are not generated).
 *
 * Input: byte 0 picks the RX queue, the program, and raw (the rest is the frame) or
 * generated (the rest drives a frame builder, a cut and a few byte flips).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <net/if.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <linux/if_ether.h>
#include <linux/if_link.h>
#include <netinet/in.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <xdp/libxdp.h>

#include "fuzz.h"
#include "xpile/steer.h"

#define NQUEUES 4
#define MAX_FRAME 3000 /* fits one buffer: the single-buffer program */

static const char *const rule_text[] = {
	"prio 1 queue 3 udp action drop",
	"prio 2 vlan 100 action tx",
	"prio 3 arp action redirect xpf1",
	"prio 4 ethertype 0x88cc action drop",
	"prio 5 src 198.18.0.0/15 udp dport 4789 action xsk slot 5",
	"prio 6 dst 198.18.7.0/24 tcp sport 1000-2000 action redirect xpf1",
	"prio 7 ipv6 src 2001:db8::/32 dst 2001:db8:1::/48 icmpv6 action drop",
	"prio 8 src fe80::/10 udp sport 53 action tx",
	"prio 9 dst 198.18.1.1/32 action pass",
	"prio 10 proto 47 action drop",
	"prio 11 tcp dport 0-1023 action xsk",
	"prio 12 ip icmp action tx",
	"prio 13 dst 2001:db8::1/128 action redirect xpf1",
	"prio 14 vlan 4095 ipv6 action drop",
	"prio 15 src 0.0.0.0/0 proto 255 action tx",
	"prio 16 ip sport 7 dport 7-8 action drop",
	"prio 17 src 10.0.0.0/8 dst 10.1.0.0/17 action pass",
	"prio 18 queue 1 vlan 7 ethertype 0x0800 src 198.18.0.0/16 dst 198.18.0.0/16 tcp sport 80 dport 80 action drop",
	"prio 19 src 2001:db8:1:2:3:4:5:6/127 action xsk",
	"prio 20 ipv6 proto 0 action tx",
};
#define NRULES (sizeof(rule_text) / sizeof(rule_text[0]))

/* Both entry points: xp_steer on xpf0, xp_steer_frags (xdp.frags) on xpf1. */
static struct target {
	const char *ifname;
	int frags;
	struct xp_steer *st;
	int ifindex;
	int set; /* sets[set] is in force */
	unsigned long execs;
	struct xp_rule inforce[NRULES]; /* as read back: evaluation order, ids */
} targets[2] = { { .ifname = "xpf0", .frags = -1 }, { .ifname = "xpf1", .frags = 1 } },
  *tgt = &targets[0];
/* Set 0 is rule_text; set 1 the same rules in reverse priority with other actions. Every
 * 4096 frames a target switches sets: cached verdicts of the old set must not count. */
static struct xp_rule sets[2][NRULES];
static const struct xp_action dflt = { .kind = XP_ACT_TX }, perr_act = { .kind = XP_ACT_DROP };
static unsigned long known_ext7;

static void cleanup(void)
{
	for (int i = 0; i < 2; i++) {
		if (targets[i].st)
			xp_steer_close(targets[i].st, true);
		targets[i].st = NULL;
	}
}

/* ---- the reference, from docs/steer.md ---- */

struct ref {
	int perr; /* enum xp_perr, or -1 */
	__u16 vlan, ethertype, sport, dport;
	int family; /* 0, 4, 6 */
	bool has_l4, has_ports;
	__u8 l4proto;
	__u8 saddr[16], daddr[16];
	int n6ext; /* IPv6 extension headers walked */
};

static __u16 be16(const __u8 *p)
{
	return (__u16)(p[0] << 8 | p[1]);
}

/* "TCP, UDP, ICMP, ICMPv6 (8-byte headers)"; tcp_hdr: "data offset below 5 or past the
 * packet". */
static int ref_l4(const __u8 *b, __u32 len, __u32 off, struct ref *r)
{
	switch (r->l4proto) {
	case IPPROTO_TCP:
		if (off + 20 > len)
			return XP_PERR_TCP_TRUNC;
		if ((b[off + 12] >> 4) < 5 || off + (b[off + 12] >> 4) * 4u > len)
			return XP_PERR_TCP_HDR;
		break;
	case IPPROTO_UDP:
		if (off + 8 > len)
			return XP_PERR_UDP_TRUNC;
		break;
	case IPPROTO_ICMP:
		return off + 8 > len ? XP_PERR_ICMP_TRUNC : -1;
	case IPPROTO_ICMPV6:
		return off + 8 > len ? XP_PERR_ICMP6_TRUNC : -1;
	default:
		return -1;
	}
	r->sport = be16(b + off);
	r->dport = be16(b + off + 2);
	r->has_ports = true;
	return -1;
}

/* "IPv4 with IHL and options (later fragments have no L4 header: they match on
 * addresses and protocol only)"; ip4_hdr: "version or IHL wrong". */
static int ref_ip4(const __u8 *b, __u32 len, __u32 off, struct ref *r)
{
	__u32 hl;

	if (off + 20 > len)
		return XP_PERR_IP4_TRUNC;
	if (b[off] >> 4 != 4 || (b[off] & 15) < 5)
		return XP_PERR_IP4_HDR;
	hl = (b[off] & 15) * 4u;
	if (off + hl > len)
		return XP_PERR_IP4_OPT_TRUNC;
	r->family = 4;
	memcpy(r->saddr, b + off + 12, 4);
	memcpy(r->daddr, b + off + 16, 4);
	r->l4proto = b[off + 9];
	r->has_l4 = true;
	if (be16(b + off + 6) & 0x1fff)
		return -1;
	return ref_l4(b, len, off + hl, r);
}

/* "IPv6 with a walk of up to 6 extension headers (hop-by-hop, routing, destination
 * options, mobility, AH, fragment; later fragments stop there)". */
static int ref_ip6(const __u8 *b, __u32 len, __u32 off, struct ref *r)
{
	__u32 cur = off + 40;
	__u8 nh;

	if (cur > len)
		return XP_PERR_IP6_TRUNC;
	r->family = 6;
	memcpy(r->saddr, b + off + 8, 16);
	memcpy(r->daddr, b + off + 24, 16);
	r->has_l4 = true;
	nh = b[off + 6];
	for (;;) {
		__u8 t = nh;

		if (t != 0 && t != 43 && t != 60 && t != 135 && t != 51 && t != 44)
			break;
		if (r->n6ext == 6)
			return XP_PERR_IP6_EXT_DEPTH;
		r->n6ext++;
		if (t == 44) {
			if (cur + 8 > len)
				return XP_PERR_IP6_EXT_TRUNC;
			nh = b[cur];
			if (be16(b + cur + 2) & 0xfff8) { /* a later fragment */
				r->l4proto = nh;
				return -1;
			}
			cur += 8;
			continue;
		}
		if (cur + 2 > len)
			return XP_PERR_IP6_EXT_TRUNC;
		nh = b[cur];
		/* AH counts 4-byte units plus 2, the others 8-byte units plus 1 */
		cur += t == 51 ? (b[cur + 1] + 2) * 4u : (b[cur + 1] + 1) * 8u;
	}
	r->l4proto = nh;
	if (cur > len)
		return XP_PERR_IP6_EXT_TRUNC;
	return ref_l4(b, len, cur, r);
}

/* "Ethernet; up to two VLAN tags (802.1Q and 802.1ad, the outer id is the rule's vlan)". */
static void ref_parse(const __u8 *b, __u32 len, struct ref *r)
{
	__u32 off = 14;
	__u16 proto;
	int tags = 0;

	memset(r, 0, sizeof(*r));
	r->vlan = XP_STEER_VLAN_NONE;
	if (len < 14) {
		r->perr = XP_PERR_ETH_TRUNC;
		return;
	}
	proto = be16(b + 12);
	while (proto == ETH_P_8021Q || proto == ETH_P_8021AD) {
		if (tags == 2) {
			r->perr = XP_PERR_VLAN_DEPTH;
			return;
		}
		if (off + 4 > len) {
			r->perr = XP_PERR_VLAN_TRUNC;
			return;
		}
		if (!tags)
			r->vlan = be16(b + off) & 0x0fff;
		proto = be16(b + off + 2);
		off += 4;
		tags++;
	}
	r->ethertype = proto;
	r->perr = proto == ETH_P_IP   ? ref_ip4(b, len, off, r) :
		  proto == ETH_P_IPV6 ? ref_ip6(b, len, off, r) :
					-1;
}

static bool prefix_in(const __u8 *addr, const __u8 *pfx, __u32 bits)
{
	for (__u32 i = 0; i < bits; i++) {
		__u8 m = 0x80 >> (i % 8);

		if ((addr[i / 8] & m) != (pfx[i / 8] & m))
			return false;
	}
	return true;
}

/* A rule matches when every field it constrains matches; the first in priority order
 * wins. */
static bool ref_match(const struct xp_rule *ru, const struct ref *r, __u32 queue)
{
	__u32 f = ru->fields;

	if ((f & XP_RF_QUEUE) && ru->queue != queue)
		return false;
	if ((f & XP_RF_VLAN) && ru->vlan != r->vlan)
		return false;
	if ((f & XP_RF_ETHTYPE) && ru->ethertype != r->ethertype)
		return false;
	if ((f & XP_RF_SRC) &&
	    (r->family != ru->family || !prefix_in(r->saddr, ru->src, ru->src_len)))
		return false;
	if ((f & XP_RF_DST) &&
	    (r->family != ru->family || !prefix_in(r->daddr, ru->dst, ru->dst_len)))
		return false;
	if ((f & XP_RF_L4PROTO) && (!r->has_l4 || r->l4proto != ru->l4proto))
		return false;
	if ((f & XP_RF_SPORT) &&
	    (!r->has_ports || r->sport < ru->sport_lo || r->sport > ru->sport_hi))
		return false;
	if ((f & XP_RF_DPORT) &&
	    (!r->has_ports || r->dport < ru->dport_lo || r->dport > ru->dport_hi))
		return false;
	return true;
}

struct expect {
	int retval;
	__u64 verdict[XP_CNT_MAX]; /* packets; bytes are packets x len */
	__u64 perr[XP_PERR_MAX];
	int rule; /* index of the rule counted, -1 none */
};

/* "pass, drop, tx, redirect IFACE (bpf_redirect), xsk ... a queue without a socket
 * passes the packet to the kernel and counts it under xsk_nosock". */
static void ref_act(const struct xp_action *a, struct expect *e)
{
	switch (a->kind) {
	case XP_ACT_DROP:
		e->retval = XDP_DROP;
		e->verdict[XP_CNT_DROP]++;
		break;
	case XP_ACT_TX:
		e->retval = XDP_TX;
		e->verdict[XP_CNT_TX]++;
		break;
	case XP_ACT_REDIRECT:
		e->retval = XDP_REDIRECT;
		e->verdict[XP_CNT_REDIRECT]++;
		break;
	case XP_ACT_ROUTE: /* no port in xp_route_via: on to the socket, of which there is none */
	case XP_ACT_XSK: /* no socket registered anywhere */
		e->retval = XDP_PASS;
		e->verdict[XP_CNT_XSK_NOSOCK]++;
		e->verdict[XP_CNT_PASS]++;
		break;
	default:
		e->retval = XDP_PASS;
		e->verdict[XP_CNT_PASS]++;
	}
}

static void ref_classify(const __u8 *b, __u32 len, __u32 queue, struct expect *e, struct ref *r)
{
	memset(e, 0, sizeof(*e));
	e->rule = -1;
	ref_parse(b, len, r);
	if (r->perr >= 0) {
		e->perr[r->perr]++;
		e->verdict[XP_CNT_PARSE_ERR]++;
		ref_act(&perr_act, e);
		return;
	}
	for (__u32 i = 0; i < NRULES; i++)
		if (ref_match(&tgt->inforce[i], r, queue)) {
			e->rule = (int)i;
			ref_act(&tgt->inforce[i].action, e);
			return;
		}
	e->verdict[XP_CNT_DEFAULT]++;
	ref_act(&dflt, e);
}

/* ---- frames ---- */

struct gen {
	struct fuzz_in in;
	__u8 *b;
	__u32 o;
};

static void put(struct gen *g, const void *p, __u32 n)
{
	if (g->o + n <= MAX_FRAME)
		memcpy(g->b + g->o, p, n);
	g->o += n;
}

static void put8(struct gen *g, __u8 v)
{
	put(g, &v, 1);
}

static void put16(struct gen *g, __u16 v)
{
	__u8 x[2] = { v >> 8, v };

	put(g, x, 2);
}

static const char *const addr4[] = {
	"198.18.0.1", "198.19.255.255", "198.18.7.9", "198.18.1.1",
	"198.20.0.1", "10.1.2.3",	"10.1.128.0", "198.17.255.255"
};
static const char *const addr6[] = {
	"2001:db8::1", "2001:db8:1::5", "2001:db8:1:2:3:4:5:7", "2001:db8:1:2:3:4:5:8",
	"fe80::1",     "febf:ffff::1",	"2001:db9::1",		"::"
};
static const __u16 ports[] = { 53, 7, 8, 4789, 1000, 2000, 999, 2001, 0, 1023, 1024, 80, 65535 };
static const __u8 protos[] = { IPPROTO_TCP, IPPROTO_UDP, IPPROTO_ICMP, IPPROTO_ICMPV6, 47, 255, 0 };
static const __u8 exts[] = { 0, 43, 60, 135, 51, 44 };
#define PICK(g, t) (t[fuzz_u8(&(g)->in) % (sizeof(t) / sizeof(t[0]))])

static void gen_addr(struct gen *g, int fam)
{
	__u8 a[16];

	if (fuzz_u8(&g->in) < 32) { /* any address */
		for (int i = 0; i < (fam == 4 ? 4 : 16); i++)
			a[i] = fuzz_u8(&g->in);
	} else {
		inet_pton(fam == 4 ? AF_INET : AF_INET6, fam == 4 ? PICK(g, addr4) : PICK(g, addr6),
			  a);
	}
	put(g, a, fam == 4 ? 4 : 16);
}

static void gen_l4(struct gen *g, __u8 proto)
{
	__u8 k = fuzz_u8(&g->in);

	if (proto == IPPROTO_TCP || proto == IPPROTO_UDP) {
		put16(g, k & 1 ? fuzz_u16(&g->in) : PICK(g, ports));
		put16(g, k & 2 ? fuzz_u16(&g->in) : PICK(g, ports));
		if (proto == IPPROTO_TCP) {
			__u8 doff = k & 4 ? fuzz_u8(&g->in) >> 4 : 5 + (k >> 5);

			put(g, "\0\0\0\1\0\0\0\0", 8);
			put8(g, doff << 4);
			put(g, "\x10\xff\xff\0\0\0\0", 7);
			for (__u32 i = 20; i < doff * 4u; i++)
				put8(g, 1);
		} else {
			put(g, "\0\x10\0\0", 4);
		}
	} else if (proto == IPPROTO_ICMP || proto == IPPROTO_ICMPV6) {
		put(g, proto == IPPROTO_ICMP ? "\x08\0\0\0\0\1\0\1" : "\x80\0\0\0\0\1\0\1", 8);
	}
	for (__u8 n = fuzz_u8(&g->in) % 48; n; n--)
		put8(g, 0xab);
}

static void gen_ip4(struct gen *g)
{
	__u8 k = fuzz_u8(&g->in), opt = k & 0x80 ? (k >> 3 & 7) : 0;
	__u8 proto = k & 0x40 ? fuzz_u8(&g->in) : PICK(g, protos);
	__u16 frag = k & 1 ? (k & 2 ? 0x2000 : fuzz_u16(&g->in)) : 0;

	put8(g, k & 4 ? fuzz_u8(&g->in) : 0x45 + opt);
	put(g, "\0\0\0\0\0", 5);
	put16(g, frag);
	put8(g, 64);
	put8(g, proto);
	put16(g, 0);
	gen_addr(g, 4);
	gen_addr(g, 4);
	for (__u32 i = 0; i < opt * 4u; i++)
		put8(g, 1);
	if (!(frag & 0x1fff))
		gen_l4(g, proto);
}

static void gen_ip6(struct gen *g)
{
	__u8 k = fuzz_u8(&g->in), n = k & 0x80 ? 6 : k % 8;
	__u8 types[8], proto = k & 0x40 ? fuzz_u8(&g->in) : PICK(g, protos);
	bool later = false;

	for (int i = 0; i < n; i++)
		types[i] = PICK(g, exts);
	put(g, "\x60\0\0\0\0\0", 6);
	put8(g, n ? types[0] : proto);
	put8(g, 64);
	gen_addr(g, 6);
	gen_addr(g, 6);
	for (int i = 0; i < n && !later; i++) {
		__u8 next = i + 1 < n ? types[i + 1] : proto, hl = fuzz_u8(&g->in) % 3;

		put8(g, next);
		if (types[i] == 44) {
			__u16 fo = fuzz_u8(&g->in) < 64 ? fuzz_u16(&g->in) : 0;

			put8(g, 0);
			put16(g, fo);
			put(g, "\0\0\0\1", 4);
			later = fo & 0xfff8;
		} else {
			__u32 len = types[i] == 51 ? (hl + 2) * 4u : (hl + 1) * 8u;

			put8(g, hl);
			for (__u32 j = 2; j < len; j++)
				put8(g, 1);
		}
	}
	if (!later)
		gen_l4(g, proto);
}

static __u32 gen_frame(struct fuzz_in *in, __u8 *b)
{
	static const __u16 vids[] = { 100, 4095, 7, 0, 1 };
	static const __u16 types[] = {
		ETH_P_IP, ETH_P_IPV6, ETH_P_ARP, 0x88cc, ETH_P_IP, ETH_P_IPV6
	};
	struct gen g = { *in, b, 0 };
	__u8 k = fuzz_u8(&g.in);
	__u16 et;

	put(&g, "\x02\0\0\0\0\x02\x02\0\0\0\0\x01", 12);
	for (int i = 0; i < (k & 3); i++) { /* three tags: one too many */
		put16(&g, k & (4 << i) ? ETH_P_8021AD : ETH_P_8021Q);
		put16(&g, (k & 0x40 ? fuzz_u16(&g.in) : PICK(&g, vids)) | (i << 13));
	}
	et = k & 0x20 ? fuzz_u16(&g.in) : PICK(&g, types);
	put16(&g, et);
	if (et == ETH_P_IP)
		gen_ip4(&g);
	else if (et == ETH_P_IPV6)
		gen_ip6(&g);
	else
		for (__u8 n = fuzz_u8(&g.in) % 64; n; n--)
			put8(&g, 0xcd);
	if (g.o < 60) /* Ethernet minimum */
		g.o = 60;
	if (g.o > MAX_FRAME)
		g.o = MAX_FRAME;
	/* a cut anywhere (headers included), then a few flipped bytes */
	k = fuzz_u8(&g.in);
	if (k & 1) {
		__u32 cut = 14 + fuzz_u16(&g.in) % (g.o - 13);

		g.o = cut < g.o ? cut : g.o;
	}
	for (int n = (k >> 1) % 4; n; n--) {
		__u16 pos = fuzz_u16(&g.in);

		b[pos % g.o] ^= fuzz_u8(&g.in);
	}
	*in = g.in;
	return g.o;
}

/* ---- the program ---- */

static int prog_run(const __u8 *b, __u32 len, __u32 queue, int *retval)
{
	struct xdp_md ctx = { .data_end = len,
			      .ingress_ifindex = tgt->ifindex,
			      .rx_queue_index = queue };
	static __u8 out[MAX_FRAME + 512];
	LIBBPF_OPTS(bpf_test_run_opts, o, .data_in = b, .data_size_in = len, .data_out = out,
		    .data_size_out = sizeof(out), .ctx_in = &ctx, .ctx_size_in = sizeof(ctx),
		    .repeat = 1);
	int err = bpf_prog_test_run_opts(xp_steer_prog_fd(tgt->st), &o);

	*retval = (int)o.retval;
	return err;
}

struct snap {
	struct xp_steer_stats s;
	struct xp_counter rc[NRULES];
};

static void snap_read(struct snap *sn)
{
	struct xp_rule got[NRULES];
	__u32 n = 0;

	FUZZ_CHECK(!xp_steer_stats_read(tgt->st, &sn->s), "stats read");
	FUZZ_CHECK(!xp_steer_rules_get(tgt->st, got, sn->rc, NRULES, &n) && n == NRULES,
		   "rules get");
}

static const char *const verdict_names[XP_CNT_MAX] = { "pass",	   "drop",	 "tx",
						       "redirect", "xsk",	 "xsk_nosock",
						       "default",  "parse_error" };

static void dump(const __u8 *b, __u32 len, __u32 queue, const struct ref *r, const struct expect *e,
		 int retval, const struct snap *a, const struct snap *z)
{
	fprintf(stderr, "frame (%u bytes, queue %u, %s):", len, queue,
		tgt->frags > 0 ? "xp_steer_frags" : "xp_steer");
	for (__u32 i = 0; i < len && i < 160; i++)
		fprintf(stderr, "%s%02x", i % 32 ? "" : "\n  ", b[i]);
	fprintf(stderr,
		"\nreference: perr %d vlan %u ethertype %#x family %d l4 %u/%d ports %u>%u/%d "
		"ext %d rule %d retval %d; program retval %d\n",
		r->perr, r->vlan, r->ethertype, r->family, r->l4proto, r->has_l4, r->sport,
		r->dport, r->has_ports, r->n6ext, e->rule, e->retval, retval);
	for (int i = 0; i < XP_CNT_MAX; i++)
		fprintf(stderr, "  %s: want +%llu got +%llu\n", verdict_names[i],
			(unsigned long long)e->verdict[i],
			(unsigned long long)(z->s.verdict[i].packets - a->s.verdict[i].packets));
	for (int i = 0; i < XP_PERR_MAX; i++)
		if (e->perr[i] || z->s.parse_err[i] != a->s.parse_err[i])
			fprintf(stderr, "  perr %d: want +%llu got +%llu\n", i,
				(unsigned long long)e->perr[i],
				(unsigned long long)(z->s.parse_err[i] - a->s.parse_err[i]));
	for (__u32 i = 0; i < NRULES; i++)
		if (z->rc[i].packets != a->rc[i].packets) {
			char txt[512];

			xp_rule_format(&tgt->inforce[i], txt, sizeof(txt));
			fprintf(stderr, "  rule %u (%s, set %d) counted\n", i, txt, tgt->set);
		}
}

static void check_frame(const __u8 *b, __u32 len, __u32 queue)
{
	struct snap a, z;
	struct expect e;
	struct ref r;
	int retval, err;
	bool ok = true;

	if (len < 14 || len > MAX_FRAME) /* the kernel's test run takes Ethernet frames */
		return;
	ref_classify(b, len, queue, &e, &r);
	snap_read(&a);
	err = prog_run(b, len, queue, &retval);
	FUZZ_CHECK(!err, "BPF_PROG_TEST_RUN failed: %s (len %u)", strerror(-err), len);
	snap_read(&z);

	ok = retval == e.retval;
	for (int i = 0; i < XP_CNT_MAX; i++) {
		__u64 dp = z.s.verdict[i].packets - a.s.verdict[i].packets;
		__u64 db = z.s.verdict[i].bytes - a.s.verdict[i].bytes;

		ok &= dp == e.verdict[i] && db == e.verdict[i] * len;
	}
	for (int i = 0; i < XP_PERR_MAX; i++)
		ok &= z.s.parse_err[i] - a.s.parse_err[i] == e.perr[i];
	for (__u32 i = 0; i < NRULES; i++) {
		__u64 want = e.rule == (int)i;

		ok &= z.rc[i].packets - a.rc[i].packets == want &&
		      z.rc[i].bytes - a.rc[i].bytes == want * len;
	}
	if (ok)
		return;
	/* docs/steer.md: "a seventh extension header is ip6_ext_depth"; parse.h reads the
	 * seventh first: cut short it is ip6_ext_trunc, a later fragment is classified */
	bool ext7 = r.family == 6 && r.perr == XP_PERR_IP6_EXT_DEPTH;

	if (ext7 && fuzz_known("steer-ip6-ext7")) {
		if (!known_ext7++)
			fprintf(stderr, "fuzz: known finding [steer-ip6-ext7] seen (tolerated)\n");
		return;
	}
	dump(b, len, queue, &r, &e, retval, &a, &z);
	FUZZ_CHECK(ok, "the steer program and the reference disagree on this frame%s",
		   ext7 ? " [steer-ip6-ext7]" : "");
}

static int use_set(struct target *t, int set)
{
	__u32 n = 0;

	if (xp_steer_rules_replace(t->st, sets[set], NRULES) ||
	    xp_steer_rules_get(t->st, t->inforce, NULL, NRULES, &n) || n != NRULES)
		return -1;
	t->set = set;
	return 0;
}

static int open_target(struct target *t)
{
	struct xp_steer_opts o = { .sz = sizeof(o), .ifname = t->ifname, .frags = t->frags };
	int rc;

	t->ifindex = (int)if_nametoindex(t->ifname);
	rc = xp_steer_open(&o, &t->st);
	if (rc) {
		/* a load or verifier failure is a failure, never a skip */
		fprintf(stderr, "fuzz_steer: cannot load the steer program on %s: %s\n", t->ifname,
			strerror(-rc));
		return -1;
	}
	if (xp_steer_default_set(t->st, &dflt, &perr_act) || use_set(t, 0)) {
		fprintf(stderr, "fuzz_steer: cannot install the rules on %s\n", t->ifname);
		return -1;
	}
	/* What is in force is what rule_text says (ids assigned, order kept). */
	for (__u32 i = 0; i < NRULES; i++) {
		struct xp_rule want = sets[0][i];

		want.id = t->inforce[i].id;
		if (memcmp(&want, &t->inforce[i], sizeof(want))) {
			fprintf(stderr, "fuzz_steer: rule %u in force differs from '%s'\n", i,
				rule_text[i]);
			return -1;
		}
	}
	return 0;
}

static int setup(void)
{
	char err[256];

	if (geteuid()) {
		fprintf(stderr, "SKIP: fuzz_steer needs root (BPF_PROG_TEST_RUN, a veth)\n");
		exit(77);
	}
	libxdp_set_print(NULL);
	libbpf_set_print(NULL);
	if (unshare(CLONE_NEWNET)) {
		fprintf(stderr, "fuzz_steer: unshare(CLONE_NEWNET): %s\n", strerror(errno));
		return -1;
	}
	/* Nothing but the test runs may reach the program: no IPv6 (router and neighbour
	 * solicitations from the peer would be counted between two snapshots). */
	for (int i = 0; i < 2; i++) {
		FILE *f = fopen(i ? "/proc/sys/net/ipv6/conf/default/disable_ipv6" :
				    "/proc/sys/net/ipv6/conf/all/disable_ipv6",
				"w");

		if (f) {
			fputs("1", f);
			fclose(f);
		}
	}
	if (system("ip link add xpf0 numrxqueues 4 numtxqueues 4 type veth peer name xpf1 "
		   "numrxqueues 4 numtxqueues 4 && ip link set xpf0 up && ip link set xpf1 up")) {
		fprintf(stderr, "fuzz_steer: cannot create a veth pair (iproute2?)\n");
		return -1;
	}
	for (__u32 i = 0; i < NRULES; i++) {
		char buf[256], *argv[32], *sp, *t;
		int argc = 0;

		snprintf(buf, sizeof(buf), "%s", rule_text[i]);
		for (t = strtok_r(buf, " ", &sp); t && argc < 32; t = strtok_r(NULL, " ", &sp))
			argv[argc++] = t;
		if (xp_rule_parse(argc, argv, &sets[0][i], err, sizeof(err))) {
			fprintf(stderr, "fuzz_steer: rule '%s': %s\n", rule_text[i], err);
			return -1;
		}
		sets[1][i] = sets[0][i];
		sets[1][i].prio = 100 - sets[0][i].prio;
		switch (sets[0][i].action.kind) {
		case XP_ACT_PASS:
			sets[1][i].action.kind = XP_ACT_DROP;
			break;
		case XP_ACT_DROP:
			sets[1][i].action.kind = XP_ACT_TX;
			break;
		case XP_ACT_TX:
		case XP_ACT_XSK:
			memset(&sets[1][i].action, 0, sizeof(sets[1][i].action)); /* pass */
			break;
		}
	}
	atexit(cleanup);
	xp_fuzz_on_fail = cleanup;
	for (int i = 0; i < 2; i++)
		if (open_target(&targets[i]))
			return -1;
	return 0;
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	if (setup()) {
		cleanup();
		exit(1);
	}
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static __u8 frame[MAX_FRAME];
	struct fuzz_in in = { data, size };
	__u8 k = fuzz_u8(&in);
	__u32 queue = k & (NQUEUES - 1), len;

	tgt = &targets[k >> 3 & 1];
	if (!(++tgt->execs % 4096))
		FUZZ_CHECK(!use_set(tgt, !tgt->set), "rule set replace on %s", tgt->ifname);

	if (k & 4) { /* raw */
		len = in.n < MAX_FRAME ? (__u32)in.n : MAX_FRAME;
		memcpy(frame, in.p, len);
	} else {
		memset(frame, 0, sizeof(frame));
		len = gen_frame(&in, frame);
	}
	check_frame(frame, len, queue);
	return 0;
}
