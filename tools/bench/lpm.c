// SPDX-License-Identifier: BSD-3-Clause
/*
 * xpile-bench lpm: the routing table's cost. Per route count and prefix distribution:
 * the time to load the table and its memory (in place and double-buffered), ns per
 * lookup of random addresses (single and bulk, against DPDK's rte_lpm in the same run
 * when built with it, alternating runs, medians), and what a route change costs up to
 * the moment it is live (add or delete, then commit). --ipv6 does the IPv6 table with
 * both roots; --netlink the rtnetlink mirror against `ip -batch` (lpm_nl.c).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"
#include "benchutil.h"
#include "lpm_bench.h"
#include "xpile/log.h"
#include "xpile/lpm.h"

#define MAX_COUNTS 8
#define BURST 32

struct lpm_args {
	__u32 counts[MAX_COUNTS], ncounts;
	__u32 dist_mask; /* DIST_* */
	__u32 sync_mask; /* 1 in place, 2 double */
	__u32 runs, lookups, changes, budget;
	enum { PAGES_AUTO, PAGES_HUGE, PAGES_4K } pages;
	bool ipv6, netlink, no_dpdk;
};

#define OPT(...) CLI_OPT(struct lpm_args, __VA_ARGS__)

static const struct cli_name dist_names[] = { CLI_NAME("random", DIST_RANDOM),
					      CLI_NAME("bgp", DIST_BGP),
					      CLI_NAME("random,bgp", DIST_RANDOM | DIST_BGP),
					      CLI_ALIAS("both", DIST_RANDOM | DIST_BGP),
					      { 0 } };
static const struct cli_name sync_names[] = { CLI_NAME("inplace", 1),
					      CLI_NAME("double", 2),
					      CLI_NAME("inplace,double", 3),
					      CLI_ALIAS("both", 3),
					      { 0 } };
static const struct cli_name pages_names[] = { CLI_NAME("auto", PAGES_AUTO),
					       CLI_NAME("huge", PAGES_HUGE),
					       CLI_NAME("4k", PAGES_4K),
					       { 0 } };

static const struct cli_opt opts[] = {
	OPT("routes", LIST, counts, "LIST",
	    "route counts, comma-separated (default 1000,100000,1000000; with --netlink "
	    "100000,1000000)",
	    .min = 1, .max = 4000000, .cap = MAX_COUNTS,
	    .count_off = offsetof(struct lpm_args, ncounts)),
	OPT("dist", ENUM, dist_mask, "random|bgp|both",
	    "prefix lengths: uniform /1../32 (random), or a full BGP table's shape as in "
	    "DPDK's test_lpm_perf, 58% /24 and 4% longer (bgp); default both",
	    .names = dist_names),
	OPT("sync", ENUM, sync_mask, "inplace|double|both",
	    "publishing (xpile/lpm.h): one image, or two flipped at commit; default both",
	    .names = sync_names),
	OPT("runs", NUM, runs, "N", "alternating runs per lookup figure, median taken (default 5)",
	    .min = 1, .max = 101),
	OPT("lookups", NUM, lookups, "N", "random addresses per timed run (default 4194304)",
	    .min = 1024, .max = 1u << 26),
	OPT("changes", NUM, changes, "N",
	    "route changes timed one by one, each committed (default 2000)", .min = 10,
	    .max = 1000000),
	OPT("budget", NUM, budget, "N",
	    "--netlink: notifications applied per xp_fib_nl_process() call, each call one "
	    "commit (default 256; 0 = all there are)",
	    .max = 1u << 20),
	OPT("pages", ENUM, pages, "auto|huge|4k",
	    "table memory: 2 MiB pages when enough are free (auto), required (huge), or 4 KiB",
	    .names = pages_names),
	OPT("ipv6", FLAG, ipv6, NULL,
	    "the IPv6 table instead: 16- and 24-bit roots (and rte_lpm6) on prefixes shaped "
	    "like a BGP table's (/32../48 under shared allocations, few /64 and /128)"),
	OPT("netlink", FLAG, netlink, NULL,
	    "the rtnetlink mirror (needs root): in a namespace of its own, `ip -batch` loads "
	    "the routes; prints the time until the mirror holds them all, its memory, and the "
	    "route-change latency from the kernel's notification to the table flip and to a "
	    "reader's first new answer (median, p99)"),
	OPT("no-dpdk", FLAG, no_dpdk, NULL, "leave DPDK's rte_lpm out even when built with it"),
	{ 0 },
};

