// SPDX-License-Identifier: BSD-3-Clause
/*
 * The route action (bpf/route.h) under BPF_PROG_TEST_RUN, by the kernel's own FIB of a
 * private network namespace: xpr0 receives (its steer program's default is "route"),
 * xpr2 leads to a neighbour with a permanent MAC. A packet the FIB can forward leaves
 * as XDP_REDIRECT with the TTL (hop limit) one less, a checksum that still holds and the
 * egress port's and the neighbour's MACs; every other one comes out untouched, goes on
 * to the XSK fallback (PASS here, no socket) and is counted under its reason: TTL,
 * another host's MAC, IP options, a fragment, no neighbour, a local address, a
 * blackhole, not IP, an egress that takes no redirected frames, no port at all. The
 * IPv4 flow cache answers a flow's next packets the same way, until its generation moves.
 */
#include <errno.h>
#include <net/if.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <linux/if_ether.h>
#include <netinet/in.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "inet_csum.h"
#include "bpflog.h"
#include "pkt.h"
#include "xt.h"
#include "xpile/steer.h"

static struct xp_steer *st;
static int if_in, if_out;
static __u8 mac_in[6], mac_out[6];
static const __u8 mac_gw[6] = { 0x02, 0, 0, 0, 0x27, 0x02 };
static __u8 out[PKT_MAX + 256];
static __u32 out_len;

static void cleanup(void)
{
	xp_steer_close(st, true);
	st = NULL;
}

static int run(const struct pkt *p)
{
	struct xdp_md ctx = { .data_end = p->len, .ingress_ifindex = if_in };
	LIBBPF_OPTS(bpf_test_run_opts, o, .data_in = p->buf, .data_size_in = p->len,
		    .data_out = out, .data_size_out = sizeof(out), .ctx_in = &ctx,
		    .ctx_size_in = sizeof(ctx), .repeat = 1);
	int err = bpf_prog_test_run_opts(xp_steer_prog_fd(st), &o);

	if (err) {
		fprintf(stderr, "  test run failed: %s\n", strerror(-err));
		return -1;
	}
	out_len = o.data_size_out;
	return o.retval;
}

static struct xp_route_stats rstats(void)
{
	struct xp_route_stats s;

	memset(&s, 0, sizeof(s));
	XT_EQ(xp_steer_route_stats_read(st, &s), 0);
	return s;
}

static struct pkt P;

static int sh(const char *cmd)
{
	int rc = system(cmd);

	if (rc)
		fprintf(stderr, "  '%s' failed (%d)\n", cmd, rc);
	return rc;
}

/* A UDP packet to @dst from the far host, to the router's MAC, with TTL @ttl and
 * @payload bytes of data. */
static void build_len(int family, const char *dst, __u8 ttl, __u32 payload)
{
	struct pkt_spec s = {
		.family = family, .l4 = IPPROTO_UDP, .sport = 7, .dport = 9, .payload = payload
	};

	s.src = family == 4 ? "198.18.27.1" : "2001:db8:27::1";
	s.dst = dst;
	if (pkt_build(&s, &P))
		fprintf(stderr, "  pkt_build failed\n");
	memcpy(P.buf, mac_in, 6);
	memcpy(P.buf + 6, mac_gw, 6);
	if (family == 4) {
		P.buf[14 + 8] = ttl;
		P.buf[14 + 10] = P.buf[14 + 11] = 0;
		__u16 c = ut_inet_csum(P.buf + 14, 20);
		P.buf[14 + 10] = c >> 8;
		P.buf[14 + 11] = c & 0xff;
	} else {
		P.buf[14 + 7] = ttl;
	}
}

static void build(int family, const char *dst, __u8 ttl)
{
	build_len(family, dst, ttl, 32);
}

