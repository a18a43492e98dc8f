// SPDX-License-Identifier: BSD-3-Clause
/*
 * The agent's config: one JSON document (what a ConfigMap holds), parsed by json-c.
 * Every error is one line naming the file, the field's path (interfaces[1].rules[3])
 * and what is wrong; unknown fields are errors too, so a typo never silently means
 * "the default".
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <json-c/json.h>

#include "agent.h"
#include "xpile/text.h"
#include "xpile/xsk.h"

#define CFG_MAX_BYTES (1 << 20)
#define RULE_WORDS_MAX 64
#define RULE_TEXT_MAX 1024

struct cx {
	const char *file;
	char *err;
	size_t len;
};

__attribute__((format(printf, 3, 4))) static int bad(struct cx *x, const char *path,
						     const char *fmt, ...)
{
	int off = snprintf(x->err, x->len, "%s: %s%s", x->file, path, *path ? ": " : "");
	va_list ap;

	va_start(ap, fmt);
	if (off >= 0 && (size_t)off < x->len)
		vsnprintf(x->err + off, x->len - off, fmt, ap);
	va_end(ap);
	return -1;
}

static const char *type_name(struct json_object *o)
{
	return json_type_to_name(json_object_get_type(o));
}

/* Every key of @o is one of @keys (NULL-terminated). */
static int check_keys(struct cx *x, const char *path, struct json_object *o,
		      const char *const *keys)
{
	json_object_object_foreach(o, k, v)
	{
		char sub[256], list[256] = "";
		bool known = false;

		(void)v;
		for (int i = 0; keys[i]; i++)
			known |= !strcmp(k, keys[i]);
		if (known)
			continue;
		for (int i = 0; keys[i]; i++)
			snprintf(list + strlen(list), sizeof(list) - strlen(list), "%s%s",
				 i ? ", " : "", keys[i]);
		snprintf(sub, sizeof(sub), "%s%s%s", path, *path ? "." : "", k);
		return bad(x, sub, "unknown field; expected one of: %s", list);
	}
	return 0;
}

static int want_type(struct cx *x, const char *path, struct json_object *o, enum json_type t,
		     const char *what)
{
	if (json_object_is_type(o, t))
		return 0;
	return bad(x, path, "expected %s, got %s", what, type_name(o));
}

static int get_str(struct cx *x, const char *path, struct json_object *o, char *buf, size_t len)
{
	const char *s;

	if (want_type(x, path, o, json_type_string, "a string"))
		return -1;
	s = json_object_get_string(o);
	if (!*s)
		return bad(x, path, "empty string");
	if (strlen(s) >= len)
		return bad(x, path, "longer than %zu bytes", len - 1);
	if ((size_t)json_object_get_string_len(o) != strlen(s))
		return bad(x, path, "holds a NUL byte");
	memcpy(buf, s, strlen(s) + 1);
	return 0;
}

static int get_u32(struct cx *x, const char *path, struct json_object *o, __u32 min, __u32 max,
		   __u32 *out)
{
	int64_t v;

	if (want_type(x, path, o, json_type_int, "an integer"))
		return -1;
	errno = 0;
	v = json_object_get_int64(o);
	if (errno || v < min || v > max)
		return bad(x, path, "%s out of range: expected %u..%u",
			   json_object_to_json_string(o), min, max);
	*out = (__u32)v;
	return 0;
}

static int get_seconds(struct cx *x, const char *path, struct json_object *o, double min,
		       double max, double *out)
{
	double v;

	if (!json_object_is_type(o, json_type_int) && !json_object_is_type(o, json_type_double))
		return bad(x, path, "expected a number of seconds, got %s", type_name(o));
	v = json_object_get_double(o);
	if (!(v >= min && v <= max))
		return bad(x, path, "%s out of range: expected %g..%g seconds",
			   json_object_to_json_string(o), min, max);
	*out = v;
	return 0;
}

/* A file mode as chmod writes it: "0600", "660". */
static int get_mode(struct cx *x, const char *path, struct json_object *o, mode_t *out)
{
	char buf[8] = "";
	size_t n;

	if (get_str(x, path, o, buf, sizeof(buf)))
		return -1;
	n = strlen(buf);
	if ((n != 3 && n != 4) || strspn(buf, "01234567") != n || (n == 4 && buf[0] != '0'))
		return bad(x, path, "\"%s\" is not a file mode: expected octal like \"0600\"", buf);
	*out = (mode_t)strtoul(buf, NULL, 8);
	return 0;
}

