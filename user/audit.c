// SPDX-License-Identifier: BSD-3-Clause
/*
 * The ledger audits (audit.h). The stop-the-world ones, with every worker parked or
 * gone, and the exit's, frame by frame, are at the end; first the live one: every frame
 * accounted for while the workers run, fill, RX, TX and completion rings included, with
 * no worker paused.
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
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli_json.h"
#include "audit.h"
#include "ctl_ledger.h"
#include "dom.h"
#include "engine.h"
#include "pause.h"
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
		wd->cut.held = wd->held + wd->leaked;
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
	char umem[24], utext[24], q[600];
	struct eng_ctl_ledger note = {
		.time = t,
		.ok = !err,
		.free_checked = free_checked,
		.frames = r->nframes,
		.free = r->place[XP_PLACE_FREE],
		.fill = s->fill_ring,
		.kernel_rx = s->kernel_rx,
		.rx = s->rx_ring,
		.app = r->place[XP_PLACE_APP],
		.tx = s->tx_ring,
		.kernel_tx = s->kernel_tx,
		.completion = s->comp_ring,
		.uring = r->place[XP_PLACE_URING],
		.total = total,
	};

	if (err)
		snprintf(note.why, sizeof(note.why), "%s", r->why);
	eng_ctl_ledger_note(e, d->id, &note);
	/* Which UMEM: always in JSON, in text only when there are several. */
	snprintf(umem, sizeof(umem), ",\"umem\":%u", d->id);
	snprintf(utext, sizeof(utext), e->ndoms > 1 ? " (UMEM %u)" : "", d->id);

	if (e->cfg.json) {
		printf("{\"type\":\"ledger\",\"when\":\"live\",\"time\":%.3f,\"ok\":%s%s,\"frames\":%u,"
		       "\"free\":%lld,\"fill\":%lld,\"kernel_rx\":%lld,\"rx\":%lld,\"app\":%lld,"
		       "\"tx\":%lld,\"kernel_tx\":%lld,\"completion\":%lld,\"uring\":%lld,"
		       "\"total\":%lld,"
		       "\"allocator\":%lld,\"pile\":%u,\"free_checked\":%s,\"slack\":%llu,"
		       "\"bad_transitions\":%llu%s%s}\n",
		       t, err ? "false" : "true", umem, r->nframes,
		       (long long)r->place[XP_PLACE_FREE], (long long)s->fill_ring,
		       (long long)s->kernel_rx, (long long)s->rx_ring,
		       (long long)r->place[XP_PLACE_APP], (long long)s->tx_ring,
		       (long long)s->kernel_tx, (long long)s->comp_ring,
		       (long long)r->place[XP_PLACE_URING], (long long)total, (long long)allocator,
		       pile, free_checked ? "true" : "false", (unsigned long long)r->slack,
		       (unsigned long long)r->bad_transitions, err ? ",\"why\":" : "",
		       err ? cli_json_quote(r->why, q, sizeof(q)) : "");
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
		ut_say(0, "ledger: live audit: %s", r->why);
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
			ut_say(0,
			       "live audit skipped: a worker did not reach a loop turn within 1 s");
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
			obs[XP_PLACE_APP] += wd->cut.held; /* held across bursts (xpile/pkt.h) */
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
		ut_say(0, "live audit skipped: a worker did not reach a loop turn within 1 s");
		return 0;
	}
	/* One round serves every domain; a domain whose pile was busy retries alone. */
	for (__u32 i = 0; i < e->ndoms; i++)
		err |= audit_dom(e, &e->dom[i]);
	return err ? -EUCLEAN : 0;
}

/* ---- with the workers parked or gone ---- */

/*
 * Workers parked between turns or gone: each domain's ledger must match its allocator,
 * the fill side of its sockets (fill producer - RX consumer) and their TX side (TX
 * producer - completion consumer) exactly, and the state bytes the counts.
 */
