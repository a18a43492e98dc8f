// SPDX-License-Identifier: BSD-3-Clause
/*
 * The steer program under BPF_PROG_TEST_RUN: every parse path, every rule kind, every
 * truncation point of every packet type (right verdict and right counter each time),
 * priorities, the XSK fallback, 1024 rules, atomic replacement bookkeeping and
 * multi-buffer frames. The program is the real one, attached through xp_steer_open()
 * to a veth with 4 queues in a private network namespace.
 */
#include <errno.h>
#include <net/if.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <linux/if_ether.h>
#include <netinet/in.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <xdp/libxdp.h>

#include "bpflog.h"
#include "pkt.h"
#include "xt.h"
#include "xpile/log.h"
#include "xpile/steer.h"

static struct xp_steer *st;
static int ifindex, ifindex_b;

static void cleanup(void)
{
	xp_steer_close(st, true);
	st = NULL;
}

static int run_q(const __u8 *data, __u32 len, __u32 queue)
{
	struct xdp_md ctx = { .data_end = len,
			      .ingress_ifindex = ifindex,
			      .rx_queue_index = queue };
	static __u8 out[PKT_MAX + 256];
	LIBBPF_OPTS(bpf_test_run_opts, o, .data_in = data, .data_size_in = len, .data_out = out,
		    .data_size_out = sizeof(out), .ctx_in = &ctx, .ctx_size_in = sizeof(ctx),
		    .repeat = 1);
	int err = bpf_prog_test_run_opts(xp_steer_prog_fd(st), &o);

	if (err) {
		fprintf(stderr, "  test run failed: %s (len %u)\n", strerror(-err), len);
		return -1;
	}
	return o.retval;
}

static int run(const struct pkt *p)
{
	return run_q(p->buf, p->len, 0);
}

static struct xp_steer_stats snap(void)
{
	struct xp_steer_stats s;

	memset(&s, 0, sizeof(s));
	if (xp_steer_stats_read(st, &s))
		fprintf(stderr, "  stats read failed\n");
	return s;
}

static void rules(const char *const *text, int n)
{
	struct xp_rule r[16];
	char err[128];

	for (int i = 0; i < n; i++) {
		char buf[256], *argv[32], *sp;
		int argc = 0;

		snprintf(buf, sizeof(buf), "%s", text[i]);
		for (char *t = strtok_r(buf, " ", &sp); t && argc < 32;
		     t = strtok_r(NULL, " ", &sp))
			argv[argc++] = t;
		if (xp_rule_parse(argc, argv, &r[i], err, sizeof(err)))
			fprintf(stderr, "  bad rule '%s': %s\n", text[i], err);
	}
	XT_EQ(xp_steer_rules_replace(st, r, n), 0);
}

#define RULES(...)                                        \
	do {                                              \
		const char *const t_[] = { __VA_ARGS__ }; \
		rules(t_, sizeof(t_) / sizeof(t_[0]));    \
	} while (0)

static void set_default(int kind)
{
	struct xp_action a = { .kind = kind }, pe = { .kind = XP_ACT_PASS };

	XT_EQ(xp_steer_default_set(st, &a, &pe), 0);
}

static struct pkt P;

static void build(const struct pkt_spec *s)
{
	if (pkt_build(s, &P))
		fprintf(stderr, "  pkt_build failed\n");
}

#define UDP4(sp, dp)         \
	(&(struct pkt_spec){ \
		.family = 4, .l4 = IPPROTO_UDP, .sport = sp, .dport = dp, .payload = 32 })

