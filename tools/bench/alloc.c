// SPDX-License-Identifier: BSD-3-Clause
/*
 * xpile-bench alloc: allocator throughput with DPDK's test_mempool_perf protocol,
 * for the pile and ring backends and, when built with DPDK, rte_mempool side by
 * side in the same invocation: runs interleaved A/B/..., medians, ratios.
 */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "alloc.h"
#include "bench.h"
#include "xpile/pool.h"

#define MAX_BACKENDS 8
#define MAX_RUNS 101
#define MAX_CORES 256

struct backend {
	const char *name; /* as printed and accepted by --backend */
	const char *dpdk_ops;
	enum xp_pool_backend xp;
};

static const struct backend known[] = {
	{ "pile", NULL, XP_POOL_PILE },		{ "ring", NULL, XP_POOL_RING },
	{ "dpdk-ring_mp_mc", "ring_mp_mc", 0 }, { "dpdk-stack", "stack", 0 },
	{ "dpdk-lf_stack", "lf_stack", 0 },
};
#define NKNOWN (sizeof(known) / sizeof(known[0]))

static struct alloc_params P;
static unsigned int runs;
static bool want_debug;

/* What the command line sets; copied into P and the flags above once parsed. */
struct alloc_args {
	struct alloc_params p;
	unsigned int runs;
	int verbose;
	bool dpdk, debug;
	const struct backend *be[MAX_BACKENDS];
	unsigned int nbe;
};

/* --backend LIST: names from known[], run interleaved in the order given. */
static int parse_backends(const struct cli_opt *o, const char *s, void *cfg, char *why, size_t len)
{
	struct alloc_args *a = cfg;
	char tok[32];

	while (*s) {
		size_t tl = strcspn(s, ","), i;

		snprintf(tok, sizeof(tok), "%.*s", (int)(tl < sizeof(tok) ? tl : 0), s);
		if (!strcmp(tok, "dpdk-ring"))
			snprintf(tok, sizeof(tok), "dpdk-ring_mp_mc");
		for (i = 0; i < NKNOWN && strcmp(tok, known[i].name); i++)
			;
		if (i == NKNOWN) {
			snprintf(why, len,
				 "expected a list of pile, ring, dpdk-ring_mp_mc, dpdk-stack or "
				 "dpdk-lf_stack");
			return -1;
		}
		if (a->nbe == MAX_BACKENDS) {
			snprintf(why, len, "at most %d backends", MAX_BACKENDS);
			return -1;
		}
		a->be[a->nbe++] = &known[i];
		s += tl;
		if (*s == ',' && !*++s) {
			snprintf(why, len, "a list ends with a backend, not a comma");
			return -1;
		}
	}
	return 0;
}

#define OPT(...) CLI_OPT(struct alloc_args, __VA_ARGS__)

static const struct cli_opt opts[] = {
	OPT("backend", FUNC, be, "LIST",
	    "comma-separated backends, run interleaved: pile, ring, dpdk-ring_mp_mc, dpdk-stack, dpdk-lf_stack (default pile)",
	    .parse = parse_backends),
	OPT("dpdk", FLAG, dpdk, NULL,
	    "add dpdk-ring_mp_mc, dpdk-stack and dpdk-lf_stack to the backends"),
	OPT("cache", NUM, p.cache, "N",
	    "per-core cache size in objects, 0 = none (default 512; DPDK allows <= 512)",
	    .max = XP_CACHE_SIZE_MAX),
	OPT("cores", NUM, p.cores, "N", "worker threads, pinned to CPUs 0..N-1 (default 1)",
	    .min = 1, .max = MAX_CORES),
	OPT("keep", NUM, p.keep, "N", "objects each core holds per round, n_keep (default 128)",
	    .min = 1, .max = 1 << 24),
	OPT("get", NUM, p.get, "N", "get bulk size, n_get_bulk (default 32)", .min = 1,
	    .max = 1 << 16),
	OPT("put", NUM, p.put, "N", "put bulk size, n_put_bulk (default 32)", .min = 1,
	    .max = 1 << 16),
	OPT("seconds", SECONDS, p.seconds, "S",
	    "length of each run, at least, 0.001..3600 (default 1)", .dmin = 0.001, .dmax = 3600),
	OPT("runs", NUM, runs, "R", "runs per backend, interleaved; medians reported (default 3)",
	    .min = 1, .max = MAX_RUNS),
	OPT("touch", FLAG, p.touch, NULL,
	    "write one cache line of every object got (DPDK's protocol never does)"),
	OPT("frame", SIZE, p.frame, "BYTES", "object (UMEM frame) size, 64..65536 (default 2048)",
	    .min = 64, .max = 1 << 16),
	OPT("debug", FLAG, debug, NULL,
	    "create xpile pools with XP_POOL_F_DEBUG (measures what debug checks cost)"),
	OPT("verbose", COUNT, verbose, NULL,
	    "print per-core cache figures (xpile stats, DPDK cache state)", .short_name = 'v'),
	{ 0 },
};

