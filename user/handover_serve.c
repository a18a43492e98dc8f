// SPDX-License-Identifier: BSD-3-Clause
/*
 * Hot handover, the old side: a successor's HELLO checked against what is served, the
 * OFFER of every UMEM and socket fd, the pause at a batch boundary and the STATE, then
 * COMMIT and exit, or a resume with everything as it was (handover.h).
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <unistd.h>

#include "dom.h"
#include "handover_proto.h"
#include "ctl.h"
#include "handover_serve.h"
#include "pause.h"

int ho_listen(struct engine *e)
{
	struct eng_ho *h = e->ho;
	sigset_t set;
	int err = xp_ho_listen(e->ho->handover, &h->lfd);

	if (err)
		return err; /* the library said why */
	h->lino = xp_ho_path_ino(e->ho->handover);
	sigemptyset(&set);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGUSR1);
	sigaddset(&set, SIGHUP);
	h->sfd = signalfd(-1, &set, SFD_CLOEXEC | SFD_NONBLOCK);
	if (h->sfd < 0)
		return ut_say(-errno, "--handover: signalfd failed: %s", strerror(errno));
	return 0;
}

/* The old side's check of a HELLO: 0, or -EINVAL and the one line that says what
 * differs. */
static int hello_check(const struct engine *e, const struct ho_hello *m, char *why, size_t len)
{
	struct ho_hello mine;

	ho_hello_fill(e, &mine);
#define DIFF(field, opt)                                                                          \
	if (m->field != mine.field) {                                                             \
		snprintf(why, len, opt " %u differs from the running engine's %u: give the same", \
			 (unsigned)m->field, (unsigned)mine.field);                               \
		return -EINVAL;                                                                   \
	}
	if (strcmp(m->mode, mine.mode)) {
		snprintf(why, len,
			 "--mode %.16s differs from the running engine's %s: give the same",
			 m->mode, mine.mode);
		return -EINVAL;
	}
	if (m->nports != mine.nports || memcmp(m->ports, mine.ports, sizeof(mine.ports))) {
		char have[256] = "";
		size_t k = 0;

		for (__u32 i = 0; i < mine.nports && k < sizeof(have) - 32; i++) {
			k += (size_t)snprintf(have + k, sizeof(have) - k,
					      "%s--iface %s:", i ? " " : "", mine.ports[i].ifname);
			for (__u32 j = 0; j < mine.ports[i].nqueues && k < sizeof(have) - 16; j++)
				k += (size_t)snprintf(have + k, sizeof(have) - k, "%s%u",
						      j ? "," : "", mine.ports[i].queues[j]);
		}
		snprintf(
			why, len,
			"different ports or queues: the running engine serves %s; give the same --iface list, queues in the same order",
			have);
		return -EINVAL;
	}
	DIFF(frame_size, "--frame-size")
	DIFF(headroom, "--headroom")
	DIFF(layout, "--layout (0 interleaved, 1 aligned)")
	DIFF(rx_ring, "--rx-ring")
	DIFF(tx_ring, "--tx-ring")
	DIFF(fill_ring, "--fill-ring")
	DIFF(comp_ring, "--comp-ring")
	DIFF(no_need_wakeup, "--no-need-wakeup")
	DIFF(busy_poll, "--busy-poll")
	DIFF(umem, "--umem (0 shared, 1 per-port)")
	DIFF(tx_budget, "--tx-budget")
	DIFF(busy_budget, "--busy-budget")
	/* auto takes the sockets as they are; copy or zero-copy must be what they are. */
	if (e->nq && e->qs[0].xsk &&
	    ((m->xsk_mode == XP_XSK_COPY && e->qs[0].xsk->zerocopy) ||
	     (m->xsk_mode == XP_XSK_ZEROCOPY && !e->qs[0].xsk->zerocopy))) {
		snprintf(
			why, len,
			"the sockets run in %s mode: drop --copy/--zero-copy or give --xsk-mode %s",
			e->qs[0].xsk->zerocopy ? "zero-copy" : "copy",
			e->qs[0].xsk->zerocopy ? "zero-copy" : "copy");
		return -EINVAL;
	}
	if (m->multi_buffer_set && m->multi_buffer != mine.multi_buffer) {
		snprintf(why, len,
			 "--multi-buffer differs from the running engine's: give the same");
		return -EINVAL;
	}
	for (__u32 i = 0; m->frames && i < e->ndoms; i++)
		if (m->frames != e->dom[i].layout.nframes) {
			snprintf(
				why, len,
				"--frames %u differs from the running engine's %u: give the same, or leave it out",
				m->frames, e->dom[i].layout.nframes);
			return -EINVAL;
		}
	if (strcmp(m->pin_path, mine.pin_path)) {
		snprintf(why, len, "--pin-path differs from the running engine's: give the same");
		return -EINVAL;
	}
#undef DIFF
	return 0;
}

