// SPDX-License-Identifier: BSD-3-Clause
/*
 * xpile-bench alloc: allocator throughput with DPDK's test_mempool_perf protocol,
 * for the pile and ring backends and, when built with DPDK, rte_mempool side by
 * side in the same invocation: runs interleaved A/B/..., medians, ratios.
 */
#include <errno.h>
#include <getopt.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "alloc.h"
#include "bench.h"
#include "xpile/pile.h"

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

/* Declarative option table: name, argument, target, minimum, maximum, help. */
struct opt {
	const char *name, *arg;
	unsigned int *u;
	double *d;
	bool *b;
	unsigned int min, max;
	const char *help;
};

static struct alloc_params P = { .cache = 512,
				 .cores = 1,
				 .keep = 128,
				 .get = 32,
				 .put = 32,
				 .frame = 2048,
				 .seconds = 1 };
static unsigned int runs = 3;
static bool want_dpdk, want_debug;

static const struct opt table[] = {
	{ "backend", "LIST", NULL, NULL, NULL, 0, 0,
	  "comma-separated backends, run interleaved: pile, ring, dpdk-ring_mp_mc,\n"
	  "dpdk-stack, dpdk-lf_stack (default pile)" },
	{ "dpdk", NULL, NULL, NULL, &want_dpdk, 0, 0,
	  "add dpdk-ring_mp_mc, dpdk-stack and dpdk-lf_stack to the backends" },
	{ "cache", "N", &P.cache, NULL, NULL, 0, XP_CACHE_SIZE_MAX,
	  "per-core cache size in objects, 0 = none (default 512; DPDK allows <= 512)" },
	{ "cores", "N", &P.cores, NULL, NULL, 1, MAX_CORES,
	  "worker threads, pinned to CPUs 0..N-1 (default 1)" },
	{ "keep", "N", &P.keep, NULL, NULL, 1, 1 << 24,
	  "objects each core holds per round, n_keep (default 128)" },
	{ "get", "N", &P.get, NULL, NULL, 1, 1 << 16, "get bulk size, n_get_bulk (default 32)" },
	{ "put", "N", &P.put, NULL, NULL, 1, 1 << 16, "put bulk size, n_put_bulk (default 32)" },
	{ "seconds", "S", NULL, &P.seconds, NULL, 0, 3600,
	  "length of each run, at least (default 1)" },
	{ "runs", "R", &runs, NULL, NULL, 1, MAX_RUNS,
	  "runs per backend, interleaved; medians reported (default 3)" },
	{ "touch", NULL, NULL, NULL, &P.touch, 0, 0,
	  "write one cache line of every object got (DPDK's protocol never does)" },
	{ "frame", "BYTES", &P.frame, NULL, NULL, 64, 1 << 16,
	  "object (UMEM frame) size, 64..65536 (default 2048)" },
	{ "debug", NULL, NULL, NULL, &want_debug, 0, 0,
	  "create xpile pools with XP_POOL_F_DEBUG (measures what debug checks cost)" },
	{ "verbose", NULL, NULL, NULL, &P.verbose, 0, 0,
	  "print per-core cache figures (xpile stats, DPDK cache state)" },
};
#define NOPTS (sizeof(table) / sizeof(table[0]))

