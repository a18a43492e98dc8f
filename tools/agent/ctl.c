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
#include <jansson.h>

#include "agent.h"
#include "xpile/owner.h"

#define CTL_LINE_MAX 4096
#define CTL_IDLE_S 60.0
#define CTL_DRAIN_S 2.0 /* a refused peer's time to hang up */

struct ag_ctl_conn {
	struct ag_conn conn; /* first: the completion finds the conn */
	bool done;
	bool draining; /* refused: its input is read and dropped until it hangs up */
	size_t len;
	char buf[CTL_LINE_MAX + 1];
};

static void send_line(struct ag_ctl_conn *c, json_t *o)
{
	char *s = json_dumps(o, JSON_COMPACT);
	size_t n = s ? strlen(s) : 0, off = 0;

	/* Replies are small; a peer that stops reading loses its connection, not the
	 * loop's time. */
	while (off < n) {
		ssize_t w = send(c->conn.fd, s + off, n - off, MSG_DONTWAIT | MSG_NOSIGNAL);

		if (w <= 0) {
			c->done = true;
			break;
		}
		off += (size_t)w;
	}
	free(s);
	if (!n || c->done || send(c->conn.fd, "\n", 1, MSG_DONTWAIT | MSG_NOSIGNAL) != 1)
		c->done = true;
}

