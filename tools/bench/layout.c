// SPDX-License-Identifier: BSD-3-Clause
/*
 * xpile-bench layout: what the frame stride costs the packet-header touch.
 *
 * Each working set of N frames is walked the way a worker walks its RX ring: frame
 * after frame in ring order, round and round, touching the first 1 or 2 cache lines
 * after the headroom. The touch is a dependent load (the header line holds the
 * address of the next frame's header, as in a latency test), so nothing overlaps a
 * miss and the cost of each set or channel conflict shows in full. Both layouts
 * live in separate areas of the same page kind and are timed alternately in one
 * run; figures are medians.
 */
#include <errno.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "bench.h"
#include "benchutil.h"
#include "xpile/deal.h"
#include "xpile/pool.h"
#include "xpile/layout.h"
#include "xpile/mem.h"

struct layout_args {
	__u32 fmin, fmax, runs, frame_size, headroom, report_frames;
	__u32 lines_mask; /* bit 0: 1 line, bit 1: 2 lines */
	__u64 touches;
	struct xp_topology topo;
	enum { PAGES_AUTO, PAGES_HUGE, PAGES_4K } pages;
	enum { ACCESS_DEP, ACCESS_INDEP } access;
	enum { ORDER_SHUFFLED, ORDER_SEQ } order;
	__u32 only_mask; /* bit 0: interleaved, bit 1: aligned */
	bool report, plot_set, disperse;
	const char *plot;
};

#define CMD "xpile-bench layout"

static const struct cli_name lines_names[] = { CLI_NAME("1", 1),
					       CLI_NAME("2", 2),
					       CLI_NAME("1,2", 3),
					       { 0 } };
static const struct cli_name pages_names[] = { CLI_NAME("auto", PAGES_AUTO),
					       CLI_NAME("huge", PAGES_HUGE),
					       CLI_NAME("4k", PAGES_4K),
					       { 0 } };
static const struct cli_name access_names[] = { CLI_NAME("dep", ACCESS_DEP),
						CLI_NAME("indep", ACCESS_INDEP),
						{ 0 } };
static const struct cli_name order_names[] = { CLI_NAME("shuffled", ORDER_SHUFFLED),
					       CLI_NAME("seq", ORDER_SEQ),
					       { 0 } };
static const struct cli_name only_names[] = { CLI_NAME("interleaved", 1),
					      CLI_NAME("aligned", 2),
					      { 0 } };

#define OPT(...) CLI_OPT(struct layout_args, __VA_ARGS__)

/* The options layout and deal share: the runs and the UMEM being measured. */
#define OPT_RUNS(dflt)              \
	OPT("runs", NUM, runs, "N", \
	    "alternating runs per figure, median taken (default " dflt ")", .min = 1, .max = 1001)
#define OPT_UMEM                                                                                  \
	OPT("channels", NUM, topo.channels, "N",                                                  \
	    "memory channels for the stride (default 4, like DPDK -n)", .min = 1, .max = 64),     \
		OPT("ranks", NUM, topo.ranks, "N", "ranks per channel (default 1)", .min = 1,     \
		    .max = 16),                                                                   \
		OPT("frame-size", SIZE, frame_size, "N", "frame size, 2048..4096 (default 2048)", \
		    .min = 2048, .max = 4096),                                                    \
		OPT("headroom", NUM, headroom, "N",                                               \
		    "UMEM headroom; data starts at headroom + 256 (default 0)", .max = 3000)

