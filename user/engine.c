// SPDX-License-Identifier: BSD-3-Clause
/*
 * Set-up, the main thread's loop (signals, stats, audits) and tear-down.
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

#include "engine.h"
#include "xpile/log.h"
#include "xpile/owner.h"

#define fail(...) eng_say(-1, __VA_ARGS__)

/* Same line, for options that cannot work on this system as given: exit status 2. */
#define bad_input(...) eng_say(-ENG_BAD_INPUT, __VA_ARGS__)

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

static int capture_log(enum xp_log_level level, const char *fmt, va_list ap)
{
	size_t len = strlen(steer_msg);

	if (level <= XP_LOG_WARN && len < sizeof(steer_msg) - 1)
		vsnprintf(steer_msg + len, sizeof(steer_msg) - len, fmt, ap);
	return 0;
}

static int check_ports(struct engine *e, bool *need_sg)
{
	struct eng_config *c = &e->cfg;
	__u32 i, j, mtu = 1500, room;

	if (c->nports < c->mode->nports_min || c->nports > c->mode->nports_max)
		return fail("mode %s takes %u..%u --iface, %u given; e.g. fwd needs exactly two",
			    c->mode->name, c->mode->nports_min, c->mode->nports_max, c->nports);
	room = c->frame_size - c->headroom - XP_XDP_HEADROOM;
	for (i = 0; i < c->nports; i++) {
		struct eng_port *p = &e->ports[i];
		int nq;

		memcpy(p->ifname, c->ports[i].ifname, sizeof(p->ifname));
		p->nqueues = c->ports[i].nqueues;
		memcpy(p->queues, c->ports[i].queues, sizeof(p->queues));
		p->ifindex = (int)if_nametoindex(p->ifname);
		if (!p->ifindex)
			return fail(
				"interface %s not found; check `ip link` (and the namespace xpile runs in)",
				p->ifname);
		for (j = 0; j < i; j++)
			if (!strcmp(e->ports[j].ifname, p->ifname))
				return fail(
					"interface %s given twice; list its queues once (--iface %s:0,1)",
					p->ifname, p->ifname);
		nq = xp_ifname_rx_queues(p->ifname);
		for (j = 0; j < p->nqueues; j++)
			if (nq > 0 && p->queues[j] >= (__u32)nq)
				return fail(
					"%s has %d queue(s), queue %u is out of range; use %s:0..%d or add queues (ethtool -L %s combined N)",
					p->ifname, nq, p->queues[j], p->ifname, nq - 1, p->ifname);
		port_info(p, &mtu);
		if (mtu + ENG_L2_OVERHEAD > room && c->mode->needs_rx) {
			if (c->multi_buffer_set && !c->multi_buffer)
				return bad_input(
					"%s has MTU %u: a full-size frame with a VLAN tag is %u bytes but a frame holds %u; drop --no-multi-buffer, lower the MTU or raise --frame-size",
					p->ifname, mtu, mtu + ENG_L2_OVERHEAD, room);
			*need_sg = true;
		}
		/* --pkt-size counts the 4-byte FCS the NIC adds. */
		if (c->mode == &eng_mode_txonly && c->pkt_size - 4 > mtu + 14)
			return bad_input(
				"--pkt-size %u is a %u-byte frame but %s has MTU %u (frames up to %u bytes, --pkt-size %u): the NIC would drop every one; lower --pkt-size or raise the MTU (ip link set dev %s mtu %u)",
				c->pkt_size, c->pkt_size - 4, p->ifname, mtu, mtu + 14, mtu + 18,
				p->ifname, c->pkt_size - 18);
	}
	if (c->nports == 2 && c->mode == &eng_mode_fwd &&
	    (e->ports[0].nqueues != e->ports[1].nqueues ||
	     memcmp(e->ports[0].queues, e->ports[1].queues, e->ports[0].nqueues * sizeof(__u32))))
		return fail(
			"fwd pairs queue N of one port with queue N of the other: give both --iface the same queues");
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
	xp_log_fn prev;
	int perr;

	steer_msg[0] = 0;
	prev = xp_set_log_fn(capture_log);
	perr = xp_wire_plan_read(p->ifname, plan);
	xp_set_log_fn(prev);
	if (perr)
		plan->n = 0;
	if (!perr || perr == -ENOENT)
		return 0;
	/* /run/xpile is root's: an unprivileged engine (--uds) cannot read plans, and
	 * cannot tell its namespace's from the host's either; --cores decides. */
	if (perr == -EACCES && geteuid())
		return 0;
	if (steer_msg[0]) {
		fprintf(stderr, "xpile: %s", steer_msg);
		return -1;
	}
	xp_wire_plan_path(p->ifname, path, sizeof(path));
	return fail(
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

	for (i = 0; i < c->nports; i++)
		if (port_plan(&e->ports[i], &plans[i]))
			return -1;
		else if (plans[i].n)
			nplans++;

	cpu_set_t allowed;

	if (sched_getaffinity(0, sizeof(allowed), &allowed)) {
		CPU_ZERO(&allowed);
		for (i = 0; i < CPU_SETSIZE; i++)
			CPU_SET(i, &allowed);
	}
	for (i = 0; i < c->ncores; i++)
		if (!CPU_ISSET(c->cores[i], &allowed))
			return fail(
				"core %d is not available to this process; pick cores from `taskset -p $$` / nproc",
				c->cores[i]);
	if (!c->ncores) /* queue j goes to core j % ncores */
		return fail("no cores to run workers on: give --cores");
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
				} else if (c->mode == &eng_mode_fwd && other >= 0 && other != core)
					return fail(
						"fwd moves queue %u between %s and %s on one core, but their wiring plans put it on cores %d and %d; wire both alike (xpile-loader wire IFACE --queues LIST --cores LIST)",
						queue, e->ports[i].ifname, e->ports[k].ifname, core,
						other);
			}
			if (core < 0)
				core = c->cores[j % c->ncores];
			else if (core >= CPU_SETSIZE || !CPU_ISSET(core, &allowed))
				return fail(
					"the wiring plan of %s puts queue %u on core %d, which this process cannot use; rewire (xpile-loader wire) or run on that core",
					e->ports[from].ifname, queue, core);
			for (k = 0; k < e->nworkers; k++)
				if (e->workers[k].core == core)
					w = &e->workers[k];
			if (!w) {
				if (e->nworkers == ENG_MAX_WORKERS)
					return fail("too many cores (max %d)", ENG_MAX_WORKERS);
				w = &e->workers[e->nworkers];
				w->id = e->nworkers++;
				w->core = core;
				w->e = e;
			}
			if (w->nq == ENG_MAX_QUEUES || e->nq == ENG_MAX_PORTS * ENG_MAX_QUEUES)
				return fail("too many queues on core %d", core);
			q = &e->qs[e->nq++];
			q->port = &e->ports[i];
			q->queue = queue;
			q->w = w;
			w->q[w->nq++] = q;
		}
	}
	if (nplans && c->verbose)
		fprintf(stderr,
			"xpile: queue->core plans from `xpile-loader wire` for %u of %u ports\n",
			nplans, c->nports);
	/* The control thread, and the threads it starts (capture), keep off the workers'
	 * cores where others are allowed: a successor preparing a handover, or an audit,
	 * then never takes a core from a worker that serves (the workers pin themselves). */
	cpu_set_t ctl = allowed;

	for (k = 0; k < e->nworkers; k++)
		CPU_CLR(e->workers[k].core, &ctl);
	if (CPU_COUNT(&ctl) && sched_setaffinity(0, sizeof(ctl), &ctl) && c->verbose)
		fprintf(stderr, "xpile: the control thread stays on the workers' cores: %s\n",
			strerror(errno));
	return 0;
}

