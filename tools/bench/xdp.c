// SPDX-License-Identifier: BSD-3-Clause
/*
 * xpile-bench xdp: ns per packet of the steer program through BPF_PROG_TEST_RUN with
 * repeat, for TCP/UDP over IPv4/IPv6 and VLAN-tagged packets, with 0, 16 and 1024
 * rules, next to the minimal program that only redirects to the RX queue's XSKMAP
 * entry. Every run after a packet's first hits the flow cache (a flow's steady state);
 * "1024 miss" ignores the cache's hits (XP_CFG_F_NOCACHE), what a flow's first packet
 * costs. Programs run interleaved (min, 0, 16, 1024, min, ...) and each figure is the
 * median of the rounds. The rule sets use every field, so every lookup happens; the
 * packets match the lowest-priority rule or nothing, the most work the program does.
 * Test runs of bpf_redirect_map() return without redirecting, the same for both.
 * Every measurement is checked to have taken the path it is named after (verdict, and
 * the counter of the rule or default that must have matched moved by exactly the
 * repeat count); anything else ends the bench with the reason.
 */
#include <errno.h>
#include <net/if.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <netinet/in.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <xdp/libxdp.h>

#include "bench.h"
#include "bpflog.h"
#include "pkt.h"
#include "xpile/steer.h"

#define NSETS 4
#define MAX_ROUNDS 51
#define CATCH_ALL_PRIO 100 /* the one rule of a set the bench packets match */

/* The last is 1024 rules with flow cache hits ignored: every run is a first packet. */
static const unsigned set_sizes[NSETS] = { 0, 16, 1024, 1024 };
static const bool set_cold[NSETS] = { false, false, false, true };

static const struct {
	const char *name;
	struct pkt_spec spec;
} packets[] = {
	{ "tcp4", { .family = 4, .l4 = IPPROTO_TCP, .sport = 40000, .dport = 443, .payload = 64 } },
	{ "udp4",
	  { .family = 4, .l4 = IPPROTO_UDP, .sport = 40000, .dport = 4789, .payload = 64 } },
	{ "tcp6", { .family = 6, .l4 = IPPROTO_TCP, .sport = 40000, .dport = 443, .payload = 64 } },
	{ "udp6",
	  { .family = 6, .l4 = IPPROTO_UDP, .sport = 40000, .dport = 4789, .payload = 64 } },
	{ "vlan-udp4",
	  { .nvlan = 1,
	    .vlan = { 100 },
	    .family = 4,
	    .l4 = IPPROTO_UDP,
	    .sport = 40000,
	    .dport = 4789,
	    .payload = 64 } },
};
#define NPKTS (sizeof(packets) / sizeof(packets[0]))

/* A rule set of @n rules touching every field: port ranges, prefixes of both families
 * in both directions, VLANs, EtherTypes, queues. None matches the bench packets
 * except the last, catch-all-UDP/TCP one (when n > 0). */
static void make_rules(struct xp_rule *r, unsigned n)
{
	for (unsigned i = 0; i + 1 < n; i++) {
		struct xp_rule *x = &r[i];

		memset(x, 0, sizeof(*x));
		x->prio = 10;
		x->action.kind = i % 3 ? XP_ACT_DROP : XP_ACT_XSK;
		switch (i % 8) {
		case 0:
			x->fields = XP_RF_L4PROTO | XP_RF_DPORT;
			x->l4proto = IPPROTO_UDP;
			x->dport_lo = 5000 + i * 10;
			x->dport_hi = x->dport_lo + 5;
			break;
		case 1:
			x->fields = XP_RF_SRC;
			x->family = 4;
			x->src[0] = 10;
			x->src[1] = i / 256;
			x->src[2] = i % 256;
			x->src_len = 24;
			break;
		case 2:
			x->fields = XP_RF_DST | XP_RF_L4PROTO;
			x->family = 6;
			x->l4proto = IPPROTO_TCP;
			x->dst[0] = 0xfd;
			x->dst[2] = i / 256;
			x->dst[3] = i % 256;
			x->dst_len = 48;
			break;
		case 3:
			x->fields = XP_RF_VLAN;
			x->vlan = 1000 + i % 3000;
			break;
		case 4:
			x->fields = XP_RF_SPORT | XP_RF_L4PROTO;
			x->l4proto = IPPROTO_TCP;
			x->sport_lo = 1 + i;
			x->sport_hi = 1 + i;
			break;
		case 5:
			x->fields = XP_RF_ETHTYPE;
			x->ethertype = 0x8800 + i % 200;
			break;
		case 6:
			x->fields = XP_RF_QUEUE | XP_RF_DPORT;
			x->queue = 1 + i % 3;
			x->dport_lo = 100;
			x->dport_hi = 200;
			break;
		default:
			x->fields = XP_RF_SRC | XP_RF_DST;
			x->family = 6;
			x->src[0] = 0xfc;
			x->src[1] = i % 256;
			x->src_len = 16;
			x->dst[0] = 0xfc;
			x->dst_len = 8;
			break;
		}
	}
	if (n) {
		struct xp_rule *x = &r[n - 1];

		memset(x, 0, sizeof(*x));
		x->prio = CATCH_ALL_PRIO;
		x->fields = XP_RF_DPORT;
		x->dport_lo = 1;
		x->dport_hi = 65535;
		x->action.kind = XP_ACT_XSK;
	}
}

