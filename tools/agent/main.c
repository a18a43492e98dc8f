// SPDX-License-Identifier: BSD-3-Clause
/*
 * xpile-agent: the node daemon's command line and life cycle. Its own binary, not a
 * command of the engine: it holds CAP_BPF/CAP_NET_ADMIN and links jansson, liburing
 * and libsystemd, while the engine runs in pods with CAP_NET_RAW alone and needs none
 * of them.
 */
#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/un.h>
#include <jansson.h>
#include <bpf/libbpf.h>
#include <systemd/sd-daemon.h>
#include <xdp/libxdp.h>

#include "agent.h"
#include "config.h"
#include "ctl.h"
#include "dp.h"
#include "iface.h"
#include "kubelet.h"
#include "metrics.h"
#include "reload.h"
#include "watch.h"
#include "cli.h"
#include "xpile/text.h"
#include "xpile/bpffs.h"

/* Both commands' configs start with the common options' field. */
struct run_args {
	int verbose;
	const char *config;
	const char *bpffs; /* --bpffs: exported as XPILE_BPFFS */
	bool detach_on_exit;
	bool check;
	bool json;
	int loop; /* enum ut_loop_kind */
};

static const struct cli_name loop_names[] = {
	CLI_NAME("auto", UT_LOOP_AUTO),
	CLI_NAME("io_uring", UT_LOOP_URING),
	CLI_ALIAS("uring", UT_LOOP_URING),
	CLI_NAME("epoll", UT_LOOP_EPOLL),
	{ NULL },
};

#define OPT(...) CLI_OPT(struct run_args, __VA_ARGS__)

static const struct cli_opt run_opts[] = {
	OPT("config", STR, config, "FILE",
	    "The JSON config (see CONFIG), a regular file. Required. SIGHUP reads it again and applies what changed."),
	OPT("detach-on-exit", FLAG, detach_on_exit, NULL,
	    "At SIGTERM/SIGINT detach the programs and remove their pins. By default they stay, traffic keeps flowing, and the next agent adopts them."),
	OPT("check", FLAG, check, NULL,
	    "Check the config (syntax, fields, rules, interfaces) and exit: 0 when it is good, 2 with the one-line error."),
	OPT("json", FLAG, json, NULL,
	    "With --check: the verdict as one JSON object on stdout, {\"ok\":true,\"interfaces\":N} or {\"error\":...,\"status\":2}."),
	OPT("loop", ENUM, loop, "KIND",
	    "The event loop: auto (io_uring, else epoll where io_uring_setup is refused: a seccomp profile without io_uring, kernel.io_uring_disabled; the default), io_uring (refuse to start without it), epoll. The log says which runs and why.",
	    .names = loop_names),
	OPT("bpffs", STR, bpffs, "DIR", CLI_BPFFS_HELP, .env = "XPILE_BPFFS"),
	{ 0 },
};

static const struct cli_section run_sections[] = {
	{ "CONFIG",
	  "One JSON object (what a ConfigMap holds); unknown fields are errors:\n"
	  " {\"interfaces\": [{\"name\": \"eth0\", \"queues\": 2, \"mode\": \"auto|native|skb\",\n"
	  "                  \"default\": \"xsk\", \"rules\": [\"udp dport 53 action pass\"],\n"
	  "                  \"hosts\": [\"node1\"], \"on_replace\": \"reattach|report\",\n"
	  "                  \"pool\": \"xsk\", \"numa_node\": 0, \"pinned_map\": false}],\n"
	  "  \"control\": {\"path\": \"/run/xpile/agent.sock\", \"mode\": \"0600\",\n"
	  "              \"allow_uids\": [0], \"allow_gids\": []},\n"
	  "  \"metrics\": {\"address\": \"127.0.0.1:9469\"},\n"
	  "  \"device_plugin\": {\"dir\": \"/tmp/afxdp_dp\", \"mode\": \"0660\", \"group\": 9469,\n"
	  "                    \"idle_timeout\": 10, \"max_connections\": 256},\n"
	  "  \"kubelet\": {\"dir\": \"/var/lib/kubelet/device-plugins\", \"resource_prefix\": \"xpile.io\",\n"
	  "              \"pod_resources\": \"/var/lib/kubelet/pod-resources/kubelet.sock\"}}\n"
	  "Rules are in the rule-text syntax of xpile-loader; default is the action when no rule matches (default xsk: the socket of the RX queue); hosts, when given, are the only ones whose /connect on the device-plugin socket is answered /host_ok; on_replace says what to do when another program replaces the steer program (reattach: remove it and attach again, the default; report: leave it, /readyz 503). The device-plugin sockets get mode and group (a gid or a name the agent holds itself) from the start; their directories must be root's or the agent's, writable by no one else, with no symbolic link on the way. With kubelet, the agent is a kubelet device plugin: one resource PREFIX/POOL per pool, one device per RX queue, registered again whenever the kubelet restarts; pinned_map pins the XSKMAP for DPDK's use_pinned_map (docs/agent.md). An error names the file, the field (interfaces[1].rules[3]) and what is wrong, on one line." },
	{ "SIGNALS",
	  "    SIGHUP           read the config again; apply only the difference (a rule set\n"
	  "                     that changed is replaced atomically); a bad config is refused\n"
	  "                     with one line and the running state is kept\n"
	  "    SIGTERM, SIGINT  exit; programs, links and pins stay (unless --detach-on-exit)" },
	{ "EXIT STATUS", "0 stopped by a signal; 1 set-up failed; 2 bad usage or a bad config." },
	{ NULL },
};

