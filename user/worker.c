// SPDX-License-Identifier: BSD-3-Clause
/*
 * The per-core loop (worker.h): completions, refills and the mode's poll on each of its
 * sockets per turn, the feature hooks between turns, the idle wait. The ring moves are
 * rings.c.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/futex.h>
#include <sched.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "audit.h"
#include "capture.h"
#include "dom.h"
#include "engine.h"
#include "idle.h"
#include "leak.h"
#include "rings.h"
#include "tap.h"
#include "uring_wait.h"
#include "path.h"
#include "worker.h"
#include "xpile/qsbr.h"

static void park(struct eng_worker *w)
{
	struct engine *e = w->e;
	__u32 gen = __atomic_load_n(&e->pause_gen, __ATOMIC_ACQUIRE);

	if (w->parked_gen == gen)
		return;
	w->parked_gen = gen;
	if (e->ho)
		w->ho_park_ns = eng_now_ns();
	xp_qsbr_offline(e->grace, w->grace_id); /* parked: no grace period waits for it */
	__atomic_fetch_add(&e->parked, 1, __ATOMIC_ACQ_REL);
	/* Asleep on the flag itself: eng_resume() wakes it at once (a handover's pause
	 * is the traffic's), and a woken thread gets its core back sooner than a spinning
	 * or a timed sleeper on a busy machine. The timeout only guards a lost wake. */
	while (__atomic_load_n(&e->paused, __ATOMIC_ACQUIRE)) {
		const struct timespec ms = { 0, 1000000 };

		syscall(SYS_futex, &e->paused, FUTEX_WAIT_PRIVATE, 1, &ms, NULL, 0);
	}
	xp_qsbr_online(e->grace, w->grace_id);
}

static bool drained(struct eng_worker *w)
{
	__u32 i;

	for (i = 0; i < w->nq; i++) {
		struct eng_q *q = w->q[i];

		if (q->tx_inflight || xp_ring_pending(&q->xsk->rx))
			return false;
	}
	return true;
}

/* Done (xp_worker_done()): it leaves once the kernel completed all it sent, so that
 * every packet of a --count is on the wire, or told as unsent, when run returns. */
static inline bool finished(const struct eng_worker *w)
{
	if (__builtin_expect(!w->done, 1))
		return false;
	for (__u32 i = 0; i < w->nq; i++)
		if (w->q[i]->tx_inflight)
			return false;
	return true;
}

/* Test hook: the ledger must catch a frame that vanishes and one that is freed while
 * still in a fill ring, while running (the live audit) and at exit (exit status 3).
 * Fired once, as soon as the fill ring holds frames (txonly: at once). */
static void inject_fault(struct eng_worker *w)
{
	struct xp_ring *fill;
	__u64 h;

	if (!w->nq)
		return;
	if (w->e->cfg.fault == ENG_FAULT_LOSE) {
		w->fault_done = !xp_deal_get(w->q[0]->wd->deal, &h, 1);
	} else if (w->e->cfg.fault == ENG_FAULT_TWICE) {
		fill = &w->q[0]->xsk->fill;
		if (fill->cached_prod != __atomic_load_n(fill->consumer, __ATOMIC_ACQUIRE)) {
			h = *xp_ring_addr(fill, fill->cached_prod - 1);
			xp_deal_put(w->q[0]->wd->deal, &h, 1);
			w->fault_done = true;
		}
	}
}

/* The idle policy's view (idle.h): the worker's queues' packets so far. */
static __u64 rx_total(const struct eng_worker *w)
{
	__u64 rx = 0;

	for (__u32 i = 0; i < w->nq; i++)
		rx += w->q[i]->c.rx_packets;
	return rx;
}

static void idle_start(struct eng_worker *w, struct eng_idle *st)
{
	const struct engine *e = w->e;
	struct eng_idle_in in = {
		.cost = { .wake_ns = e->wake_ns, .timer_ns = e->timer_ns },
		.nap_ns = (__u64)e->cfg.idle_nap_us * 1000,
		.ring = e->cfg.rx_ring,
		.needs_rx = e->cfg.mode->needs_rx,
	};

	eng_idle_init(st, &in);
}

/* What the stats say of it (the main thread reads them relaxed). */
#define IDLE_SET(w, f, v) __atomic_store_n(&(w)->idle.f, (v), __ATOMIC_RELAXED)

