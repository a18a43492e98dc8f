// SPDX-License-Identifier: BSD-3-Clause
/*
 * The idle worker's choice (idle.h) and the start's measure of what a wake-up costs.
 *
 * Per arrival, spinning costs the gap and sleeping costs a wake-up (w); a nap of n costs
 * a timer wake-up (t) per n, so t * gap / n per arrival. A nap that outlasts its own
 * wake-up (n > t) is therefore cheaper than a spin at every gap, and cheaper than a
 * sleep while t * gap / n < w, that is while the gap is under n * w / t: the worker
 * naps there, sleeps until an arrival wakes it beyond, and spins only where no nap
 * pays (--idle-nap-us 0, a timer dearer than the nap, or a ring too small to hold one)
 * and the gap is under w (there a sleep's own wake-up outlasts the gap: at 3 Mpps a
 * VM's wake-ups lost frames, 2.8 Mpps without a spin, 3.6 with one). Spinning buys
 * latency, not CPU: a spinner also reads the ring the producer writes, and at the
 * highest rate of xpile-bench engine (rxdrop, testpmd generating) napping gave 1.76
 * Mpps at 64 ns per packet where spinning gave 1.49 at 659. With w = 40 us and 32
 * frames per NAPI poll at 0.5 Mpps (a 64 us gap) a wake-up per arrival is 1250 ns per
 * packet; a 200 us nap makes it 400.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "idle.h"

#define SHARED_WAIT_PCT 5u /* runnable but waiting for the CPU, of the wall time */
#define SHARED_SAMPLES 3u /* in a row (one is noise: a kernel thread passing by) */
#define SHARED_HOLD_NS 2000000000ull /* then look again: sleeping hides the sign */

const char *eng_idle_how_name(enum eng_idle_how how)
{
	return how == ENG_IDLE_SPIN ? "spin" : how == ENG_IDLE_NAP ? "nap" : "sleep";
}

__u64 eng_idle_nap_below(const struct eng_idle_cost *c, __u64 nap_ns)
{
	if (!nap_ns || c->timer_ns >= nap_ns)
		return 0; /* a nap shorter than its own wake-up never pays */
	return nap_ns * c->wake_ns / (c->timer_ns ? c->timer_ns : 1);
}

struct eng_idle_out eng_idle_choose(const struct eng_idle_in *in)
{
	__u64 nap = in->nap_ns, w = in->cost.wake_ns;

	if (!in->needs_rx)
		return (struct eng_idle_out){ ENG_IDLE_SPIN, ENG_IDLE_TXONLY_SPIN_NS };
	if (!in->gap_ns)
		return (struct eng_idle_out){ ENG_IDLE_SLEEP, ENG_IDLE_SLEEP_NS };
	/* Half the RX ring's worth of arrivals at most, or a nap drops frames. */
	if (in->pps && in->ring && (__u64)in->ring / 2 * 1000000000ull / in->pps < nap)
		nap = (__u64)in->ring / 2 * 1000000000ull / in->pps;
	/* Below n * w / t a nap costs less than a sleep, and (n > t) less than a spin. */
	if (in->gap_ns < eng_idle_nap_below(&in->cost, nap))
		return (struct eng_idle_out){ ENG_IDLE_NAP, nap };
	/* No nap pays: a spin longer than a wake-up costs more than the sleep it puts off
	 * (the ski-rental bound); a worker sharing its core starves its feed by spinning. */
	if (!in->shared && in->gap_ns < w)
		return (struct eng_idle_out){ ENG_IDLE_SPIN, w < 1000 ? 1000 :
							     w > ENG_IDLE_SLEEP_NS ?
									ENG_IDLE_SLEEP_NS :
									w };
	return (struct eng_idle_out){ ENG_IDLE_SLEEP, ENG_IDLE_SLEEP_NS };
}

void eng_idle_init(struct eng_idle *s, const struct eng_idle_in *in)
{
	memset(s, 0, sizeof(*s));
	s->in = *in;
	s->in.gap_ns = 0;
	s->in.pps = 0;
	s->in.shared = false;
	/* The first sample spins, up to a wake-up per idle period: it sees the gap. */
	s->out = in->needs_rx ? (struct eng_idle_out){ ENG_IDLE_SPIN, in->cost.wake_ns } :
				eng_idle_choose(&s->in);
	s->fd = open("/proc/thread-self/schedstat", O_RDONLY | O_CLOEXEC);
}

void eng_idle_fini(struct eng_idle *s)
{
	if (s->fd >= 0)
		close(s->fd);
	s->fd = -1;
}

void eng_idle_arrived(struct eng_idle *s, __u64 ns, bool napped)
{
	if (napped)
		return; /* the nap's length is ours, not the traffic's */
	s->gap_sum += ns;
	s->gaps++;
}

/* The sign of a shared core: the worker runnable but waiting for its CPU
 * (/proc/thread-self/schedstat, second field) over SHARED_WAIT_PCT of the wall time. */