/* No rules: everything takes the default; XSK without a socket is a PASS, counted. */
static void test_default_xsk_falls_back(void)
{
	struct xp_steer_stats a, b;

	RULES();
	set_default(XP_ACT_XSK);
	build(UDP4(1, 2));
	a = snap();
	XT_EQ(run(&P), XDP_PASS);
	b = snap();
	XT_EQ(b.verdict[XP_CNT_XSK_NOSOCK].packets - a.verdict[XP_CNT_XSK_NOSOCK].packets, 1);
	XT_EQ(b.verdict[XP_CNT_PASS].packets - a.verdict[XP_CNT_PASS].packets, 1);
	XT_EQ(b.verdict[XP_CNT_DEFAULT].packets - a.verdict[XP_CNT_DEFAULT].packets, 1);
	XT_EQ(b.verdict[XP_CNT_PASS].bytes - a.verdict[XP_CNT_PASS].bytes, P.len);
	set_default(XP_ACT_DROP);
	XT_EQ(run(&P), XDP_DROP);
	set_default(XP_ACT_TX);
	XT_EQ(run(&P), XDP_TX);
	set_default(XP_ACT_PASS);
	XT_EQ(run(&P), XDP_PASS);
}

static void test_ports_and_ranges(void)
{
	RULES("udp dport 4789 action drop", "dport 1000-2000 action tx", "sport 53 action drop");
	build(UDP4(1, 4789));
	XT_EQ(run(&P), XDP_DROP);
	build(UDP4(1, 4790));
	XT_EQ(run(&P), XDP_PASS);
	build(UDP4(1, 999));
	XT_EQ(run(&P), XDP_PASS);
	build(UDP4(1, 1000));
	XT_EQ(run(&P), XDP_TX);
	build(UDP4(1, 2000));
	XT_EQ(run(&P), XDP_TX);
	build(UDP4(1, 2001));
	XT_EQ(run(&P), XDP_PASS);
	build(UDP4(53, 7));
	XT_EQ(run(&P), XDP_DROP);
	/* TCP to 4789 is not "udp dport 4789"; TCP to 1500 is in the protocol-less range */
	build(&(struct pkt_spec){ .family = 4, .l4 = IPPROTO_TCP, .dport = 4789 });
	XT_EQ(run(&P), XDP_PASS);
	build(&(struct pkt_spec){ .family = 6, .l4 = IPPROTO_TCP, .dport = 1500 });
	XT_EQ(run(&P), XDP_TX);
	/* ICMP has no ports: port rules do not match */
	build(&(struct pkt_spec){ .family = 4, .l4 = IPPROTO_ICMP });
	XT_EQ(run(&P), XDP_PASS);
}

static void test_prefixes(void)
{
	RULES("prio 1 src 198.18.5.0/24 action pass", "prio 2 src 198.18.0.0/15 action drop",
	      "dst 2001:db8:1::/48 action tx", "src 2001:db8::/32 dst 2001:db8:2::1 action drop");
	build(&(struct pkt_spec){ .family = 4, .src = "198.19.1.1", .l4 = IPPROTO_UDP });
	XT_EQ(run(&P), XDP_DROP);
	build(&(struct pkt_spec){ .family = 4, .src = "198.18.5.9", .l4 = IPPROTO_UDP });
	XT_EQ(run(&P), XDP_PASS);
	set_default(XP_ACT_TX);
	build(&(struct pkt_spec){ .family = 4, .src = "198.20.0.1", .l4 = IPPROTO_UDP });
	XT_EQ(run(&P), XDP_TX); /* default */
	set_default(XP_ACT_DROP);
	build(&(struct pkt_spec){ .family = 6, .dst = "2001:db8:1::5", .l4 = IPPROTO_UDP });
	XT_EQ(run(&P), XDP_TX);
	build(&(struct pkt_spec){ .family = 6, .src = "2001:db8::7", .dst = "2001:db8:2::1" });
	XT_EQ(run(&P), XDP_DROP);
	build(&(struct pkt_spec){ .family = 6, .src = "2001:db9::7", .dst = "2001:db8:2::2" });
	XT_EQ(run(&P), XDP_DROP); /* default drop */
	set_default(XP_ACT_PASS);
	build(&(struct pkt_spec){ .family = 6, .src = "2001:db9::7", .dst = "2001:db8:2::2" });
	XT_EQ(run(&P), XDP_PASS);
	/* an IPv4 prefix never matches IPv6 or ARP */
	build(&(struct pkt_spec){ .family = 0, .ethertype = ETH_P_ARP, .payload = 28 });
	XT_EQ(run(&P), XDP_PASS);
}