static int get_ids(struct cx *x, const char *path, struct json_object *o, __u32 *ids, __u32 *n)
{
	size_t len;

	if (want_type(x, path, o, json_type_array, "an array of ids"))
		return -1;
	len = json_object_array_length(o);
	if (len > AG_MAX_IDS)
		return bad(x, path, "%zu ids: at most %d", len, AG_MAX_IDS);
	for (size_t i = 0; i < len; i++) {
		char sub[256];

		snprintf(sub, sizeof(sub), "%s[%zu]", path, i);
		if (get_u32(x, sub, json_object_array_get_idx(o, i), 0, 0xfffffffe, &ids[i]))
			return -1;
	}
	*n = (__u32)len;
	return 0;
}

static int parse_rule(struct cx *x, const char *path, struct json_object *o, struct xp_rule *r)
{
	char text[RULE_TEXT_MAX], *argv[RULE_WORDS_MAX], *tok, *save, why[256];
	int argc = 0;

	if (get_str(x, path, o, text, sizeof(text)))
		return -1;
	for (tok = strtok_r(text, " \t", &save); tok; tok = strtok_r(NULL, " \t", &save)) {
		if (argc == RULE_WORDS_MAX)
			return bad(x, path, "more than %d words; a rule has fewer", RULE_WORDS_MAX);
		argv[argc++] = tok;
	}
	if (!argc)
		return bad(x, path, "no words; a rule is like \"udp dport 4789 action xsk\"");
	if (xp_rule_parse(argc, argv, r, why, sizeof(why)))
		return bad(x, path, "%s", why);
	return 0;
}

static int parse_action(struct cx *x, const char *path, struct json_object *o, struct xp_action *a)
{
	char text[128], *argv[4], *tok, *save, why[256];
	int argc = 0, used = 0;

	if (get_str(x, path, o, text, sizeof(text)))
		return -1;
	for (tok = strtok_r(text, " \t", &save); tok && argc < 4;
	     tok = strtok_r(NULL, " \t", &save))
		argv[argc++] = tok;
	if (!argc)
		return bad(x, path, "no action; expected e.g. \"xsk\", \"pass\" or \"drop\"");
	if (xp_action_parse(argc, argv, &used, a, why, sizeof(why)))
		return bad(x, path, "%s", why);
	if (used != argc || tok)
		return bad(x, path, "trailing words after the action \"%s\"", argv[0]);
	return 0;
}

static const char *const iface_keys[] = { "name",  "queues", "mode", "default",
					  "rules", "hosts",  NULL };

static int parse_iface(struct cx *x, const char *path, struct json_object *o,
		       struct ag_iface_cfg *i)
{
	struct json_object *v;
	char sub[256], mode[16];