void eng_topology(struct engine *e, struct xp_topology *t)
{
	struct eng_config *c = &e->cfg;
	int found;

	if (c->channels && c->ranks) {
		snprintf(e->topo_note, sizeof(e->topo_note), "from --channels and --ranks");
	} else {
		found = xp_topology_probe(NULL, t, e->topo_note, sizeof(e->topo_note));
		if (found < 0)
			snprintf(e->topo_note, sizeof(e->topo_note), "probe failed: %s",
				 strerror(-found));
		if (c->channels || c->ranks) {
			size_t k = strlen(e->topo_note);

			snprintf(e->topo_note + k, sizeof(e->topo_note) - k, "; --%s %u wins",
				 c->channels ? "channels" : "ranks",
				 c->channels ? c->channels : c->ranks);
		}
		/* Said with the ready line, so a start-up error stays one line. */
		e->topo_guessed = found < 0 ||
				  (!c->channels && !(found & XP_TOPO_FOUND_CHANNELS)) ||
				  (!c->ranks && !(found & XP_TOPO_FOUND_RANKS));
	}
	if (c->channels)
		t->channels = c->channels;
	if (c->ranks)
		t->ranks = c->ranks;
}

static int setup_steer(struct engine *e)
{
	struct eng_config *c = &e->cfg;
	__u32 i;

	if (!c->mode->needs_rx)
		return 0;
	if (c->nuds) /* the agent's program: nothing to load, the XSKMAP comes by socket */
		return eng_uds_setup(e);
	for (i = 0; i < c->nports; i++) {
		struct eng_port *p = &e->ports[i];
		struct xp_steer_opts so = { .sz = sizeof(so) };
		xp_log_fn prev;
		int err;

		so.ifname = p->ifname;
		so.mode = c->xdp_mode;
		so.pin_path = c->pin_path;
		so.attach_existing = c->attach_existing;
		so.force = c->force;
		steer_msg[0] = 0;
		prev = xp_set_log_fn(capture_log);
		err = xp_steer_open(&so, &p->steer);
		if (err == -EEXIST && !c->attach_existing) {
			/* Our program is there already (the loader's, or left by an engine that
			 * was killed): serve through it and leave it as found. */
			so.attach_existing = true;
			steer_msg[0] = 0;
			err = xp_steer_open(&so, &p->steer);
			p->steer_borrowed = !err;
		}
		xp_set_log_fn(prev);
		if (err) {
			fprintf(stderr, "xpile: %s",
				steer_msg[0] ? steer_msg : "steer program: open failed\n");
			return -1;
		}
		/* Whoever removes it later must know an engine loaded it, not the loader. */
		if (!c->attach_existing && !p->steer_borrowed)
			xp_steer_owner_set(p->steer, true);
	}
	return 0;
}