static void test_vlan_ethertype_l4(void)
{
	RULES("vlan 100 action drop", "arp action tx", "icmpv6 action drop", "proto 47 action tx");
	build(&(struct pkt_spec){ .nvlan = 1, .vlan = { 100 }, .family = 4, .l4 = IPPROTO_UDP });
	XT_EQ(run(&P), XDP_DROP);
	build(&(struct pkt_spec){ .nvlan = 1, .vlan = { 200 }, .family = 4, .l4 = IPPROTO_UDP });
	XT_EQ(run(&P), XDP_PASS);
	build(&(struct pkt_spec){ .nvlan = 2,
				  .vlan = { 100, 7 },
				  .tpid = { 0x88a8, 0x8100 },
				  .family = 6,
				  .l4 = IPPROTO_TCP });
	XT_EQ(run(&P), XDP_DROP); /* outer tag decides */
	build(&(struct pkt_spec){ .nvlan = 2,
				  .vlan = { 7, 100 },
				  .tpid = { 0x88a8, 0x8100 },
				  .family = 6,
				  .l4 = IPPROTO_TCP });
	XT_EQ(run(&P), XDP_PASS);
	build(UDP4(1, 2));
	XT_EQ(run(&P), XDP_PASS); /* untagged */
	build(&(struct pkt_spec){ .ethertype = ETH_P_ARP, .payload = 28 });
	XT_EQ(run(&P), XDP_TX);
	build(&(struct pkt_spec){
		.nvlan = 1, .vlan = { 5 }, .ethertype = ETH_P_ARP, .payload = 28 });
	XT_EQ(run(&P), XDP_TX);
	build(&(struct pkt_spec){ .family = 6, .l4 = IPPROTO_ICMPV6 });
	XT_EQ(run(&P), XDP_DROP);
	build(&(struct pkt_spec){ .family = 4, .l4 = IPPROTO_ICMP });
	XT_EQ(run(&P), XDP_PASS);
	build(&(struct pkt_spec){ .family = 4, .l4 = 47, .payload = 20 });
	XT_EQ(run(&P), XDP_TX);
	build(&(struct pkt_spec){ .ethertype = 0x88cc, .payload = 40 });
	XT_EQ(run(&P), XDP_PASS);
}

static void test_queue_and_actions(void)
{
	struct xp_steer_stats a, b;
	char redir[64];

	snprintf(redir, sizeof(redir), "queue 3 action redirect %d", ifindex_b);
	RULES("queue 2 action drop", redir, "queue 1 udp action xsk slot 5");
	build(UDP4(1, 2));
	XT_EQ(run_q(P.buf, P.len, 0), XDP_PASS);
	XT_EQ(run_q(P.buf, P.len, 2), XDP_DROP);
	XT_EQ(run_q(P.buf, P.len, 3), XDP_REDIRECT);
	a = snap();
	XT_EQ(run_q(P.buf, P.len, 1), XDP_PASS); /* slot 5 has no socket */
	b = snap();
	XT_EQ(b.verdict[XP_CNT_XSK_NOSOCK].packets - a.verdict[XP_CNT_XSK_NOSOCK].packets, 1);
	XT_EQ(b.verdict[XP_CNT_DEFAULT].packets - a.verdict[XP_CNT_DEFAULT].packets, 0);
}