BENCH_COMMAND(
	bench_alloc_cmd, bench_alloc, "alloc", NULL,
	"pile/ring allocator throughput (DPDK mempool_perf protocol)", opts,
	.sections =
		(const struct cli_section[]){
			{ "DPDK",
			  "DPDK backends need a build with Debian's dpdk-dev (pkg-config libdpdk; "
			  "make XPILE_DPDK=0 disables it) and run rte_mempool with its per-lcore "
			  "cache (EAL: --no-huge --no-pci --in-memory; worker threads are registered "
			  "lcores)." },
			{ "EXIT STATUS", "0 on success, 2 on a usage error, 1 if a run failed." },
			{ NULL } },
	.description =
		"Allocator throughput with the protocol of DPDK's app/test/test_mempool_perf.c: "
		"each core gets --keep objects in bulks of --get, then puts them all back in "
		"bulks of --put, for at least --seconds. rate_persec is the sum over cores of "
		"objects per second, each object counted once for one get plus one put. Objects "
		"are frames of a real memory area (UMEM-like; DPDK: its own elements).\n"
		"\n"
		"Every run prints one line, e.g.\n"
		"  xpile backend=pile cache=512 cores=2 n_get_bulk=32 n_put_bulk=32 n_keep=128 "
		"touch=0 run=1 cpu=0.98 rate_persec=N best_persec=M\n"
		"(cpu: the share of its cores the run really got, below 1 on a loaded machine; "
		"best: the sum over cores of each core's fastest round of at least 16384 "
		"objects, one no other job interrupted) then one 'median' line per backend and, "
		"with more than one backend, 'ratio' lines of each backend's median over the "
		"others' (best=: the same for the best rates; on a loaded machine it moves far "
		"less). Backends are run interleaved (A B C A B C ...) so load from elsewhere "
		"hits all alike.",
	.examples = "xpile-bench alloc --backend pile,dpdk-ring_mp_mc --cores 2 --cache 512 "
		    "--keep 128 --get 32 --put 32 --runs 5\n"
		    "xpile-bench alloc --backend pile,dpdk-ring_mp_mc,dpdk-lf_stack --cores 2 "
		    "--keep 32768 --get 64 --put 64");

static int parse_args(int argc, char **argv, const struct backend **be, unsigned int *nbe)
{
	static const char *const dpdk[] = { "dpdk-ring_mp_mc", "dpdk-stack", "dpdk-lf_stack" };
	struct alloc_args a = { .p = { .cache = 512,
				       .cores = 1,
				       .keep = 128,
				       .get = 32,
				       .put = 32,
				       .frame = 2048,
				       .seconds = 1 },
				.runs = 3 };
	int rc = bench_parse(&bench_alloc_cmd, argc, argv, &a);

	if (rc != CLI_RUN)
		return rc;
	if (a.p.keep % a.p.get || a.p.keep % a.p.put)
		return cli_usage_error(&bench_prog, &bench_alloc_cmd.cli,
				       "--keep %u must be a multiple of --get %u and --put %u",
				       a.p.keep, a.p.get, a.p.put);
	if (!a.nbe)
		a.be[a.nbe++] = &known[0];
	for (size_t d = 0; a.dpdk && d < sizeof(dpdk) / sizeof(dpdk[0]); d++) {
		char why[128];

		if (parse_backends(NULL, dpdk[d], &a, why, sizeof(why)))
			return cli_usage_error(&bench_prog, &bench_alloc_cmd.cli, "--dpdk: %s",
					       why);
	}
	for (unsigned int i = 0; i < a.nbe; i++)
		if (a.be[i]->dpdk_ops && !alloc_dpdk_available()) {
			fprintf(stderr,
				"xpile-bench alloc: built without DPDK; install dpdk-dev "
				"(tools/setup) and rebuild to use %s\n",
				a.be[i]->name);
			return 2;
		}
	a.p.verbose = a.verbose > 0;
	P = a.p;
	runs = a.runs;
	want_debug = a.debug;
	memcpy(be, a.be, sizeof(a.be));
	*nbe = a.nbe;
	return CLI_RUN;
}

