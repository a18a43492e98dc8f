// SPDX-License-Identifier: BSD-3-Clause
/*
 * `xpile stats [ENGINE]` and `xpile ctl ENGINE CMD [KEY=VALUE ...]`: a running engine's
 * control socket (ctl.h) asked from the command line. --json output is the engine's
 * own JSON, passed through jansson (one writer: every string escaped).
 */
#include <stdio.h>
#include <stdlib.h>
#include <linux/types.h>
#include <string.h>

#include "cli.h"
#include "client.h"
#include "jclient.h"
#include "say.h"

#define CALL_MS 2000

struct client_args {
	bool json;
	const char *dir;
};

#define OPT(...) CLI_OPT(struct client_args, __VA_ARGS__)

static const struct cli_opt stats_opts[] = {
	OPT("json", FLAG, json, NULL,
	    "One JSON object on stdout: {\"engines\":[...]}, each the engine's stats reply with its \"workers\" (docs/engine.md)."),
	OPT("dir", STR, dir, "DIR",
	    "Where the engines' control sockets are (default "
	    "/run/xpile"
	    ")."),
	{ 0 },
};

static const struct cli_opt ctl_opts[] = {
	OPT("dir", STR, dir, "DIR",
	    "Where the engines' control sockets are (default "
	    "/run/xpile"
	    ")."),
	{ 0 },
};

const struct cli_cmd eng_cmd_stats = {
	.name = "stats",
	.synopsis = "[ENGINE] [--json]",
	.summary = "one snapshot of running engines: queues, drops, workers",
	.description =
		"Asks the control socket of ENGINE (its --name, or a socket's path), or of every engine on this host, for its stats and workers, and prints per port/queue the packet and bit rates over the last second, totals and drops (the engine's and the kernel's XDP_STATISTICS), and per worker its busy share, cycles per packet, sleeps and wake-ups.",
	.opts = stats_opts,
	.examples = "xpile stats\nxpile stats eth0 --json\nxpile stats /run/xpile/edge.sock",
	.min_args = 0,
	.max_args = 1,
};

const struct cli_cmd eng_cmd_ctl = {
	.name = "ctl",
	.synopsis = "ENGINE CMD [KEY=VALUE ...]",
	.summary = "send one command to a running engine's control socket",
	.description =
		"Sends {\"cmd\":CMD, KEY:VALUE, ...} to ENGINE's control socket and prints the reply object on stdout; the exit status is 0 when it says \"ok\":true, else 1. CMD: info, stats, workers, ledger, alloc, log (level=error|info|debug), capture (action=start|stop, rule=..., file=/PATH (root: a new file, 0600), snaplen=N), punt (action=list|add|del, rule=..., id=N). A VALUE that is a number is sent as one.",
	.opts = ctl_opts,
	.examples =
		"xpile ctl eth0 workers\nxpile ctl eth0 ledger\nxpile ctl eth0 log level=debug\nxpile ctl eth0 capture action=start 'rule=udp dport 9' file=/tmp/x.pcapng\nxpile ctl eth0 capture action=stop",
	.min_args = 2,
	.max_args = -1,
};

/* @name: an engine's name, or a socket's path (it holds a '/'). */
static void engine_path(const char *dir, const char *name, char *path, size_t len)
{
	if (strchr(name, '/'))
		snprintf(path, len, "%s", name);
	else
		snprintf(path, len, "%s/%s.sock", dir ? dir : ut_run_dir(), name);
}

static json_t *ask(const char *path, const char *cmd, char *why, size_t len)
{
	json_t *req = json_pack("{ss}", "cmd", cmd), *rep;

	rep = ut_jl_call(path, req, CALL_MS, why, len);
	json_decref(req);
	return rep;
}

/* stats and workers of one engine, as one object; NULL with @why. */
json_t *eng_client_snapshot(const char *path, char *why, size_t len)
{
	json_t *st = ask(path, "stats", why, len), *w;

	if (!st)
		return NULL;
	if (!json_is_true(json_object_get(st, "ok"))) {
		snprintf(why, len, "%s: %s", path,
			 json_string_value(json_object_get(st, "error")) ?: "refused");
		json_decref(st);
		return NULL;
	}
	w = ask(path, "workers", why, len);
	if (w) {
		json_object_set(st, "workers", json_object_get(w, "workers"));
		json_object_set(st, "cycles_hz", json_object_get(w, "cycles_hz"));
		json_decref(w);
	}
	return st;
}

static __u64 num(const json_t *o, const char *k)
{
	return (__u64)json_integer_value(json_object_get(o, k));
}

static double real(const json_t *o, const char *k)
{
	return json_number_value(json_object_get(o, k));
}