static void test_priority_order(void)
{
	struct xp_rule got[8];
	struct xp_counter c[8];
	__u32 n;

	/* Inserted out of order: prio decides, ties keep insertion order. */
	RULES("prio 50 udp action tx", "prio 10 dport 7 action drop", "prio 50 action pass",
	      "prio 10 dport 7 action tx");
	build(UDP4(1, 7));
	XT_EQ(run(&P), XDP_DROP);
	XT_EQ(run(&P), XDP_DROP);
	build(UDP4(1, 8));
	XT_EQ(run(&P), XDP_TX);
	XT_EQ(xp_steer_rules_get(st, got, c, 8, &n), 0);
	XT_EQ(n, 4);
	XT_EQ(got[0].prio, 10);
	XT_EQ(got[0].action.kind, XP_ACT_DROP);
	XT_EQ(got[1].action.kind, XP_ACT_TX);
	XT_EQ(got[2].prio, 50);
	XT_EQ(got[2].action.kind, XP_ACT_TX);
	XT_EQ(c[0].packets, 2);
	XT_EQ(c[0].bytes, 2 * P.len);
	XT_EQ(c[1].packets, 0);
	XT_EQ(c[2].packets, 1);
}

static void test_fragments_and_options(void)
{
	RULES("udp dport 53 action drop", "udp action tx");
	build(&(struct pkt_spec){ .family = 4, .l4 = IPPROTO_UDP, .dport = 53, .ip4_optlen = 12 });
	XT_EQ(run(&P), XDP_DROP);
	build(&(struct pkt_spec){ .family = 4, .l4 = IPPROTO_UDP, .dport = 53, .frag = 0x2000 });
	XT_EQ(run(&P), XDP_DROP); /* MF set, offset 0: first fragment has ports */
	build(&(struct pkt_spec){ .family = 4, .l4 = IPPROTO_UDP, .frag = 185, .payload = 40 });
	XT_EQ(run(&P), XDP_TX); /* later fragment: protocol only */
	build(&(struct pkt_spec){ .family = 6,
				  .l4 = IPPROTO_UDP,
				  .dport = 53,
				  .n6ext = 4,
				  .ext = { 0, 60, 43, 44 } });
	XT_EQ(run(&P), XDP_DROP);
	build(&(struct pkt_spec){ .family = 6,
				  .l4 = IPPROTO_UDP,
				  .n6ext = 2,
				  .ext = { 51, 44 },
				  .frag = 100,
				  .payload = 40 });
	XT_EQ(run(&P), XDP_TX);
}

static void expect_err(const struct pkt *p, __u32 len, int reason, int verdict)
{
	struct xp_steer_stats a = snap(), b;
	int rv = run_q(p->buf, len, 0);

	b = snap();
	if (rv != verdict || b.parse_err[reason] - a.parse_err[reason] != 1 ||
	    b.verdict[XP_CNT_PARSE_ERR].packets - a.verdict[XP_CNT_PARSE_ERR].packets != 1)
		fprintf(stderr, "  len %u: verdict %d (want %d), reason %d count +%llu\n", len, rv,
			verdict, reason,
			(unsigned long long)(b.parse_err[reason] - a.parse_err[reason]));
	XT_EQ(rv, verdict);
	XT_EQ(b.parse_err[reason] - a.parse_err[reason], 1);
	XT_EQ(b.verdict[XP_CNT_PARSE_ERR].packets - a.verdict[XP_CNT_PARSE_ERR].packets, 1);
}

static const struct pkt_spec trunc_specs[] = {
	{ .family = 4, .l4 = IPPROTO_TCP, .tcp_doff = 8 },
	{ .family = 4, .l4 = IPPROTO_UDP, .ip4_optlen = 8 },
	{ .family = 4, .l4 = IPPROTO_ICMP },
	{ .nvlan = 2, .vlan = { 1, 2 }, .family = 4, .l4 = IPPROTO_UDP },
	{ .family = 6, .l4 = IPPROTO_TCP },
	{ .family = 6, .l4 = IPPROTO_UDP, .n6ext = 4, .ext = { 0, 43, 51, 44 } },
	{ .family = 6, .l4 = IPPROTO_ICMPV6, .n6ext = 1, .ext = { 60 } },
	{ .nvlan = 1, .vlan = { 9 }, .family = 6, .l4 = IPPROTO_UDP },
};