static const struct cli_cmd cmd_run = {
	.name = "run",
	.synopsis = "--config FILE [--detach-on-exit] [--loop auto|io_uring|epoll]",
	.summary = "serve the interfaces of a config",
	.description =
		"Attaches xpile's steer program to every interface of the config through a bpf_link, pins the link and the maps, and serves the AF_XDP device plugin's socket DIR/NETDEV/afxdp.sock of each interface, from which unprivileged engines (xpile run --uds, DPDK's net_af_xdp use_cni=1) get the XSKMAP. What a previous agent left attached is adopted, not re-attached, so restarts do not touch traffic. One thread, one event loop (io_uring, or epoll where io_uring is refused); sd_notify readiness (Type=notify).",
	.opts = run_opts,
	.sections = run_sections,
	.examples = "xpile-agent run --config /etc/xpile/agent.json\n"
		    "xpile-agent run --config agent.json --check",
};

struct ctl_args {
	int verbose;
	const char *socket;
	bool raw;
};

#define COPT(...) CLI_OPT(struct ctl_args, __VA_ARGS__)

static const struct cli_opt ctl_opts[] = {
	COPT("socket", STR, socket, "PATH",
	     "The agent's control socket (default /run/xpile/agent.sock, the config's control.path)."),
	COPT("raw", FLAG, raw, NULL,
	     "Send the one argument as the request line, verbatim (for testing the agent)."),
	{ 0 },
};

static const struct cli_section ctl_sections[] = {
	{ "REQUESTS",
	  "    status                    the agent and every interface it serves\n"
	  "    stats IFACE               verdict and parse-error counters\n"
	  "    rules IFACE               rules in force, with ids and counters\n"
	  "    rule-add IFACE RULE...    add one rule (rule text, as xpile-loader's)\n"
	  "    rule-del IFACE ID         remove rule ID\n"
	  "    rules-replace IFACE 'RULE' ['RULE'...]   the whole set, one atomic swap\n"
	  "    detach IFACE / attach IFACE   stop / resume serving it (until a reload)\n"
	  "    reload                    what SIGHUP does\n"
	  "    audit                     whether what runs matches the config\n"
	  "Each request is one JSON line; the reply, one JSON line, is printed on stdout. "
	  "The protocol is in docs/agent.md." },
	{ "EXIT STATUS",
	  "0 the reply says ok; 1 it says an error (also printed on stderr, one line), or the agent cannot be reached; 2 bad usage." },
	{ NULL },
};

static const struct cli_cmd cmd_ctl = {
	.name = "ctl",
	.synopsis = "[--socket PATH] REQUEST [ARGS...]",
	.summary = "ask a running agent through its control socket",
	.description = "Sends one request to the agent's control socket and prints the reply.",
	.opts = ctl_opts,
	.sections = ctl_sections,
	.examples = "xpile-agent ctl status\n"
		    "xpile-agent ctl rule-add eth0 prio 5 udp dport 53 action pass\n"
		    "xpile-agent ctl --socket /run/xpile/agent.sock rules eth0",
	.min_args = 1,
	.max_args = -1,
	.words_after = 2,
};

static const struct cli_cmd *const cmds[] = { &cmd_run, &cmd_ctl, NULL };

static const struct cli_opt common_opts[] = {
	OPT("verbose", COUNT, verbose, NULL,
	    "More detail: -v the library's info messages (and, for ctl, the request line "
	    "sent), -vv also its debug output and libbpf's and libxdp's.",
	    .short_name = 'v'),
	{ 0 },
};