static void sample_shared(struct eng_idle *s, __u64 now)
{
	unsigned long long run, wait;
	char buf[96];
	ssize_t n = s->fd >= 0 ? pread(s->fd, buf, sizeof(buf) - 1, 0) : -1;

	if (n <= 0)
		return;
	buf[n] = '\0';
	if (sscanf(buf, "%llu %llu", &run, &wait) != 2)
		return;
	/* A woken thread waits for its CPU too, and in a VM a wake-up's wait alone is over
	 * 5% at a thousand a second: only a sample spent awake tells a shared core. */
	if (s->at_ns && !s->slept) {
		bool busy = (wait - s->wait_ns) * 100 > SHARED_WAIT_PCT * (now - s->at_ns);

		s->hits = busy ? s->hits + 1 : 0;
		if (!s->in.shared && s->hits >= SHARED_SAMPLES) {
			s->in.shared = true;
			s->shared_since = now;
		}
	}
	if (s->in.shared && now - s->shared_since > SHARED_HOLD_NS) {
		s->in.shared = false; /* look again */
		s->hits = 0;
	}
	s->wait_ns = wait;
}

void eng_idle_sample(struct eng_idle *s, __u64 now, __u64 rx)
{
	__u64 dt = now - s->at_ns;

	sample_shared(s, now);
	if (s->at_ns && dt) {
		__u64 pps = (rx - s->rx) * 1000000000ull / dt;

		if (s->gaps) { /* seen: spinning exactly, asleep with its wake-up in it */
			s->meas_gap = s->gap_sum / s->gaps;
			s->meas_pps = pps;
			s->in.gap_ns = s->meas_gap;
		} else if (!pps) {
			s->in.gap_ns = 0;
		} else if (s->meas_gap && s->meas_pps) { /* napping: the gap scales with the rate */
			s->in.gap_ns = s->meas_gap * s->meas_pps / pps;
		} else { /* never idle yet: as short as the rate allows */
			s->in.gap_ns = 1000000000ull / pps;
		}
		s->in.pps = pps;
		s->out = eng_idle_choose(&s->in);
	}
	s->at_ns = now;
	s->rx = rx;
	s->gap_sum = 0;
	s->gaps = 0;
	s->slept = false;
}

/* ---- the start's measure ---- */

struct sleeper {
	int core, rd;
	__u32 n;
	volatile int ready;
	__u64 timer_ns, wake_ns; /* run time per wake-up */
};

static __u64 run_ns(void)
{
	unsigned long long v = 0;
	FILE *f = fopen("/proc/thread-self/schedstat", "re");

	if (f) {
		if (fscanf(f, "%llu", &v) != 1)
			v = 0;
		(void)fclose(f); /* read only: nothing to lose */
	}
	return v;
}

static int pin(int core)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(core, &set);
	return -pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
}

/* The woken thread, as xpile-bench wake times it: its own run time over @n timer
 * sleeps of 50 us, then over @n reads of a pipe the other core writes to. */
static void *sleeper_main(void *arg)
{
	struct sleeper *s = arg;
	const struct timespec d = { 0, 50000 };
	__u32 i, n = s->n ? s->n : 1;
	__u64 r0;
	char c;

	pin(s->core);
	r0 = run_ns();
	for (i = 0; i < n; i++)
		nanosleep(&d, NULL);
	s->timer_ns = (run_ns() - r0) / n;
	__atomic_store_n(&s->ready, 1, __ATOMIC_RELEASE);
	if (read(s->rd, &c, 1) != 1) /* the first wake-up starts the count */
		return NULL;
	r0 = run_ns();
	for (i = 0; i < n; i++)
		if (read(s->rd, &c, 1) != 1)
			return NULL;
	s->wake_ns = (run_ns() - r0) / n;
	return NULL;
}

int eng_idle_measure(int core, int waker_core, __u32 n, struct eng_idle_cost *out)
{
	struct sleeper s = { .core = core, .n = n ? n : 1 };
	const struct timespec gap = { 0, 200000 };
	cpu_set_t was;
	pthread_t t;
	int p[2], err = 0;
	__u32 i;

	if (pthread_getaffinity_np(pthread_self(), sizeof(was), &was))
		return -EINVAL;
	if (pipe2(p, O_CLOEXEC))
		return -errno;
	s.rd = p[0];
	err = -pthread_create(&t, NULL, sleeper_main, &s);
	if (err)
		goto out;
	pin(waker_core);
	while (!__atomic_load_n(&s.ready, __ATOMIC_ACQUIRE))
		nanosleep(&gap, NULL);
	/* 200 us apart: the sleeper is asleep again each time. */
	for (i = 0; i <= s.n; i++) {
		nanosleep(&gap, NULL);
		if (write(p[1], "x", 1) != 1) {
			err = -errno;
			break;
		}
	}
	if (err)
		close(p[1]), p[1] = -1; /* the sleeper's read ends */
	pthread_join(t, NULL);
	pthread_setaffinity_np(pthread_self(), sizeof(was), &was);
	if (!err && (!s.wake_ns || !s.timer_ns))
		err = -EIO;
	if (!err)
		*out = (struct eng_idle_cost){ .wake_ns = s.wake_ns,
					       .timer_ns = s.timer_ns,
					       .measured = true,
					       .local = core == waker_core };
out:
	close(p[0]);
	if (p[1] >= 0)
		close(p[1]);
	return err;
}
