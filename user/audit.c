// SPDX-License-Identifier: BSD-3-Clause
/*
 * The live ledger audit: every frame accounted for while the workers run, fill, RX,
 * TX and completion rings included, with no worker paused.
 *
 * A round: the main thread moves cut_gen; each worker, at the top of its next loop
 * turn (where it holds no frame), takes its cut: its ledger account, its cache and
 * dealer counts, the pile's count and its cache's pile-access count, and every ring
 * index of its sockets. Frames never pass between workers except through the pile
 * (a port pair of fwd is one worker's), so the cuts together are one consistent
 * state of the engine, except for the pile. Each frame domain (UMEM, user/dom.c) is its
 * own round's ledger: a worker cuts every domain it has a socket in, and frames never
 * pass between domains (fwd across two copies them). What each domain's round proves:
 *
 *   exact  fill side: the ledger's FILL frames == sum over sockets of fill producer -
 *          RX consumer; TX side: TX == TX producer - completion consumer (both our
 *          own indices); APP == 0; the places sum to --frames, none negative; every
 *          frame has one state byte; free: the ledger's FREE == pile + caches +
 *          dealers, whenever no other worker touched the pile between its cut and the
 *          last cut (always with one worker; else retried, and said when not checked);
 *   bounds each ring holds no more than its size, the kernel took no more from the
 *          fill (TX) ring than was posted, and produced no more RX (completion)
 *          entries than it took; the state bytes, scanned after the cut, differ from
 *          the cut's counts by at most the frames moved since (exact when none did).
 *
 * The kernel's share (taken from the fill ring, not yet in RX; taken from TX, not yet
 * completed) is what the indices leave: the kernel publishes its consumer index in
 * batches, so an RX producer ahead of the fill consumer means entries taken and not
 * yet published as taken; they count as the kernel's, the split never goes negative.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "engine.h"
#include "tap.h"

#define CUT_WAIT_NS 1000000000ull
#define CUT_ROUNDS 4

static __u32 load_idx(const __u32 *p)
{
	return p ? __atomic_load_n(p, __ATOMIC_ACQUIRE) : 0;
}

void eng_cut_ring(struct eng_q *q)
{
	struct xp_xsk *x = q->xsk;
	struct eng_ring_cut *c = &q->cut;

	if (!x) {
		memset(c, 0, sizeof(*c));
		return;
	}
	/* Each kernel index is read after the one the kernel moves later, so what it
	 * produced is never seen ahead of what it took (but for its publishing lag). */
	c->rp = load_idx(x->rx.producer);
	c->fc = load_idx(x->fill.consumer);
	c->cp = load_idx(x->comp.producer);
	c->tc = load_idx(x->tx.consumer);
	c->fp = load_idx(x->fill.producer);
	c->rc = load_idx(x->rx.consumer);
	c->tp = load_idx(x->tx.producer);
	c->cc = load_idx(x->comp.consumer);
}

static __u64 pile_ops(const struct xp_cache *c)
{
	return c ? __atomic_load_n(&c->st.get_misses, __ATOMIC_RELAXED) +
			       __atomic_load_n(&c->st.put_misses, __ATOMIC_RELAXED) :
		   0;
}

static void cut_fill(struct eng_worker *w)
{
	struct engine *e = w->e;
	__u32 d;

	for (d = 0; d < e->ndoms; d++) {
		struct eng_wdom *wd = &w->wd[d];

		if (!wd->d)
			continue;
		xp_ledger_cut_take(wd->acct, &wd->cut.led);
		wd->cut.allocator = (wd->cache ? xp_cache_count(wd->cache) : 0) +
				    (wd->deal ? xp_deal_count(wd->deal) : 0);
		wd->cut.pile_ops = pile_ops(wd->cache);
	}
	for (__u32 i = 0; i < w->nq; i++)
		eng_cut_ring(w->q[i]);
	/* The ticket orders this cut's counts before the pile counts the last cut reads:
	 * the pile count of the last cut holds for every cut taken before it. */
	w->cut_ticket = __atomic_fetch_add(&e->cut_ticket, 1, __ATOMIC_SEQ_CST);
	for (d = 0; d < e->ndoms; d++) {
		struct eng_wdom *wd = &w->wd[d];

		if (!wd->d)
			continue;
		wd->cut.pile = xp_pool_avail(wd->d->pool);
		/* --host-tap: one domain only (user/dom.c). */
		wd->cut.app = d ? 0 : eng_tap_worker_held(w);
	}
}

void eng_cut_take(struct eng_worker *w)
{
	__u32 gen = __atomic_load_n(&w->e->cut_gen, __ATOMIC_ACQUIRE);

	cut_fill(w);
	__atomic_store_n(&w->cut_gen, gen, __ATOMIC_RELEASE);
}

/* (u32) a - b as a count, or -1 when b is ahead of a (an index out of order). */
static __s64 span(__u32 a, __u32 b)
{
	return (__s32)(a - b) < 0 ? -1 : (__s64)(__u32)(a - b);
}