static const struct cli_opt opts[] = {
	OPT("frames-min", NUM, fmin, "N", "smallest working set (default 64)", .min = 1,
	    .max = 1u << 22),
	OPT("frames-max", NUM, fmax, "N", "largest working set (default 65536)", .min = 1,
	    .max = 1u << 22),
	OPT("lines", ENUM, lines_mask, "LIST",
	    "header lines touched per frame: 1, 2 or 1,2 (default 1,2)", .names = lines_names),
	OPT_RUNS("7"),
	OPT("touches", NUM, touches, "N",
	    "frame visits per timed run, at least 4 passes (default 1048576)", .min = 1024,
	    .max = 1u << 30),
	OPT("access", ENUM, access, "dep|indep",
	    "dependent loads (pointer chase, default) or independent loads (out-of-order overlap, an RX burst's best case)",
	    .names = access_names),
	OPT("order", ENUM, order, "shuffled|seq",
	    "ring order: a fixed random permutation of the working set, as frames come back after cycling through per-core LIFO caches (default; no stride prefetch can help), or address order, as from a freshly filled ring",
	    .names = order_names),
	OPT("only", ENUM, only_mask, "interleaved|aligned",
	    "time one layout only (for valgrind --tool=cachegrind; the other's column prints 0)",
	    .names = only_names),
	OPT("pages", ENUM, pages, "auto|huge|4k",
	    "memory: 2 MiB hugetlb pages when reserved, else transparent hugepages (auto, default); huge fails without reserved hugepages; 4k uses plain 4 KiB pages (frames packed at the stride, copy-mode layout)",
	    .names = pages_names),
	OPT_UMEM,
	OPT("report", FLAG, report, NULL,
	    "print how header lines spread over channels (64 B, 256 B, 4 KiB interleave) and L1/L2 sets for both layouts, and plot it when gnuplot is installed; no timing",
	    .excl = 1),
	OPT("report-frames", NUM, report_frames, "N", "frames in the report (default 4096)",
	    .min = 1, .max = 1u << 22),
	OPT("disperse", FLAG, disperse, NULL,
	    "time xp_layout_disperse() instead (the M3 reorder of one fill-ring refill): ns per handle for bulks of 32, 64, 96, 128 and 256 random frames of a 4096-frame UMEM, unseeded and seeded, medians of --runs; no memory walk",
	    .excl = 1),
	OPT("plot", STR, plot, "PATH",
	    "PNG for --report (default build/layout-report.png, next to this binary)"),
	{ 0 },
};

BENCH_COMMAND(
	bench_layout_cmd, bench_layout, "layout", NULL,
	"header-line touch cost: interleaved vs aligned UMEM layout", opts,
	.description =
		"Measures the cost of touching packet headers in an interleaved UMEM (stride "
		"padded to an odd number of cache lines prime to channels x ranks) against the "
		"classic aligned one (2048/4096-byte stride). For each working set from "
		"--frames-min to --frames-max frames (powers of two) and each line count, "
		"prints\n"
		"  layout frames=N lines=L interleaved_ns=X aligned_ns=Y ratio=Y/X\n"
		"where X and Y are medians over --runs alternating runs of ns per frame visit. "
		"The refill round trip through the dealer is 'xpile-bench deal'.",
	.examples = "xpile-bench layout --frames-min 256 --frames-max 4096 --runs 9\n"
		    "xpile-bench layout --report --channels 8");

static const struct cli_opt deal_opts[] = { OPT_RUNS("7"), OPT_UMEM, { 0 } };

BENCH_COMMAND(
	bench_deal_cmd, bench_deal, "deal", NULL,
	"a refill's round trip: pile cache + disperse vs the dealer", deal_opts,
	.description =
		"Times a refill's round trip: get a bulk of 16, 64 or 256 frames of a 4096-frame "
		"UMEM (2048 in flight), return as many in random order, through a 256-frame pile "
		"cache with xp_layout_disperse() (the old refill), through the dealer "
		"(xpile/deal.h) and through a dealer with M3's seeded random pick (opts.seed, "
		"xpile run --m3-seed) in alternate runs; prints\n"
		"  deal bulk=N cache_disperse_ns=X deal_ns=Y ratio=Y/X deal_seeded_ns=Z\n"
		"       cache_even=A/B deal_even=C/D seeded_even=E/F\n"
		"ns per frame (get + put, harness taken out, medians of --runs) and how many "
		"refills held every channel within 1 of each other.",
	.examples = "xpile-bench deal --runs 9");

static int parse_args(const struct bench_cmd *c, int argc, char **argv, struct layout_args *a)
{
	int rc;

	*a = (struct layout_args){ .fmin = 64,
				   .fmax = 65536,
				   .runs = 7,
				   .frame_size = 2048,
				   .report_frames = 4096,
				   .lines_mask = 3,
				   .touches = 1u << 20,
				   .only_mask = 3 };
	rc = bench_parse(c, argc, argv, a);
	if (rc != CLI_RUN)
		return rc;
	a->plot_set = a->plot != NULL;
	if (a->fmin > a->fmax)
		return cli_usage_error(&bench_prog, &c->cli,
				       "--frames-min %u exceeds --frames-max %u", a->fmin, a->fmax);
	return CLI_RUN;
}

static int make_layout(const struct layout_args *a, enum xp_layout_kind kind, __u32 nframes,
		       __u32 page_size, struct xp_layout *l)
{
	struct xp_layout_opts o = {
		.sz = sizeof(o),
		/* Aligned chunks are powers of two: the next one up holds the frame. */
		.frame_size = kind != XP_LAYOUT_ALIGNED ? a->frame_size :
			      a->frame_size > 2048	? 4096 :
							  2048,
		.headroom = a->headroom,
		.nframes = nframes,
		.kind = kind,
		.topo = a->topo,
		.page_size = page_size,
		/* A 4 KiB-page zero-copy layout has one frame per page: not what is measured. */
		.flags = page_size == XP_PAGE_4K ? XP_LAYOUT_F_PACK : 0,
	};

	return xp_layout_compute(&o, l);
}

