// SPDX-License-Identifier: BSD-3-Clause
/*
 * Hot handover, the new side: the OFFER's UMEMs and sockets mapped, the STATE turned
 * into this engine's ledgers and pools, OK, COMMIT, and the pause line once every
 * worker polled (handover.h).
 */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <unistd.h>

#include "dom.h"
#include "handover_proto.h"
#include "handover_serve.h"
#include "handover_take.h"
#include "pause.h"

/* New side: the OFFER's UMEMs mapped, their layouts adopted. */
static int take_umems(struct engine *e)
{
	struct eng_ho *h = e->ho;
	struct ho_dom d[ENG_MAX_PORTS];
	__u32 n = ho_doms(e, d);
	int err;

	if (h->offer.numems != n)
		return fail("the engine at %s has %u UMEM(s), this one %u: give the same options",
			    e->ho->take_over, h->offer.numems, n);
	for (__u32 i = 0; i < n; i++) {
		const struct ho_umem *u = &h->offer.umems[i];

		struct eng_dom *m = &e->dom[i];

		err = xp_umem_import(h->fds[i], &u->rec, d[i].umem);
		if (err)
			return err; /* said by the library */
		h->fd_used[i] = true;
		/* The domain is the old engine's: its layout, its frames, its memfd. */
		m->layout = u->layout;
		m->frames = u->layout.nframes;
		m->mem.base = xp_umem_area(m->umem);
		m->mem.size = u->rec.size;
		m->mem.page_size = u->rec.page_size;
		m->mem.hugepages = u->hugepages;
		m->mem.numa_node = u->numa_node;
		m->mem.fd = h->fds[i];
		m->buf = (struct xp_arena_buf){ .base = m->mem.base,
						.off = u->rec.offset,
						.size = u->rec.size };
		m->node = u->numa_node;
		m->imported = true;
		m->unaligned = u->layout.umem_flags & XDP_UMEM_UNALIGNED_CHUNK_FLAG;
		e->page_size = u->rec.page_size;
		err = eng_dom_fill_cap(e, m);
		if (err) {
			/* The old engine's frames, not an option of this one: exit status 1. */
			e->refused = false;
			return err;
		}
	}
	snprintf(e->topo_note, sizeof(e->topo_note), "the layout of pid %d, taken over",
		 (int)h->peer);
	return 0;
}

int ho_take_offer(struct engine *e)
{
	struct eng_ho *h = e->ho;
	const char *path = e->ho->take_over;
	struct ho_hello m;
	struct xp_ho_hdr hdr;
	char line[512];
	int err;

	err = xp_ho_connect(path, HO_STATE_MS, &h->conn, &h->peer);
	if (err == -ENOENT)
		return fail(
			"--take-over %s: no such socket; is an engine running with --handover %s?",
			path, path);
	if (err == -ECONNREFUSED)
		return fail(
			"--take-over %s: nothing listens there (a socket file left by an engine that died): start without --take-over, or remove %s",
			path, path);
	if (err == -EACCES)
		return fail(
			"--take-over %s: permission denied: the socket is its engine's user's alone (0600); run as that user",
			path);
	if (err == -EPERM)
		return fail(
			"--take-over %s: the engine there runs under another uid: run as its user",
			path);
	if (err)
		return fail("--take-over %s: cannot connect: %s", path, strerror(-err));
	ho_hello_fill(e, &m);
	err = xp_ho_send(h->conn, HO_HELLO, h->version, &m, sizeof(m), NULL, 0);
	ho_die_at(h, HO_FAULT_NEW_HELLO);
	/* A send the engine there cut short may still have its reason waiting. */
	if (err && xp_ho_recv(h->conn, &hdr, &h->offer, sizeof(h->offer), NULL, 0, 200) == 0 &&
	    hdr.type == XP_HO_MSG_ERROR)
		err = 0;
	else if (err)
		return fail("--take-over %s: cannot send to the engine there: %s", path,
			    strerror(-err));
	else
		err = xp_ho_recv(h->conn, &hdr, &h->offer, sizeof(h->offer), h->fds, XP_HO_MAX_FDS,
				 HO_HELLO_MS + HO_STATE_MS);
	if (!err && hdr.type == XP_HO_MSG_ERROR) {
		memcpy(line, &h->offer, hdr.len < sizeof(line) ? hdr.len : sizeof(line) - 1);
		line[hdr.len < sizeof(line) ? hdr.len : sizeof(line) - 1] = 0;
		return fail("--take-over %s: refused by the engine there (pid %d): %s", path,
			    (int)h->peer, line);
	}
	if (err == -EPROTONOSUPPORT)
		return fail(
			"--take-over %s: the engine there speaks handover protocol version %u, this one %u: run matching xpile versions",
			path, hdr.version, XP_HO_VERSION);
	if (err)
		return fail("--take-over %s: no offer from the engine there (pid %d): %s", path,
			    (int)h->peer, ho_recv_why(err));
	h->nfds = hdr.nfds;
	if (hdr.type != HO_OFFER || hdr.len != sizeof(h->offer) ||
	    h->offer.numems > ENG_MAX_PORTS || h->offer.nsocks != e->nq ||
	    hdr.nfds != h->offer.numems + h->offer.nsocks)
		return fail(
			"--take-over %s: a malformed offer from pid %d (%u sockets, %u fds, this engine serves %u sockets)",
			path, (int)h->peer, h->offer.nsocks, hdr.nfds, e->nq);
	ho_die_at(h, HO_FAULT_NEW_OFFER);
	return take_umems(e);
}