	if (want_type(x, path, o, json_type_object, "an object") ||
	    check_keys(x, path, o, iface_keys))
		return -1;
	snprintf(sub, sizeof(sub), "%s.name", path);
	if (!json_object_object_get_ex(o, "name", &v))
		return bad(x, sub, "missing; every interface needs its name");
	if (get_str(x, sub, v, i->name, sizeof(i->name)))
		return -1;
	if (strchr(i->name, '/') || strchr(i->name, ' '))
		return bad(x, sub, "\"%s\" is not an interface name", i->name);
	if (!if_nametoindex(i->name))
		return bad(x, sub, "no interface %s in this network namespace (see `ip link`)",
			   i->name);
	i->mode = XP_STEER_MODE_AUTO;
	if (json_object_object_get_ex(o, "mode", &v)) {
		snprintf(sub, sizeof(sub), "%s.mode", path);
		if (get_str(x, sub, v, mode, sizeof(mode)))
			return -1;
		if (!strcmp(mode, "auto"))
			i->mode = XP_STEER_MODE_AUTO;
		else if (!strcmp(mode, "native") || !strcmp(mode, "drv"))
			i->mode = XP_STEER_MODE_NATIVE;
		else if (!strcmp(mode, "skb") || !strcmp(mode, "generic"))
			i->mode = XP_STEER_MODE_SKB;
		else
			return bad(x, sub, "\"%s\": expected auto, native or skb", mode);
	}
	if (json_object_object_get_ex(o, "queues", &v)) {
		snprintf(sub, sizeof(sub), "%s.queues", path);
		int nq;

		if (get_u32(x, sub, v, 1, XP_STEER_MAX_QUEUES, &i->queues))
			return -1;
		nq = xp_ifname_rx_queues(i->name);
		if (nq > 0 && i->queues > (__u32)nq)
			return bad(
				x, sub,
				"%s has %d RX queue(s), %u asked: add queues (ethtool -L %s combined %u) before the agent attaches",
				i->name, nq, i->queues, i->name, i->queues);
	}
	i->dflt.kind = XP_ACT_XSK;
	if (json_object_object_get_ex(o, "default", &v)) {
		snprintf(sub, sizeof(sub), "%s.default", path);
		if (parse_action(x, sub, v, &i->dflt))
			return -1;
	}
	if (json_object_object_get_ex(o, "hosts", &v)) {
		snprintf(sub, sizeof(sub), "%s.hosts", path);
		if (want_type(x, sub, v, json_type_array, "an array of host names"))
			return -1;
		if (json_object_array_length(v) > AG_MAX_HOSTS)
			return bad(x, sub, "%zu hosts: at most %d", json_object_array_length(v),
				   AG_MAX_HOSTS);
		for (size_t k = 0; k < json_object_array_length(v); k++) {
			char *h = i->hosts[k];

			snprintf(sub, sizeof(sub), "%s.hosts[%zu]", path, k);
			if (get_str(x, sub, json_object_array_get_idx(v, k), h, AG_HOST_MAX - 9))
				return -1;
			if (strpbrk(h, ", \t\r\n"))
				return bad(x, sub, "\"%s\" is not a host name", h);
			i->nhosts++;
		}
	}
	if (json_object_object_get_ex(o, "rules", &v)) {
		size_t n;

		snprintf(sub, sizeof(sub), "%s.rules", path);
		if (want_type(x, sub, v, json_type_array, "an array of rule strings"))
			return -1;
		n = json_object_array_length(v);
		if (n > XP_STEER_MAX_RULES)
			return bad(x, sub, "%zu rules: a set holds at most %d", n,
				   XP_STEER_MAX_RULES);
		i->rules = calloc(n ? n : 1, sizeof(*i->rules));
		if (!i->rules)
			return bad(x, sub, "out of memory");
		for (size_t k = 0; k < n; k++) {
			snprintf(sub, sizeof(sub), "%s.rules[%zu]", path, k);
			if (parse_rule(x, sub, json_object_array_get_idx(v, k), &i->rules[k]))
				return -1;
			i->nrules++;
		}
	}
	return 0;
}

static const char *const top_keys[] = { "interfaces", "control", "metrics", "device_plugin", NULL };
static const char *const ctl_keys[] = { "path", "mode", "allow_uids", "allow_gids", NULL };
static const char *const met_keys[] = { "address", NULL };
static const char *const dp_keys[] = { "dir", "mode", "idle_timeout", "max_connections", NULL };

static int parse_control(struct cx *x, struct json_object *o, struct ag_config *c)
{
	struct json_object *v;

	if (want_type(x, "control", o, json_type_object, "an object") ||
	    check_keys(x, "control", o, ctl_keys))
		return -1;
	if (json_object_object_get_ex(o, "path", &v) &&
	    get_str(x, "control.path", v, c->ctl_path, sizeof(c->ctl_path)))
		return -1;
	if (c->ctl_path[0] != '/')
		return bad(x, "control.path", "\"%s\" is not an absolute path", c->ctl_path);
	if (json_object_object_get_ex(o, "mode", &v) &&
	    get_mode(x, "control.mode", v, &c->ctl_mode))
		return -1;
	if (json_object_object_get_ex(o, "allow_uids", &v) &&
	    get_ids(x, "control.allow_uids", v, c->allow_uids, &c->nallow_uids))
		return -1;
	if (json_object_object_get_ex(o, "allow_gids", &v) &&
	    get_ids(x, "control.allow_gids", v, c->allow_gids, &c->nallow_gids))
		return -1;
	return 0;
}