static void offer_fill(struct engine *e, struct ho_offer *o, int *fds)
{
	struct ho_dom d[ENG_MAX_PORTS];
	__u32 n = ho_doms(e, d);

	memset(o, 0, sizeof(*o));
	o->pid = (__u32)getpid();
	o->numems = n;
	o->nsocks = e->nq;
	for (__u32 i = 0; i < n; i++) {
		xp_umem_export(*d[i].umem, d[i].off, d[i].page_size, &o->umems[i].rec);
		o->umems[i].layout = *d[i].layout;
		o->umems[i].numa_node = d[i].numa_node;
		o->umems[i].hugepages = d[i].page_size == XP_PAGE_2M;
		fds[i] = d[i].memfd;
	}
	for (__u32 i = 0; i < e->nq; i++) {
		xp_xsk_export(e->qs[i].xsk, &o->socks[i].rec);
		o->socks[i].umem = ho_dom_of(e, &e->qs[i]);
		fds[n + i] = e->qs[i].xsk->fd;
	}
}

/* The STATE at the pause (workers parked): a buffer the caller frees, or NULL. */
static void *state_build(struct engine *e, __u32 *len)
{
	struct ho_dom d[ENG_MAX_PORTS];
	__u32 n = ho_doms(e, d), bytes = 0;
	struct ho_state *st;
	struct ho_sock_state *ss;
	__u8 *p;

	for (__u32 i = 0; i < n; i++)
		bytes += d[i].layout->nframes;
	*len = (__u32)(sizeof(*st) + e->nq * sizeof(*ss) + bytes);
	st = calloc(1, *len);
	if (!st)
		return NULL;
	st->numems = n;
	st->nsocks = e->nq;
	for (__u32 i = 0; i < e->nworkers; i++) {
		const struct eng_worker *w = &e->workers[i];

		if (w->ho_park_ns > st->park_ns)
			st->park_ns = w->ho_park_ns;
		if (w->ho_last_work_ns > st->last_work_ns)
			st->last_work_ns = w->ho_last_work_ns;
	}
	ss = (struct ho_sock_state *)(st + 1);
	for (__u32 i = 0; i < e->nq; i++) {
		const struct eng_q *q = &e->qs[i];

		xp_xsk_export(q->xsk, &ss[i].rec);
		ss[i].fill_held = q->c.fill_posted - q->c.rx_descs;
		ss[i].tx_inflight = q->tx_inflight;
	}
	p = (__u8 *)(ss + e->nq);
	for (__u32 i = 0; i < n; i++) {
		st->nframes[i] = d[i].layout->nframes;
		for (__u32 k = 0; k < d[i].layout->nframes; k++)
			*p++ = (__u8)xp_ledger_state_of(d[i].ledger,
							xp_layout_frame(d[i].layout, k));
	}
	return st;
}

