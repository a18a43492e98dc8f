// SPDX-License-Identifier: BSD-3-Clause
/*
 * xpile-bench xdp: ns per packet of the steer program through BPF_PROG_TEST_RUN with
 * repeat, for TCP/UDP over IPv4/IPv6 and VLAN-tagged packets, with 0, 16 and 1024
 * rules, next to the minimal program that only redirects to the RX queue's XSKMAP
 * entry. Every run after a packet's first hits the flow cache (a flow's steady state);
 * "1024 miss" ignores the cache's hits (XP_CFG_F_NOCACHE), what a flow's first packet
 * costs. Programs run interleaved (min, 0, 16, 1024, min, ...) and each figure is the
 * median of the rounds, each ratio the median of the rounds' ratios to the minimal
 * program (the targets of issue 28 are such ratios). --count prints what each program
 * executes per packet instead (bpf_replay.h). The rule sets use every field, so every
 * lookup happens; the
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
#include <time.h>
#include <unistd.h>
#include <netinet/in.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <xdp/libxdp.h>

#include "bench.h"
#include "bpf_replay.h"
#include "benchutil.h"
#include "bpflog.h"
#include "pkt.h"
#include "xpile/bpffs.h"
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

/* Sets XP_CFG_F_NOCACHE in the xp_cfg map (kernel name XP_CFG_SECTION) of @prog_fd. */
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
		if (!bpf_obj_get_info_by_fd(fd, &mi, &n) && !strcmp(mi.name, XP_CFG_SECTION)) {
			err = bpf_map_lookup_elem(fd, &zero, &c) ? -errno : 0;
			c.flags |= XP_CFG_F_NOCACHE;
			if (!err && bpf_map_update_elem(fd, &zero, &c, BPF_ANY))
				err = -errno;
		}
		close(fd);
	}
	return err;
}

static double thread_cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return ts.tv_sec * 1e9 + ts.tv_nsec;
}

/* Thread CPU time of one test run of @fd on @p with @repeat runs, or -1. The kernel's own
 * figure (o.duration) is whole ns, a seventh of the minimal program here: the thread's CPU
 * time has the fraction and, like the kernel's, leaves out the time it was preempted, but
 * it also holds what a call with repeat > 1 costs besides the runs (the kernel puts the
 * program in the XDP dispatcher and takes it out: ~0.3 ms of CPU here), which
 * time_prog() subtracts. */
static double run_cpu_ns(int fd, const struct pkt *p, unsigned repeat, __u32 *verdict)
{
	LIBBPF_OPTS(bpf_test_run_opts, o, .data_in = p->buf, .data_size_in = p->len,
		    .repeat = repeat);
	double t0 = thread_cpu_ns();

	if (bpf_prog_test_run_opts(fd, &o))
		return -1;
	*verdict = o.retval; /* of the last run: the same packet every time */
	return thread_cpu_ns() - t0;
}

/* ns per run: @repeat runs less a call of 2, the fixed cost (@fixed, measured once a
 * round), over the runs that differ. */
static double time_prog(int fd, const struct pkt *p, unsigned repeat, double fixed, __u32 *verdict)
{
	double ns = run_cpu_ns(fd, p, repeat, verdict);

	return ns < 0 ? -1 : (ns - fixed) / (repeat - 2);
}

/* x86-64 instructions in the JITed image of @rp (objdump over a copy), or -1. */
static long jited_insns(const struct bpf_replay *rp)
{
	char tmp[] = "/tmp/xpile-bench-jit-XXXXXX", cmd[128], line[512];
	int fd = mkstemp(tmp);
	long n = 0;
	FILE *f;

	if (fd < 0)
		return -1;
	close(fd);
	if (bpf_replay_dump_jited(rp, tmp)) {
		unlink(tmp);
		return -1;
	}
	snprintf(cmd, sizeof(cmd), "objdump -D -b binary -m i386:x86-64 %s 2>/dev/null", tmp);
	f = popen(cmd, "r");
	while (f && fgets(line, sizeof(line), f)) {
		char *c = line + strspn(line, " ");

		char *tab = strchr(c, '\t');

		/* "  addr:\tbytes\tmnemonic": a long instruction's bytes go on without one */
		if (c != line && c[strspn(c, "0123456789abcdef")] == ':' && tab &&
		    strchr(tab + 1, '\t'))
			n++;
	}
	if (!f || pclose(f))
		n = -1;
	unlink(tmp);
	return n;
}

