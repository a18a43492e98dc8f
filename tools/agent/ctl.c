// SPDX-License-Identifier: BSD-3-Clause
/*
 * The control socket: a Unix stream socket (control.path, mode control.mode) speaking
 * JSON lines, one request object per line, one reply object per request:
 *
 *   {"cmd":"status"}                               the agent and every interface
 *   {"cmd":"stats","iface":"eth0"}                 verdict and parse-error counters
 *   {"cmd":"rules","iface":"eth0"}                 rules in force, with ids and counters
 *   {"cmd":"rule_add","iface":"eth0","rule":"udp dport 53 action pass"}
 *   {"cmd":"rule_del","iface":"eth0","id":3}
 *   {"cmd":"rules_replace","iface":"eth0","rules":["...", ...]}   one atomic swap
 *   {"cmd":"detach","iface":"eth0"}                detach and unpin until attach/reload
 *   {"cmd":"attach","iface":"eth0"}                serve it again as the config says
 *   {"cmd":"reload"}                               what SIGHUP does
 *   {"cmd":"audit"}                                does what runs match the config?
 *
 * Replies are {"ok":true,...} or {"ok":false,"error":"one line"}. A peer whose uid is
 * not in control.allow_uids (default [0]) and whose gid is not in allow_gids gets one
 * error and is closed; a line over 4096 bytes gets one error and is closed (the
 * stream cannot be trusted after it); malformed JSON and unknown commands get an error
 * and the connection goes on. The line protocol itself (peers, bounds, deadlines) is
 * tools/util/lines.c's; this file is what the lines mean. Rule changes made here are runtime state: the next
 * reload brings every interface back to the config.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <jansson.h>

#include "verdict.h"
#include "agent.h"
#include "config.h"
#include "ctl.h"
#include "dp.h"
#include "iface.h"
#include "lend.h"
#include "jline.h"
#include "reload.h"
#include "xpile/steer_owner.h"

#define CTL_LINE_MAX 4096
#define CTL_IDLE_S 60.0
#define CTL_DRAIN_S 2.0 /* a refused peer's time to hang up */

static const char *mode_name(const struct xp_steer_info *in)
{
	return in->mode == XP_STEER_MODE_SKB ? "skb" : "native";
}

static json_t *iface_status(struct ag_iface *i)
{
	json_t *o = json_object();
	struct xp_steer_health h;
	struct xp_steer_info in;
	int n = ag_rules_count(i->steer);

	xp_steer_info_get(i->steer, &in);
	json_object_set_new(o, "name", json_string(i->name));
	json_object_set_new(o, "prog_id", json_integer(in.prog_id));
	json_object_set_new(o, "mode", json_string(mode_name(&in)));
	json_object_set_new(o, "link", json_boolean(xp_steer_link_fd(i->steer) >= 0));
	json_object_set_new(o, "adopted", json_boolean(i->adopted));
	json_object_set_new(o, "rules", json_integer(n));
	json_object_set_new(o, "pin_path", json_string(in.pin_path));
	/* The very file bound, still there: a socket someone replaced serves nobody. */
	json_object_set_new(o, "dp_socket", json_boolean(ag_dp_intact(i)));
	if (!xp_steer_check(i->steer, &h))
		json_object_set_new(
			o, "attached",
			json_boolean(!h.iface_gone && !h.prog_gone && !h.prog_replaced));
	return o;
}

static json_t *do_status(struct agent *a)
{
	json_t *o = ut_jl_ok(), *arr = json_array();

	json_object_set_new(o, "version", json_string(XPILE_VERSION));
	json_object_set_new(o, "generation", json_integer((int64_t)a->generation));
	json_object_set_new(o, "last_reload_ok", json_boolean(a->last_reload_ok));
	json_object_set_new(o, "event_loop", json_string(ut_loop_name(&a->loop)));
	json_object_set_new(o, "dp_handshakes", json_integer((int64_t)a->dp_handshakes));
	json_object_set_new(o, "dp_connections", json_integer(a->dp_conns));
	for (int k = 0; k < AG_MAX_IFACES; k++)
		if (a->ifaces[k].used)
			json_array_append_new(arr, iface_status(&a->ifaces[k]));
	json_object_set_new(o, "interfaces", arr);
	return o;
}

