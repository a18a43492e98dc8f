// SPDX-License-Identifier: BSD-3-Clause
/*
 * xpile-bench region: lazy iBuddy against the classic eager buddy on a node
 * agent's mixed workload (mostly single chunks, some multi-chunk UMEMs), several
 * threads at once. Only offsets are handed out, so the figures are the
 * allocators' own cost. All configurations run alternately in one process with the
 * same random sequence; figures are medians.
 */
#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench.h"
#include "benchutil.h"
#include "xpile/region.h"

struct region_args {
	__u32 threads, runs, single_pct, max_chunks, spaces, chunks, live;
	__u64 ops;
	__u32 umems; /* non-zero: the memory comparison of region_umems.c instead */
	enum xp_hugepages hugepages;
	__u64 umem_size;
};

static const struct cli_name huge_names[] = {
	CLI_NAME("never", XP_HUGE_NEVER),
	CLI_NAME("require", XP_HUGE_REQUIRE),
	{ 0 },
};

#define OPT(...) CLI_OPT(struct region_args, __VA_ARGS__)

static const struct cli_opt opts[] = {
	OPT("threads", NUM, threads, "N", "threads (default 2)", .min = 1, .max = 64),
	OPT("ops", NUM, ops, "N", "operations per thread per run (default 1000000)", .min = 1000,
	    .max = 1u << 30),
	OPT("runs", NUM, runs, "N", "runs per configuration, median taken (default 11)", .min = 1,
	    .max = 101),
	OPT("single", NUM, single_pct, "PCT", "share of single-chunk allocations (default 90)",
	    .max = 100),
	OPT("max-chunks", NUM, max_chunks, "N", "largest multi-chunk request (default 16)",
	    .min = 2, .max = 1u << 20),
	OPT("spaces", NUM, spaces, "N", "buddy spaces for the lazy iBuddy (default: --threads)",
	    .min = 1, .max = 1024),
	OPT("chunks", NUM, chunks, "N", "chunks per space, a power of two (default 4096)", .min = 2,
	    .max = 1u << 24, .flags = CLI_F_POW2),
	OPT("live", NUM, live, "N", "allocations each thread keeps (default 256)", .min = 1,
	    .max = 1u << 20),
	OPT("umems", NUM, umems, "N",
	    "instead: start-up time and memory of N registered UMEMs carved from one arena against one mapping each",
	    .min = 1, .max = 256),
	OPT("umem-size", SIZE, umem_size, "BYTES", "--umems: bytes per UMEM (default 16M)",
	    .min = 4096, .max = 1ull << 34, .multiple = 4096),
	OPT("hugepages", ENUM, hugepages, "WHEN",
	    "--umems: never (default, 4 KiB pages) | require (2 MiB pages, reserved beforehand)",
	    .names = huge_names),
	{ 0 },
};

BENCH_COMMAND(
	bench_region_cmd, bench_region, "region", NULL,
	"lazy iBuddy vs eager buddy region allocator", opts,
	.description =
		"Times allocation and free of arena chunks with the lazy iBuddy (one buddy space "
		"per thread, singles O(1), coalescing deferred) against the classic eager buddy "
		"with one lock (and, to separate the two effects, the eager buddy with the same "
		"spaces). Each thread keeps about --live allocations, freeing a random one or "
		"allocating (--single % single chunks, else 2..--max-chunks). Prints\n"
		"  region threads=T single=P lazy_ns=X eager_ns=Y eager_spaces_ns=Z ratio=Y/X less=%\n"
		"with ns of thread CPU time per operation (allocation or free), medians of --runs "
		"alternating runs.\n"
		"With --umems N it compares memory instead: N UMEMs of --umem-size carved from one "
		"memfd arena (as the engine does) against N mappings of their own, each "
		"registered with XDP_UMEM_REG, and prints\n"
		"  region umems=N ... arena_us=X mappings_us=Y arena_rss= mappings_rss= arena_backed= "
		"mappings_backed= arena_vsz= mappings_vsz= arena_maps= mappings_maps= ...\n"
		"(start-up in microseconds, medians; memory gained by the process, in bytes).",
	.examples = "xpile-bench region --threads 2 --runs 5\n"
		    "xpile-bench region --umems 16 --runs 5");