/* Every cut inside the headers of every packet type: the reason, the counter, and the
 * configured action (pass, then drop). */
static void test_truncation_every_point(void)
{
	struct xp_action pass = { .kind = XP_ACT_PASS }, drop = { .kind = XP_ACT_DROP };
	int cases = 0;

	RULES("udp action tx", "tcp action tx");
	for (int act = 0; act < 2; act++) {
		XT_EQ(xp_steer_default_set(st, &pass, act ? &drop : &pass), 0);
		for (size_t i = 0; i < sizeof(trunc_specs) / sizeof(trunc_specs[0]); i++) {
			struct pkt p;

			XT_REQUIRE(!pkt_build(&trunc_specs[i], &p));
			for (__u32 len = 0; len < pkt_headers_end(&p); len++) {
				if (len < ETH_HLEN)
					continue; /* BPF_PROG_TEST_RUN refuses frames this short */
				expect_err(&p, len, pkt_trunc_reason(&p, len),
					   act ? XDP_DROP : XDP_PASS);
				cases++;
			}
			/* complete headers: a rule acts, no error */
			XT_EQ(run_q(p.buf, pkt_headers_end(&p), 0),
			      trunc_specs[i].l4 == IPPROTO_ICMP ||
					      trunc_specs[i].l4 == IPPROTO_ICMPV6 ?
				      XDP_PASS :
				      XDP_TX);
		}
	}
	XT_EQ(xp_steer_default_set(st, &pass, &pass), 0);
	fprintf(stderr, "  %d truncation cases\n", cases);
	XT_CHECK(cases > 300);
}

static void test_malformed(void)
{
	struct pkt p;

	RULES("udp action tx");
	set_default(XP_ACT_PASS);
	pkt_build(&(struct pkt_spec){ .family = 4, .l4 = IPPROTO_UDP, .ihl = 4 }, &p);
	expect_err(&p, p.len, XP_PERR_IP4_HDR, XDP_PASS);
	pkt_build(&(struct pkt_spec){ .family = 4, .l4 = IPPROTO_UDP }, &p);
	p.buf[14] = 0x65; /* version 6 in an IPv4 frame */
	expect_err(&p, p.len, XP_PERR_IP4_HDR, XDP_PASS);
	pkt_build(&(struct pkt_spec){ .family = 4, .l4 = IPPROTO_TCP, .tcp_doff = 3 }, &p);
	expect_err(&p, p.len, XP_PERR_TCP_HDR, XDP_PASS);
	pkt_build(&(struct pkt_spec){ .family = 4, .l4 = IPPROTO_TCP, .tcp_doff = 15 }, &p);
	expect_err(&p, 14 + 20 + 40, XP_PERR_TCP_HDR, XDP_PASS); /* options past the end */
	pkt_build(
		&(struct pkt_spec){ .nvlan = 2, .vlan = { 1, 2 }, .family = 4, .l4 = IPPROTO_UDP },
		&p);
	memmove(p.buf + 16, p.buf + 12, p.len - 12); /* a third tag */
	p.buf[12] = 0x81;
	p.buf[13] = 0x00;
	p.buf[14] = 0;
	p.buf[15] = 3;
	expect_err(&p, p.len + 4, XP_PERR_VLAN_DEPTH, XDP_PASS);
	pkt_build(&(struct pkt_spec){ .family = 6,
				      .l4 = IPPROTO_UDP,
				      .n6ext = 7,
				      .ext = { 0, 60, 43, 60, 43, 60, 43 } },
		  &p);
	expect_err(&p, p.len, XP_PERR_IP6_EXT_DEPTH, XDP_PASS);
}

/* 0..8 extension headers of every kind before UDP: up to six (bpf/parse.h XP_IP6_MAX_EXT) reach the
 * rule, more are ip6_ext_depth. */
