// SPDX-License-Identifier: BSD-3-Clause
/*
 * The engine's life (run.h): set-up and tear-down as one stage table (stages[] below:
 * the ordering rule is written there and nowhere else), and the main thread's loop
 * (signals, stats, audits).
 *
 * Order matters at both ends: sockets are registered in the XSKMAP only once their
 * fill rings hold frames, and removed from it before the workers drain, so no packet
 * is steered to a socket that cannot take it (the program falls back to PASS).
 */
#include <errno.h>
#include <limits.h>
#include <linux/futex.h>
#include <net/if.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "audit.h"
#include "capture.h"
#include "cli_json.h"
#include "ctl.h"
#include "dom.h"
#include "engine.h"
#include "grace.h"
#include "handover.h"
#include "idle_engine.h"
#include "handover_serve.h"
#include "handover_take.h"
#include "leak.h"
#include "pause.h"
#include "rings.h"
#include "run.h"
#include "stats.h"
#include "tap.h"
#include "uds.h"
#include "watch.h"
#include "worker.h"
#include "xpile/bpffs.h"
#include "xpile/steer_owner.h"
#include "xpile/users.h"
#include "xpile/wire.h"

/* A VLAN tag rides on top of the MTU: veth and NICs take MTU + 14 + 4 bytes. */
#define ENG_L2_OVERHEAD (14 + 4)

static int port_info(struct eng_port *p, __u32 *mtu)
{
	struct ifreq ifr = {};
	int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);

	if (fd < 0)
		return -errno;
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", p->ifname);
	if (!ioctl(fd, SIOCGIFHWADDR, &ifr))
		memcpy(p->mac, ifr.ifr_hwaddr.sa_data, 6);
	*mtu = 1500;
	if (!ioctl(fd, SIOCGIFMTU, &ifr))
		*mtu = (__u32)ifr.ifr_mtu;
	close(fd);
	return 0;
}

/* Holds the steer library's complaint while a fallback may still make it moot (and the plan
 * reader's, so one line says it all). */
static char steer_msg[512];

static int check_ports(struct engine *e)
{
	struct eng_config *c = &e->cfg;
	__u32 i, j, mtu = 1500, room;
	bool need_sg = false;

	if (c->nports < c->mode->nports_min || c->nports > c->mode->nports_max)
		return ut_say(-EINVAL,
			      "mode %s takes %u..%u --iface, %u given; e.g. fwd needs exactly two",
			      c->mode->name, c->mode->nports_min, c->mode->nports_max, c->nports);
	room = c->mem->frame_size - c->mem->headroom - XP_XDP_HEADROOM;
	for (i = 0; i < c->nports; i++) {
		struct eng_port *p = &e->ports[i];
		int nq;

		memcpy(p->ifname, c->ports[i].ifname, sizeof(p->ifname));
		p->nqueues = c->ports[i].nqueues;
		memcpy(p->queues, c->ports[i].queues, sizeof(p->queues));
		p->ifindex = (int)if_nametoindex(p->ifname);
		/* --uds: the interface may be the node's only; the agent's sockets bind it. */
		p->remote = !p->ifindex && c->nuds;
		if (!p->ifindex && !p->remote)
			return ut_say(
				-ENODEV,
				"interface %s not found; check `ip link` (and the namespace xpile runs in)",
				p->ifname);
		for (j = 0; j < i; j++)
			if (!strcmp(e->ports[j].ifname, p->ifname))
				return ut_say(
					-EINVAL,
					"interface %s given twice; list its queues once (--iface %s:0,1)",
					p->ifname, p->ifname);
		nq = p->remote ? 0 : xp_ifname_rx_queues(p->ifname);
		for (j = 0; j < p->nqueues; j++)
			if (nq > 0 && p->queues[j] >= (__u32)nq)
				return ut_say(
					-ERANGE,
					"%s has %d queue(s), queue %u is out of range; use %s:0..%d or add queues (ethtool -L %s combined N)",
					p->ifname, nq, p->queues[j], p->ifname, nq - 1, p->ifname);
		port_info(p, &mtu);
		p->mtu = mtu;
		if (mtu + ENG_L2_OVERHEAD > room && c->mode->needs_rx) {
			if (c->multi_buffer_set && !c->multi_buffer)
				return eng_refuse(
					e, -EMSGSIZE,
					"%s has MTU %u: a full-size frame with a VLAN tag is %u bytes but a frame holds %u; drop --no-multi-buffer, lower the MTU or raise --frame-size",
					p->ifname, mtu, mtu + ENG_L2_OVERHEAD, room);
			need_sg = true;
		}
	}
	if (c->nports == 2 && c->mode->paired &&
	    (e->ports[0].nqueues != e->ports[1].nqueues ||
	     memcmp(e->ports[0].queues, e->ports[1].queues, e->ports[0].nqueues * sizeof(__u32))))
		return ut_say(
			-EINVAL,
			"fwd pairs queue N of one port with queue N of the other: give both --iface the same queues");
	e->sg_auto = need_sg && !c->multi_buffer;
	e->sg = need_sg || c->multi_buffer;
	/* A batch must hold a whole chain (up to 18 buffers) so modes see whole packets. */
	if (e->sg && c->batch < 32)
		c->batch = 32;
	return 0;
}