static int stopped_dom(struct engine *e, struct eng_dom *d, const char *when)
{
	struct xp_ledger_report r;
	__s64 obs[XP_PLACE_MAX] = { -1, -1, -1, -1 };
	FILE *f = e->cfg.json ? stdout : stderr;
	struct eng_split s = {};
	char q[600];
	int err;

	obs[XP_PLACE_FREE] = (__s64)xp_pool_avail(d->pool) + xp_pool_cached(d->pool);
	for (__u32 i = 0; i < e->nworkers; i++) {
		const struct xp_deal *deal = e->workers[i].wd[d->id].deal;

		obs[XP_PLACE_FREE] += deal ? xp_deal_count(deal) : 0;
	}
	/* Workers hold nothing between loop turns but what they hold across bursts
	 * (xp_pkt_hold()); their TAP rings hold what is in io_uring (--host-tap: one domain
	 * only). A callback's leak stays unexplained: the audit fails on it. */
	obs[XP_PLACE_APP] = 0;
	for (__u32 i = 0; i < e->nworkers; i++)
		obs[XP_PLACE_APP] += e->workers[i].wd[d->id].d ? e->workers[i].wd[d->id].held : 0;
	obs[XP_PLACE_URING] = d->id ? 0 : (__s64)eng_tap_held(e);
	for (__u32 i = 0; i < e->nq; i++) {
		if (e->qs[i].dom != d)
			continue;
		eng_cut_ring(&e->qs[i]);
		eng_split_add(&s, &e->qs[i]);
	}
	obs[XP_PLACE_FILL] = s.fill_side;
	obs[XP_PLACE_TX] = s.tx_side;
	err = xp_ledger_audit(d->ledger, obs, &r);
	if (!err && s.bad[0]) {
		snprintf(r.why, sizeof(r.why), "%s", s.bad);
		r.ok = false;
		err = -EUCLEAN;
	}
	if (!err && e->cfg.mem->ledger_debug && xp_pool_audit(d->pool))
		err = -EUCLEAN;
	if (e->cfg.json) {
		printf("{\"type\":\"ledger\",\"when\":\"%s\",\"ok\":%s%s,\"frames\":%u,\"free\":%lld,"
		       "\"fill\":%lld,\"kernel_rx\":%lld,\"rx\":%lld,\"app\":%lld,\"tx\":%lld,"
		       "\"kernel_tx\":%lld,\"completion\":%lld,\"uring\":%lld,\"total\":%lld,"
		       "\"bad_transitions\":%llu%s%s}\n",
		       when, err ? "false" : "true", eng_dom_tag(e, d, true), r.nframes,
		       (long long)r.place[XP_PLACE_FREE], (long long)s.fill_ring,
		       (long long)s.kernel_rx, (long long)s.rx_ring,
		       (long long)r.place[XP_PLACE_APP], (long long)s.tx_ring,
		       (long long)s.kernel_tx, (long long)s.comp_ring,
		       (long long)r.place[XP_PLACE_URING],
		       (long long)(r.place[XP_PLACE_FREE] + r.place[XP_PLACE_APP] + s.fill_side +
				   s.tx_side + r.place[XP_PLACE_URING]),
		       (unsigned long long)r.bad_transitions, err ? ",\"why\":" : "",
		       err ? cli_json_quote(r.why, q, sizeof(q)) : "");
		fflush(stdout);
	} else if (!e->cfg.silent || err) {
		fprintf(f, "%s%s: ", when, eng_dom_tag(e, d, false));
		xp_ledger_report_print(&r, f);
		if (e->cfg.verbose)
			fprintf(f,
				"ledger: fill = %lld in fill rings + %lld in the kernel + %lld in RX rings; tx = %lld in TX rings + %lld in the kernel + %lld in completion rings\n",
				(long long)s.fill_ring, (long long)s.kernel_rx,
				(long long)s.rx_ring, (long long)s.tx_ring, (long long)s.kernel_tx,
				(long long)s.comp_ring);
	}
	return err;
}

int eng_audit_stopped(struct engine *e, const char *when)
{
	int err = 0;

	for (__u32 i = 0; i < e->ndoms; i++)
		err |= stopped_dom(e, &e->dom[i], when);
	/* A live audit that failed fails the run, whatever the exit state shows. */
	if (!strcmp(when, "exit") && e->live_failures) {
		ut_say(0, "ledger: %llu live audit(s) failed; the first: %s",
		       (unsigned long long)e->live_failures, e->live_why);
		err = -EUCLEAN;
	}
	return err ? -EUCLEAN : 0;
}

/* Parks every running worker between loop turns, audits, lets them go. */
int eng_audit_now(struct engine *e)
{
	int err;

	if (eng_pause(e, "audit"))
		return 0;
	err = eng_audit_stopped(e, "audit");
	eng_resume(e);
	return err;
}

/*
 * After the sockets closed, the kernel holds nothing: every frame not in the pool was
 * in a fill, RX, TX or completion ring (or a driver). Find them, prove the count is the
 * ledger's, and put every frame back into the pile.
 */
