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

#include "engine.h"
#include "xpile/handover.h"

#define fail(...) eng_say(-1, __VA_ARGS__)

/* How long each side waits for the other's next message (ms). The old engine's wait
 * for OK is its pause's bound when the new one hangs. */
#define HO_HELLO_MS 2000
#define HO_READY_MS 5000
#define HO_STATE_MS 2000
#define HO_OK_MS 1000
#define HO_COMMIT_MS 2000

enum { HO_HELLO = 1, HO_OFFER, HO_READY, HO_STATE, HO_OK, HO_COMMIT };

/* XPILE_HANDOVER_FAULT (tests): where this process dies (SIGKILL) or misbehaves. */
enum ho_fault {
	HO_FAULT_NONE,
	HO_FAULT_NEW_HELLO, /* new: after sending HELLO */
	HO_FAULT_NEW_OFFER, /* new: after taking the OFFER (everything mapped) */
	HO_FAULT_NEW_READY, /* new: after READY: the old engine is pausing */
	HO_FAULT_NEW_STATE, /* new: after STATE, before OK */
	HO_FAULT_NEW_REFUSE, /* new: answers the STATE with an error */
	HO_FAULT_NEW_STALL, /* new: never answers the STATE (the old one times out) */
	HO_FAULT_OLD_OFFER, /* old: after sending the OFFER */
	HO_FAULT_OLD_STATE, /* old: after sending the STATE, paused */
	HO_FAULT_NEW_OK, /* new: after sending OK, before COMMIT */
};

static const char *const fault_names[] = { "",		"new-hello",  "new-offer", "new-ready",
					   "new-state", "new-refuse", "new-stall", "old-offer",
					   "old-state", "new-ok" };

struct ho_port {
	char ifname[16];
	__u32 nqueues;
	__u32 queues[ENG_MAX_QUEUES];
};

/* HELLO: what the new engine was asked to serve, to be compared with what is served. */
struct ho_hello {
	__u32 pid;
	__u32 nports;
	char mode[16];
	struct ho_port ports[ENG_MAX_PORTS];
	__u32 frame_size, headroom, frames, layout;
	__u32 rx_ring, tx_ring, fill_ring, comp_ring;
	__u8 no_need_wakeup, multi_buffer, multi_buffer_set, busy_poll;
	char pin_path[256];
	__u32 umem; /* enum eng_umem */
	__u32 xsk_mode; /* enum xp_xsk_mode asked for */
	__u32 tx_budget, busy_budget; /* socket options, set once by the first engine */
	__u32 pad_;
};

/* One UMEM: where it lies in the memfd sent with it, its layout and its frames. */
struct ho_umem {
	struct xp_umem_rec rec;
	struct xp_layout layout;
	__s32 numa_node;
	__u32 hugepages;
};

struct ho_sock {
	struct xp_xsk_rec rec;
	__u32 umem; /* index into the UMEM records */
	__u32 pad_;
};

/* OFFER: fds are the UMEMs' memfds, then the sockets', in record order. */
struct ho_offer {
	__u32 pid, numems, nsocks, pad_;
	struct ho_umem umems[ENG_MAX_PORTS];
	struct ho_sock socks[ENG_MAX_PORTS * ENG_MAX_QUEUES];
};

/* STATE, at the pause: this header, nsocks socket states, then each UMEM's state
 * bytes (enum xp_place), nframes[i] of them in frame index order. */
struct ho_sock_state {
	struct xp_xsk_rec rec; /* the indices at the pause */
	__u64 fill_held; /* fill_posted - rx_descs: in the fill ring, the kernel, RX */
	__u64 tx_inflight; /* posted to TX, not completed */
};

struct ho_state {
	__u64 park_ns; /* the last worker parked */
	__u64 last_work_ns; /* the last turn that moved packets */
	__u32 numems, nsocks;
	__u32 nframes[ENG_MAX_PORTS];
};

struct eng_ho {
	int lfd; /* --handover listener, -1 */
	__u64 lino; /* its socket file's inode, to unlink only our own */
	int sfd; /* signalfd the main loop polls beside lfd */
	int conn; /* --take-over: the connection to the old engine */
	pid_t peer;
	enum ho_fault fault;
	__u16 version; /* XPILE_HANDOVER_VERSION (tests), else 0: the library's */
	struct ho_offer offer; /* taken over */
	int fds[XP_HO_MAX_FDS];
	__u32 nfds;
	bool fd_used[XP_HO_MAX_FDS];
	__u64 commit_ns; /* new: when the workers were let go */
	__u64 state_ns, ok_ns; /* new: STATE received, OK sent */
	__u64 old_park_ns, old_last_work_ns;
	bool told; /* new: the pause line was printed */
};

/* One UMEM of the engine and what goes with it. Today an engine has one; the records
 * are an array so that an engine with several (one per port) is this one loop. */
struct ho_dom {
	struct xp_layout *layout;
	struct xp_ledger *ledger;
	struct xp_umem **umem;
	int memfd;
	__u64 off;
	__u32 page_size;
	int numa_node;
};