/* The core @p gives @queue, or -1. */
static int plan_core(const struct xp_wire_plan *p, __u32 queue)
{
	for (__u32 k = 0; k < p->n; k++)
		if (p->map[k].queue == queue)
			return (int)p->map[k].core;
	return -1;
}

/* The wiring plan of @p into @plan (n 0: none). */
/* A port's wiring plan: none is an empty plan; one that is there but unusable is an
 * error, not "no plan". */
static int port_plan(const struct eng_port *p, struct xp_wire_plan *plan)
{
	char path[256] = "its wiring plan";
	int perr;

	perr = xp_wire_plan_load(p->ifname, plan, steer_msg, sizeof(steer_msg));
	if (perr)
		plan->n = 0;
	if (!perr || perr == -ENOENT)
		return 0;
	/* /run/xpile is root's: an unprivileged engine (--uds) cannot read plans, and
	 * cannot tell its namespace's from the host's either; --cores decides. */
	if (perr == -EACCES && geteuid())
		return 0;
	if (steer_msg[0])
		return ut_say(perr, "%s; rewrite it (xpile-loader wire %s ...) or remove it",
			      steer_msg, p->ifname);
	xp_wire_plan_path(p->ifname, path, sizeof(path));
	return ut_say(
		perr,
		"the wiring plan of %s (%s) cannot be used: %s; rewrite it (xpile-loader wire %s ...) or remove it",
		p->ifname, path, strerror(-perr), p->ifname);
}

/* Queue -> core: each port's own wiring plan, else the core another port's plan gives
 * the same queue (as when only the first port was read: fwd's pairs stay on one
 * worker), else --cores in turn. */
static int assign_workers(struct engine *e)
{
	struct eng_config *c = &e->cfg;
	struct xp_wire_plan plans[ENG_MAX_PORTS];
	__u32 i, j, k, nplans = 0;
	int err;

	for (i = 0; i < c->nports; i++) {
		err = port_plan(&e->ports[i], &plans[i]);
		if (err)
			return err;
		nplans += plans[i].n > 0;
	}

	cpu_set_t allowed;

	if (sched_getaffinity(0, sizeof(allowed), &allowed)) {
		CPU_ZERO(&allowed);
		for (i = 0; i < CPU_SETSIZE; i++)
			CPU_SET(i, &allowed);
	}
	for (i = 0; i < c->ncores; i++)
		if (!CPU_ISSET(c->cores[i], &allowed))
			return ut_say(
				-EINVAL,
				"core %d is not available to this process; pick cores from `taskset -p $$` / nproc",
				c->cores[i]);
	if (!c->ncores) /* queue j goes to core j % ncores */
		return ut_say(-EINVAL, "no cores to run workers on: give --cores");
	for (i = 0; i < c->nports; i++) {
		for (j = 0; j < e->ports[i].nqueues; j++) {
			__u32 queue = e->ports[i].queues[j], from = i;
			int core = plan_core(&plans[i], queue);
			struct eng_worker *w = NULL;
			struct eng_q *q;

			for (k = 0; k < c->nports; k++) {
				int other = plan_core(&plans[k], queue);

				if (core < 0 && other >= 0) {
					core = other;
					from = k;
				} else if (c->mode->paired && other >= 0 && other != core)
					return ut_say(
						-EINVAL,
						"fwd moves queue %u between %s and %s on one core, but their wiring plans put it on cores %d and %d; wire both alike (xpile-loader wire IFACE --queues LIST --cores LIST)",
						queue, e->ports[i].ifname, e->ports[k].ifname, core,
						other);
			}
			if (core < 0)
				core = c->cores[j % c->ncores];
			else if (core >= CPU_SETSIZE || !CPU_ISSET(core, &allowed))
				return ut_say(
					-EINVAL,
					"the wiring plan of %s puts queue %u on core %d, which this process cannot use; rewire (xpile-loader wire) or run on that core",
					e->ports[from].ifname, queue, core);
			for (k = 0; k < e->nworkers; k++)
				if (e->workers[k].core == core)
					w = &e->workers[k];
			if (!w) {
				if (e->nworkers == ENG_MAX_WORKERS)
					return ut_say(-E2BIG, "too many cores (max %d)",
						      ENG_MAX_WORKERS);
				w = &e->workers[e->nworkers];
				w->id = e->nworkers++;
				w->core = core;
				w->e = e;
			}
			if (w->nq == ENG_MAX_QUEUES || e->nq == ENG_MAX_PORTS * ENG_MAX_QUEUES)
				return ut_say(-E2BIG, "too many queues on core %d", core);
			q = &e->qs[e->nq++];
			q->port = &e->ports[i];
			q->queue = queue;
			q->w = w;
			w->q[w->nq++] = q;
		}
	}
	if (nplans && c->verbose)
		ut_say(0, "queue->core plans from `xpile-loader wire` for %u of %u ports", nplans,
		       c->nports);
	/* The control thread, and the threads it starts (capture), keep off the workers'
	 * cores where others are allowed: a successor preparing a handover, or an audit,
	 * then never takes a core from a worker that serves (the workers pin themselves). */
	cpu_set_t ctl = allowed;

	for (k = 0; k < e->nworkers; k++)
		CPU_CLR(e->workers[k].core, &ctl);
	if (CPU_COUNT(&ctl) && sched_setaffinity(0, sizeof(ctl), &ctl) && c->verbose)
		ut_say(0, "the control thread stays on the workers' cores: %s", strerror(errno));
	return 0;
}