static void test_ip6_ext_depth(void)
{
	static const __u8 kinds[] = { 0, 43, 60, 135, 51, 44 };
	struct pkt p;

	RULES("udp dport 53 action drop", "udp action tx");
	for (size_t k = 0; k < sizeof(kinds); k++)
		for (int n = 0; n <= 8; n++) {
			struct pkt_spec s = { .family = 6, .l4 = IPPROTO_UDP, .dport = 53 };

			s.n6ext = n;
			for (int i = 0; i < n; i++)
				s.ext[i] = kinds[k];
			XT_REQUIRE(pkt_build(&s, &p) == 0);
			if (n <= 6) { /* docs/steer.md: a walk of up to 6 */
				if (run_q(p.buf, p.len, 0) != XDP_DROP)
					fprintf(stderr, "  kind %u, %d headers\n", kinds[k], n);
				XT_EQ(run_q(p.buf, p.len, 0), XDP_DROP);
			} else {
				expect_err(&p, p.len, XP_PERR_IP6_EXT_DEPTH, XDP_PASS);
			}
		}
	/* Six of mixed kinds, the last a first fragment: still the rule. */
	XT_REQUIRE(pkt_build(&(struct pkt_spec){ .family = 6,
						 .l4 = IPPROTO_UDP,
						 .dport = 53,
						 .n6ext = 6,
						 .ext = { 0, 60, 43, 135, 51, 44 } },
			     &p) == 0);
	XT_EQ(run_q(p.buf, p.len, 0), XDP_DROP);
}

static void test_1024_rules(void)
{
	static struct xp_rule r[XP_STEER_MAX_RULES + 1];
	char err[64];

	for (int i = 0; i < XP_STEER_MAX_RULES; i++) {
		char port[16], *argv[] = { "prio", "5", "udp", "dport", port, "action", "drop" };

		snprintf(port, sizeof(port), "%d", 10000 + i);
		XT_REQUIRE(!xp_rule_parse(7, argv, &r[i], err, sizeof(err)));
	}
	r[XP_STEER_MAX_RULES - 1].action.kind = XP_ACT_TX;
	r[XP_STEER_MAX_RULES - 1].prio = 1;
	XT_EQ(xp_steer_rules_replace(st, r, XP_STEER_MAX_RULES), 0);
	build(UDP4(1, 10000 + 1023));
	XT_EQ(run(&P), XDP_TX);
	build(UDP4(1, 10000 + 1022));
	XT_EQ(run(&P), XDP_DROP);
	build(UDP4(1, 10000 + 700));
	XT_EQ(run(&P), XDP_DROP);
	build(UDP4(1, 9999));
	XT_EQ(run(&P), XDP_PASS);
	r[XP_STEER_MAX_RULES] = r[0];
	xp_log_fn prev = xp_set_log_fn(NULL);
	XT_EQ(xp_steer_rules_replace(st, r, XP_STEER_MAX_RULES + 1), -E2BIG);
	xp_set_log_fn(prev);
	build(UDP4(1, 10000 + 1023)); /* the failed replace changed nothing */
	XT_EQ(run(&P), XDP_TX);
}

static void test_add_del_keep_counters(void)
{
	struct xp_rule r, got[4];
	struct xp_counter c[4];
	char err[64], *a1[] = { "prio", "5", "udp", "dport", "9", "action", "drop" };
	char *a2[] = { "prio", "0", "udp", "dport", "10", "action", "tx" };
	__u32 id1, id2, n;

	RULES();
	XT_REQUIRE(!xp_rule_parse(7, a1, &r, err, sizeof(err)));
	XT_EQ(xp_steer_rule_add(st, &r, &id1), 0);
	build(UDP4(1, 9));
	XT_EQ(run(&P), XDP_DROP);
	XT_REQUIRE(!xp_rule_parse(7, a2, &r, err, sizeof(err)));
	XT_EQ(xp_steer_rule_add(st, &r, &id2), 0);
	XT_CHECK(id1 != id2);
	XT_EQ(xp_steer_rules_get(st, got, c, 4, &n), 0);
	XT_EQ(n, 2);
	XT_EQ(got[1].id, id1);
	XT_EQ(c[1].packets, 1); /* the counter moved with its rule */
	XT_EQ(xp_steer_rule_del(st, id1), 0);
	XT_EQ(run(&P), XDP_PASS);
	xp_log_fn prev = xp_set_log_fn(NULL);
	XT_EQ(xp_steer_rule_del(st, id1), -ENOENT);
	xp_set_log_fn(prev);
}