static void split_bad(struct eng_split *s, const struct eng_q *q, const char *what)
{
	if (!s->bad[0])
		snprintf(s->bad, sizeof(s->bad), "%s:%u: %s", q->port->ifname, q->queue, what);
}

void eng_split_add(struct eng_split *s, const struct eng_q *q)
{
	const struct eng_ring_cut *c = &q->cut;
	const struct xp_xsk *x = q->xsk;
	__u32 fc = c->fc, tc = c->tc;
	__s64 fr, rr, tr, cr, fs, ts;

	if (!x)
		return;
	/* Taken but not yet published as taken: the kernel's (see the top). */
	if ((__s32)(c->rp - fc) > 0)
		fc = c->rp;
	if ((__s32)(c->cp - tc) > 0)
		tc = c->cp;
	fs = span(c->fp, c->rc);
	ts = span(c->tp, c->cc);
	fr = span(c->fp, fc);
	rr = span(c->rp, c->rc);
	tr = span(c->tp, tc);
	cr = span(c->cp, c->cc);
	if (fs < 0 || fr < 0) {
		split_bad(s, q, "the kernel took more from the fill ring than was posted");
		return;
	}
	if (rr < 0 || cr < 0) {
		split_bad(s, q, "a consumer index ahead of the kernel's producer");
		return;
	}
	if (ts < 0 || tr < 0) {
		split_bad(s, q, "the kernel took more from the TX ring than was posted");
		return;
	}
	if (fr > x->fill.size || rr > x->rx.size || tr > x->tx.size || cr > x->comp.size)
		split_bad(s, q, "a ring holds more than its size");
	s->fill_side += fs;
	s->tx_side += ts;
	s->fill_ring += fr;
	s->rx_ring += rr;
	s->kernel_rx += fs - fr - rr;
	s->tx_ring += tr;
	s->comp_ring += cr;
	s->kernel_tx += ts - tr - cr;
}

static bool worker_gone(const struct eng_worker *w)
{
	return !w->started || __atomic_load_n(&w->exited, __ATOMIC_ACQUIRE);
}

/* One round: every worker's cut. false if one did not answer in time. */
static bool cut_round(struct engine *e)
{
	__u32 gen = __atomic_add_fetch(&e->cut_gen, 1, __ATOMIC_ACQ_REL);
	__u64 deadline = eng_now_ns() + CUT_WAIT_NS;
	__u32 i, spins = 0;

	for (i = 0; i < e->nworkers; i++) {
		struct eng_worker *w = &e->workers[i];

		while (__atomic_load_n(&w->cut_gen, __ATOMIC_ACQUIRE) != gen) {
			if (worker_gone(w)) { /* not running: its state is still */
				cut_fill(w);
				w->cut_gen = gen;
				break;
			}
			if (eng_now_ns() > deadline)
				return false;
			/* Spin briefly first: a busy worker answers within a turn. */
			if (++spins > 2000)
				usleep(20);
		}
	}
	return true;
}

/* The pile count at the last cut holds for every cut if no other worker went to @d's
 * pile after its own cut (its cache's slow-path count unchanged since). */
static bool pile_steady(struct engine *e, const struct eng_dom *d, __u32 *pile)
{
	const struct eng_worker *last = NULL;
	bool steady = true;
	__u32 i;

	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	for (i = 0; i < e->nworkers; i++)
		if (e->workers[i].wd[d->id].d &&
		    (!last || e->workers[i].cut_ticket >= last->cut_ticket))
			last = &e->workers[i];
	for (i = 0; i < e->nworkers; i++) {
		const struct eng_wdom *wd = &e->workers[i].wd[d->id];

		if (wd->d && &e->workers[i] != last && pile_ops(wd->cache) != wd->cut.pile_ops)
			steady = false;
	}
	*pile = last ? last->wd[d->id].cut.pile : 0;
	return steady;
}

