// SPDX-License-Identifier: BSD-3-Clause
/*
 * The agent's config: one JSON document (what a ConfigMap holds), parsed by jansson.
 * Every error is one line naming the file, the field's path (interfaces[1].rules[3])
 * and what is wrong; unknown fields are errors too, so a typo never silently means
 * "the default".
 */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <grp.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include <jansson.h>

#include "agent.h"
#include "config.h"
#include "dupkeys.h"
#include "lent.h"
#include "xpile/text.h"
#include "xpile/xsk.h"

#define CFG_MAX_BYTES (1 << 20)

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

const char *ag_json_type(const json_t *o)
{
	switch (json_typeof(o)) {
	case JSON_OBJECT:
		return "object";
	case JSON_ARRAY:
		return "array";
	case JSON_STRING:
		return "string";
	case JSON_INTEGER:
		return "int";
	case JSON_REAL:
		return "double";
	case JSON_TRUE:
	case JSON_FALSE:
		return "boolean";
	default:
		return "null";
	}
}

/* Every key of @o is one of @keys (NULL-terminated). */
static int check_keys(struct cx *x, const char *path, json_t *o, const char *const *keys)
{
	const char *k;
	json_t *v;

	json_object_foreach(o, k, v)
	{
		char sub[256], list[256] = "";
		bool known = false;

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

static int want_type(struct cx *x, const char *path, json_t *o, json_type t, const char *what)
{
	if (json_typeof(o) == t)
		return 0;
	return bad(x, path, "expected %s, got %s", what, ag_json_type(o));
}

/* @o is an object whose keys are all of @keys. */
static int want_object(struct cx *x, const char *path, json_t *o, const char *const *keys)
{
	if (want_type(x, path, o, JSON_OBJECT, "an object") || check_keys(x, path, o, keys))
		return -1;
	return 0;
}

static int get_str(struct cx *x, const char *path, json_t *o, char *buf, size_t len)
{
	const char *s;

	if (want_type(x, path, o, JSON_STRING, "a string"))
		return -1;
	s = json_string_value(o);
	if (!*s)
		return bad(x, path, "empty string");
	if (strlen(s) >= len)
		return bad(x, path, "longer than %zu bytes", len - 1);
	if (json_string_length(o) != strlen(s))
		return bad(x, path, "holds a NUL byte");
	memcpy(buf, s, strlen(s) + 1);
	return 0;
}

static int get_u32(struct cx *x, const char *path, json_t *o, __u32 min, __u32 max, __u32 *out)
{
	int64_t v;

	if (want_type(x, path, o, JSON_INTEGER, "an integer"))
		return -1;
	v = json_integer_value(o);
	if (v < min || v > max)
		return bad(x, path, "%lld out of range: expected %u..%u", (long long)v, min, max);
	*out = (__u32)v;
	return 0;
}

static int get_seconds(struct cx *x, const char *path, json_t *o, double min, double max,
		       double *out)
{
	double v;

	if (!json_is_integer(o) && !json_is_real(o))
		return bad(x, path, "expected a number of seconds, got %s", ag_json_type(o));
	v = json_number_value(o);
	if (!(v >= min && v <= max))
		return bad(x, path, "%g out of range: expected %g..%g seconds", v, min, max);
	*out = v;
	return 0;
}

/* A file mode as chmod writes it: "0600", "660". */
static int get_mode(struct cx *x, const char *path, json_t *o, mode_t *out)
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

/* A group: its gid, or a name of the agent's /etc/group (an image may have none). */
static int get_group(struct cx *x, const char *path, json_t *o, gid_t *out)
{
	char name[64], buf[4096];
	struct group gr, *g = NULL;
	__u32 id = 0;

	if (json_is_integer(o)) {
		if (get_u32(x, path, o, 0, 0xfffffffe, &id))
			return -1;
		*out = (gid_t)id;
		return 0;
	}
	if (!json_is_string(o))
		return bad(x, path, "expected a gid or a group name, got %s", ag_json_type(o));
	if (get_str(x, path, o, name, sizeof(name)))
		return -1;
	if (getgrnam_r(name, &gr, buf, sizeof(buf), &g) || !g)
		return bad(x, path, "no group \"%s\" in this system's group database: give its gid",
			   name);
	*out = g->gr_gid;
	return 0;
}

static int get_ids(struct cx *x, const char *path, json_t *o, __u32 *ids, __u32 *n)
{
	size_t len;

	if (want_type(x, path, o, JSON_ARRAY, "an array of ids"))
		return -1;
	len = json_array_size(o);
	if (len > AG_MAX_IDS)
		return bad(x, path, "%zu ids: at most %d", len, AG_MAX_IDS);
	for (size_t i = 0; i < len; i++) {
		char sub[256];

		snprintf(sub, sizeof(sub), "%s[%zu]", path, i);
		if (get_u32(x, sub, json_array_get(o, i), 0, 0xfffffffe, &ids[i]))
			return -1;
	}
	*n = (__u32)len;
	return 0;
}

static int parse_rule(struct cx *x, const char *path, json_t *o, struct xp_rule *r)
{
	char text[XP_RULE_TEXT_MAX + 1], why[256];

	if (get_str(x, path, o, text, sizeof(text)))
		return -1;
	if (xp_rule_parse_str(text, r, why, sizeof(why)))
		return bad(x, path, "%s", why);
	return 0;
}

static int parse_action(struct cx *x, const char *path, json_t *o, struct xp_action *a)
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

static const char *const iface_keys[] = { "name",      "queues",     "mode",	   "default",
					  "rules",     "hosts",	     "on_replace", "pool",
					  "numa_node", "pinned_map", NULL };

static int parse_iface_kubelet(struct cx *x, const char *path, json_t *o, struct ag_iface_cfg *i);

static int parse_iface(struct cx *x, const char *path, json_t *o, struct ag_iface_cfg *i)
{
	json_t *v;
	char sub[256], mode[16];

	if (want_object(x, path, o, iface_keys))
		return -1;
	snprintf(sub, sizeof(sub), "%s.name", path);
	if (!(v = json_object_get(o, "name")))
		return bad(x, sub, "missing; every interface needs its name");
	if (get_str(x, sub, v, i->name, sizeof(i->name)))
		return -1;
	if (strchr(i->name, '/') || strchr(i->name, ' '))
		return bad(x, sub, "\"%s\" is not an interface name", i->name);
	i->mode = XP_STEER_MODE_AUTO;
	if ((v = json_object_get(o, "mode"))) {
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
	i->reattach = true;
	if ((v = json_object_get(o, "on_replace"))) {
		snprintf(sub, sizeof(sub), "%s.on_replace", path);
		if (get_str(x, sub, v, mode, sizeof(mode)))
			return -1;
		if (strcmp(mode, "reattach") && strcmp(mode, "report"))
			return bad(x, sub, "\"%s\": expected reattach or report", mode);
		i->reattach = !strcmp(mode, "reattach");
	}
	if ((v = json_object_get(o, "queues"))) {
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
	if ((v = json_object_get(o, "default"))) {
		snprintf(sub, sizeof(sub), "%s.default", path);
		if (parse_action(x, sub, v, &i->dflt))
			return -1;
	}
	if ((v = json_object_get(o, "hosts"))) {
		snprintf(sub, sizeof(sub), "%s.hosts", path);
		if (want_type(x, sub, v, JSON_ARRAY, "an array of host names"))
			return -1;
		if (json_array_size(v) > AG_MAX_HOSTS)
			return bad(x, sub, "%zu hosts: at most %d", json_array_size(v),
				   AG_MAX_HOSTS);
		for (size_t k = 0; k < json_array_size(v); k++) {
			char *h = i->hosts[k];

			snprintf(sub, sizeof(sub), "%s.hosts[%zu]", path, k);
			if (get_str(x, sub, json_array_get(v, k), h, AG_HOST_MAX - 9))
				return -1;
			if (strpbrk(h, ", \t\r\n"))
				return bad(x, sub, "\"%s\" is not a host name", h);
			i->nhosts++;
		}
	}
	if ((v = json_object_get(o, "rules"))) {
		size_t n;

		snprintf(sub, sizeof(sub), "%s.rules", path);
		if (want_type(x, sub, v, JSON_ARRAY, "an array of rule strings"))
			return -1;
		n = json_array_size(v);
		if (n > XP_STEER_MAX_RULES)
			return bad(x, sub, "%zu rules: a set holds at most %d", n,
				   XP_STEER_MAX_RULES);
		i->rules = calloc(n ? n : 1, sizeof(*i->rules));
		if (!i->rules)
			return bad(x, sub, "out of memory");
		for (size_t k = 0; k < n; k++) {
			snprintf(sub, sizeof(sub), "%s.rules[%zu]", path, k);
			if (parse_rule(x, sub, json_array_get(v, k), &i->rules[k]))
				return -1;
			i->nrules++;
		}
	}
	return parse_iface_kubelet(x, path, o, i);
}

static const char *const top_keys[] = { "interfaces",	 "control", "metrics",
					"device_plugin", "kubelet", NULL };
static const char *const ctl_keys[] = { "path", "mode", "allow_uids", "allow_gids", NULL };
static const char *const met_keys[] = { "address", "xsk_stats", NULL };
static const char *const dp_keys[] = { "dir", "mode", "group", "idle_timeout", "max_connections",
				       NULL };

static int parse_control(struct cx *x, json_t *o, struct ag_config *c)
{
	json_t *v;

	if (want_object(x, "control", o, ctl_keys))
		return -1;
	if ((v = json_object_get(o, "path")) &&
	    get_str(x, "control.path", v, c->ctl_path, sizeof(c->ctl_path)))
		return -1;
	if (c->ctl_path[0] != '/')
		return bad(x, "control.path", "\"%s\" is not an absolute path", c->ctl_path);
	if ((v = json_object_get(o, "mode")) && get_mode(x, "control.mode", v, &c->ctl_mode))
		return -1;
	if ((v = json_object_get(o, "allow_uids")) &&
	    get_ids(x, "control.allow_uids", v, c->allow_uids, &c->nallow_uids))
		return -1;
	if ((v = json_object_get(o, "allow_gids")) &&
	    get_ids(x, "control.allow_gids", v, c->allow_gids, &c->nallow_gids))
		return -1;
	return 0;
}

static int parse_metrics(struct cx *x, json_t *o, struct ag_config *c)
{
	json_t *v;
	char *colon;
	__u32 port;

	if (want_object(x, "metrics", o, met_keys))
		return -1;
	if ((v = json_object_get(o, "address")) &&
	    get_str(x, "metrics.address", v, c->metrics_addr, sizeof(c->metrics_addr)))
		return -1;
	if ((v = json_object_get(o, "xsk_stats"))) {
		char s[16];

		if (get_str(x, "metrics.xsk_stats", v, s, sizeof(s)))
			return -1;
		if (!strcmp(s, "diag"))
			c->xsk_stats = AG_XSK_DIAG;
		else if (!strcmp(s, "pidfd"))
			c->xsk_stats = AG_XSK_PIDFD;
		else if (!strcmp(s, "off"))
			c->xsk_stats = AG_XSK_OFF;
		else
			return bad(x, "metrics.xsk_stats", "\"%s\": expected diag, pidfd or off",
				   s);
	}
	colon = strrchr(c->metrics_addr, ':');
	if (!colon || colon == c->metrics_addr || xp_parse_u32(colon + 1, 1, 65535, &port))
		return bad(x, "metrics.address", "\"%s\": expected HOST:PORT, e.g. 127.0.0.1:9469",
			   c->metrics_addr);
	return 0;
}

static int parse_dp(struct cx *x, json_t *o, struct ag_config *c)
{
	json_t *v;

	if (want_object(x, "device_plugin", o, dp_keys))
		return -1;
	if ((v = json_object_get(o, "dir"))) {
		if (want_type(x, "device_plugin.dir", v, JSON_STRING, "a string"))
			return -1;
		if (json_string_length(v) >= sizeof(c->dp_dir))
			return bad(
				x, "device_plugin.dir",
				"longer than %zu bytes: DIR/NETDEV/afxdp.sock must fit a Unix socket's %zu",
				sizeof(c->dp_dir) - 1, AG_SUN_PATH - 1);
		if (get_str(x, "device_plugin.dir", v, c->dp_dir, sizeof(c->dp_dir)))
			return -1;
	}
	if (c->dp_dir[0] != '/')
		return bad(x, "device_plugin.dir", "\"%s\" is not an absolute path", c->dp_dir);
	if ((v = json_object_get(o, "mode")) && get_mode(x, "device_plugin.mode", v, &c->dp_mode))
		return -1;
	if ((v = json_object_get(o, "group")) && get_group(x, "device_plugin.group", v, &c->dp_gid))
		return -1;
	if ((v = json_object_get(o, "idle_timeout")) &&
	    get_seconds(x, "device_plugin.idle_timeout", v, 0.05, 3600, &c->dp_idle))
		return -1;
	if ((v = json_object_get(o, "max_connections")) &&
	    get_u32(x, "device_plugin.max_connections", v, 1, 4096, &c->dp_max_conns))
		return -1;
	return 0;
}

/* ---- the kubelet side (kubelet.c): the section, and each interface's pool ---- */

static const char *const kube_keys[] = { "dir", "resource_prefix", "pod_resources", NULL };

/* A pool or prefix as the kubelet takes it in a resource name: lower-case letters,
 * digits, '-' and '.', starting and ending with a letter or digit. */
static bool dns_name(const char *s)
{
	size_t n = strlen(s);

	return n && strspn(s, "abcdefghijklmnopqrstuvwxyz0123456789-.") == n &&
	       isalnum((unsigned char)s[0]) && isalnum((unsigned char)s[n - 1]);
}

static int parse_iface_kubelet(struct cx *x, const char *path, json_t *o, struct ag_iface_cfg *i)
{
	json_t *v;
	char sub[256];

	snprintf(i->pool, sizeof(i->pool), "xsk");
	i->numa_node = AG_NUMA_SYSFS;
	if ((v = json_object_get(o, "pool"))) {
		snprintf(sub, sizeof(sub), "%s.pool", path);
		if (get_str(x, sub, v, i->pool, sizeof(i->pool)))
			return -1;
		if (!dns_name(i->pool) || strchr(i->pool, '.'))
			return bad(
				x, sub,
				"\"%s\" is not a pool name: lower-case letters, digits and '-' (the resource is PREFIX/POOL)",
				i->pool);
	}
	if ((v = json_object_get(o, "numa_node"))) {
		__u32 n = 0;

		snprintf(sub, sizeof(sub), "%s.numa_node", path);
		if (get_u32(x, sub, v, 0, 1023, &n))
			return -1;
		i->numa_node = (int)n;
	}
	if ((v = json_object_get(o, "pinned_map"))) {
		snprintf(sub, sizeof(sub), "%s.pinned_map", path);
		if (!json_is_boolean(v))
			return bad(x, sub, "expected true or false, got %s", ag_json_type(v));
		i->pinned_map = json_is_true(v);
	}
	return 0;
}

static int parse_kubelet(struct cx *x, json_t *o, struct ag_config *c)
{
	json_t *v;

	if (want_object(x, "kubelet", o, kube_keys))
		return -1;
	c->kubelet.on = true;
	snprintf(c->kubelet.dir, sizeof(c->kubelet.dir), "/var/lib/kubelet/device-plugins");
	snprintf(c->kubelet.prefix, sizeof(c->kubelet.prefix), "xpile.io");
	snprintf(c->kubelet.pod_resources, sizeof(c->kubelet.pod_resources),
		 "/var/lib/kubelet/pod-resources/kubelet.sock");
	if ((v = json_object_get(o, "dir")) &&
	    get_str(x, "kubelet.dir", v, c->kubelet.dir, sizeof(c->kubelet.dir)))
		return -1;
	if (c->kubelet.dir[0] != '/')
		return bad(x, "kubelet.dir", "\"%s\" is not an absolute path", c->kubelet.dir);
	if ((v = json_object_get(o, "resource_prefix"))) {
		if (get_str(x, "kubelet.resource_prefix", v, c->kubelet.prefix,
			    sizeof(c->kubelet.prefix)))
			return -1;
		if (!dns_name(c->kubelet.prefix) || !strchr(c->kubelet.prefix, '.'))
			return bad(
				x, "kubelet.resource_prefix",
				"\"%s\" is not a domain name like \"xpile.io\" (extended resources need one)",
				c->kubelet.prefix);
	}
	if ((v = json_object_get(o, "pod_resources")) &&
	    get_str(x, "kubelet.pod_resources", v, c->kubelet.pod_resources,
		    sizeof(c->kubelet.pod_resources)))
		return -1;
	if (c->kubelet.pod_resources[0] != '/')
		return bad(x, "kubelet.pod_resources", "\"%s\" is not an absolute path",
			   c->kubelet.pod_resources);
	return 0;
}

static void defaults(struct ag_config *c)
{
	snprintf(c->ctl_path, sizeof(c->ctl_path), "/run/xpile/agent.sock");
	c->ctl_mode = 0600;
	snprintf(c->metrics_addr, sizeof(c->metrics_addr), "127.0.0.1:9469");
	snprintf(c->dp_dir, sizeof(c->dp_dir), "/tmp/afxdp_dp");
	c->dp_mode = 0660;
	c->dp_gid = (gid_t)-1;
	c->dp_idle = 10;
	c->dp_max_conns = 256;
}

static const char *file_kind(mode_t m)
{
	return S_ISFIFO(m) ? "a FIFO" :
	       S_ISCHR(m)  ? "a character device" :
	       S_ISBLK(m)  ? "a block device" :
	       S_ISDIR(m)  ? "a directory" :
	       S_ISSOCK(m) ? "a socket" :
			     "not a file";
}

/* Only a regular file: opened without blocking (a FIFO would wait for a writer, with
 * the stop signals held for the loop), and read whole, up to the bound. Symbolic links
 * are followed: a ConfigMap's file is one. */
static int read_file(struct cx *x, const char *path, char **out)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
	size_t n = 0;
	struct stat st;
	char *buf;

	if (fd < 0)
		return bad(x, "", "cannot open: %s", strerror(errno));
	if (fstat(fd, &st)) {
		int e = errno;

		close(fd);
		return bad(x, "", "cannot read: %s", strerror(e));
	}
	if (!S_ISREG(st.st_mode)) {
		close(fd);
		return bad(x, "", "%s, not a regular file: --config takes the JSON file itself",
			   file_kind(st.st_mode));
	}
	buf = malloc(CFG_MAX_BYTES + 1);
	while (buf && n <= CFG_MAX_BYTES) {
		ssize_t r = read(fd, buf + n, CFG_MAX_BYTES + 1 - n);

		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			int e = errno;

			close(fd);
			free(buf);
			return bad(x, "", "cannot read: %s", strerror(e));
		}
		if (!r)
			break;
		n += (size_t)r;
	}
	close(fd);
	if (!buf)
		return bad(x, "", "cannot read: %s", strerror(ENOMEM));
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

/* jansson refuses a key given twice in one object (json-c, like many, keeps the
 * last: half a config run silently); dupkeys.c finds the field's path. */
static json_t *parse_json(struct cx *x, const char *text)
{
	json_error_t e;
	json_t *root;

	if (!text[strspn(text, " \t\r\n")]) {
		bad(x, "", "empty; a config is one JSON object, e.g. {\"interfaces\": [...]}");
		return NULL;
	}
	root = json_loads(text, JSON_REJECT_DUPLICATES | JSON_ALLOW_NUL, &e);
	if (root)
		return root;
	if (json_error_code(&e) == json_error_duplicate_key) {
		struct ag_dupkey d;
		char where[512];

		if (!ag_json_dupkey(text, &e, &d)) {
			bad(x, "", "line %d column %d: a key given twice in one object; keep one",
			    e.line, e.column);
		} else {
			snprintf(where, sizeof(where), "%s%s%s", d.path, d.path[0] ? "." : "",
				 d.key);
			bad(x, where,
			    "key \"%s\" given twice in one object (again at line %d column %d); keep one",
			    d.key, e.line, e.column);
		}
		return NULL;
	}
	bad(x, "", "line %d column %d: JSON syntax: %s", e.line, e.column, e.text);
	return NULL;
}

int ag_config_load(const char *path, struct ag_config *c, char *err, size_t len)
{
	struct cx x = { .file = path, .err = err, .len = len };
	json_t *root = NULL, *v;
	char *text = NULL;
	int rc = -1;

	memset(c, 0, sizeof(*c));
	defaults(c);
	snprintf(c->file, sizeof(c->file), "%s", path);
	if (read_file(&x, path, &text) || !text)
		return -1;
	root = parse_json(&x, text);
	if (!root)
		goto out;
	if (want_type(&x, "", root, JSON_OBJECT, "a JSON object at the top") ||
	    check_keys(&x, "", root, top_keys))
		goto out;
	if (!(v = json_object_get(root, "interfaces"))) {
		bad(&x, "interfaces", "missing; list the interfaces the agent manages");
		goto out;
	}
	if (want_type(&x, "interfaces", v, JSON_ARRAY, "an array of interfaces"))
		goto out;
	if (json_array_size(v) > AG_MAX_IFACES) {
		bad(&x, "interfaces", "%zu interfaces: at most %d", json_array_size(v),
		    AG_MAX_IFACES);
		goto out;
	}
	for (size_t i = 0; i < json_array_size(v); i++) {
		char sub[64];

		snprintf(sub, sizeof(sub), "interfaces[%zu]", i);
		if (parse_iface(&x, sub, json_array_get(v, i), &c->ifaces[i]))
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
	if ((v = json_object_get(root, "control")) && parse_control(&x, v, c))
		goto out;
	if ((v = json_object_get(root, "metrics")) && parse_metrics(&x, v, c))
		goto out;
	if ((v = json_object_get(root, "device_plugin")) && parse_dp(&x, v, c))
		goto out;
	if ((v = json_object_get(root, "kubelet")) && parse_kubelet(&x, v, c))
		goto out;
	/* Here, once device_plugin.dir is known: an interface lent to a pod (lend.c) is in
	 * the pod's namespace, not this one. */
	for (__u32 i = 0; i < c->nifaces; i++)
		if (!if_nametoindex(c->ifaces[i].name) &&
		    !ag_lent_recorded(c->dp_dir, c->ifaces[i].name)) {
			char sub[64];

			snprintf(sub, sizeof(sub), "interfaces[%u].name", i);
			bad(&x, sub, "no interface %s in this network namespace (see `ip link`)",
			    c->ifaces[i].name);
			goto out;
		}
	rc = 0;
out:
	json_decref(root);
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
