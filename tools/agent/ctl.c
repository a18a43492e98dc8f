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
 * and the connection goes on. Rule changes made here are runtime state: the next
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
#include <json-c/json.h>

#include "agent.h"
#include "xpile/owner.h"

#define CTL_LINE_MAX 4096
#define CTL_IDLE_S 60.0
#define CTL_DRAIN_S 2.0 /* a refused peer's time to hang up */

struct ag_ctl_conn;

struct ag_ctl {
	struct ag_ev ev; /* accept */
	struct agent *a;
	int fd;
	bool closing, accepting;
	struct ag_ctl_conn *conns;
};

struct ag_ctl_conn {
	struct ag_ev ev; /* recv */
	struct agent *a;
	struct ag_ctl *ctl; /* NULL once the server is gone */
	struct ag_ctl_conn *next, **pprev;
	int fd;
	bool done;
	bool draining; /* refused: its input is read and dropped until it hangs up */
	double last;
	size_t len;
	char buf[CTL_LINE_MAX + 1];
};

static void send_line(struct ag_ctl_conn *c, struct json_object *o)
{
	const char *s = json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN |
								  JSON_C_TO_STRING_NOSLASHESCAPE);
	size_t n = strlen(s), off = 0;

	/* Replies are small; a peer that stops reading loses its connection, not the
	 * loop's time. */
	while (off < n) {
		ssize_t w = send(c->fd, s + off, n - off, MSG_DONTWAIT | MSG_NOSIGNAL);

		if (w <= 0) {
			c->done = true;
			return;
		}
		off += (size_t)w;
	}
	if (send(c->fd, "\n", 1, MSG_DONTWAIT | MSG_NOSIGNAL) != 1)
		c->done = true;
}

