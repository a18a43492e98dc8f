// SPDX-License-Identifier: BSD-3-Clause
/*
 * xpile-cni: a CNI plugin (spec 1.0: ADD, DEL, CHECK, VERSION) for pods that get AF_XDP
 * queues from xpile-agent. Two modes:
 *
 *   netdev  ADD moves the netdev into the pod's namespace under its own name (DPDK and
 *           the agent's socket path know it by that name; CNI_IFNAME is not applied)
 *           and tells the agent it is lent, so the agent keeps serving it there; DEL
 *           moves it back and the agent takes it back; CHECK verifies it is in the pod,
 *           up, with the agent's program attached and the queue's slot there.
 *   queue   the netdev stays on the host: the pod's engine gets its queues through
 *           the agent's socket (/xsk_socket). ADD moves nothing; it checks the agent
 *           serves the netdev. CHECK verifies program and slot on the host.
 *
 * DEL succeeds however often it runs (the spec's rule), whatever is left: no
 * namespace, the netdev already back, the agent away.
 *
 * The netdev: "netdev" in the config, else the device ID the device plugin allocated
 * ("deviceID", as Multus passes it, or runtimeConfig.deviceID): eth1:3 names queue 3 of
 * eth1. Config:
 *   {"cniVersion": "1.0.0", "name": "xsk", "type": "xpile-cni", "mode": "netdev",
 *    "agent": "/run/xpile/agent.sock", "deviceID": "eth1:0"}
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <jansson.h>

#include "cni.h"
#include "say.h"

#define CNI_VERSION "1.0.0"
#define STDIN_MAX (1 << 20)

static const char *const supported[] = { "0.3.0", "0.3.1", "0.4.0", "1.0.0", NULL };

struct conf {
	const char *version;
	const char *name;
	bool queue_mode;
	char netdev[IF_NAMESIZE];
	__u32 queue;
	bool has_queue;
	const char *agent;
	json_t *prev; /* prevResult */
};

struct env {
	const char *command, *container, *netns, *ifname;
	bool ignore_unknown;
};

/* The spec's error object on stdout, exit 1. @details may be NULL. */
__attribute__((format(printf, 3, 4), noreturn)) static void fail(int code, const char *version,
								 const char *fmt, ...)
{
	char msg[1024];
	va_list ap;
	json_t *o;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	o = json_pack("{s:s, s:i, s:s}", "cniVersion", version ? version : CNI_VERSION, "code",
		      code, "msg", msg);
	json_dumpf(o, stdout, JSON_COMPACT);
	fputc('\n', stdout);
	ut_say(1, "%s", msg);
	json_decref(o);
	exit(1);
}

static const char *env_need(const char *name, const char *cmd)
{
	const char *v = getenv(name);

	if (!v || !*v)
		fail(CNI_ERR_ENV, NULL, "%s: %s is not set (the runtime sets it)", cmd, name);
	return v;
}

/* CNI_ARGS: K=V;K=V. The runtime's own keys are fine; another key is an error unless
 * IgnoreUnknown=1 (the kubelet always sets it). */
static void parse_args(struct env *e)
{
	static const char *const known[] = { "IgnoreUnknown", "K8S_POD_NAMESPACE",
					     "K8S_POD_NAME",  "K8S_POD_INFRA_CONTAINER_ID",
					     "K8S_POD_UID",   NULL };
	const char *args = getenv("CNI_ARGS");
	char buf[4096], *save, *kv, *bad = NULL;

	if (!args || !*args)
		return;
	snprintf(buf, sizeof(buf), "%s", args);
	for (kv = strtok_r(buf, ";", &save); kv; kv = strtok_r(NULL, ";", &save)) {
		char *eq = strchr(kv, '=');
		bool ok = false;

		if (!eq)
			fail(CNI_ERR_ENV, NULL, "CNI_ARGS: \"%s\" is not KEY=VALUE", kv);
		*eq = 0;
		if (!strcmp(kv, "IgnoreUnknown"))
			e->ignore_unknown = !strcmp(eq + 1, "1") || !strcasecmp(eq + 1, "true");
		for (int k = 0; known[k]; k++)
			ok |= !strcmp(kv, known[k]);
		if (!ok && !bad)
			bad = kv;
	}
	if (bad && !e->ignore_unknown)
		fail(CNI_ERR_ENV, NULL, "CNI_ARGS: unknown key %s (IgnoreUnknown=1 to pass it)",
		     bad);
}

static bool version_ok(const char *v)
{
	for (int k = 0; supported[k]; k++)
		if (!strcmp(v, supported[k]))
			return true;
	return false;
}

