// SPDX-License-Identifier: BSD-3-Clause
/*
 * The idle worker's policy (user/idle.c): eng_idle_choose() naps where a timer wake-up
 * per nap is cheaper than a wake-up per arrival (within half the RX ring), which at any
 * shorter gap is cheaper than a spin too; spins only where no nap pays and the expected
 * gap is under a wake-up (up to one wake-up's worth); sleeps otherwise; never spins on a
 * shared core; txonly spins. The sampler turns idle periods and packet counts
 * into the gap and the rate, and the start's measure gives real, positive costs.
 * The policy is a pure function of plain numbers, so this file builds user/idle.c alone.
 */
#include "../../user/idle.c"

#include "xt.h"

/* The VM: a wake-up 40 us, a timer's 40 us; a 200 us nap; a 2048 RX ring. */
static struct eng_idle_in vm(__u64 gap, __u64 pps)
{
	return (struct eng_idle_in){ .cost = { .wake_ns = 40000, .timer_ns = 40000 },
				     .gap_ns = gap,
				     .pps = pps,
				     .nap_ns = 200000,
				     .ring = 2048,
				     .needs_rx = true };
}

/* At 3 Mpps, 10 us gaps: a 200 us nap is one timer wake-up per 600 frames, where a spin
 * takes the whole core; the nap stays within half the ring (341 us of arrivals). */
static void test_nap_beats_spin(void)
{
	struct eng_idle_in in = vm(10000, 3000000);
	struct eng_idle_out o = eng_idle_choose(&in);

	XT_EQ(o.how, ENG_IDLE_NAP);
	XT_EQ(o.ns, 200000);
	in.gap_ns = 100; /* however short the gap */
	XT_EQ(eng_idle_choose(&in).how, ENG_IDLE_NAP);
	in.pps = 12000000; /* half the ring is 85 us of arrivals: a shorter nap */
	XT_EQ(eng_idle_choose(&in).ns, 85333);
}

/* Where no nap pays (--idle-nap-us 0, or a timer's wake-up as dear as the nap). */
static void test_spin_below_a_wake_up(void)
{
	struct eng_idle_in in = vm(10000, 3000000);
	struct eng_idle_out o;

	in.nap_ns = 0;
	o = eng_idle_choose(&in);
	XT_EQ(o.how, ENG_IDLE_SPIN);
	XT_EQ(o.ns, 40000); /* a spin longer than a wake-up costs more than the sleep */
	in.gap_ns = 39999;
	XT_EQ(eng_idle_choose(&in).how, ENG_IDLE_SPIN);
	in.cost.wake_ns = 200; /* bare metal: at least a microsecond's spin */
	in.gap_ns = 100;
	XT_EQ(eng_idle_choose(&in).ns, 1000);
	in.cost.wake_ns = 5000000; /* given absurdly high: at most a sleep's timeout */
	XT_EQ(eng_idle_choose(&in).ns, ENG_IDLE_SLEEP_NS);
	in = vm(10000, 3000000); /* --idle-wake-us 10000: timer = wake-up = 10 ms > nap */
	in.cost = (struct eng_idle_cost){ .wake_ns = 10000000, .timer_ns = 10000000 };
	XT_EQ(eng_idle_choose(&in).how, ENG_IDLE_SPIN);
}

static void test_nap_where_it_pays(void)
{
	/* 0.5 Mpps in 32-frame bursts: a 64 us gap, over a wake-up: a nap of 200 us is
	 * one wake-up for 3 arrivals. */
	struct eng_idle_in in = vm(64000, 500000);
	struct eng_idle_out o = eng_idle_choose(&in);

	XT_EQ(o.how, ENG_IDLE_NAP);
	XT_EQ(o.ns, 200000);
	/* Up to nap * wake / timer: 200 us here; beyond, a wake-up per arrival is cheaper. */
	in.gap_ns = 199999;
	XT_EQ(eng_idle_choose(&in).how, ENG_IDLE_NAP);
	in.gap_ns = 200000;
	XT_EQ(eng_idle_choose(&in).how, ENG_IDLE_SLEEP);
	/* A timer's wake-up dearer than an arrival's moves the bound down. */
	in = vm(64000, 500000);
	in.cost.timer_ns = 160000;
	XT_EQ(eng_idle_nap_below(&in.cost, in.nap_ns), 50000);
	XT_EQ(eng_idle_choose(&in).how, ENG_IDLE_SLEEP);
	/* --idle-nap-us 0, or a nap no longer than its own wake-up: never a nap. */
	in = vm(64000, 500000);
	in.nap_ns = 0;
	XT_EQ(eng_idle_choose(&in).how, ENG_IDLE_SLEEP);
	in.nap_ns = 40000;
	XT_EQ(eng_idle_choose(&in).how, ENG_IDLE_SLEEP);
}