static __u32 ho_doms(struct engine *e, struct ho_dom *d)
{
	for (__u32 i = 0; i < e->ndoms; i++) {
		struct eng_dom *m = &e->dom[i];

		d[i] = (struct ho_dom){ &m->layout, m->ledger,	      &m->umem, m->mem.fd,
					m->buf.off, m->mem.page_size, m->node };
	}
	return e->ndoms;
}

static __u32 ho_dom_of(const struct engine *e, const struct eng_q *q)
{
	(void)e;
	return q->dom->id;
}

static void die_at(const struct eng_ho *h, enum ho_fault f)
{
	if (h->fault == f) {
		(void)fflush(NULL);
		(void)raise(SIGKILL);
	}
}

static void say_json_or_text(const struct engine *e, const char *json, const char *text)
{
	if (e->cfg.json) {
		fputs(json, stdout);
		fflush(stdout);
	} else if (!e->cfg.quiet) {
		fputs(text, stderr);
	}
}

/* ---- set-up ---- */

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

static int ho_listen(struct engine *e)
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

static void hello_fill(const struct engine *e, struct ho_hello *m)
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

/* The old side's check of a HELLO: 0, or the one line that says what differs. */
static int hello_check(const struct engine *e, const struct ho_hello *m, char *why, size_t len)
{
	struct ho_hello mine;

	hello_fill(e, &mine);
#define DIFF(field, opt)                                                                          \
	if (m->field != mine.field) {                                                             \
		snprintf(why, len, opt " %u differs from the running engine's %u: give the same", \
			 (unsigned)m->field, (unsigned)mine.field);                               \
		return -1;                                                                        \
	}
	if (strcmp(m->mode, mine.mode)) {
		snprintf(why, len,
			 "--mode %.16s differs from the running engine's %s: give the same",
			 m->mode, mine.mode);
		return -1;
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
		return -1;
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
		return -1;
	}
	if (m->multi_buffer_set && m->multi_buffer != mine.multi_buffer) {
		snprintf(why, len,
			 "--multi-buffer differs from the running engine's: give the same");
		return -1;
	}
	for (__u32 i = 0; m->frames && i < e->ndoms; i++)
		if (m->frames != e->dom[i].layout.nframes) {
			snprintf(
				why, len,
				"--frames %u differs from the running engine's %u: give the same, or leave it out",
				m->frames, e->dom[i].layout.nframes);
			return -1;
		}
	if (strcmp(m->pin_path, mine.pin_path)) {
		snprintf(why, len, "--pin-path differs from the running engine's: give the same");
		return -1;
	}
#undef DIFF
	return 0;
}

static const char *recv_why(int err)
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

/* New side: the OFFER's UMEMs mapped, their layouts adopted. */
static int take_umems(struct engine *e)
{
	struct eng_ho *h = e->ho;
	struct ho_dom d[ENG_MAX_PORTS];
	__u32 n = ho_doms(e, d);

	if (h->offer.numems != n)
		return fail("the engine at %s has %u UMEM(s), this one %u: give the same options",
			    e->cfg.take_over, h->offer.numems, n);
	for (__u32 i = 0; i < n; i++) {
		const struct ho_umem *u = &h->offer.umems[i];

		struct eng_dom *m = &e->dom[i];

		if (xp_umem_import(h->fds[i], &u->rec, d[i].umem))
			return -1; /* said by the library */
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
		if (eng_dom_fill_cap(e, m))
			return -1;
	}
	snprintf(e->topo_note, sizeof(e->topo_note), "the layout of pid %d, taken over",
		 (int)h->peer);
	return 0;
}

static int take_offer(struct engine *e)
{
	struct eng_ho *h = e->ho;
	const char *path = e->cfg.take_over;
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
	hello_fill(e, &m);
	err = xp_ho_send(h->conn, HO_HELLO, h->version, &m, sizeof(m), NULL, 0);
	die_at(h, HO_FAULT_NEW_HELLO);
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
			    (int)h->peer, recv_why(err));
	h->nfds = hdr.nfds;
	if (hdr.type != HO_OFFER || hdr.len != sizeof(h->offer) ||
	    h->offer.numems > ENG_MAX_PORTS || h->offer.nsocks != e->nq ||
	    hdr.nfds != h->offer.numems + h->offer.nsocks)
		return fail(
			"--take-over %s: a malformed offer from pid %d (%u sockets, %u fds, this engine serves %u sockets)",
			path, (int)h->peer, h->offer.nsocks, hdr.nfds, e->nq);
	die_at(h, HO_FAULT_NEW_OFFER);
	return take_umems(e);
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
	return c->take_over ? take_offer(e) : 0;
}

int eng_ho_import_xsk(struct engine *e, struct eng_q *q)
{
	struct eng_ho *h = e->ho;
	struct ho_dom d[ENG_MAX_PORTS];

	ho_doms(e, d);
	for (__u32 i = 0; i < h->offer.nsocks; i++) {
		const struct ho_sock *s = &h->offer.socks[i];
		__u32 fdi = h->offer.numems + i;

		if (strncmp(s->rec.ifname, q->port->ifname, sizeof(s->rec.ifname)) ||
		    s->rec.queue != q->queue)
			continue;
		if (h->fd_used[fdi] || s->umem != ho_dom_of(e, q))
			break;
		if (xp_xsk_import(*d[s->umem].umem, h->fds[fdi], &s->rec, &q->xsk))
			return -1; /* said by the library */
		h->fd_used[fdi] = true;
		return 0;
	}
	return fail("--take-over %s: the engine there offers no socket for %s queue %u",
		    e->cfg.take_over, q->port->ifname, q->queue);
}