static void usage(FILE *f)
{
	fprintf(f,
		"Usage: xpile-bench alloc [OPTIONS]\n"
		"\n"
		"Allocator throughput with the protocol of DPDK's app/test/test_mempool_perf.c:\n"
		"each core gets --keep objects in bulks of --get, then puts them all back in\n"
		"bulks of --put, for at least --seconds. rate_persec is the sum over cores of\n"
		"objects per second, each object counted once for one get plus one put.\n"
		"Objects are frames of a real memory area (UMEM-like; DPDK: its own elements).\n"
		"\n"
		"Every run prints one line, e.g.\n"
		"  xpile backend=pile cache=512 cores=2 n_get_bulk=32 n_put_bulk=32 n_keep=128 "
		"touch=0 run=1 cpu=0.98 rate_persec=N\n"
		"(cpu: the share of its cores the run really got, below 1 on a loaded machine)\n"
		"then one 'median' line per backend and, with more than one backend, 'ratio'\n"
		"lines of each backend's median over the others'. Backends are run\n"
		"interleaved (A B C A B C ...) so load from elsewhere hits all alike.\n"
		"\nOptions:\n");
	for (size_t i = 0; i < NOPTS; i++) {
		char lhs[40];
		const char *h = table[i].help, *nl;

		snprintf(lhs, sizeof(lhs), "--%s%s%s", table[i].name, table[i].arg ? " " : "",
			 table[i].arg ? table[i].arg : "");
		fprintf(f, "  %-18s", lhs);
		while ((nl = strchr(h, '\n'))) {
			fprintf(f, " %.*s\n%20s", (int)(nl - h), h, "");
			h = nl + 1;
		}
		fprintf(f, " %s\n", h);
	}
	fprintf(f,
		"  %-18s show this help\n"
		"\nDPDK backends need a build with Debian's dpdk-dev (pkg-config libdpdk;\n"
		"make XPILE_DPDK=0 disables it) and run rte_mempool with its per-lcore cache\n"
		"(EAL: --no-huge --no-pci --in-memory; worker threads are registered lcores).\n"
		"\nExample (the issue's targets):\n"
		"  xpile-bench alloc --backend pile,dpdk-ring_mp_mc --cores 2 --cache 512 "
		"--keep 128 --get 32 --put 32 --runs 5\n"
		"  xpile-bench alloc --backend pile,dpdk-ring_mp_mc,dpdk-lf_stack --cores 2 "
		"--keep 32768 --get 64 --put 64\n"
		"\nExit status: 0 on success, 2 on a usage error, 1 if a run failed.\n",
		"--help");
}

static int parse_backends(const char *s, const struct backend **out, unsigned int *n)
{
	char *dup = strdup(s), *save = NULL;
	int err = 0;

	for (char *t = strtok_r(dup, ",", &save); t && !err; t = strtok_r(NULL, ",", &save)) {
		size_t i;

		if (!strcmp(t, "dpdk-ring"))
			t = "dpdk-ring_mp_mc";
		for (i = 0; i < NKNOWN && strcmp(t, known[i].name); i++)
			;
		if (i == NKNOWN) {
			fprintf(stderr,
				"xpile-bench alloc: unknown backend '%s'; use pile, ring, "
				"dpdk-ring_mp_mc, dpdk-stack or dpdk-lf_stack\n",
				t);
			err = -1;
		} else if (*n == MAX_BACKENDS) {
			fprintf(stderr, "xpile-bench alloc: at most %d backends\n", MAX_BACKENDS);
			err = -1;
		} else {
			out[(*n)++] = &known[i];
		}
	}
	free(dup);
	return err;
}

