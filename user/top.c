// SPDX-License-Identifier: BSD-3-Clause
/*
 * `xpile top` (top.h): every engine of the host, redrawn each --interval from their
 * control sockets (client.h): per port/queue the rates and drops, per worker its busy
 * share and cycles per packet over the last interval, per UMEM where the frames are.
 * Keys switch the view and the sort, as in top(1). Plain ANSI escapes, no curses: the
 * screen is cleared and written whole at each refresh.
 */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <termios.h>
#include <unistd.h>
#include <linux/types.h>
#include <sys/ioctl.h>

#include "cli.h"
#include "client.h"
#include "clock.h"
#include "jclient.h"
#include "say.h"
#include "top.h"

enum top_view { VIEW_QUEUES, VIEW_WORKERS, VIEW_LEDGER };
enum top_sort { SORT_RX, SORT_TX, SORT_DROPS, SORT_NAME, SORT_MAX };

static const char *const sort_names[SORT_MAX] = { "rx pps", "tx pps", "drops", "name" };

struct top_args {
	double interval;
	const char *dir;
	__u32 iterations; /* 0: until q */
};

#define OPT(...) CLI_OPT(struct top_args, __VA_ARGS__)

static const struct cli_opt top_opts[] = {
	OPT("interval", SECONDS, interval, "S", "Seconds between refreshes, 0.1..60 (default 1).",
	    .dmin = 0.1, .dmax = 60),
	OPT("dir", STR, dir, "DIR",
	    "Where the engines' control sockets are (default $XPILE_RUNDIR, else /run/xpile)."),
	OPT("iterations", NUM, iterations, "N", "Exit after N refreshes (default: until q).",
	    .min = 1, .max = 1000000),
	{ 0 },
};

static const struct cli_section top_sections[] = {
	{ "KEYS", "    q      quit\n"
		  "    p      per port/queue: rates, totals, drops (the default view)\n"
		  "    w      per worker: busy %, cycles per packet, packets, sleeps, wake-ups\n"
		  "    l      per UMEM: the ledger's places at the last live audit\n"
		  "    s      next sort: rx pps, tx pps, drops, name\n"
		  "    r      reverse the sort" },
	{ NULL },
};

const struct cli_cmd eng_cmd_top = {
	.name = "top",
	.synopsis = "[--interval S] [--iterations N]",
	.summary = "a live view of every engine on this host",
	.description =
		"Shows every running engine (their control sockets), refreshed each --interval: per port/queue the packet and bit rates of the last second, totals and drops (the engine's and the kernel's XDP_STATISTICS); per worker its busy share and cycles per packet over the last refresh, packets, sleeps and wake-ups; per UMEM where every frame is (the live ledger). Keys switch the view and the sort (KEYS).",
	.opts = top_opts,
	.sections = top_sections,
	.examples = "xpile top\nxpile top --interval 0.5",
	.min_args = 0,
	.max_args = 0,
};

/* A worker's cycles at the last refresh: its busy share over the interval. */
struct top_prev {
	char key[160];
	__u64 busy, idle, packets;
};

struct top {
	enum top_view view;
	enum top_sort sort;
	bool reverse;
	struct top_prev prev[256], cur[256];
	int nprev, ncur;
};

static volatile sig_atomic_t top_stop;

static void on_signal(int sig)
{
	top_stop = 1;
}

static __u64 num(const json_t *o, const char *k)
{
	return (__u64)json_integer_value(json_object_get(o, k));
}

static double real(const json_t *o, const char *k)
{
	return json_number_value(json_object_get(o, k));
}

static const char *str(const json_t *o, const char *k)
{
	const char *s = json_string_value(json_object_get(o, k));

	return s ? s : "";
}

/* One row of the queue view, for the sort. */
struct qrow {
	const char *engine;
	const json_t *q;
	double key;
	char name[48];
};

static __u64 drops(const json_t *q)
{
	const json_t *k = json_object_get(q, "kernel");

	return num(q, "tx_dropped") + num(k, "rx_dropped") + num(k, "rx_ring_full") +
	       num(k, "rx_fill_ring_empty_descs");
}

static int qrow_cmp(const void *a, const void *b, void *arg)
{
	const struct qrow *x = a, *y = b;
	const struct top *t = arg;
	int c;

	if (t->sort == SORT_NAME)
		c = strcmp(x->engine, y->engine) ?: strcmp(x->name, y->name);
	else
		c = x->key < y->key ? 1 : x->key > y->key ? -1 : strcmp(x->name, y->name);
	return t->reverse ? -c : c;
}

