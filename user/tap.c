// SPDX-License-Identifier: BSD-3-Clause
/*
 * Host TAPs: punt and inject on io_uring (tap.h says what goes where).
 *
 * Each worker serving a TAP port's queue has one ring for its TAP I/O: the UMEM is
 * registered as fixed buffer 0 (a punt writes from the frame), a small copy area as
 * buffer 1 (broadcast copies: the frame itself goes on), the TAP fds as fixed files,
 * the ring's own fd as a registered ring fd. COOP_TASKRUN: a completion never
 * interrupts the worker; it is collected on the worker's next syscall or by the ring's
 * taskrun flag, and the worker submits at most once per loop turn.
 *
 * Inject: one multishot read per TAP over a provided-buffer ring (group = the TAP's
 * index) of TAP_MSHOT_BUFS UMEM frames taken from the pile: the kernel reads each frame
 * the host sends straight into one of them, the worker posts it on TX and puts a fresh
 * frame in its place. Where the kernel has no READ_MULTISHOT (before 6.7) or refuses
 * it, TAP_READS READ_FIXED are kept posted instead (said once).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <net/if.h>
#include <net/if_arp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>
#include <linux/ethtool.h>
#include <linux/if_tun.h>
#include <linux/sockios.h>

#include <liburing.h>

#include "cli.h"
#include "dom.h"
#include "engine.h"
#include "rings.h"
#include "punt.h"
#include "tap.h"
#include "uring_buf.h"
#include "xpile/features.h"

#define TAP_SQ 256u
#define TAP_CQ 2048u
/* SQEs outstanding per ring, plus every TAP's provided buffers (a completion each at
 * most): the CQ never fills. */
#define TAP_MAX_INFLIGHT 192u
#define TAP_READS 32u /* READ_FIXED kept posted per TAP where multishot is refused */
#define TAP_MSHOT_BUFS 64u /* frames in a TAP's provided-buffer ring (a power of two) */
#define TAP_COPY_SLOTS 64u /* broadcast copies in flight per worker */
#define TAP_STOP_NS 500000000ull

enum { K_MSHOT = 0, K_PUNT = 1, K_COPY = 2, K_READ = 3 };

static __u64 ud(int kind, __u32 tap, __u64 v)
{
	return (__u64)kind << 62 | (__u64)tap << 56 | v;
}

struct eng_tap {
	int fd;
	__u32 idx;
	char name[IFNAMSIZ];
	struct eng_port *p;
	struct eng_q *inq; /* the queue whose TX carries injects (its worker reads) */
	bool gone, keep, reused, carrier_said;
	/* The inject's multishot read, its worker's alone (inq->w). */
	bool mshot; /* multishot with provided buffers; else READ_FIXED */
	bool armed; /* the multishot read is posted and has not ended */
	struct ut_bufring br;
	__u64 bid_h[TAP_MSHOT_BUFS]; /* the frame each buffer id holds */
	__u16 free_bid[TAP_MSHOT_BUFS]; /* ids with no frame in the ring */
	__u32 nfree_bid;
	__u64 mshot_reads; /* frames it read: one means the kernel takes it */
	/* Counters: punts come from every worker of the port (relaxed adds). */
	__u64 punted, copied, punt_dropped, injected, inject_dropped;
};

struct eng_tap_w {
	struct io_uring ring;
	bool fixed; /* buffers registered: *_FIXED; else plain read/write */
	__u8 *copy;
	__u32 copy_free[TAP_COPY_SLOTS], ncopy_free;
	__u32 inflight; /* SQEs not completed */
	__u64 held; /* UMEM frames in flight (punts and reads): audits read it, parked */
	__u32 reads[ENG_MAX_PORTS]; /* reads posted per TAP this worker injects for */
	__u32 unsubmitted;
	bool stopping, ring_ok, ring_fd;
};

int eng_tap_opt(struct eng_tap_cfg *c, const char *v, char *why, size_t len)
{
	const char *eq = strchr(v, '=');
	size_t n = eq ? (size_t)(eq - v) : strlen(v);

	if (c->ntaps == ENG_TAP_MAX) {
		snprintf(why, len, "at most %d host TAPs", ENG_TAP_MAX);
		return -EINVAL;
	}
	if (!n || n >= IFNAMSIZ || (eq && (!eq[1] || strlen(eq + 1) >= IFNAMSIZ))) {
		snprintf(why, len,
			 "expected PORT or PORT=NAME (names of 1..15 bytes), e.g. e1=xp-e1");
		return -EINVAL;
	}
	/* The kernel's answer to such a name is only EINVAL. */
	if (eq && cli_check_ifname(eq + 1, why, len))
		return -1;
	snprintf(c->taps[c->ntaps].port, sizeof(c->taps[0].port), "%.*s", (int)n, v);
	if (eq)
		snprintf(c->taps[c->ntaps].name, sizeof(c->taps[0].name), "%s", eq + 1);
	else if (n + 3 < IFNAMSIZ)
		snprintf(c->taps[c->ntaps].name, sizeof(c->taps[0].name), "xp-%.*s", (int)n, v);
	else {
		snprintf(why, len, "'xp-%.*s' is too long for an interface name: give PORT=NAME",
			 (int)n, v);
		return -EINVAL;
	}
	c->ntaps++;
	return 0;
}