static json_t *do_stats(struct ag_iface *i)
{
	json_t *o = ut_jl_ok(), *v = json_object(), *p = json_array();
	struct xp_steer_stats st;
	int err = xp_steer_stats_read(i->steer, &st);

	if (err) {
		json_decref(o);
		json_decref(v);
		json_decref(p);
		return ut_jl_err("%s: cannot read counters: %s", i->name, strerror(-err));
	}
	for (int k = 0; k < XP_CNT_MAX; k++) {
		json_t *c = json_object();

		json_object_set_new(c, "packets", json_integer((int64_t)st.verdict[k].packets));
		json_object_set_new(c, "bytes", json_integer((int64_t)st.verdict[k].bytes));
		json_object_set_new(v, ut_verdict_name(k), c);
	}
	for (int k = 0; k < XP_PERR_MAX; k++)
		json_array_append_new(p, json_integer((int64_t)st.parse_err[k]));
	json_object_set_new(o, "iface", json_string(i->name));
	json_object_set_new(o, "verdicts", v);
	json_object_set_new(o, "parse_errors", p);
	return o;
}

static json_t *do_rules(struct ag_iface *i)
{
	struct xp_rule *r = calloc(XP_STEER_MAX_RULES, sizeof(*r));
	struct xp_counter *cnt = calloc(XP_STEER_MAX_RULES, sizeof(*cnt));
	json_t *o, *arr;
	__u32 n = 0;
	int err = r && cnt ? xp_steer_rules_get(i->steer, r, cnt, XP_STEER_MAX_RULES, &n) : -ENOMEM;

	if (err) {
		free(r);
		free(cnt);
		return ut_jl_err("%s: cannot read the rules: %s", i->name, strerror(-err));
	}
	o = ut_jl_ok();
	arr = json_array();
	for (__u32 k = 0; k < n; k++) {
		json_t *e = json_object();
		char text[512];

		xp_rule_format(&r[k], text, sizeof(text));
		json_object_set_new(e, "id", json_integer(r[k].id));
		json_object_set_new(e, "rule", json_string(text));
		json_object_set_new(e, "packets", json_integer((int64_t)cnt[k].packets));
		json_object_set_new(e, "bytes", json_integer((int64_t)cnt[k].bytes));
		json_array_append_new(arr, e);
	}
	json_object_set_new(o, "iface", json_string(i->name));
	json_object_set_new(o, "rules", arr);
	free(r);
	free(cnt);
	return o;
}

/* Rule text into @r: 0, or -1 with the parser's reason in @why. */
static int rule_from_text(const char *s, struct xp_rule *r, char *why, size_t len)
{
	return xp_rule_parse_str(s, r, why, len) ? -1 : 0;
}

static json_t *do_rule_add(struct ag_iface *i, json_t *req)
{
	json_t *v, *o;
	struct xp_rule r;
	char why[256];
	__u32 id = 0;
	int err;

	if (!(v = json_object_get(req, "rule")) || !json_is_string(v))
		return ut_jl_err(
			"rule_add: \"rule\" must be a rule string, e.g. \"udp dport 53 action pass\"");
	if (rule_from_text(json_string_value(v), &r, why, sizeof(why)))
		return ut_jl_err("rule_add: %s", why);
	err = xp_steer_rule_add(i->steer, &r, &id);
	if (err)
		return ut_jl_err("%s: rule not added: %s", i->name, strerror(-err));
	ut_say(0, "%s: rule %u added through the control socket", i->name, id);
	o = ut_jl_ok();
	json_object_set_new(o, "id", json_integer(id));
	return o;
}