/* One idle turn: spin on, nap, or sleep until an arrival; @since: when the idle period
 * began, @napped: it holds a nap. */
static void idle_turn(struct eng_worker *w, struct eng_idle *st, __u64 now, __u64 since,
		      bool *napped)
{
	if (now - st->at_ns >= ENG_IDLE_SAMPLE_NS) {
		eng_idle_sample(st, now, rx_total(w));
		IDLE_SET(w, how, st->out.how);
		IDLE_SET(w, gap_ns, st->in.gap_ns);
		IDLE_SET(w, pps, st->in.pps);
		IDLE_SET(w, shared, st->in.shared);
	}
	if (st->out.how == ENG_IDLE_SPIN && now - since < st->out.ns)
		return;
	st->slept = true;
	eng_wstats_sleep(&w->ws);
	/* Asleep it reads nothing shared: offline, so no grace period waits for its wake. */
	xp_qsbr_offline(w->e->grace, w->grace_id);
	if (st->out.how == ENG_IDLE_NAP) {
		const struct timespec d = { 0, (long)st->out.ns };

		*napped = true;
		clock_nanosleep(CLOCK_MONOTONIC, 0, &d, NULL);
	} else {
		eng_uwait_sleep(w, (int)(ENG_IDLE_SLEEP_NS / 1000000));
	}
	xp_qsbr_online(w->e->grace, w->grace_id);
}

/* The idle period that just ended in work, counted the way it was waited out. */
static void idle_end(struct eng_worker *w, struct eng_idle *st, __u64 now, __u64 since, bool napped)
{
	eng_idle_arrived(st, now - since, napped);
	if (napped)
		IDLE_SET(w, naps, w->idle.naps + 1);
	else if (st->out.how == ENG_IDLE_SPIN && now - since < st->out.ns)
		IDLE_SET(w, spins, w->idle.spins + 1);
	else
		IDLE_SET(w, sleeps, w->idle.sleeps + 1);
}

/* The top of a turn, where the worker holds no frame in flight: the live audit's cut,
 * the pause, the stop's drain. False: leave the loop. */
static inline bool turn_top(struct eng_worker *w)
{
	struct engine *e = w->e;

	/* Between turns it holds no punt set, capture rule or ring (grace.h). */
	xp_qsbr_quiescent(e->grace, w->grace_id);
	if (__builtin_expect(__atomic_load_n(&e->cut_gen, __ATOMIC_ACQUIRE) != w->cut_gen, 0))
		eng_cut_take(w);
	if (__atomic_load_n(&e->paused, __ATOMIC_ACQUIRE)) {
		park(w);
		if (__atomic_load_n(&e->hands_off, __ATOMIC_ACQUIRE))
			return false; /* the rings are another engine's now */
	}
	if (__builtin_expect(e->ho && !w->ho_resume_ns, 0))
		w->ho_resume_ns = eng_now_ns(); /* its first turn that may touch a ring */
	if (__atomic_load_n(&e->stop, __ATOMIC_ACQUIRE)) {
		/* Stop: no more fills; forward what is in flight, wait for completions. */
		if (!w->loop.stop_deadline)
			w->loop.stop_deadline = eng_now_ns() + 2000000000ull;
		if (drained(w) || eng_now_ns() > w->loop.stop_deadline)
			return false;
	}
	return true;
}

/* A queue's ring work before the mode's: completions, refills, busy-poll. */
static inline __u32 queue_rings(struct eng_worker *w, struct eng_q *q, bool rx)
{
	__u32 work = eng_complete(w, q);

	if (rx && !w->loop.stop_deadline)
		work += eng_refill(w, q);
	/* Preferred busy polling defers the queue's NAPI to whoever asks for it: every
	 * pass asks (one recvfrom runs up to the busy-poll budget of it on this core), or
	 * nothing would feed the RX ring. */
	if (__atomic_load_n(&q->busy_live, __ATOMIC_RELAXED) && rx)
		xp_xsk_wake_rx(q->xsk);
	return work;
}

/* The features between turns: the fault hook, the host TAP. */
static inline __u32 turn_features(struct eng_worker *w)
{
	if (__builtin_expect(w->e->cfg.fault && !w->fault_done, 0))
		inject_fault(w);
	return w->tapw ? eng_tap_poll(w) : 0;
}