/* @p went on (PASS: no socket) untouched, and the route path counted @why once. */
static void expect_miss(int family, __u32 why)
{
	struct xp_route_stats a = rstats(), b;
	int v6 = family == 6;

	XT_EQ(run(&P), XDP_PASS);
	b = rstats();
	XT_EQ(b.miss[v6][why] - a.miss[v6][why], 1);
	XT_EQ(b.fwd[v6] - a.fwd[v6], 0);
	XT_EQ(out_len, P.len);
	XT_CHECK(!memcmp(out, P.buf, P.len));
}

static void test_forward4(void)
{
	struct xp_route_stats a = rstats(), b;
	struct xp_steer_stats s0, s1;

	build(4, "198.18.28.2", 64);
	XT_EQ(xp_steer_stats_read(st, &s0), 0);
	XT_EQ(run(&P), XDP_REDIRECT);
	XT_EQ(xp_steer_stats_read(st, &s1), 0);
	b = rstats();
	XT_EQ(b.fwd[0] - a.fwd[0], 1);
	XT_EQ(s1.verdict[XP_CNT_REDIRECT].packets - s0.verdict[XP_CNT_REDIRECT].packets, 1);
	XT_CHECK(!memcmp(out, mac_gw, 6));
	XT_CHECK(!memcmp(out + 6, mac_out, 6));
	XT_EQ(out[14 + 8], 63);
	XT_EQ(ut_inet_csum(out + 14, 20), 0); /* the header still sums to 0xffff */
	XT_CHECK(!memcmp(out + 14 + 20, P.buf + 14 + 20, P.len - 34)); /* L4 untouched */
	/* The checksum's end-around carry: a header whose sum is 0xfeff before the TTL
	 * goes down (checksum 0x0100) must come out valid as well. */
	for (int id = 0; id < 65536; id += 97) {
		build(4, "198.18.28.2", 64);
		P.buf[14 + 4] = id >> 8;
		P.buf[14 + 5] = id & 0xff;
		P.buf[14 + 10] = P.buf[14 + 11] = 0;
		__u16 c = ut_inet_csum(P.buf + 14, 20);
		P.buf[14 + 10] = c >> 8;
		P.buf[14 + 11] = c & 0xff;
		XT_EQ(run(&P), XDP_REDIRECT);
		XT_EQ(ut_inet_csum(out + 14, 20), 0);
	}
}

static void test_forward6(void)
{
	struct xp_route_stats a = rstats(), b;

	build(6, "2001:db8:28::2", 64);
	XT_EQ(run(&P), XDP_REDIRECT);
	b = rstats();
	XT_EQ(b.fwd[1] - a.fwd[1], 1);
	XT_CHECK(!memcmp(out, mac_gw, 6));
	XT_CHECK(!memcmp(out + 6, mac_out, 6));
	XT_EQ(out[14 + 7], 63);
}