static const struct cli_prog prog = {
	.name = "xpile-agent",
	.summary = "the xpile node agent: XDP steering, the AF_XDP device-plugin socket",
	.cmds = cmds,
	.common = common_opts,
	.version = XPILE_VERSION,
	.see_also = "xpile(8), xpile-loader(8), xpile-bench(8)",
};

static void arm_signal(struct agent *a)
{
	ut_loop_read(&a->loop, &a->sig_ev, a->sigfd, a->sigbuf, sizeof(struct signalfd_siginfo));
}

static void on_signal(struct ut_loop *l, struct ut_ev *ev, int res, unsigned int flags)
{
	struct agent *a = (struct agent *)((char *)ev - offsetof(struct agent, sig_ev));
	struct signalfd_siginfo si;
	char err[1024];

	if (res != (int)sizeof(si)) {
		arm_signal(a);
		return;
	}
	memcpy(&si, a->sigbuf, sizeof(si));
	if (si.ssi_signo == SIGHUP) {
		sd_notify(0, "RELOADING=1");
		if (ag_reload(a, err, sizeof(err)))
			ut_log(LOG_ERR, "reload refused, running state kept: %s", err);
		else
			ut_say(0, "reloaded %s: generation %llu", a->cfg_path,
			       (unsigned long long)a->generation);
		sd_notify(0, "READY=1");
	} else {
		ut_say(0, "%s: stopping (%s)", strsignal((int)si.ssi_signo),
		       a->detach_on_exit ? "detaching" : "programs and pins stay");
		l->stop = true;
		return;
	}
	arm_signal(a);
}

static void arm_tick(struct agent *a)
{
	double t = a->cfg.dp_idle / 2 < 1 ? a->cfg.dp_idle / 2 : 1;

	a->tick_ts.tv_sec = (long long)t;
	a->tick_ts.tv_nsec = (long long)((t - (double)(long long)t) * 1e9);
	ut_loop_timeout(&a->loop, &a->tick_ev, &a->tick_ts);
}

static void on_tick(struct ut_loop *l, struct ut_ev *ev, int res, unsigned int flags)
{
	struct agent *a = (struct agent *)((char *)ev - offsetof(struct agent, tick_ev));

	ag_dp_tick(a, ut_now());
	ag_ctl_tick(a, ut_now());
	ag_watch_all(a); /* a detached link is announced by nothing */
	ag_ifaces_tick(a);
	ag_kubelet_tick(a);
	arm_tick(a);
}

static int quiet_print(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	return 0;
}

static int quiet_xdp_print(enum libxdp_print_level level, const char *fmt, va_list ap)
{
	return 0;
}

static int run(struct agent *a)
{
	char err[1024];
	sigset_t set;
	int rc;

	xp_netns_sweep(); /* what killed agents left in namespaces since deleted */
	if (ag_reload(a, err, sizeof(err))) {
		ut_log(LOG_ERR, "%s", err);
		return 1;
	}
	if (ag_ctl_open(a) || ag_metrics_open(a) || ag_watch_open(a) || ag_kubelet_open(a))
		return 1;
	sigemptyset(&set);
	sigaddset(&set, SIGHUP);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGINT);
	a->sigfd = signalfd(-1, &set, SFD_CLOEXEC);
	if (a->sigfd < 0) {
		ut_log(LOG_ERR, "signalfd: %s", strerror(errno));
		return 1;
	}
	a->sig_ev.fn = on_signal;
	a->tick_ev.fn = on_tick;
	arm_signal(a);
	arm_tick(a);
	ut_loop_say(&a->loop);
	ut_say(0, "ready: %u interface(s), config generation %llu", a->cfg.nifaces,
	       (unsigned long long)a->generation);
	sd_notify(0, "READY=1");
	rc = ut_loop_run(&a->loop);
	if (rc)
		ut_log(LOG_ERR, "event loop: %s", strerror(-rc));
	sd_notify(0, "STOPPING=1");
	ag_kubelet_close(a);
	ag_ctl_close(a);
	ag_metrics_close(a);
	close(a->sigfd);
	return rc ? 1 : 0;
}

