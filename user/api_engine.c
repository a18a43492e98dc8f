// SPDX-License-Identifier: BSD-3-Clause
/*
 * xpile/engine.h: an engine made from an opts struct, on the same stages and main loop
 * as `xpile run` (run.c), with the caller's callbacks as its mode.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api.h"
#include "audit.h"
#include "leak.h"
#include "capture.h"
#include "dom.h"
#include "engine.h"
#include "handover.h"
#include "run.h"
#include "ctl.h"
#include "tap.h"
#include "uring_wait.h"
#include "xpile/engine.h"
#include "../lib/log_internal.h"

/* The engine and the feature configs it points at, in one allocation. */
struct xp_engine {
	struct engine e; /* first: a worker's e is the xp_engine */
	struct eng_mode mode;
	struct eng_mem_cfg mem;
	struct eng_capture_cfg cap;
	struct eng_tap_cfg tap;
	struct eng_ho_cfg ho;
	struct eng_ctl_cfg ctl;
	char *errbuf;
	size_t errbuf_len;
	bool ran;
};

static void __attribute__((format(printf, 3, 4)))
call_hook(xp_log_fn fn, enum xp_log_level level, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	fn(level, fmt, ap);
	va_end(ap);
}

/* The engine's own lines (ut_say()) to the embedder's log hook when it installed one
 * (xp_set_log_fn(); NULL silences them too), as the library's lower layers' go; with
 * the default hook, or the programs' own (ut_say_xp(), `xpile run`), to stderr as ever. */
static bool to_hook(int prio, const char *msg)
{
	enum xp_log_level level = prio <= LOG_ERR     ? XP_LOG_ERR :
				  prio == LOG_WARNING ? XP_LOG_WARN :
				  prio < LOG_DEBUG    ? XP_LOG_INFO :
							XP_LOG_DEBUG;
	xp_log_fn fn;

	if (!xp_log_hook(&fn) || fn == ut_say_xp)
		return false;
	if (fn)
		call_hook(fn, level, "%s\n", msg);
	return true;
}

