// SPDX-License-Identifier: BSD-3-Clause
/*
 * Concurrent stress of the pool, both backends, with and without debug mode:
 * 4 threads, random bulk sizes (including requests larger than the cache), mixed
 * cached and uncached calls, caches of different sizes, and batches handed from one
 * thread to another (got in one cache, put in another, like RX and TX completion on
 * different cores). A shared bitmap of held handles catches a handle handed out
 * twice the moment it happens; at the end every handle goes back and the audit must
 * find exactly N, each once.
 *
 * Time-bounded: XPILE_STRESS_SECONDS (default 4, 2 under sanitizers) split over the
 * configurations.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <time.h>

#include "pile_check.h"

#define NTHREADS 4
#define NFRAMES 8192
#define MAX_HELD 1800
#define MAILBOX 4096

#if defined(__SANITIZE_THREAD__) || defined(__SANITIZE_ADDRESS__)
#define DEFAULT_SECONDS 2.0
#else
#define DEFAULT_SECONDS 4.0
#endif

static struct xp_pool *pool;
static _Atomic unsigned char held_by_test[NFRAMES];
static atomic_int stop;
static atomic_int errors;

/* Batches in transit between threads. */
static pthread_mutex_t mb_lock = PTHREAD_MUTEX_INITIALIZER;
static __u64 mailbox[MAILBOX];
static __u32 mb_count;

struct worker {
	int id;
	__u32 cache_size;
	pthread_t tid;
	__u64 held[MAX_HELD + 700];
	__u32 nheld;
	unsigned long long ops, objs, fails;
};

static void took(struct worker *w, const __u64 *objs, __u32 n)
{
	for (__u32 i = 0; i < n; i++) {
		long ix = pc_index(objs[i], NFRAMES);

		if (ix < 0 || atomic_exchange(&held_by_test[ix], 1)) {
			fprintf(stderr, "thread %d: handle 0x%llx %s\n", w->id,
				(unsigned long long)objs[i],
				ix < 0 ? "foreign" : "handed out twice");
			atomic_fetch_add(&errors, 1);
			continue;
		}
		w->held[w->nheld++] = objs[i];
	}
}

/* Takes n random held handles out of w->held into objs and marks them returned. */
static void release(struct worker *w, __u64 *objs, __u32 n, unsigned int *seed)
{
	for (__u32 i = 0; i < n; i++) {
		__u32 j = (__u32)rand_r(seed) % w->nheld;

		objs[i] = w->held[j];
		w->held[j] = w->held[--w->nheld];
		atomic_store(&held_by_test[pc_index(objs[i], NFRAMES)], 0);
	}
}

static void *work(void *arg)
{
	struct worker *w = arg;
	struct xp_cache *c = NULL;
	unsigned int seed = 1000u + (unsigned int)w->id;
	__u64 buf[700];

	if (xp_cache_create(pool, w->cache_size, &c)) {
		atomic_fetch_add(&errors, 1);
		return NULL;
	}
	while (!atomic_load_explicit(&stop, memory_order_relaxed)) {
		__u32 r = (__u32)rand_r(&seed), k = r % 8 ? 1 + (r >> 8) % 64 : (r >> 8) % 700;
		bool cached = (r >> 4) % 4 != 0;
		int op = (int)((r >> 20) % 16);

		if (op < 7 && w->nheld + k <= MAX_HELD) {
			int err = cached ? xp_cache_get(c, buf, k) : xp_pool_get(pool, buf, k);

			if (err) {
				w->fails++;
				if (err != -ENOBUFS)
					atomic_fetch_add(&errors, 1);
			} else {
				took(w, buf, k);
			}
		} else if (op < 14) {
			int err;

			k = k < w->nheld ? k : w->nheld;
			release(w, buf, k, &seed);
			err = cached ? xp_cache_put(c, buf, k) : xp_pool_put(pool, buf, k);
			if (err) {
				fprintf(stderr, "thread %d: put of %u failed: %d\n", w->id, k, err);
				atomic_fetch_add(&errors, 1);
			}
		} else if (op == 14) { /* hand a batch to whoever comes next */
			k = k % 65 < w->nheld ? k % 65 : w->nheld;
			pthread_mutex_lock(&mb_lock);
			if (mb_count + k <= MAILBOX) {
				release(w, mailbox + mb_count, k, &seed);
				mb_count += k;
			}
			pthread_mutex_unlock(&mb_lock);
		} else { /* take a batch another thread got */
			pthread_mutex_lock(&mb_lock);
			k = k % 65 < mb_count ? k % 65 : mb_count;
			if (w->nheld + k > MAX_HELD)
				k = 0;
			mb_count -= k;
			took(w, mailbox + mb_count, k);
			pthread_mutex_unlock(&mb_lock);
		}
		w->ops++;
		w->objs += k;
	}
	/* Return everything through the cache, then the cache itself. */
	while (w->nheld) {
		__u32 k = w->nheld < 64 ? w->nheld : 64;

		release(w, buf, k, &seed);
		if (xp_cache_put(c, buf, k))
			atomic_fetch_add(&errors, 1);
	}
	xp_cache_destroy(c);
	return NULL;
}

