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
#include "cli.h"
#include "xpile/text.h"

struct run_args {
	const char *config;
	bool detach_on_exit;
	bool check;
};

#define OPT(...) CLI_OPT(struct run_args, __VA_ARGS__)

static const struct cli_opt run_opts[] = {
	OPT("config", STR, config, "FILE",
	    "The JSON config (see CONFIG). Required. SIGHUP reads it again and applies what changed."),
	OPT("detach-on-exit", FLAG, detach_on_exit, NULL,
	    "At SIGTERM/SIGINT detach the programs and remove their pins. By default they stay, traffic keeps flowing, and the next agent adopts them."),
	OPT("check", FLAG, check, NULL,
	    "Check the config (syntax, fields, rules, interfaces) and exit: 0 when it is good, 2 with the one-line error."),
	{ 0 },
};

static const struct cli_section run_sections[] = {
	{ "CONFIG",
	  "One JSON object (what a ConfigMap holds); unknown fields are errors:\n"
	  " {\"interfaces\": [{\"name\": \"eth0\", \"queues\": 2, \"mode\": \"auto|native|skb\",\n"
	  "                  \"default\": \"xsk\", \"rules\": [\"udp dport 53 action pass\"],\n"
	  "                  \"hosts\": [\"node1\"], \"on_replace\": \"reattach|report\"}],\n"
	  "  \"control\": {\"path\": \"/run/xpile/agent.sock\", \"mode\": \"0600\",\n"
	  "              \"allow_uids\": [0], \"allow_gids\": []},\n"
	  "  \"metrics\": {\"address\": \"127.0.0.1:9469\"},\n"
	  "  \"device_plugin\": {\"dir\": \"/tmp/afxdp_dp\", \"mode\": \"0660\",\n"
	  "                    \"idle_timeout\": 10, \"max_connections\": 256}}\n"
	  "Rules are in the rule-text syntax of xpile-loader; default is the action when no rule matches (default xsk: the socket of the RX queue); hosts, when given, are the only ones whose /connect on the device-plugin socket is answered /host_ok; on_replace says what to do when another program replaces the steer program (reattach: remove it and attach again, the default; report: leave it, /readyz 503). An error names the file, the field (interfaces[1].rules[3]) and what is wrong, on one line." },
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
	.synopsis = "--config FILE [--detach-on-exit]",
	.summary = "serve the interfaces of a config",
	.description =
		"Attaches xpile's steer program to every interface of the config through a bpf_link, pins the link and the maps, and serves the AF_XDP device plugin's socket DIR/NETDEV/afxdp.sock of each interface, from which unprivileged engines (xpile run --uds, DPDK's net_af_xdp use_cni=1) get the XSKMAP. What a previous agent left attached is adopted, not re-attached, so restarts do not touch traffic. One thread, one io_uring loop; sd_notify readiness (Type=notify).",
	.opts = run_opts,
	.sections = run_sections,
	.examples = "xpile-agent run --config /etc/xpile/agent.json\n"
		    "xpile-agent run --config agent.json --check",
};