static const char *const prog_names[NSETS + 1] = { "minimal", "0 rules", "16 rules", "1024 rules",
						   "1024 miss" };

/* --count: what each program does per packet, by replaying its translated code (the
 * second run of each packet, so a flow cache hit where the cache is on), checked to end
 * with the verdict the kernel's run gave. */
static int count_progs(int minfd, struct xp_steer *const *st, bool json)
{
	struct bpf_replay *rp[NSETS + 1] = { 0 };
	char err[256];
	int rc = 1;

	for (int v = 0; v <= NSETS; v++)
		if (bpf_replay_open(v ? xp_steer_prog_fd(st[v - 1]) : minfd, &rp[v], err,
				    sizeof(err))) {
			fprintf(stderr, "xpile-bench xdp: --count: %s: %s\n", prog_names[v], err);
			goto out;
		}
	for (int v = 0; v <= 1; v++) {
		struct bpf_replay_size z;

		bpf_replay_size(rp[v], &z);
		if (json)
			printf("{\"program\":\"%s\",\"xlated_insns\":%u,\"jited_bytes\":%u,"
			       "\"jited_insns\":%ld,\"helper_call_sites\":%u,"
			       "\"bpf_call_sites\":%u}\n",
			       v ? "xp_steer" : "xp_redirect_min", z.xlated_insns, z.jited_bytes,
			       jited_insns(rp[v]), z.helper_sites, z.pseudo_call_sites);
		else
			printf("%-16s %6u BPF instructions, %5u bytes / %4ld x86 instructions "
			       "JITed, %u helper and %u bpf-to-bpf call sites\n",
			       v ? "xp_steer" : "xp_redirect_min", z.xlated_insns, z.jited_bytes,
			       jited_insns(rp[v]), z.helper_sites, z.pseudo_call_sites);
	}
	if (!json)
		printf("\nper packet: BPF instructions run / helper calls / bpf-to-bpf calls "
		       "(translated code, after the verifier's inlining)\n%-10s %12s %12s %12s "
		       "%12s %12s\n",
		       "packet", "minimal", "0 rules", "16", "1024", "1024 miss");
	for (size_t p = 0; p < NPKTS; p++) {
		struct bpf_replay_count cnt[NSETS + 1];
		struct pkt pk;

		pkt_build(&packets[p].spec, &pk);
		for (int v = 0; v <= NSETS; v++) {
			__u32 real = XDP_ABORTED;

			if (run_cpu_ns(v ? xp_steer_prog_fd(st[v - 1]) : minfd, &pk, 1, &real) <
				    0 ||
			    bpf_replay_run(rp[v], pk.buf, pk.len, 0, &cnt[v], err, sizeof(err)) ||
			    bpf_replay_run(rp[v], pk.buf, pk.len, 0, &cnt[v], err, sizeof(err))) {
				fprintf(stderr, "xpile-bench xdp: --count: %s, %s: %s\n",
					prog_names[v], packets[p].name, err);
				goto out;
			}
			if (cnt[v].retval != real) {
				fprintf(stderr,
					"xpile-bench xdp: --count: %s, %s: replay gave verdict %u, "
					"the kernel %u\n",
					prog_names[v], packets[p].name, cnt[v].retval, real);
				goto out;
			}
		}
		if (json) {
			printf("{\"packet\":\"%s\"", packets[p].name);
			for (int v = 0; v <= NSETS; v++) {
				printf(",\"%s\":{\"insns\":%llu,\"helper_calls\":%u,"
				       "\"bpf_calls\":%u,\"helpers\":[",
				       prog_names[v], (unsigned long long)cnt[v].insns,
				       cnt[v].helpers, cnt[v].pseudo_calls);
				for (__u32 k = 0; k < cnt[v].nhelper; k++)
					printf("%s\"%s\"", k ? "," : "", cnt[v].helper[k].name);
				printf("]}");
			}
			printf("}\n");
			continue;
		}
		printf("%-10s", packets[p].name);
		for (int v = 0; v <= NSETS; v++) {
			char b[32];

			snprintf(b, sizeof(b), "%llu/%u/%u", (unsigned long long)cnt[v].insns,
				 cnt[v].helpers, cnt[v].pseudo_calls);
			printf(" %12s", b);
		}
		printf("\n");
		if (p == NPKTS - 1)
			for (int v = 0; v <= NSETS; v++)
				for (__u32 k = 0; k < cnt[v].nhelper; k++)
					printf("%s%s: %s",
					       v + k ? ", " : "helpers: ", prog_names[v],
					       cnt[v].helper[k].name);
	}
	if (!json)
		printf("\n");
	rc = 0;
out:
	for (int v = 0; v <= NSETS; v++)
		bpf_replay_close(rp[v]);
	return rc;
}

