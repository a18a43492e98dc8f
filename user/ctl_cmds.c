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
#include <sys/socket.h>

#include "ctl_cmds.h"
#include "capture.h"
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

/* The peer of the request being served (SO_PEERCRED), (uid_t)-1 if unknown. */
static uid_t peer_uid(const struct eng_ctl *c)
{
	struct ucred cr;
	socklen_t sl = sizeof(cr);

	return getsockopt(c->peer_fd, SOL_SOCKET, SO_PEERCRED, &cr, &sl) ? (uid_t)-1 : cr.uid;
}

/* The capture in force, for every capture reply. */
static json_t *capture_reply(struct eng_ctl *c)
{
	const struct engine *e = c->e;
	json_t *o = base_reply(c);
	bool on = e->cap && !e->capr->detached;

	SET(o, "capturing", json_boolean(on && !ut_cap_paused(e->cap)));
	if (on) {
		SET(o, "file", json_string(e->capr->file));
		SET(o, "rule",
		    e->capr->rule_text[0] ? json_string(e->capr->rule_text) : json_null());
		SET(o, "live", json_boolean(e->capr->live));
	}
	return o;
}

/*
 * capture [action=start|stop] [rule=RULE] [file=/PATH] [snaplen=N]:
 * - start with file: a new capture to a new file (root only: the engine writes it as
 *   itself), of what rule matches (else every frame);
 * - start with rule alone: the capture in force matches it from the next batch on;
 * - start alone: resumes --capture's after a stop;
 * - stop: closes a capture started here, pauses --capture's (its file is the run's).
 */
static json_t *do_capture(struct eng_ctl *c, json_t *req)
{
	const char *act = json_string_value(json_object_get(req, "action"));
	const char *rule = json_string_value(json_object_get(req, "rule"));
	const char *file = json_string_value(json_object_get(req, "file"));
	json_t *snap = json_object_get(req, "snaplen"), *o;
	struct engine *e = c->e;
	struct ut_cap_stats st;
	char why[512];

	if ((json_object_get(req, "rule") && !rule) || (json_object_get(req, "file") && !file))
		return ut_jl_err(
			"capture: \"rule\" and \"file\" are strings, e.g. rule='udp dport 9' file=/tmp/x.pcapng");
	if (snap && (!json_is_integer(snap) || json_integer_value(snap) < 1 ||
		     json_integer_value(snap) > 65535))
		return ut_jl_err("capture: \"snaplen\" is bytes per frame, 1..65535");
	if (act && strcmp(act, "start") && strcmp(act, "stop"))
		return ut_jl_err("capture: \"action\" is \"start\" or \"stop\"");
	if (!act) {
		if (rule || file)
			return ut_jl_err("capture: give action=start with rule or file");
		return capture_reply(c);
	}
	if (!strcmp(act, "stop")) {
		if (rule || file)
			return ut_jl_err("capture stop: takes no rule or file");
		if (!e->cap)
			return ut_jl_err("capture stop: nothing captures");
		if (!e->capr->live) {
			ut_cap_pause(e->cap, true);
			return capture_reply(c);
		}
		if (eng_capture_live_stop(e, &st, why, sizeof(why)))
			return ut_jl_err("capture stop: %s", why);
		o = capture_reply(c);
		SET(o, "frames", u64(st.frames));
		SET(o, "bytes", u64(st.bytes));
		SET(o, "capture_dropped", u64(st.dropped));
		SET(o, "write_lost", u64(st.lost));
		SET(o, "failed", json_boolean(st.failed));
		return o;
	}
	if (file) {
		uid_t uid = peer_uid(c);

		if (uid != 0)
			return ut_jl_err(
				"capture start: the engine writes the file as itself, so only root (uid 0) may name one; peer uid %u: run xpile ctl as root",
				(unsigned int)uid);
		if (eng_capture_live_start(e, file, rule,
					   snap ? (__u32)json_integer_value(snap) : 65535, why,
					   sizeof(why)))
			return ut_jl_err("capture start: %s", why);
		return capture_reply(c);
	}
	if (snap)
		return ut_jl_err("capture start: snaplen is set with a new file only");
	if (!e->cap || e->capr->detached)
		return ut_jl_err(
			"capture start: nothing captures: give file=/PATH (and rule=...) to start a capture");
	if (rule && eng_capture_rule_change(e, rule, why, sizeof(why)))
		return ut_jl_err("capture start: %s", why);
	ut_cap_pause(e->cap, false);
	return capture_reply(c);
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
			return ut_jl_err("punt del: out of memory for a new rule set: try again");
		ut_say(0, "punt rule %lld deleted through the control socket",
		       (long long)json_integer_value(idv));
	} else if (strcmp(act, "list")) {
		return ut_jl_err("punt: \"action\" is \"list\", \"add\" or \"del\"");
	}
	o = base_reply(c);
	arr = json_array();
	/* Under the lock: no change frees the set while it is listed. */
	pthread_mutex_lock(&e->punt->mu);
	s = e->punt->cur;
	for (__u32 i = 0; i < s->n; i++)
		json_array_append_new(
			arr, json_pack("{sIss}", "id", (json_int_t)s->id[i], "rule", s->text[i]));
	SET(o, "changes", u64(e->punt->changes));
	SET(o, "retired", json_integer(e->punt->nretired)); /* awaiting their grace period */
	SET(o, "freed", u64(e->punt->freed));
	pthread_mutex_unlock(&e->punt->mu);
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