static void test_misses(void)
{
	build(4, "198.18.28.2", 1);
	expect_miss(4, XP_RM_TTL);
	build(6, "2001:db8:28::2", 1);
	expect_miss(6, XP_RM_TTL);
	build(4, "198.18.28.2", 64);
	P.buf[0] ^= 0x02; /* another host's */
	expect_miss(4, XP_RM_NOT_OURS);
	build(4, "198.18.28.2", 64);
	P.buf[0] = 0xff; /* broadcast */
	expect_miss(4, XP_RM_NOT_OURS);
	build(4, "198.18.28.3", 64); /* no neighbour: the kernel resolves it */
	expect_miss(4, BPF_FIB_LKUP_RET_NO_NEIGH);
	build(4, "198.18.28.254", 64); /* the router's own */
	expect_miss(4, BPF_FIB_LKUP_RET_NOT_FWDED);
	build(4, "198.18.29.1", 64);
	expect_miss(4, BPF_FIB_LKUP_RET_BLACKHOLE);
	build(4, "198.18.30.1", 64);
	expect_miss(4, BPF_FIB_LKUP_RET_PROHIBIT);

	struct pkt_spec opt = { .family = 4,
				.l4 = IPPROTO_UDP,
				.dport = 9,
				.ip4_optlen = 4,
				.src = "198.18.27.1",
				.dst = "198.18.28.2" };
	XT_EQ(pkt_build(&opt, &P), 0);
	memcpy(P.buf, mac_in, 6);
	expect_miss(4, XP_RM_OPTIONS);
	struct pkt_spec frag = { .family = 4,
				 .l4 = IPPROTO_UDP,
				 .dport = 9,
				 .frag = 8,
				 .src = "198.18.27.1",
				 .dst = "198.18.28.2" };
	XT_EQ(pkt_build(&frag, &P), 0);
	memcpy(P.buf, mac_in, 6);
	expect_miss(4, XP_RM_FRAGMENT);
	struct pkt_spec hbh = { .family = 6,
				.l4 = IPPROTO_UDP,
				.dport = 9,
				.n6ext = 1,
				.ext = { 0 },
				.src = "2001:db8:27::1",
				.dst = "2001:db8:28::2" };
	XT_EQ(pkt_build(&hbh, &P), 0);
	memcpy(P.buf, mac_in, 6);
	expect_miss(6, XP_RM_OPTIONS);
	struct pkt_spec arp = { .family = 0, .ethertype = ETH_P_ARP, .payload = 28 };
	XT_EQ(pkt_build(&arp, &P), 0);
	memcpy(P.buf, mac_in, 6);
	expect_miss(4, XP_RM_NOT_IP);
}

/* The egress takes no redirected frames (its F_EGRESS cleared), then is no port at all:
 * the engine's either way. */
static void test_egress_flags(void)
{
	struct xp_route_via v = { .ifindex = (__u32)if_out };

	memcpy(v.mac, mac_out, 6);
	XT_EQ(xp_steer_route_via_set(st, (__u32)if_out, &v), 0);
	build(4, "198.18.28.2", 64);
	expect_miss(4, XP_RM_NO_PORT);
	XT_EQ(xp_steer_route_via_clear(st, (__u32)if_out), 0);
	expect_miss(4, XP_RM_NO_PORT);
	v.flags = XP_ROUTE_VIA_F_EGRESS;
	XT_EQ(xp_steer_route_via_set(st, (__u32)if_out, &v), 0);
	XT_EQ(run(&P), XDP_REDIRECT);
	/* Bad input is refused with a reason, not stored. */
	XT_EQ(xp_steer_route_via_set(st, 0, &v), -EINVAL);
	XT_CHECK(strcmp(xp_route_miss_name(BPF_FIB_LKUP_RET_NO_NEIGH), "no_neigh") == 0);
	XT_CHECK(strcmp(xp_route_miss_name(XP_RM_MAX + 3), "?") == 0);
}

/* The rules' own route action with no port for the device it names: the rule matches,
 * the packet goes on to the socket fallback. */
static void test_rule_action(void)
{
	struct xp_rule r;
	char err[128], txt[128];

	XT_EQ(xp_rule_parse_str("udp dport 9 action route via xpr0", &r, err, sizeof(err)), 0);
	XT_EQ(r.action.kind, XP_ACT_ROUTE);
	XT_EQ(r.action.ifindex, (__u32)if_in);
	XT_CHECK(xp_rule_format(&r, txt, sizeof(txt)) > 0);
	XT_CHECK(strstr(txt, "action route via xpr0") != NULL);
	XT_EQ(xp_steer_rules_replace(st, &r, 1), 0);
	build(4, "198.18.28.2", 64);
	XT_EQ(run(&P), XDP_REDIRECT); /* by the rule, through xpr0's FIB */
	XT_EQ(xp_steer_rules_replace(st, NULL, 0), 0);
	XT_EQ(xp_rule_parse_str("action route via", &r, err, sizeof(err)), -EINVAL);
	XT_CHECK(strstr(err, "route via needs") != NULL);
	XT_EQ(xp_rule_parse_str("action route via nosuchif0", &r, err, sizeof(err)), -EINVAL);
}