static int parse_metrics(struct cx *x, struct json_object *o, struct ag_config *c)
{
	struct json_object *v;
	char *colon;
	__u32 port;

	if (want_type(x, "metrics", o, json_type_object, "an object") ||
	    check_keys(x, "metrics", o, met_keys))
		return -1;
	if (json_object_object_get_ex(o, "address", &v) &&
	    get_str(x, "metrics.address", v, c->metrics_addr, sizeof(c->metrics_addr)))
		return -1;
	colon = strrchr(c->metrics_addr, ':');
	if (!colon || colon == c->metrics_addr || xp_parse_u32(colon + 1, 1, 65535, &port))
		return bad(x, "metrics.address", "\"%s\": expected HOST:PORT, e.g. 127.0.0.1:9469",
			   c->metrics_addr);
	return 0;
}

static int parse_dp(struct cx *x, struct json_object *o, struct ag_config *c)
{
	struct json_object *v;

	if (want_type(x, "device_plugin", o, json_type_object, "an object") ||
	    check_keys(x, "device_plugin", o, dp_keys))
		return -1;
	if (json_object_object_get_ex(o, "dir", &v)) {
		if (want_type(x, "device_plugin.dir", v, json_type_string, "a string"))
			return -1;
		if (json_object_get_string_len(v) >= (int)sizeof(c->dp_dir))
			return bad(
				x, "device_plugin.dir",
				"longer than %zu bytes: DIR/NETDEV/afxdp.sock must fit a Unix socket's %zu",
				sizeof(c->dp_dir) - 1, AG_SUN_PATH - 1);
		if (get_str(x, "device_plugin.dir", v, c->dp_dir, sizeof(c->dp_dir)))
			return -1;
	}
	if (c->dp_dir[0] != '/')
		return bad(x, "device_plugin.dir", "\"%s\" is not an absolute path", c->dp_dir);
	if (json_object_object_get_ex(o, "mode", &v) &&
	    get_mode(x, "device_plugin.mode", v, &c->dp_mode))
		return -1;
	if (json_object_object_get_ex(o, "idle_timeout", &v) &&
	    get_seconds(x, "device_plugin.idle_timeout", v, 0.05, 3600, &c->dp_idle))
		return -1;
	if (json_object_object_get_ex(o, "max_connections", &v) &&
	    get_u32(x, "device_plugin.max_connections", v, 1, 4096, &c->dp_max_conns))
		return -1;
	return 0;
}

static void defaults(struct ag_config *c)
{
	snprintf(c->ctl_path, sizeof(c->ctl_path), "/run/xpile/agent.sock");
	c->ctl_mode = 0600;
	snprintf(c->metrics_addr, sizeof(c->metrics_addr), "127.0.0.1:9469");
	snprintf(c->dp_dir, sizeof(c->dp_dir), "/tmp/afxdp_dp");
	c->dp_mode = 0660;
	c->dp_idle = 10;
	c->dp_max_conns = 256;
}

static int read_file(struct cx *x, const char *path, char **out)
{
	FILE *f = fopen(path, "re");
	size_t n = 0;
	char *buf;

	if (!f)
		return bad(x, "", "cannot open: %s", strerror(errno));
	buf = malloc(CFG_MAX_BYTES + 1);
	if (buf)
		n = fread(buf, 1, CFG_MAX_BYTES + 1, f);
	if (!buf || ferror(f)) {
		int e = buf ? errno : ENOMEM;

		(void)fclose(f); /* read only */
		free(buf);
		return bad(x, "", "cannot read: %s", strerror(e));
	}
	(void)fclose(f); /* read only */
	if (n > CFG_MAX_BYTES) {
		free(buf);
		return bad(x, "", "larger than %d bytes; a config is smaller", CFG_MAX_BYTES);
	}
	buf[n] = 0;
	if (strlen(buf) != n) {
		size_t at = strlen(buf);

		free(buf);
		return bad(x, "", "holds a NUL byte at offset %zu; a config is JSON text", at);
	}
	*out = buf;
	return 0;
}