static int setup_steer(struct engine *e)
{
	struct eng_config *c = &e->cfg;
	__u32 i;

	if (!c->mode->needs_rx)
		return 0;
	if (c->nuds) /* the agent's program: nothing to load (uds.c did the handshake) */
		return 0;
	if (!c->attach_existing)
		xp_netns_sweep(); /* what killed engines left in namespaces since deleted */
	for (i = 0; i < c->nports; i++) {
		struct eng_port *p = &e->ports[i];
		struct xp_steer_opts so = { .sz = sizeof(so) };
		int err;

		so.ifname = p->ifname;
		so.mode = c->xdp_mode;
		so.pin_path = c->pin_path;
		so.attach_existing = c->attach_existing;
		so.force = c->force;
		so.errbuf = steer_msg;
		so.errbuf_sz = sizeof(steer_msg);
		err = xp_steer_open(&so, &p->steer);
		if (err == -EEXIST && !c->attach_existing) {
			/* Our program is there already (the loader's, or left by an engine that
			 * was killed): serve through it and leave it as found. */
			so.attach_existing = true;
			err = xp_steer_open(&so, &p->steer);
			p->steer_borrowed = !err;
		}
		/* The library says what is wrong; what to run is ours to say. */
		if (err && so.attach_existing && (err == -ENOENT || err == -ESTALE))
			return ut_say(err, "%s; run: %s%s%sxpile-loader load %s", steer_msg,
				      err == -ESTALE ? "xpile-loader unload " : "",
				      err == -ESTALE ? p->ifname : "", err == -ESTALE ? "; " : "",
				      p->ifname);
		if (err)
			return ut_say(err, "%s",
				      steer_msg[0] ? steer_msg : "steer program: open failed");
		/* Whoever removes it later must know an engine loaded it, not the loader. */
		if (!c->attach_existing && !p->steer_borrowed)
			xp_steer_owner_set(p->steer, true);
	}
	return 0;
}

/* Says which process serves which queues (xpile/users.h): `xpile-loader unload` asks,
 * a busy queue is blamed on its holder, and the last engine out removes the program. */
static int register_users(struct engine *e)
{
	for (__u32 i = 0; i < e->cfg.nports; i++) {
		struct eng_port *p = &e->ports[i];

		p->registered =
			!xp_users_register(p->ifname, p->steer ? xp_steer_prog_id(p->steer) : 0,
					   p->queues, p->nqueues);
	}
	return 0; /* a process that is not listed is only not named to others */
}