static void read_mac(const char *ifname, __u8 *mac)
{
	char p[96];
	unsigned int m[6] = { 0 };
	FILE *f;

	snprintf(p, sizeof(p), "/sys/class/net/%s/address", ifname);
	f = fopen(p, "r");
	if (f && fscanf(f, "%x:%x:%x:%x:%x:%x", &m[0], &m[1], &m[2], &m[3], &m[4], &m[5]) == 6)
		for (int i = 0; i < 6; i++)
			mac[i] = (__u8)m[i];
	if (f)
		fclose(f);
}

static void gen_set(__u32 gen)
{
	int fd = xp_steer_route_gen_fd(st);
	__u32 zero = 0;

	XT_CHECK(fd >= 0);
	XT_EQ(bpf_map_update_elem(fd, &zero, &gen, BPF_ANY), 0);
	close(fd);
}

/* @p forwarded, by the flow cache (@cached) or by a lookup, to neighbour MAC @dmac. */
static void expect_fwd(bool cached, const __u8 *dmac)
{
	struct xp_route_stats a = rstats(), b;

	XT_EQ(run(&P), XDP_REDIRECT);
	b = rstats();
	XT_EQ(b.fwd[0] - a.fwd[0], 1);
	XT_EQ(b.cached[0] - a.cached[0], cached ? 1 : 0);
	XT_CHECK(!memcmp(out, dmac, 6));
	XT_CHECK(!memcmp(out + 6, mac_out, 6));
	XT_EQ(out[14 + 8], P.buf[14 + 8] - 1);
	XT_EQ(ut_inet_csum(out + 14, 20), 0);
}

/* The IPv4 flow cache: off while xp_route_gen is 0; on, a flow's second packet skips
 * the lookup with the same result; an answer outlives a change until the generation
 * moves (which is why only a writer that hears every change may turn it on); what
 * the lookup would not forward is never answered from it. */
static void test_cache4(void)
{
	static const __u8 mac_gw2[6] = { 0x02, 0, 0, 0, 0x27, 0x03 };
	cpu_set_t one;

	/* The cache is per CPU and a test run runs on the caller's: stay on one. */
	CPU_ZERO(&one);
	CPU_SET(sched_getcpu(), &one);
	XT_EQ(sched_setaffinity(0, sizeof(one), &one), 0);

	build(4, "198.18.28.2", 64);
	gen_set(0);
	expect_fwd(false, mac_gw);
	expect_fwd(false, mac_gw);
	gen_set(7);
	expect_fwd(false, mac_gw); /* looked up, kept */
	expect_fwd(true, mac_gw);
	/* Another flow (source port) is another entry. */
	P.buf[14 + 20 + 1] = 8;
	expect_fwd(false, mac_gw);
	expect_fwd(true, mac_gw);
	/* The neighbour's MAC changes: kept until the generation moves, then looked up. */
	XT_EQ(sh("ip neigh replace 198.18.28.2 lladdr 02:00:00:00:27:03 dev xpr2 nud permanent"),
	      0);
	expect_fwd(true, mac_gw);
	gen_set(8);
	expect_fwd(false, mac_gw2);
	expect_fwd(true, mac_gw2);
	/* Not from the cache: a TTL of 1, another host's MAC, a packet above the MTU. */
	P.buf[14 + 8] = 1;
	P.buf[14 + 10] = P.buf[14 + 11] = 0;
	__u16 c = ut_inet_csum(P.buf + 14, 20);
	P.buf[14 + 10] = c >> 8;
	P.buf[14 + 11] = c & 0xff;
	expect_miss(4, XP_RM_TTL);
	build(4, "198.18.28.2", 64);
	P.buf[14 + 20 + 1] = 8;
	expect_fwd(true, mac_gw2);
	P.buf[0] ^= 0x10;
	expect_miss(4, XP_RM_NOT_OURS);
	P.buf[0] ^= 0x10;
	/* An entry holds its lookup's MTU: a larger packet of the flow is looked up. */
	XT_EQ(sh("ip link set xpr2 mtu 68"), 0);
	gen_set(9);
	expect_fwd(false, mac_gw2);
	expect_fwd(true, mac_gw2);
	build_len(4, "198.18.28.2", 64, 100);
	P.buf[14 + 20 + 1] = 8;
	expect_miss(4, BPF_FIB_LKUP_RET_FRAG_NEEDED);
	XT_EQ(sh("ip link set xpr2 mtu 1500 && ip neigh replace 198.18.28.2 lladdr "
		 "02:00:00:00:27:02 dev xpr2 nud permanent"),
	      0);
	gen_set(0);
	expect_fwd(false, mac_gw);
}