int eng_ho_import_xsk(struct engine *e, struct eng_q *q)
{
	struct eng_ho *h = e->ho;
	struct ho_dom d[ENG_MAX_PORTS];
	int err;

	ho_doms(e, d);
	for (__u32 i = 0; i < h->offer.nsocks; i++) {
		const struct ho_sock *s = &h->offer.socks[i];
		__u32 fdi = h->offer.numems + i;

		if (strncmp(s->rec.ifname, q->port->ifname, sizeof(s->rec.ifname)) ||
		    s->rec.queue != q->queue)
			continue;
		if (h->fd_used[fdi] || s->umem != ho_dom_of(e, q))
			break;
		err = xp_xsk_import(*d[s->umem].umem, h->fds[fdi], &s->rec, &q->xsk);
		if (err)
			return err; /* said by the library */
		h->fd_used[fdi] = true;
		return 0;
	}
	return fail("--take-over %s: the engine there offers no socket for %s queue %u",
		    e->ho->take_over, q->port->ifname, q->queue);
}

/* Every frame the STATE has in a ring, moved there in our ledger; checked against the
 * rings' own indices and the entries they show. */
static int state_take(struct engine *e, const struct ho_state *st, __u32 len)
{
	const struct ho_sock_state *ss = (const void *)(st + 1);
	const __u8 *bytes = (const __u8 *)(ss + st->nsocks);
	struct ho_dom d[ENG_MAX_PORTS];
	__u32 n = ho_doms(e, d), need = (__u32)(sizeof(*st) + st->nsocks * sizeof(*ss));
	__u64 *buf;

	if (st->numems != n || st->nsocks != e->nq)
		return fail(
			"--take-over: the state has %u UMEM(s) and %u socket(s), this engine %u and %u",
			st->numems, st->nsocks, n, e->nq);
	for (__u32 q = 0; q < e->nq; q++)
		if (xp_xsk_resync(e->qs[q].xsk, &ss[q].rec))
			return fail(
				"--take-over: %s:%u: the old engine's ring indices are not the rings' (see above)",
				e->qs[q].port->ifname, e->qs[q].queue);
	for (__u32 i = 0; i < n; i++) {
		if (st->nframes[i] != d[i].layout->nframes)
			return fail("--take-over: the state has %u frames, the layout %u",
				    st->nframes[i], d[i].layout->nframes);
		need += st->nframes[i];
	}
	if (need != len)
		return fail("--take-over: a state of %u bytes where %u were due", len, need);
	for (__u32 i = 0; i < n; i++) {
		__s64 held[XP_PLACE_MAX] = { 0 }, rings[XP_PLACE_MAX] = { 0 };
		__u32 nf = st->nframes[i], k, cnt, w;
		struct xp_ledger_acct *acct = NULL;

		/* The moves go through the account of the domain's first worker, before any
		 * worker runs (the live audit sums the accounts). */
		for (w = 0; w < e->nworkers && !acct; w++)
			if (e->workers[w].wd[i].d)
				acct = e->workers[w].wd[i].acct;

		buf = calloc(nf ? nf : 1, sizeof(__u64));
		if (!buf)
			return fail("out of memory");
		for (k = 0; k < nf; k++)
			if (bytes[k] < XP_PLACE_MAX)
				held[bytes[k]]++;
			else
				held[XP_PLACE_FREE] = -1 - (__s64)nf; /* no place */
		if (held[XP_PLACE_FREE] < 0 || held[XP_PLACE_APP]) {
			free(buf);
			return fail(
				"--take-over: the state puts frames outside any ring or free (%lld in the application)",
				(long long)held[XP_PLACE_APP]);
		}
		for (__u32 q = 0; q < e->nq; q++) {
			const struct xp_xsk *x = e->qs[q].xsk;

			if (ho_dom_of(e, &e->qs[q]) != i)
				continue;
			/* Ours from the rings: the fill side (fill producer - RX consumer) and
			 * the TX side (TX producer - completion consumer). */
			rings[XP_PLACE_FILL] += (__u32)(x->fill.cached_prod - x->rx.cached_cons);
			rings[XP_PLACE_TX] += (__u32)(x->tx.cached_prod - x->comp.cached_cons);
			if (ss[q].fill_held != (__u32)(x->fill.cached_prod - x->rx.cached_cons) ||
			    ss[q].tx_inflight != (__u32)(x->tx.cached_prod - x->comp.cached_cons)) {
				free(buf);
				return fail(
					"--take-over: %s:%u: the state holds %llu fill and %llu TX frames, the rings %u and %u",
					e->qs[q].port->ifname, e->qs[q].queue,
					(unsigned long long)ss[q].fill_held,
					(unsigned long long)ss[q].tx_inflight,
					x->fill.cached_prod - x->rx.cached_cons,
					x->tx.cached_prod - x->comp.cached_cons);
			}
		}
		if (rings[XP_PLACE_FILL] != held[XP_PLACE_FILL] ||
		    rings[XP_PLACE_TX] != held[XP_PLACE_TX]) {
			free(buf);
			return fail(
				"--take-over: the ledger has %lld fill-side and %lld TX-side frames, the rings %lld and %lld",
				(long long)held[XP_PLACE_FILL], (long long)held[XP_PLACE_TX],
				(long long)rings[XP_PLACE_FILL], (long long)rings[XP_PLACE_TX]);
		}
		for (int place = XP_PLACE_FILL; place <= XP_PLACE_TX; place += 2) {
			for (k = 0, cnt = 0; k < nf; k++)
				if (bytes[k] == place)
					buf[cnt++] = xp_layout_frame(d[i].layout, k);
			if (acct)
				xp_ledger_move(acct, XP_PLACE_FREE, (enum xp_place)place, buf, cnt);
		}
		free(buf);
		bytes += nf;
	}
	for (__u32 q = 0; q < e->nq; q++) {
		e->qs[q].c.fill_posted = ss[q].fill_held;
		e->qs[q].tx_inflight = (__u32)ss[q].tx_inflight;
	}
	/* What the rings show must be where the ledger says. */
	for (__u32 q = 0; q < e->nq; q++) {
		struct xp_xsk *x = e->qs[q].xsk;
		const struct xp_ledger *l = d[ho_dom_of(e, &e->qs[q])].ledger;
		__u32 a = __atomic_load_n(x->fill.consumer, __ATOMIC_ACQUIRE);
		__u32 rp = __atomic_load_n(x->rx.producer, __ATOMIC_ACQUIRE);
		__u32 cp = __atomic_load_n(x->comp.producer, __ATOMIC_ACQUIRE);

		for (; a != x->fill.cached_prod; a++)
			if (xp_ledger_state_of(l, *xp_ring_addr(&x->fill, a)) != XP_PLACE_FILL)
				return fail(
					"--take-over: %s:%u: a fill ring frame the ledger has elsewhere",
					e->qs[q].port->ifname, e->qs[q].queue);
		for (a = x->rx.cached_cons; a != rp; a++)
			if (xp_ledger_state_of(l, xp_ring_desc(&x->rx, a)->addr) != XP_PLACE_FILL)
				return fail(
					"--take-over: %s:%u: an RX ring frame the ledger has elsewhere",
					e->qs[q].port->ifname, e->qs[q].queue);
		for (a = x->comp.cached_cons; a != cp; a++)
			if (xp_ledger_state_of(l, *xp_ring_addr(&x->comp, a)) != XP_PLACE_TX)
				return fail(
					"--take-over: %s:%u: a completion ring frame the ledger has elsewhere",
					e->qs[q].port->ifname, e->qs[q].queue);
	}
	for (__u32 i = 0; i < n; i++) {
		int err = eng_dom_deal(e, &e->dom[i]);

		if (err)
			return err;
	}
	return 0;
}