static int setup_sockets(struct engine *e)
{
	struct eng_config *c = &e->cfg;
	__u32 i, j;
	int err = eng_rings_setup(e);

	if (err)
		return err;
	e->busy_auto = eng_busy_poll_auto(e);
	for (i = 0; i < e->nworkers; i++) {
		for (j = 0; j < e->workers[i].nq; j++) {
			struct eng_q *q = e->workers[i].q[j];
			struct xp_xsk_opts xo = { .sz = sizeof(xo) };

			if (e->take_over) {
				err = eng_ho_import_xsk(e, q);
				if (err)
					return err;
				continue;
			}
			xo.ifname = q->port->ifname;
			xo.queue = q->queue;
			xo.rx_size = c->rx_ring;
			xo.tx_size = c->tx_ring;
			xo.fill_size = c->fill_ring;
			xo.comp_size = c->comp_ring;
			xo.mode = c->xsk_mode;
			xo.no_need_wakeup = c->no_need_wakeup;
			xo.multi_buffer = e->sg;
			xo.busy_poll = c->busy_poll || e->busy_auto;
			xo.busy_poll_budget = c->busy_budget;
			/* By default one kick may drain the whole TX ring (fwd: +10% Mpps
			 * over the kernel's 32 on veth, docs/bench-engine.md) where the
			 * kernel allows it; --tx-budget is a requirement. */
			xo.tx_budget = c->tx_budget ? c->tx_budget : c->tx_ring;
			xo.tx_budget_optional = !c->tx_budget;
			/* --uds with /xsk_socket: the agent's socket, bound to the node's ifindex. */
			xo.socket_fd = eng_uds_take(e, q->dom, &xo.ifindex);
			xo.socket_given = xo.socket_fd >= 0;
			if (!xo.socket_given)
				xo.ifindex = 0;
			err = xp_xsk_create(q->dom->umem, &xo, &q->xsk);
			if (err)
				return err; /* logged by the library */
		}
	}
	for (i = 0; i < e->nq; i++)
		e->qs[i].busy_live =
			c->busy_poll; /* on by itself: once a NAPI id shows (stats.c) */
	if (c->mode->paired) {
		for (i = 0; i < e->nq; i++)
			for (j = 0; j < e->nq; j++)
				if (e->qs[i].port != e->qs[j].port &&
				    e->qs[i].queue == e->qs[j].queue)
					e->qs[i].peer = &e->qs[j];
	}
	return 0;
}

/* Each socket closed (none of them in an XSKMAP any more, or never). */
static void close_sockets(struct engine *e)
{
	for (__u32 i = 0; i < e->nq; i++) {
		xp_xsk_destroy(e->qs[i].xsk);
		e->qs[i].xsk = NULL;
	}
}

static void close_ports(struct engine *e);

static int mode_setup_late(struct engine *e)
{
	return e->cfg.mode->setup_late ? e->cfg.mode->setup_late(e) : 0;
}

static void mode_teardown_late(struct engine *e)
{
	if (e->cfg.mode->teardown_late)
		e->cfg.mode->teardown_late(e);
}

/* --uds: the agent's sockets (or its XSKMAP), for the UMEMs and queues (uds.c). */
static int setup_uds(struct engine *e)
{
	if (!e->cfg.nuds || !e->cfg.mode->needs_rx)
		return 0;
	return eng_uds_setup(e);
}

/* What the UMEMs and queues did not take (close_ports() closes the rest). */
static void close_uds(struct engine *e)
{
	for (__u32 i = 0; e->cfg.nuds && i < e->cfg.nports; i++)
		eng_uds_close(&e->ports[i]);
}

/* What xpile/pkt.h's inlines read of each queue. */
static void queues_publish(struct engine *e)
{
	for (__u32 i = 0; i < e->nq; i++) {
		struct eng_q *q = &e->qs[i];
		const struct xp_layout *l = &q->dom->layout;

		q->pub.umem_base = q->dom->mem.base;
		q->pub.umem_flags = l->umem_flags;
		q->pub.frame_size = l->chunk_size;
		q->pub.data_off = l->data_off;
		q->pub.queue = q->queue;
		q->pub.port = (__u16)(q->port - e->ports);
		q->pub.umem = (__u16)q->dom->id;
		q->pub.worker = q->w->id;
		q->pub.index = i;
	}
}

/*
 * Set-up in order, tear-down in the reverse order: the one place the ordering rule is
 * written. A stage that fails has said why; the stages before it, and its own
 * partial state, are torn down (eng_teardown()). Each tear-down may run more than once.
 *
 * - ports, workers: interfaces checked, queues planned on cores, before anything opens;
 * - domains before the handover: --take-over fills them from the old engine's offer;
 * - capture before the UMEMs: a file that cannot be opened fails before memory is taken;
 * - --uds's handshake before the UMEMs: they may be registered on the agent's sockets;
 * - sockets before the steer program, so a busy queue fails before anything attaches;
 *   registered in the XSKMAP only in eng_run(), once their fill rings hold frames;
 * - the TAPs after the program (their frames come from the same UMEM);
 * - the users' registry last: a process is named as a queue's user once it serves it.
 */