static void print_live(struct engine *e, const struct eng_dom *d, const struct xp_ledger_report *r,
		       const struct eng_split *s, __s64 allocator, __u32 pile, bool free_checked,
		       int err)
{
	double t = (eng_now_ns() - e->start_ns) / 1e9;
	__s64 total = r->place[XP_PLACE_FREE] + s->fill_ring + s->kernel_rx + s->rx_ring +
		      r->place[XP_PLACE_APP] + s->tx_ring + s->kernel_tx + s->comp_ring +
		      r->place[XP_PLACE_URING];
	char umem[24], utext[24];

	/* Which UMEM: always in JSON, in text only when there are several. */
	snprintf(umem, sizeof(umem), ",\"umem\":%u", d->id);
	snprintf(utext, sizeof(utext), e->ndoms > 1 ? " (UMEM %u)" : "", d->id);

	if (e->cfg.json) {
		printf("{\"type\":\"ledger\",\"when\":\"live\",\"time\":%.3f,\"ok\":%s%s,\"frames\":%u,"
		       "\"free\":%lld,\"fill\":%lld,\"kernel_rx\":%lld,\"rx\":%lld,\"app\":%lld,"
		       "\"tx\":%lld,\"kernel_tx\":%lld,\"completion\":%lld,\"uring\":%lld,"
		       "\"total\":%lld,"
		       "\"allocator\":%lld,\"pile\":%u,\"free_checked\":%s,\"slack\":%llu,"
		       "\"bad_transitions\":%llu%s%s%s}\n",
		       t, err ? "false" : "true", umem, r->nframes,
		       (long long)r->place[XP_PLACE_FREE], (long long)s->fill_ring,
		       (long long)s->kernel_rx, (long long)s->rx_ring,
		       (long long)r->place[XP_PLACE_APP], (long long)s->tx_ring,
		       (long long)s->kernel_tx, (long long)s->comp_ring,
		       (long long)r->place[XP_PLACE_URING], (long long)total, (long long)allocator,
		       pile, free_checked ? "true" : "false", (unsigned long long)r->slack,
		       (unsigned long long)r->bad_transitions, err ? ",\"why\":\"" : "",
		       err ? r->why : "", err ? "\"" : "");
		return;
	}
	if (e->cfg.quiet && !err)
		return;
	fprintf(stderr,
		"         ledger%s: %s: %u frames: free %lld (pile %u + caches %lld%s), fill ring %lld, kernel %lld, rx ring %lld, app %lld, tx ring %lld, kernel %lld, completion ring %lld, uring %lld (live; state bytes within %llu moves)\n",
		utext, err ? "FAILED" : "ok", r->nframes, (long long)r->place[XP_PLACE_FREE], pile,
		(long long)(allocator - pile), free_checked ? "" : ", not checked: pile busy",
		(long long)s->fill_ring, (long long)s->kernel_rx, (long long)s->rx_ring,
		(long long)r->place[XP_PLACE_APP], (long long)s->tx_ring, (long long)s->kernel_tx,
		(long long)s->comp_ring, (long long)r->place[XP_PLACE_URING],
		(unsigned long long)r->slack);
	if (err)
		fprintf(stderr, "xpile: ledger: live audit: %s\n", r->why);
}

static int audit_dom(struct engine *e, struct eng_dom *d)
{
	struct xp_ledger_cut cuts[ENG_MAX_WORKERS];
	__s64 obs[XP_PLACE_MAX] = { -1, -1, 0, -1, 0 }, allocator = 0;
	struct xp_ledger_report r;
	struct eng_split s;
	bool steady = false;
	__u32 pile = 0, i, n = 0, round;
	int err;

	for (round = 0; round < CUT_ROUNDS && !steady; round++) {
		if (round && !cut_round(e)) {
			fprintf(stderr,
				"xpile: live audit skipped: a worker did not reach a loop turn within 1 s\n");
			return 0;
		}
		steady = pile_steady(e, d, &pile);
	}
	memset(&s, 0, sizeof(s));
	/* The accounts in creation order: the workers' ranks in the domain. */
	for (__u32 rank = 0; rank < d->nworkers; rank++) {
		for (i = 0; i < e->nworkers; i++) {
			const struct eng_worker *w = &e->workers[i];
			const struct eng_wdom *wd = &w->wd[d->id];

			if (!wd->d || wd->rank != rank)
				continue;
			cuts[n++] = wd->cut.led;
			allocator += (__s64)wd->cut.allocator;
			obs[XP_PLACE_URING] += (__s64)wd->cut.app; /* TAP frames in io_uring */
			for (__u32 k = 0; k < w->nq; k++)
				if (w->q[k]->dom == d)
					eng_split_add(&s, w->q[k]);
		}
	}
	allocator += pile;
	obs[XP_PLACE_FREE] = steady ? allocator : -1;
	obs[XP_PLACE_FILL] = s.fill_side;
	obs[XP_PLACE_TX] = s.tx_side;
	/* The workers' accounts come first and are the only ones while running. */
	err = xp_ledger_audit_live(d->ledger, cuts, n, obs, &r);
	if (err == -EINVAL) /* another account exists: nothing to compare against */
		return 0;
	if (s.bad[0]) {
		if (r.ok)
			snprintf(r.why, sizeof(r.why), "%s", s.bad);
		r.ok = false;
		err = -EUCLEAN;
	}
	print_live(e, d, &r, &s, allocator, pile, steady, err);
	if (err && !e->live_failures++)
		snprintf(e->live_why, sizeof(e->live_why), "UMEM %u: %.200s", d->id, r.why);
	return err;
}

int eng_audit_live(struct engine *e)
{
	int err = 0;

	if (!e->nworkers)
		return 0;
	if (!cut_round(e)) {
		fprintf(stderr,
			"xpile: live audit skipped: a worker did not reach a loop turn within 1 s\n");
		return 0;
	}
	/* One round serves every domain; a domain whose pile was busy retries alone. */
	for (__u32 i = 0; i < e->ndoms; i++)
		err |= audit_dom(e, &e->dom[i]);
	return err ? -EUCLEAN : 0;
}
