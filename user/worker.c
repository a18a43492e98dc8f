// SPDX-License-Identifier: BSD-3-Clause
/*
 * The per-core loop and the ring moves every mode shares. Each function runs on the
 * worker owning @q: rings, cache and ledger account are all single-threaded here.
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

#include "engine.h"

/* Fill as much as the ring takes, in bulks the dealer can give: a bulk the pile cannot
 * meet is halved until it can, so a UMEM smaller than the rings still fills what it has.
 * No ring holds more than its share of a small pool (engine.c size_fills()). */
__u32 eng_refill(struct eng_worker *w, struct eng_q *q)
{
	struct xp_ring *fill = &q->xsk->fill;
	struct eng_wdom *wd = q->wd;
	__u32 batch = w->e->cfg.batch, total = 0, n, idx, i;
	__u32 held = (__u32)(q->c.fill_posted - q->c.rx_descs), cap = q->dom->fill_cap;
	__u32 room = held < cap ? cap - held : 0;
	struct xp_ledger_map m = xp_ledger_map_get(wd->acct);

	while (total < room && (n = xp_ring_prod_free(fill, batch)) > 0) {
		if (n > batch)
			n = batch;
		if (n > room - total)
			n = room - total;
		/* M3: the dealer hands out every channel's share, channels round-robin,
		 * whatever came back to this core. */
		while (n && xp_deal_get(wd->deal, w->scratch, n))
			n /= 2;
		if (!n) {
			q->c.fill_starved++;
			break;
		}
		xp_ring_prod_reserve(fill, n, &idx);
		xp_ledger_count(wd->acct, XP_PLACE_FREE, XP_PLACE_FILL, w->scratch, n,
				sizeof(__u64));
		for (i = 0; i < n; i++) {
			*xp_ring_addr(fill, idx + i) = w->scratch[i];
			xp_ledger_mark(&m, w->scratch[i], XP_PLACE_FILL);
		}
		total += n;
		if (total >= 4 * batch)
			break;
	}
	if (!total)
		return 0;
	xp_ring_prod_submit(fill);
	q->c.fill_posted += total;
	if (q->xsk->need_wakeup && xp_ring_needs_wakeup(fill)) {
		xp_xsk_wake_rx(q->xsk);
		q->c.rx_wakeups++;
	}
	return total;
}

/* A descriptor from the kernel is trusted only once it points inside one frame... */
static inline bool desc_ok(const struct xp_layout *l, const struct xdp_desc *d)
{
	__u64 handle = xp_layout_handle(l, d->addr);
	__u64 data = xp_layout_data(l, d->addr);

	return handle <= l->area_size - l->chunk_size && data >= handle &&
	       data + d->len <= handle + l->chunk_size && d->len <= l->chunk_size;
}

/*
 * ...and that frame is one we gave it: the ledger has it in @p (RX: fill; completion:
 * tx), and @h (below the area size) is exactly its start. The state byte is the one
 * every transition writes already; unaligned chunks put a frame start anywhere in its
 * slot, so there d->starts says where (aligned: a slot is a chunk). Returns the slot,
 * or -1.
 */
static inline long frame_in(const struct eng_dom *d, const struct xp_ledger_acct *a, __u64 h,
			    enum xp_place p)
{
	__u64 s = h >> a->shift;

	if (__builtin_expect(s >= a->nslots, 0))
		return -1;
	if (d->starts && d->starts[s] != (__u32)h)
		return -1;
	return __atomic_load_n(&a->state[s], __ATOMIC_RELAXED) == p ? (long)s : -1;
}

int eng_dom_starts(struct eng_dom *d, const struct xp_ledger_acct *a)
{
	/* Aligned chunks of a power-of-two size: a slot is a chunk, its start the handle
	 * (unless one frame alone made the slots wider). */
	if (!d->unaligned && (1ull << a->shift) == d->layout.chunk_size)
		return 0;
	d->starts = malloc(a->nslots * sizeof(*d->starts));
	if (!d->starts)
		return -ENOMEM;
	/* No frame starts at ~0 (frames are 64-byte aligned). */
	memset(d->starts, 0xff, a->nslots * sizeof(*d->starts));
	for (__u32 i = 0; i < d->layout.nframes; i++) {
		__u64 h = xp_layout_frame(&d->layout, i);

		d->starts[h >> a->shift] = (__u32)h;
	}
	return 0;
}