static json_t *do_rule_del(struct ag_iface *i, json_t *req)
{
	json_t *v;
	int64_t id;
	int err;

	if (!(v = json_object_get(req, "id")) || !json_is_integer(v))
		return ut_jl_err("rule_del: \"id\" must be a rule id (see the rules command)");
	id = json_integer_value(v);
	if (id < 1 || id > 0xffffffffLL)
		return ut_jl_err("rule_del: id %lld out of range: expected 1..4294967295",
				 (long long)id);
	err = xp_steer_rule_del(i->steer, (__u32)id);
	if (err == -ENOENT)
		return ut_jl_err("%s: no rule with id %lld", i->name, (long long)id);
	if (err)
		return ut_jl_err("%s: rule not deleted: %s", i->name, strerror(-err));
	ut_say(0, "%s: rule %lld deleted through the control socket", i->name, (long long)id);
	return ut_jl_ok();
}

static json_t *do_rules_replace(struct ag_iface *i, json_t *req)
{
	json_t *v;
	struct xp_rule *r;
	char why[256];
	size_t n;
	int err;

	if (!(v = json_object_get(req, "rules")) || !json_is_array(v))
		return ut_jl_err("rules_replace: \"rules\" must be an array of rule strings");
	n = json_array_size(v);
	if (n > XP_STEER_MAX_RULES)
		return ut_jl_err("rules_replace: %zu rules: a set holds at most %d", n,
				 XP_STEER_MAX_RULES);
	r = calloc(n + 1, sizeof(*r));
	if (!r)
		return ut_jl_err("out of memory");
	for (size_t k = 0; k < n; k++) {
		json_t *e = json_array_get(v, k);

		if (!json_is_string(e)) {
			free(r);
			return ut_jl_err("rules_replace: rules[%zu]: expected a string", k);
		}
		if (rule_from_text(json_string_value(e), &r[k], why, sizeof(why))) {
			free(r);
			return ut_jl_err("rules_replace: rules[%zu]: %s", k, why);
		}
	}
	err = xp_steer_rules_replace(i->steer, r, (__u32)n);
	free(r);
	if (err)
		return ut_jl_err("%s: rules not replaced: %s", i->name, strerror(-err));
	ut_say(0, "%s: rule set replaced through the control socket (%zu rules)", i->name, n);
	return ut_jl_ok();
}

static json_t *do_reload(struct agent *a)
{
	char err[1024];

	if (ag_reload(a, err, sizeof(err))) {
		ut_log(LOG_ERR, "reload refused, running state kept: %s", err);
		return ut_jl_err("reload refused, running state kept: %s", err);
	}
	ut_say(0, "reloaded %s: generation %llu", a->cfg_path, (unsigned long long)a->generation);
	return ut_jl_ok();
}

static json_t *do_audit(struct agent *a)
{
	json_t *o = ut_jl_ok(), *arr = json_array();
	bool clean = true;

	for (__u32 k = 0; k < a->cfg.nifaces; k++) {
		const struct ag_iface_cfg *c = &a->cfg.ifaces[k];
		struct ag_iface *i = ag_iface_find(a, c->name);
		struct xp_steer_health h;
		char msg[256] = "";

		if (!i)
			snprintf(msg, sizeof(msg), "%s: in the config but not served (detached?)",
				 c->name);
		else if (xp_steer_check(i->steer, &h))
			snprintf(msg, sizeof(msg), "%s: cannot query its XDP program", c->name);
		else if (h.iface_gone || h.prog_gone || h.prog_replaced)
			snprintf(msg, sizeof(msg), "%s: steer program not attached%s%s", c->name,
				 h.prog_replaced ? ": replaced by " : "",
				 h.prog_replaced ? h.attached_name : "");
		else if (h.pins_gone || h.pins_replaced)
			snprintf(msg, sizeof(msg), "%s: pins %s", c->name,
				 h.pins_gone ? "removed" : "replaced by another program");
		if (!msg[0] && i) {
			struct xp_rule *r = calloc(XP_STEER_MAX_RULES, sizeof(*r));
			__u32 n = 0;

			if (r && !xp_steer_rules_get(i->steer, r, NULL, XP_STEER_MAX_RULES, &n) &&
			    !ag_rules_equal(r, n, i->cfg.rules, i->cfg.nrules))
				snprintf(
					msg, sizeof(msg),
					"%s: %u rules in force differ from the config's %u (changed through the control socket?)",
					c->name, n, i->cfg.nrules);
			free(r);
		}
		if (msg[0]) {
			clean = false;
			json_array_append_new(arr, json_string(msg));
		}
	}
	json_object_set_new(o, "clean", json_boolean(clean));
	json_object_set_new(o, "findings", arr);
	return o;
}