/* Tells the old engine why (it keeps serving): -EPROTO. */
static int ho_error(struct engine *e, const char *fmt, const char *what)
{
	xp_ho_send_error(e->ho->conn, fmt, what);
	return -EPROTO;
}

int eng_ho_take(struct engine *e)
{
	struct eng_ho *h = e->ho;
	const char *path = e->ho->take_over;
	struct xp_ho_hdr hdr;
	struct ho_state *st;
	__u32 cap;
	int err;

	for (__u32 i = 0; i < h->nfds; i++)
		if (!h->fd_used[i])
			return fail("--take-over %s: fd %u of the offer was not used", path, i);
	/* Every worker parked, its set-up done, before the old engine pauses: the pause
	 * then costs the exchange alone. */
	for (__u64 t = eng_now_ns(); __atomic_load_n(&e->parked, __ATOMIC_ACQUIRE) < e->nworkers &&
				     eng_now_ns() - t < 1000000000ull;)
		usleep(50);
	err = xp_ho_send(h->conn, HO_READY, 0, NULL, 0, NULL, 0);
	if (err)
		return fail(
			"--take-over %s: the old engine (pid %d) is gone: %s; nothing taken over",
			path, (int)h->peer, strerror(-err));
	ho_die_at(h, HO_FAULT_NEW_READY);
	cap = (__u32)(sizeof(*st) + e->nq * sizeof(struct ho_sock_state));
	for (__u32 i = 0; i < h->offer.numems; i++)
		cap += h->offer.umems[i].layout.nframes;
	st = calloc(1, cap);
	if (!st)
		return fail("out of memory");
	err = xp_ho_recv(h->conn, &hdr, st, cap, NULL, 0, HO_STATE_MS);
	if (err || hdr.type != HO_STATE) {
		free(st);
		return fail(
			"--take-over %s: the old engine (pid %d) sent no state: %s; nothing taken over, the kernel serves its queues if it died",
			path, (int)h->peer, err ? ho_recv_why(err) : "another message");
	}
	h->state_ns = eng_now_ns();
	ho_die_at(h, HO_FAULT_NEW_STATE);
	if (h->fault == HO_FAULT_NEW_REFUSE) {
		free(st);
		fail("--take-over: refusing the state for a test (XPILE_HANDOVER_FAULT=new-refuse)");
		return ho_error(e, "%s", "refused for a test (XPILE_HANDOVER_FAULT=new-refuse)");
	}
	if (h->fault == HO_FAULT_NEW_STALL)
		usleep((HO_OK_MS + 500) * 1000);
	if (state_take(e, st, hdr.len)) {
		free(st);
		return ho_error(e, "%s",
				"the new engine found the state inconsistent (its line says why)");
	}
	h->old_park_ns = st->park_ns;
	h->old_last_work_ns = st->last_work_ns;
	free(st);
	h->ok_ns = eng_now_ns();
	err = xp_ho_send(h->conn, HO_OK, 0, NULL, 0, NULL, 0);
	ho_die_at(h, HO_FAULT_NEW_OK);
	if (!err)
		err = xp_ho_recv(h->conn, &hdr, NULL, 0, NULL, 0, HO_COMMIT_MS);
	if (err || hdr.type != HO_COMMIT)
		return fail(
			"--take-over %s: the old engine (pid %d) did not commit: %s; exiting, the kernel serves the queues if it is gone",
			path, (int)h->peer, err ? ho_recv_why(err) : "another message");
	h->commit_ns = eng_now_ns();
	eng_resume(e);
	close(h->conn);
	h->conn = -1;
	/* Now ours to serve on: the same path or another. The old engine removed its file
	 * before COMMIT; one that predates that (an older xpile) still has it, and it must
	 * go before a bind, which would find the old listener and refuse. */
	if (e->ho->handover) {
		if (!strcmp(e->ho->handover, path))
			unlink(path);
		if (h->lfd < 0 && ho_listen(e))
			ut_say(0, "--handover %s: serving without a handover socket",
			       e->ho->handover);
	}
	return 0;
}