/*
 * Takes frame @addr (slot @s, checked in @from) to @to. The batch was counted first
 * (xp_ledger_count(): a live audit that sees a byte moved sees the move counted), so
 * the byte is one store, and a frame given twice in one batch is found at its second
 * check. A debug ledger checks and writes the byte in its count: one frame at a time.
 */
static inline void frame_take(struct xp_ledger_acct *a, long s, const __u64 *addr,
			      enum xp_place from, enum xp_place to)
{
	if (__builtin_expect(a->debug, 0))
		xp_ledger_count(a, from, to, addr, 1, sizeof(*addr));
	else
		__atomic_store_n(&a->state[s], (__u8)to, __ATOMIC_RELAXED);
}

__u32 eng_rx(struct eng_worker *w, struct eng_q *q, struct xdp_desc *out, __u32 max)
{
	const struct eng_dom *dom = q->dom;
	const struct xp_layout *l = &dom->layout;
	struct xp_ledger_acct *a = q->wd->acct;
	struct xp_ring *rx = &q->xsk->rx;
	__u32 n, idx, i, k = 0, bad = 0, bad_last = 0, last = 0, ring_last = 0;
	__u64 bytes = 0, bytes_last = 0;
	long s;

	n = xp_ring_cons_peek(rx, max, &idx);
	if (!n)
		return 0;
	/* All of them counted fill -> app first; what is not taken is counted back. */
	if (!a->debug)
		xp_ledger_count(a, XP_PLACE_FILL, XP_PLACE_APP, NULL, n, 0);
	for (i = 0; i < n; i++) {
		const struct xdp_desc *d = xp_ring_desc(rx, idx + i);

		if (__builtin_expect(!desc_ok(l, d), 0) ||
		    __builtin_expect(
			    (s = frame_in(dom, a, xp_layout_handle(l, d->addr), XP_PLACE_FILL)) < 0,
			    0)) {
			bad++;
			continue;
		}
		frame_take(a, s, &d->addr, XP_PLACE_FILL, XP_PLACE_APP);
		out[k++] = *d;
		bytes += d->len;
		if (!(d->options & XDP_PKT_CONTD)) {
			last = k;
			ring_last = i + 1;
			bytes_last = bytes;
			bad_last = bad;
			q->c.rx_packets++;
		}
	}
	/* Multi-buffer: leave a packet's head frags in the ring until its tail arrives,
	 * so every batch holds whole packets (a chain longer than the batch goes as is). */
	if (last < k && last > 0) {
		rx->cached_cons -= n - ring_last;
		for (i = last; i < k; i++) /* back to fill: read, and taken, again next time */
			frame_take(a,
				   frame_in(dom, a, xp_layout_handle(l, out[i].addr), XP_PLACE_APP),
				   &out[i].addr, XP_PLACE_APP, XP_PLACE_FILL);
		k = last;
		bytes = bytes_last;
		bad = bad_last; /* the rest are read, and counted, again next time */
	}
	if (__builtin_expect(k < n, 0) && !a->debug)
		xp_ledger_count(a, XP_PLACE_APP, XP_PLACE_FILL, NULL, n - k, 0);
	q->c.rx_bytes += bytes;
	q->c.rx_descs += k;
	xp_ring_cons_release(rx);
	q->c.bad_descs += bad;
	if (w->cap)
		eng_capture_batch(w, q, out, k, ENG_CAP_RX);
	if (w->tapw)
		k = eng_tap_rx(w, q, out, k); /* what is for the host leaves the batch */
	return k;
}

void eng_free_descs(struct eng_wdom *wd, __u64 *scratch, const struct xdp_desc *d, __u32 n)
{
	const struct xp_layout *l = &wd->d->layout;
	struct xp_ledger_map m = xp_ledger_map_get(wd->acct);
	__u32 i;

	xp_ledger_count(wd->acct, XP_PLACE_APP, XP_PLACE_FREE, d, n, sizeof(*d));
	for (i = 0; i < n; i++) {
		scratch[i] = xp_layout_handle(l, d[i].addr);
		xp_ledger_mark(&m, d[i].addr, XP_PLACE_FREE);
	}
	xp_deal_put(wd->deal, scratch, n);
}