static json_t *handle(struct agent *a, json_t *req)
{
	static const char *const cmds = "status, stats, rules, rule_add, rule_del, "
					"rules_replace, detach, attach, reload, audit";
	json_t *v;
	const char *cmd, *ifname = NULL;
	struct ag_iface *i = NULL;

	if (!json_is_object(req))
		return ut_jl_err("a request is a JSON object like {\"cmd\":\"status\"}");
	if (!(v = json_object_get(req, "cmd")))
		return ut_jl_err("\"cmd\" missing: one of %s", cmds);
	if (!json_is_string(v))
		return ut_jl_err("\"cmd\": expected a string, got %s; one of %s", ag_json_type(v),
				 cmds);
	cmd = json_string_value(v);
	if (!strcmp(cmd, "status"))
		return do_status(a);
	if (!strcmp(cmd, "reload"))
		return do_reload(a);
	if (!strcmp(cmd, "audit"))
		return do_audit(a);
	if (!strcmp(cmd, "lend") || !strcmp(cmd, "reclaim")) /* xpile-cni's (lend.c) */
		return ag_lend_cmd(a, cmd, req);
	if (strcmp(cmd, "stats") && strcmp(cmd, "rules") && strcmp(cmd, "rule_add") &&
	    strcmp(cmd, "rule_del") && strcmp(cmd, "rules_replace") && strcmp(cmd, "detach") &&
	    strcmp(cmd, "attach"))
		return ut_jl_err("unknown cmd \"%.64s\": one of %s", cmd, cmds);
	if (!(v = json_object_get(req, "iface")))
		return ut_jl_err("%s: \"iface\" missing: name an interface of the config", cmd);
	if (!json_is_string(v))
		return ut_jl_err(
			"%s: \"iface\": expected a string, got %s; name an interface of the config",
			cmd, ag_json_type(v));
	ifname = json_string_value(v);
	i = ag_iface_find(a, ifname);
	if (!strcmp(cmd, "attach")) {
		char err[1024];

		if (i)
			return ut_jl_err("attach: %.32s is served already", ifname);
		/* As the config says: brings back what detach took. */
		for (__u32 k = 0; k < a->cfg.nifaces; k++)
			if (!strcmp(a->cfg.ifaces[k].name, ifname)) {
				if (ag_iface_serve(a, &a->cfg.ifaces[k], err, sizeof(err)))
					return ut_jl_err("attach: %s", err);
				ut_say(0, "%s: attached through the control socket", ifname);
				return ut_jl_ok();
			}
		return ut_jl_err("attach: %.32s is not in the config (%s)", ifname, a->cfg.file);
	}
	if (!i)
		return ut_jl_err("%s: no interface %.32s served (see the status command)", cmd,
				 ifname);
	if (!strcmp(cmd, "stats"))
		return do_stats(i);
	if (!strcmp(cmd, "rules"))
		return do_rules(i);
	if (!strcmp(cmd, "rule_add"))
		return do_rule_add(i, req);
	if (!strcmp(cmd, "rule_del"))
		return do_rule_del(i, req);
	if (!strcmp(cmd, "rules_replace"))
		return do_rules_replace(i, req);
	ut_say(0, "%s: detached through the control socket", i->name);
	ag_iface_detach(a, i);
	return ut_jl_ok();
}