/* json-c reports an offset; people read lines. */
static int syntax_error(struct cx *x, const char *text, size_t off, const char *why)
{
	unsigned int line = 1, col = 1;

	for (size_t i = 0; i < off && text[i]; i++, col++)
		if (text[i] == '\n') {
			line++;
			col = 0;
		}
	return bad(x, "", "line %u column %u: JSON syntax: %s", line, col, why);
}

static struct json_object *parse_json(struct cx *x, const char *text)
{
	struct json_tokener *tok = json_tokener_new();
	struct json_object *root;
	enum json_tokener_error e;
	size_t end;

	if (!tok || !text) {
		if (tok)
			json_tokener_free(tok);
		bad(x, "", "out of memory");
		return NULL;
	}
	if (!text[strspn(text, " \t\r\n")]) {
		json_tokener_free(tok);
		bad(x, "", "empty; a config is one JSON object, e.g. {\"interfaces\": [...]}");
		return NULL;
	}
	json_tokener_set_flags(tok, JSON_TOKENER_STRICT);
	root = json_tokener_parse_ex(tok, text, (int)strlen(text) + 1);
	e = json_tokener_get_error(tok);
	end = json_tokener_get_parse_end(tok);
	if (!root || e != json_tokener_success) {
		syntax_error(x, text, end,
			     e == json_tokener_success ? "empty document" :
							 json_tokener_error_desc(e));
		json_object_put(root);
		root = NULL;
	} else if (text[end - 1] != 0 && text[end + strspn(text + end, " \t\r\n")]) {
		syntax_error(x, text, end, "text after the document");
		json_object_put(root);
		root = NULL;
	}
	json_tokener_free(tok);
	return root;
}

int ag_config_load(const char *path, struct ag_config *c, char *err, size_t len)
{
	struct cx x = { .file = path, .err = err, .len = len };
	struct json_object *root = NULL, *v;
	char *text = NULL;
	int rc = -1;

	memset(c, 0, sizeof(*c));
	defaults(c);
	snprintf(c->file, sizeof(c->file), "%s", path);
	if (read_file(&x, path, &text))
		return -1;
	root = parse_json(&x, text);
	if (!root)
		goto out;
	if (want_type(&x, "", root, json_type_object, "a JSON object at the top") ||
	    check_keys(&x, "", root, top_keys))
		goto out;
	if (!json_object_object_get_ex(root, "interfaces", &v)) {
		bad(&x, "interfaces", "missing; list the interfaces the agent manages");
		goto out;
	}
	if (want_type(&x, "interfaces", v, json_type_array, "an array of interfaces"))
		goto out;
	if (json_object_array_length(v) > AG_MAX_IFACES) {
		bad(&x, "interfaces", "%zu interfaces: at most %d", json_object_array_length(v),
		    AG_MAX_IFACES);
		goto out;
	}
	for (size_t i = 0; i < json_object_array_length(v); i++) {
		char sub[64];

		snprintf(sub, sizeof(sub), "interfaces[%zu]", i);
		if (parse_iface(&x, sub, json_object_array_get_idx(v, i), &c->ifaces[i]))
			goto out;
		c->nifaces++;
		for (size_t j = 0; j < i; j++)
			if (!strcmp(c->ifaces[j].name, c->ifaces[i].name)) {
				snprintf(sub, sizeof(sub), "interfaces[%zu].name", i);
				bad(&x, sub, "%s is listed already as interfaces[%zu]",
				    c->ifaces[i].name, j);
				goto out;
			}
	}
	if (json_object_object_get_ex(root, "control", &v) && parse_control(&x, v, c))
		goto out;
	if (json_object_object_get_ex(root, "metrics", &v) && parse_metrics(&x, v, c))
		goto out;
	if (json_object_object_get_ex(root, "device_plugin", &v) && parse_dp(&x, v, c))
		goto out;
	rc = 0;
out:
	json_object_put(root);
	free(text);
	if (rc)
		ag_config_free(c);
	return rc;
}

void ag_config_free(struct ag_config *c)
{
	for (__u32 i = 0; i < AG_MAX_IFACES; i++) {
		free(c->ifaces[i].rules);
		c->ifaces[i].rules = NULL;
		c->ifaces[i].nrules = 0;
	}
	c->nifaces = 0;
}
