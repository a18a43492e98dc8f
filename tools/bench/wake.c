// SPDX-License-Identifier: BSD-3-Clause
/*
 * xpile-bench wake: what a sleep and a wake-up cost the woken thread on this machine,
 * by the scheduler's run time (/proc/thread-self/task/TID/schedstat), the figure the
 * idle-wait bench counts (docs/hybrid.md, the idle wait). Three ways to be woken:
 * - cross: a thread on --cores' second core blocks in read() on a pipe that a thread
 *   on the first writes to --rate times a second: the wake-up is an interrupt (an IPI)
 *   into the sleeper's core, as a NAPI on another core waking a worker;
 * - timer: the thread on the second core sleeps --sleep-us in nanosleep(): its own
 *   core's timer interrupt wakes it;
 * - local: two threads on the second core hand a byte back and forth: each wake-up is
 *   a switch on a busy core, no interrupt (as a NAPI thread on the worker's core).
 * The three alternate --runs times; the medians end the output.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "bench.h"
#include "benchutil.h"

struct wake_args {
	__u32 runs, rate, sleep_us, seconds;
	const char *cores;
};

#define OPT(...) CLI_OPT(struct wake_args, __VA_ARGS__)

static const struct cli_opt opts[] = {
	OPT("runs", NUM, runs, "N", "alternations of the three (default 5)", .min = 1, .max = 1000),
	OPT("rate", NUM, rate, "N", "cross: wake-ups per second (default 10000)", .min = 10,
	    .max = 1000000),
	OPT("sleep-us", NUM, sleep_us, "US", "timer: the sleep (default 50)", .min = 1,
	    .max = 100000),
	OPT("seconds", NUM, seconds, "S", "each way's share of a run (default 1)", .min = 1,
	    .max = 60),
	OPT("cores", STR, cores, "A,B", "the waker's core and the sleeper's (default 0,1)"),
	{ 0 },
};

static int bench_wake(int argc, char **argv);

BENCH_COMMAND(bench_wake_cmd, bench_wake, "wake", NULL,
	      "what a sleep and its wake-up cost the woken thread", opts,
	      .description = "Times three ways for a thread to be woken, by the run time the "
			     "scheduler charges the woken thread per wake-up: cross (a pipe "
			     "written from the other core: an interrupt into the sleeper's "
			     "core), timer (nanosleep: its own core's timer interrupt), local "
			     "(two threads on one core taking turns: no interrupt). Prints per "
			     "run\n"
			     "  wake kind=K wakes=N runtime_ns_per_wake=X wall_ns_per_wake=Y\n"
			     "(Y: wall time per wake-up; for cross the interval --rate sets) "
			     "and the medians. On a bare-metal machine the three are a few "
			     "microseconds; where the interrupt into a virtual CPU is dear, cross "
			     "and timer are not, and every sleep of an engine worker pays it.",
	      .examples = "xpile-bench wake\nxpile-bench wake --rate 100000 --runs 9");

struct sleeper {
	int core, rd, wr; /* local: the partner's pipe ends */
	pid_t tid;
	volatile int ready, stop;
	volatile long wakes;
};

static void pin(int core)
{
	cpu_set_t s;

	CPU_ZERO(&s);
	CPU_SET(core, &s);
	pthread_setaffinity_np(pthread_self(), sizeof(s), &s);
}

static unsigned long long run_ns(pid_t tid)
{
	char path[64];
	unsigned long long v = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/self/task/%d/schedstat", (int)tid);
	f = fopen(path, "re");
	if (f) {
		if (fscanf(f, "%llu", &v) != 1)
			v = 0;
		(void)fclose(f); /* read only: nothing to lose */
	}
	return v;
}

/* Blocks in read() on @rd; with @wr set it answers each byte (the local partner). */
static void *sleeper_main(void *arg)
{
	struct sleeper *s = arg;
	char c;

	pin(s->core);
	s->tid = (pid_t)syscall(SYS_gettid);
	s->ready = 1;
	while (!s->stop && read(s->rd, &c, 1) == 1) {
		s->wakes++;
		if (s->wr >= 0 && write(s->wr, &c, 1) != 1)
			break;
	}
	return NULL;
}

static int start(struct sleeper *s, pthread_t *t)
{
	if (pthread_create(t, NULL, sleeper_main, s))
		return -1;
	while (!s->ready)
		usleep(1000);
	return 0;
}

static void finish(struct sleeper *s, pthread_t t, int wr)
{
	s->stop = 1;
	if (write(wr, "x", 1) != 1) /* the last wake-up: out of read() */
		return;
	pthread_join(t, NULL);
}