static int parse_args(int argc, char **argv, struct region_args *a)
{
	int rc;

	*a = (struct region_args){ .threads = 2,
				   .runs = 11,
				   .single_pct = 90,
				   .max_chunks = 16,
				   .chunks = 4096,
				   .live = 256,
				   .ops = 1000000,
				   .hugepages = XP_HUGE_NEVER,
				   .umem_size = 16u << 20 };
	rc = bench_parse(&bench_region_cmd, argc, argv, a);
	if (rc != CLI_RUN)
		return rc;
	if (!a->spaces)
		a->spaces = a->threads;
	if (a->max_chunks > a->chunks)
		return cli_usage_error(&bench_prog, &bench_region_cmd.cli,
				       "--max-chunks %u exceeds a space (%u chunks)", a->max_chunks,
				       a->chunks);
	return CLI_RUN;
}

struct slot {
	__u64 off;
	__u32 n;
};

struct thr {
	pthread_t tid;
	const struct region_args *a;
	struct xp_region *r;
	pthread_barrier_t *start;
	__u32 id;
	double ns;
	__u64 ops, refused;
	struct slot *live;
};

/*
 * The thread's own CPU time: time other processes take from this core does not
 * count, time spent spinning or yielding on a contended lock does.
 */
static double thread_cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return ts.tv_sec * 1e9 + ts.tv_nsec;
}

static void *thr_run(void *arg)
{
	struct thr *t = arg;
	const struct region_args *a = t->a;
	__u64 x = 0x9e3779b97f4a7c15ull * (t->id + 1), refused = 0;
	__u32 nlive = 0;
	double t0;

	pthread_barrier_wait(t->start);
	t0 = thread_cpu_ns();
	for (__u64 op = 0; op < a->ops; op++) {
		__u32 roll;

		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		roll = (__u32)(x >> 32);
		/* Hover around --live: free more often above it, allocate below. */
		if (nlive &&
		    (nlive >= 2 * a->live || (roll & 1023) < (nlive >= a->live ? 600u : 400u))) {
			__u32 k = (__u32)(x % nlive);

			if (t->r)
				xp_region_free(t->r, t->live[k].off, t->live[k].n);
			t->live[k] = t->live[--nlive];
		} else {
			__u32 n = (roll >> 10) % 100 < a->single_pct ?
					  1 :
					  2 + (__u32)((x >> 8) % (a->max_chunks - 1));
			__u64 off = op;

			/* No region: the loop's own cost, the baseline. */
			if (t->r && xp_region_alloc(t->r, n, t->id, &off)) {
				refused++;
				continue;
			}
			t->live[nlive].off = off;
			t->live[nlive++].n = n;
		}
	}
	t->ns = (thread_cpu_ns() - t0) / (double)a->ops;
	while (nlive && t->r) {
		nlive--;
		xp_region_free(t->r, t->live[nlive].off, t->live[nlive].n);
	}
	t->refused = refused;
	return NULL;
}

/* One run of one configuration: mean over threads of ns per operation. */
static int run_one(const struct region_args *a, enum xp_region_algo algo, __u32 spaces, bool null,
		   double *ns, __u64 *refused)
{
	struct xp_region_opts o = {
		.sz = sizeof(o), .chunk = 2u << 20, .spaces = spaces, .algo = algo
	};
	struct xp_region *r = NULL;
	struct thr *t = calloc(a->threads, sizeof(*t));
	pthread_barrier_t start;
	int err;

	/* The same total arena whatever the space count. */
	o.size = (__u64)a->chunks * a->spaces * o.chunk;
	if (!t)
		return -ENOMEM;
	err = null ? 0 : xp_region_create(&o, &r);
	if (err) {
		free(t);
		return err;
	}
	pthread_barrier_init(&start, NULL, a->threads);
	*ns = 0;
	*refused = 0;
	for (__u32 i = 0; i < a->threads; i++) {
		t[i] = (struct thr){ .a = a, .r = r, .start = &start, .id = i };
		t[i].live = calloc(2 * a->live + 1, sizeof(struct slot));
		if (!t[i].live || pthread_create(&t[i].tid, NULL, thr_run, &t[i])) {
			fprintf(stderr, "xpile-bench region: cannot start thread %u\n", i);
			exit(1);
		}
	}
	for (__u32 i = 0; i < a->threads; i++) {
		pthread_join(t[i].tid, NULL);
		*ns += t[i].ns / a->threads;
		*refused += t[i].refused;
		free(t[i].live);
	}
	pthread_barrier_destroy(&start);
	xp_region_destroy(r);
	free(t);
	return 0;
}