static struct json_object *err_reply(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static struct json_object *err_reply(const char *fmt, ...)
{
	struct json_object *o = json_object_new_object();
	char msg[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	for (char *p = msg; *p; p++)
		if (*p == '\n')
			*p = ' ';
	json_object_object_add(o, "ok", json_object_new_boolean(0));
	json_object_object_add(o, "error", json_object_new_string(msg));
	return o;
}

static struct json_object *ok_reply(void)
{
	struct json_object *o = json_object_new_object();

	json_object_object_add(o, "ok", json_object_new_boolean(1));
	return o;
}

static const char *const verdict_names[XP_CNT_MAX] = {
	[XP_CNT_PASS] = "pass",	      [XP_CNT_DROP] = "drop",
	[XP_CNT_TX] = "tx",	      [XP_CNT_REDIRECT] = "redirect",
	[XP_CNT_XSK] = "xsk",	      [XP_CNT_XSK_NOSOCK] = "xsk_nosocket",
	[XP_CNT_DEFAULT] = "default", [XP_CNT_PARSE_ERR] = "parse_error",
};

static const char *mode_name(const struct xp_steer_info *in)
{
	return in->mode == XP_STEER_MODE_SKB ? "skb" : "native";
}

static struct json_object *iface_status(struct ag_iface *i)
{
	struct json_object *o = json_object_new_object();
	struct xp_steer_health h;
	struct xp_steer_info in;
	int n = ag_rules_count(i->steer);

	xp_steer_info_get(i->steer, &in);
	json_object_object_add(o, "name", json_object_new_string(i->name));
	json_object_object_add(o, "prog_id", json_object_new_int64(in.prog_id));
	json_object_object_add(o, "mode", json_object_new_string(mode_name(&in)));
	json_object_object_add(o, "link", json_object_new_boolean(xp_steer_link_fd(i->steer) >= 0));
	json_object_object_add(o, "adopted", json_object_new_boolean(i->adopted));
	json_object_object_add(o, "rules", json_object_new_int(n));
	json_object_object_add(o, "pin_path", json_object_new_string(in.pin_path));
	json_object_object_add(o, "dp_socket", json_object_new_boolean(i->dp != NULL));
	if (!xp_steer_check(i->steer, &h))
		json_object_object_add(
			o, "attached",
			json_object_new_boolean(!h.iface_gone && !h.prog_gone && !h.prog_replaced));
	return o;
}

static struct json_object *do_status(struct agent *a)
{
	struct json_object *o = ok_reply(), *arr = json_object_new_array();

	json_object_object_add(o, "version", json_object_new_string(XPILE_VERSION));
	json_object_object_add(o, "generation", json_object_new_int64((int64_t)a->generation));
	json_object_object_add(o, "last_reload_ok", json_object_new_boolean(a->last_reload_ok));
	json_object_object_add(o, "dp_handshakes",
			       json_object_new_int64((int64_t)a->dp_handshakes));
	json_object_object_add(o, "dp_connections", json_object_new_int64(a->dp_conns));
	for (int k = 0; k < AG_MAX_IFACES; k++)
		if (a->ifaces[k].used)
			json_object_array_add(arr, iface_status(&a->ifaces[k]));
	json_object_object_add(o, "interfaces", arr);
	return o;
}

static struct json_object *do_stats(struct ag_iface *i)
{
	struct json_object *o = ok_reply(), *v = json_object_new_object(),
			   *p = json_object_new_array();
	struct xp_steer_stats st;
	int err = xp_steer_stats_read(i->steer, &st);

	if (err) {
		json_object_put(o);
		json_object_put(v);
		json_object_put(p);
		return err_reply("%s: cannot read counters: %s", i->name, strerror(-err));
	}
	for (int k = 0; k < XP_CNT_MAX; k++) {
		struct json_object *c = json_object_new_object();

		json_object_object_add(c, "packets",
				       json_object_new_int64((int64_t)st.verdict[k].packets));
		json_object_object_add(c, "bytes",
				       json_object_new_int64((int64_t)st.verdict[k].bytes));
		json_object_object_add(v, verdict_names[k], c);
	}
	for (int k = 0; k < XP_PERR_MAX; k++)
		json_object_array_add(p, json_object_new_int64((int64_t)st.parse_err[k]));
	json_object_object_add(o, "iface", json_object_new_string(i->name));
	json_object_object_add(o, "verdicts", v);
	json_object_object_add(o, "parse_errors", p);
	return o;
}

static struct json_object *do_rules(struct ag_iface *i)
{
	struct xp_rule *r = calloc(XP_STEER_MAX_RULES, sizeof(*r));
	struct xp_counter *cnt = calloc(XP_STEER_MAX_RULES, sizeof(*cnt));
	struct json_object *o, *arr;
	__u32 n = 0;
	int err = r && cnt ? xp_steer_rules_get(i->steer, r, cnt, XP_STEER_MAX_RULES, &n) : -ENOMEM;

	if (err) {
		free(r);
		free(cnt);
		return err_reply("%s: cannot read the rules: %s", i->name, strerror(-err));
	}
	o = ok_reply();
	arr = json_object_new_array();
	for (__u32 k = 0; k < n; k++) {
		struct json_object *e = json_object_new_object();
		char text[512];

		xp_rule_format(&r[k], text, sizeof(text));
		json_object_object_add(e, "id", json_object_new_int64(r[k].id));
		json_object_object_add(e, "rule", json_object_new_string(text));
		json_object_object_add(e, "packets",
				       json_object_new_int64((int64_t)cnt[k].packets));
		json_object_object_add(e, "bytes", json_object_new_int64((int64_t)cnt[k].bytes));
		json_object_array_add(arr, e);
	}
	json_object_object_add(o, "iface", json_object_new_string(i->name));
	json_object_object_add(o, "rules", arr);
	free(r);
	free(cnt);
	return o;
}

/* Rule text into @r: 0, or -1 with the parser's reason in @why. */
static int rule_from_text(const char *s, struct xp_rule *r, char *why, size_t len)
{
	char text[1024], *argv[64], *tok, *save;
	int argc = 0;

	if (strlen(s) >= sizeof(text)) {
		snprintf(why, len, "rule longer than %zu bytes", sizeof(text) - 1);
		return -1;
	}
	snprintf(text, sizeof(text), "%s", s);
	for (tok = strtok_r(text, " \t", &save); tok && argc < 64;
	     tok = strtok_r(NULL, " \t", &save))
		argv[argc++] = tok;
	if (!argc) {
		snprintf(why, len, "empty rule");
		return -1;
	}
	return xp_rule_parse(argc, argv, r, why, len) ? -1 : 0;
}

static struct json_object *do_rule_add(struct ag_iface *i, struct json_object *req)
{
	struct json_object *v, *o;
	struct xp_rule r;
	char why[256];
	__u32 id = 0;
	int err;

	if (!json_object_object_get_ex(req, "rule", &v) ||
	    !json_object_is_type(v, json_type_string))
		return err_reply(
			"rule_add: \"rule\" must be a rule string, e.g. \"udp dport 53 action pass\"");
	if (rule_from_text(json_object_get_string(v), &r, why, sizeof(why)))
		return err_reply("rule_add: %s", why);
	err = xp_steer_rule_add(i->steer, &r, &id);
	if (err)
		return err_reply("%s: rule not added: %s", i->name, strerror(-err));
	ag_log("%s: rule %u added through the control socket", i->name, id);
	o = ok_reply();
	json_object_object_add(o, "id", json_object_new_int64(id));
	return o;
}

static struct json_object *do_rule_del(struct ag_iface *i, struct json_object *req)
{
	struct json_object *v;
	int64_t id;
	int err;

	if (!json_object_object_get_ex(req, "id", &v) || !json_object_is_type(v, json_type_int))
		return err_reply("rule_del: \"id\" must be a rule id (see the rules command)");
	id = json_object_get_int64(v);
	if (id < 1 || id > 0xffffffffLL)
		return err_reply("rule_del: id %lld out of range: expected 1..4294967295",
				 (long long)id);
	err = xp_steer_rule_del(i->steer, (__u32)id);
	if (err == -ENOENT)
		return err_reply("%s: no rule with id %lld", i->name, (long long)id);
	if (err)
		return err_reply("%s: rule not deleted: %s", i->name, strerror(-err));
	ag_log("%s: rule %lld deleted through the control socket", i->name, (long long)id);
	return ok_reply();
}

static struct json_object *do_rules_replace(struct ag_iface *i, struct json_object *req)
{
	struct json_object *v;
	struct xp_rule *r;
	char why[256];
	size_t n;
	int err;

	if (!json_object_object_get_ex(req, "rules", &v) ||
	    !json_object_is_type(v, json_type_array))
		return err_reply("rules_replace: \"rules\" must be an array of rule strings");
	n = json_object_array_length(v);
	if (n > XP_STEER_MAX_RULES)
		return err_reply("rules_replace: %zu rules: a set holds at most %d", n,
				 XP_STEER_MAX_RULES);
	r = calloc(n + 1, sizeof(*r));
	if (!r)
		return err_reply("out of memory");
	for (size_t k = 0; k < n; k++) {
		struct json_object *e = json_object_array_get_idx(v, k);

		if (!json_object_is_type(e, json_type_string)) {
			free(r);
			return err_reply("rules_replace: rules[%zu]: expected a string", k);
		}
		if (rule_from_text(json_object_get_string(e), &r[k], why, sizeof(why))) {
			free(r);
			return err_reply("rules_replace: rules[%zu]: %s", k, why);
		}
	}
	err = xp_steer_rules_replace(i->steer, r, (__u32)n);
	free(r);
	if (err)
		return err_reply("%s: rules not replaced: %s", i->name, strerror(-err));
	ag_log("%s: rule set replaced through the control socket (%zu rules)", i->name, n);
	return ok_reply();
}

static struct json_object *do_reload(struct agent *a)
{
	char err[1024];

	if (ag_reload(a, err, sizeof(err))) {
		ag_log("reload refused, running state kept: %s", err);
		return err_reply("reload refused, running state kept: %s", err);
	}
	ag_log("reloaded %s: generation %llu", a->cfg_path, (unsigned long long)a->generation);
	return ok_reply();
}

static struct json_object *do_audit(struct agent *a)
{
	struct json_object *o = ok_reply(), *arr = json_object_new_array();
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
			json_object_array_add(arr, json_object_new_string(msg));
		}
	}
	json_object_object_add(o, "clean", json_object_new_boolean(clean));
	json_object_object_add(o, "findings", arr);
	return o;
}