const struct bench_cmd bench_lpm_cmd = {
	CLI_COMMAND(
		"lpm", NULL, "routing table: load, memory, lookup ns, route changes; --netlink",
		opts, .max_args = 0,
		.description =
			"For each --routes count and --dist, loads xp_lpm (xpile/lpm.h) in each --sync "
			"mode and prints\n"
			"  lpm4 load dist=D routes=N sync=S load_ms=X ns_per_add=A mem_mib=M "
			"image_mib=I groups=G pages=P [dpdk_load_ms=Y]\n"
			"  lpm4 lookup dist=D routes=N sync=S single_ns=A bulk_ns=B [dpdk_single_ns=C "
			"dpdk_bulk_ns=E dpdk_x4_ns=F single_ratio=C/A bulk_ratio=min(E,F)/B]\n"
			"  lpm4 change dist=D routes=N sync=S median_us=X p99_us=Y\n"
			"ns per lookup of uniformly random addresses (medians of --runs alternating "
			"runs; bulk = bursts of 32 with prefetch), and per route change (a /24 "
			"replaced, or a /28 added or deleted, then committed: the time until it is "
			"live; with readers, add their grace period). DPDK's side needs a build "
			"against Debian's libdpdk-dev (apt-get install libdpdk-dev, or "
			"XPILE_WITH_DPDK=1 tools/setup/install-deps.sh; then make); it runs with "
			"--no-huge. The machine's load average is printed first: benchmarks on a "
			"shared machine are noisy, ratios of one run are what to compare.",
		.examples = "xpile-bench lpm\n"
			    "xpile-bench lpm --routes 1000000 --dist bgp --runs 9\n"
			    "xpile-bench lpm --ipv6 --routes 100000\n"
			    "sudo xpile-bench lpm --netlink --routes 100000,1000000"),
	bench_lpm,
};

/* ---- routes ---- */