/* Says which process serves which queues (xpile/owner.h): `xpile-loader unload` asks,
 * a busy queue is blamed on its holder, and the last engine out removes the program. */
static void register_users(struct engine *e)
{
	for (__u32 i = 0; i < e->cfg.nports; i++) {
		struct eng_port *p = &e->ports[i];

		p->registered =
			!xp_users_register(p->ifname, p->steer ? xp_steer_prog_id(p->steer) : 0,
					   p->queues, p->nqueues);
	}
}

static int setup_sockets(struct engine *e, bool sg)
{
	struct eng_config *c = &e->cfg;
	__u32 i, j;
	int err;

	for (i = 0; i < e->nworkers; i++) {
		for (j = 0; j < e->workers[i].nq; j++) {
			struct eng_q *q = e->workers[i].q[j];
			struct xp_xsk_opts xo = { .sz = sizeof(xo) };

			if (c->take_over) {
				if (eng_ho_import_xsk(e, q))
					return -1;
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
			xo.multi_buffer = sg;
			xo.busy_poll = c->busy_poll;
			xo.busy_poll_budget = c->busy_budget;
			/* By default one kick may drain the whole TX ring (fwd: +10% Mpps
			 * over the kernel's 32 on veth, docs/bench-engine.md) where the
			 * kernel allows it; --tx-budget is a requirement. */
			xo.tx_budget = c->tx_budget ? c->tx_budget : c->tx_ring;
			xo.tx_budget_optional = !c->tx_budget;
			if (xp_xsk_create(q->dom->umem, &xo, &q->xsk))
				return -1; /* logged by the library */
		}
	}
	if (c->mode == &eng_mode_fwd) {
		for (i = 0; i < e->nq; i++)
			for (j = 0; j < e->nq; j++)
				if (e->qs[i].port != e->qs[j].port &&
				    e->qs[i].queue == e->qs[j].queue)
					e->qs[i].peer = &e->qs[j];
	}
	if (c->mode == &eng_mode_txonly) {
		for (i = 0; i < e->nq; i++) {
			__u64 k = c->count;

			e->qs[i].tx_budget = k ? k / e->nq + (i < k % e->nq) : ~0ull;
		}
		err = eng_txonly_prepare(e);
		if (err)
			return err;
	}
	return 0;
}

int eng_setup(struct engine *e)
{
	struct eng_config *c = &e->cfg;
	bool sg = false;
	int err;

	err = check_ports(e, &sg);
	err = err ?: assign_workers(e);
	if (err)
		return err == -ENG_BAD_INPUT ? ENG_BAD_INPUT : ENG_SETUP_FAILED;
	e->sg_auto = sg && !c->multi_buffer;
	sg = sg || c->multi_buffer;
	/* A batch must hold a whole chain (up to 18 buffers) so modes see whole packets. */
	if (sg && c->batch < 32)
		c->batch = 32;
	err = eng_dom_assign(e);
	err = err ?: eng_ho_setup(e); /* after the domains: it fills them (--take-over) */
	err = err ?: eng_capture_setup(e);
	if (!c->take_over) /* else the UMEMs are the old engine's, mapped by eng_ho_setup() */
		err = err ?: eng_dom_memory(e);
	err = err ?: eng_dom_frames(e);
	err = err ?: setup_sockets(e, sg);
	err = err ?: setup_steer(e);
	err = err ?: eng_tap_setup(e);
	if (err)
		return err == -ENG_BAD_INPUT ? ENG_BAD_INPUT : ENG_SETUP_FAILED;
	register_users(e);
	return 0;
}

/* Printed once set-up succeeded, so a set-up error stays the only line. */
static void print_sockets(struct engine *e)
{
	const struct eng_config *c = &e->cfg;
	__u32 i;

	if (e->sg_auto && !c->quiet && !c->json)
		fprintf(stderr, "xpile: MTU exceeds a frame: multi-buffer (XDP_USE_SG) on\n");
	if (e->huge_need && !c->quiet)
		fprintf(stderr,
			"xpile: %ld free 2 MiB hugepages, %u needed for the UMEM%s; using 4 KiB pages (for hugepages: echo %ld > /proc/sys/vm/nr_hugepages)\n",
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
			fprintf(stderr, "xpile: %s:%u on core %d: %s mode%s%s%s\n", q->port->ifname,
				q->queue, q->w->core, x->zerocopy ? "zero-copy" : "copy",
				x->need_wakeup ? ", need_wakeup" : "",
				x->multi_buffer ? ", multi-buffer" : "",
				c->busy_poll ? ", busy-poll" : "");
	}
	for (i = 0; i < c->nports; i++)
		if (e->ports[i].steer_borrowed && !c->quiet && !c->json)
			fprintf(stderr, "xpile: %s: using the steer program already attached; %s\n",
				e->ports[i].ifname,
				xp_steer_engine_loaded(e->ports[i].steer) ?
					"an engine loaded it, so the last engine to exit removes it" :
					"xpile-loader loaded it, so it stays at exit");
}

/* ---- audits ---- */

/* ", "umem":N" in JSON, " (UMEM N)" in text, when there is more than one. */
static const char *dom_tag(const struct engine *e, const struct eng_dom *d, bool json)
{
	static char tag[32];

	if (json)
		snprintf(tag, sizeof(tag), ",\"umem\":%u", d->id);
	else if (e->ndoms > 1)
		snprintf(tag, sizeof(tag), " (UMEM %u)", d->id);
	else
		tag[0] = 0;
	return tag;
}

/*
 * Workers parked between turns or gone: each domain's ledger must match its allocator,
 * the fill side of its sockets (fill producer - RX consumer) and their TX side (TX
 * producer - completion consumer) exactly, and the state bytes the counts.
 */
static int audit_dom(struct engine *e, struct eng_dom *d, const char *when)
{
	struct xp_ledger_report r;
	__s64 obs[XP_PLACE_MAX] = { -1, -1, -1, -1 };
	FILE *f = e->cfg.json ? stdout : stderr;
	struct eng_split s = {};
	int err;

	obs[XP_PLACE_FREE] = (__s64)xp_pool_avail(d->pool) + xp_pool_cached(d->pool);
	for (__u32 i = 0; i < e->nworkers; i++) {
		const struct xp_deal *deal = e->workers[i].wd[d->id].deal;

		obs[XP_PLACE_FREE] += deal ? xp_deal_count(deal) : 0;
	}
	/* Workers hold nothing between loop turns; their TAP rings hold what is in io_uring
	 * (--host-tap: one domain only). */
	obs[XP_PLACE_APP] = 0;
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
	if (!err && e->cfg.ledger_debug && xp_pool_audit(d->pool))
		err = -EUCLEAN;
	if (e->cfg.json) {
		printf("{\"type\":\"ledger\",\"when\":\"%s\",\"ok\":%s%s,\"frames\":%u,\"free\":%lld,"
		       "\"fill\":%lld,\"kernel_rx\":%lld,\"rx\":%lld,\"app\":%lld,\"tx\":%lld,"
		       "\"kernel_tx\":%lld,\"completion\":%lld,\"uring\":%lld,\"total\":%lld,"
		       "\"bad_transitions\":%llu%s%s%s}\n",
		       when, err ? "false" : "true", dom_tag(e, d, true), r.nframes,
		       (long long)r.place[XP_PLACE_FREE], (long long)s.fill_ring,
		       (long long)s.kernel_rx, (long long)s.rx_ring,
		       (long long)r.place[XP_PLACE_APP], (long long)s.tx_ring,
		       (long long)s.kernel_tx, (long long)s.comp_ring,
		       (long long)r.place[XP_PLACE_URING],
		       (long long)(r.place[XP_PLACE_FREE] + r.place[XP_PLACE_APP] + s.fill_side +
				   s.tx_side + r.place[XP_PLACE_URING]),
		       (unsigned long long)r.bad_transitions, err ? ",\"why\":\"" : "",
		       err ? r.why : "", err ? "\"" : "");
		fflush(stdout);
	} else {
		fprintf(f, "%s%s: ", when, dom_tag(e, d, false));
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

static int audit_quiescent(struct engine *e, const char *when)
{
	int err = 0;

	for (__u32 i = 0; i < e->ndoms; i++)
		err |= audit_dom(e, &e->dom[i], when);
	/* A live audit that failed fails the run, whatever the exit state shows. */
	if (!strcmp(when, "exit") && e->live_failures) {
		fprintf(stderr, "xpile: ledger: %llu live audit(s) failed; the first: %s\n",
			(unsigned long long)e->live_failures, e->live_why);
		err = -EUCLEAN;
	}
	return err ? -EUCLEAN : 0;
}

int eng_pause(struct engine *e, const char *why)
{
	__u64 t0 = eng_now_ns();

	__atomic_store_n(&e->parked, 0, __ATOMIC_RELEASE);
	__atomic_store_n(&e->paused, 1, __ATOMIC_RELEASE);
	__atomic_fetch_add(&e->pause_gen, 1, __ATOMIC_ACQ_REL);
	while (__atomic_load_n(&e->parked, __ATOMIC_ACQUIRE) +
		       __atomic_load_n(&e->finished, __ATOMIC_ACQUIRE) <
	       e->nworkers) {
		__u64 waited = eng_now_ns() - t0;

		if (waited > 1000000000ull) {
			eng_resume(e);
			fprintf(stderr, "xpile: %s skipped: workers did not pause within 1 s\n",
				why);
			return -ETIMEDOUT;
		}
		/* Spin for the first 200 us: a busy worker parks within a batch, and a
		 * handover's pause is what the traffic waits for. */
		if (waited > 200000)
			usleep(50);
	}
	return 0;
}

void eng_resume(struct engine *e)
{
	__atomic_store_n(&e->paused, 0, __ATOMIC_RELEASE);
	syscall(SYS_futex, &e->paused, FUTEX_WAKE_PRIVATE, INT_MAX, NULL, NULL, 0);
}

/* Parks every running worker between loop turns, audits, lets them go. */
static int audit_now(struct engine *e)
{
	int err;

	if (eng_pause(e, "audit"))
		return 0;
	err = audit_quiescent(e, "audit");
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
		return fail("out of memory for the final audit");
	}
	avail = xp_pool_avail(d->pool);
	if (xp_pool_get(d->pool, buf, avail)) {
		err = fail("ledger: cannot take the %u free frames out of the pile", avail);
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
		err = fail("ledger: the pile refused the frames back");
	obs[XP_PLACE_FREE] = xp_pool_avail(d->pool);
	obs[XP_PLACE_FILL] = 0;
	if (xp_ledger_audit(d->ledger, obs, &r) || xp_pool_avail(d->pool) != n)
		err = -EUCLEAN;
	if (e->cfg.json)
		printf("{\"type\":\"ledger\",\"when\":\"exit\",\"ok\":%s%s,\"frames\":%u,\"returned\":%u,"
		       "\"held_by_kernel\":%u,\"bad_transitions\":%llu}\n",
		       err ? "false" : "true", dom_tag(e, d, true), n, xp_pool_avail(d->pool),
		       missing, (unsigned long long)r.bad_transitions);
	else
		fprintf(stderr,
			"exit%s: ledger: %s: all %u frames back in the pile (%u were in kernel rings)%s%s\n",
			dom_tag(e, d, false), err ? "FAILED" : "ok", n, missing,
			err && !r.ok ? ": " : "", err && !r.ok ? r.why : "");
out:
	free(buf);
	free(seen);
	return err;
}

static int reclaim(struct engine *e)
{
	int err = 0;

	for (__u32 i = 0; i < e->ndoms; i++)
		err |= reclaim_dom(e, &e->dom[i]);
	return err ? -EUCLEAN : 0;
}

/* ---- the main loop ---- */

static void xskmap_set(struct engine *e, bool on)
{
	__u32 i;

	for (i = 0; i < e->nq; i++) {
		struct eng_q *q = &e->qs[i];

		if (e->cfg.nuds && q->xsk)
			eng_uds_xskmap_set(q, on);
		if (!q->port->steer || !q->xsk)
			continue;
		if (on)
			xp_steer_xsk_set(q->port->steer, q->queue, q->xsk->fd);
		else
			xp_steer_xsk_clear(q->port->steer, q->queue);
	}
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
			       dom_tag(e, d, true), w->id, w->core, wd->slice_first,
			       wd->slice_count, got, in);
			for (k = 0; k < nch; k++)
				printf("%s%u", k ? "," : "", ch[k]);
			printf("],\"l1_sets\":%u,\"l1_min\":%u,\"l1_max\":%u}\n", reach, l1min,
			       l1max);
		} else {
			fprintf(stderr,
				"xpile: worker %u (core %d)%s: M3 slice [%u, %u) of the fill order; its first %u frames: %u in the slice, channels",
				w->id, w->core, dom_tag(e, d, false), wd->slice_first,
				wd->slice_first + wd->slice_count, got, in);
			for (k = 0; k < nch; k++)
				fprintf(stderr, "%s%u", k ? "/" : " ", ch[k]);
			fprintf(stderr, ", %u..%u in each of the %u L1 sets frames reach\n", l1min,
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
	__u64 bytes = 0;
	__u32 frames = 0, i;

	for (i = 0; i < e->ndoms; i++) {
		bytes += e->dom[i].mem.size;
		frames += e->dom[i].layout.nframes;
	}
	if (c->json) {
		printf("{\"type\":\"ready\",\"sockets\":%u,\"workers\":%u,\"frames\":%u,\"layout\":\"%s\",\"stride\":%u,\"channels\":%u,\"ranks\":%u,\"topology\":\"%s\",\"page_size\":%u,\"umem_bytes\":%llu,\"numa_node\":%d,\"umems\":%u,\"arenas\":%u,\"umem\":[",
		       e->nq, e->nworkers, frames,
		       l->kind == XP_LAYOUT_ALIGNED ? "aligned" : "interleaved", l->stride,
		       l->topo.channels, l->topo.ranks, e->topo_note, e->dom[0].mem.page_size,
		       (unsigned long long)bytes, e->dom[0].mem.numa_node, e->ndoms, e->narenas);
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
		fprintf(stderr, "xpile: memory topology: %s%s\n", e->topo_note,
			e->topo_guessed ?
				"; give --channels and --ranks for this machine's memory" :
				"");
	fprintf(stderr,
		"xpile: ready: %u socket(s), %u worker(s), %u frames, %s layout (stride %u, %u channels x %u ranks), %s pages",
		e->nq, e->nworkers, frames,
		l->kind == XP_LAYOUT_ALIGNED ? "aligned" : "interleaved", l->stride,
		l->topo.channels, l->topo.ranks,
		e->dom[0].mem.page_size == XP_PAGE_2M ? "2 MiB" : "4 KiB");
	if (e->ndoms > 1) {
		fprintf(stderr, ", %u UMEMs (", e->ndoms);
		for (i = 0; i < e->ndoms; i++)
			fprintf(stderr, "%s%u frames, %.1f MiB", i ? "; " : "",
				e->dom[i].layout.nframes, e->dom[i].mem.size / 1048576.0);
		fprintf(stderr, ") carved from %u arena%s", e->narenas, e->narenas > 1 ? "s" : "");
	}
	fprintf(stderr, "\n");
}

int eng_run(struct engine *e)
{
	struct eng_config *c = &e->cfg;
	sigset_t set;
	__u64 end_ns = 0, deadline;
	int status = 0, audit_err = 0;
	__u32 i;

	sigemptyset(&set);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGUSR1);
	sigaddset(&set, SIGHUP);
	pthread_sigmask(SIG_BLOCK, &set, NULL); /* workers inherit the mask */
	print_sockets(e);
	eng_watch_start(e);
	if (eng_capture_start(e)) {
		e->stop = 1;
		status = 1;
	}
	/* Taking over: the workers start parked and the rings stay the old engine's until
	 * it commits (eng_ho_take()). */
	if (c->take_over) {
		e->pause_gen = 1;
		e->paused = 1;
	}
	for (i = 0; !status && i < e->nworkers; i++) {
		if (pthread_create(&e->workers[i].thread, NULL, eng_worker_main, &e->workers[i])) {
			fail("cannot start the worker of core %d", e->workers[i].core);
			e->stop = 1;
			status = 1;
			break;
		}
		e->workers[i].started = true;
	}
	if (!status && c->take_over && eng_ho_take(e)) {
		e->hands_off = 1; /* the old engine still has them */
		eng_resume(e);
		status = 1;
	}
	/* Register a socket only once its fill ring holds frames (taken over: it is). */
	deadline = eng_now_ns() + 1000000000ull;
	for (i = 0; !status && !c->take_over && c->mode->needs_rx && i < e->nq; i++)
		while (!__atomic_load_n(&e->qs[i].c.fill_posted, __ATOMIC_RELAXED) &&
		       eng_now_ns() < deadline)
			usleep(100);
	if (!status && !c->take_over && c->mode->needs_rx && (c->json || c->verbose))
		for (i = 0; i < e->ndoms; i++)
			report_slices(e, &e->dom[i]);
	if (!status) {
		if (!c->take_over) /* taken over: the XSKMAP holds these very sockets */
			xskmap_set(e, true);
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
		/* Wake every 50 ms at most, to notice a txonly worker that finished. */
		if (next - now > 50000000ull)
			next = now + 50000000ull;
		ts.tv_sec = (next - now) / 1000000000ull;
		ts.tv_nsec = (next - now) % 1000000000ull;
		sig = e->ho ? eng_ho_wait(e, &set, &ts, &si) : sigtimedwait(&set, &si, &ts);
		if (sig == ENG_HO_DONE)
			break;
		if (sig == SIGINT || sig == SIGTERM || sig == SIGHUP)
			break;
		if (sig == SIGUSR1)
			audit_err |= audit_now(e);
		now = eng_now_ns();
		if (now >= e->last_tick_ns + (__u64)(c->interval * 1e9)) {
			eng_stats_tick(e, false);
			if (c->audit_each_interval)
				audit_err |= audit_now(e);
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
	if (e->nq && e->qs[e->nq - 1].xsk)
		eng_stats_tick(e, true);
	/* --count promises packets on the wire: what the kernel never took is a failure. */
	if (c->mode == &eng_mode_txonly && c->count && !status && eng_tx_unsent(e)) {
		bool down = false;

		for (i = 0; i < c->nports; i++)
			down |= !e->ports[i].link_up;
		fail("%llu of %llu packets never left (the kernel did not take them%s); stopping with them unsent",
		     (unsigned long long)eng_tx_unsent(e), (unsigned long long)c->count,
		     down ? ": the link is down" : "");
		e->fault_status = ENG_PORT_FAILED;
	}
	eng_stats_allocator(e, true);
	/* Handed over: the frames are the other engine's, nothing to audit or take back. */
	if (!e->hands_off)
		audit_err |= audit_quiescent(e, "exit");
	for (i = 0; i < e->nq; i++) {
		xp_xsk_destroy(e->qs[i].xsk);
		e->qs[i].xsk = NULL;
	}
	if (e->hands_off)
		return status;
	eng_dom_caches_destroy(e); /* every free frame back in its pile */
	audit_err |= reclaim(e);
	if (e->cfg.json)
		fflush(stdout);
	return status ? status : audit_err ? 3 : e->fault_status;
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
		fprintf(stderr, "xpile: %s: steer program left attached: %s still uses it\n",
			p->ifname, who);
	}
	xp_steer_close(p->steer, remove);
	p->steer = NULL;
}

void eng_teardown(struct engine *e)
{
	__u32 i;

	for (i = 0; i < e->nq; i++)
		xp_xsk_destroy(e->qs[i].xsk);
	for (i = 0; i < e->cfg.nports; i++)
		close_port(e, &e->ports[i]);
	eng_dom_caches_destroy(e);
	eng_capture_destroy(e);
	eng_tap_destroy(e);
	eng_dom_destroy(e);
	eng_ho_close(e);
	for (i = 0; i < e->narenas; i++)
		xp_arena_destroy(e->arenas[i].a);
	e->narenas = 0;
}