static struct json_object *handle(struct agent *a, struct json_object *req)
{
	static const char *const cmds = "status, stats, rules, rule_add, rule_del, "
					"rules_replace, detach, attach, reload, audit";
	struct json_object *v;
	const char *cmd, *ifname = NULL;
	struct ag_iface *i = NULL;

	if (!json_object_is_type(req, json_type_object))
		return err_reply("a request is a JSON object like {\"cmd\":\"status\"}");
	if (!json_object_object_get_ex(req, "cmd", &v) || !json_object_is_type(v, json_type_string))
		return err_reply("\"cmd\" missing: one of %s", cmds);
	cmd = json_object_get_string(v);
	if (!strcmp(cmd, "status"))
		return do_status(a);
	if (!strcmp(cmd, "reload"))
		return do_reload(a);
	if (!strcmp(cmd, "audit"))
		return do_audit(a);
	if (strcmp(cmd, "stats") && strcmp(cmd, "rules") && strcmp(cmd, "rule_add") &&
	    strcmp(cmd, "rule_del") && strcmp(cmd, "rules_replace") && strcmp(cmd, "detach") &&
	    strcmp(cmd, "attach"))
		return err_reply("unknown cmd \"%.64s\": one of %s", cmd, cmds);
	if (!json_object_object_get_ex(req, "iface", &v) ||
	    !json_object_is_type(v, json_type_string))
		return err_reply("%s: \"iface\" missing: name an interface of the config", cmd);
	ifname = json_object_get_string(v);
	i = ag_iface_find(a, ifname);
	if (!strcmp(cmd, "attach")) {
		char err[1024];

		if (i)
			return err_reply("attach: %.32s is served already", ifname);
		/* As the config says: brings back what detach took. */
		for (__u32 k = 0; k < a->cfg.nifaces; k++)
			if (!strcmp(a->cfg.ifaces[k].name, ifname)) {
				if (ag_iface_serve(a, &a->cfg.ifaces[k], err, sizeof(err)))
					return err_reply("attach: %s", err);
				ag_log("%s: attached through the control socket", ifname);
				return ok_reply();
			}
		return err_reply("attach: %.32s is not in the config (%s)", ifname, a->cfg.file);
	}
	if (!i)
		return err_reply("%s: no interface %.32s served (see the status command)", cmd,
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
	ag_log("%s: detached through the control socket", i->name);
	ag_iface_detach(a, i);
	return ok_reply();
}

static void serve_line(struct ag_ctl_conn *c, char *line)
{
	struct json_tokener *tok = json_tokener_new();
	struct json_object *req = NULL, *rep;
	enum json_tokener_error e = json_tokener_success;

	if (tok) {
		json_tokener_set_flags(tok, JSON_TOKENER_STRICT);
		req = json_tokener_parse_ex(tok, line, (int)strlen(line) + 1);
		e = json_tokener_get_error(tok);
	}
	if (!tok)
		rep = err_reply("out of memory");
	else if (!req || e != json_tokener_success)
		rep = err_reply("malformed JSON: %s", json_tokener_error_desc(e));
	else if (line[json_tokener_get_parse_end(tok) - 1] &&
		 line[json_tokener_get_parse_end(tok) +
		      strspn(line + json_tokener_get_parse_end(tok), " \t\r")])
		rep = err_reply("malformed JSON: text after the object; one request per line");
	else
		rep = handle(c->a, req);
	send_line(c, rep);
	json_object_put(rep);
	json_object_put(req);
	if (tok)
		json_tokener_free(tok);
}

static void arm_recv(struct ag_ctl_conn *c)
{
	struct io_uring_sqe *sqe = ag_loop_sqe(&c->a->loop, &c->ev);

	if (sqe)
		io_uring_prep_recv(sqe, c->fd, c->buf + (c->draining ? 0 : c->len),
				   CTL_LINE_MAX + 1 - (c->draining ? 0 : c->len), 0);
}

static void conn_free(struct ag_ctl_conn *c)
{
	if (c->pprev) {
		*c->pprev = c->next;
		if (c->next)
			c->next->pprev = c->pprev;
	}
	close(c->fd);
	free(c);
}

static void conn_recv(struct ag_loop *l, struct ag_ev *ev, int res, unsigned int flags)
{
	struct ag_ctl_conn *c = (struct ag_ctl_conn *)ev;
	char *nl;

	if (res <= 0 || !c->ctl) {
		conn_free(c);
		return;
	}
	c->last = ag_now();
	if (c->draining) {
		/* Closing with unread input would reset the peer before it reads the error. */
		arm_recv(c);
		return;
	}
	c->len += (size_t)res;
	while (!c->done && (nl = memchr(c->buf, '\n', c->len))) {
		size_t used = (size_t)(nl - c->buf) + 1;

		*nl = 0;
		if (strlen(c->buf) != used - 1) {
			struct json_object *rep = err_reply("a request holds a NUL byte");

			send_line(c, rep);
			json_object_put(rep);
		} else if (!c->buf[strspn(c->buf, " \t\r")]) {
			struct json_object *rep = err_reply(
				"empty request: one JSON object per line, e.g. {\"cmd\":\"status\"}");

			send_line(c, rep);
			json_object_put(rep);
		} else {
			serve_line(c, c->buf);
		}
		memmove(c->buf, c->buf + used, c->len - used);
		c->len -= used;
	}
	if (!c->done && c->len > CTL_LINE_MAX) {
		struct json_object *rep = err_reply(
			"request longer than %d bytes: refused, connection closed", CTL_LINE_MAX);

		send_line(c, rep);
		json_object_put(rep);
		shutdown(c->fd, SHUT_WR);
		c->draining = true;
		c->len = 0;
	}
	if (c->done || l->stop)
		conn_free(c);
	else
		arm_recv(c);
}

static bool peer_allowed(struct agent *a, const struct ucred *cr)
{
	const struct ag_config *cfg = &a->cfg;

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

static void arm_accept(struct ag_ctl *ctl)
{
	struct io_uring_sqe *sqe = ag_loop_sqe(&ctl->a->loop, &ctl->ev);

	if (sqe) {
		io_uring_prep_accept(sqe, ctl->fd, NULL, NULL, SOCK_CLOEXEC);
		ctl->accepting = true;
	}
}

static void on_accept(struct ag_loop *l, struct ag_ev *ev, int res, unsigned int flags)
{
	struct ag_ctl *ctl = (struct ag_ctl *)ev;
	struct agent *a = ctl->a;
	struct ag_ctl_conn *c;
	struct ucred cr;
	socklen_t sl = sizeof(cr);

	ctl->accepting = false;
	if (ctl->closing) {
		if (res >= 0)
			close(res);
		free(ctl);
		return;
	}
	if (res < 0) {
		arm_accept(ctl);
		return;
	}
	c = calloc(1, sizeof(*c));
	if (!c) {
		close(res);
		arm_accept(ctl);
		return;
	}
	if (getsockopt(res, SOL_SOCKET, SO_PEERCRED, &cr, &sl) || !peer_allowed(a, &cr)) {
		char msg[200];
		int n = snprintf(
			msg, sizeof(msg),
			"{\"ok\":false,\"error\":\"peer uid %u gid %u is not allowed: see control.allow_uids and control.allow_gids\"}\n",
			sl == sizeof(cr) ? cr.uid : 0, sl == sizeof(cr) ? cr.gid : 0);

		if (send(res, msg, (size_t)n, MSG_DONTWAIT | MSG_NOSIGNAL) != n)
			ag_log("control: refused peer did not take its error");
		ag_log("control: peer uid %u gid %u pid %d refused", cr.uid, cr.gid, cr.pid);
		/* Its request is read and dropped: a close with unread input would reset
		 * the peer before it reads why. */
		shutdown(res, SHUT_WR);
		c->draining = true;
	}
	c->ev.fn = conn_recv;
	c->a = a;
	c->ctl = ctl;
	c->fd = res;
	c->last = ag_now();
	c->next = ctl->conns;
	if (c->next)
		c->next->pprev = &c->next;
	c->pprev = &ctl->conns;
	ctl->conns = c;
	arm_recv(c);
	arm_accept(ctl);
}

static int mkdir_parent(const char *path)
{
	char p[AG_SUN_PATH];
	char *sl;

	snprintf(p, sizeof(p), "%s", path);
	sl = strrchr(p, '/');
	if (!sl || sl == p)
		return 0;
	*sl = 0;
	for (char *s = p + 1; *s; s++)
		if (*s == '/') {
			*s = 0;
			if (mkdir(p, 0755) && errno != EEXIST)
				return -errno;
			*s = '/';
		}
	if (mkdir(p, 0755) && errno != EEXIST)
		return -errno;
	return 0;
}

int ag_ctl_open(struct agent *a)
{
	struct sockaddr_un sun = { .sun_family = AF_UNIX };
	struct ag_ctl *ctl = calloc(1, sizeof(*ctl));
	const char *path = a->cfg.ctl_path;
	int err;

	if (!ctl)
		return -ENOMEM;
	ctl->a = a;
	ctl->ev.fn = on_accept;
	err = mkdir_parent(path);
	if (err) {
		ag_log("control: cannot create the directory of %s: %s", path, strerror(-err));
		free(ctl);
		return err;
	}
	unlink(path); /* a previous run's */
	memcpy(sun.sun_path, path, strlen(path) + 1);
	ctl->fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (ctl->fd < 0 || bind(ctl->fd, (struct sockaddr *)&sun, sizeof(sun)) ||
	    chmod(path, a->cfg.ctl_mode) || listen(ctl->fd, 64)) {
		err = -errno;
		ag_log("control: cannot serve %s: %s", path, strerror(-err));
		if (ctl->fd >= 0)
			close(ctl->fd);
		free(ctl);
		return err;
	}
	a->ctl = ctl;
	arm_accept(ctl);
	return 0;
}

void ag_ctl_close(struct agent *a)
{
	struct ag_ctl *ctl = a->ctl;

	if (!ctl)
		return;
	a->ctl = NULL;
	for (struct ag_ctl_conn *c = ctl->conns; c; c = c->next) {
		c->ctl = NULL;
		c->pprev = NULL;
		shutdown(c->fd, SHUT_RDWR);
	}
	unlink(a->cfg.ctl_path);
	close(ctl->fd);
	if (ctl->accepting) {
		struct io_uring_sqe *sqe = ag_loop_sqe(&a->loop, NULL);

		ctl->closing = true;
		if (sqe)
			io_uring_prep_cancel(sqe, &ctl->ev, 0);
		io_uring_submit(&a->loop.ring);
	} else {
		free(ctl);
	}
}

void ag_ctl_tick(struct agent *a, double now)
{
	for (struct ag_ctl_conn *c = a->ctl ? a->ctl->conns : NULL; c; c = c->next)
		if (now - c->last > (c->draining ? CTL_DRAIN_S : CTL_IDLE_S))
			shutdown(c->fd, SHUT_RDWR);
}