static void print_text(const json_t *s)
{
	const json_t *q, *w;
	size_t i;

	printf("engine %s (%s), up %.1f s\n", json_string_value(json_object_get(s, "engine")),
	       json_string_value(json_object_get(s, "mode")), real(s, "time"));
	printf("  %-14s %6s %12s %10s %12s %10s %12s %12s %9s %9s %9s %9s\n", "QUEUE", "WORKER",
	       "RX PPS", "RX MBPS", "TX PPS", "TX MBPS", "RX TOTAL", "TX TOTAL", "TX DROP",
	       "KRX DROP", "RING FULL", "FILL EMPTY");
	json_array_foreach(json_object_get(s, "queues"), i, q)
	{
		const json_t *k = json_object_get(q, "kernel");
		char name[32];

		snprintf(name, sizeof(name), "%s:%llu",
			 json_string_value(json_object_get(q, "port")),
			 (unsigned long long)num(q, "queue"));
		printf("  %-14s %6llu %12.0f %10.1f %12.0f %10.1f %12llu %12llu %9llu %9llu %9llu %9llu\n",
		       name, (unsigned long long)num(q, "worker"), real(q, "rx_pps"),
		       real(q, "rx_bps") / 1e6, real(q, "tx_pps"), real(q, "tx_bps") / 1e6,
		       (unsigned long long)num(q, "rx_packets"),
		       (unsigned long long)num(q, "tx_packets"),
		       (unsigned long long)num(q, "tx_dropped"),
		       (unsigned long long)num(k, "rx_dropped"),
		       (unsigned long long)num(k, "rx_ring_full"),
		       (unsigned long long)num(k, "rx_fill_ring_empty_descs"));
	}
	printf("  %-14s %6s %7s %12s %12s %12s %12s\n", "WORKER", "CORE", "BUSY%", "CYC/PKT",
	       "PACKETS", "SLEEPS", "WAKEUPS");
	json_array_foreach(json_object_get(s, "workers"), i, w)
	{
		char name[16];

		snprintf(name, sizeof(name), "%llu", (unsigned long long)num(w, "worker"));
		printf("  %-14s %6llu %7.1f %12.0f %12llu %12llu %12llu\n", name,
		       (unsigned long long)num(w, "core"), real(w, "busy_pct"),
		       real(w, "cycles_per_packet"), (unsigned long long)num(w, "packets"),
		       (unsigned long long)num(w, "sleeps"), (unsigned long long)num(w, "wakeups"));
	}
}

static int run_stats(const struct client_args *a, const struct cli_args *res)
{
	static char paths[UT_JL_MAX_SOCKS][256];
	json_t *all = json_array();
	char why[512];
	int n, bad = 0;

	if (res->argc) {
		engine_path(a->dir, res->argv[0], paths[0], sizeof(paths[0]));
		n = 1;
	} else {
		n = ut_jl_list(a->dir, paths, UT_JL_MAX_SOCKS);
	}
	for (int i = 0; i < n; i++) {
		json_t *s = eng_client_snapshot(paths[i], why, sizeof(why));

		if (!s) {
			/* Listing all: an engine that went away between the list and the call
			 * is not an error; the one named is. */
			if (res->argc)
				bad = ut_say(1, "%s", why);
			continue;
		}
		json_object_del(s, "ok");
		if (a->json)
			json_array_append(all, s);
		else
			print_text(s);
		json_decref(s);
	}
	if (!n && !a->json)
		printf("no engine running (no control socket in %s)\n",
		       a->dir ? a->dir : ut_run_dir());
	if (a->json && !bad) {
		json_t *o = json_pack("{sO}", "engines", all);

		json_dumpf(o, stdout, JSON_COMPACT);
		printf("\n");
		json_decref(o);
	}
	json_decref(all);
	return bad;
}

/* KEY=VALUE: a number stays one, anything else is a string. */
static json_t *word_value(const char *v)
{
	char *end;
	long long n = strtoll(v, &end, 10);

	if (*v && !*end && (v[0] != '0' || !v[1]))
		return json_integer(n);
	if (!strcmp(v, "true") || !strcmp(v, "false"))
		return json_boolean(!strcmp(v, "true"));
	return json_string(v);
}

static int run_ctl(const struct cli_prog *p, const struct cli_cmd *c, const struct client_args *a,
		   const struct cli_args *res)
{
	json_t *req = json_pack("{ss}", "cmd", res->argv[1]), *rep;
	char path[256], why[512];
	int ok;

	for (int i = 2; i < res->argc; i++) {
		const char *eq = strchr(res->argv[i], '=');
		char key[64];

		if (!eq || eq == res->argv[i] || (size_t)(eq - res->argv[i]) >= sizeof(key)) {
			json_decref(req);
			return cli_usage_error(p, c, "%s: give KEY=VALUE, e.g. level=debug",
					       res->argv[i]);
		}
		snprintf(key, sizeof(key), "%.*s", (int)(eq - res->argv[i]), res->argv[i]);
		json_object_set_new(req, key, word_value(eq + 1));
	}
	engine_path(a->dir, res->argv[0], path, sizeof(path));
	rep = ut_jl_call(path, req, CALL_MS, why, sizeof(why));
	json_decref(req);
	if (!rep)
		return ut_say(1, "%s", why);
	ok = json_is_true(json_object_get(rep, "ok"));
	json_dumpf(rep, stdout, JSON_COMPACT);
	printf("\n");
	json_decref(rep);
	return ok ? 0 : 1;
}

int eng_client_main(const struct cli_prog *p, const struct cli_cmd *c, int argc, char **argv)
{
	struct client_args a = { 0 };
	struct cli_args res;
	int rc;

	rc = cli_parse(p, c, argc, argv, &a, &res);
	if (rc != CLI_RUN)
		return rc;
	cli_json_begin();
	if (c == &eng_cmd_stats)
		return cli_json_finish(run_stats(&a, &res));
	return run_ctl(p, c, &a, &res);
}