struct xdp_args {
	unsigned rounds, repeat;
	const char *obj;
	bool json, count;
	const char *bpffs; /* --bpffs: exported as XPILE_BPFFS */
};

#define OPT(...) CLI_OPT(struct xdp_args, __VA_ARGS__)

static const struct cli_opt opts[] = {
	OPT("rounds", NUM, rounds, "N", "interleaved rounds, median reported (default 9)", .min = 1,
	    .max = MAX_ROUNDS),
	OPT("repeat", NUM, repeat, "N", "test-run repeat count per measurement (default 2000000)",
	    .min = 1000),
	OPT("obj", STR, obj, "FILE",
	    "steer program to measure: another build of the same map layout (default: the installed steer.o)"),
	OPT("count", FLAG, count, NULL,
	    "instead of timing: instructions, helper calls and bpf-to-bpf calls per packet "
	    "(a replay of the translated code) and each program's JITed size"),
	OPT("json", FLAG, json, NULL, "one JSON object per packet type"),
	OPT("bpffs", STR, bpffs, "DIR", CLI_BPFFS_HELP, .env = "XPILE_BPFFS"),
	{ 0 },
};

BENCH_COMMAND(bench_xdp_cmd, bench_xdp, "xdp", NULL,
	      "steer program ns/packet via BPF_PROG_TEST_RUN", opts,
	      .description = "ns/packet of the steer program (bpf/steer.bpf.c) with 0, 16 and 1024 "
			     "rules next to bpf/redirect_min.bpf.c, via BPF_PROG_TEST_RUN, "
			     "interleaved, medians, and the ratios to it in the same rounds; with "
			     "--count the BPF instructions, helper calls and bpf-to-bpf calls per "
			     "packet and the JITed sizes instead. Needs root; runs in a private "
			     "network namespace with its own veths.",
	      .examples = "xpile-bench xdp --rounds 9 --json\n"
			  "xpile-bench xdp --count\n"
			  "xpile-bench xdp --obj ../before/build/bpf/steer.o");