/* ---- the old side ---- */

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

static void old_said(const struct engine *e, pid_t peer, const char *what)
{
	fprintf(stderr, "xpile: handover to pid %d: %s\n", (int)peer, what);
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
		snprintf(why, sizeof(why), "no hello: %s", err ? recv_why(err) : "a bad message");
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
	die_at(h, HO_FAULT_OLD_OFFER);
	err = xp_ho_recv(fd, &hdr, NULL, 0, NULL, 0, HO_READY_MS);
	if (err || hdr.type != HO_READY) {
		snprintf(why, sizeof(why), "failed before the pause: %s; still serving",
			 err ? recv_why(err) : "no READY");
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
	die_at(h, HO_FAULT_OLD_STATE);
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
			 recv_why(err), (eng_now_ns() - t0) / 1e3);
	}
	/* Committed only once the successor can know it: it polls on COMMIT alone. */
	if (!err) {
		e->hands_off = 1;
		err = xp_ho_send(fd, HO_COMMIT, 0, NULL, 0, NULL, 0);
		if (err) {
			e->hands_off = 0;
			snprintf(why, sizeof(why), "gone before the commit (%s); resumed",
				 strerror(-err));
		}
	}
	eng_resume(e); /* handed over: the workers leave; else they carry on */
	if (err) {
		free(st);
		goto refused;
	}
	snprintf(
		json, sizeof(json),
		"{\"type\":\"handover\",\"role\":\"old\",\"to_pid\":%d,\"park_ns\":%llu,\"last_work_ns\":%llu,\"state_bytes\":%u,\"sockets\":%u}\n",
		(int)peer, (unsigned long long)((struct ho_state *)st)->park_ns,
		(unsigned long long)((struct ho_state *)st)->last_work_ns, len, e->nq);
	snprintf(line, sizeof(line),
		 "xpile: handed over to pid %d (%u socket(s), %u state bytes)\n", (int)peer, e->nq,
		 len);
	say_json_or_text(e, json, line);
	free(st);
	free(o);
	return 1;
refused:
	old_said(e, peer, why);
	free(o);
	return 0;
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
			fprintf(stderr,
				"xpile: handover refused: the peer on %s runs under another uid\n",
				e->cfg.handover);
		if (!err) {
			int done = serve(e, fd, peer);

			close(fd);
			if (done)
				return ENG_HO_DONE;
		}
	}
	return sigtimedwait(set, si, h->lfd >= 0 ? &zero : ts);
}

/* ---- the new side, workers parked ---- */

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
	for (__u32 i = 0; i < n; i++)
		if (eng_dom_deal(e, &e->dom[i]))
			return -1;
	return 0;
}

static int ho_error(struct engine *e, const char *fmt, const char *what)
{
	xp_ho_send_error(e->ho->conn, fmt, what);
	return -1;
}

int eng_ho_take(struct engine *e)
{
	struct eng_ho *h = e->ho;
	const char *path = e->cfg.take_over;
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
	die_at(h, HO_FAULT_NEW_READY);
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
			path, (int)h->peer, err ? recv_why(err) : "another message");
	}
	h->state_ns = eng_now_ns();
	die_at(h, HO_FAULT_NEW_STATE);
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
	die_at(h, HO_FAULT_NEW_OK);
	if (!err)
		err = xp_ho_recv(h->conn, &hdr, NULL, 0, NULL, 0, HO_COMMIT_MS);
	if (err || hdr.type != HO_COMMIT)
		return fail(
			"--take-over %s: the old engine (pid %d) did not commit: %s; exiting, the kernel serves the queues if it is gone",
			path, (int)h->peer, err ? recv_why(err) : "another message");
	h->commit_ns = eng_now_ns();
	eng_resume(e);
	close(h->conn);
	h->conn = -1;
	/* Now ours to serve on: the same path (the old engine's file goes) or another. */
	if (e->cfg.handover) {
		if (!strcmp(e->cfg.handover, path))
			unlink(path);
		if (h->lfd < 0 && ho_listen(e))
			fprintf(stderr, "xpile: --handover %s: serving without a handover socket\n",
				e->cfg.handover);
	}
	return 0;
}

void eng_ho_tick(struct engine *e)
{
	struct eng_ho *h = e->ho;
	__u64 first = ~0ull, resume = ~0ull;
	char json[512], text[512];

	if (!e->cfg.take_over || h->told || !h->commit_ns)
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
	snprintf(text, sizeof(text), "xpile: took over from pid %d: no one polled for %.1f us\n",
		 (int)h->peer, (resume - h->old_park_ns) / 1e3);
	say_json_or_text(e, json, text);
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
