// SPDX-License-Identifier: BSD-3-Clause
/*
 * The control socket's commands (ctl.h lists them): each builds its reply with jansson
 * from what the workers and the main thread publish. Runs on the control thread; reads
 * only (counters with relaxed loads, the kernel's through getsockopt and the BPF maps).
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "ctl_cmds.h"
#include "dom.h"
#include "idle.h"
#include "punt.h"
#include "capring.h"
#include "counters.h"
#include "verdict.h"
#include "xpile/steer.h"

static json_t *u64(__u64 v)
{
	return json_integer((json_int_t)v);
}

#define SET(o, k, v) json_object_set_new((o), (k), (v))

static double uptime_s(const struct engine *e)
{
	return e->start_ns ? (eng_now_ns() - e->start_ns) / 1e9 : 0;
}

static json_t *base_reply(struct eng_ctl *c)
{
	json_t *o = ut_jl_ok();

	SET(o, "engine", json_string(c->name));
	SET(o, "time", json_real(uptime_s(c->e)));
	return o;
}

static json_t *do_info(struct eng_ctl *c)
{
	struct engine *e = c->e;
	json_t *o = base_reply(c), *ports = json_array();

	for (__u32 i = 0; i < e->cfg.nports; i++) {
		json_t *p = json_object();

		SET(p, "name", json_string(e->ports[i].ifname));
		SET(p, "queues", json_integer(e->ports[i].nqueues));
		json_array_append_new(ports, p);
	}
	SET(o, "version", json_string(XPILE_VERSION));
	SET(o, "pid", json_integer(getpid()));
	SET(o, "mode", json_string(e->cfg.mode->name));
	SET(o, "ports", ports);
	SET(o, "sockets", json_integer(e->nq));
	SET(o, "workers", json_integer(e->nworkers));
	SET(o, "umems", json_integer(e->ndoms));
	SET(o, "event_loop", json_string(ut_loop_name(&c->loop)));
	SET(o, "log_level",
	    json_string(c->log_level == 2 ? "debug" :
			c->log_level	  ? "info" :
					    "error"));
	return o;
}

static json_t *queue_json(struct eng_ctl *c, __u32 i)
{
	struct engine *e = c->e;
	struct eng_q *q = &e->qs[i];
	const struct eng_ctl_rate *r = &c->rate[i];
	struct xp_xsk_stats ks = {};
	struct eng_counters k;
	json_t *o = json_object(), *kern = json_object();

	eng_counters_snap(e, q, &k);
	if (q->xsk)
		xp_xsk_stats(q->xsk, &ks);
	SET(o, "port", json_string(q->port->ifname));
	SET(o, "queue", json_integer(q->queue));
	SET(o, "worker", json_integer(q->w->id));
	SET(o, "core", json_integer(q->w->core));
	SET(o, "umem", json_integer(q->dom ? q->dom->id : 0));
	SET(o, "zerocopy", json_boolean(q->xsk && q->xsk->zerocopy));
	SET(o, "rx_packets", u64(k.rx_packets));
	SET(o, "rx_bytes", u64(k.rx_bytes));
	SET(o, "tx_packets", u64(k.tx_packets));
	SET(o, "tx_bytes", u64(k.tx_bytes));
	SET(o, "tx_dropped", u64(k.tx_dropped));
	SET(o, "bad_descs", u64(k.bad_descs));
	SET(o, "fill_starved", u64(k.fill_starved));
	SET(o, "tx_kicks", u64(k.tx_kicks));
	SET(o, "rx_wakeups", u64(k.rx_wakeups));
	SET(o, "tx_copied", u64(k.tx_copied));
	SET(o, "rx_pps", json_real(r->rx_pps));
	SET(o, "tx_pps", json_real(r->tx_pps));
	SET(o, "rx_bps", json_real(r->rx_bps));
	SET(o, "tx_bps", json_real(r->tx_bps));
	/* The kernel's XDP_STATISTICS of the socket. */
	SET(kern, "rx_dropped", u64(ks.rx_dropped));
	SET(kern, "rx_invalid_descs", u64(ks.rx_invalid_descs));
	SET(kern, "tx_invalid_descs", u64(ks.tx_invalid_descs));
	SET(kern, "rx_ring_full", u64(ks.rx_ring_full));
	SET(kern, "rx_fill_ring_empty_descs", u64(ks.rx_fill_ring_empty_descs));
	SET(kern, "tx_ring_empty_descs", u64(ks.tx_ring_empty_descs));
	SET(o, "kernel", kern);
	return o;
}