int bench_xdp(int argc, char **argv)
{
	static struct xp_rule rules[XP_STEER_MAX_RULES];
	static double t[NPKTS][NSETS + 1][MAX_ROUNDS], ratio[NPKTS][NSETS + 1][MAX_ROUNDS];
	struct xp_steer *st[NSETS] = { 0 };
	struct xdp_args xa = { .rounds = 9, .repeat = 2000000 };
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
		struct xp_steer_opts o = { .sz = sizeof(o), .ifname = ifn, .bpf_obj = xa.obj };

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
	if (xa.count) {
		rc = count_progs(minfd, st, json);
		goto out;
	}

	for (unsigned r = 0; r < rounds; r++) {
		double fixed;
		struct pkt pk;
		__u32 verdict;

		pkt_build(&packets[0].spec, &pk);
		fixed = run_cpu_ns(minfd, &pk, 2, &verdict);
		if (fixed < 0) {
			fprintf(stderr, "xpile-bench xdp: test run failed\n");
			goto out;
		}
		for (size_t p = 0; p < NPKTS; p++) {
			pkt_build(&packets[p].spec, &pk);
			for (int v = 0; v <= NSETS; v++) {
				struct path_cnt a = { 0 }, b = { 0 };
				unsigned nr = v ? set_sizes[v - 1] : 0;
				double ns;

				verdict = XDP_ABORTED;

				if (v && path_read(st[v - 1], nr, &a))
					goto cnt_fail;
				ns = time_prog(v ? xp_steer_prog_fd(st[v - 1]) : minfd, &pk, repeat,
					       fixed, &verdict);
				if (ns < 0) {
					fprintf(stderr, "xpile-bench xdp: test run failed\n");
					goto out;
				}
				/* no socket anywhere: both programs' redirects fall back to PASS */
				if (verdict != XDP_PASS) {
					fprintf(stderr,
						"xpile-bench xdp: %s, %s: verdict %u, expected "
						"XDP_PASS (%u): not the path measured\n",
						prog_names[v], packets[p].name, verdict, XDP_PASS);
					goto out;
				}
				if (v && path_read(st[v - 1], nr, &b))
					goto cnt_fail;
				if (v &&
				    path_check(prog_names[v], packets[p].name, nr, repeat, &a, &b))
					goto out;
				t[p][v][r] = ns;
				ratio[p][v][r] = ns / t[p][0][r];
				continue;
cnt_fail:
				fprintf(stderr,
					"xpile-bench xdp: %s: cannot read the steer counters\n",
					prog_names[v]);
				goto out;
			}
		}
	}
	if (!json)
		printf("%-10s %7s %7s %7s %7s %9s  %6s %6s %6s   (ns/packet; x: to minimal in "
		       "the same round; medians of %u rounds x %u; load %s)\n",
		       "packet", "minimal", "0 rules", "16", "1024", "1024 miss", "0", "1024",
		       "miss", rounds, repeat, bench_loadavg());
	for (size_t p = 0; p < NPKTS; p++) {
		double med[NSETS + 1], x[NSETS + 1];

		for (int v = 0; v <= NSETS; v++) {
			med[v] = bench_median(t[p][v], rounds);
			x[v] = bench_median(ratio[p][v], rounds);
		}
		if (json)
			printf("{\"packet\":\"%s\",\"minimal_ns\":%.2f,\"rules0_ns\":%.2f,"
			       "\"rules16_ns\":%.2f,\"rules1024_ns\":%.2f,\"rules1024_miss_ns\":%.2f,"
			       "\"ratio0\":%.3f,\"ratio16\":%.3f,\"ratio1024\":%.3f,"
			       "\"ratio1024_miss\":%.3f,\"rounds\":%u,\"repeat\":%u}\n",
			       packets[p].name, med[0], med[1], med[2], med[3], med[4], x[1], x[2],
			       x[3], x[4], rounds, repeat);
		else
			printf("%-10s %7.1f %7.1f %7.1f %7.1f %9.1f  %5.2fx %5.2fx %5.2fx\n",
			       packets[p].name, med[0], med[1], med[2], med[3], med[4], x[1], x[3],
			       x[4]);
	}
	rc = 0;
out:
	if (minobj)
		bpf_object__close(minobj);
	for (int i = 0; i < NSETS; i++)
		xp_steer_close(st[i], true);
	return rc;
}