/* Our --handover socket file removed while still ours (the inode says so). */
static void path_release(struct engine *e)
{
	struct eng_ho *h = e->ho;

	if (h->lino && xp_ho_path_ino(e->ho->handover) == h->lino)
		unlink(e->ho->handover);
	h->lino = 0;
}

/* The commit failed: listen on the path again, or go on without (said). */
static void path_take_back(struct engine *e)
{
	struct eng_ho *h = e->ho;
	int fd;

	if (xp_ho_listen(e->ho->handover, &fd)) {
		ut_say(0, "--handover %s: serving without a handover socket", e->ho->handover);
		return;
	}
	close(h->lfd);
	h->lfd = fd;
	h->lino = xp_ho_path_ino(e->ho->handover);
}

static void old_said(const struct engine *e, pid_t peer, const char *what)
{
	ut_say(0, "handover to pid %d: %s", (int)peer, what);
}

/* One successor on @fd: 1 once everything is its, 0 while it is still ours. */
static int serve(struct engine *e, int fd, pid_t peer)
{
	struct eng_ho *h = e->ho;
	struct ho_hello m;
	struct ho_offer *o = calloc(1, sizeof(*o));
	int fds[XP_HO_MAX_FDS];
	struct xp_ho_hdr hdr;
	char why[512], line[640], json[640];
	void *st = NULL;
	__u32 len;
	__u64 t0;
	int err;

	if (!o)
		return 0;
	err = xp_ho_recv(fd, &hdr, &m, sizeof(m), NULL, 0, HO_HELLO_MS);
	if (err == -EPROTONOSUPPORT) {
		xp_ho_send_error(
			fd,
			"handover protocol version %u offered, this engine (pid %d) speaks %u: run matching xpile versions",
			hdr.version, (int)getpid(), XP_HO_VERSION);
		snprintf(why, sizeof(why), "refused: it speaks protocol version %u, this engine %u",
			 hdr.version, XP_HO_VERSION);
		goto refused;
	}
	if (err || hdr.type != HO_HELLO || hdr.len != sizeof(m)) {
		snprintf(why, sizeof(why), "no hello: %s",
			 err ? ho_recv_why(err) : "a bad message");
		goto refused;
	}
	if (hello_check(e, &m, why, sizeof(why))) {
		xp_ho_send_error(fd, "%s", why);
		goto refused;
	}
	offer_fill(e, o, fds);
	err = xp_ho_send(fd, HO_OFFER, 0, o, sizeof(*o), fds, o->numems + o->nsocks);
	if (err) {
		snprintf(why, sizeof(why), "cannot send the offer: %s", strerror(-err));
		goto refused;
	}
	ho_die_at(h, HO_FAULT_OLD_OFFER);
	err = xp_ho_recv(fd, &hdr, NULL, 0, NULL, 0, HO_READY_MS);
	if (err || hdr.type != HO_READY) {
		snprintf(why, sizeof(why), "failed before the pause: %s; still serving",
			 err ? ho_recv_why(err) : "no READY");
		goto refused;
	}
	/* The pause: from here to COMMIT (or the resume) no worker touches a ring. */
	if (eng_pause(e, "handover")) {
		xp_ho_send_error(fd, "the engine's workers did not pause within 1 s");
		snprintf(why, sizeof(why), "workers did not pause; still serving");
		goto refused;
	}
	t0 = eng_now_ns();
	st = state_build(e, &len);
	err = st ? xp_ho_send(fd, HO_STATE, 0, st, len, NULL, 0) : -ENOMEM;
	ho_die_at(h, HO_FAULT_OLD_STATE);
	if (!err)
		err = xp_ho_recv(fd, &hdr, line, sizeof(line) - 1, NULL, 0, HO_OK_MS);
	if (!err && hdr.type == XP_HO_MSG_ERROR) {
		line[hdr.len] = 0;
		snprintf(why, sizeof(why), "refused the state: %.400s; resumed after %.0f us", line,
			 (eng_now_ns() - t0) / 1e3);
		err = -EPROTO;
	} else if (!err && hdr.type != HO_OK) {
		err = -EPROTO;
		snprintf(why, sizeof(why), "answered the state with message %u; resumed", hdr.type);
	} else if (err) {
		snprintf(why, sizeof(why), "failed at the state: %s; resumed after %.0f us",
			 ho_recv_why(err), (eng_now_ns() - t0) / 1e3);
	}
	/* Committed only once the successor can know it: it polls on COMMIT alone. Our
	 * socket file goes first: a successor binds the same path on COMMIT, and an
	 * unlink of ours after that could remove its file. */
	if (!err) {
		e->hands_off = 1;
		path_release(e);
		err = xp_ho_send(fd, HO_COMMIT, 0, NULL, 0, NULL, 0);
		if (err) {
			e->hands_off = 0;
			path_take_back(e);
			snprintf(why, sizeof(why), "gone before the commit (%s); resumed",
				 strerror(-err));
		}
	}
	eng_resume(e); /* handed over: the workers leave; else they carry on */
	if (err) {
		free(st);
		goto refused;
	}
	/* The control socket's path is the successor's now: it waits for it (ctl.c). */
	eng_ctl_stop(e);
	snprintf(
		json, sizeof(json),
		"{\"type\":\"handover\",\"role\":\"old\",\"to_pid\":%d,\"park_ns\":%llu,\"last_work_ns\":%llu,\"state_bytes\":%u,\"sockets\":%u}\n",
		(int)peer, (unsigned long long)((struct ho_state *)st)->park_ns,
		(unsigned long long)((struct ho_state *)st)->last_work_ns, len, e->nq);
	snprintf(line, sizeof(line), "handed over to pid %d (%u socket(s), %u state bytes)",
		 (int)peer, e->nq, len);
	ho_say(e, json, line);
	free(st);
	free(o);
	return 1;
refused:
	old_said(e, peer, why);
	free(o);
	return 0;
}