static json_t *port_json(struct eng_port *p)
{
	json_t *o = json_object(), *v;
	struct xp_steer_stats st;

	SET(o, "name", json_string(p->ifname));
	SET(o, "ifindex", json_integer(p->ifindex));
	if (p->steer && !xp_steer_stats_read(p->steer, &st)) {
		v = json_object();
		for (int k = 0; k < XP_CNT_MAX; k++) {
			json_t *cnt = json_object();

			SET(cnt, "packets", u64(st.verdict[k].packets));
			SET(cnt, "bytes", u64(st.verdict[k].bytes));
			SET(v, ut_verdict_name(k), cnt);
		}
		SET(o, "verdicts", v);
	}
	return o;
}

static json_t *do_stats(struct eng_ctl *c)
{
	struct engine *e = c->e;
	json_t *o = base_reply(c), *qs = json_array(), *ports = json_array();

	for (__u32 i = 0; i < e->nq; i++)
		json_array_append_new(qs, queue_json(c, i));
	for (__u32 i = 0; i < e->cfg.nports; i++)
		json_array_append_new(ports, port_json(&e->ports[i]));
	SET(o, "mode", json_string(e->cfg.mode->name));
	SET(o, "queues", qs);
	SET(o, "ports", ports);
	return o;
}

static __u64 ld(const __u64 *p)
{
	return __atomic_load_n(p, __ATOMIC_RELAXED);
}

static json_t *do_workers(struct eng_ctl *c)
{
	struct engine *e = c->e;
	json_t *o = base_reply(c), *arr = json_array();
	__u64 dns = eng_now_ns() - c->t0_ns, dcy = eng_cycles() - c->t0_cycles;
	double hz = dns ? dcy * 1e9 / dns : 0;

	for (__u32 i = 0; i < e->nworkers; i++) {
		const struct eng_worker *w = &e->workers[i];
		const struct eng_wstats *s = &w->ws;
		__u64 busy = ld(&s->busy_cycles), idle = ld(&s->idle_cycles), pk = 0;
		json_t *wo = json_object(), *qs = json_array();

		for (__u32 k = 0; k < w->nq; k++) {
			struct eng_counters cnt;

			/* Packets received, or sent by a mode that receives none (txonly). */
			eng_counters_snap(e, w->q[k], &cnt);
			pk += e->cfg.mode->needs_rx ? cnt.rx_packets : cnt.tx_packets;
			json_t *q = json_object();

			SET(q, "port", json_string(w->q[k]->port->ifname));
			SET(q, "queue", json_integer(w->q[k]->queue));
			json_array_append_new(qs, q);
		}
		SET(wo, "worker", json_integer(w->id));
		SET(wo, "core", json_integer(w->core));
		SET(wo, "busy_cycles", u64(busy));
		SET(wo, "idle_cycles", u64(idle));
		SET(wo, "busy_pct", json_real(busy + idle ? 100.0 * busy / (busy + idle) : 0));
		SET(wo, "busy_s", json_real(hz > 0 ? busy / hz : 0));
		SET(wo, "idle_s", json_real(hz > 0 ? idle / hz : 0));
		SET(wo, "packets", u64(pk));
		SET(wo, "cycles_per_packet", json_real(pk ? (double)busy / pk : 0));
		SET(wo, "turns", u64(ld(&s->turns)));
		SET(wo, "sleeps", u64(ld(&s->sleeps)));
		SET(wo, "wakeups", u64(ld(&s->wakeups)));
		/* The idle policy's (idle.h): how idle periods ended, what it does now. */
		SET(wo, "idle_spins", u64(ld(&w->idle.spins)));
		SET(wo, "idle_naps", u64(ld(&w->idle.naps)));
		SET(wo, "idle_sleeps", u64(ld(&w->idle.sleeps)));
		SET(wo, "idle_how",
		    json_string(
			    eng_idle_how_name(__atomic_load_n(&w->idle.how, __ATOMIC_RELAXED))));
		SET(wo, "queues", qs);
		json_array_append_new(arr, wo);
	}
	SET(o, "cycles_hz", json_real(hz));
	SET(o, "workers", arr);
	return o;
}