/* "eth1:3" -> eth1, queue 3; "eth1" -> eth1. */
static void parse_device(struct conf *c, const char *id, const char *field)
{
	const char *colon = strrchr(id, ':');
	size_t n = colon ? (size_t)(colon - id) : strlen(id);
	char *end;

	if (!n || n >= IF_NAMESIZE || memchr(id, '/', n))
		fail(CNI_ERR_CONFIG, c->version, "%s: \"%s\" is not NETDEV or NETDEV:QUEUE", field,
		     id);
	memcpy(c->netdev, id, n);
	c->netdev[n] = 0;
	if (colon) {
		unsigned long q = strtoul(colon + 1, &end, 10);

		if (!colon[1] || *end || q > 255)
			fail(CNI_ERR_CONFIG, c->version, "%s: queue in \"%s\" is not 0..255", field,
			     id);
		c->queue = (__u32)q;
		c->has_queue = true;
	}
}

static json_t *read_conf(struct conf *c, const char *cmd)
{
	static char buf[STDIN_MAX + 1];
	size_t n = fread(buf, 1, STDIN_MAX + 1, stdin);
	json_error_t je;
	json_t *o, *v, *rc;
	const char *s;

	if (n > STDIN_MAX)
		fail(CNI_ERR_DECODE, NULL, "%s: the network config on stdin is over 1 MiB", cmd);
	buf[n] = 0;
	o = json_loads(buf, JSON_REJECT_DUPLICATES, &je);
	if (!o || !json_is_object(o))
		fail(CNI_ERR_DECODE, NULL,
		     "%s: the network config is not a JSON object (line %d: %s)", cmd, je.line,
		     o ? "not an object" : je.text);
	c->version = json_string_value(json_object_get(o, "cniVersion"));
	if (!c->version)
		fail(CNI_ERR_CONFIG, NULL, "%s: cniVersion missing", cmd);
	if (!version_ok(c->version))
		fail(CNI_ERR_VERSION, NULL,
		     "%s: cniVersion %s not supported: 0.3.0, 0.3.1, 0.4.0 or 1.0.0", cmd,
		     c->version);
	c->name = json_string_value(json_object_get(o, "name"));
	if (!c->name)
		fail(CNI_ERR_CONFIG, c->version, "%s: \"name\" missing", cmd);
	if (json_object_get(o, "ipam"))
		fail(CNI_ERR_CONFIG, c->version,
		     "%s: \"ipam\": an AF_XDP netdev takes no address here; leave it out", cmd);
	s = json_string_value(json_object_get(o, "mode"));
	if (s && strcmp(s, "netdev") && strcmp(s, "queue"))
		fail(CNI_ERR_CONFIG, c->version, "%s: mode \"%s\": netdev or queue", cmd, s);
	c->queue_mode = s && !strcmp(s, "queue");
	c->agent = json_string_value(json_object_get(o, "agent"));
	if (!c->agent)
		c->agent = "/run/xpile/agent.sock";
	rc = json_object_get(o, "runtimeConfig");
	if ((v = json_object_get(o, "netdev")) && json_is_string(v))
		parse_device(c, json_string_value(v), "netdev");
	else if ((v = json_object_get(o, "deviceID")) && json_is_string(v))
		parse_device(c, json_string_value(v), "deviceID");
	else if (rc && (v = json_object_get(rc, "deviceID")) && json_is_string(v))
		parse_device(c, json_string_value(v), "runtimeConfig.deviceID");
	else
		fail(CNI_ERR_CONFIG, c->version,
		     "%s: no netdev: give \"netdev\", or \"deviceID\" (Multus passes the device plugin's, e.g. eth1:0)",
		     cmd);
	c->prev = json_object_get(o, "prevResult");
	return o;
}

static int open_netns(const char *path, const char *cmd, const char *version, bool must)
{
	int fd = path ? open(path, O_RDONLY | O_CLOEXEC) : -1;

	if (fd < 0 && must)
		fail(CNI_ERR_CONTAINER, version, "%s: cannot open the namespace %s: %s", cmd, path,
		     strerror(errno));
	return fd;
}

static void print_json(json_t *o)
{
	json_dumpf(o, stdout, JSON_COMPACT);
	fputc('\n', stdout);
	json_decref(o);
}

static json_t *result(const struct conf *c, const struct env *e, const struct cni_link *l)
{
	json_t *r = json_pack("{s:s, s:[], s:{}}", "cniVersion", c->version, "ips", "dns");
	json_t *ifs = json_array();

	if (l) {
		char mac[18];

		snprintf(mac, sizeof(mac), "%02x:%02x:%02x:%02x:%02x:%02x", l->mac[0], l->mac[1],
			 l->mac[2], l->mac[3], l->mac[4], l->mac[5]);
		json_array_append_new(ifs, json_pack("{s:s, s:s, s:s}", "name", c->netdev, "mac",
						     mac, "sandbox", e->netns));
	}
	json_object_set_new(r, "interfaces", ifs);
	return r;
}