/* The ethtool driver of @name ("veth", "tun"...) and its bus ("tun" or "tap" for the
 * tun driver), or "" when it cannot be told. */
static void drv_info(int s, const char *name, char *drv, size_t dlen, char *bus, size_t blen)
{
	struct ethtool_drvinfo di = { .cmd = ETHTOOL_GDRVINFO };
	struct ifreq ifr;

	memset(&ifr, 0, sizeof(ifr));
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", name);
	ifr.ifr_data = (char *)&di;
	drv[0] = bus[0] = 0;
	if (s >= 0 && !ioctl(s, SIOCETHTOOL, &ifr)) {
		snprintf(drv, dlen, "%.*s", (int)sizeof(di.driver), di.driver);
		snprintf(bus, blen, "%.*s", (int)sizeof(di.bus_info), di.bus_info);
	}
}

/* One line for a TAP that could not be made: TUNSETIFF says EINVAL for a name that
 * exists as something else, and EBUSY for a TAP another process holds. */
static int create_failed(const struct engine *e, const struct eng_tap *t, int err)
{
	const char *port = e->cfg.tap->taps[t->idx].port, *name = e->cfg.tap->taps[t->idx].name;
	char opt[2 * IFNAMSIZ + 16], drv[40], bus[40];
	int s;

	if (!strncmp(name, "xp-", 3) && !strcmp(name + 3, port))
		snprintf(opt, sizeof(opt), "--host-tap %s", port);
	else
		snprintf(opt, sizeof(opt), "--host-tap %s=%s", port, name);
	if (err == -EBUSY)
		return ut_say(
			err,
			"%s: TAP %s is held by another process (an engine still running?): stop it, or name another TAP",
			opt, t->name);
	if (err != -EINVAL || !if_nametoindex(t->name))
		return ut_say(err, "%s: cannot create TAP %s: %s", opt, t->name, strerror(-err));
	s = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	drv_info(s, t->name, drv, sizeof(drv), bus, sizeof(bus));
	if (s >= 0)
		close(s);
	if (!strcmp(drv, "tun") && strcmp(bus, "tap"))
		return ut_say(
			err,
			"%s: %s exists and is a TUN device, not a TAP: name a new interface, e.g. --host-tap %s=xp-%s",
			opt, t->name, port, port);
	if (!strcmp(drv, "tun"))
		return ut_say(
			err,
			"%s: %s exists and is a TAP made with other flags (multi-queue?): remove it (ip link del %s) or name a new interface",
			opt, t->name, t->name);
	return ut_say(
		err,
		"%s: %s exists and is not a TAP (driver %s): name a new interface, e.g. --host-tap %s=xp-%s",
		opt, t->name, drv[0] ? drv : "unknown", port, port);
}

/* The TAP with the port's MAC and MTU, up. A TAP closed by an engine that just exited
 * may stay attached for a few ms (io_uring's teardown is async): EBUSY is retried. */
static int tap_create(struct eng_tap *t)
{
	struct ifreq ifr;
	int s, err = 0, i, mtu = 1500;

	s = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (s < 0)
		return -errno;
	memset(&ifr, 0, sizeof(ifr));
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", t->p->ifname);
	if (!ioctl(s, SIOCGIFMTU, &ifr))
		mtu = ifr.ifr_mtu;
	t->fd = open("/dev/net/tun", O_RDWR | O_CLOEXEC);
	if (t->fd < 0) {
		err = -errno;
		goto out;
	}
	for (i = 0; i < 50; i++) {
		memset(&ifr, 0, sizeof(ifr));
		ifr.ifr_flags = IFF_TAP | IFF_NO_PI;
		snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", t->name);
		if (!ioctl(t->fd, TUNSETIFF, &ifr))
			break;
		err = -errno;
		if (err != -EBUSY)
			goto out;
		nanosleep(&(struct timespec){ .tv_nsec = 10000000 }, NULL);
	}
	if (i == 50)
		goto out;
	/* --host-tap-keep: persistent, so closing the fd leaves it with what a person gave
	 * it; without, a TAP a previous keep left is made to go with this fd. */
	if (ioctl(t->fd, TUNSETPERSIST, (unsigned long)t->keep)) {
		err = -errno;
		goto out;
	}
	err = 0;
	memset(&ifr, 0, sizeof(ifr));
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", t->name);
	ifr.ifr_hwaddr.sa_family = ARPHRD_ETHER;
	memcpy(ifr.ifr_hwaddr.sa_data, t->p->mac, 6);
	if (ioctl(s, SIOCSIFHWADDR, &ifr))
		err = -errno;
	ifr.ifr_mtu = mtu;
	if (!err && ioctl(s, SIOCSIFMTU, &ifr))
		err = -errno;
	if (!err && ioctl(s, SIOCGIFFLAGS, &ifr))
		err = -errno;
	ifr.ifr_flags |= IFF_UP;
	if (!err && ioctl(s, SIOCSIFFLAGS, &ifr))
		err = -errno;
out:
	close(s);
	return err;
}