/* The request line of argv (REQUEST ARGS...): 0, or a usage error's text in @why. */
static json_t *ctl_request(int argc, char **argv, char *why, size_t len)
{
	json_t *o = json_object();
	const char *r = argv[0];
	static const char *const one[] = { "status", "reload", "audit", NULL };
	static const char *const with_if[] = { "stats", "rules", "detach", "attach", NULL };
	int need = -1;

	for (int k = 0; one[k]; k++)
		if (!strcmp(r, one[k]))
			need = 1;
	for (int k = 0; with_if[k]; k++)
		if (!strcmp(r, with_if[k]))
			need = 2;
	if (need > 0) {
		if (argc != need) {
			snprintf(why, len, "%s takes %s", r, need == 1 ? "no argument" : "IFACE");
			goto bad;
		}
		json_object_set_new(o, "cmd", json_string(r));
		if (need == 2)
			json_object_set_new(o, "iface", json_string(argv[1]));
		return o;
	}
	if (strcmp(r, "rule-add") && strcmp(r, "rule-del") && strcmp(r, "rules-replace")) {
		snprintf(
			why, len,
			"unknown request '%s': status, stats, rules, rule-add, rule-del, rules-replace, detach, attach, reload or audit",
			r);
		goto bad;
	}
	if (argc < 3 && strcmp(r, "rules-replace")) {
		snprintf(why, len, "%s takes IFACE and %s", r,
			 strcmp(r, "rule-del") ? "RULE" : "ID");
		goto bad;
	}
	if (argc < 2) {
		snprintf(why, len, "%s takes IFACE and the rules", r);
		goto bad;
	}
	json_object_set_new(o, "iface", json_string(argv[1]));
	if (!strcmp(r, "rule-del")) {
		__u32 id;

		if (argc != 3 || xp_parse_u32(argv[2], 1, 0xffffffff, &id)) {
			snprintf(why, len, "rule-del takes IFACE and one rule id (1..4294967295)");
			goto bad;
		}
		json_object_set_new(o, "cmd", json_string("rule_del"));
		json_object_set_new(o, "id", json_integer(id));
	} else if (!strcmp(r, "rule-add")) {
		char text[1024] = "";

		for (int k = 2; k < argc; k++)
			snprintf(text + strlen(text), sizeof(text) - strlen(text), "%s%s",
				 k > 2 ? " " : "", argv[k]);
		json_object_set_new(o, "cmd", json_string("rule_add"));
		json_object_set_new(o, "rule", json_string(text));
	} else {
		json_t *arr = json_array();

		for (int k = 2; k < argc; k++)
			json_array_append_new(arr, json_string(argv[k]));
		json_object_set_new(o, "cmd", json_string("rules_replace"));
		json_object_set_new(o, "rules", arr);
	}
	return o;
bad:
	json_decref(o);
	return NULL;
}

/* ctl's own failure, in the shape of the agent's replies: one line on stderr and
 * {"ok":false,"error":...} on stdout, which a script reads as it reads a reply. */