static void cmd_add(const struct conf *c, const struct env *e)
{
	struct cni_link l;
	char err[1024];
	__u32 prog = 0;
	int ns, rc;

	if (cni_agent_prog_id(c->agent, c->netdev, &prog, err, sizeof(err)))
		fail(CNI_ERR_AGENT, c->version, "ADD %s: %s", c->netdev, err);
	if (c->queue_mode) {
		rc = cni_link_get(-1, c->netdev, &l);
		if (rc)
			fail(CNI_ERR_CONFIG, c->version, "ADD %s: not on this host: %s", c->netdev,
			     strerror(-rc));
		print_json(result(c, e, NULL));
		return;
	}
	ns = open_netns(e->netns, "ADD", c->version, true);
	rc = cni_link_get(-1, c->netdev, &l);
	if (rc == -ENODEV && !cni_link_get(ns, c->netdev, &l)) {
		/* ADD again (a runtime retrying): it is there already. */
		print_json(result(c, e, &l));
		return;
	}
	if (rc)
		fail(CNI_ERR_CONFIG, c->version, "ADD %s: no such netdev on this host: %s",
		     c->netdev, strerror(-rc));
	/* Lent first, so the agent takes the move for what it is (not "interface gone"). */
	if (cni_agent_lend(c->agent, c->netdev, e->netns, e->container, err, sizeof(err)))
		fail(CNI_ERR_AGENT, c->version, "ADD %s: %s", c->netdev, err);
	rc = cni_link_move(-1, c->netdev, ns);
	if (rc) {
		char e2[256];

		cni_agent_reclaim(c->agent, c->netdev, e2, sizeof(e2));
		fail(CNI_ERR_IO, c->version, "ADD %s: cannot move it into %s: %s", c->netdev,
		     e->netns, strerror(-rc));
	}
	rc = cni_link_up(ns, c->netdev);
	if (!rc)
		rc = cni_link_get(ns, c->netdev, &l);
	close(ns);
	if (rc)
		fail(CNI_ERR_IO, c->version, "ADD %s: moved, but cannot bring it up in %s: %s",
		     c->netdev, e->netns, strerror(-rc));
	print_json(result(c, e, &l));
}

/* DEL: whatever is left, put back; success every time. */
static void cmd_del(const struct conf *c, const struct env *e)
{
	struct cni_link l;
	char err[1024];
	int ns = -1, rc;

	if (c->queue_mode)
		return;
	if (e->netns && *e->netns)
		ns = open_netns(e->netns, "DEL", c->version, false);
	if (ns >= 0 && !cni_link_get(ns, c->netdev, &l)) {
		int host = open("/proc/self/ns/net", O_RDONLY | O_CLOEXEC);

		rc = host < 0 ? -errno : cni_link_move(ns, c->netdev, host);
		if (host >= 0)
			close(host);
		if (!rc) /* up again on the host, as it was before ADD */
			rc = cni_link_up(-1, c->netdev);
		if (rc)
			fail(CNI_ERR_IO, c->version, "DEL %s: cannot move it back from %s: %s",
			     c->netdev, e->netns, strerror(-rc));
	}
	if (ns >= 0)
		close(ns);
	/* Back on the host (now, or before): the agent takes it back. It may be away, or
	 * have taken it already: DEL succeeds anyway. */
	if (!cni_link_get(-1, c->netdev, &l) &&
	    cni_agent_reclaim(c->agent, c->netdev, err, sizeof(err)))
		ut_warn("DEL %s: %s", c->netdev, err);
}