void eng_tap_carrier(const struct eng_port *p, bool up)
{
	struct eng_tap *t = p->tap;
	int on = up;

	if (!t || t->fd < 0 || __atomic_load_n(&t->gone, __ATOMIC_RELAXED))
		return;
	/* TUNSETCARRIER is 5.0's; an older kernel leaves the TAP's carrier on, as before. */
	if (ioctl(t->fd, TUNSETCARRIER, &on) && !t->carrier_said) {
		t->carrier_said = true;
		ut_say(0, "host TAP %s: its carrier cannot follow %s (TUNSETCARRIER: %s)", t->name,
		       p->ifname, strerror(errno));
	}
}

static int ring_setup(struct engine *e, struct eng_tap_w *tw, int *fds, __u32 nfds)
{
	struct iovec iov[2];
	int err;

	struct io_uring_params par = {
		.flags =
			IORING_SETUP_CQSIZE | IORING_SETUP_COOP_TASKRUN | IORING_SETUP_TASKRUN_FLAG,
		.cq_entries = TAP_CQ,
	};

	/* Not DEFER_TASKRUN: the multishot read lost its gain with it in the prototypes. */
	err = io_uring_queue_init_params(TAP_SQ, &tw->ring, &par);
	if (err == -EINVAL) {
		par = (struct io_uring_params){ .flags = IORING_SETUP_CQSIZE,
						.cq_entries = TAP_CQ };
		err = io_uring_queue_init_params(TAP_SQ, &tw->ring, &par);
	}
	if (err)
		return err;
	tw->ring_ok = true;
	tw->copy = aligned_alloc(4096, (size_t)TAP_COPY_SLOTS * e->dom[0].layout.chunk_size);
	if (!tw->copy)
		return -ENOMEM;
	for (__u32 i = 0; i < TAP_COPY_SLOTS; i++)
		tw->copy_free[tw->ncopy_free++] = i;
	iov[0] = (struct iovec){ e->dom[0].mem.base, e->dom[0].layout.area_size };
	iov[1] = (struct iovec){ tw->copy, (size_t)TAP_COPY_SLOTS * e->dom[0].layout.chunk_size };
	tw->fixed = !io_uring_register_buffers(&tw->ring, iov, 2);
	return io_uring_register_files(&tw->ring, fds, nfds);
}

/* The inject's provided-buffer ring on its worker's ring; the frames come from the
 * worker's dealer once it runs (post_reads()). */
static int mshot_setup(struct engine *e, struct eng_tap *t)
{
	struct eng_tap_w *tw = t->inq->w->tapw;
	struct io_uring_probe *probe;
	int err = -EOPNOTSUPP;

	for (__u32 i = 0; i < TAP_MSHOT_BUFS; i++)
		t->free_bid[i] = (__u16)(TAP_MSHOT_BUFS - 1 - i);
	t->nfree_bid = TAP_MSHOT_BUFS;
	if (e->cfg.tap->tap_read == ENG_TAP_READ_FIXED)
		return 0;
	probe = io_uring_get_probe_ring(&tw->ring);
	if (probe && io_uring_opcode_supported(probe, UT_OP_READ_MULTISHOT) && tw->fixed)
		err = ut_bufring_setup(&tw->ring, &t->br, TAP_MSHOT_BUFS, (__u16)t->idx);
	if (probe)
		io_uring_free_probe(probe);
	t->mshot = !err;
	if (err && e->cfg.tap->tap_read == ENG_TAP_READ_MSHOT)
		return eng_refuse(
			e, err,
			"--host-tap-read multishot: %s: the kernel has no multishot read with provided buffers (%s; Linux 6.7+); use --host-tap-read fixed",
			t->name, strerror(-err));
	if (err && !e->cfg.quiet && !e->cfg.json)
		ut_say(0, "host TAP %s: inject with READ_FIXED (no multishot read: %s)", t->name,
		       strerror(-err));
	return 0;
}