static void test_nap_fits_the_ring(void)
{
	/* 8 Mpps on a shared core (no spin): half a 2048 ring is 128 us of arrivals. */
	struct eng_idle_in in = vm(20000, 8000000);
	struct eng_idle_out o;

	in.shared = true;
	o = eng_idle_choose(&in);
	XT_EQ(o.how, ENG_IDLE_NAP);
	XT_EQ(o.ns, 128000);
	in.ring = 64; /* 4 us of arrivals: shorter than the timer's wake-up, so no nap */
	XT_EQ(eng_idle_choose(&in).how, ENG_IDLE_SLEEP);
	in.shared = false; /* and a gap under a wake-up: a spin */
	XT_EQ(eng_idle_choose(&in).how, ENG_IDLE_SPIN);
}

static void test_sleep_at_low_rate_and_no_spin_shared(void)
{
	struct eng_idle_in in = vm(1000000, 1000); /* 1 kpps: a millisecond apart */

	XT_EQ(eng_idle_choose(&in).how, ENG_IDLE_SLEEP);
	XT_EQ(eng_idle_choose(&in).ns, ENG_IDLE_SLEEP_NS);
	in = vm(0, 0); /* nothing arrives */
	XT_EQ(eng_idle_choose(&in).how, ENG_IDLE_SLEEP);
	in = vm(10000, 3000000);
	in.shared = true; /* spinning would starve the NAPI thread feeding it */
	XT_CHECK(eng_idle_choose(&in).how != ENG_IDLE_SPIN);
	in.nap_ns = 0;
	XT_EQ(eng_idle_choose(&in).how, ENG_IDLE_SLEEP);
}

static void test_txonly_spins(void)
{
	struct eng_idle_in in = vm(0, 0);

	in.needs_rx = false;
	XT_EQ(eng_idle_choose(&in).how, ENG_IDLE_SPIN);
	XT_EQ(eng_idle_choose(&in).ns, ENG_IDLE_TXONLY_SPIN_NS);
	XT_CHECK(!strcmp(eng_idle_how_name(ENG_IDLE_NAP), "nap"));
}

/* The sampler: idle periods seen spinning give the gap; naps do not, and then the gap
 * follows the rate; nothing arriving gives none. */
static void test_sampler(void)
{
	struct eng_idle_in in = vm(0, 0);
	struct eng_idle s;
	__u64 t = 1000000000ull, rx = 0;

	eng_idle_init(&s, &in);
	XT_EQ(s.out.how, ENG_IDLE_SPIN); /* the first sample spins to see the gap */
	eng_idle_sample(&s, t, rx);
	/* 50 ms at 3 Mpps, idle 10 us at a time: a nap. */
	for (int i = 0; i < 100; i++)
		eng_idle_arrived(&s, 10000, false);
	t += ENG_IDLE_SAMPLE_NS, rx += 150000;
	eng_idle_sample(&s, t, rx);
	XT_EQ(s.in.pps, 3000000);
	XT_EQ(s.in.gap_ns, 10000);
	XT_EQ(s.out.how, ENG_IDLE_NAP);
	/* The rate falls to 0.5 Mpps, gaps of 64 us: a nap. */
	for (int i = 0; i < 100; i++)
		eng_idle_arrived(&s, 64000, false);
	t += ENG_IDLE_SAMPLE_NS, rx += 25000;
	eng_idle_sample(&s, t, rx);
	XT_EQ(s.out.how, ENG_IDLE_NAP);
	/* Napping the gaps are not seen: a quarter of the rate, four times the gap. */
	eng_idle_arrived(&s, 200000, true);
	t += ENG_IDLE_SAMPLE_NS, rx += 6250;
	eng_idle_sample(&s, t, rx);
	XT_EQ(s.in.gap_ns, 256000);
	XT_EQ(s.out.how, ENG_IDLE_SLEEP);
	/* Nothing at all. */
	t += ENG_IDLE_SAMPLE_NS;
	eng_idle_sample(&s, t, rx);
	XT_EQ(s.in.gap_ns, 0);
	XT_EQ(s.out.how, ENG_IDLE_SLEEP);
	eng_idle_fini(&s);
}

static void test_measure(void)
{
	struct eng_idle_cost c = {};
	long n = sysconf(_SC_NPROCESSORS_ONLN);

	XT_EQ(eng_idle_measure(0, n > 1 ? 1 : 0, 16, &c), 0);
	XT_CHECK(c.measured);
	XT_CHECK(c.wake_ns > 0 && c.wake_ns < 10000000);
	XT_CHECK(c.timer_ns > 0 && c.timer_ns < 10000000);
	XT_EQ(c.local, n <= 1);
	fprintf(stderr, "wake-up %llu ns, timer %llu ns of CPU\n", (unsigned long long)c.wake_ns,
		(unsigned long long)c.timer_ns);
}

int main(void)
{
	XT_RUN(test_nap_beats_spin);
	XT_RUN(test_spin_below_a_wake_up);
	XT_RUN(test_nap_where_it_pays);
	XT_RUN(test_nap_fits_the_ring);
	XT_RUN(test_sleep_at_low_rate_and_no_spin_shared);
	XT_RUN(test_txonly_spins);
	XT_RUN(test_sampler);
	XT_RUN(test_measure);
	return xt_done();
}