static void view_queues(struct top *t, json_t *all)
{
	static struct qrow rows[1024];
	const json_t *en, *q;
	size_t i, k;
	int n = 0;

	printf("%-24s %-14s %3s %11s %9s %11s %9s %12s %12s %8s %8s %8s %8s\n", "ENGINE", "QUEUE",
	       "WKR", "RX PPS", "RX MBPS", "TX PPS", "TX MBPS", "RX TOTAL", "TX TOTAL", "TX DROP",
	       "KRX DROP", "RING FUL", "FILL EMP");
	json_array_foreach(all, i, en)
	{
		json_array_foreach(json_object_get(en, "queues"), k, q)
		{
			struct qrow *r = &rows[n];

			if (n == (int)(sizeof(rows) / sizeof(rows[0])))
				break;
			r->engine = str(en, "engine");
			r->q = q;
			snprintf(r->name, sizeof(r->name), "%s:%llu", str(q, "port"),
				 (unsigned long long)num(q, "queue"));
			r->key = t->sort == SORT_RX ? real(q, "rx_pps") :
				 t->sort == SORT_TX ? real(q, "tx_pps") :
						      (double)drops(q);
			n++;
		}
	}
	qsort_r(rows, (size_t)n, sizeof(rows[0]), qrow_cmp, t);
	for (int j = 0; j < n; j++) {
		const json_t *kq = json_object_get(rows[j].q, "kernel");

		printf("%-24.24s %-14.14s %3llu %11.0f %9.1f %11.0f %9.1f %12llu %12llu %8llu %8llu %8llu %8llu\n",
		       rows[j].engine, rows[j].name, (unsigned long long)num(rows[j].q, "worker"),
		       real(rows[j].q, "rx_pps"), real(rows[j].q, "rx_bps") / 1e6,
		       real(rows[j].q, "tx_pps"), real(rows[j].q, "tx_bps") / 1e6,
		       (unsigned long long)num(rows[j].q, "rx_packets"),
		       (unsigned long long)num(rows[j].q, "tx_packets"),
		       (unsigned long long)num(rows[j].q, "tx_dropped"),
		       (unsigned long long)num(kq, "rx_dropped"),
		       (unsigned long long)num(kq, "rx_ring_full"),
		       (unsigned long long)num(kq, "rx_fill_ring_empty_descs"));
	}
}

static const struct top_prev *prev_of(const struct top *t, const char *key)
{
	for (int i = 0; i < t->nprev; i++)
		if (!strcmp(t->prev[i].key, key))
			return &t->prev[i];
	return NULL;
}

static void view_workers(struct top *t, json_t *all)
{
	const json_t *en, *w;
	size_t i, k;

	printf("%-24s %6s %5s %7s %10s %12s %12s %12s %-6s\n", "ENGINE", "WORKER", "CORE", "BUSY%",
	       "CYC/PKT", "PACKETS", "SLEEPS", "WAKEUPS", "IDLE");
	t->ncur = 0;
	json_array_foreach(all, i, en)
	{
		json_array_foreach(json_object_get(en, "workers"), k, w)
		{
			struct top_prev *c = &t->cur[t->ncur];
			const struct top_prev *p;
			double busy_pct, cpp;
			__u64 db, di, dp;

			if (t->ncur == (int)(sizeof(t->cur) / sizeof(t->cur[0])))
				break;
			snprintf(c->key, sizeof(c->key), "%s/%llu", str(en, "engine"),
				 (unsigned long long)num(w, "worker"));
			c->busy = num(w, "busy_cycles");
			c->idle = num(w, "idle_cycles");
			c->packets = num(w, "packets");
			p = prev_of(t, c->key);
			/* Over the last refresh when there was one, else since the start. */
			db = p && c->busy >= p->busy ? c->busy - p->busy : c->busy;
			di = p && c->idle >= p->idle ? c->idle - p->idle : c->idle;
			dp = p && c->packets >= p->packets ? c->packets - p->packets : c->packets;
			busy_pct = db + di ? 100.0 * db / (db + di) : 0;
			cpp = dp ? (double)db / dp : 0;
			printf("%-24.24s %6llu %5llu %7.1f %10.0f %12llu %12llu %12llu %-6s\n",
			       str(en, "engine"), (unsigned long long)num(w, "worker"),
			       (unsigned long long)num(w, "core"), busy_pct, cpp,
			       (unsigned long long)c->packets, (unsigned long long)num(w, "sleeps"),
			       (unsigned long long)num(w, "wakeups"), str(w, "idle_how"));
			t->ncur++;
		}
	}
	memcpy(t->prev, t->cur, sizeof(t->cur[0]) * (size_t)t->ncur);
	t->nprev = t->ncur;
}

static void view_ledger(json_t *all)
{
	const json_t *en, *u;
	size_t i, k;

	printf("%-24s %4s %-6s %8s %8s %8s %8s %8s %8s %8s %8s %8s %8s %8s\n", "ENGINE", "UMEM",
	       "LEDGER", "FRAMES", "FREE", "FILL", "KERN RX", "RX", "APP", "TX", "KERN TX", "COMPL",
	       "URING", "AUDITS");
	json_array_foreach(all, i, en)
	{
		json_array_foreach(json_object_get(json_object_get(en, "ledger"), "umems"), k, u)
		{
			printf("%-24.24s %4llu %-6s %8llu %8lld %8lld %8lld %8lld %8lld %8lld %8lld %8lld %8lld %8llu\n",
			       str(en, "engine"), (unsigned long long)num(u, "umem"),
			       !num(u, "audits")  ? "-" :
			       num(u, "failures") ? "FAILED" :
						    "ok",
			       (unsigned long long)num(u, "frames"),
			       (long long)json_integer_value(json_object_get(u, "free")),
			       (long long)json_integer_value(json_object_get(u, "fill")),
			       (long long)json_integer_value(json_object_get(u, "kernel_rx")),
			       (long long)json_integer_value(json_object_get(u, "rx")),
			       (long long)json_integer_value(json_object_get(u, "app")),
			       (long long)json_integer_value(json_object_get(u, "tx")),
			       (long long)json_integer_value(json_object_get(u, "kernel_tx")),
			       (long long)json_integer_value(json_object_get(u, "completion")),
			       (long long)json_integer_value(json_object_get(u, "uring")),
			       (unsigned long long)num(u, "audits"));
		}
	}
}