static double stress_seconds;

static void run(enum xp_pool_backend backend, __u32 flags)
{
	static const __u32 sizes[NTHREADS] = { 512, 33, 0, 250 };
	/* 3 stripes whatever the CPUs: homes 0, 1, 2, 0 steal from and gather across
	 * each other (the ring ignores it). */
	struct xp_pool_opts o = {
		.sz = sizeof(o), .backend = backend, .flags = flags, .stripes = 3
	};
	static struct worker w[NTHREADS];
	unsigned long long ops = 0, objs = 0, fails = 0;
	struct timespec t0, ts;
	__u64 *h = pc_handles(NFRAMES);

	atomic_store(&stop, 0);
	atomic_store(&errors, 0);
	memset(held_by_test, 0, sizeof(held_by_test));
	mb_count = 0;
	XT_EQ(xp_pool_create(h, NFRAMES, &o, &pool), 0);
	free(h);
	XT_REQUIRE(pool);
	for (int i = 0; i < NTHREADS; i++) {
		memset(&w[i], 0, sizeof(w[i]));
		w[i].id = i;
		w[i].cache_size = sizes[i];
		XT_EQ(pthread_create(&w[i].tid, NULL, work, &w[i]), 0);
	}
	/* avail may be read while the pool runs (an estimate, never above N). */
	clock_gettime(CLOCK_MONOTONIC, &t0);
	do {
		if (!XT_CHECK(xp_pool_avail(pool) <= NFRAMES))
			break;
		nanosleep(&(struct timespec){ .tv_nsec = 1000000 }, NULL);
		clock_gettime(CLOCK_MONOTONIC, &ts);
	} while ((double)(ts.tv_sec - t0.tv_sec) + (double)(ts.tv_nsec - t0.tv_nsec) * 1e-9 <
		 stress_seconds);
	atomic_store(&stop, 1);
	for (int i = 0; i < NTHREADS; i++) {
		pthread_join(w[i].tid, NULL);
		ops += w[i].ops;
		objs += w[i].objs;
		fails += w[i].fails;
	}
	/* Handles still in the mailbox go back uncached. */
	for (__u32 i = 0; i < mb_count; i++)
		atomic_store(&held_by_test[pc_index(mailbox[i], NFRAMES)], 0);
	XT_EQ(xp_pool_put(pool, mailbox, mb_count), 0);
	fprintf(stderr, "  %s%s: %llu calls, %llu handles, %llu refused gets\n",
		xp_pool_backend_name(backend), flags ? "+debug" : "", ops, objs, fails);
	XT_EQ(atomic_load(&errors), 0);
	XT_CHECK(ops > 1000);
	XT_EQ(xp_pool_cached(pool), 0);
	XT_EQ(xp_pool_avail(pool), NFRAMES);
	XT_EQ(xp_pool_in_use(pool), 0);
	XT_EQ(xp_pool_audit(pool), 0);
	xp_pool_destroy(pool);
}

static void pile_stress(void)
{
	run(XP_POOL_PILE, 0);
}

static void pile_debug_stress(void)
{
	run(XP_POOL_PILE, XP_POOL_F_DEBUG);
}

static void ring_stress(void)
{
	run(XP_POOL_RING, 0);
}

int main(void)
{
	const char *env = getenv("XPILE_STRESS_SECONDS");
	double total = env ? atof(env) : DEFAULT_SECONDS;

	if (total <= 0)
		total = DEFAULT_SECONDS;
	stress_seconds = total / 3;
	XT_RUN(pile_stress);
	XT_RUN(pile_debug_stress);
	XT_RUN(ring_stress);
	return xt_done();
}