/* Handed over to @winner: the successors still queued on the listening socket (they
 * connected while it was served) learn so, rather than just seeing a closed
 * connection. The path is gone since the commit, so no new one can join the queue. */
static void turn_away(struct engine *e, pid_t winner)
{
	struct eng_ho *h = e->ho;
	int fd, err;
	pid_t peer;

	if (fcntl(h->lfd, F_SETFL, O_NONBLOCK))
		return;
	while ((err = xp_ho_accept(h->lfd, 200, &fd, &peer)) != -EAGAIN) {
		if (err)
			continue; /* another uid: told nothing */
		xp_ho_send_error(
			fd,
			"another successor, pid %d, took it over first: take over from pid %d instead (its --handover socket)",
			(int)winner, (int)winner);
		close(fd);
		old_said(e, peer, "turned away: another successor took over first");
	}
}

int eng_ho_wait(struct engine *e, const sigset_t *set, const struct timespec *ts, siginfo_t *si)
{
	struct eng_ho *h = e->ho;
	const struct timespec zero = { 0, 0 };
	struct pollfd p[2] = { { .fd = h->sfd, .events = POLLIN },
			       { .fd = h->lfd, .events = POLLIN } };
	int ms = (int)(ts->tv_sec * 1000 + ts->tv_nsec / 1000000);

	if (h->lfd >= 0 && poll(p, 2, ms ? ms : 1) > 0 && (p[1].revents & POLLIN)) {
		pid_t peer = 0;
		int fd, err = xp_ho_accept(h->lfd, HO_READY_MS, &fd, &peer);

		if (err == -EPERM)
			ut_say(0, "handover refused: the peer on %s runs under another uid",
			       e->ho->handover);
		if (!err) {
			int done = serve(e, fd, peer);

			close(fd);
			if (done) {
				turn_away(e, peer);
				return ENG_HO_DONE;
			}
		}
	}
	return sigtimedwait(set, si, h->lfd >= 0 ? &zero : ts);
}