static int reclaim_dom(struct engine *e, struct eng_dom *d)
{
	__u32 n = d->layout.nframes, avail, i, k, missing = 0, dups = 0, foreign = 0;
	__u32 lost = 0, held_twice = 0;
	struct xp_ledger_acct *a;
	__u64 *buf = calloc(n, sizeof(__u64));
	__u8 *seen = calloc(n, 1);
	struct xp_ledger_report r;
	__s64 held, obs[XP_PLACE_MAX] = { -1, -1, 0, 0 };
	int err = 0;

	if (!buf || !seen || xp_ledger_acct_new(d->ledger, &a)) {
		free(buf);
		free(seen);
		return ut_say(-ENOMEM, "out of memory for the final audit");
	}
	avail = xp_pool_avail(d->pool);
	if (xp_pool_get(d->pool, buf, avail)) {
		err = ut_say(-EUCLEAN, "ledger: cannot take the %u free frames out of the pile",
			     avail);
		goto out;
	}
	for (i = 0; i < avail; i++) {
		__u32 idx;

		if (xp_layout_frame_index(&d->layout, buf[i], &idx) ||
		    xp_layout_frame(&d->layout, idx) != buf[i])
			foreign++;
		else if (seen[idx]++)
			dups++;
	}
	xp_ledger_audit(d->ledger, NULL, &r);
	held = r.place[XP_PLACE_FILL] + r.place[XP_PLACE_TX];
	for (i = 0; i < n; i++) {
		__u64 h = xp_layout_frame(&d->layout, i);
		int st = xp_ledger_state_of(d->ledger, h);

		/* Frame by frame: in the pile means free; missing means a ring had it. */
		if (seen[i] && st != XP_PLACE_FREE && held_twice++ < XP_LEDGER_LOG_MAX)
			fprintf(stderr,
				"ledger: frame %#llx is in the pile, but the ledger has it in %s (held twice)\n",
				(unsigned long long)h, xp_place_name(st));
		if (!seen[i] && st == XP_PLACE_FREE && lost++ < XP_LEDGER_LOG_MAX)
			fprintf(stderr,
				"ledger: frame %#llx is not in the pile, but the ledger has it free (lost)\n",
				(unsigned long long)h);
		if (seen[i])
			continue;
		if (avail + missing < n)
			buf[avail + missing] = h;
		missing++;
	}
	if (foreign || dups || avail + missing != n || held != missing || lost || held_twice) {
		fprintf(stderr,
			"ledger: FAILED: %u frames in the pile (%u foreign, %u twice), %u missing, ledger expected %lld in rings; %u lost, %u held twice by state byte\n",
			avail, foreign, dups, missing, (long long)held, lost, held_twice);
		err = -EUCLEAN;
	}
	/* The rings are gone: their frames are free again. */
	k = xp_ledger_frames_in(d->ledger, XP_PLACE_FILL, d->handles, n);
	xp_ledger_move(a, XP_PLACE_FILL, XP_PLACE_FREE, d->handles, k);
	k = xp_ledger_frames_in(d->ledger, XP_PLACE_TX, d->handles, n);
	xp_ledger_move(a, XP_PLACE_TX, XP_PLACE_FREE, d->handles, k);
	if (!dups && !foreign && avail + missing == n && xp_pool_put(d->pool, buf, n))
		err = ut_say(-EUCLEAN, "ledger: the pile refused the frames back");
	obs[XP_PLACE_FREE] = xp_pool_avail(d->pool);
	obs[XP_PLACE_FILL] = 0;
	if (xp_ledger_audit(d->ledger, obs, &r) || xp_pool_avail(d->pool) != n)
		err = -EUCLEAN;
	if (e->cfg.json)
		printf("{\"type\":\"ledger\",\"when\":\"exit\",\"ok\":%s%s,\"frames\":%u,\"returned\":%u,"
		       "\"held_by_kernel\":%u,\"bad_transitions\":%llu}\n",
		       err ? "false" : "true", eng_dom_tag(e, d, true), n, xp_pool_avail(d->pool),
		       missing, (unsigned long long)r.bad_transitions);
	else
		fprintf(stderr,
			"exit%s: ledger: %s: all %u frames back in the pile (%u were in kernel rings)%s%s\n",
			eng_dom_tag(e, d, false), err ? "FAILED" : "ok", n, missing,
			err && !r.ok ? ": " : "", err && !r.ok ? r.why : "");
out:
	free(buf);
	free(seen);
	return err;
}

int eng_audit_reclaim(struct engine *e)
{
	int err = 0;

	for (__u32 i = 0; i < e->ndoms; i++)
		err |= reclaim_dom(e, &e->dom[i]);
	return err ? -EUCLEAN : 0;
}