static void cmd_check(const struct conf *c, const struct env *e)
{
	struct cni_link l;
	char err[1024];
	__u32 prog = 0;
	int ns = -1, rc;
	bool listed = false;
	json_t *ifs, *v;
	size_t k;

	if (!c->prev)
		fail(CNI_ERR_CONFIG, c->version,
		     "CHECK %s: no prevResult (the runtime passes ADD's)", c->netdev);
	if (!c->queue_mode) {
		ifs = json_object_get(c->prev, "interfaces");
		json_array_foreach(ifs, k, v)
		{
			const char *n = json_string_value(json_object_get(v, "name"));

			listed |= n && !strcmp(n, c->netdev);
		}
		if (!listed)
			fail(CNI_ERR_CHECK, c->version, "CHECK %s: not in prevResult's interfaces",
			     c->netdev);
		ns = open_netns(e->netns, "CHECK", c->version, true);
	}
	rc = cni_link_get(ns, c->netdev, &l);
	if (ns >= 0)
		close(ns);
	if (rc)
		fail(CNI_ERR_CHECK, c->version, "CHECK %s: not in %s: %s", c->netdev,
		     c->queue_mode ? "the host's namespace" : e->netns, strerror(-rc));
	if (!(l.flags & IFF_UP))
		fail(CNI_ERR_CHECK, c->version, "CHECK %s: link down", c->netdev);
	if (!l.xdp_prog_id)
		fail(CNI_ERR_CHECK, c->version, "CHECK %s: no XDP program attached", c->netdev);
	if (cni_agent_prog_id(c->agent, c->netdev, &prog, err, sizeof(err)))
		fail(CNI_ERR_AGENT, c->version, "CHECK %s: %s", c->netdev, err);
	if (prog != l.xdp_prog_id)
		fail(CNI_ERR_CHECK, c->version,
		     "CHECK %s: XDP program %u attached, the agent's is %u", c->netdev,
		     l.xdp_prog_id, prog);
	if (c->has_queue && c->queue >= l.rx_queues)
		fail(CNI_ERR_CHECK, c->version, "CHECK %s: queue %u gone (%u RX queues)", c->netdev,
		     c->queue, l.rx_queues);
}

/* The DaemonSet's init container: this binary into @dir, whole or not at all. */
static int install(const char *dir)
{
	char tmp[4096], dst[4096], buf[65536];
	int in = open("/proc/self/exe", O_RDONLY | O_CLOEXEC), out = -1, rc = 1;
	ssize_t n;

	snprintf(tmp, sizeof(tmp), "%s/.xpile-cni.%d", dir, getpid());
	snprintf(dst, sizeof(dst), "%s/xpile-cni", dir);
	if (in >= 0)
		out = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0755);
	while (out >= 0 && (n = read(in, buf, sizeof(buf))) > 0)
		if (write(out, buf, (size_t)n) != n)
			break;
	if (out >= 0 && n == 0 && !fsync(out) && !close(out) && !rename(tmp, dst))
		rc = 0;
	else if (out >= 0)
		close(out);
	if (rc) {
		ut_say(1, "--install %s: %s", dir, strerror(errno));
		unlink(tmp);
	} else {
		printf("xpile-cni: installed %s\n", dst);
	}
	if (in >= 0)
		close(in);
	return rc;
}

int main(int argc, char **argv)
{
	struct conf c = { 0 };
	struct env e = { 0 };
	json_t *conf;

	ut_say_prog("xpile-cni");
	if (argc == 3 && !strcmp(argv[1], "--install"))
		return install(argv[2]);
	if (argc > 1 && (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h"))) {
		puts("xpile-cni: a CNI plugin (spec 1.0), run by a container runtime with CNI_COMMAND\n"
		     "(ADD, DEL, CHECK, VERSION), CNI_CONTAINERID, CNI_NETNS, CNI_IFNAME set and\n"
		     "the network config on stdin. See docs/agent.md (xpile-cni).\n"
		     "xpile-cni --install DIR: copies itself to DIR/xpile-cni (the DaemonSet's\n"
		     "init container: DIR is the node's /opt/cni/bin).");
		return 0;
	}
	e.command = env_need("CNI_COMMAND", "xpile-cni");
	if (!strcmp(e.command, "VERSION")) {
		json_t *v = json_array();

		for (int k = 0; supported[k]; k++)
			json_array_append_new(v, json_string(supported[k]));
		print_json(
			json_pack("{s:s, s:o}", "cniVersion", CNI_VERSION, "supportedVersions", v));
		return 0;
	}
	if (strcmp(e.command, "ADD") && strcmp(e.command, "DEL") && strcmp(e.command, "CHECK"))
		fail(CNI_ERR_ENV, NULL, "CNI_COMMAND %s: ADD, DEL, CHECK or VERSION", e.command);
	e.container = env_need("CNI_CONTAINERID", e.command);
	e.ifname = env_need("CNI_IFNAME", e.command);
	e.netns = getenv("CNI_NETNS"); /* DEL may come without one */
	if (strcmp(e.command, "DEL"))
		e.netns = env_need("CNI_NETNS", e.command);
	parse_args(&e);
	conf = read_conf(&c, e.command);
	if (!strcmp(e.command, "ADD"))
		cmd_add(&c, &e);
	else if (!strcmp(e.command, "DEL"))
		cmd_del(&c, &e);
	else
		cmd_check(&c, &e);
	json_decref(conf);
	return 0;
}