static int parse_args(int argc, char **argv, const struct backend **be, unsigned int *nbe)
{
	struct option lo[NOPTS + 2];
	const char *blist = "pile";
	int c;

	for (size_t i = 0; i < NOPTS; i++)
		lo[i] = (struct option){ table[i].name,
					 table[i].arg ? required_argument : no_argument, NULL,
					 (int)i };
	lo[NOPTS] = (struct option){ "help", no_argument, NULL, 'h' };
	lo[NOPTS + 1] = (struct option){ 0 };
	optind = 1;
	while ((c = getopt_long(argc, argv, "h", lo, NULL)) != -1) {
		const struct opt *o;
		char *end;

		if (c == 'h') {
			usage(stdout);
			exit(0);
		}
		if (c < 0 || c >= (int)NOPTS) {
			fprintf(stderr, "xpile-bench alloc: see 'xpile-bench alloc --help'\n");
			return -1;
		}
		o = &table[c];
		if (o->b) {
			*o->b = true;
		} else if (o->d) {
			double v = strtod(optarg, &end);

			if (*end || v <= 0 || v > o->max) {
				fprintf(stderr,
					"xpile-bench alloc: --%s %s: give seconds in (0, %u]\n",
					o->name, optarg, o->max);
				return -1;
			}
			*o->d = v;
		} else if (o->u) {
			unsigned long v = strtoul(optarg, &end, 0);

			if (*end || !*optarg || v < o->min || v > o->max) {
				fprintf(stderr,
					"xpile-bench alloc: --%s %s: give an integer in [%u, %u]\n",
					o->name, optarg, o->min, o->max);
				return -1;
			}
			*o->u = (unsigned int)v;
		} else {
			blist = optarg;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "xpile-bench alloc: unexpected argument '%s'; see --help\n",
			argv[optind]);
		return -1;
	}
	if (P.keep % P.get || P.keep % P.put) {
		fprintf(stderr,
			"xpile-bench alloc: --keep %u must be a multiple of --get %u and "
			"--put %u\n",
			P.keep, P.get, P.put);
		return -1;
	}
	if (parse_backends(blist, be, nbe))
		return -1;
	if (want_dpdk && (parse_backends("dpdk-ring_mp_mc,dpdk-stack,dpdk-lf_stack", be, nbe)))
		return -1;
	for (unsigned int i = 0; i < *nbe; i++)
		if (be[i]->dpdk_ops && !alloc_dpdk_available()) {
			fprintf(stderr,
				"xpile-bench alloc: built without DPDK; install dpdk-dev "
				"(tools/setup) and rebuild to use %s\n",
				be[i]->name);
			return -1;
		}
	return 0;
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
static double run_once(const struct backend *be, char *umem, const __u64 *handles, double *cpu)
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
			rate += (double)w[i].res.objs / w[i].res.secs;
			*cpu += w[i].res.cpu_secs / w[i].res.secs / P.cores;
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

static void print_line(const char *what, const struct backend *be, int run, double rate, double cpu)
{
	/* Run lines say "dpdk backend=ring_mp_mc"; summary lines need the full name. */
	const char *name = be->dpdk_ops && run > 0 ? be->dpdk_ops : be->name;

	printf("%s backend=%s%s cache=%u cores=%u n_get_bulk=%u n_put_bulk=%u n_keep=%u touch=%d",
	       what, name, want_debug && !be->dpdk_ops ? "+debug" : "", P.cache, P.cores, P.get,
	       P.put, P.keep, P.touch);
	if (run > 0)
		printf(" run=%d cpu=%.2f", run, cpu);
	printf(" rate_persec=%.0f\n", rate);
	fflush(stdout);
}

int bench_alloc(int argc, char **argv)
{
	const struct backend *be[MAX_BACKENDS];
	static double rates[MAX_BACKENDS][MAX_RUNS];
	double med[MAX_BACKENDS];
	unsigned int nbe = 0, maxb;
	__u64 *handles;
	char *umem;
	size_t umem_size;
	int status = 0;

	if (parse_args(argc, argv, be, &nbe))
		return 2;
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

			rates[b][r] = run_once(be[b], umem, handles, &cpu);
			if (rates[b][r] < 0)
				status = 1;
			print_line(be[b]->dpdk_ops ? "dpdk" : "xpile", be[b], (int)r + 1,
				   rates[b][r], cpu);
		}
	for (unsigned int b = 0; b < nbe; b++) {
		qsort(rates[b], runs, sizeof(double), cmp_double);
		med[b] = runs % 2 ? rates[b][runs / 2] :
				    (rates[b][runs / 2 - 1] + rates[b][runs / 2]) / 2;
		print_line("median", be[b], 0, med[b], 0);
	}
	for (unsigned int a = 0; a < nbe; a++)
		for (unsigned int b = 0; b < nbe; b++)
			if (a != b && !be[a]->dpdk_ops && med[b] > 0)
				printf("ratio %s/%s=%.2f cache=%u cores=%u n_keep=%u bulks=%u/%u\n",
				       be[a]->name, be[b]->name, med[a] / med[b], P.cache, P.cores,
				       P.keep, P.get, P.put);
	munmap(umem, umem_size);
	free(handles);
	return status;
}