/* One area per layout, from the same kind of pages. */
struct area {
	void *base;
	__u64 size;
	struct xp_mem mem; /* hugetlb case */
};

static int area_alloc(const struct layout_args *a, __u64 size, struct area *ar, __u32 *page_size,
		      const char **kind)
{
	struct xp_mem_opts mo = { .sz = sizeof(mo), .size = size, .hugepages = XP_HUGE_REQUIRE };
	void *p;

	memset(ar, 0, sizeof(*ar));
	if (a->pages != PAGES_4K) {
		char why[256]; /* auto: the 4 KiB fallback is expected, said by the figures */
		int err;

		if (a->pages == PAGES_AUTO) {
			mo.errbuf = why;
			mo.errbuf_sz = sizeof(why);
		}
		err = xp_mem_alloc(&mo, &ar->mem);
		if (!err) {
			ar->base = ar->mem.base;
			ar->size = ar->mem.size;
			*page_size = XP_PAGE_2M;
			*kind = "hugetlb-2M";
			return 0;
		}
		if (a->pages == PAGES_HUGE)
			return err;
	}
	/* Over-map so a 2 MiB-aligned window exists for transparent hugepages. */
	ar->size = ((size + XP_PAGE_2M - 1) & ~(__u64)(XP_PAGE_2M - 1)) + XP_PAGE_2M;
	p = mmap(NULL, ar->size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		return -errno;
	ar->mem.base = p; /* what to unmap */
	ar->base = (void *)(((uintptr_t)p + XP_PAGE_2M - 1) & ~(uintptr_t)(XP_PAGE_2M - 1));
	if (a->pages == PAGES_AUTO && !madvise(ar->base, size, MADV_HUGEPAGE)) {
		*page_size = XP_PAGE_2M;
		*kind = "thp-2M";
	} else {
		*page_size = XP_PAGE_4K;
		*kind = "4K";
	}
	memset(ar->base, 0, size);
	return 0;
}

static void area_free(struct area *ar)
{
	if (ar->mem.page_size)
		xp_mem_free(&ar->mem);
	else if (ar->mem.base)
		munmap(ar->mem.base, ar->size);
}

/* Ring order: the frame at ring slot k links to slot k+1's, the last to the first. */
static char *build_chain(char *base, const struct xp_layout *l, const __u32 *ring, __u32 n,
			 char **hdr)
{
	for (__u32 k = 0; k < n; k++)
		hdr[k] = base + xp_layout_frame(l, ring[k]) + l->data_off;
	for (__u32 k = 0; k < n; k++) {
		*(char **)hdr[k] = hdr[(k + 1) % n];
		*(uintptr_t *)(hdr[k] + XP_CACHE_LINE) = 0;
	}
	return hdr[0];
}

/* The same ring order for both layouts: frame indices, shuffled or not. */
static void make_ring(const struct layout_args *a, __u32 *ring, __u32 n)
{
	__u64 x = 0x2545f4914f6cdd1dull;

	for (__u32 i = 0; i < n; i++)
		ring[i] = i;
	if (a->order == ORDER_SEQ)
		return;
	for (__u32 i = n; i-- > 1;) { /* Fisher-Yates; n == 0 never wraps */
		__u32 j, t;

		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		j = (__u32)(x % (i + 1));
		t = ring[i];
		ring[i] = ring[j];
		ring[j] = t;
	}
}

static __attribute__((noinline)) uintptr_t walk_dep1(char *p, __u64 n)
{
	while (n--)
		p = *(char *volatile *)p;
	return (uintptr_t)p;
}

/* Both lines are loaded before the next frame's address is known, as a parser would. */
static __attribute__((noinline)) uintptr_t walk_dep2(char *p, __u64 n)
{
	while (n--) {
		char *next = *(char *volatile *)p;
		uintptr_t z = *(volatile uintptr_t *)(p + XP_CACHE_LINE);

		p = next + z;
	}
	return (uintptr_t)p;
}

/* Independent loads: addresses come from a precomputed ring of header pointers. */
static __attribute__((noinline)) uintptr_t walk_indep(char *const *hdr, __u32 n, __u64 visits,
						      int lines)
{
	uintptr_t sum = 0;
	__u32 i = 0;

	while (visits--) {
		sum += *(volatile uintptr_t *)hdr[i];
		if (lines == 2)
			sum += *(volatile uintptr_t *)(hdr[i] + XP_CACHE_LINE);
		if (++i == n)
			i = 0;
	}
	return sum;
}

static volatile uintptr_t sink;

static double time_one(const struct layout_args *a, char *base, const struct xp_layout *l,
		       const __u32 *ring, __u32 n, int lines, char **hdr)
{
	__u64 visits = a->touches > 4ull * n ? a->touches : 4ull * n;
	char *start;
	double t0;

	if (!n) /* no frame, no chain: hdr[0] would be the calloc's NULL */
		return 0.0;
	start = build_chain(base, l, ring, n, hdr);
	/* Warm: two passes put the working set where it will stay. */
	if (a->access == ACCESS_DEP) {
		sink = lines == 1 ? walk_dep1(start, 2ull * n) : walk_dep2(start, 2ull * n);
		t0 = bench_now_ns();
		sink = lines == 1 ? walk_dep1(start, visits) : walk_dep2(start, visits);
	} else {
		sink = walk_indep(hdr, n, 2ull * n, lines);
		t0 = bench_now_ns();
		sink = walk_indep(hdr, n, visits, lines);
	}
	return (bench_now_ns() - t0) / (double)visits;
}

static int run_timing(const struct layout_args *a)
{
	struct area ai, aa;
	struct xp_layout li, la;
	__u32 page_size = XP_PAGE_2M, ps2 = XP_PAGE_2M;
	const char *kind = "?", *kind2 = "?";
	double *ti = calloc(a->runs, sizeof(double)), *ta = calloc(a->runs, sizeof(double));
	char **hdr = calloc(a->fmax, sizeof(char *));
	__u32 *ring = calloc(a->fmax, sizeof(__u32));
	int err;

	if (!ti || !ta || !hdr || !ring) {
		fprintf(stderr, "xpile-bench layout: out of memory\n");
		free(ti);
		free(ta);
		free(hdr);
		free(ring);
		return 1;
	}
	/* Size with the page kind hoped for; 4 KiB-page packing is never larger. */
	if (make_layout(a, XP_LAYOUT_INTERLEAVED, a->fmax, XP_PAGE_2M, &li) ||
	    make_layout(a, XP_LAYOUT_ALIGNED, a->fmax, XP_PAGE_2M, &la)) {
		fprintf(stderr, "xpile-bench layout: invalid layout options (see above)\n");
		free(ti);
		free(ta);
		free(hdr);
		free(ring);
		return 1;
	}
	err = area_alloc(a, li.area_size, &ai, &page_size, &kind);
	if (!err) {
		err = area_alloc(a, la.area_size, &aa, &ps2, &kind2);
		if (err)
			area_free(&ai);
	}
	if (err) {
		fprintf(stderr, "xpile-bench layout: cannot map the frame areas: %s%s\n",
			strerror(-err),
			a->pages == PAGES_HUGE ? " (reserve hugepages or use --pages auto)" : "");
		free(ti);
		free(ta);
		free(hdr);
		free(ring);
		return 1;
	}
	if (page_size != ps2)
		page_size = XP_PAGE_4K;
	make_layout(a, XP_LAYOUT_INTERLEAVED, a->fmax, page_size, &li);
	make_layout(a, XP_LAYOUT_ALIGNED, a->fmax, page_size, &la);
	printf("# layout: interleaved stride %u B (%u lines), aligned stride %u B, data at +%u, "
	       "%u channels x %u ranks, pages %s, access %s, order %s, runs %u, load %s\n",
	       li.stride, li.stride / XP_CACHE_LINE, la.stride, li.data_off, li.topo.channels,
	       li.topo.ranks, kind, a->access == ACCESS_DEP ? "dependent" : "independent",
	       a->order == ORDER_SEQ ? "seq" : "shuffled", a->runs, bench_loadavg());
	__u32 target_n = 0, target_met = 0;

	for (__u64 n = a->fmin; n <= a->fmax; n *= 2) {
		for (int lines = 1; lines <= 2; lines++) {
			double mi, ma;

			if (!(a->lines_mask & (1u << (lines - 1))))
				continue;
			make_ring(a, ring, (__u32)n);
			for (__u32 r = 0; r < a->runs; r++) {
				/* A/B and B/A in turn so drift hits both alike. */
				ti[r] = ta[r] = 0;
				if ((r & 1) && (a->only_mask & 2))
					ta[r] = time_one(a, aa.base, &la, ring, (__u32)n, lines,
							 hdr);
				if (a->only_mask & 1)
					ti[r] = time_one(a, ai.base, &li, ring, (__u32)n, lines,
							 hdr);
				if (!(r & 1) && (a->only_mask & 2))
					ta[r] = time_one(a, aa.base, &la, ring, (__u32)n, lines,
							 hdr);
			}
			mi = bench_median(ti, a->runs);
			ma = bench_median(ta, a->runs);
			printf("layout frames=%llu lines=%d interleaved_ns=%.2f aligned_ns=%.2f "
			       "ratio=%.2f\n",
			       (unsigned long long)n, lines, mi, ma, mi > 0 ? ma / mi : 0);
			fflush(stdout);
			if (n >= 256 && n <= 4096 && a->only_mask == 3) {
				target_n++;
				target_met += ma >= 1.5 * mi;
			}
		}
		if (n > UINT32_MAX / 2)
			break;
	}
	if (target_n)
		printf("# target interleaved >= 1.5x aligned at 256..4096 frames: met in %u of %u\n",
		       target_met, target_n);
	area_free(&ai);
	area_free(&aa);
	free(ti);
	free(ta);
	free(hdr);
	free(ring);
	return 0;
}

static const char *const dim_names[] = { "channel @64 B", "channel @256 B", "channel @4 KiB",
					 "L1 set", "L2 set" };

static int plot(const struct layout_args *a, const struct xp_layout *li, const struct xp_layout *la,
		__u32 **bi, __u32 **ba)
{
	char data[] = "/tmp/xpile-layout-XXXXXX";
	char path[PATH_MAX];
	FILE *f, *gp;
	int fd, rc;

	if (system("command -v gnuplot >/dev/null 2>&1")) {
		printf("# gnuplot not installed: no plot (XPILE_WITH_PLOT=1 "
		       "tools/setup/install-deps.sh installs it)\n");
		return 0;
	}
	if (a->plot_set) {
		snprintf(path, sizeof(path), "%s", a->plot);
	} else {
		ssize_t n = readlink("/proc/self/exe", path, sizeof(path) - 32);

		if (n <= 0)
			return -1;
		path[n] = 0;
		snprintf(strrchr(path, '/') ? strrchr(path, '/') + 1 : path, 32,
			 "layout-report.png");
	}
	fd = mkstemp(data);
	if (fd < 0 || !(f = fdopen(fd, "w"))) {
		if (fd >= 0)
			close(fd);
		return -1;
	}
	for (int w = XP_SPREAD_CH64; w <= XP_SPREAD_L2; w++) {
		for (__u32 b = 0; b < xp_layout_spread_bins(li, w); b++)
			fprintf(f, "%u %u %u\n", b, bi[w][b], ba[w][b]);
		fprintf(f, "\n\n");
	}
	if (fclose(f)) { /* a short data file would plot wrong, not fail */
		unlink(data);
		return -1;
	}
	gp = popen("gnuplot", "w");
	if (!gp) {
		unlink(data);
		return -1;
	}
	/* Five panels on a 2-2-1 grid, the 2048 L2 sets across the whole width; each key
	 * outside its plot, never over a bar; ticks on whole bins. */
	fprintf(gp,
		"set terminal pngcairo size 1400,1000 noenhanced\n"
		"set output '%s'\nset multiplot title "
		"'Header lines of %u frames: interleaved (stride %u B) vs aligned (%u B), "
		"%u channels x %u ranks'\n"
		"set style fill solid 0.6 border\nset key outside right top vertical\n"
		"set yrange [0:*]\nset ylabel 'header lines'\nunset mxtics\n",
		path, li->nframes, li->stride, la->stride, li->topo.channels, li->topo.ranks);
	for (int w = XP_SPREAD_CH64; w <= XP_SPREAD_L2; w++) {
		__u32 nb = xp_layout_spread_bins(li, w);
		bool wide = w == XP_SPREAD_L2;
		int row = (w - XP_SPREAD_CH64) / 2, col = (w - XP_SPREAD_CH64) % 2;

		fprintf(gp,
			"set size %.2f,0.30\nset origin %.2f,%.2f\nset title '%s'\n"
			"set xlabel '%s'\nset xrange [-0.5:%u.5]\nset xtics %u\n",
			wide ? 1.0 : 0.5, wide ? 0.0 : 0.5 * col, 0.63 - 0.31 * row, dim_names[w],
			w <= XP_SPREAD_CH4K ? "channel" : "set", nb - 1,
			nb <= 16 ? 1 :
			nb <= 64 ? 8 :
				   128);
		if (nb <= 64) /* side by side: aligned left of each bin, interleaved right */
			fprintf(gp,
				"set boxwidth 0.4\n"
				"plot '%s' index %d using ($1-0.2):3 with boxes title 'aligned', "
				"'' index %d using ($1+0.2):2 with boxes title 'interleaved'\n",
				data, w, w);
		else /* too many bins for boxes: spikes and a line */
			fprintf(gp,
				"plot '%s' index %d using 1:3 with impulses lw 1 title 'aligned', "
				"'' index %d using 1:2 with steps lw 2 title 'interleaved'\n",
				data, w, w);
	}
	fprintf(gp, "unset multiplot\n");
	rc = pclose(gp);
	unlink(data);
	if (rc) {
		fprintf(stderr, "xpile-bench layout: gnuplot failed (exit %d)\n", rc);
		return -1;
	}
	printf("# plot: %s\n", path);
	return 0;
}

static int run_report(const struct layout_args *a)
{
	static const __u32 pages[] = { XP_PAGE_2M, XP_PAGE_4K };
	struct xp_layout li, la, l4;
	__u32 *bi[5] = { 0 }, *ba[5] = { 0 };
	int rc = 1;

	if (make_layout(a, XP_LAYOUT_INTERLEAVED, a->report_frames, XP_PAGE_2M, &li) ||
	    make_layout(a, XP_LAYOUT_ALIGNED, a->report_frames, XP_PAGE_2M, &la)) {
		fprintf(stderr, "xpile-bench layout: invalid layout options (see above)\n");
		return 1;
	}
	xp_layout_report(&li, stdout);
	xp_layout_report(&la, stdout);
	printf("frames per MiB:");
	for (unsigned p = 0; p < 2; p++) {
		struct xp_layout_opts o = { .sz = sizeof(o),
					    .frame_size = li.frame_size,
					    .nframes = 65536,
					    .topo = a->topo,
					    .page_size = pages[p] };

		if (xp_layout_compute(&o, &l4))
			return 1;
		printf(" interleaved/%s-pages=%.1f", p ? "4K" : "2M",
		       65536.0 * (1 << 20) / l4.area_size);
	}
	printf(" aligned=%.1f\n", (double)(1 << 20) / la.stride);
	for (int w = XP_SPREAD_CH64; w <= XP_SPREAD_L2; w++) {
		bi[w] = calloc(xp_layout_spread_bins(&li, w), sizeof(__u32));
		ba[w] = calloc(xp_layout_spread_bins(&la, w), sizeof(__u32));
		if (!bi[w] || !ba[w])
			goto out;
		xp_layout_spread(&li, w, 0, bi[w]);
		xp_layout_spread(&la, w, 0, ba[w]);
	}
	rc = plot(a, &li, &la, bi, ba) ? 1 : 0;
out:
	for (int w = 0; w < 5; w++) {
		free(bi[w]);
		free(ba[w]);
	}
	return rc;
}

/*
 * Cost of the M3 refill reorder: each timed pass copies 64 Ki handles' worth of
 * prepared random bulks into a scratch array and disperses them; a copy-only pass
 * is timed alternately and taken out.
 */
static int run_disperse(const struct layout_args *a)
{
	enum { POOL = 4096, PASS = 1 << 16 };
	static const __u32 bulks[] = { 32, 64, 96, 128, 256 };
	static __u64 src[PASS], scratch[XP_DISPERSE_MAX];
	struct xp_layout l;
	double *td = calloc(a->runs, sizeof(double)), *tc = calloc(a->runs, sizeof(double));
	__u64 s = 88172645463325252ull, acc = 0;

	if (!td || !tc || make_layout(a, XP_LAYOUT_INTERLEAVED, POOL, XP_PAGE_2M, &l)) {
		free(td);
		free(tc);
		return 1;
	}
	for (__u32 i = 0; i < PASS; i++) {
		s ^= s << 13, s ^= s >> 7, s ^= s << 17;
		src[i] = xp_layout_frame(&l, (__u32)(s % POOL));
	}
	for (unsigned b = 0; b < sizeof(bulks) / sizeof(bulks[0]); b++)
		for (int seeded = 0; seeded < 2; seeded++) {
			__u32 n = bulks[b];
			__u64 rng = 1;

			for (__u32 r = 0; r < a->runs; r++) {
				for (int pass = 0; pass < 2; pass++) {
					double t0 = bench_now_ns();

					for (__u32 o = 0; o + n <= PASS; o += n) {
						memcpy(scratch, src + o, n * sizeof(*scratch));
						if (pass)
							xp_layout_disperse(&l, scratch, n,
									   seeded ? &rng : NULL);
						__asm__ volatile("" : : "r"(scratch) : "memory");
						acc += scratch[0];
					}
					(pass ? td : tc)[r] = (bench_now_ns() - t0) / PASS;
				}
			}
			printf("disperse bulk=%u seeded=%d ns_per_handle=%.2f copy_ns=%.2f\n", n,
			       seeded, bench_median(td, a->runs) - bench_median(tc, a->runs),
			       bench_median(tc, a->runs));
		}
	free(td);
	free(tc);
	return acc == 42; /* keeps the copies */
}

/*
 * A refill's allocator round trip, the old way (cache get + disperse, frees to the
 * cache) against the dealer, with the same in-flight set and random returns: each
 * step gets a bulk, then returns as many frames picked at random among those in
 * flight. A pass with a plain array for allocator is the harness, taken out.
 */
enum { DEAL_POOL = 4096, DEAL_FLIGHT = 2048, DEAL_STEPS = 4096 };
enum deal_path { PATH_NONE, PATH_CACHE, PATH_DEAL, PATH_SEEDED, NPATHS };

struct deal_rig {
	struct xp_layout l;
	struct xp_pool *p;
	struct xp_cache *c;
	struct xp_deal *d, *ds; /* ds: with M3's seeded random pick */
	__u64 flight[DEAL_POOL], freel[DEAL_POOL], buf[256];
	__u32 nflight, nfree, *picks;
};

/* The dealer @path goes through, or NULL for the paths without one. */
static struct xp_deal *rig_dealer(const struct deal_rig *r, enum deal_path path)
{
	return path == PATH_DEAL ? r->d : path == PATH_SEEDED ? r->ds : NULL;
}

static int rig_get(struct deal_rig *r, enum deal_path path, __u32 n)
{
	if (rig_dealer(r, path))
		return xp_deal_get(rig_dealer(r, path), r->buf, n);
	if (path == PATH_CACHE) {
		if (xp_cache_get(r->c, r->buf, n))
			return -ENOBUFS;
		xp_layout_disperse(&r->l, r->buf, n, NULL);
		return 0;
	}
	if (r->nfree < n)
		return -ENOBUFS;
	r->nfree -= n;
	memcpy(r->buf, r->freel + r->nfree, n * sizeof(*r->buf));
	return 0;
}

static void rig_put(struct deal_rig *r, enum deal_path path, __u32 n)
{
	if (rig_dealer(r, path))
		xp_deal_put(rig_dealer(r, path), r->buf, n);
	else if (path == PATH_CACHE)
		xp_cache_put(r->c, r->buf, n);
	else {
		memcpy(r->freel + r->nfree, r->buf, n * sizeof(*r->buf));
		r->nfree += n;
	}
}

/* DEAL_STEPS steps of bulk @n; counts refills with channels within 1 if @even. */
static int rig_pass(struct deal_rig *r, enum deal_path path, __u32 n, __u32 *even)
{
	__u32 pick = 0;

	for (__u32 st = 0; st < DEAL_STEPS; st++) {
		if (rig_get(r, path, n))
			return -1;
		if (even) {
			__u32 bins[XP_DEAL_CHANNELS_MAX] = { 0 }, mn = ~0u, mx = 0;

			for (__u32 i = 0; i < n; i++)
				bins[xp_deal_channel(r->d, r->buf[i])]++;
			for (__u32 k = 0; k < r->d->npresent; k++) {
				__u32 b = bins[r->d->order[k]];

				mn = b < mn ? b : mn;
				mx = b > mx ? b : mx;
			}
			*even += mx - mn <= 1;
		}
		memcpy(r->flight + r->nflight, r->buf, n * sizeof(*r->buf));
		r->nflight += n;
		for (__u32 i = 0; i < n; i++) {
			__u32 j = r->picks[pick++ & (DEAL_STEPS * 4 - 1)] % r->nflight;

			r->buf[i] = r->flight[j];
			r->flight[j] = r->flight[--r->nflight];
		}
		rig_put(r, path, n);
	}
	return 0;
}

/* Starts a path with DEAL_FLIGHT frames in flight (and its stock warmed up). */
static int rig_start(struct deal_rig *r, enum deal_path path, __u32 n)
{
	r->nflight = 0;
	for (__u32 got = 0; got < DEAL_FLIGHT; got += 32) {
		if (rig_get(r, path, 32))
			return -1;
		memcpy(r->flight + r->nflight, r->buf, 32 * sizeof(*r->buf));
		r->nflight += 32;
	}
	return rig_pass(r, path, n, NULL);
}

static void rig_stop(struct deal_rig *r, enum deal_path path)
{
	for (__u32 i = 0; i < r->nflight; i += 32) {
		memcpy(r->buf, r->flight + i, 32 * sizeof(*r->buf));
		rig_put(r, path, 32);
	}
	r->nflight = 0;
	if (rig_dealer(r, path))
		xp_deal_flush(rig_dealer(r, path));
}

static int run_deal(const struct layout_args *a)
{
	static const __u32 bulks[] = { 16, 64, 256 };
	static struct deal_rig r;
	struct xp_pool_opts po = { .sz = sizeof(po) };
	double *t[NPATHS];
	__u64 s = 88172645463325252ull;
	int rc = 1;

	r.picks = calloc((size_t)DEAL_STEPS * 4, sizeof(*r.picks));
	for (int k = 0; k < NPATHS; k++)
		t[k] = calloc(a->runs, sizeof(double));
	if (!r.picks || !t[0] || !t[1] || !t[2] || !t[3] ||
	    make_layout(a, XP_LAYOUT_INTERLEAVED, DEAL_POOL, XP_PAGE_2M, &r.l) ||
	    xp_layout_fill_order(&r.l, 1, 0, r.freel) ||
	    xp_pool_create(r.freel, DEAL_POOL, &po, &r.p) || xp_cache_create(r.p, 256, &r.c))
		goto out;
	r.nfree = DEAL_POOL;
	for (__u32 i = 0; i < DEAL_STEPS * 4; i++) {
		s ^= s << 13, s ^= s >> 7, s ^= s << 17;
		r.picks[i] = (__u32)(s >> 32);
	}
	for (unsigned b = 0; b < sizeof(bulks) / sizeof(bulks[0]); b++) {
		struct xp_deal_opts dop = { .sz = sizeof(dop), .max_get = bulks[b] };
		__u32 even[NPATHS] = { 0 };

		if (xp_deal_create(&r.l, r.c, &dop, &r.d))
			goto out;
		dop.seed = 7;
		if (xp_deal_create(&r.l, r.c, &dop, &r.ds))
			goto out;
		for (__u32 run = 0; run < a->runs; run++)
			for (int path = PATH_NONE; path < NPATHS; path++) {
				double t0;

				if (rig_start(&r, path, bulks[b]))
					goto out;
				t0 = bench_now_ns();
				if (rig_pass(&r, path, bulks[b], NULL))
					goto out;
				t[path][run] =
					(bench_now_ns() - t0) / ((double)DEAL_STEPS * bulks[b]);
				if (!run && rig_pass(&r, path, bulks[b], &even[path]))
					goto out;
				rig_stop(&r, path);
			}
		xp_deal_destroy(r.d);
		xp_deal_destroy(r.ds);
		r.d = r.ds = NULL;
		{
			double h = bench_median(t[PATH_NONE], a->runs);
			double x = bench_median(t[PATH_CACHE], a->runs) - h;
			double y = bench_median(t[PATH_DEAL], a->runs) - h;
			double z = bench_median(t[PATH_SEEDED], a->runs) - h;

			printf("deal bulk=%u cache_disperse_ns=%.2f deal_ns=%.2f ratio=%.2f "
			       "deal_seeded_ns=%.2f cache_even=%u/%u deal_even=%u/%u "
			       "seeded_even=%u/%u\n",
			       bulks[b], x, y, y / x, z, even[PATH_CACHE], DEAL_STEPS,
			       even[PATH_DEAL], DEAL_STEPS, even[PATH_SEEDED], DEAL_STEPS);
		}
	}
	rc = 0;
out:
	if (rc)
		fprintf(stderr, "xpile-bench deal: set-up failed (see above)\n");
	xp_deal_destroy(r.d);
	xp_deal_destroy(r.ds);
	xp_cache_destroy(r.c);
	xp_pool_destroy(r.p);
	free(r.picks);
	for (int k = 0; k < NPATHS; k++)
		free(t[k]);
	return rc;
}

int bench_layout(int argc, char **argv)
{
	struct layout_args a;
	int rc = parse_args(&bench_layout_cmd, argc, argv, &a);

	if (rc != CLI_RUN)
		return rc;
	if (a.disperse)
		return run_disperse(&a);
	return a.report ? run_report(&a) : run_timing(&a);
}

int bench_deal(int argc, char **argv)
{
	struct layout_args a;
	int rc = parse_args(&bench_deal_cmd, argc, argv, &a);

	return rc != CLI_RUN ? rc : run_deal(&a);
}
