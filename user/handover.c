// SPDX-License-Identifier: BSD-3-Clause
/*
 * Hot handover of a running engine to a new process (handover.h; the protocol and its
 * failure cases: docs/engine.md, "Handover"). The sockets, their rings and the UMEM
 * survive; only the process changes. Every message is framed and versioned by the
 * library (xpile/handover.h); the payloads below are this engine's, and every UMEM the
 * engine has is one record of an array (ho_doms()), so several UMEMs are one loop.
 *
 * What may differ in the new engine: --cores, --duration, --interval, --json, --quiet,
 * -v, --batch, --cache, --pool, --m3-seed, --ledger-debug, --audit, --spin,
 * --idle-wait, --capture and its options, --handover. Everything the sockets or the
 * UMEM fixed must be the same: --mode, the --iface list and queues, the ring sizes,
 * --frame-size, --headroom, --frames (when given), --layout, --umem, --no-need-wakeup,
 * --multi-buffer, --busy-poll, --busy-budget, --tx-budget, --pin-path, and a --copy or
 * --zero-copy the sockets do not run in; a difference is refused with one line.
 */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <unistd.h>

#include "handover_proto.h"

static const char *const fault_names[] = { "",		"new-hello",  "new-offer", "new-ready",
					   "new-state", "new-refuse", "new-stall", "old-offer",
					   "old-state", "new-ok" };

__u32 ho_doms(struct engine *e, struct ho_dom *d)
{
	for (__u32 i = 0; i < e->ndoms; i++) {
		struct eng_dom *m = &e->dom[i];

		d[i] = (struct ho_dom){ &m->layout, m->ledger,	      &m->umem, m->mem.fd,
					m->buf.off, m->mem.page_size, m->node };
	}
	return e->ndoms;
}

__u32 ho_dom_of(const struct engine *e, const struct eng_q *q)
{
	(void)e;
	return q->dom->id;
}

void ho_die_at(const struct eng_ho *h, enum ho_fault f)
{
	if (h->fault == f) {
		(void)fflush(NULL);
		(void)raise(SIGKILL);
	}
}

void ho_say(const struct engine *e, const char *json, const char *text)
{
	if (e->cfg.json) {
		fputs(json, stdout);
		fflush(stdout);
	} else if (!e->cfg.quiet) {
		fputs(text, stderr);
	}
}

static int ho_new(struct engine *e)
{
	struct eng_ho *h = calloc(1, sizeof(*h));
	const char *f = getenv("XPILE_HANDOVER_FAULT"), *v = getenv("XPILE_HANDOVER_VERSION");

	if (!h)
		return fail("out of memory");
	h->lfd = h->sfd = h->conn = -1;
	for (__u32 i = 1; f && i < sizeof(fault_names) / sizeof(fault_names[0]); i++)
		if (!strcmp(f, fault_names[i]))
			h->fault = (enum ho_fault)i;
	if (v)
		h->version = (__u16)atoi(v);
	e->ho = h;
	return 0;
}

int ho_listen(struct engine *e)
{
	struct eng_ho *h = e->ho;
	sigset_t set;
	int err = xp_ho_listen(e->cfg.handover, &h->lfd);

	if (err)
		return -1; /* the library said why */
	h->lino = xp_ho_path_ino(e->cfg.handover);
	sigemptyset(&set);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGUSR1);
	sigaddset(&set, SIGHUP);
	h->sfd = signalfd(-1, &set, SFD_CLOEXEC | SFD_NONBLOCK);
	if (h->sfd < 0)
		return fail("--handover: signalfd failed: %s", strerror(errno));
	return 0;
}

void ho_hello_fill(const struct engine *e, struct ho_hello *m)
{
	const struct eng_config *c = &e->cfg;

	memset(m, 0, sizeof(*m));
	m->pid = (__u32)getpid();
	snprintf(m->mode, sizeof(m->mode), "%s", c->mode->name);
	m->nports = c->nports;
	for (__u32 i = 0; i < c->nports; i++) {
		memcpy(m->ports[i].ifname, c->ports[i].ifname, sizeof(m->ports[i].ifname));
		m->ports[i].nqueues = c->ports[i].nqueues;
		memcpy(m->ports[i].queues, c->ports[i].queues, sizeof(m->ports[i].queues));
	}
	m->frame_size = c->frame_size;
	m->headroom = c->headroom;
	m->frames = c->frames;
	m->layout = c->layout;
	m->rx_ring = c->rx_ring;
	m->tx_ring = c->tx_ring;
	m->fill_ring = c->fill_ring;
	m->comp_ring = c->comp_ring;
	m->no_need_wakeup = c->no_need_wakeup;
	m->multi_buffer = c->multi_buffer;
	m->multi_buffer_set = c->multi_buffer_set;
	m->busy_poll = c->busy_poll;
	snprintf(m->pin_path, sizeof(m->pin_path), "%s", c->pin_path ? c->pin_path : "");
	m->umem = (__u32)c->umem;
	m->xsk_mode = (__u32)c->xsk_mode;
	m->tx_budget = c->tx_budget;
	m->busy_budget = c->busy_budget;
}

const char *ho_recv_why(int err)
{
	switch (err) {
	case -ETIMEDOUT:
		return "no answer in time";
	case -ECONNRESET:
		return "it closed the connection (it died or gave up)";
	case -EBADMSG:
		return "not a handover message";
	default:
		return strerror(-err);
	}
}

int eng_ho_setup(struct engine *e)
{
	const struct eng_config *c = &e->cfg;

	if (!c->handover && !c->take_over)
		return 0;
	if (ho_new(e))
		return -1;
	/* A successor on the same path binds it once the old engine committed. */
	if (c->handover && !(c->take_over && !strcmp(c->handover, c->take_over)) && ho_listen(e))
		return -1;
	return c->take_over ? ho_take_offer(e) : 0;
}

void eng_ho_close(struct engine *e)
{
	struct eng_ho *h = e->ho;

	if (!h)
		return;
	if (h->lfd >= 0) {
		/* A successor may have bound its own socket there: unlink only ours. */
		if (h->lino && xp_ho_path_ino(e->cfg.handover) == h->lino)
			unlink(e->cfg.handover);
		close(h->lfd);
	}
	if (h->sfd >= 0)
		close(h->sfd);
	if (h->conn >= 0)
		close(h->conn);
	for (__u32 i = 0; i < h->nfds; i++)
		if (!h->fd_used[i])
			close(h->fds[i]);
	free(h);
	e->ho = NULL;
}