/* The bottom of a turn that moved @work: capture, the handover's clock, the idle wait. */
static inline void turn_bottom(struct eng_worker *w, __u32 work)
{
	struct engine *e = w->e;
	struct eng_loop *sp = &w->loop;
	struct ut_cap_ring *cr;

	eng_wstats_turn(&w->ws, work);
	if (!work && (cr = eng_capture_ring(w)))
		ut_cap_idle(cr); /* a quiet worker's frames still reach the file */
	if (work && e->ho) { /* the handover's pause is measured from these */
		w->ho_last_work_ns = eng_now_ns();
		if (!w->ho_first_work_ns)
			w->ho_first_work_ns = w->ho_last_work_ns;
	}
	if (work && sp->idle_since) {
		idle_end(w, &sp->st, eng_now_ns(), sp->idle_since, sp->napped);
		sp->idle_since = 0;
		sp->napped = false;
	} else if (!work && !e->cfg.spin) {
		__u64 now = eng_now_ns();

		if (!sp->idle_since)
			sp->idle_since = now;
		idle_turn(w, &sp->st, now, sp->idle_since, &sp->napped);
	}
}

/* Own-loop style (xp_worker_turn(), xp_worker_idle(): api_pkt.c): the same pieces. */
bool eng_turn_begin(struct eng_worker *w)
{
	bool rx = w->e->cfg.mode->needs_rx;

	eng_leak_check_all(w);
	if (!turn_top(w))
		return false;
	for (__u32 i = 0; i < w->nq; i++)
		w->loop_work += queue_rings(w, w->q[i], rx);
	w->loop_work += turn_features(w);
	return !finished(w);
}

void eng_turn_end(struct eng_worker *w, __u32 work)
{
	eng_leak_check_all(w);
	turn_bottom(w, work + w->loop_work);
	w->loop_work = 0;
}

/* One socket's turn of the mode: the burst callback gets what arrived; a poll does
 * its own receiving (or sending). */
static inline __u32 mode_turn(struct eng_worker *w, const struct eng_mode *m, struct eng_q *q)
{
	__u32 n;

	if (m->on_burst) {
		n = eng_rx(w, q, (struct xdp_desc *)w->pkts, w->e->cfg.batch);
		if (n) {
			m->on_burst((struct xp_worker *)w, &q->pub, w->pkts, n, m->arg);
			eng_leak_check(w, q);
		}
		return n;
	}
	if (m->on_poll) {
		n = m->on_poll((struct xp_worker *)w, &q->pub, m->arg);
		eng_leak_check(w, q);
		return n;
	}
	return m->poll(w, q);
}

static void run_loop(struct eng_worker *w, const struct eng_mode *m)
{
	__u32 i, work;

	while (turn_top(w)) {
		work = 0;
		for (i = 0; i < w->nq; i++) {
			struct eng_q *q = w->q[i];

			work += queue_rings(w, q, m->needs_rx);
			work += mode_turn(w, m, q);
		}
		work += turn_features(w);
		if (finished(w))
			break;
		turn_bottom(w, work);
	}
}

void *eng_worker_main(void *arg)
{
	struct eng_worker *w = arg;
	struct engine *e = w->e;
	const struct eng_mode *m = e->cfg.mode;
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(w->core, &set);
	pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
	/* A slot per worker was made at set-up: this cannot fail. Online from here on. */
	xp_qsbr_register(e->grace, &w->grace_id);
	idle_start(w, &w->loop.st);
	if (eng_uwait_init(w)) {
		e->fault_status = ENG_SETUP_FAILED; /* exit status 1: told by eng_uwait_init() */
		__atomic_store_n(&e->stop, 1, __ATOMIC_RELEASE);
	}
	if (m->worker_init)
		m->worker_init((struct xp_worker *)w, m->arg);
	if (m->worker_main)
		m->worker_main((struct xp_worker *)w, m->arg);
	else
		run_loop(w, m);
	if (m->worker_fini)
		m->worker_fini((struct xp_worker *)w, m->arg);
	eng_leak_check_all(w);
	eng_idle_fini(&w->loop.st);
	eng_uwait_fini(w);
	eng_tap_stop(w); /* every frame in io_uring back before the worker goes */
	xp_qsbr_unregister(e->grace, w->grace_id);
	__atomic_store_n(&w->exited, true, __ATOMIC_RELEASE);
	__atomic_fetch_add(&e->finished, 1, __ATOMIC_ACQ_REL);
	return NULL;
}