static json_t *err_reply(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static json_t *err_reply(const char *fmt, ...)
{
	json_t *o = json_object();
	char msg[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	for (char *p = msg; *p; p++)
		if (*p == '\n')
			*p = ' ';
	json_object_set_new(o, "ok", json_boolean(0));
	/* Unchecked: a cut may split a UTF-8 character of what the peer sent. */
	json_object_set_new(o, "error", json_string_nocheck(msg));
	return o;
}

static json_t *ok_reply(void)
{
	json_t *o = json_object();

	json_object_set_new(o, "ok", json_boolean(1));
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
	json_object_set_new(o, "dp_socket", json_boolean(i->dp != NULL));
	if (!xp_steer_check(i->steer, &h))
		json_object_set_new(
			o, "attached",
			json_boolean(!h.iface_gone && !h.prog_gone && !h.prog_replaced));
	return o;
}

static json_t *do_status(struct agent *a)
{
	json_t *o = ok_reply(), *arr = json_array();

	json_object_set_new(o, "version", json_string(XPILE_VERSION));
	json_object_set_new(o, "generation", json_integer((int64_t)a->generation));
	json_object_set_new(o, "last_reload_ok", json_boolean(a->last_reload_ok));
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
	json_t *o = ok_reply(), *v = json_object(), *p = json_array();
	struct xp_steer_stats st;
	int err = xp_steer_stats_read(i->steer, &st);

	if (err) {
		json_decref(o);
		json_decref(v);
		json_decref(p);
		return err_reply("%s: cannot read counters: %s", i->name, strerror(-err));
	}
	for (int k = 0; k < XP_CNT_MAX; k++) {
		json_t *c = json_object();

		json_object_set_new(c, "packets", json_integer((int64_t)st.verdict[k].packets));
		json_object_set_new(c, "bytes", json_integer((int64_t)st.verdict[k].bytes));
		json_object_set_new(v, verdict_names[k], c);
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
		return err_reply("%s: cannot read the rules: %s", i->name, strerror(-err));
	}
	o = ok_reply();
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

static json_t *do_rule_add(struct ag_iface *i, json_t *req)
{
	json_t *v, *o;
	struct xp_rule r;
	char why[256];
	__u32 id = 0;
	int err;

	if (!(v = json_object_get(req, "rule")) || !json_is_string(v))
		return err_reply(
			"rule_add: \"rule\" must be a rule string, e.g. \"udp dport 53 action pass\"");
	if (rule_from_text(json_string_value(v), &r, why, sizeof(why)))
		return err_reply("rule_add: %s", why);
	err = xp_steer_rule_add(i->steer, &r, &id);
	if (err)
		return err_reply("%s: rule not added: %s", i->name, strerror(-err));
	ag_log("%s: rule %u added through the control socket", i->name, id);
	o = ok_reply();
	json_object_set_new(o, "id", json_integer(id));
	return o;
}

static json_t *do_rule_del(struct ag_iface *i, json_t *req)
{
	json_t *v;
	int64_t id;
	int err;

	if (!(v = json_object_get(req, "id")) || !json_is_integer(v))
		return err_reply("rule_del: \"id\" must be a rule id (see the rules command)");
	id = json_integer_value(v);
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

static json_t *do_rules_replace(struct ag_iface *i, json_t *req)
{
	json_t *v;
	struct xp_rule *r;
	char why[256];
	size_t n;
	int err;

	if (!(v = json_object_get(req, "rules")) || !json_is_array(v))
		return err_reply("rules_replace: \"rules\" must be an array of rule strings");
	n = json_array_size(v);
	if (n > XP_STEER_MAX_RULES)
		return err_reply("rules_replace: %zu rules: a set holds at most %d", n,
				 XP_STEER_MAX_RULES);
	r = calloc(n + 1, sizeof(*r));
	if (!r)
		return err_reply("out of memory");
	for (size_t k = 0; k < n; k++) {
		json_t *e = json_array_get(v, k);

		if (!json_is_string(e)) {
			free(r);
			return err_reply("rules_replace: rules[%zu]: expected a string", k);
		}
		if (rule_from_text(json_string_value(e), &r[k], why, sizeof(why))) {
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

static json_t *do_reload(struct agent *a)
{
	char err[1024];

	if (ag_reload(a, err, sizeof(err))) {
		ag_log("reload refused, running state kept: %s", err);
		return err_reply("reload refused, running state kept: %s", err);
	}
	ag_log("reloaded %s: generation %llu", a->cfg_path, (unsigned long long)a->generation);
	return ok_reply();
}

static json_t *do_audit(struct agent *a)
{
	json_t *o = ok_reply(), *arr = json_array();
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
		return err_reply("a request is a JSON object like {\"cmd\":\"status\"}");
	if (!(v = json_object_get(req, "cmd")) || !json_is_string(v))
		return err_reply("\"cmd\" missing: one of %s", cmds);
	cmd = json_string_value(v);
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
	if (!(v = json_object_get(req, "iface")) || !json_is_string(v))
		return err_reply("%s: \"iface\" missing: name an interface of the config", cmd);
	ifname = json_string_value(v);
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
	json_error_t e;
	json_t *req = json_loads(line, JSON_REJECT_DUPLICATES | JSON_DECODE_ANY, &e), *rep;

	if (!req)
		rep = err_reply("malformed JSON at column %d: %s", e.column, e.text);
	else
		rep = handle(c->conn.a, req);
	send_line(c, rep);
	json_decref(rep);
	json_decref(req);
}

static void arm_recv(struct ag_ctl_conn *c)
{
	struct io_uring_sqe *sqe = ag_loop_sqe(&c->conn.a->loop, &c->conn.ev);

	if (sqe)
		io_uring_prep_recv(sqe, c->conn.fd, c->buf + (c->draining ? 0 : c->len),
				   CTL_LINE_MAX + 1 - (c->draining ? 0 : c->len), 0);
}

static void conn_free(struct ag_ctl_conn *c)
{
	ag_conn_close(&c->conn);
	free(c);
}

static void conn_recv(struct ag_loop *l, struct ag_ev *ev, int res, unsigned int flags)
{
	struct ag_ctl_conn *c = (struct ag_ctl_conn *)ev;
	char *nl;

	if (res <= 0 || !c->conn.srv) {
		conn_free(c);
		return;
	}
	c->conn.last = ag_now();
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
			json_t *rep = err_reply("a request holds a NUL byte");

			send_line(c, rep);
			json_decref(rep);
		} else if (!c->buf[strspn(c->buf, " \t\r")]) {
			json_t *rep = err_reply(
				"empty request: one JSON object per line, e.g. {\"cmd\":\"status\"}");

			send_line(c, rep);
			json_decref(rep);
		} else {
			serve_line(c, c->buf);
		}
		memmove(c->buf, c->buf + used, c->len - used);
		c->len -= used;
	}
	if (!c->done && c->len > CTL_LINE_MAX) {
		json_t *rep = err_reply("request longer than %d bytes: refused, connection closed",
					CTL_LINE_MAX);

		send_line(c, rep);
		json_decref(rep);
		shutdown(c->conn.fd, SHUT_WR);
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

static int ctl_accepted(struct ag_srv *s, int fd)
{
	struct agent *a = s->a;
	struct ag_ctl_conn *c = calloc(1, sizeof(*c));
	struct ucred cr;
	socklen_t sl = sizeof(cr);

	if (!c)
		return -ENOMEM;
	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cr, &sl) || !peer_allowed(a, &cr)) {
		char msg[200];
		int n = snprintf(
			msg, sizeof(msg),
			"{\"ok\":false,\"error\":\"peer uid %u gid %u is not allowed: see control.allow_uids and control.allow_gids\"}\n",
			sl == sizeof(cr) ? cr.uid : 0, sl == sizeof(cr) ? cr.gid : 0);

		if (send(fd, msg, (size_t)n, MSG_DONTWAIT | MSG_NOSIGNAL) != n)
			ag_log("control: refused peer did not take its error");
		ag_log("control: peer uid %u gid %u pid %d refused", cr.uid, cr.gid, cr.pid);
		/* Its request is read and dropped: a close with unread input would reset
		 * the peer before it reads why. */
		shutdown(fd, SHUT_WR);
		c->draining = true;
	}
	ag_conn_add(s, &c->conn, fd, conn_recv);
	arm_recv(c);
	return 0;
}

static void ctl_release(struct ag_srv *s)
{
	free(s);
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
	return ag_mkdir_p(p);
}

int ag_ctl_open(struct agent *a)
{
	struct sockaddr_un sun = { .sun_family = AF_UNIX };
	struct ag_srv *ctl = calloc(1, sizeof(*ctl));
	const char *path = a->cfg.ctl_path;
	int err, fd;

	if (!ctl)
		return -ENOMEM;
	snprintf(ctl->name, sizeof(ctl->name), "control");
	ctl->accepted = ctl_accepted;
	ctl->release = ctl_release;
	err = mkdir_parent(path);
	if (err) {
		ag_log("control: cannot create the directory of %s: %s", path, strerror(-err));
		free(ctl);
		return err;
	}
	unlink(path); /* a previous run's */
	memcpy(sun.sun_path, path, strlen(path) + 1);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0 || bind(fd, (struct sockaddr *)&sun, sizeof(sun)) ||
	    chmod(path, a->cfg.ctl_mode) || listen(fd, 64)) {
		err = -errno;
		ag_log("control: cannot serve %s: %s", path, strerror(-err));
		if (fd >= 0)
			close(fd);
		free(ctl);
		return err;
	}
	a->ctl = ctl;
	ag_srv_start(ctl, a, fd);
	return 0;
}

void ag_ctl_close(struct agent *a)
{
	struct ag_srv *ctl = a->ctl;

	if (!ctl)
		return;
	a->ctl = NULL;
	unlink(a->cfg.ctl_path);
	ag_srv_stop(ctl);
}

static double ctl_limit(const struct ag_conn *c)
{
	return ((const struct ag_ctl_conn *)c)->draining ? CTL_DRAIN_S : CTL_IDLE_S;
}

void ag_ctl_tick(struct agent *a, double now)
{
	ag_srv_expire(a->ctl, now, ctl_limit);
}