/* ---- one run ---- */

struct run {
	const struct backend *be;
	struct xp_pool *pool;
	void *dpdk_mp;
	char *umem;
	pthread_barrier_t start;
};

struct worker {
	struct run *run;
	unsigned int core;
	pthread_t tid;
	struct alloc_result res;
};

static void pin(unsigned int core)
{
	long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(core % (unsigned int)(ncpu > 0 ? ncpu : 1), &set);
	pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
}

static void xpile_run(struct worker *w)
{
	struct run *r = w->run;
	struct xp_cache *c = NULL;
	__u64 *objs = malloc(P.keep * sizeof(*objs));
	char *umem = r->umem;

	if (!objs || xp_cache_create(r->pool, P.cache, &c)) {
		w->res.err = -ENOMEM;
		free(objs);
		return;
	}
	pthread_barrier_wait(&r->start);
#define XGET(o, n) xp_cache_get(c, (o), (n))
#define XPUT(o, n) xp_cache_put(c, (o), (n))
#define XADDR(h) (umem + (h))
	ALLOC_LOOP(&P, &w->res, objs, XGET, XPUT, XADDR);
	if (P.verbose) {
		struct xp_cache_stats st;

		xp_cache_stats_get(c, &st);
		fprintf(stderr,
			"  xpile core %u: get hits %llu misses %llu, put hits %llu misses "
			"%llu, refills %llu flushes %llu, objects moved %llu\n",
			w->core, (unsigned long long)st.get_hits, (unsigned long long)st.get_misses,
			(unsigned long long)st.put_hits, (unsigned long long)st.put_misses,
			(unsigned long long)st.refills, (unsigned long long)st.flushes,
			(unsigned long long)(st.objs_refilled + st.objs_flushed));
	}
	xp_cache_destroy(c);
	free(objs);
}

static void *worker_main(void *arg)
{
	struct worker *w = arg;

	pin(w->core);
	if (w->run->be->dpdk_ops) {
		pthread_barrier_wait(&w->run->start);
		alloc_dpdk_run(w->run->dpdk_mp, &P, &w->res);
	} else {
		xpile_run(w);
	}
	return NULL;
}