/* 9000-byte frames arrive in several buffers; headers are in the first. */
static void test_multibuffer(void)
{
	struct xp_steer_stats a, b;

	RULES("udp dport 4789 action drop");
	build(&(struct pkt_spec){ .family = 4, .l4 = IPPROTO_UDP, .dport = 4789, .payload = 8950 });
	a = snap();
	XT_EQ(run(&P), XDP_DROP);
	b = snap();
	XT_EQ(b.verdict[XP_CNT_DROP].bytes - a.verdict[XP_CNT_DROP].bytes, P.len);
}

struct racer {
	volatile int stop;
	long runs, bad;
};

/* Packets to dport 1 and dport 2 while the sets below swap: set A drops dport 1 (rule
 * 0), set B sends dport 2 out (rule 0, other classes). A packet reading A's classes
 * with B's actions (or the reverse) would see dport 1 -> tx or dport 2 -> drop. */
static void *race_packets(void *arg)
{
	struct racer *r = arg;
	struct pkt p1, p2;

	pkt_build(UDP4(9, 1), &p1);
	pkt_build(UDP4(9, 2), &p2);
	while (!r->stop) {
		int v1 = run_q(p1.buf, p1.len, 0), v2 = run_q(p2.buf, p2.len, 0);

		if ((v1 != XDP_DROP && v1 != XDP_PASS) || (v2 != XDP_TX && v2 != XDP_PASS))
			r->bad++;
		r->runs++;
	}
	return NULL;
}

static void test_atomic_replace_concurrent(void)
{
	struct racer r = { 0 };
	pthread_t th;

	set_default(XP_ACT_PASS);
	RULES("udp dport 1 action drop");
	XT_REQUIRE(!pthread_create(&th, NULL, race_packets, &r));
	for (int i = 0; i < 40; i++) {
		if (i % 2)
			RULES("udp dport 1 action drop");
		else
			RULES("udp dport 2 action tx", "udp dport 3 action drop");
	}
	r.stop = 1;
	pthread_join(th, NULL);
	fprintf(stderr, "  %ld packet pairs during 40 replaces, %ld mixed verdicts\n", r.runs,
		r.bad);
	XT_CHECK(r.runs > 40);
	XT_EQ(r.bad, 0);
}

/* The single-buffer entry point (what xp_steer_open picks at a normal MTU) classifies
 * the same and counts the frame length from data_end. */
static void test_single_buffer_program(void)
{
	struct xp_steer_opts o = { .sz = sizeof(o), .ifname = "xpt1", .frags = -1 };
	struct xp_steer *one = NULL, *keep = st;
	struct xp_steer_stats a, b;

	XT_REQUIRE(!xp_steer_open(&o, &one));
	st = one;
	RULES("udp dport 4789 action drop", "vlan 5 action tx");
	build(UDP4(1, 4789));
	a = snap();
	XT_EQ(run(&P), XDP_DROP);
	b = snap();
	XT_EQ(b.verdict[XP_CNT_DROP].bytes - a.verdict[XP_CNT_DROP].bytes, P.len);
	build(&(struct pkt_spec){ .nvlan = 1, .vlan = { 5 }, .family = 6, .l4 = IPPROTO_TCP });
	XT_EQ(run(&P), XDP_TX);
	build(UDP4(1, 4788));
	XT_EQ(run(&P), XDP_PASS); /* default xsk, no socket */
	st = keep;
	xp_steer_close(one, true);
}