int eng_tap_setup(struct engine *e)
{
	const struct eng_tap_cfg *c = e->cfg.tap;
	int fds[ENG_MAX_PORTS], err;
	__u32 i, j;

	if (!c)
		return 0;
	err = eng_punt_init(e, c->punt_rule_set ? &c->punt_rule : NULL);
	if (err)
		return ut_say(err, "--host-tap: out of memory");
	for (i = 0; i < c->ntaps; i++) {
		struct eng_tap *t = calloc(1, sizeof(*t));

		if (!t)
			return ut_say(-ENOMEM, "out of memory for --host-tap");
		t->fd = -1;
		t->idx = i;
		snprintf(t->name, sizeof(t->name), "%s", c->taps[i].name);
		e->taps[e->ntaps++] = t;
		for (j = 0; j < e->cfg.nports; j++)
			if (!strcmp(e->ports[j].ifname, c->taps[i].port))
				t->p = &e->ports[j];
		if (!t->p || t->p->tap)
			return eng_refuse(e, -EINVAL, "--host-tap %s: %s", c->taps[i].port,
					  t->p ? "given twice" :
						 "not a port of this engine: name an --iface");
		t->p->tap = t;
		for (j = 0; j < e->nq && !t->inq; j++)
			if (e->qs[j].port == t->p)
				t->inq = &e->qs[j];
		t->keep = c->tap_keep;
		t->reused = if_nametoindex(t->name) != 0;
		err = tap_create(t);
		if (err)
			return create_failed(e, t, err);
		fds[i] = t->fd;
	}
	for (i = 0; i < e->nworkers; i++) {
		struct eng_worker *w = &e->workers[i];
		bool any = false;

		for (j = 0; j < w->nq; j++)
			any |= w->q[j]->port->tap != NULL;
		if (!any)
			continue;
		w->tapw = calloc(1, sizeof(*w->tapw));
		if (!w->tapw)
			return ut_say(-ENOMEM, "out of memory for --host-tap");
		err = ring_setup(e, w->tapw, fds, e->ntaps);
		if (err && !w->tapw->ring_ok) {
			char why[256];

			/* No fallback: punt and inject are io_uring operations (tap.h). */
			return ut_say(
				err,
				"--host-tap: the host TAP's punt and inject run on io_uring, which is refused here (%s): allow io_uring in the seccomp profile or run without --host-tap",
				xp_uring_refusal(err, "io_uring_setup", why, sizeof(why)));
		}
		if (err)
			return ut_say(err, "--host-tap: io_uring for the TAPs: %s", strerror(-err));
	}
	for (i = 0; i < e->ntaps; i++) {
		err = mshot_setup(e, e->taps[i]);
		if (err)
			return err;
	}
	if (!e->cfg.quiet && !e->cfg.json)
		for (i = 0; i < e->ntaps; i++)
			ut_say(0, "host TAP %s for %s (its MAC and MTU)%s%s%s", e->taps[i]->name,
			       e->taps[i]->p->ifname, c->punt_rule_set ? ", with --punt" : "",
			       e->taps[i]->reused ? ", the existing one" : "",
			       c->tap_keep ? ", kept at exit" : "");
	return 0;
}

/* ---- the worker's side ---- */

static struct io_uring_sqe *sqe_get(struct eng_tap_w *tw)
{
	struct io_uring_sqe *sqe;

	if (tw->inflight >= TAP_MAX_INFLIGHT)
		return NULL;
	sqe = io_uring_get_sqe(&tw->ring);
	if (sqe) {
		tw->inflight++;
		tw->unsubmitted++;
	}
	return sqe;
}

/* Ledger: a frame is "uring" from the moment its write or read is prepared (or it
 * enters a provided-buffer ring) until its completion is reaped. */
static void frame_free(struct eng_worker *w, __u64 h)
{
	xp_ledger_move(w->wd[0].acct, XP_PLACE_URING, XP_PLACE_FREE, &h, 1);
	xp_deal_put(w->wd[0].deal, &h, 1);
}

/* A frame from the pile for a read into it; false if the pile is dry. */
static bool frame_take(struct eng_worker *w, __u64 *h)
{
	if (xp_deal_get(w->wd[0].deal, h, 1))
		return false;
	xp_ledger_move(w->wd[0].acct, XP_PLACE_FREE, XP_PLACE_URING, h, 1);
	return true;
}

static bool for_host(const struct engine *e, const struct eng_port *p, const __u8 *pkt, __u32 len,
		     __u32 queue)
{
	if (len >= 6 && !memcmp(pkt, p->mac, 6))
		return true;
	return eng_punt_match(e->punt, pkt, len, queue);
}

/* A write of @len bytes at @buf to @t's registered fd; @buf_index: the registered
 * buffer holding it (0 the UMEM, 1 the copies), used when the ring has them fixed. */