static const struct eng_stage {
	const char *name;
	int (*setup)(struct engine *e);
	void (*teardown)(struct engine *e);
} stages[] = {
	{ "ports", check_ports, NULL },
	{ "workers", assign_workers, NULL },
	{ "grace", eng_grace_setup, eng_grace_destroy }, /* outlives whatever it frees */
	{ "domains", eng_dom_assign, eng_dom_free },
	{ "handover", eng_ho_setup, eng_ho_close },
	{ "capture", eng_capture_setup, eng_capture_destroy },
	{ "memory", eng_dom_memory, eng_dom_memory_free },
	{ "uds", setup_uds, close_uds },
	{ "frames", eng_dom_frames, eng_dom_frames_free },
	{ "sockets", setup_sockets, close_sockets },
	{ "steer", setup_steer, close_ports },
	{ "taps", eng_tap_setup, eng_tap_destroy },
	{ "late", mode_setup_late, mode_teardown_late }, /* the router's FIB maps the TAPs */
	{ "users", register_users, NULL }, /* unregistered by close_ports() */
};

#define ENG_NSTAGES (sizeof(stages) / sizeof(stages[0]))

int eng_setup(struct engine *e)
{
	int err = 0;

	for (e->stages_up = 0; e->stages_up < ENG_NSTAGES && !err; e->stages_up++)
		err = stages[e->stages_up].setup(e);
	e->setup_err = err;
	if (err)
		return e->refused ? ENG_BAD_INPUT : ENG_SETUP_FAILED;
	queues_publish(e);
	return 0;
}

/* Printed once set-up succeeded, so a set-up error stays the only line. */
static void print_sockets(struct engine *e)
{
	const struct eng_config *c = &e->cfg;
	__u32 i;

	if (c->silent)
		return;
	if (e->sg_auto && !c->quiet && !c->json)
		ut_say(0, "MTU exceeds a frame: multi-buffer (XDP_USE_SG) on");
	if (e->huge_need && !c->quiet)
		ut_say(0,
		       "%ld free 2 MiB hugepages, %u needed for the UMEM%s; using 4 KiB pages (for hugepages: echo %ld > /proc/sys/vm/nr_hugepages)",
		       e->huge_free, e->huge_need, e->ndoms > 1 ? "s" : "", e->huge_want);
	for (i = 0; i < e->nq; i++) {
		const struct eng_q *q = &e->qs[i];
		const struct xp_xsk *x = q->xsk;

		if (c->json)
			printf("{\"type\":\"socket\",\"port\":\"%s\",\"queue\":%u,\"core\":%d,\"zerocopy\":%s,\"need_wakeup\":%s,\"multi_buffer\":%s}\n",
			       q->port->ifname, q->queue, q->w->core,
			       x->zerocopy ? "true" : "false", x->need_wakeup ? "true" : "false",
			       x->multi_buffer ? "true" : "false");
		else if (!c->quiet)
			ut_say(0, "%s:%u on core %d: %s mode%s%s%s", q->port->ifname, q->queue,
			       q->w->core, x->zerocopy ? "zero-copy" : "copy",
			       x->need_wakeup ? ", need_wakeup" : "",
			       x->multi_buffer ? ", multi-buffer" : "",
			       c->busy_poll ? ", busy-poll" : "");
	}
	for (i = 0; i < c->nports; i++)
		if (e->ports[i].steer_borrowed && !c->quiet && !c->json)
			ut_say(0, "%s: using the steer program already attached; %s",
			       e->ports[i].ifname,
			       xp_steer_engine_loaded(e->ports[i].steer) ?
				       "an engine loaded it, so the last engine to exit removes it" :
				       "xpile-loader loaded it, so it stays at exit");
}

/* ---- the main loop ---- */

static void xskmap_set(struct engine *e, bool on)
{
	__u32 i;

	for (i = 0; i < e->nq; i++) {
		struct eng_q *q = &e->qs[i];

		if (e->cfg.nuds && q->xsk)
			eng_uds_xskmap_set(e, q, on);
		if (!q->port->steer || !q->xsk)
			continue;
		if (on)
			xp_steer_xsk_set(q->port->steer, q->queue, q->xsk->fd);
		else
			xp_steer_xsk_clear(q->port->steer, q->queue);
	}
}

/* Appends to a line being built, said with one ut_say(). */
static void __attribute__((format(printf, 3, 4)))
line_add(char *line, size_t len, const char *fmt, ...)
{
	size_t k = strlen(line);
	va_list ap;

	va_start(ap, fmt);
	if (k < len)
		vsnprintf(line + k, len - k, fmt, ap);
	va_end(ap);
}

/* Most bins a slice line shows: channels x ranks, L1 sets. */
#define ENG_SLICE_BINS 4096

/*
 * Each worker's first frames, read back from its first socket's fill ring before any
 * socket is in the XSKMAP (nothing consumed them yet): how many lie in its M3 slice and
 * how they spread over channels and L1 sets. With -v or --json only.
 */