static void test_rule_text(void)
{
	const char *ok[] = {
		"prio 10 udp dport 4789 action xsk", "src 198.18.0.0/15 action drop",
		"queue 3 vlan 7 ipv6 src 2001:db8::/32 tcp sport 1-1023 action xsk slot 2",
		"ethertype 0x88cc action pass"
	};
	const char *bad[] = { "udp dport 70000 action drop",
			      "src 1.2.3.4 dst ::1 action drop",
			      "udp",
			      "action fly",
			      "queue 999 action drop",
			      "dport 5-4 action drop" };
	char buf[256], out[256], err[128];

	for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
		char *argv[32], *sp;
		int argc = 0;
		struct xp_rule r;

		snprintf(buf, sizeof(buf), "%s", ok[i]);
		for (char *t = strtok_r(buf, " ", &sp); t; t = strtok_r(NULL, " ", &sp))
			argv[argc++] = t;
		XT_EQ(xp_rule_parse(argc, argv, &r, err, sizeof(err)), 0);
		XT_CHECK(xp_rule_format(&r, out, sizeof(out)) > 0);
		XT_CHECK(strstr(out, "action") != NULL);
	}
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		char *argv[32], *sp;
		int argc = 0;
		struct xp_rule r;

		snprintf(buf, sizeof(buf), "%s", bad[i]);
		for (char *t = strtok_r(buf, " ", &sp); t; t = strtok_r(NULL, " ", &sp))
			argv[argc++] = t;
		err[0] = 0;
		XT_EQ(xp_rule_parse(argc, argv, &r, err, sizeof(err)), -EINVAL);
		XT_CHECK(err[0] != 0);
	}
}

int main(void)
{
	/* the frags program: it is the one that sees multi-buffer frames */
	struct xp_steer_opts o = {
		.sz = sizeof(o), .ifname = "xpt0", .mode = XP_STEER_MODE_NATIVE, .frags = 1
	};
	int err;

	if (geteuid())
		XT_SKIP("needs root (CAP_BPF, CAP_NET_ADMIN)");
	/* libxdp reports its fallback from the dispatcher on every load: kept, not shown,
	 * unless the program fails to load */
	bpflog_capture();
	if (unshare(CLONE_NEWNET))
		XT_SKIP("cannot create a network namespace: %s", strerror(errno));
	if (system("ip link add xpt0 numrxqueues 4 numtxqueues 4 type veth peer name xpt1 "
		   "numrxqueues 4 numtxqueues 4 && ip link set xpt0 up && ip link set xpt1 up"))
		XT_SKIP("cannot create a veth pair (iproute2 missing?)");
	ifindex = if_nametoindex("xpt0");
	ifindex_b = if_nametoindex("xpt1");
	/* A verifier regression is the commonest way an XDP change breaks: a failure. */
	err = xp_steer_open(&o, &st);
	if (err) {
		fprintf(stderr, "FAIL: cannot load the steer program: %s\n", strerror(-err));
		bpflog_dump(stderr, 30);
		return 1;
	}
	atexit(cleanup);

	XT_RUN(test_rule_text);
	XT_RUN(test_default_xsk_falls_back);
	XT_RUN(test_ports_and_ranges);
	XT_RUN(test_prefixes);
	XT_RUN(test_vlan_ethertype_l4);
	XT_RUN(test_queue_and_actions);
	XT_RUN(test_priority_order);
	XT_RUN(test_fragments_and_options);
	XT_RUN(test_truncation_every_point);
	XT_RUN(test_malformed);
	XT_RUN(test_ip6_ext_depth);
	XT_RUN(test_1024_rules);
	XT_RUN(test_add_del_keep_counters);
	XT_RUN(test_multibuffer);
	XT_RUN(test_atomic_replace_concurrent);
	XT_RUN(test_single_buffer_program);
	return xt_done();
}