static __u64 xs(__u64 *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

/* A full table's prefix lengths, percent (rounded from DPDK test_lpm_perf's table,
 * itself dumped from a real router): mostly /24, 4% longer. */
static const double bgp_pct[33] = {
	[8] = 0.02,  [9] = 0.01,  [10] = 0.01, [11] = 0.03, [12] = 0.07, [13] = 0.15, [14] = 0.52,
	[15] = 0.87, [16] = 5.9,  [17] = 3.8,  [18] = 6.7,  [19] = 12.4, [20] = 10.7, [21] = 8.6,
	[22] = 11.4, [23] = 13.0, [24] = 57.2, [25] = 0.36, [26] = 0.88, [27] = 0.99, [28] = 1.13,
	[29] = 2.06, [30] = 0.93, [31] = 0.01, [32] = 0.13,
};

static __u8 pick_depth(enum lpm_dist d, __u64 *s)
{
	static double cum[33];
	double x;

	if (d == DIST_RANDOM)
		return (__u8)(1 + xs(s) % 32);
	if (cum[32] == 0) {
		double t = 0;

		for (int i = 0; i <= 32; i++)
			cum[i] = (t += bgp_pct[i]);
	}
	x = (double)(xs(s) % 1000000) / 1000000 * cum[32];
	for (int i = 0; i < 32; i++)
		if (x < cum[i])
			return (__u8)i;
	return 32;
}

static bool unusable(__u32 a, __u8 d)
{
	__u32 b = a >> 24, m = d ? ~0u << (32 - d) : 0;

	/* Keep clear of what the FIB treats as special and of our test range. */
	return b == 0 || b == 127 || b >= 224 || (d <= 15 && (0xc6120000 & m) == a) ||
	       (a & 0xfffe0000) == 0xc6120000;
}

struct route4 *lpm_bench_routes4(__u32 n, enum lpm_dist dist, __u64 seed)
{
	__u64 slots = 4, s = seed | 1, *set;
	struct route4 *r = malloc((size_t)n * sizeof(*r));
	__u32 k = 0;

	while (slots < 2ull * n)
		slots <<= 1;
	set = calloc(slots, sizeof(*set));
	if (!r || !set) {
		free(r);
		free(set);
		return NULL;
	}
	while (k < n) {
		__u8 d = pick_depth(dist, &s);
		__u32 a = (__u32)xs(&s) & (d ? ~0u << (32 - d) : 0);
		__u64 key = ((__u64)a << 8 | d) + 1,
		      h = (key * 0x9e3779b97f4a7c15ull) & (slots - 1);

		if (unusable(a, d))
			continue;
		while (set[h] && set[h] != key)
			h = (h + 1) & (slots - 1);
		if (set[h])
			continue;
		set[h] = key;
		r[k++] = (struct route4){ a, d };
	}
	free(set);
	return r;
}

__u32 lpm_bench_groups4(const struct route4 *r, __u32 n)
{
	__u8 *seen = calloc(1u << 21, 1);
	__u32 g = 0;

	if (!seen)
		return n;
	for (__u32 i = 0; i < n; i++) {
		__u32 k = r[i].addr >> 8;

		if (r[i].depth > 24 && !(seen[k >> 3] & (1u << (k & 7)))) {
			seen[k >> 3] |= (__u8)(1u << (k & 7));
			g++;
		}
	}
	free(seen);
	return g;
}

const char *lpm_bench_dist_name(enum lpm_dist d)
{
	return d == DIST_RANDOM ? "random" : "bgp";
}

/* ---- IPv4 ---- */

static enum xp_hugepages hp_of(const struct lpm_args *a)
{
	return a->pages == PAGES_HUGE ? XP_HUGE_REQUIRE :
	       a->pages == PAGES_4K   ? XP_HUGE_NEVER :
					XP_HUGE_AUTO;
}

static struct xp_lpm *load4(const struct lpm_args *a, const struct route4 *r, __u32 n, __u32 groups,
			    enum xp_lpm_sync sync, double *ms)
{
	XP_OPTS(xp_lpm_opts, o, .groups = groups, .routes_hint = n, .sync = sync,
		.hugepages = hp_of(a));
	struct xp_lpm *t;
	double t0;

	if (xp_lpm_create(&o, &t)) {
		fprintf(stderr, "xpile-bench lpm: cannot create a table of %u groups\n", groups);
		return NULL;
	}
	t0 = bench_now_ns();
	for (__u32 i = 0; i < n; i++)
		if (xp_lpm_add(t, r[i].addr, r[i].depth, i & 0xffffff)) {
			fprintf(stderr, "xpile-bench lpm: route %u refused\n", i);
			xp_lpm_destroy(t);
			return NULL;
		}
	xp_lpm_commit(t);
	xp_lpm_sync(t);
	*ms = (bench_now_ns() - t0) / 1e6;
	return t;
}

static double xp_single(const struct xp_lpm *t, const __u32 *a, __u32 n, __u64 *sum)
{
	double t0 = bench_now_ns();
	__u64 s = 0;

	for (__u32 i = 0; i < n; i++)
		s += xp_lpm_lookup(t, a[i]);
	*sum += s;
	return (bench_now_ns() - t0) / n;
}

static double xp_bulk(const struct xp_lpm *t, const __u32 *a, __u32 n, __u64 *sum)
{
	double t0 = bench_now_ns();
	__u32 h[BURST];
	__u64 s = 0;

	for (__u32 i = 0; i + BURST <= n; i += BURST) {
		xp_lpm_lookup_bulk(t, a + i, h, BURST);
		for (int k = 0; k < BURST; k++)
			s += h[k];
	}
	*sum += s;
	return (bench_now_ns() - t0) / n;
}

static double pct(double *v, __u32 n, double p)
{
	__u32 i;

	bench_median(v, n); /* sorts */
	i = (__u32)(p * (n - 1) + 0.5);
	return v[i];
}

/* Route changes one by one, each live before the next: a /24 of the table replaced,
 * or a /28 added under one and deleted again (a group made and folded). */
static void changes4(const struct lpm_args *a, struct xp_lpm *t, const struct route4 *r, __u32 n,
		     const char *tag)
{
	double *us = malloc(a->changes * sizeof(*us));
	__u64 s = 7;

	if (!us)
		return;
	for (__u32 i = 0; i < a->changes; i++) {
		const struct route4 *x = &r[xs(&s) % n];
		__u32 a28 = (x->addr & 0xffffff00) | 0x30;
		double t0 = bench_now_ns();

		if (i % 3 == 0)
			xp_lpm_add(t, x->addr, x->depth, (__u32)(xs(&s) & 0xffffff));
		else if (i % 3 == 1)
			xp_lpm_add(t, a28, 28, 5);
		else
			xp_lpm_del(t, a28, 28);
		xp_lpm_commit(t);
		us[i] = (bench_now_ns() - t0) / 1e3;
	}
	printf("lpm4 change %s median_us=%.2f p99_us=%.2f\n", tag, pct(us, a->changes, 0.5),
	       pct(us, a->changes, 0.99));
	free(us);
}

static int run4(const struct lpm_args *a, enum lpm_dist d, __u32 n, const __u32 *addr, bool dpdk)
{
	struct route4 *r = lpm_bench_routes4(n, d, 0x5eed0000u + n);
	__u32 g = r ? lpm_bench_groups4(r, n) + 64 : 0;
	void *dt = NULL;
	double dms = 0;
	__u64 sum = 0;

	if (!r)
		return 1;
	if (dpdk && lpm_dpdk_load4(r, n, g, &dt, &dms))
		dpdk = false;
	for (int sync = 0; sync < 2; sync++) {
		double ms, single[101], bulk[101], ds[101], db[101], dx[101];
		struct xp_lpm_stats st;
		struct xp_lpm *t;
		char tag[96];

		if (!(a->sync_mask & (1u << sync)))
			continue;
		t = load4(a, r, n, g, sync ? XP_LPM_DOUBLE : XP_LPM_INPLACE, &ms);
		if (!t) {
			free(r);
			return 1;
		}
		xp_lpm_stats(t, &st);
		snprintf(tag, sizeof(tag), "dist=%s routes=%u sync=%s", lpm_bench_dist_name(d), n,
			 sync ? "double" : "inplace");
		printf("lpm4 load %s load_ms=%.1f ns_per_add=%.0f mem_mib=%.1f image_mib=%.1f "
		       "groups=%llu pages=%s",
		       tag, ms, ms * 1e6 / n, st.bytes / 1048576.0, st.image_bytes / 1048576.0,
		       (unsigned long long)st.groups_used,
		       st.page_size == XP_PAGE_2M ? "2M" : "4k");
		if (dpdk)
			printf(" dpdk_load_ms=%.1f", dms);
		printf("\n");
		/* One untimed pass each: the first to touch the tables would pay for both. */
		xp_single(t, addr, a->lookups, &sum);
		if (dpdk)
			lpm_dpdk_single4(dt, addr, a->lookups, &sum);
		for (__u32 k = 0; k < a->runs; k++) {
			single[k] = xp_single(t, addr, a->lookups, &sum);
			if (dpdk)
				ds[k] = lpm_dpdk_single4(dt, addr, a->lookups, &sum);
			bulk[k] = xp_bulk(t, addr, a->lookups, &sum);
			if (dpdk) {
				db[k] = lpm_dpdk_bulk4(dt, addr, a->lookups, &sum);
				dx[k] = lpm_dpdk_x4(dt, addr, a->lookups, &sum);
			}
		}
		printf("lpm4 lookup %s single_ns=%.2f bulk_ns=%.2f", tag,
		       bench_median(single, a->runs), bench_median(bulk, a->runs));
		if (dpdk) {
			double s1 = bench_median(single, a->runs), b1 = bench_median(bulk, a->runs);
			double s2 = bench_median(ds, a->runs), b2 = bench_median(db, a->runs);
			double x2 = bench_median(dx, a->runs);

			printf(" dpdk_single_ns=%.2f dpdk_bulk_ns=%.2f dpdk_x4_ns=%.2f "
			       "single_ratio=%.2f bulk_ratio=%.2f",
			       s2, b2, x2, s2 / s1, (b2 < x2 ? b2 : x2) / b1);
		}
		printf(" (checksum %llu)\n", (unsigned long long)(sum & 0xffff));
		changes4(a, t, r, n, tag);
		xp_lpm_destroy(t);
	}
	if (dt)
		lpm_dpdk_free4(dt);
	free(r);
	return 0;
}

/* ---- IPv6 ---- */

/* BGP-like IPv6: allocations (/32) shared by several routes, mostly /32../48. */
static void routes6(__u32 n, __u8 (*a)[16], __u8 *dep, __u64 seed)
{
	__u32 allocs = n / 6 + 1;
	__u64 s = seed | 1;

	for (__u32 i = 0; i < n; i++) {
		__u32 al = (__u32)(xs(&s) % allocs), r = (__u32)(xs(&s) % 100);
		__u64 lo = xs(&s), mid = xs(&s);
		__u8 d = r < 12 ? 32 :
			 r < 40 ? (__u8)(33 + xs(&s) % 15) :
			 r < 90 ? 48 :
			 r < 99 ? (__u8)(49 + xs(&s) % 16) :
				  128;

		memset(a[i], 0, 16);
		a[i][0] = 0x20 | (__u8)(al >> 24 & 0x0f);
		a[i][1] = (__u8)(al >> 16);
		a[i][2] = (__u8)(al >> 8);
		a[i][3] = (__u8)al;
		memcpy(a[i] + 4, &mid, 4);
		memcpy(a[i] + 8, &lo, 8);
		for (__u32 b = d; b < 128; b++)
			a[i][b / 8] &= (__u8) ~(0x80u >> (b % 8));
		dep[i] = d;
	}
}

static struct xp_lpm6 *load6(const struct xp_lpm_opts *o, const __u8 (*p)[16], const __u8 *dep,
			     __u32 n, double *ms)
{
	struct xp_lpm6 *t;
	double t0;

	if (xp_lpm6_create(o, &t))
		return NULL;
	t0 = bench_now_ns();
	for (__u32 i = 0; i < n; i++)
		if (xp_lpm6_add(t, p[i], dep[i], i & 0xffffff)) {
			fprintf(stderr, "xpile-bench lpm: IPv6 route %u refused\n", i);
			xp_lpm6_destroy(t);
			return NULL;
		}
	*ms = (bench_now_ns() - t0) / 1e6;
	return t;
}

static int run6(const struct lpm_args *a, __u32 n, bool dpdk)
{
	int rc = 0;
	__u8(*p)[16] = malloc((size_t)n * 16), (*q)[16] = malloc((size_t)a->lookups * 16);
	__u8 *dep = malloc(n);
	void *dt = NULL;
	double dms = 0;
	__u64 sum = 0, s = 99;

	if (!p || !q || !dep) {
		free(p);
		free(q);
		free(dep);
		return 1;
	}
	routes6(n, p, dep, 0x6eed + n);
	/* Addresses under the routes' allocations: random ones would almost all miss. */
	for (__u32 i = 0; i < a->lookups; i++) {
		__u64 x = xs(&s), y = xs(&s);

		memcpy(q[i], p[x % n], 16);
		memcpy(q[i] + 6, &y, 8);
		q[i][15] = (__u8)x;
	}
	if (dpdk && lpm_dpdk_load6((const __u8(*)[16])p, dep, n, 2 * n + 1024, &dt, &dms))
		dpdk = false;
	for (__u32 root = 16; root <= 24; root += 8) {
		XP_OPTS(xp_lpm_opts, o, .groups = 2 * n + 1024, .routes_hint = n, .root_bits = root,
			.hugepages = hp_of(a));
		double ms, bulk[101], db[101], single[101];
		struct xp_lpm_stats st;
		struct xp_lpm6 *t;

		t = load6(&o, (const __u8(*)[16])p, dep, n, &ms);
		if (!t) {
			rc = 1;
			break;
		}
		xp_lpm6_stats(t, &st);
		for (__u32 k = 0; k < a->runs; k++) {
			double t1 = bench_now_ns();
			__u32 h[BURST];

			for (__u32 i = 0; i < a->lookups; i++)
				sum += xp_lpm6_lookup(t, q[i]);
			single[k] = (bench_now_ns() - t1) / a->lookups;
			t1 = bench_now_ns();
			for (__u32 i = 0; i + BURST <= a->lookups; i += BURST) {
				xp_lpm6_lookup_bulk(t, (const __u8(*)[16])q + i, h, BURST);
				sum += h[0] + h[BURST - 1];
			}
			bulk[k] = (bench_now_ns() - t1) / a->lookups;
			if (dpdk)
				db[k] = lpm_dpdk_bulk6(dt, (const __u8(*)[16])q, a->lookups, &sum);
		}
		printf("lpm6 routes=%u root=%u load_ms=%.1f mem_mib=%.1f groups=%llu single_ns=%.2f "
		       "bulk_ns=%.2f",
		       n, root, ms, st.bytes / 1048576.0, (unsigned long long)st.groups_used,
		       bench_median(single, a->runs), bench_median(bulk, a->runs));
		if (dpdk)
			printf(" dpdk_load_ms=%.1f dpdk_bulk_ns=%.2f bulk_ratio=%.2f", dms,
			       bench_median(db, a->runs),
			       bench_median(db, a->runs) / bench_median(bulk, a->runs));
		printf(" (checksum %llu)\n", (unsigned long long)(sum & 0xffff));
		xp_lpm6_destroy(t);
	}
	if (dt)
		lpm_dpdk_free6(dt);
	free(p);
	free(q);
	free(dep);
	return rc;
}

static int quiet_log(enum xp_log_level level, const char *fmt, va_list ap)
{
	return level <= XP_LOG_ERR ? vfprintf(stderr, fmt, ap) : 0;
}

int bench_lpm(int argc, char **argv)
{
	struct lpm_args a = { .runs = 5,
			      .lookups = 1u << 22,
			      .changes = 2000,
			      .budget = 256,
			      .dist_mask = DIST_RANDOM | DIST_BGP,
			      .sync_mask = 3 };
	bool dpdk;
	__u32 *addr;
	__u64 s = 12345;
	int rc = bench_parse(&bench_lpm_cmd, argc, argv, &a);

	if (rc != CLI_RUN)
		return rc;
	if (a.netlink) {
		static const __u32 dflt[] = { 100000, 1000000 };
		struct lpm_nl_args na = {
			.routes = a.ncounts ? a.counts : dflt,
			.nroutes = a.ncounts ? a.ncounts : 2,
			.changes = a.changes,
			.budget = a.budget,
			.inplace = a.sync_mask & 1,
			.dbl = a.sync_mask & 2,
			.hp = hp_of(&a),
		};

		return lpm_bench_netlink(&na);
	}
	if (!a.ncounts) {
		a.counts[0] = 1000;
		a.counts[1] = 100000;
		a.counts[2] = 1000000;
		a.ncounts = 3;
	}
	/* The 4 KiB fallback is expected here: the figures say which pages were used. */
	if (a.pages == PAGES_AUTO)
		xp_set_log_fn(quiet_log);
	dpdk = !a.no_dpdk && lpm_dpdk_available() && !lpm_dpdk_init(2048ull << 20);
	printf("lpm loadavg=%s dpdk=%s lookups=%u runs=%u\n", bench_loadavg(),
	       dpdk	 ? "rte_lpm" :
	       a.no_dpdk ? "none (--no-dpdk)" :
			   "none (build with libdpdk-dev to compare)",
	       a.lookups, a.runs);
	if (a.ipv6) {
		for (__u32 i = 0; i < a.ncounts; i++)
			if (run6(&a, a.counts[i], dpdk))
				return 1;
		return 0;
	}
	addr = malloc((size_t)a.lookups * sizeof(*addr));
	if (!addr)
		return 1;
	for (__u32 i = 0; i < a.lookups; i++)
		addr[i] = (__u32)xs(&s);
	for (__u32 i = 0; i < a.ncounts; i++)
		for (int d = DIST_RANDOM; d <= DIST_BGP; d <<= 1)
			if ((a.dist_mask & (__u32)d) && run4(&a, d, a.counts[i], addr, dpdk)) {
				free(addr);
				return 1;
			}
	free(addr);
	return 0;
}