static void tap_prep_write(struct io_uring_sqe *sqe, const struct eng_tap_w *tw,
			   const struct eng_tap *t, const void *buf, __u32 len, int buf_index,
			   __u64 data)
{
	if (tw->fixed)
		io_uring_prep_write_fixed(sqe, (int)t->idx, buf, len, 0, buf_index);
	else
		io_uring_prep_write(sqe, (int)t->idx, buf, len, 0);
	sqe->flags |= IOSQE_FIXED_FILE;
	io_uring_sqe_set_data64(sqe, data);
}

/* A copy of @d to @t (the frame stays the caller's); false: dropped and counted. */
static bool tap_copy(struct eng_worker *w, struct eng_tap *t, const struct xdp_desc *d)
{
	struct eng_tap_w *tw = w->tapw;
	struct engine *e = w->e;
	struct io_uring_sqe *sqe;

	if (!tw->ncopy_free || !(sqe = sqe_get(tw))) {
		__atomic_fetch_add(&t->punt_dropped, 1, __ATOMIC_RELAXED);
		return false;
	}
	__u32 slot = tw->copy_free[--tw->ncopy_free];
	__u8 *buf = tw->copy + (size_t)slot * e->dom[0].layout.chunk_size;

	memcpy(buf, eng_data(&e->dom[0], d->addr), d->len);
	tap_prep_write(sqe, tw, t, buf, d->len, 1, ud(K_COPY, t->idx, slot));
	return true;
}

/* @d written to @t from the frame itself, which is no longer the caller's. */
static bool tap_punt(struct eng_worker *w, struct eng_tap *t, const struct xdp_desc *d)
{
	struct eng_tap_w *tw = w->tapw;
	struct engine *e = w->e;
	__u8 *pkt = eng_data(&e->dom[0], d->addr);
	__u64 h = xp_layout_handle(&e->dom[0].layout, d->addr);
	struct io_uring_sqe *sqe = sqe_get(tw);

	xp_ledger_move(w->wd[0].acct, XP_PLACE_APP, XP_PLACE_URING, &h, 1);
	if (!sqe) {
		__atomic_fetch_add(&t->punt_dropped, 1, __ATOMIC_RELAXED);
		frame_free(w, h);
		return false;
	}
	tap_prep_write(sqe, tw, t, pkt, d->len, 0, ud(K_PUNT, t->idx, h));
	tw->held++;
	return true;
}

static bool tap_usable(const struct eng_worker *w, const struct eng_q *q)
{
	return q->port->tap && w->tapw && !__atomic_load_n(&q->port->tap->gone, __ATOMIC_RELAXED);
}

bool eng_tap_punt_one(struct eng_worker *w, struct eng_q *q, const struct xdp_desc *d)
{
	if (!tap_usable(w, q)) {
		__u64 h;

		eng_free_descs(q->wd, &h, d, 1);
		return false;
	}
	return tap_punt(w, q->port->tap, d);
}

bool eng_tap_copy(struct eng_worker *w, struct eng_q *q, const struct xdp_desc *d)
{
	return tap_usable(w, q) && tap_copy(w, q->port->tap, d);
}

__u32 eng_tap_rx(struct eng_worker *w, struct eng_q *q, struct xdp_desc *d, __u32 n)
{
	struct eng_tap *t = q->port->tap;
	struct engine *e = w->e;
	__u32 i, k = 0;

	if (!tap_usable(w, q))
		return n;
	for (i = 0; i < n; i++) {
		__u8 *pkt = eng_data(&e->dom[0], d[i].addr);
		bool chain =
			(d[i].options & XDP_PKT_CONTD) || (i && (d[i - 1].options & XDP_PKT_CONTD));

		if (chain || d[i].len < 14) { /* multi-buffer packets stay on the fast path */
			d[k++] = d[i];
			continue;
		}
		if (pkt[0] & 1) { /* broadcast, multicast: a copy up, the frame goes on */
			d[k++] = d[i];
			tap_copy(w, t, &d[i]);
			continue;
		}
		if (!for_host(e, q->port, pkt, d[i].len, q->queue)) {
			d[k++] = d[i];
			continue;
		}
		/* For the host alone: written from the frame, which leaves the batch. */
		tap_punt(w, t, &d[i]);
	}
	return k;
}

int eng_tap_punt(struct eng_worker *w, struct eng_q *q, const struct xdp_desc *d, __u32 n)
{
	struct eng_tap *t = q->port->tap;
	struct engine *e = w->e;
	__u32 i;

	if (!t || !w->tapw)
		return -ENODEV;
	for (i = 0; i < n; i++) {
		/* The TAP takes whole frames: a chain's tail buffers are freed. */
		if ((i && (d[i - 1].options & XDP_PKT_CONTD)) ||
		    __atomic_load_n(&t->gone, __ATOMIC_RELAXED)) {
			__u64 h = xp_layout_handle(&e->dom[0].layout, d[i].addr);

			if (!(i && (d[i - 1].options & XDP_PKT_CONTD)))
				__atomic_fetch_add(&t->punt_dropped, 1, __ATOMIC_RELAXED);
			xp_ledger_move(w->wd[0].acct, XP_PLACE_APP, XP_PLACE_URING, &h, 1);
			frame_free(w, h);
			continue;
		}
		tap_punt(w, t, &d[i]);
	}
	return 0;
}