int bench_region(int argc, char **argv)
{
	struct region_args a;
	double *v[4];
	__u64 refused[4] = { 0 };
	static const struct {
		enum xp_region_algo algo;
		bool one_space, null;
	} cfg[4] = { { XP_REGION_LAZY, 0, 0 },
		     { XP_REGION_EAGER, 1, 0 },
		     { XP_REGION_EAGER, 0, 0 },
		     { XP_REGION_LAZY, 0, 1 } };
	int rc = parse_args(argc, argv, &a);

	if (rc != CLI_RUN)
		return rc;
	if (a.umems)
		return bench_region_umems(a.umems, a.umem_size, a.runs, a.hugepages);
	for (int c = 0; c < 4; c++)
		v[c] = calloc(a.runs, sizeof(double));
	if (!v[0] || !v[1] || !v[2] || !v[3]) {
		fprintf(stderr, "xpile-bench region: out of memory\n");
		return 1;
	}
	printf("# region: %u threads, %llu ops each, %u%% single chunks, multi 2..%u, ~%u live "
	       "per thread, %u spaces x %u chunks, runs %u, thread CPU time, load %s\n",
	       a.threads, (unsigned long long)a.ops, a.single_pct, a.max_chunks, a.live, a.spaces,
	       a.chunks, a.runs, bench_loadavg());
	for (__u32 run = 0; run < a.runs; run++)
		for (int k = 0; k < 4; k++) {
			/* Rotate who goes first so drift hits all alike. */
			int c = (k + run) % 4;
			__u64 ref;
			int err = run_one(&a, cfg[c].algo, cfg[c].one_space ? 1 : a.spaces,
					  cfg[c].null, &v[c][run], &ref);

			if (err) {
				fprintf(stderr,
					"xpile-bench region: cannot create the region: %s\n",
					strerror(-err));
				return 1;
			}
			refused[c] += ref;
		}
	{
		double lazy = bench_median(v[0], a.runs), eager = bench_median(v[1], a.runs);
		double eager_sp = bench_median(v[2], a.runs), loop = bench_median(v[3], a.runs);

		printf("region threads=%u single=%u lazy_ns=%.2f eager_ns=%.2f eager_spaces_ns=%.2f "
		       "ratio=%.2f less=%.0f%%\n",
		       a.threads, a.single_pct, lazy, eager, eager_sp, eager / lazy,
		       100.0 * (1 - lazy / eager));
		/* The allocators' own share: the bare loop's cost taken out. */
		printf("# loop_ns=%.2f net: lazy %.2f eager %.2f eager_spaces %.2f ns, lazy less "
		       "than eager %.0f%%, than eager_spaces %.0f%%\n",
		       loop, lazy - loop, eager - loop, eager_sp - loop,
		       100.0 * (1 - (lazy - loop) / (eager - loop)),
		       100.0 * (1 - (lazy - loop) / (eager_sp - loop)));
		if (refused[0] || refused[1] || refused[2])
			printf("# refused (arena full): lazy %llu, eager %llu, eager/spaces %llu\n",
			       (unsigned long long)refused[0], (unsigned long long)refused[1],
			       (unsigned long long)refused[2]);
	}
	for (int c = 0; c < 4; c++)
		free(v[c]);
	return 0;
}