static int ctl_fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static int ctl_fail(const char *fmt, ...)
{
	char msg[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	fprintf(stderr, "xpile-agent ctl: %s\n", msg);
	fputs("{\"ok\":false,\"error\":", stdout);
	cli_json_str(stdout, msg);
	fputs("}\n", stdout);
	return 1;
}

static int ctl_main(const struct cli_cmd *cmd, int argc, char **argv)
{
	struct ctl_args ca = { .socket = "/run/xpile/agent.sock" };
	struct sockaddr_un sun = { .sun_family = AF_UNIX };
	json_t *req = NULL, *rep, *ok, *e;
	char *dumped = NULL;
	struct timeval tv = { .tv_sec = 30 };
	char why[256], line[1 << 16];
	const char *text;
	struct cli_args res;
	size_t n = 0;
	ssize_t got;
	int rc, fd;

	rc = cli_parse(&prog, cmd, argc, argv, &ca, &res);
	if (rc != CLI_RUN)
		return rc;
	if (ca.raw) {
		if (res.argc != 1)
			return cli_usage_error(
				&prog, cmd, "--raw takes exactly one argument, the request line");
		text = res.argv[0];
	} else {
		req = ctl_request(res.argc, res.argv, why, sizeof(why));
		if (!req)
			return cli_usage_error(&prog, cmd, "%s", why);
		text = dumped = json_dumps(req, JSON_COMPACT);
		if (!text)
			return cli_usage_error(&prog, cmd, "arguments are not UTF-8 text");
	}
	if (strlen(ca.socket) >= sizeof(sun.sun_path))
		return cli_usage_error(&prog, cmd,
				       "--socket: a Unix socket path has at most %zu bytes",
				       sizeof(sun.sun_path) - 1);
	memcpy(sun.sun_path, ca.socket, strlen(ca.socket) + 1);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	if (ca.verbose)
		fprintf(stderr, "xpile-agent ctl: %s <- %s\n", ca.socket, text);
	if (fd < 0 || connect(fd, (struct sockaddr *)&sun, sizeof(sun))) {
		rc = ctl_fail("cannot connect to %s: %s (is the agent running? --socket)",
			      ca.socket, strerror(errno));
		if (fd >= 0)
			close(fd);
		json_decref(req);
		free(dumped);
		return rc;
	}
	if (write(fd, text, strlen(text)) != (ssize_t)strlen(text) || write(fd, "\n", 1) != 1) {
		rc = ctl_fail("%s: write: %s", ca.socket, strerror(errno));
		close(fd);
		json_decref(req);
		free(dumped);
		return rc;
	}
	json_decref(req);
	free(dumped);
	while (n < sizeof(line) - 1 && (got = read(fd, line + n, sizeof(line) - 1 - n)) > 0) {
		n += (size_t)got;
		if (memchr(line, '\n', n))
			break;
	}
	close(fd);
	line[n] = 0;
	if (!n || !strchr(line, '\n'))
		return ctl_fail("%s: no reply (%s)", ca.socket,
				n ? "cut short" : "connection closed");
	*strchr(line, '\n') = 0;
	puts(line);
	rep = json_loads(line, 0, NULL);
	rc = rep && (ok = json_object_get(rep, "ok")) && json_is_true(ok) ? 0 : 1;
	if (rc && rep && (e = json_object_get(rep, "error")))
		fprintf(stderr, "xpile-agent ctl: %s\n", json_string_value(e));
	json_decref(rep);
	return rc;
}

int main(int argc, char **argv)
{
	static struct agent a; /* large: off the stack */
	const struct cli_cmd *cmd;
	struct run_args ra = { 0 };
	struct cli_args res;
	char err[1024];
	sigset_t set;
	int rc;

	ut_say_prog("xpile-agent");
	rc = cli_select(&prog, argc, argv, &cmd);
	if (rc != CLI_RUN)
		return rc;
	if (cmd == &cmd_ctl)
		return ctl_main(cmd, argc - 1, argv + 1);
	rc = cli_parse(&prog, cmd, argc - 1, argv + 1, &ra, &res);
	if (rc != CLI_RUN)
		return rc;
	if (!ra.config)
		return cli_usage_error(&prog, cmd,
				       "--config is required, e.g. --config agent.json");
	if (ra.json && !ra.check)
		return cli_usage_error(&prog, cmd,
				       "--json goes with --check (the agent logs lines)");
	ut_say_verbose(ra.verbose);
	xp_set_log_fn(ut_say_xp);
	if (ra.verbose < 2) { /* the library names causes; libbpf/libxdp narrate for -vv */
		libbpf_set_print(quiet_print);
		libxdp_set_print(quiet_xdp_print);
	}
	signal(SIGPIPE, SIG_IGN);
	if (ra.check) {
		static struct ag_config c;

		cli_json_begin();
		if (ag_config_load(ra.config, &c, err, sizeof(err))) {
			ut_log(LOG_ERR, "%s", err);
			return cli_json_finish(2);
		}
		if (ra.json)
			printf("{\"ok\":true,\"interfaces\":%u}\n", c.nifaces);
		ag_config_free(&c);
		return cli_json_finish(0);
	}
	a.cfg_path = ra.config;
	a.watch_fd = -1;
	a.xsk_scratch_fd = -1;
	a.xsk_bound_fd = -1;
	a.detach_on_exit = ra.detach_on_exit;
	/* A config that cannot work is bad input (exit 2), before the kernel is touched. */
	if (ag_config_load(ra.config, &a.cfg, err, sizeof(err))) {
		ut_log(LOG_ERR, "%s", err);
		return 2;
	}
	ag_config_free(&a.cfg);
	/* Blocked once the config was read (a stop signal until then just ends the process)
	 * and before anything attaches: from here a stop request waits for the loop. */
	sigemptyset(&set);
	sigaddset(&set, SIGHUP);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGINT);
	sigprocmask(SIG_BLOCK, &set, NULL);
	if (ut_loop_init(&a.loop, (enum ut_loop_kind)ra.loop, 256))
		return 1; /* one line said why */
	rc = run(&a);
	ag_ifaces_close(&a, a.detach_on_exit);
	ut_loop_drain(&a.loop);
	ag_metrics_free(&a);
	ag_config_free(&a.cfg);
	ut_loop_fini(&a.loop); /* cancels the netlink receive */
	if (a.watch_fd >= 0)
		close(a.watch_fd);
	if (a.xsk_scratch_fd >= 0)
		close(a.xsk_scratch_fd);
	if (a.xsk_bound_fd >= 0)
		close(a.xsk_bound_fd);
	return rc;
}