static void tap_gone(struct engine *e, struct eng_tap *t, int err)
{
	if (__atomic_exchange_n(&t->gone, true, __ATOMIC_ACQ_REL))
		return;
	/* EBADFD: the fd is no longer attached to a device, which went. */
	if (err == EBADFD || !if_nametoindex(t->name))
		ut_say(0,
		       "host TAP %s was deleted (ip link del?): punt and inject for %s stop, the fast path goes on; restart the engine to get the TAP back",
		       t->name, t->p->ifname);
	else
		ut_say(0, "host TAP %s: %s; punt and inject for %s stop, the fast path goes on",
		       t->name, strerror(err), t->p->ifname);
}

/* The frames left in a TAP's buffer ring back to the pile, once no read can take
 * them (the multishot read ended), and the ring unregistered. */
static void mshot_release(struct eng_worker *w, struct eng_tap *t)
{
	struct eng_tap_w *tw = w->tapw;
	bool in_ring[TAP_MSHOT_BUFS];

	if (t->armed || !t->br.br)
		return;
	memset(in_ring, 1, sizeof(in_ring));
	for (__u32 i = 0; i < t->nfree_bid; i++)
		in_ring[t->free_bid[i]] = false;
	ut_bufring_free(&tw->ring, &t->br);
	t->nfree_bid = 0;
	for (__u16 bid = 0; bid < TAP_MSHOT_BUFS; bid++) {
		if (in_ring[bid]) {
			frame_free(w, t->bid_h[bid]);
			tw->held--;
		}
		t->free_bid[t->nfree_bid++] = bid;
	}
}

/* Fresh frames for the buffer ids the kernel gave back, then the read armed again if
 * it ended (a full CQ, no buffer left, the first time). */
static void mshot_post(struct eng_worker *w, struct eng_tap *t, __u32 room)
{
	struct eng_tap_w *tw = w->tapw;
	struct engine *e = w->e;
	struct io_uring_sqe *sqe;
	int n = 0;

	while (t->nfree_bid) {
		__u16 bid = t->free_bid[t->nfree_bid - 1];
		__u64 h;

		if (!frame_take(w, &h))
			break; /* the pile is dry: frames go to RX first */
		t->nfree_bid--;
		t->bid_h[bid] = h;
		ut_bufring_add(&t->br,
			       eng_data(&e->dom[0], xp_layout_tx_addr(&e->dom[0].layout, h,
								      e->dom[0].layout.data_off)),
			       room, bid, n++);
		tw->held++;
	}
	if (n)
		ut_bufring_publish(&t->br, n);
	if (t->armed || t->nfree_bid == TAP_MSHOT_BUFS || !(sqe = sqe_get(tw)))
		return;
	ut_prep_read_multishot(sqe, (int)t->idx, true, (__u16)t->idx);
	io_uring_sqe_set_data64(sqe, ud(K_MSHOT, t->idx, 0));
	t->armed = true;
}

static void post_reads(struct eng_worker *w)
{
	struct eng_tap_w *tw = w->tapw;
	struct engine *e = w->e;
	__u32 room = e->dom[0].layout.chunk_size - e->dom[0].layout.data_off;

	for (__u32 i = 0; i < e->ntaps; i++) {
		struct eng_tap *t = e->taps[i];

		if (t->inq->w != w)
			continue;
		if (t->gone) {
			if (t->mshot)
				mshot_release(w, t);
			continue;
		}
		if (t->mshot) {
			mshot_post(w, t, room);
			continue;
		}
		while (tw->reads[i] < TAP_READS) {
			struct io_uring_sqe *sqe;
			__u64 h;
			__u8 *p;

			if (!frame_take(w, &h))
				return; /* the pile is dry: reads wait, frames go to RX first */
			sqe = sqe_get(tw);
			if (!sqe) {
				frame_free(w, h);
				return;
			}
			p = eng_data(&e->dom[0], xp_layout_tx_addr(&e->dom[0].layout, h,
								   e->dom[0].layout.data_off));
			if (tw->fixed)
				io_uring_prep_read_fixed(sqe, (int)i, p, room, 0, 0);
			else
				io_uring_prep_read(sqe, (int)i, p, room, 0);
			sqe->flags |= IOSQE_FIXED_FILE;
			io_uring_sqe_set_data64(sqe, ud(K_READ, i, h));
			tw->reads[i]++;
			tw->held++;
		}
	}
}