void eng_kick(struct eng_q *q)
{
	struct xp_ring *tx = &q->xsk->tx;

	if (tx->cached_prod == __atomic_load_n(tx->consumer, __ATOMIC_ACQUIRE))
		return;
	if (!q->xsk->need_wakeup || xp_ring_needs_wakeup(tx)) {
		xp_xsk_kick_tx(q->xsk);
		q->c.tx_kicks++;
	}
}

/* Posts @n descriptors (whole packets) on @q's TX ring; what does not fit is freed and
 * counted as dropped. The burst is kicked at once: a lone packet never waits. */
__u32 eng_tx(struct eng_worker *w, struct eng_q *q, const struct xdp_desc *d, __u32 n)
{
	struct xp_ring *tx = &q->xsk->tx;
	struct xp_ledger_map m;
	__u32 got, idx, i, pkts = 0;
	__u64 bytes = 0;

	if (!n)
		return 0;
	got = xp_ring_prod_free(tx, n);
	if (got < n) {
		eng_complete(w, q);
		got = xp_ring_prod_free(tx, n);
	}
	if (got >= n) {
		got = n;
	} else {
		/* Cut at a packet boundary: a half-sent chain would corrupt the next one. */
		while (got && (d[got - 1].options & XDP_PKT_CONTD))
			got--;
		for (i = got; i < n; i++)
			if (!(d[i].options & XDP_PKT_CONTD))
				q->c.tx_dropped++;
		eng_free_descs(q->wd, w->scratch, d + got, n - got);
	}
	if (!got)
		return 0;
	if (w->cap)
		eng_capture_batch(w, q, d, got, ENG_CAP_TX);
	xp_ring_prod_reserve(tx, got, &idx);
	m = xp_ledger_map_get(q->wd->acct);
	xp_ledger_count(q->wd->acct, XP_PLACE_APP, XP_PLACE_TX, d, got, sizeof(*d));
	for (i = 0; i < got; i++) {
		*xp_ring_desc(tx, idx + i) = d[i];
		xp_ledger_mark(&m, d[i].addr, XP_PLACE_TX);
		bytes += d[i].len;
		pkts += !(d[i].options & XDP_PKT_CONTD);
	}
	xp_ring_prod_submit(tx);
	q->tx_inflight += got;
	q->c.tx_posted += got;
	q->c.tx_packets += pkts;
	q->c.tx_bytes += bytes;
	eng_kick(q);
	return got;
}

/* Completed TX frames go back to this core's dealer in one bulk: those the ledger has
 * in tx, once each; any other address is counted bad and dropped (frame_in()). */
__u32 eng_complete(struct eng_worker *w, struct eng_q *q)
{
	const struct eng_dom *dom = q->dom;
	const struct xp_layout *l = &dom->layout;
	struct xp_ledger_acct *a = q->wd->acct;
	struct xp_ring *comp = &q->xsk->comp;
	__u32 n, idx, i, k = 0;
	long s;

	if (!q->tx_inflight)
		return 0;
	n = xp_ring_cons_peek(comp, ENG_MAX_BATCH, &idx);
	if (!n) {
		eng_kick(q);
		return 0;
	}
	if (!a->debug)
		xp_ledger_count(a, XP_PLACE_TX, XP_PLACE_FREE, NULL, n, 0);
	for (i = 0; i < n; i++) {
		__u64 h = xp_layout_handle(l, *xp_ring_addr(comp, idx + i));

		if (__builtin_expect(h >= l->area_size, 0) ||
		    __builtin_expect((s = frame_in(dom, a, h, XP_PLACE_TX)) < 0, 0)) {
			q->c.bad_descs++;
			continue;
		}
		w->scratch[k] = h;
		frame_take(a, s, &w->scratch[k++], XP_PLACE_TX, XP_PLACE_FREE);
	}
	xp_ring_cons_release(comp);
	if (__builtin_expect(k < n, 0) && !a->debug)
		xp_ledger_count(a, XP_PLACE_FREE, XP_PLACE_TX, NULL, n - k, 0);
	if (k)
		xp_deal_put(q->wd->deal, w->scratch, k);
	q->tx_inflight -= n;
	q->c.completed += n;
	/* Copy mode sends at most a budget per kick: kick again until the ring drains. */
	eng_kick(q);
	return n;
}