static void report_slices(struct engine *e, struct eng_dom *d)
{
	__u32 n = d->layout.nframes, *pos = calloc(n, sizeof(__u32)), *bins;
	__u32 nch = xp_layout_spread_bins(&d->layout, XP_SPREAD_CH64);
	__u32 nl1 = xp_layout_spread_bins(&d->layout, XP_SPREAD_L1), i, k, idx, reach = 0;

	/* [0, 64): channels; [64, 64 + nl1): L1 sets; then the sets any frame reaches (on
	 * 4 KiB pages a frame per page rotating over 32 lines reaches half of them). */
	bins = calloc(ENG_SLICE_BINS, sizeof(__u32));
	if (!pos || !bins || !nch || nch > 64 || !nl1 || 64 + 2 * nl1 > ENG_SLICE_BINS ||
	    xp_layout_spread(&d->layout, XP_SPREAD_L1, 0, bins + 64 + nl1))
		goto out;
	for (k = 0; k < nl1; k++)
		reach += bins[64 + nl1 + k] > 0;
	for (i = 0; i < n; i++)
		if (!xp_layout_frame_index(&d->layout, d->handles[i], &idx))
			pos[idx] = i;
	for (i = 0; i < e->nworkers; i++) {
		struct eng_worker *w = &e->workers[i];
		const struct eng_wdom *wd = &w->wd[d->id];
		struct xp_ring *fill = NULL;
		__u32 got, in = 0, l1min = ~0u, l1max = 0, *ch = bins, *l1 = bins + 64;

		for (k = 0; k < w->nq && !fill; k++)
			if (w->q[k]->dom == d)
				fill = &w->q[k]->xsk->fill;
		if (!fill)
			continue;
		got = __atomic_load_n(fill->producer, __ATOMIC_ACQUIRE);
		if (got > 4 * e->cfg.batch)
			got = 4 * e->cfg.batch;
		if (got > fill->mask + 1)
			got = fill->mask + 1;
		memset(bins, 0, (64 + nl1) * sizeof(__u32));
		for (k = 0; k < got; k++) {
			__u64 h = *xp_ring_addr(fill, k);

			if (!xp_layout_frame_index(&d->layout, h, &idx) &&
			    pos[idx] - wd->slice_first < wd->slice_count)
				in++;
			ch[xp_spread_bin(&d->layout, XP_SPREAD_CH64, h + d->layout.data_off)]++;
			l1[xp_spread_bin(&d->layout, XP_SPREAD_L1, h + d->layout.data_off)]++;
		}
		for (k = 0; k < nl1; k++) {
			if (!l1[nl1 + k])
				continue;
			l1min = l1[k] < l1min ? l1[k] : l1min;
			l1max = l1[k] > l1max ? l1[k] : l1max;
		}
		if (e->cfg.json) {
			printf("{\"type\":\"slice\"%s,\"worker\":%u,\"core\":%d,\"first\":%u,\"count\":%u,\"frames\":%u,\"in_slice\":%u,\"channels\":[",
			       eng_dom_tag(e, d, true), w->id, w->core, wd->slice_first,
			       wd->slice_count, got, in);
			for (k = 0; k < nch; k++)
				printf("%s%u", k ? "," : "", ch[k]);
			printf("],\"l1_sets\":%u,\"l1_min\":%u,\"l1_max\":%u}\n", reach, l1min,
			       l1max);
		} else {
			char line[1024] = "";

			line_add(
				line, sizeof(line),
				"worker %u (core %d)%s: M3 slice [%u, %u) of the fill order; its first %u frames: %u in the slice, channels",
				w->id, w->core, eng_dom_tag(e, d, false), wd->slice_first,
				wd->slice_first + wd->slice_count, got, in);
			for (k = 0; k < nch; k++)
				line_add(line, sizeof(line), "%s%u", k ? "/" : " ", ch[k]);
			ut_say(0, "%s, %u..%u in each of the %u L1 sets frames reach", line, l1min,
			       l1max, reach);
		}
	}
out:
	free(pos);
	free(bins);
}

/* Scripts wait for this line before sending traffic: it says what each UMEM is and
 * that they are carves of one arena per node. */