struct ctl_args {
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

static const struct cli_prog prog = {
	.name = "xpile-agent",
	.summary = "the xpile node agent: XDP steering, the AF_XDP device-plugin socket",
	.cmds = cmds,
	.version = XPILE_VERSION,
};

double ag_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

void ag_log(const char *fmt, ...)
{
	va_list ap;

	fputs("xpile-agent: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

int ag_reload(struct agent *a, char *err, size_t len)
{
	struct ag_config *c = calloc(1, sizeof(*c));
	int rc = -1;

	if (!c) {
		snprintf(err, len, "out of memory");
		return -1;
	}
	if (ag_config_load(a->cfg_path, c, err, len) || ag_apply_check(a, c, err, len))
		goto out;
	if (ag_apply(a, c, err, len))
		goto out;
	ag_config_free(&a->cfg);
	a->cfg = *c; /* the rules move with it */
	memset(c, 0, sizeof(*c));
	a->generation++;
	rc = 0;
out:
	a->last_reload_ok = !rc;
	ag_config_free(c);
	free(c);
	return rc;
}

static void arm_signal(struct agent *a)
{
	struct io_uring_sqe *sqe = ag_loop_sqe(&a->loop, &a->sig_ev);

	if (sqe)
		io_uring_prep_read(sqe, a->sigfd, a->sigbuf, sizeof(struct signalfd_siginfo), 0);
}

static void on_signal(struct ag_loop *l, struct ag_ev *ev, int res, unsigned int flags)
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
			ag_log("reload refused, running state kept: %s", err);
		else
			ag_log("reloaded %s: generation %llu", a->cfg_path,
			       (unsigned long long)a->generation);
		sd_notify(0, "READY=1");
	} else {
		ag_log("%s: stopping (%s)", strsignal((int)si.ssi_signo),
		       a->detach_on_exit ? "detaching" : "programs and pins stay");
		l->stop = true;
		return;
	}
	arm_signal(a);
}

static void arm_tick(struct agent *a)
{
	struct io_uring_sqe *sqe = ag_loop_sqe(&a->loop, &a->tick_ev);
	double t = a->cfg.dp_idle / 2 < 1 ? a->cfg.dp_idle / 2 : 1;

	a->tick_ts.tv_sec = (long long)t;
	a->tick_ts.tv_nsec = (long long)((t - (double)(long long)t) * 1e9);
	if (sqe)
		io_uring_prep_timeout(sqe, &a->tick_ts, 0, 0);
}

static void on_tick(struct ag_loop *l, struct ag_ev *ev, int res, unsigned int flags)
{
	struct agent *a = (struct agent *)((char *)ev - offsetof(struct agent, tick_ev));

	ag_dp_tick(a, ag_now());
	ag_ctl_tick(a, ag_now());
	ag_watch_all(a); /* a detached link is announced by nothing */
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

	if (ag_reload(a, err, sizeof(err))) {
		ag_log("%s", err);
		return 1;
	}
	if (ag_ctl_open(a) || ag_metrics_open(a) || ag_watch_open(a))
		return 1;
	sigemptyset(&set);
	sigaddset(&set, SIGHUP);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGINT);
	a->sigfd = signalfd(-1, &set, SFD_CLOEXEC);
	if (a->sigfd < 0) {
		ag_log("signalfd: %s", strerror(errno));
		return 1;
	}
	a->sig_ev.fn = on_signal;
	a->tick_ev.fn = on_tick;
	arm_signal(a);
	arm_tick(a);
	ag_log("ready: %u interface(s), config generation %llu", a->cfg.nifaces,
	       (unsigned long long)a->generation);
	sd_notify(0, "READY=1");
	rc = ag_loop_run(&a->loop);
	if (rc)
		ag_log("event loop: %s", strerror(-rc));
	sd_notify(0, "STOPPING=1");
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
	if (fd < 0 || connect(fd, (struct sockaddr *)&sun, sizeof(sun))) {
		fprintf(stderr,
			"xpile-agent ctl: cannot connect to %s: %s (is the agent running? --socket)\n",
			ca.socket, strerror(errno));
		json_decref(req);
		free(dumped);
		return 1;
	}
	if (write(fd, text, strlen(text)) != (ssize_t)strlen(text) || write(fd, "\n", 1) != 1) {
		fprintf(stderr, "xpile-agent ctl: %s: write: %s\n", ca.socket, strerror(errno));
		close(fd);
		json_decref(req);
		free(dumped);
		return 1;
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
	if (!n || !strchr(line, '\n')) {
		fprintf(stderr, "xpile-agent ctl: %s: no reply (%s)\n", ca.socket,
			n ? "cut short" : "connection closed");
		return 1;
	}
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
	libbpf_set_print(quiet_print);
	libxdp_set_print(quiet_xdp_print);
	signal(SIGPIPE, SIG_IGN);
	/* Blocked before anything attaches: a stop request waits for the loop. */
	sigemptyset(&set);
	sigaddset(&set, SIGHUP);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGINT);
	sigprocmask(SIG_BLOCK, &set, NULL);
	if (ra.check) {
		static struct ag_config c;

		if (ag_config_load(ra.config, &c, err, sizeof(err))) {
			fprintf(stderr, "xpile-agent: %s\n", err);
			return 2;
		}
		ag_config_free(&c);
		return 0;
	}
	a.cfg_path = ra.config;
	a.watch_fd = -1;
	a.xsk_scratch_fd = -1;
	a.detach_on_exit = ra.detach_on_exit;
	/* A config that cannot work is bad input (exit 2), before the kernel is touched. */
	if (ag_config_load(ra.config, &a.cfg, err, sizeof(err))) {
		fprintf(stderr, "xpile-agent: %s\n", err);
		return 2;
	}
	ag_config_free(&a.cfg);
	rc = ag_loop_init(&a.loop, 256);
	if (rc) {
		ag_log("io_uring: %s", strerror(-rc));
		return 1;
	}
	rc = run(&a);
	ag_ifaces_close(&a, a.detach_on_exit);
	ag_loop_drain(&a.loop);
	ag_metrics_free(&a);
	ag_config_free(&a.cfg);
	ag_loop_fini(&a.loop); /* cancels the netlink receive */
	if (a.watch_fd >= 0)
		close(a.watch_fd);
	if (a.xsk_scratch_fd >= 0)
		close(a.xsk_scratch_fd);
	return rc;
}