static void park(struct eng_worker *w)
{
	struct engine *e = w->e;
	__u32 gen = __atomic_load_n(&e->pause_gen, __ATOMIC_ACQUIRE);

	if (w->parked_gen == gen)
		return;
	w->parked_gen = gen;
	if (e->ho)
		w->ho_park_ns = eng_now_ns();
	__atomic_fetch_add(&e->parked, 1, __ATOMIC_ACQ_REL);
	/* Asleep on the flag itself: eng_resume() wakes it at once (a handover's pause
	 * is the traffic's), and a woken thread gets its core back sooner than a spinning
	 * or a timed sleeper on a busy machine. The timeout only guards a lost wake. */
	while (__atomic_load_n(&e->paused, __ATOMIC_ACQUIRE)) {
		const struct timespec ms = { 0, 1000000 };

		syscall(SYS_futex, &e->paused, FUTEX_WAIT_PRIVATE, 1, &ms, NULL, 0);
	}
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

/*
 * How long an idle worker polls before it sleeps in poll(). Spinning pays when the
 * kernel work that feeds its rings runs on another core: the next burst arrives while
 * it spins, and a wake-up from sleep costs more (at 3 Mpps a VM's wake-ups lose
 * frames: 2.8 Mpps without the spin, 3.6 with 50 us). It is pure loss when that work
 * shares the worker's core (a NAPI thread, softirq deferred to ksoftirqd), which cannot
 * run while the worker spins: there 50 us of spin cut rxdrop from 1.2 to 0.7 Mpps.
 *
 * The sign of a shared core is the worker's own time runnable but waiting for the CPU
 * (/proc/thread-self/schedstat, second field), sampled every 50 ms: above 5% of the
 * wall time in 3 samples in a row (one is noise: a kernel thread passing by), the
 * worker stops spinning. Sleeping at once makes that sign vanish, so after 2 s it
 * spins again to look: still shared, and 150 ms later it stops again.
 *
 * Below 1 Mpps received per worker it does not spin either, and sleeps at its first
 * idle turn: there the spin bought nothing but CPU. At 200 kpps in 1-frame bursts a
 * 50 us spin never ended in a sleep (frames 5 us apart), so the worker ran at 100%
 * for 20% of a core's work and the wait it never reached could not matter
 * (docs/hybrid.md: idle wait). A worker that receives nothing (txonly) keeps the spin:
 * its rate pacing needs it.
 */
#define ENG_SPIN_NS 50000u
#define ENG_SPIN_SAMPLE_NS 50000000ull
#define ENG_SPIN_WAIT_PCT 5u
#define ENG_SPIN_SAMPLES 3u
#define ENG_SPIN_HOLD_NS 2000000000ull
#define ENG_SPIN_MIN_PPS 1000000ull

struct spin_policy {
	int fd; /* /proc/thread-self/schedstat, -1 if the kernel has none */
	__u64 at_ns, wait_ns, sleep_since, rx;
	__u32 hits; /* samples in a row with the core contended */
	bool shared, sparse;
};

static void spin_init(struct spin_policy *sp)
{
	memset(sp, 0, sizeof(*sp));
	sp->fd = open("/proc/thread-self/schedstat", O_RDONLY | O_CLOEXEC);
}

static void spin_shared(struct spin_policy *sp, __u64 now)
{
	unsigned long long run, wait;
	char buf[96];
	ssize_t n = sp->fd >= 0 ? pread(sp->fd, buf, sizeof(buf) - 1, 0) : -1;

	if (n <= 0)
		return;
	buf[n] = '\0';
	if (sscanf(buf, "%llu %llu", &run, &wait) != 2)
		return;
	if (sp->at_ns) {
		bool busy = (wait - sp->wait_ns) * 100 > ENG_SPIN_WAIT_PCT * (now - sp->at_ns);

		sp->hits = busy ? sp->hits + 1 : 0;
		if (!sp->shared && sp->hits >= ENG_SPIN_SAMPLES) {
			sp->shared = true;
			sp->sleep_since = now;
		} else if (sp->shared && now - sp->sleep_since > ENG_SPIN_HOLD_NS) {
			sp->shared = false; /* look again */
			sp->hits = 0;
		}
	}
	sp->wait_ns = wait;
}

static void spin_sample(struct spin_policy *sp, const struct eng_worker *w, __u64 now)
{
	__u64 rx = 0;

	for (__u32 i = 0; i < w->nq; i++)
		rx += w->q[i]->c.rx_packets;
	spin_shared(sp, now);
	if (sp->at_ns && w->e->cfg.mode->needs_rx)
		sp->sparse = (rx - sp->rx) * 1000000000ull < ENG_SPIN_MIN_PPS * (now - sp->at_ns);
	sp->rx = rx;
	sp->at_ns = now;
}

/* How long to spin idle before sleeping: 0 sleeps at once. */
static __u64 spin_window(struct spin_policy *sp, const struct eng_worker *w, __u64 now)
{
	if (now - sp->at_ns >= ENG_SPIN_SAMPLE_NS)
		spin_sample(sp, w, now);
	return sp->shared || sp->sparse ? 0 : ENG_SPIN_NS;
}

void *eng_worker_main(void *arg)
{
	struct eng_worker *w = arg;
	struct engine *e = w->e;
	const struct eng_mode *m = e->cfg.mode;
	__u64 stop_deadline = 0;
	unsigned int idle = 0;
	__u64 idle_since = 0;
	struct spin_policy sp;
	cpu_set_t set;
	__u32 i, work;

	CPU_ZERO(&set);
	CPU_SET(w->core, &set);
	pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
	spin_init(&sp);
	if (eng_uwait_init(w)) {
		e->fault_status = ENG_SETUP_FAILED;
		__atomic_store_n(&e->stop, 1, __ATOMIC_RELEASE);
	}

	for (;;) {
		/* Between turns this worker holds no frame: the live audit's cut. */
		if (__builtin_expect(__atomic_load_n(&e->cut_gen, __ATOMIC_ACQUIRE) != w->cut_gen,
				     0))
			eng_cut_take(w);
		if (__atomic_load_n(&e->paused, __ATOMIC_ACQUIRE)) {
			park(w);
			if (__atomic_load_n(&e->hands_off, __ATOMIC_ACQUIRE))
				break; /* the rings are another engine's now */
		}
		if (__builtin_expect(e->ho && !w->ho_resume_ns, 0))
			w->ho_resume_ns = eng_now_ns(); /* its first turn that may touch a ring */
		if (__atomic_load_n(&e->stop, __ATOMIC_ACQUIRE)) {
			/* Stop: no more fills; forward what is in flight, wait for completions. */
			if (!stop_deadline)
				stop_deadline = eng_now_ns() + 2000000000ull;
			if (drained(w) || eng_now_ns() > stop_deadline)
				break;
		}
		work = 0;
		for (i = 0; i < w->nq; i++) {
			struct eng_q *q = w->q[i];

			work += eng_complete(w, q);
			if (m->needs_rx && !stop_deadline)
				work += eng_refill(w, q);
			/* Preferred busy polling defers the queue's NAPI to whoever asks for
			 * it: every pass asks (one recvfrom runs up to the busy-poll budget
			 * of it on this core), or nothing would feed the RX ring. */
			if (e->cfg.busy_poll && m->needs_rx)
				xp_xsk_wake_rx(q->xsk);
			work += m->poll(w, q);
		}
		if (__builtin_expect(e->cfg.fault && !w->fault_done, 0))
			inject_fault(w);
		if (w->tapw)
			work += eng_tap_poll(w);
		if (w->done)
			break;
		if (!work && w->cap)
			eng_capture_idle(w); /* a quiet worker's frames still reach the file */
		if (work && e->ho) { /* the handover's pause is measured from these */
			w->ho_last_work_ns = eng_now_ns();
			if (!w->ho_first_work_ns)
				w->ho_first_work_ns = w->ho_last_work_ns;
		}
		if (work) {
			idle = 0;
			idle_since = 0;
		} else if (!e->cfg.spin && (sp.sparse || !(++idle & 15))) {
			__u64 now = eng_now_ns();
			__u64 win = spin_window(&sp, w, now);

			if (!idle_since && win) {
				idle_since = now;
			} else if (!win || now - idle_since >= win) {
				eng_uwait_sleep(w, 1);
				idle_since = 0;
			}
		}
	}
	if (sp.fd >= 0)
		close(sp.fd);
	eng_uwait_fini(w);
	eng_tap_stop(w); /* every frame in io_uring back before the worker goes */
	__atomic_store_n(&w->exited, true, __ATOMIC_RELEASE);
	__atomic_fetch_add(&e->finished, 1, __ATOMIC_ACQ_REL);
	return NULL;
}

__u64 eng_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (__u64)ts.tv_sec * 1000000000ull + ts.tv_nsec;
}