static void print_ready(struct engine *e)
{
	const struct eng_config *c = &e->cfg;
	const struct xp_layout *l = &e->dom[0].layout;
	const struct eng_dom *d;
	char line[1024] = "", q[1100];
	__u64 bytes = 0;
	__u32 frames = 0, i;

	if (c->silent)
		return;
	for (i = 0; i < e->ndoms; i++) {
		bytes += e->dom[i].mem.size;
		frames += e->dom[i].layout.nframes;
	}
	if (c->json) {
		printf("{\"type\":\"ready\",\"sockets\":%u,\"workers\":%u,\"frames\":%u,\"layout\":\"%s\",\"stride\":%u,\"channels\":%u,\"ranks\":%u,\"topology\":%s,\"page_size\":%u,\"umem_bytes\":%llu,\"numa_node\":%d,\"umems\":%u,\"arenas\":%u,\"umem\":[",
		       e->nq, e->nworkers, frames,
		       l->kind == XP_LAYOUT_ALIGNED ? "aligned" : "interleaved", l->stride,
		       l->topo.channels, l->topo.ranks, cli_json_quote(e->topo_note, q, sizeof(q)),
		       e->dom[0].mem.page_size, (unsigned long long)bytes, e->dom[0].mem.numa_node,
		       e->ndoms, e->narenas);
		for (i = 0; i < e->ndoms; i++) {
			d = &e->dom[i];
			printf("%s{\"frames\":%u,\"bytes\":%llu,\"offset\":%llu,\"numa_node\":%d,\"sockets\":%u}",
			       i ? "," : "", d->layout.nframes, (unsigned long long)d->mem.size,
			       (unsigned long long)d->buf.off, d->node, d->nq);
		}
		printf("]}\n");
		return;
	}
	if (!c->quiet || e->topo_guessed)
		ut_say(0, "memory topology: %s%s", e->topo_note,
		       e->topo_guessed ? "; give --channels and --ranks for this machine's memory" :
					 "");
	line_add(
		line, sizeof(line),
		"ready: %u socket(s), %u worker(s), %u frames, %s layout (stride %u, %u channels x %u ranks), %s pages",
		e->nq, e->nworkers, frames,
		l->kind == XP_LAYOUT_ALIGNED ? "aligned" : "interleaved", l->stride,
		l->topo.channels, l->topo.ranks,
		e->dom[0].mem.page_size == XP_PAGE_2M ? "2 MiB" : "4 KiB");
	if (e->ndoms > 1) {
		line_add(line, sizeof(line), ", %u UMEMs (", e->ndoms);
		for (i = 0; i < e->ndoms; i++)
			line_add(line, sizeof(line), "%s%u frames, %.1f MiB", i ? "; " : "",
				 e->dom[i].layout.nframes, e->dom[i].mem.size / 1048576.0);
		line_add(line, sizeof(line), ") carved from %u arena%s", e->narenas,
			 e->narenas > 1 ? "s" : "");
	}
	ut_say(0, "%s", line);
}