/* cross: written from core A at @rate; the sleeper on core B. */
static double cross(int a, int b, __u32 rate, __u32 secs, double *wall, long *n)
{
	struct sleeper s = { .core = b, .wr = -1 };
	int p[2];
	pthread_t t;
	double t0, next, gap = 1e9 / rate;
	unsigned long long r0;
	long w0;

	if (pipe2(p, O_CLOEXEC))
		return -1;
	s.rd = p[0];
	if (start(&s, &t))
		return -1;
	pin(a);
	usleep(20000);
	r0 = run_ns(s.tid);
	w0 = s.wakes;
	t0 = next = bench_now_ns();
	while (bench_now_ns() - t0 < secs * 1e9) {
		if (bench_now_ns() < next)
			continue;
		if (write(p[1], "x", 1) != 1)
			break;
		next += gap;
	}
	usleep(1000);
	*n = s.wakes - w0;
	double rt = (double)(run_ns(s.tid) - r0);

	*wall = (bench_now_ns() - t0) / (double)*n;
	finish(&s, t, p[1]);
	close(p[0]);
	close(p[1]);
	return *n ? rt / (double)*n : -1;
}

/* timer: nanosleep on core B, the calling thread's own run time. */
static double timer(int b, __u32 us, __u32 secs, double *wall, long *n)
{
	struct timespec d = { .tv_nsec = (long)us * 1000 };
	pid_t tid = (pid_t)syscall(SYS_gettid);
	unsigned long long r0;
	double t0;

	pin(b);
	r0 = run_ns(tid);
	t0 = bench_now_ns();
	for (*n = 0; bench_now_ns() - t0 < secs * 1e9; ++*n)
		nanosleep(&d, NULL);
	*wall = (bench_now_ns() - t0) / (double)*n;
	return (double)(run_ns(tid) - r0) / (double)*n;
}

/* local: the caller and a partner on core B hand a byte back and forth. */
static double local(int b, __u32 secs, double *wall, long *n)
{
	struct sleeper s = { .core = b };
	int to[2], back[2];
	pthread_t t;
	unsigned long long r0;
	double t0;
	char c = 'x';

	if (pipe2(to, O_CLOEXEC) || pipe2(back, O_CLOEXEC))
		return -1;
	s.rd = to[0];
	s.wr = back[1];
	pin(b);
	if (start(&s, &t))
		return -1;
	r0 = run_ns(s.tid);
	long w0 = s.wakes;

	t0 = bench_now_ns();
	while (bench_now_ns() - t0 < secs * 1e9)
		if (write(to[1], &c, 1) != 1 || read(back[0], &c, 1) != 1)
			break;
	*n = s.wakes - w0;
	*wall = (bench_now_ns() - t0) / (double)*n / 2; /* two wake-ups a round */
	double rt = (double)(run_ns(s.tid) - r0);

	s.wr = -1; /* the last byte goes unanswered */
	finish(&s, t, to[1]);
	close(to[0]);
	close(to[1]);
	close(back[0]);
	close(back[1]);
	return *n ? rt / (double)*n : -1;
}

static int bench_wake(int argc, char **argv)
{
	static const char *const kinds[] = { "cross", "timer", "local" };
	struct wake_args a = { .runs = 5, .rate = 10000, .sleep_us = 50, .seconds = 1 };
	static double rt[3][1000];
	int rc = bench_parse(&bench_wake_cmd, argc, argv, &a), ca = 0, cb = 1;

	if (rc != CLI_RUN)
		return rc;
	if (a.cores && (sscanf(a.cores, "%d,%d", &ca, &cb) != 2 || ca < 0 || cb < 0)) {
		fprintf(stderr, "xpile-bench wake: --cores %s: expected A,B, e.g. 0,1\n", a.cores);
		return 2;
	}
	for (__u32 r = 0; r < a.runs; r++)
		for (int k0 = 0; k0 < 3; k0++) {
			int k = r & 1 ? 2 - k0 : k0; /* turned order every other run */
			double wall = 0;
			long n = 0;

			rt[k][r] = k == 0 ? cross(ca, cb, a.rate, a.seconds, &wall, &n) :
				   k == 1 ? timer(cb, a.sleep_us, a.seconds, &wall, &n) :
					    local(cb, a.seconds, &wall, &n);
			if (rt[k][r] < 0) {
				fprintf(stderr, "xpile-bench wake: %s: %s\n", kinds[k],
					strerror(errno));
				return 1;
			}
			printf("wake kind=%s wakes=%ld runtime_ns_per_wake=%.0f wall_ns_per_wake=%.0f\n",
			       kinds[k], n, rt[k][r], wall);
			fflush(stdout);
		}
	printf("wake median runs=%u cross_ns=%.0f timer_ns=%.0f local_ns=%.0f (rate %u/s, sleep %u us)\n",
	       a.runs, bench_median(rt[0], a.runs), bench_median(rt[1], a.runs),
	       bench_median(rt[2], a.runs), a.rate, a.sleep_us);
	return 0;
}