static void serve_line(struct ut_line_conn *c, char *line)
{
	json_error_t e;
	json_t *req = json_loads(line, JSON_REJECT_DUPLICATES | JSON_DECODE_ANY, &e), *rep;

	if (!req)
		rep = ut_jl_err("malformed JSON at column %d: %s", e.column, e.text);
	else
		rep = handle(c->conn.ctx, req);
	ut_jl_send(c, rep);
	json_decref(req);
}

static void line_error(struct ut_line_conn *c, enum ut_line_err err, const struct ucred *cr)
{
	json_t *rep;

	switch (err) {
	case UT_LINE_PEER:
		rep = ut_jl_err(
			"peer uid %u gid %u is not allowed: see control.allow_uids and control.allow_gids",
			cr->uid, cr->gid);
		break;
	case UT_LINE_NUL:
		rep = ut_jl_err("a request holds a NUL byte");
		break;
	case UT_LINE_EMPTY:
		rep = ut_jl_err(
			"empty request: one JSON object per line, e.g. {\"cmd\":\"status\"}");
		break;
	default:
		rep = ut_jl_err("request longer than %d bytes: refused, connection closed",
				CTL_LINE_MAX);
		break;
	}
	ut_jl_send(c, rep);
}

static bool peer_allowed(struct ut_line_srv *ls, const struct ucred *cr)
{
	const struct ag_config *cfg = &((struct agent *)ls->srv.ctx)->cfg;

	if (!cfg->nallow_uids && !cfg->nallow_gids)
		return cr->uid == 0;
	for (__u32 k = 0; k < cfg->nallow_uids; k++)
		if (cfg->allow_uids[k] == cr->uid)
			return true;
	for (__u32 k = 0; k < cfg->nallow_gids; k++)
		if (cfg->allow_gids[k] == cr->gid)
			return true;
	return false;
}

static void ctl_release(struct ut_srv *s)
{
	free((struct ut_line_srv *)s);
}

int ag_ctl_open(struct agent *a)
{
	struct ut_line_srv *ctl = calloc(1, sizeof(*ctl));
	char dir[AG_SUN_PATH], why[512], *sl;
	int fd;

	if (!ctl)
		return -ENOMEM;
	snprintf(ctl->srv.name, sizeof(ctl->srv.name), "control");
	ctl->srv.release = ctl_release;
	ctl->max = CTL_LINE_MAX;
	ctl->idle_s = CTL_IDLE_S;
	ctl->drain_s = CTL_DRAIN_S;
	ctl->peer_ok = peer_allowed;
	ctl->line = serve_line;
	ctl->error = line_error;
	snprintf(dir, sizeof(dir), "%s", a->cfg.ctl_path);
	sl = strrchr(dir, '/');
	*sl = 0; /* the config holds an absolute path */
	/* Its directory may be sticky (/tmp): nobody else can rename or remove it there. */
	fd = ag_sock_listen(&a->ctl_sock, dir[0] ? dir : "/", 0, sl + 1, SOCK_STREAM,
			    a->cfg.ctl_mode, (gid_t)-1, 64, why, sizeof(why));
	if (fd < 0) {
		ut_log(LOG_ERR, "control: %s", why);
		free(ctl);
		return -1;
	}
	a->ctl = ctl;
	ut_line_serve(ctl, &a->loop, a, fd);
	return 0;
}

void ag_ctl_close(struct agent *a)
{
	struct ut_line_srv *ctl = a->ctl;

	if (!ctl)
		return;
	a->ctl = NULL;
	if (!ag_sock_close(&a->ctl_sock, false))
		ut_warn("control: %s is not the socket this agent bound (removed or replaced): left as it is",
			a->cfg.ctl_path);
	ut_srv_stop(&ctl->srv);
}

void ag_ctl_tick(struct agent *a, double now)
{
	ut_line_expire(a->ctl, now);
}