static json_t *do_ledger(struct eng_ctl *c)
{
	struct engine *e = c->e;
	json_t *o = base_reply(c), *arr = json_array();
	bool all_ok = true;

	pthread_mutex_lock(&c->mu);
	for (__u32 d = 0; d < e->ndoms; d++) {
		const struct eng_ctl_ledger *l = &c->ledger[d];
		json_t *u = json_object();

		SET(u, "umem", json_integer(d));
		SET(u, "audits", u64(l->audits));
		SET(u, "failures", u64(l->failures));
		if (l->audits) {
			SET(u, "time", json_real(l->time));
			SET(u, "ok", json_boolean(l->ok));
			SET(u, "frames", json_integer(l->frames));
			SET(u, "free", json_integer(l->free));
			SET(u, "fill", json_integer(l->fill));
			SET(u, "kernel_rx", json_integer(l->kernel_rx));
			SET(u, "rx", json_integer(l->rx));
			SET(u, "app", json_integer(l->app));
			SET(u, "tx", json_integer(l->tx));
			SET(u, "kernel_tx", json_integer(l->kernel_tx));
			SET(u, "completion", json_integer(l->completion));
			SET(u, "uring", json_integer(l->uring));
			SET(u, "total", json_integer(l->total));
			SET(u, "free_checked", json_boolean(l->free_checked));
			if (!l->ok)
				SET(u, "why", json_string_nocheck(l->why));
		}
		all_ok &= !l->failures;
		json_array_append_new(arr, u);
	}
	pthread_mutex_unlock(&c->mu);
	SET(o, "ledger_ok", json_boolean(all_ok));
	SET(o, "umems", arr);
	return o;
}

static json_t *do_alloc(struct eng_ctl *c)
{
	struct engine *e = c->e;
	json_t *o = base_reply(c), *arr = json_array();

	for (__u32 i = 0; i < e->ndoms; i++) {
		const struct eng_dom *d = &e->dom[i];
		struct eng_alloc_sum s;
		json_t *u = json_object(), *ca = json_object(), *de = json_object();

		eng_alloc_sum(e, d, &s);
		SET(u, "umem", json_integer(d->id));
		SET(u, "backend", json_string(xp_pool_backend_name(xp_pool_backend(d->pool))));
		SET(u, "frames", json_integer(xp_pool_size(d->pool)));
		SET(u, "pile", json_integer(xp_pool_avail(d->pool)));
		SET(u, "cached", json_integer(xp_pool_cached(d->pool)));
		SET(ca, "get_hits", u64(s.cache.get_hits));
		SET(ca, "put_hits", u64(s.cache.put_hits));
		SET(ca, "get_misses", u64(s.cache.get_misses));
		SET(ca, "put_misses", u64(s.cache.put_misses));
		SET(ca, "refills", u64(s.cache.refills));
		SET(ca, "flushes", u64(s.cache.flushes));
		SET(ca, "fails", u64(s.cache.fails));
		SET(de, "gets", u64(s.deal.gets));
		SET(de, "uneven", u64(s.deal.uneven));
		SET(de, "topups", u64(s.deal.topups));
		SET(u, "caches", ca);
		SET(u, "dealer", de);
		SET(u, "tx_copied", u64(s.copied));
		json_array_append_new(arr, u);
	}
	SET(o, "umems", arr);
	return o;
}

static const char *const level_names[] = { "error", "info", "debug" };

static json_t *do_log(struct eng_ctl *c, json_t *req)
{
	const char *lv = json_string_value(json_object_get(req, "level"));
	int k;

	if (!json_object_get(req, "level"))
		return do_info(c);
	for (k = 0; k < 3 && (!lv || strcmp(lv, level_names[k])); k++)
		;
	if (k == 3)
		return ut_jl_err("log: \"level\" is one of \"error\", \"info\", \"debug\"");
	c->log_level = k;
	ut_say_verbose(k);
	ut_say(0, "log level %s (control socket)", level_names[k]);
	return ut_jl_ok();
}

/* capture start|stop: pauses --capture's copies (its file, rule and direction are set
 * at start: a rule cannot change under the workers). */
static json_t *do_capture(struct eng_ctl *c, json_t *req)
{
	const char *act = json_string_value(json_object_get(req, "action"));
	struct ut_cap *cap = c->e->cap;
	json_t *o;

	if (json_object_get(req, "rule"))
		return ut_jl_err(
			"capture: the rule is --capture-rule's, set at start; give \"action\" only");
	if (!cap)
		return ut_jl_err(
			"capture: the engine runs without --capture FILE; start it with one to pause and resume it here");
	if (act && strcmp(act, "start") && strcmp(act, "stop"))
		return ut_jl_err("capture: \"action\" is \"start\" or \"stop\"");
	if (act)
		ut_cap_pause(cap, !strcmp(act, "stop"));
	o = base_reply(c);
	SET(o, "capturing", json_boolean(!ut_cap_paused(cap)));
	return o;
}