/* The counters that tell which path a steer program took. */
struct path_cnt {
	__u64 hit; /* the catch-all rule's packets, or the default's with no rules */
	__u64 dflt, perr, nosock;
};

static int path_read(struct xp_steer *st, unsigned nrules, struct path_cnt *pc)
{
	static struct xp_rule r[XP_STEER_MAX_RULES];
	static struct xp_counter c[XP_STEER_MAX_RULES];
	struct xp_steer_stats s;
	__u32 n, i;

	if (xp_steer_stats_read(st, &s))
		return -1;
	pc->dflt = s.verdict[XP_CNT_DEFAULT].packets;
	pc->perr = s.verdict[XP_CNT_PARSE_ERR].packets;
	pc->nosock = s.verdict[XP_CNT_XSK_NOSOCK].packets;
	pc->hit = pc->dflt;
	if (!nrules)
		return 0;
	if (xp_steer_rules_get(st, r, c, XP_STEER_MAX_RULES, &n) || n != nrules)
		return -1;
	for (i = 0; i < n && r[i].prio != CATCH_ALL_PRIO; i++)
		;
	if (i == n)
		return -1;
	pc->hit = c[i].packets;
	return 0;
}

/* 0 if the @repeat runs between @a and @b all went where the figure says: the rule
 * (or, without rules, the default) matched, its XSK action fell back to PASS for want
 * of a socket, nothing failed to parse. */
static int path_check(const char *what, const char *pkt, unsigned nrules, unsigned repeat,
		      const struct path_cnt *a, const struct path_cnt *b)
{
	const char *bad;
	__u64 moved, want = repeat;

	if ((moved = b->hit - a->hit) != want)
		bad = nrules ? "the catch-all rule's counter" : "the default action's counter";
	else if ((moved = b->perr - a->perr) != (want = 0))
		bad = "the parse-error counter";
	else if (nrules && (moved = b->dflt - a->dflt) != 0)
		bad = "the default action's counter";
	else if ((moved = b->nosock - a->nosock) != (want = repeat))
		bad = "the XSK-without-socket counter";
	else
		return 0;
	fprintf(stderr,
		"xpile-bench xdp: %s, %s: %s moved by %llu over %u runs, expected %llu: "
		"not the path measured\n",
		what, pkt, bad, (unsigned long long)moved, repeat, (unsigned long long)want);
	return -1;
}

/* Sets XP_CFG_F_NOCACHE in the "xp_cfg" map of program @prog_fd. */
static int set_nocache(int prog_fd)
{
	__u32 ids[16], n, zero = 0;
	struct bpf_prog_info pi = { .nr_map_ids = 16, .map_ids = (__u64)(unsigned long)ids };
	int err = -ENOENT;

	n = sizeof(pi);
	if (bpf_obj_get_info_by_fd(prog_fd, &pi, &n))
		return -errno;
	for (__u32 i = 0; i < pi.nr_map_ids && i < 16 && err == -ENOENT; i++) {
		struct bpf_map_info mi = { 0 };
		struct xp_cfg c;
		int fd = bpf_map_get_fd_by_id(ids[i]);

		n = sizeof(mi);
		if (fd < 0)
			continue;
		if (!bpf_obj_get_info_by_fd(fd, &mi, &n) && !strcmp(mi.name, "xp_cfg")) {
			err = bpf_map_lookup_elem(fd, &zero, &c) ? -errno : 0;
			c.flags |= XP_CFG_F_NOCACHE;
			if (!err && bpf_map_update_elem(fd, &zero, &c, BPF_ANY))
				err = -errno;
		}
		close(fd);
	}
	return err;
}