void eng_ho_tick(struct engine *e)
{
	struct eng_ho *h = e->ho;
	__u64 first = ~0ull, resume = ~0ull;
	char json[512], text[512];

	if (!e->ho->take_over || h->told || !h->commit_ns)
		return;
	for (__u32 i = 0; i < e->nworkers; i++) {
		const struct eng_worker *w = &e->workers[i];

		if (!w->ho_resume_ns)
			return; /* not every worker polled yet */
		if (w->ho_resume_ns < resume)
			resume = w->ho_resume_ns;
		if (w->ho_first_work_ns && w->ho_first_work_ns < first)
			first = w->ho_first_work_ns;
	}
	/* Packets moving since: wait for them up to 100 ms, then say what there is. */
	if (first == ~0ull && eng_now_ns() - h->commit_ns < 100000000ull)
		return;
	h->told = true;
	snprintf(
		json, sizeof(json),
		"{\"type\":\"handover\",\"role\":\"new\",\"from_pid\":%d,\"old_park_ns\":%llu,\"old_last_work_ns\":%llu,\"state_ns\":%llu,\"ok_ns\":%llu,\"commit_ns\":%llu,\"resume_ns\":%llu,\"first_work_ns\":%llu,\"pause_ns\":%llu}\n",
		(int)h->peer, (unsigned long long)h->old_park_ns,
		(unsigned long long)h->old_last_work_ns, (unsigned long long)h->state_ns,
		(unsigned long long)h->ok_ns, (unsigned long long)h->commit_ns,
		(unsigned long long)resume, first == ~0ull ? 0ull : (unsigned long long)first,
		(unsigned long long)(resume - h->old_park_ns));
	snprintf(text, sizeof(text), "took over from pid %d: no one polled for %.1f us",
		 (int)h->peer, (resume - h->old_park_ns) / 1e3);
	ho_say(e, json, text);
}