/* punt list|add|del: the host TAP's rules (punt.h). */
static json_t *do_punt(struct eng_ctl *c, json_t *req)
{
	const char *act = json_string_value(json_object_get(req, "action"));
	const char *text = json_string_value(json_object_get(req, "rule"));
	json_t *idv = json_object_get(req, "id"), *o, *arr;
	struct engine *e = c->e;
	const struct eng_punt_set *s;
	char why[256];
	int rc;

	if (!e->punt)
		return ut_jl_err(
			"punt: the engine runs without --host-tap PORT: nothing goes up to the host");
	if (!act)
		act = "list";
	if (!strcmp(act, "add")) {
		if (!text)
			return ut_jl_err("punt add: give \"rule\", e.g. \"udp dport 53\"");
		rc = eng_punt_add(e, text, why, sizeof(why));
		if (rc < 0)
			return ut_jl_err("punt add: %s", why);
		ut_say(0, "punt rule %d added through the control socket: %s", rc, text);
	} else if (!strcmp(act, "del")) {
		if (!json_is_integer(idv) || json_integer_value(idv) <= 0)
			return ut_jl_err("punt del: give \"id\", a rule's id (punt list)");
		rc = eng_punt_del(e, (__u32)json_integer_value(idv));
		if (rc == -ENOENT)
			return ut_jl_err("punt del: no rule %lld (punt list)",
					 (long long)json_integer_value(idv));
		if (rc)
			return ut_jl_err(
				"punt del: %d changes made in this run: restart the engine for more",
				ENG_PUNT_CHANGES);
		ut_say(0, "punt rule %lld deleted through the control socket",
		       (long long)json_integer_value(idv));
	} else if (strcmp(act, "list")) {
		return ut_jl_err("punt: \"action\" is \"list\", \"add\" or \"del\"");
	}
	o = base_reply(c);
	arr = json_array();
	s = __atomic_load_n(&e->punt->cur, __ATOMIC_ACQUIRE);
	for (__u32 i = 0; i < s->n; i++)
		json_array_append_new(
			arr, json_pack("{sIss}", "id", (json_int_t)s->id[i], "rule", s->text[i]));
	SET(o, "rules", arr);
	return o;
}

json_t *eng_ctl_handle(struct eng_ctl *c, json_t *req)
{
	static const char cmds[] = "info, stats, workers, ledger, alloc, log, capture, punt";
	json_t *v = json_object_get(req, "cmd");
	const char *cmd = json_string_value(v);

	c->requests++;
	if (!cmd)
		return ut_jl_err("\"cmd\" %s: give one of %s, e.g. {\"cmd\":\"stats\"}",
				 v ? "is not a string" : "missing", cmds);
	if (!strcmp(cmd, "info"))
		return do_info(c);
	if (!strcmp(cmd, "stats"))
		return do_stats(c);
	if (!strcmp(cmd, "workers"))
		return do_workers(c);
	if (!strcmp(cmd, "ledger"))
		return do_ledger(c);
	if (!strcmp(cmd, "alloc"))
		return do_alloc(c);
	if (!strcmp(cmd, "log"))
		return do_log(c, req);
	if (!strcmp(cmd, "capture"))
		return do_capture(c, req);
	if (!strcmp(cmd, "punt"))
		return do_punt(c, req);
	return ut_jl_err("unknown cmd \"%.64s\": one of %s", cmd, cmds);
}

void eng_ctl_sample(struct eng_ctl *c)
{
	struct engine *e = c->e;
	__u64 now = eng_now_ns();
	double dt = (now - c->sample_ns) / 1e9;

	for (__u32 i = 0; i < e->nq; i++) {
		struct eng_ctl_rate *r = &c->rate[i];
		struct eng_counters k;

		eng_counters_snap(e, &e->qs[i], &k);
		if (c->sample_ns && dt > 0) {
			r->rx_pps = (k.rx_packets - r->rx_packets) / dt;
			r->tx_pps = (k.tx_packets - r->tx_packets) / dt;
			r->rx_bps = (k.rx_bytes - r->rx_bytes) * 8 / dt;
			r->tx_bps = (k.tx_bytes - r->tx_bytes) * 8 / dt;
		}
		r->rx_packets = k.rx_packets;
		r->tx_packets = k.tx_packets;
		r->rx_bytes = k.rx_bytes;
		r->tx_bytes = k.tx_bytes;
	}
	c->sample_ns = now;
}

void eng_ctl_ledger_note(struct engine *e, __u32 dom, const struct eng_ctl_ledger *l)
{
	struct eng_ctl *c = e->ctl;
	struct eng_ctl_ledger *to;

	if (!c || dom >= ENG_MAX_DOMS)
		return;
	pthread_mutex_lock(&c->mu);
	to = &c->ledger[dom];
	*to = (struct eng_ctl_ledger){ .audits = to->audits + 1,
				       .failures = to->failures + !l->ok };
	memcpy(to, l, offsetof(struct eng_ctl_ledger, audits));
	memcpy(to->why, l->why, sizeof(to->why));
	pthread_mutex_unlock(&c->mu);
}