static int cmp_u64(const void *a, const void *b)
{
	__u64 x = *(const __u64 *)a, y = *(const __u64 *)b;

	return x < y ? -1 : x > y;
}

static double time_prog(int fd, const struct pkt *p, unsigned repeat, __u32 *verdict)
{
	LIBBPF_OPTS(bpf_test_run_opts, o, .data_in = p->buf, .data_size_in = p->len,
		    .repeat = repeat);

	if (bpf_prog_test_run_opts(fd, &o))
		return -1;
	*verdict = o.retval; /* of the last run: the same packet every time */
	return o.duration; /* kernel: average ns per run */
}

struct xdp_args {
	unsigned rounds, repeat;
	bool json;
};

#define OPT(...) CLI_OPT(struct xdp_args, __VA_ARGS__)

static const struct cli_opt opts[] = {
	OPT("rounds", NUM, rounds, "N", "interleaved rounds, median reported (default 9)", .min = 1,
	    .max = MAX_ROUNDS),
	OPT("repeat", NUM, repeat, "N", "test-run repeat count per measurement (default 200000)",
	    .min = 1),
	OPT("json", FLAG, json, NULL, "one JSON object per packet type"),
	{ 0 },
};

const struct bench_cmd bench_xdp_cmd = {
	CLI_COMMAND("xdp", NULL, "steer program ns/packet via BPF_PROG_TEST_RUN", opts,
		    .max_args = 0,
		    .description =
			    "ns/packet of the steer program (bpf/steer.bpf.c) with 0, 16 and 1024 "
			    "rules next to bpf/redirect_min.bpf.c, via BPF_PROG_TEST_RUN, "
			    "interleaved, medians. Needs root; runs in a private network namespace "
			    "with its own veths.",
		    .examples = "xpile-bench xdp --rounds 9 --json"),
	bench_xdp,
};

