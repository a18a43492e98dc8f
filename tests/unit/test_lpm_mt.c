// SPDX-License-Identifier: BSD-3-Clause
/*
 * LPM readers against a writer (run under TSan too): every answer is the old or the new
 * hop of its route, never another route's and never a torn entry, while the writer
 * replaces hops and makes and folds groups that readers may still be inside (reused
 * only after their grace period). Double-buffered, a whole burst sees one batch.
 *
 * Routes: 198.18.0.0/16 (owner 0) and 198.18.k.0/24 (owner k + 1, k < 64); hop =
 * owner << 16 | version. Version v is written as one batch; readers know the versions
 * finished before a lookup and started after it, and the answer must lie in between.
 * Structure changes keep answers: a /28 with its /24's hop appears and goes, taking and
 * freeing a group.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <time.h>

#include "xpile/lpm.h"
#include "xpile/qsbr.h"
#include "xt.h"

#define IP(a, b, c, d) ((__u32)(a) << 24 | (__u32)(b) << 16 | (__u32)(c) << 8 | (__u32)(d))
#define SUBS 64
#define READERS 2
#define BURST 32

static struct xp_lpm *lpm;
static struct xp_qsbr *qsbr;
static enum xp_lpm_sync mode;
static atomic_uint v_done, v_started;
static atomic_bool stop;
static atomic_ulong lookups, wrong_owner, wrong_version, mixed_burst;

static double now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static __u32 owner_of(__u32 a)
{
	__u32 k = (a >> 8) & 0xff;

	return k < SUBS ? k + 1 : 0;
}

static void *reader(void *arg)
{
	__u64 rng = (__u64)(uintptr_t)arg * 0x9e3779b97f4a7c15ull + 1;
	__u32 id, addr[BURST], hop[BURST];

	if (xp_qsbr_register(qsbr, &id))
		return NULL;
	for (__u64 n = 0; !atomic_load(&stop); n++) {
		__u32 lo, hi;

		for (int i = 0; i < BURST; i++) {
			rng ^= rng << 13;
			rng ^= rng >> 7;
			rng ^= rng << 17;
			addr[i] = IP(198, 18, 0, 0) | (__u32)(rng & 0xffff);
			if (i % 2)
				addr[i] = IP(198, 18, i, 0) | (__u32)(rng & 0xff);
		}
		lo = atomic_load(&v_done);
		xp_lpm_lookup_bulk(lpm, addr, hop, BURST);
		hop[0] = xp_lpm_lookup(lpm, addr[0]);
		hi = atomic_load(&v_started);
		for (int i = 0; i < BURST; i++) {
			__u32 ver = hop[i] & 0xffff;

			if (hop[i] == XP_LPM_MISS || hop[i] >> 16 != owner_of(addr[i]))
				atomic_fetch_add(&wrong_owner, 1);
			else if (ver < lo || ver > hi)
				atomic_fetch_add(&wrong_version, 1);
			/* Double: one image per bulk call, so one batch (hop[0] is a lookup of
			 * its own and may see the next one). */
			if (mode == XP_LPM_DOUBLE && i > 1 && ver != (hop[1] & 0xffff))
				atomic_fetch_add(&mixed_burst, 1);
		}
		atomic_fetch_add(&lookups, BURST + 1);
		xp_qsbr_quiescent(qsbr, id);
		if (n % 4096 == 4095) {
			/* The idle wait: offline, so writers go on without us. */
			xp_qsbr_offline(qsbr, id);
			nanosleep(&(struct timespec){ .tv_nsec = 100000 }, NULL);
			xp_qsbr_online(qsbr, id);
		}
	}
	xp_qsbr_unregister(qsbr, id);
	return NULL;
}

static void set_all(__u32 v)
{
	XT_EQ(xp_lpm_add(lpm, IP(198, 18, 0, 0), 16, v), 0);
	for (__u32 k = 0; k < SUBS; k++)
		XT_EQ(xp_lpm_add(lpm, IP(198, 18, k, 0), 24, (k + 1) << 16 | v), 0);
}

static void run(enum xp_lpm_sync m)
{
	XP_OPTS(xp_lpm_opts, o, .sync = m, .groups = 8, .hugepages = XP_HUGE_NEVER);
	pthread_t th[READERS];
	__u64 rng = 42;
	bool sub[SUBS] = { 0 };
	__u32 nsub = 0, v;
	double t0 = now();
	struct xp_lpm_stats st;

	mode = m;
	atomic_store(&stop, false);
	atomic_store(&lookups, 0);
	atomic_store(&wrong_owner, 0);
	atomic_store(&wrong_version, 0);
	atomic_store(&mixed_burst, 0);
	XT_REQUIRE(!xp_qsbr_create(READERS + 1, &qsbr));
	o.qsbr = qsbr;
	XT_REQUIRE(!xp_lpm_create(&o, &lpm));
	atomic_store(&v_done, 1);
	atomic_store(&v_started, 1);
	set_all(1);
	xp_lpm_sync(lpm);
	for (int i = 0; i < READERS; i++)
		XT_REQUIRE(!pthread_create(&th[i], NULL, reader, (void *)(uintptr_t)(i + 1)));
	/* Bounded in versions and in time (TSan is slow). */
	for (v = 2; v < 60000 && now() - t0 < 1.5; v++) {
		atomic_store(&v_started, v);
		set_all(v);
		/* Groups come and go under the readers: at most 8 exist, so freed ones are
		 * reused as soon as their grace period allows. */
		for (int j = 0; j < 3; j++) {
			__u32 k;

			rng = rng * 6364136223846793005ull + 1442695040888963407ull;
			k = (__u32)(rng >> 33) % SUBS;
			if (sub[k]) {
				XT_EQ(xp_lpm_del(lpm, IP(198, 18, k, 16), 28), 0);
				sub[k] = false;
				nsub--;
			} else if (nsub < 8) {
				sub[k] = true;
				nsub++;
			}
			for (__u32 i = 0; i < SUBS; i++)
				if (sub[i])
					XT_EQ(xp_lpm_add(lpm, IP(198, 18, i, 16), 28,
							 (i + 1) << 16 | v),
					      0);
		}
		XT_EQ(xp_lpm_commit(lpm), 0);
		atomic_store(&v_done, v);
	}
	atomic_store(&stop, true);
	for (int i = 0; i < READERS; i++)
		pthread_join(th[i], NULL);
	xp_lpm_stats(lpm, &st);
	fprintf(stderr, "  %s: %u versions, %lu lookups, %llu grace waits, %llu flips\n",
		m == XP_LPM_DOUBLE ? "double" : "in place", v - 2, atomic_load(&lookups),
		(unsigned long long)st.grace_waits, (unsigned long long)st.flips);
	XT_EQ(atomic_load(&wrong_owner), 0);
	XT_EQ(atomic_load(&wrong_version), 0);
	XT_EQ(atomic_load(&mixed_burst), 0);
	XT_CHECK(atomic_load(&lookups) > 0);
	XT_CHECK(v > 10);
	xp_lpm_destroy(lpm);
	xp_qsbr_destroy(qsbr);
}

static void inplace_readers(void)
{
	run(XP_LPM_INPLACE);
}

static void double_readers(void)
{
	run(XP_LPM_DOUBLE);
}

int main(void)
{
	XT_RUN(inplace_readers);
	XT_RUN(double_readers);
	return xt_done();
}