/* Every engine's stats and workers (and, in the ledger view, its ledger). */
static json_t *gather(const struct top_args *a, const struct top *t)
{
	static char paths[UT_JL_MAX_SOCKS][256];
	int n = ut_jl_list(a->dir, paths, UT_JL_MAX_SOCKS);
	json_t *all = json_array();
	char why[512];

	for (int i = 0; i < n; i++) {
		json_t *s = eng_client_snapshot(paths[i], why, sizeof(why));

		if (!s)
			continue; /* gone between the list and the call */
		if (t->view == VIEW_LEDGER) {
			json_t *req = json_pack("{ss}", "cmd", "ledger");
			json_t *l = ut_jl_call(paths[i], req, 2000, why, sizeof(why));

			json_decref(req);
			if (l)
				json_object_set_new(s, "ledger", l);
		}
		json_array_append_new(all, s);
	}
	return all;
}

static void draw(const struct top_args *a, struct top *t)
{
	static const char *const views[] = { "queues", "workers", "ledger" };
	json_t *all = gather(a, t);

	/* Home and clear, then the whole screen. */
	printf("\033[H\033[2J");
	printf("xpile top - %zu engine%s - view %s, sort %s%s - keys: p queues, w workers, l ledger, s sort, r reverse, q quit\n\n",
	       json_array_size(all), json_array_size(all) == 1 ? "" : "s", views[t->view],
	       sort_names[t->sort], t->reverse ? " (reversed)" : "");
	if (!json_array_size(all))
		printf("no engine running (no control socket in %s)\n",
		       a->dir ? a->dir : ut_run_dir());
	else if (t->view == VIEW_QUEUES)
		view_queues(t, all);
	else if (t->view == VIEW_WORKERS)
		view_workers(t, all);
	else
		view_ledger(all);
	fflush(stdout);
	json_decref(all);
}

/* A key: 1 to quit. */
static int key(struct top *t, char c)
{
	switch (c) {
	case 'q':
	case 'Q':
		return 1;
	case 'p':
		t->view = VIEW_QUEUES;
		break;
	case 'w':
		t->view = VIEW_WORKERS;
		break;
	case 'l':
		t->view = VIEW_LEDGER;
		break;
	case 's':
		t->sort = (t->sort + 1) % SORT_MAX;
		break;
	case 'r':
		t->reverse = !t->reverse;
		break;
	default:
		break;
	}
	return 0;
}

int eng_top_main(const struct cli_prog *p, const struct cli_cmd *c, int argc, char **argv)
{
	struct top_args a = { .interval = 1 };
	static struct top t;
	struct termios old, raw;
	struct cli_args res;
	bool tty = isatty(STDIN_FILENO);
	int rc = cli_parse(p, c, argc, argv, &a, &res);
	__u32 done = 0;

	if (rc != CLI_RUN)
		return rc;
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	signal(SIGPIPE, SIG_IGN);
	/* Keys without Enter, not echoed; the terminal is given back as it was. */
	if (tty && !tcgetattr(STDIN_FILENO, &old)) {
		raw = old;
		raw.c_lflag &= ~(tcflag_t)(ICANON | ECHO);
		raw.c_cc[VMIN] = 0;
		raw.c_cc[VTIME] = 0;
		tcsetattr(STDIN_FILENO, TCSANOW, &raw);
	} else {
		tty = false;
	}
	printf("\033[?25l"); /* no cursor */
	while (!top_stop) {
		__u64 end = ut_now_ns() + (__u64)(a.interval * 1e9);
		bool redraw = false;

		draw(&a, &t);
		if (a.iterations && ++done >= a.iterations)
			break;
		while (!top_stop && !redraw) {
			struct pollfd pf = { .fd = STDIN_FILENO, .events = POLLIN };
			__u64 now = ut_now_ns();
			char ch;

			if (now >= end)
				break;
			if (poll(&pf, tty ? 1 : 0, (int)((end - now) / 1000000) + 1) > 0 &&
			    read(STDIN_FILENO, &ch, 1) == 1) {
				if (key(&t, ch))
					top_stop = 1;
				redraw = true; /* a key shows at once */
			}
		}
	}
	printf("\033[?25h\n");
	if (tty)
		tcsetattr(STDIN_FILENO, TCSANOW, &old);
	return 0;
}