/* A frame the host sent, posted on the port's TX (eng_tx() frees it if full). */
static void inject(struct eng_worker *w, struct eng_tap *t, __u64 h, __u32 len)
{
	struct engine *e = w->e;
	struct xdp_desc d = {
		.addr = xp_layout_tx_addr(&e->dom[0].layout, h, e->dom[0].layout.data_off),
		.len = len,
	};

	xp_ledger_move(w->wd[0].acct, XP_PLACE_URING, XP_PLACE_APP, &h, 1);
	if (eng_tx(w, t->inq, &d, 1))
		t->injected++;
	else
		t->inject_dropped++; /* the TX ring was full */
}

static void reap_mshot(struct eng_worker *w, struct eng_tap *t, const struct io_uring_cqe *cqe)
{
	struct eng_tap_w *tw = w->tapw;

	if (!(cqe->flags & IORING_CQE_F_MORE)) {
		t->armed = false; /* ended: armed again by post_reads() */
		tw->inflight--;
	}
	if (cqe->flags & IORING_CQE_F_BUFFER) {
		__u16 bid = (__u16)(cqe->flags >> IORING_CQE_BUFFER_SHIFT);
		__u64 h = t->bid_h[bid % TAP_MSHOT_BUFS];

		t->free_bid[t->nfree_bid++] = bid % TAP_MSHOT_BUFS;
		tw->held--;
		if (cqe->res > 0 && !tw->stopping)
			inject(w, t, h, (__u32)cqe->res);
		else
			frame_free(w, h);
		t->mshot_reads++;
		return;
	}
	if (cqe->res == -EINVAL && !t->mshot_reads) {
		/* Refused at once (the opcode or the buffer ring): READ_FIXED from now on. */
		ut_say(0, "host TAP %s: multishot read refused (%s); READ_FIXED", t->name,
		       strerror(-cqe->res));
		mshot_release(w, t);
		t->mshot = false;
	} else if (cqe->res < 0 && cqe->res != -ENOBUFS && cqe->res != -ECANCELED &&
		   cqe->res != -EAGAIN && cqe->res != -EINTR) {
		tap_gone(w->e, t, -cqe->res);
	}
}

static __u32 reap(struct eng_worker *w)
{
	struct eng_tap_w *tw = w->tapw;
	struct engine *e = w->e;
	struct io_uring_cqe *cqe;
	unsigned int head, seen = 0;

	io_uring_for_each_cqe(&tw->ring, head, cqe)
	{
		int kind = (int)(cqe->user_data >> 62);
		__u32 ti = (__u32)(cqe->user_data >> 56) & 63;
		__u64 v = cqe->user_data & ((1ull << 56) - 1);
		struct eng_tap *t;

		seen++;
		if (cqe->user_data == ~0ull) /* eng_tap_stop()'s cancel: no frame */
			continue;
		t = e->taps[ti];
		if (kind == K_MSHOT) {
			reap_mshot(w, t, cqe);
			continue;
		}
		tw->inflight--;
		if (kind == K_COPY) {
			tw->copy_free[tw->ncopy_free++] = (__u32)v;
		} else {
			tw->held--;
		}
		if (kind == K_READ)
			tw->reads[ti]--;
		if (cqe->res < 0 && cqe->res != -ECANCELED && cqe->res != -EAGAIN &&
		    cqe->res != -EINTR)
			tap_gone(e, t, -cqe->res);
		if (kind == K_PUNT) {
			frame_free(w, v);
			__atomic_fetch_add(cqe->res > 0 ? &t->punted : &t->punt_dropped, 1,
					   __ATOMIC_RELAXED);
		} else if (kind == K_COPY) {
			__atomic_fetch_add(cqe->res > 0 ? &t->copied : &t->punt_dropped, 1,
					   __ATOMIC_RELAXED);
		} else if (cqe->res <= 0 || tw->stopping) {
			frame_free(w, v);
		} else {
			inject(w, t, v, (__u32)cqe->res);
		}
	}
	io_uring_cq_advance(&tw->ring, seen);
	return seen;
}

__u32 eng_tap_poll(struct eng_worker *w)
{
	struct eng_tap_w *tw = w->tapw;
	__u32 work;

	if (!tw)
		return 0;
	if (__builtin_expect(!tw->ring_fd, 0)) {
		/* No fdget per enter where the kernel has it; registered per thread: here. */
		io_uring_register_ring_fd(&tw->ring);
		tw->ring_fd = true;
	}
	work = reap(w);
	if (!tw->stopping)
		post_reads(w);
	if (tw->unsubmitted || (IO_URING_READ_ONCE(*tw->ring.sq.kflags) & IORING_SQ_TASKRUN)) {
		io_uring_submit(&tw->ring); /* also runs completions' task work */
		tw->unsubmitted = 0;
	}
	return work;
}

