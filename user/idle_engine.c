// SPDX-License-Identifier: BSD-3-Clause
/*
 * The idle policy's engine side (idle_engine.h): the wake-up's cost measured before the
 * workers start, the line that says it and which busy-poll path is in use, and the
 * workers' choices in the stats.
 */
#include <sched.h>
#include <stdio.h>

#include "engine.h"
#include "idle.h"
#include "idle_engine.h"

/* Defaults where the measure fails: a bare-metal machine's. */
#define WAKE_DEFAULT_NS 5000ull
#define TIMER_DEFAULT_NS 5000ull
#define MEASURE_WAKES 64u

/* A core this thread may run on other than @core, for the waker; @core if none. */
static int other_core(int core)
{
	cpu_set_t set;

	if (sched_getaffinity(0, sizeof(set), &set))
		return core;
	for (int i = 0; i < CPU_SETSIZE; i++)
		if (i != core && CPU_ISSET(i, &set))
			return i;
	return core;
}

/* The interface's IRQ deferral (the kernel's AF_XDP busy-poll set-up), -1 if unread. */
static long long sysfs_num(const char *ifname, const char *what)
{
	char path[96];
	long long v = -1;
	FILE *f;

	snprintf(path, sizeof(path), "/sys/class/net/%s/%s", ifname, what);
	f = fopen(path, "re");
	if (f) {
		if (fscanf(f, "%lld", &v) != 1)
			v = -1;
		(void)fclose(f); /* read only */
	}
	return v;
}

bool eng_busy_poll_auto(const struct engine *e)
{
	const struct eng_config *c = &e->cfg;

	if (c->busy_poll || !c->mode->needs_rx || !c->nports)
		return false;
	for (__u32 i = 0; i < c->nports; i++)
		if (sysfs_num(e->ports[i].ifname, "napi_defer_hard_irqs") <= 0 ||
		    sysfs_num(e->ports[i].ifname, "gro_flush_timeout") <= 0)
			return false;
	return true;
}

/* Which busy-poll path is in use, into @buf. */
static void busy_poll_note(const struct engine *e, char *buf, size_t len)
{
	const struct eng_config *c = &e->cfg;
	size_t n = 0;

	n += snprintf(
		buf, len, "%s",
		c->busy_poll ?
			"on (SO_PREFER_BUSY_POLL, a recvfrom per pass drives NAPI)" :
		e->busy_auto ?
			"auto (SO_PREFER_BUSY_POLL: the interfaces defer their IRQs; a queue's worker drives its NAPI once it shows a NAPI id)" :
			"off");
	for (__u32 i = 0; i < c->nports && n < len; i++) {
		long long d = sysfs_num(e->ports[i].ifname, "napi_defer_hard_irqs");
		long long g = sysfs_num(e->ports[i].ifname, "gro_flush_timeout");

		if (d > 0 && g > 0)
			n += snprintf(
				buf + n, len - n,
				"%s %s defers its IRQs (napi_defer_hard_irqs %lld, gro_flush_timeout %lld ns)",
				n ? ";" : "", e->ports[i].ifname, d, g);
		else if (c->busy_poll)
			n += snprintf(
				buf + n, len - n,
				"%s %s does not defer its IRQs: set napi_defer_hard_irqs and gro_flush_timeout for busy polling to pay",
				n ? ";" : "", e->ports[i].ifname);
	}
}

void eng_idle_setup(struct engine *e)
{
	const struct eng_config *c = &e->cfg;
	struct eng_idle_cost cost = { .wake_ns = WAKE_DEFAULT_NS, .timer_ns = TIMER_DEFAULT_NS };
	int core = e->nworkers ? e->workers[0].core : 0;
	char bp[512], how[64];
	__u64 below;

	if (c->spin || !c->mode->needs_rx)
		return; /* spins: the costs change nothing */
	if (c->idle_wake_us) {
		cost.wake_ns = (__u64)c->idle_wake_us * 1000;
		cost.timer_ns = cost.wake_ns;
		snprintf(how, sizeof(how), "given");
	} else if (eng_idle_measure(core, other_core(core), MEASURE_WAKES, &cost)) {
		snprintf(how, sizeof(how), "not measurable here: a default");
	} else {
		snprintf(how, sizeof(how), "measured on core %d, %s", core,
			 cost.local ? "woken on its own core" : "woken from another core");
	}
	e->wake_ns = cost.wake_ns;
	e->timer_ns = cost.timer_ns;
	below = eng_idle_nap_below(&cost, (__u64)c->idle_nap_us * 1000);
	busy_poll_note(e, bp, sizeof(bp));
	if (c->json) {
		printf("{\"type\":\"idle_policy\",\"wake_ns\":%llu,\"timer_ns\":%llu,\"measured\":%s,\"local\":%s,\"spin_below_ns\":%llu,\"nap_ns\":%llu,\"nap_below_ns\":%llu,\"busy_poll\":\"%s\"}\n",
		       (unsigned long long)cost.wake_ns, (unsigned long long)cost.timer_ns,
		       cost.measured ? "true" : "false", cost.local ? "true" : "false",
		       (unsigned long long)cost.wake_ns, (unsigned long long)c->idle_nap_us * 1000,
		       (unsigned long long)below,
		       c->busy_poll ? "on" :
		       e->busy_auto ? "auto" :
				      "off");
	} else if (!c->quiet) {
		char plan[160];

		/* Where naps pay they beat a spin at any gap: it spins only where the RX ring
		 * cannot hold a nap that outlasts its own wake-up. */
		if (below)
			snprintf(
				plan, sizeof(plan),
				"nap %u us while the expected gap is under %.1f us (spin while under %.1f us only where the RX ring cannot hold a nap)",
				c->idle_nap_us, below / 1e3, cost.wake_ns / 1e3);
		else
			snprintf(plan, sizeof(plan),
				 "no nap pays: spin while the expected gap is under %.1f us",
				 cost.wake_ns / 1e3);
		ut_say(0,
		       "idle policy: a wake-up costs %.1f us of CPU, a timer's %.1f us (%s): %s, else sleep; busy-poll %s",
		       cost.wake_ns / 1e3, cost.timer_ns / 1e3, how, plan, bp);
	}
}

void eng_idle_stats(const struct engine *e, double t)
{
	if (!e->cfg.json || e->cfg.spin)
		return;
	for (__u32 i = 0; i < e->nworkers; i++) {
		const struct eng_worker *w = &e->workers[i];
#define LD(f) (unsigned long long)__atomic_load_n(&w->idle.f, __ATOMIC_RELAXED)
		printf("{\"type\":\"idle\",\"time\":%.3f,\"core\":%d,\"policy\":\"%s\",\"gap_ns\":%llu,\"pps\":%llu,\"shared\":%s,\"spins\":%llu,\"naps\":%llu,\"sleeps\":%llu}\n",
		       t, w->core,
		       eng_idle_how_name(__atomic_load_n(&w->idle.how, __ATOMIC_RELAXED)),
		       LD(gap_ns), LD(pps), LD(shared) ? "true" : "false", LD(spins), LD(naps),
		       LD(sleeps));
#undef LD
	}
}