/* One line said and kept for .errbuf. */
static int __attribute__((format(printf, 3, 4)))
fail(struct xp_engine *x, int err, const char *fmt, ...)
{
	char line[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	if (x->errbuf && x->errbuf_len)
		snprintf(x->errbuf, x->errbuf_len, "%s", line);
	return ut_say(err, "%s", line);
}

static int ports_from(struct xp_engine *x, const struct xp_engine_opts *o)
{
	struct eng_config *c = &x->e.cfg;
	__u32 i, j;

	if (!o->ports || !o->nports || o->nports > XP_ENGINE_MAX_PORTS)
		return fail(x, -EINVAL, "give 1..%u ports (xp_engine_opts.ports, .nports)",
			    XP_ENGINE_MAX_PORTS);
	for (i = 0; i < o->nports; i++) {
		const struct xp_engine_port *p = &o->ports[i];

		if (!p->ifname || !*p->ifname || strlen(p->ifname) >= sizeof(c->ports[i].ifname))
			return fail(x, -EINVAL, "port %u: an interface name of 1..15 bytes", i);
		if (p->nqueues > XP_ENGINE_MAX_QUEUES || (p->nqueues && !p->queues))
			return fail(x, -EINVAL, "port %u (%s): 1..%u queues, listed in .queues", i,
				    p->ifname, XP_ENGINE_MAX_QUEUES);
		snprintf(c->ports[i].ifname, sizeof(c->ports[i].ifname), "%s", p->ifname);
		c->ports[i].nqueues = p->nqueues ? p->nqueues : 1;
		for (j = 0; j < p->nqueues; j++)
			c->ports[i].queues[j] = p->queues[j];
		if (p->uds)
			c->uds[c->nuds++] = p->uds;
	}
	c->nports = o->nports;
	if (c->nuds && c->nuds != c->nports)
		return fail(x, -EINVAL, "a .uds socket for every port or for none (%u of %u)",
			    c->nuds, c->nports);
	if (o->ncores > XP_ENGINE_MAX_CORES || (o->ncores && !o->cores))
		return fail(x, -EINVAL, "1..%u cores, listed in .cores", XP_ENGINE_MAX_CORES);
	for (i = 0; i < o->ncores; i++)
		c->cores[i] = o->cores[i];
	c->ncores = o->ncores ? o->ncores : 1;
	return 0;
}

static int features_from(struct xp_engine *x, const struct xp_engine_opts *o)
{
	struct eng_config *c = &x->e.cfg;
	char why[256];
	__u32 i;

	x->mem.umem = o->umem;
	x->mem.layout = (enum xp_layout_kind)o->layout;
	x->mem.hugepages = (enum xp_hugepages)o->hugepages;
	x->mem.pool_backend = (enum xp_pool_backend)o->pool;
	x->mem.frame_size = o->frame_size ? o->frame_size : 2048;
	x->mem.headroom = o->headroom;
	x->mem.frames = o->frames;
	x->mem.cache = o->cache < 0 ? 0 : o->cache ? (__u32)o->cache : 256;
	x->mem.m3_seed = o->m3_seed;
	x->mem.channels = o->channels;
	x->mem.ranks = o->ranks;
	x->mem.ledger_debug = o->ledger_debug;
	if (x->mem.frame_size < 2048 || x->mem.frame_size > 4096 || x->mem.frame_size % 64 ||
	    x->mem.headroom > 1024 || x->mem.headroom + XP_XDP_HEADROOM + 128 > x->mem.frame_size)
		return fail(
			x, -EINVAL,
			"frame size %u with headroom %u: a multiple of 64 in 2048..4096, headroom 0..1024 leaving 128 bytes of packet room",
			x->mem.frame_size, x->mem.headroom);
	c->mem = &x->mem;
	if (o->capture) {
		x->cap.file = o->capture;
		x->cap.snaplen = o->snaplen ? o->snaplen : 65535;
		x->cap.dir = o->capture_dir ? (int)o->capture_dir : UT_CAP_BOTH;
		x->cap.size = o->capture_size;
		x->cap.buffer = o->capture_buffer ? o->capture_buffer : 4u << 20;
		if (o->capture_rule) {
			if (eng_capture_rule_parse(o->capture_rule, &x->cap.rule, why, sizeof(why)))
				return fail(x, -EINVAL, "capture rule '%s': %s", o->capture_rule,
					    why);
			x->cap.rule_set = true;
		}
		c->capture = &x->cap;
	}
	for (i = 0; i < o->nhost_taps; i++)
		if (eng_tap_opt(&x->tap, o->host_taps[i], why, sizeof(why)))
			return fail(x, -EINVAL, "host TAP '%s': %s", o->host_taps[i], why);
	if (o->punt_rule) {
		if (!o->nhost_taps)
			return fail(x, -EINVAL, "a punt rule needs a host TAP (.host_taps)");
		if (eng_capture_rule_parse(o->punt_rule, &x->tap.punt_rule, why, sizeof(why)))
			return fail(x, -EINVAL, "punt rule '%s': %s", o->punt_rule, why);
		x->tap.punt_rule_set = true;
	}
	x->tap.tap_keep = o->tap_keep;
	x->tap.tap_read = o->tap_read;
	if (x->tap.ntaps)
		c->tap = &x->tap;
	x->ho.handover = o->handover;
	x->ho.take_over = o->take_over;
	if (o->handover || o->take_over)
		c->ho = &x->ho;
	return 0;
}

static void mode_of(struct eng_mode *m, const struct xp_engine_opts *o)
{
	m->name = o->name ? o->name : "callback";
	m->needs_rx = !o->no_rx;
	m->paired = o->pair_queues;
	m->nports_min = o->nports_min ? o->nports_min : 1;
	m->nports_max = o->nports_max ? o->nports_max : XP_ENGINE_MAX_PORTS;
	m->on_burst = o->on_burst;
	m->on_poll = o->on_poll;
	m->worker_main = o->worker_main;
	m->worker_init = o->worker_init;
	m->worker_fini = o->worker_fini;
	m->arg = o->arg;
}

static int mode_from(struct xp_engine *x, const struct xp_engine_opts *o,
		     const struct eng_mode *internal)
{
	if (internal) {
		x->mode = *internal;
		x->e.cfg.mode = &x->mode;
		return 0;
	}
	if (!!o->on_burst + !!o->on_poll + !!o->worker_main != 1)
		return fail(x, -EINVAL, "give exactly one of .on_burst, .on_poll and .worker_main");
	mode_of(&x->mode, o);
	x->e.cfg.mode = &x->mode;
	return 0;
}

static void config_from(struct eng_config *c, const struct xp_engine_opts *o)
{
	c->duration = o->duration;
	c->interval = o->interval > 0 ? o->interval : 1;
	c->json = o->output == XP_ENGINE_OUT_JSON || o->output == XP_ENGINE_OUT_JSON_QUIET;
	c->quiet = o->output == XP_ENGINE_OUT_QUIET || o->output == XP_ENGINE_OUT_NONE ||
		   o->output == XP_ENGINE_OUT_JSON_QUIET;
	c->silent = o->output == XP_ENGINE_OUT_NONE;
	c->verbose = o->verbose > 0;
	c->xsk_mode = (enum xp_xsk_mode)o->xsk_mode;
	c->xdp_mode = (enum xp_steer_mode)o->xdp_mode;
	c->rx_ring = o->rx_ring ? o->rx_ring : 2048;
	c->tx_ring = o->tx_ring ? o->tx_ring : 2048;
	c->fill_ring = o->fill_ring ? o->fill_ring : 2 * c->rx_ring;
	c->comp_ring = o->comp_ring ? o->comp_ring : c->tx_ring;
	c->idle_wake_us = o->idle_wake_us;
	c->idle_nap_us = o->idle_nap_us < 0 ? 0 : o->idle_nap_us ? (__u32)o->idle_nap_us : 200;
	c->batch = o->batch ? o->batch : 64;
	if (c->batch > ENG_MAX_BATCH)
		c->batch = ENG_MAX_BATCH;
	c->busy_budget = o->busy_budget;
	c->tx_budget = o->tx_budget;
	c->no_need_wakeup = o->no_need_wakeup;
	c->busy_poll = o->busy_poll;
	c->spin = o->spin;
	c->multi_buffer = o->multi_buffer == XP_ENGINE_ON;
	c->multi_buffer_set = o->multi_buffer != XP_ENGINE_AUTO;
	c->idle_wait = o->idle_wait;
	c->attach_existing = o->attach_existing;
	c->force = o->force;
	c->reattach = o->reattach;
	c->audit_each_interval = o->audit;
	c->pin_path = o->pin_path;
	c->handle_signals = o->handle_signals;
	/* Tests: each worker loses one frame or frees one twice (the ledger must say). */
	const char *f = getenv("XPILE_FAULT");

	c->fault = !f			    ? ENG_FAULT_NONE :
		   !strcmp(f, "lose-frame") ? ENG_FAULT_LOSE :
		   !strcmp(f, "free-twice") ? ENG_FAULT_TWICE :
					      ENG_FAULT_NONE;
}

int xp_engine_create(const struct xp_engine_opts *opts, struct xp_engine **out)
{
	return eng_api_create(opts, NULL, NULL, out);
}

/* The control socket's options (ctl.h). */
static int ctl_from(struct xp_engine *x, const struct xp_engine_opts *o)
{
	struct eng_ctl_cfg *c = &x->ctl;

	if (o->nctl_uids > ENG_CTL_MAX_IDS || o->nctl_gids > ENG_CTL_MAX_IDS ||
	    (o->nctl_uids && !o->ctl_uids) || (o->nctl_gids && !o->ctl_gids))
		return fail(x, -EINVAL, "ctl_uids, ctl_gids: at most %d each, with their arrays",
			    ENG_CTL_MAX_IDS);
	c->name = o->ctl_name;
	c->path = o->ctl_path;
	c->off = o->no_ctl;
	c->nuids = o->nctl_uids;
	c->ngids = o->nctl_gids;
	if (c->nuids)
		memcpy(c->uids, o->ctl_uids, c->nuids * sizeof(c->uids[0]));
	if (c->ngids)
		memcpy(c->gids, o->ctl_gids, c->ngids * sizeof(c->gids[0]));
	x->e.cfg.ctl = c;
	return 0;
}

int eng_api_create(const struct xp_engine_opts *opts, const struct eng_mode *internal,
		   const struct eng_router_cfg *router, struct xp_engine **out)
{
	struct xp_engine_opts o;
	struct xp_engine *x;
	int err, status;

	*out = NULL;
	ut_say_route(to_hook);
	if (!XP_OPTS_LOAD(&o, opts, xp_engine_opts) || !opts)
		return ut_say(-EINVAL, "xp_engine_create: opts with .sz and no unknown field set");
	x = calloc(1, sizeof(*x));
	if (!x)
		return ut_say(-ENOMEM, "out of memory");
	ut_say_first_clear();
	x->errbuf = o.errbuf;
	x->errbuf_len = o.errbuf_len;
	if (x->errbuf && x->errbuf_len)
		x->errbuf[0] = 0;
	config_from(&x->e.cfg, &o);
	x->e.cfg.router = router;
	err = ctl_from(x, &o);
	if (!err)
		err = mode_from(x, &o, internal);
	if (!err)
		err = ports_from(x, &o);
	if (!err)
		err = features_from(x, &o);
	if (err) {
		free(x);
		return err;
	}
	status = eng_setup(&x->e);
	if (status) {
		/* A device's own -EOPNOTSUPP (zero-copy on a driver without it) is the
		 * environment, not the options: -ENODEV keeps the two apart. */
		err = status == ENG_BAD_INPUT	    ? -EOPNOTSUPP :
		      x->e.setup_err == -EOPNOTSUPP ? -ENODEV :
		      x->e.setup_err		    ? x->e.setup_err :
						      -EIO;
		if (x->errbuf && x->errbuf_len)
			snprintf(x->errbuf, x->errbuf_len, "%s", ut_say_first_error());
		eng_teardown(&x->e);
		free(x);
		return err;
	}
	*out = x;
	return 0;
}

int xp_engine_run(struct xp_engine *x)
{
	int status;

	if (!x || x->ran)
		return -EINVAL;
	x->ran = true;
	status = eng_run(&x->e);
	switch (status) {
	case 0:
		return 0;
	case ENG_AUDIT_FAILED:
		return -EUCLEAN;
	case ENG_PORT_FAILED:
		return -ENETDOWN;
	default:
		return -EIO;
	}
}

void xp_engine_stop(struct xp_engine *x)
{
	if (x)
		__atomic_store_n(&x->e.stop_req, 1, __ATOMIC_RELEASE);
}

void xp_engine_destroy(struct xp_engine *x)
{
	if (!x)
		return;
	eng_teardown(&x->e);
	free(x);
}

__u32 xp_engine_nqueues(const struct xp_engine *x)
{
	return x->e.nq;
}

struct xp_queue *xp_engine_queue(struct xp_engine *x, __u32 i)
{
	return i < x->e.nq ? &x->e.qs[i].pub : NULL;
}

__u32 xp_engine_nworkers(const struct xp_engine *x)
{
	return x->e.nworkers;
}

struct xp_worker *xp_engine_worker(struct xp_engine *x, __u32 i)
{
	return i < x->e.nworkers ? (struct xp_worker *)&x->e.workers[i] : NULL;
}

const char *xp_engine_port_name(const struct xp_engine *x, __u32 port)
{
	return port < x->e.cfg.nports ? x->e.ports[port].ifname : NULL;
}

int xp_engine_port_mac(const struct xp_engine *x, __u32 port, unsigned char mac[6])
{
	if (port >= x->e.cfg.nports)
		return -ENOENT;
	memcpy(mac, x->e.ports[port].mac, 6);
	return 0;
}

int xp_engine_port_mtu(const struct xp_engine *x, __u32 port, __u32 *mtu)
{
	if (port >= x->e.cfg.nports)
		return -ENOENT;
	*mtu = x->e.ports[port].mtu;
	return 0;
}

int xp_engine_port_link(const struct xp_engine *x, __u32 port)
{
	if (port >= x->e.cfg.nports)
		return -ENOENT;
	return __atomic_load_n(&x->e.ports[port].link_up, __ATOMIC_RELAXED) ? 1 : 0;
}

int xp_queue_stats_get(const struct xp_engine *x, const struct xp_queue *xq,
		       struct xp_queue_stats *out)
{
	const struct eng_q *q = (const struct eng_q *)xq;
	const struct eng_counters *c = &q->c;

	if (!xq || xq->index >= x->e.nq || &x->e.qs[xq->index] != q)
		return -ENOENT;
	memset(out, 0, sizeof(*out));
#define CP(f) (out->f = __atomic_load_n(&c->f, __ATOMIC_RELAXED))
	CP(rx_packets), CP(rx_bytes), CP(tx_packets), CP(tx_bytes), CP(tx_dropped);
	CP(bad_descs), CP(fill_starved), CP(tx_kicks), CP(rx_wakeups), CP(fill_posted);
	CP(tx_posted), CP(completed), CP(rx_descs), CP(tx_copied), CP(leaked);
#undef CP
	return 0;
}

__u32 xp_engine_numems(const struct xp_engine *x)
{
	return x->e.ndoms;
}

int xp_engine_ledger_get(const struct xp_engine *x, __u32 umem, struct xp_engine_ledger *out)
{
	const struct engine *e = &x->e;
	const struct eng_dom *d;

	if (umem >= e->ndoms)
		return -ENOENT;
	d = &e->dom[umem];
	memset(out, 0, sizeof(*out));
	out->umem = umem;
	out->nframes = d->layout.nframes;
	out->free = d->layout.nframes;
	for (__u32 i = 0; i < e->nworkers; i++) {
		const struct eng_wdom *wd = &e->workers[i].wd[umem];

		if (!wd->d || !wd->acct)
			continue;
		out->free += __atomic_load_n(&wd->acct->n[XP_PLACE_FREE], __ATOMIC_RELAXED);
		out->fill += __atomic_load_n(&wd->acct->n[XP_PLACE_FILL], __ATOMIC_RELAXED);
		out->app += __atomic_load_n(&wd->acct->n[XP_PLACE_APP], __ATOMIC_RELAXED);
		out->tx += __atomic_load_n(&wd->acct->n[XP_PLACE_TX], __ATOMIC_RELAXED);
		out->uring += __atomic_load_n(&wd->acct->n[XP_PLACE_URING], __ATOMIC_RELAXED);
		out->held += __atomic_load_n(&wd->held, __ATOMIC_RELAXED);
		out->leaked += (__u64)__atomic_load_n(&wd->leaked, __ATOMIC_RELAXED);
	}
	out->live_failures = e->live_failures;
	return 0;
}

int xp_engine_audit(struct xp_engine *x)
{
	int err = eng_audit_live(&x->e);

	eng_leaks_report(&x->e);
	return err;
}