/* Returns the rate of one run, or a negative value on failure; *cpu the CPU share. */
static double run_once(const struct backend *be, char *umem, const __u64 *handles, double *cpu,
		       double *best)
{
	struct worker w[MAX_CORES];
	struct run r = { .be = be, .umem = umem };
	struct xp_pool_opts o = { .sz = sizeof(o),
				  .backend = be->xp,
				  .flags = want_debug ? XP_POOL_F_DEBUG : 0 };
	double rate = 0;
	int err;

	err = be->dpdk_ops ? alloc_dpdk_pool_create(be->dpdk_ops, &P, &r.dpdk_mp) :
			     xp_pool_create(handles, P.nobjs, &o, &r.pool);
	if (err)
		return -1;
	pthread_barrier_init(&r.start, NULL, P.cores);
	for (unsigned int i = 0; i < P.cores; i++) {
		w[i] = (struct worker){ .run = &r, .core = i };
		pthread_create(&w[i].tid, NULL, worker_main, &w[i]);
	}
	for (unsigned int i = 0; i < P.cores; i++) {
		pthread_join(w[i].tid, NULL);
		if (w[i].res.err) {
			fprintf(stderr,
				"xpile-bench alloc: %s core %u: a get failed (%d); the pool "
				"of %u is too small?\n",
				be->name, i, w[i].res.err, P.nobjs);
			rate = -1;
		} else if (rate >= 0) {
			if (P.verbose) /* for per-object counts (e.g. valgrind's) */
				fprintf(stderr, "  %s core %u: %llu objects in %.3f s\n", be->name,
					i, (unsigned long long)w[i].res.objs, w[i].res.secs);
			rate += (double)w[i].res.objs / w[i].res.secs;
			*cpu += w[i].res.cpu_secs / w[i].res.secs / P.cores;
			*best += w[i].res.best;
		}
	}
	pthread_barrier_destroy(&r.start);
	if (be->dpdk_ops)
		alloc_dpdk_pool_free(r.dpdk_mp);
	else
		xp_pool_destroy(r.pool);
	return rate;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* Sorts @v. */
static double median(double *v, unsigned int n)
{
	qsort(v, n, sizeof(double), cmp_double);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

static void print_line(const char *what, const struct backend *be, int run, double rate, double cpu,
		       double best)
{
	/* Run lines say "dpdk backend=ring_mp_mc"; summary lines need the full name. */
	const char *name = be->dpdk_ops && run > 0 ? be->dpdk_ops : be->name;

	printf("%s backend=%s%s cache=%u cores=%u n_get_bulk=%u n_put_bulk=%u n_keep=%u touch=%d",
	       what, name, want_debug && !be->dpdk_ops ? "+debug" : "", P.cache, P.cores, P.get,
	       P.put, P.keep, P.touch);
	if (run > 0)
		printf(" run=%d cpu=%.2f", run, cpu);
	printf(" rate_persec=%.0f best_persec=%.0f\n", rate, best);
	fflush(stdout);
}

int bench_alloc(int argc, char **argv)
{
	const struct backend *be[MAX_BACKENDS];
	static double rates[MAX_BACKENDS][MAX_RUNS], bests[MAX_BACKENDS][MAX_RUNS];
	double med[MAX_BACKENDS], medb[MAX_BACKENDS];
	unsigned int nbe = 0, maxb;
	__u64 *handles;
	char *umem;
	size_t umem_size;
	int status = 0;

	status = parse_args(argc, argv, be, &nbe);
	if (status != CLI_RUN)
		return status;
	status = 0;
	/* Room for every core's working set and a full cache (DPDK: 1.5x + a bulk). */
	maxb = P.get > P.put ? P.get : P.put;
	P.nobjs = P.cores * (P.keep + 2 * P.cache + 2 * maxb) + 1024;
	for (unsigned int i = 0; i < nbe; i++)
		if (be[i]->dpdk_ops && alloc_dpdk_init(&P))
			return 1;
	umem_size = (size_t)P.nobjs * P.frame;
	umem = mmap(NULL, umem_size, PROT_READ | PROT_WRITE,
		    MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
	handles = malloc(P.nobjs * sizeof(*handles));
	if (umem == MAP_FAILED || !handles) {
		fprintf(stderr, "xpile-bench alloc: cannot allocate %zu bytes of frames\n",
			umem_size);
		free(handles);
		if (umem != MAP_FAILED)
			munmap(umem, umem_size);
		return 1;
	}
	for (unsigned int i = 0; i < P.nobjs; i++)
		handles[i] = (__u64)i * P.frame;
	for (unsigned int r = 0; r < runs; r++)
		for (unsigned int b = 0; b < nbe; b++) {
			double cpu = 0;

			bests[b][r] = 0;
			rates[b][r] = run_once(be[b], umem, handles, &cpu, &bests[b][r]);
			if (rates[b][r] < 0)
				status = 1;
			print_line(be[b]->dpdk_ops ? "dpdk" : "xpile", be[b], (int)r + 1,
				   rates[b][r], cpu, bests[b][r]);
		}
	for (unsigned int b = 0; b < nbe; b++) {
		med[b] = median(rates[b], runs);
		medb[b] = median(bests[b], runs);
		print_line("median", be[b], 0, med[b], 0, medb[b]);
	}
	for (unsigned int a = 0; a < nbe; a++)
		for (unsigned int b = 0; b < nbe; b++)
			if (a != b && !be[a]->dpdk_ops && med[b] > 0)
				printf("ratio %s/%s=%.2f best=%.2f cache=%u cores=%u n_keep=%u "
				       "bulks=%u/%u\n",
				       be[a]->name, be[b]->name, med[a] / med[b],
				       medb[b] > 0 ? medb[a] / medb[b] : 0, P.cache, P.cores,
				       P.keep, P.get, P.put);
	munmap(umem, umem_size);
	free(handles);
	return status;
}