int main(void)
{
	struct xp_steer_opts o = { .sz = sizeof(o),
				   .ifname = "xpr0",
				   .mode = XP_STEER_MODE_NATIVE };
	struct xp_action dflt = { .kind = XP_ACT_ROUTE };
	struct xp_route_via v;
	int err;

	if (geteuid())
		XT_SKIP("needs root (CAP_BPF, CAP_NET_ADMIN)");
	bpflog_capture();
	if (unshare(CLONE_NEWNET))
		XT_SKIP("cannot create a network namespace: %s", strerror(errno));
	/* This namespace's /sys, so that the MACs read are of its devices. */
	if (unshare(CLONE_NEWNS) || sh("mount --make-rprivate / && mount -t sysfs none /sys"))
		XT_SKIP("cannot mount this namespace's /sys");
	if (sh("ip link add xpr0 type veth peer name xpr1 && ip link add xpr2 type veth peer "
	       "name xpr3 && for i in xpr0 xpr1 xpr2 xpr3; do ip link set $i up; done && "
	       "sysctl -qw net.ipv4.conf.all.forwarding=1 net.ipv6.conf.all.forwarding=1 && "
	       "ip addr add 198.18.27.254/24 dev xpr0 && ip addr add 198.18.28.254/24 dev xpr2 && "
	       "ip -6 addr add 2001:db8:27::fe/64 dev xpr0 nodad && "
	       "ip -6 addr add 2001:db8:28::fe/64 dev xpr2 nodad && "
	       "ip neigh replace 198.18.28.2 lladdr 02:00:00:00:27:02 dev xpr2 nud permanent && "
	       "ip -6 neigh replace 2001:db8:28::2 lladdr 02:00:00:00:27:02 dev xpr2 nud permanent && "
	       "ip route add blackhole 198.18.29.0/24 && ip route add prohibit 198.18.30.0/24"))
		XT_SKIP("cannot build the namespace's links and routes (iproute2 missing?)");
	if_in = (int)if_nametoindex("xpr0");
	if_out = (int)if_nametoindex("xpr2");
	read_mac("xpr0", mac_in);
	read_mac("xpr2", mac_out);
	err = xp_steer_open(&o, &st);
	if (err) {
		fprintf(stderr, "FAIL: cannot load the steer program: %s\n", strerror(-err));
		bpflog_dump(stderr, 30);
		return 1;
	}
	atexit(cleanup);
	memset(&v, 0, sizeof(v));
	v.ifindex = (__u32)if_in;
	memcpy(v.mac, mac_in, 6);
	XT_EQ(xp_steer_route_via_set(st, (__u32)if_in, &v), 0);
	v.ifindex = (__u32)if_out;
	memcpy(v.mac, mac_out, 6);
	v.flags = XP_ROUTE_VIA_F_EGRESS;
	XT_EQ(xp_steer_route_via_set(st, (__u32)if_out, &v), 0);
	XT_EQ(xp_steer_default_set(st, &dflt, NULL), 0);

	XT_RUN(test_forward4);
	XT_RUN(test_forward6);
	XT_RUN(test_misses);
	XT_RUN(test_egress_flags);
	XT_RUN(test_rule_action);
	XT_RUN(test_cache4);
	return xt_done();
}