int bench_xdp(int argc, char **argv)
{
	static struct xp_rule rules[XP_STEER_MAX_RULES];
	static __u64 t[NPKTS][NSETS + 1][MAX_ROUNDS];
	struct xp_steer *st[NSETS] = { 0 };
	struct xdp_args xa = { .rounds = 9, .repeat = 200000 };
	unsigned rounds, repeat;
	struct bpf_object *minobj = NULL;
	char path[4096];
	bool json;
	int c, rc = 1, minfd;

	c = bench_parse(&bench_xdp_cmd, argc, argv, &xa);
	if (c != CLI_RUN)
		return c;
	rounds = xa.rounds;
	repeat = xa.repeat;
	json = xa.json;
	if (geteuid()) {
		fprintf(stderr, "xpile-bench xdp: needs root (BPF_PROG_TEST_RUN, veth)\n");
		return 2;
	}
	if (unshare(CLONE_NEWNET)) {
		perror("xpile-bench xdp: unshare(CLONE_NEWNET)");
		return 1;
	}
	bpflog_capture(); /* shown only if a program fails to load */
	for (int i = 0; i < NSETS; i++) {
		char cmd[160], ifn[16];
		struct xp_steer_opts o = { .sz = sizeof(o), .ifname = ifn };

		snprintf(ifn, sizeof(ifn), "xpb%d", i);
		snprintf(cmd, sizeof(cmd),
			 "ip link add %s type veth peer name %sp && ip link set %s up", ifn, ifn,
			 ifn);
		if (system(cmd)) {
			fprintf(stderr, "xpile-bench xdp: cannot create veth %s\n", ifn);
			goto out;
		}
		if (xp_steer_open(&o, &st[i])) {
			bpflog_dump(stderr, 30);
			goto out;
		}
		make_rules(rules, set_sizes[i]);
		if (xp_steer_rules_replace(st[i], rules, set_sizes[i]))
			goto out;
		if (set_cold[i] && set_nocache(xp_steer_prog_fd(st[i]))) {
			fprintf(stderr, "xpile-bench xdp: cannot find the xp_cfg map\n");
			goto out;
		}
	}
	if (xp_bpf_obj_path("redirect_min.o", path, sizeof(path)))
		goto out;
	minobj = bpf_object__open_file(path, NULL);
	if (libbpf_get_error(minobj) || bpf_object__load(minobj)) {
		fprintf(stderr, "xpile-bench xdp: cannot load %s\n", path);
		bpflog_dump(stderr, 30);
		minobj = NULL;
		goto out;
	}
	minfd = bpf_program__fd(bpf_object__next_program(minobj, NULL));

	for (unsigned r = 0; r < rounds; r++)
		for (size_t p = 0; p < NPKTS; p++) {
			struct pkt pk;

			pkt_build(&packets[p].spec, &pk);
			for (int v = 0; v <= NSETS; v++) {
				static const char *const names[NSETS + 1] = {
					"minimal", "0 rules", "16 rules", "1024 rules", "1024 miss"
				};
				struct path_cnt a = { 0 }, b = { 0 };
				unsigned nr = v ? set_sizes[v - 1] : 0;
				__u32 verdict = XDP_ABORTED;
				double ns;

				if (v && path_read(st[v - 1], nr, &a))
					goto cnt_fail;
				ns = time_prog(v ? xp_steer_prog_fd(st[v - 1]) : minfd, &pk, repeat,
					       &verdict);
				if (ns < 0) {
					fprintf(stderr, "xpile-bench xdp: test run failed\n");
					goto out;
				}
				/* no socket anywhere: both programs' redirects fall back to PASS */
				if (verdict != XDP_PASS) {
					fprintf(stderr,
						"xpile-bench xdp: %s, %s: verdict %u, expected "
						"XDP_PASS (%u): not the path measured\n",
						names[v], packets[p].name, verdict, XDP_PASS);
					goto out;
				}
				if (v && path_read(st[v - 1], nr, &b))
					goto cnt_fail;
				if (v && path_check(names[v], packets[p].name, nr, repeat, &a, &b))
					goto out;
				t[p][v][r] = ns;
				continue;
cnt_fail:
				fprintf(stderr,
					"xpile-bench xdp: %s: cannot read the steer counters\n",
					names[v]);
				goto out;
			}
		}
	if (!json)
		printf("%-10s %8s %8s %8s %8s %10s %9s   (ns/packet, median of %u rounds x %u)\n",
		       "packet", "minimal", "0 rules", "16", "1024", "1024/min", "1024 miss",
		       rounds, repeat);
	for (size_t p = 0; p < NPKTS; p++) {
		__u64 med[NSETS + 1];

		for (int v = 0; v <= NSETS; v++) {
			qsort(t[p][v], rounds, sizeof(__u64), cmp_u64);
			med[v] = t[p][v][rounds / 2];
		}
		if (json)
			printf("{\"packet\":\"%s\",\"minimal_ns\":%llu,\"rules0_ns\":%llu,"
			       "\"rules16_ns\":%llu,\"rules1024_ns\":%llu,\"ratio1024\":%.2f,"
			       "\"rules1024_miss_ns\":%llu,\"rounds\":%u,\"repeat\":%u}\n",
			       packets[p].name, (unsigned long long)med[0],
			       (unsigned long long)med[1], (unsigned long long)med[2],
			       (unsigned long long)med[3], med[0] ? (double)med[3] / med[0] : 0,
			       (unsigned long long)med[4], rounds, repeat);
		else
			printf("%-10s %8llu %8llu %8llu %8llu %9.2fx %9llu\n", packets[p].name,
			       (unsigned long long)med[0], (unsigned long long)med[1],
			       (unsigned long long)med[2], (unsigned long long)med[3],
			       med[0] ? (double)med[3] / med[0] : 0, (unsigned long long)med[4]);
	}
	rc = 0;
out:
	if (minobj)
		bpf_object__close(minobj);
	for (int i = 0; i < NSETS; i++)
		xp_steer_close(st[i], true);
	return rc;
}