int eng_run(struct engine *e)
{
	struct eng_config *c = &e->cfg;
	sigset_t set;
	__u64 end_ns = 0, deadline;
	int status = 0, audit_err = 0;
	__u32 i;

	sigemptyset(&set);
	if (c->handle_signals) {
		sigaddset(&set, SIGINT);
		sigaddset(&set, SIGTERM);
		sigaddset(&set, SIGUSR1);
		sigaddset(&set, SIGHUP);
		pthread_sigmask(SIG_BLOCK, &set, NULL); /* workers inherit the mask */
	}
	print_sockets(e);
	eng_watch_start(e);
	if (eng_capture_start(e)) {
		e->stop = 1;
		status = ENG_SETUP_FAILED;
	}
	/* Taking over: the workers start parked and the rings stay the old engine's until
	 * it commits (eng_ho_take()). */
	if (e->take_over) {
		e->pause_gen = 1;
		e->paused = 1;
	}
	if (!status)
		eng_idle_setup(e); /* before the workers: they read its costs */
	for (i = 0; !status && i < e->nworkers; i++) {
		if (pthread_create(&e->workers[i].thread, NULL, eng_worker_main, &e->workers[i])) {
			ut_say(0, "cannot start the worker of core %d", e->workers[i].core);
			e->stop = 1;
			status = ENG_SETUP_FAILED;
			break;
		}
		e->workers[i].started = true;
	}
	if (!status && e->take_over && eng_ho_take(e)) {
		e->hands_off = 1; /* the old engine still has them */
		eng_resume(e);
		status = ENG_SETUP_FAILED;
	}
	/* Register a socket only once its fill ring holds frames (taken over: it is). */
	deadline = eng_now_ns() + 1000000000ull;
	for (i = 0; !status && !e->take_over && c->mode->needs_rx && i < e->nq; i++)
		while (!__atomic_load_n(&e->qs[i].c.fill_posted, __ATOMIC_RELAXED) &&
		       eng_now_ns() < deadline)
			usleep(100);
	if (!status && !e->take_over && c->mode->needs_rx && (c->json || c->verbose))
		for (i = 0; i < e->ndoms; i++)
			report_slices(e, &e->dom[i]);
	if (!status) {
		if (!e->take_over) /* taken over: the XSKMAP holds these very sockets */
			xskmap_set(e, true);
		/* The control socket (ctl.h) is up before the ready line scripts wait for. */
		if (eng_ctl_start(e))
			status = ENG_SETUP_FAILED;
		/* Scripts wait for this line before sending traffic. */
		print_ready(e);
		fflush(stdout);
	}
	e->start_ns = e->last_tick_ns = eng_now_ns();
	e->next_watch_ns = e->start_ns;
	if (c->duration > 0)
		end_ns = e->start_ns + (__u64)(c->duration * 1e9);

	while (!status) {
		__u64 now = eng_now_ns(), next = e->last_tick_ns + (__u64)(c->interval * 1e9);
		struct timespec ts;
		siginfo_t si;
		int sig;

		if (end_ns && next > end_ns)
			next = end_ns;
		if (next <= now)
			next = now + 1;
		/* Wake every 50 ms at most, to notice workers that finished (xp_worker_done()). */
		if (next - now > 50000000ull)
			next = now + 50000000ull;
		ts.tv_sec = (next - now) / 1000000000ull;
		ts.tv_nsec = (next - now) % 1000000000ull;
		sig = e->ho ? eng_ho_wait(e, &set, &ts, &si) : sigtimedwait(&set, &si, &ts);
		if (sig == ENG_HO_DONE)
			break;
		if (sig == SIGINT || sig == SIGTERM || sig == SIGHUP)
			break;
		if (__atomic_load_n(&e->stop_req, __ATOMIC_ACQUIRE))
			break;
		if (sig == SIGUSR1)
			audit_err |= eng_audit_now(e);
		now = eng_now_ns();
		if (now >= e->last_tick_ns + (__u64)(c->interval * 1e9)) {
			eng_stats_tick(e, false);
			if (c->audit_each_interval)
				audit_err |= eng_audit_now(e);
		}
		if (end_ns && now >= end_ns)
			break;
		if (__atomic_load_n(&e->finished, __ATOMIC_ACQUIRE) == e->nworkers)
			break;
		if (eng_watch(e, now))
			break;
		if (e->ho)
			eng_ho_tick(e);
	}

	eng_ctl_stop(e);
	/* Packets go back to the kernel first, then the workers drain (handed over: the
	 * workers have left, and the XSKMAP is the successor's). */
	if (!e->hands_off)
		xskmap_set(e, false);
	__atomic_store_n(&e->stop, 1, __ATOMIC_RELEASE);
	for (i = 0; i < e->nworkers; i++)
		if (e->workers[i].started)
			pthread_join(e->workers[i].thread, NULL);
	eng_capture_stop(e);
	eng_tap_report(e);
	if (c->mode->report)
		c->mode->report(e);
	if (e->nq && e->qs[e->nq - 1].xsk)
		eng_stats_tick(e, true);
	eng_stats_allocator(e, true);
	/* Handed over: the frames are the other engine's, nothing to audit or take back. */
	eng_leaks_report(e);
	if (!e->hands_off)
		audit_err |= eng_audit_stopped(e, "exit");
	close_sockets(e);
	if (e->hands_off)
		return status;
	eng_dom_caches_destroy(e); /* every free frame back in its pile */
	audit_err |= eng_audit_reclaim(e);
	if (e->cfg.json)
		fflush(stdout);
	return status ? status : audit_err ? ENG_AUDIT_FAILED : e->fault_status;
}

/*
 * Nothing left behind by the engine that exits cleanly, whoever attached first: the
 * program goes with the last engine using it, unless `xpile-loader load` loaded it or
 * --attach-existing says it is someone else's to keep.
 */
static void close_port(struct engine *e, struct eng_port *p)
{
	struct xp_user u[8];
	char who[160];
	int n = 0, k = 0;
	bool remove;

	if (p->registered)
		xp_users_unregister(p->ifname);
	if (e->cfg.nuds)
		eng_uds_close(p);
	if (!p->steer)
		return;
	if (!e->cfg.attach_existing) {
		n = xp_users_list(p->ifname, u, 8);
		for (int j = 0; j < n; j++)
			if (u[j].prog_id == xp_steer_prog_id(p->steer))
				u[k++] = u[j];
	}
	if (e->cfg.attach_existing || e->hands_off)
		remove = false; /* hands_off: the successor serves through it */
	else if (p->steer_borrowed)
		remove = !k && xp_steer_engine_loaded(p->steer);
	else
		remove = !k;
	if (k && !e->cfg.quiet && !e->hands_off) {
		xp_users_format(u, k, who, sizeof(who));
		ut_say(0, "%s: steer program left attached: %s still uses it", p->ifname, who);
	}
	xp_steer_close(p->steer, remove);
	p->steer = NULL;
}

static void close_ports(struct engine *e)
{
	for (__u32 i = 0; i < e->cfg.nports; i++)
		close_port(e, &e->ports[i]);
}

void eng_teardown(struct engine *e)
{
	while (e->stages_up)
		if (stages[--e->stages_up].teardown)
			stages[e->stages_up].teardown(e);
}
