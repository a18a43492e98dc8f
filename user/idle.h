/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The idle worker's choice (idle.c): spin, nap or sleep, decided from what waiting costs
 * on this machine. A sleep costs the woken thread a wake-up (measured at start: 1-6 us
 * on bare metal, 25-50 us in a VM whose interrupts into a virtual CPU are dear); a spin
 * costs the gap it spins through; a nap (a timed sleep that no arrival interrupts)
 * costs one timer wake-up per nap. So the worker naps where one timer wake-up per nap
 * costs less than one wake-up per arrival (at any shorter gap a nap also beats a spin),
 * within a latency budget (--idle-nap-us) and half the RX ring; beyond, it sleeps until
 * an arrival wakes it; it spins only where no nap pays and the expected gap is shorter
 * than a wake-up. Everything the choice needs is a plain number, so eng_idle_choose()
 * is a pure function (tests/unit/test_idle.c); nothing here knows the engine.
 */
#ifndef XPILE_IDLE_H
#define XPILE_IDLE_H

#include <stdbool.h>
#include <linux/types.h>

enum eng_idle_how { ENG_IDLE_SPIN, ENG_IDLE_NAP, ENG_IDLE_SLEEP };

#define ENG_IDLE_SAMPLE_NS 50000000ull /* the rate and the gap are sampled this often */
#define ENG_IDLE_SLEEP_NS 1000000ull /* a sleep's timeout: a lost wake-up costs this */
/* A sender with no RX (txonly) spins this long before it sleeps: its next burst is due
 * within it at 64 kpps and more (64 a burst), and a sleep overshoots by a wake-up, which
 * pacing cannot take back (50 us here sent 0.068 Mpps of a --rate 100000). */
#define ENG_IDLE_TXONLY_SPIN_NS 1000000ull
#define ENG_IDLE_NAP_NS 200000ull /* --idle-nap-us default: the kernel docs' gro_flush_timeout */

/* What a wake-up costs the woken thread, in CPU (the scheduler's run time). */
struct eng_idle_cost {
	__u64 wake_ns; /* woken by an arrival: an interrupt from another core (cross) */
	__u64 timer_ns; /* woken by its own core's timer: what a nap costs */
	bool measured; /* false: given (--idle-wake-us) or the defaults */
	bool local; /* one core only: the arrival's wake-up was a switch on it */
};

/* What the choice is made from. */
struct eng_idle_in {
	struct eng_idle_cost cost;
	__u64 gap_ns; /* expected idle time to the next arrival; 0: nothing arrives */
	__u64 pps; /* packets a second arriving on the worker's queues */
	__u64 nap_ns; /* longest nap (the latency it may add); 0: never nap */
	__u32 ring; /* the smallest RX ring of the worker's sockets */
	bool shared; /* its core is shared with the work that feeds it (a NAPI thread) */
	bool needs_rx; /* false: txonly, whose pacing spins */
};

struct eng_idle_out {
	enum eng_idle_how how;
	__u64 ns; /* spin: before it sleeps; nap: the nap; sleep: the timeout */
};

/* The choice: a pure function of @in. */
struct eng_idle_out eng_idle_choose(const struct eng_idle_in *in);

const char *eng_idle_how_name(enum eng_idle_how how);

/* The gap below which a nap pays: one timer wake-up per nap against one wake-up per
 * arrival (0: naps never pay). */
__u64 eng_idle_nap_below(const struct eng_idle_cost *c, __u64 nap_ns);

/* A worker's view of its traffic, sampled every ENG_IDLE_SAMPLE_NS. */
struct eng_idle {
	struct eng_idle_in in; /* the inputs of the choice in force */
	struct eng_idle_out out; /* the choice in force */
	int fd; /* /proc/thread-self/schedstat, -1 where the kernel has none */
	__u64 at_ns, rx, wait_ns; /* the sample's start: time, packets, runnable wait */
	__u64 gap_sum, gaps; /* idle periods that ended in an arrival, not in a nap */
	__u64 meas_gap, meas_pps; /* the last gap measured and the rate it was seen at */
	__u32 hits; /* samples in a row with the core contended */
	bool slept; /* this sample slept or napped: its runnable wait holds wake-ups */
	__u64 shared_since;
};

/* @in: cost, nap_ns, ring, needs_rx set; the rest is learnt. Starts spinning for a
 * sample, to see the gap. */
void eng_idle_init(struct eng_idle *s, const struct eng_idle_in *in);
void eng_idle_fini(struct eng_idle *s);
/* An idle period of @ns ended in an arrival; @napped: part of it was a nap. */
void eng_idle_arrived(struct eng_idle *s, __u64 ns, bool napped);
/* Every ENG_IDLE_SAMPLE_NS: @rx packets received so far; sets s->out. */
void eng_idle_sample(struct eng_idle *s, __u64 now, __u64 rx);

/* Measures what a wake-up costs a thread on @core, woken from @waker_core (the same:
 * a local switch), and a timer's: @n of each, some 20 ms. 0 or -errno. */
int eng_idle_measure(int core, int waker_core, __u32 n, struct eng_idle_cost *out);

#endif /* XPILE_IDLE_H */