void eng_tap_stop(struct eng_worker *w)
{
	struct eng_tap_w *tw = w->tapw;
	struct __kernel_timespec ts = { .tv_nsec = 10000000 };
	struct io_uring_cqe *cqe;
	struct io_uring_sqe *sqe;
	__u64 deadline;
	struct timespec now;

	if (!tw)
		return;
	tw->stopping = true;
	sqe = io_uring_get_sqe(&tw->ring);
	if (sqe) {
		io_uring_prep_cancel64(sqe, 0, IORING_ASYNC_CANCEL_ANY);
		io_uring_sqe_set_data64(sqe, ~0ull);
	}
	io_uring_submit(&tw->ring);
	clock_gettime(CLOCK_MONOTONIC, &now);
	deadline = (__u64)now.tv_sec * 1000000000ull + (__u64)now.tv_nsec + TAP_STOP_NS;
	for (;;) {
		reap(w);
		for (__u32 i = 0; i < w->e->ntaps; i++)
			if (w->e->taps[i]->inq->w == w && w->e->taps[i]->mshot)
				mshot_release(w, w->e->taps[i]);
		if (!tw->held && !tw->inflight)
			break;
		clock_gettime(CLOCK_MONOTONIC, &now);
		if ((__u64)now.tv_sec * 1000000000ull + (__u64)now.tv_nsec > deadline) {
			ut_say(0, "host TAP: %llu frames still in io_uring at exit",
			       (unsigned long long)tw->held);
			break;
		}
		io_uring_wait_cqe_timeout(&tw->ring, &cqe, &ts);
	}
	if (tw->ring_fd)
		io_uring_unregister_ring_fd(&tw->ring); /* this thread's: before it goes */
}

__u32 eng_tap_wait_fds(const struct eng_worker *w, int *fds, __u32 max)
{
	const struct engine *e = w->e;
	__u32 n = 0;

	for (__u32 i = 0; i < e->ntaps && n < max; i++)
		if (e->taps[i]->inq->w == w && !e->taps[i]->gone)
			fds[n++] = e->taps[i]->fd;
	return n;
}

__u64 eng_tap_worker_held(const struct eng_worker *w)
{
	return w->tapw ? w->tapw->held : 0;
}

__u64 eng_tap_held(const struct engine *e)
{
	__u64 n = 0;

	for (__u32 i = 0; i < e->nworkers; i++)
		if (e->workers[i].tapw)
			n += e->workers[i].tapw->held;
	return n;
}

void eng_tap_report(struct engine *e)
{
	for (__u32 i = 0; i < e->ntaps; i++) {
		const struct eng_tap *t = e->taps[i];

		if (e->cfg.json)
			printf("{\"type\":\"host_tap\",\"tap\":\"%s\",\"port\":\"%s\",\"inject_read\":\"%s\",\"punted\":%llu,\"copied\":%llu,\"punt_dropped\":%llu,\"injected\":%llu,\"inject_dropped\":%llu,\"gone\":%s}\n",
			       t->name, t->p->ifname, t->mshot ? "multishot" : "fixed",
			       (unsigned long long)t->punted, (unsigned long long)t->copied,
			       (unsigned long long)t->punt_dropped, (unsigned long long)t->injected,
			       (unsigned long long)t->inject_dropped, t->gone ? "true" : "false");
		else
			ut_say(0,
			       "host TAP %s: punted %llu, copied %llu, punt_dropped %llu, injected %llu, inject_dropped %llu",
			       t->name, (unsigned long long)t->punted,
			       (unsigned long long)t->copied, (unsigned long long)t->punt_dropped,
			       (unsigned long long)t->injected,
			       (unsigned long long)t->inject_dropped);
	}
}

void eng_tap_destroy(struct engine *e)
{
	eng_punt_free(e);
	/* A buffer ring its worker did not take down (it never ran): no frame in it. */
	for (__u32 i = 0; i < e->ntaps; i++)
		if (e->taps[i]->br.br && e->taps[i]->inq->w->tapw)
			ut_bufring_free(&e->taps[i]->inq->w->tapw->ring, &e->taps[i]->br);
	for (__u32 i = 0; i < e->nworkers; i++) {
		struct eng_tap_w *tw = e->workers[i].tapw;

		if (!tw)
			continue;
		if (tw->ring_ok)
			io_uring_queue_exit(&tw->ring);
		free(tw->copy);
		free(tw);
		e->workers[i].tapw = NULL;
	}
	for (__u32 i = 0; i < e->ntaps; i++) {
		if (e->taps[i]->fd >= 0)
			close(e->taps[i]->fd); /* the TAP goes with it unless persistent */
		if (e->taps[i]->p)
			e->taps[i]->p->tap = NULL;
		free(e->taps[i]);
	}
	e->ntaps = 0;
}
