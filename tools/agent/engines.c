// SPDX-License-Identifier: BSD-3-Clause
/*
 * The engines' series (engines.h): each engine's control socket asked once per scrape
 * (a short deadline each, so a stuck engine costs the scrape at most that), then the
 * families written one at a time, every engine's samples together.
 */
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <linux/types.h>

#include "engines.h"
#include "jclient.h"

#define ENG_CALL_MS 250

/* What each engine is asked, one answer each; the rest only of an engine that answered
 * the first. */
enum { ENG_STATS, ENG_WORKERS, ENG_LEDGER, ENG_ALLOC, ENG_ASKS };
static const char *const eng_cmds[ENG_ASKS] = { "stats", "workers", "ledger", "alloc" };

struct eng_answer {
	char name[128];
	json_t *ans[ENG_ASKS];
};

/* A label value, escaped as the text format wants (\\, \", \n). */
static void label(FILE *f, const char *s)
{
	fputc('"', f);
	for (; s && *s; s++)
		if (*s == '\\' || *s == '"')
			fprintf(f, "\\%c", *s);
		else if (*s == '\n')
			fputs("\\n", f);
		else
			fputc(*s, f);
	fputc('"', f);
}

static void help(FILE *f, const char *name, const char *type, const char *text)
{
	fprintf(f, "# HELP %s %s\n# TYPE %s %s\n", name, text, name, type);
}

static json_t *ask(const char *path, const char *cmd)
{
	json_t *req = json_pack("{ss}", "cmd", cmd), *rep;
	char why[256];

	rep = ut_jl_call(path, req, ENG_CALL_MS, why, sizeof(why));
	json_decref(req);
	if (rep && !json_is_true(json_object_get(rep, "ok"))) {
		json_decref(rep);
		rep = NULL;
	}
	return rep;
}

static bool answered(const struct eng_answer *a)
{
	for (int c = 0; c < ENG_ASKS; c++)
		if (!a->ans[c])
			return false;
	return true;
}

static void answer_put(struct eng_answer *a)
{
	for (int c = 0; c < ENG_ASKS; c++)
		json_decref(a->ans[c]);
}

static __u64 num(const json_t *o, const char *k)
{
	return (__u64)json_integer_value(json_object_get(o, k));
}

typedef void member_fn(FILE *f, const char *engine, const json_t *m, const void *arg);

/* Calls @fn for each member of array @array in answer @ask of each engine: a family's
 * samples, every engine's together. */
static void each_member(FILE *f, struct eng_answer *en, int n, int ask, const char *array,
			member_fn *fn, const void *arg)
{
	for (int i = 0; i < n; i++) {
		const json_t *m;
		size_t k;

		json_array_foreach(json_object_get(en[i].ans[ask], array), k, m)
			fn(f, en[i].name, m, arg);
	}
}

/* A sample's name and its first label, the engine. */
static void sample(FILE *f, const char *name, const char *engine)
{
	fprintf(f, "%s{engine=", name);
	label(f, engine);
}

struct queue_counter {
	const char *metric, *sub, *key, *help;
};

static const struct queue_counter queue_counters[] = {
	{ "xpile_engine_rx_packets_total", NULL, "rx_packets",
	  "Packets the engine received on the queue's AF_XDP socket." },
	{ "xpile_engine_rx_bytes_total", NULL, "rx_bytes",
	  "Bytes received on the queue's socket." },
	{ "xpile_engine_tx_packets_total", NULL, "tx_packets",
	  "Packets sent on the queue's socket." },
	{ "xpile_engine_tx_bytes_total", NULL, "tx_bytes", "Bytes sent on the queue's socket." },
	{ "xpile_engine_tx_dropped_total", NULL, "tx_dropped",
	  "Packets the engine dropped: no room in the TX ring." },
	{ "xpile_engine_fill_starved_total", NULL, "fill_starved",
	  "Fill ring refills the pile could not fill." },
	{ "xpile_engine_bad_descs_total", NULL, "bad_descs",
	  "Descriptors from the kernel outside the UMEM or oversized." },
	{ "xpile_engine_xsk_rx_dropped_total", "kernel", "rx_dropped",
	  "XDP_STATISTICS rx_dropped: dropped by the kernel for other reasons." },
	{ "xpile_engine_xsk_rx_ring_full_total", "kernel", "rx_ring_full",
	  "XDP_STATISTICS rx_ring_full: dropped, the RX ring was full." },
	{ "xpile_engine_xsk_fill_ring_empty_total", "kernel", "rx_fill_ring_empty_descs",
	  "XDP_STATISTICS rx_fill_ring_empty_descs: the fill ring was empty." },
	{ "xpile_engine_xsk_tx_ring_empty_total", "kernel", "tx_ring_empty_descs",
	  "XDP_STATISTICS tx_ring_empty_descs: the TX ring was empty when kicked." },
	{ "xpile_engine_xsk_invalid_descs_total", "kernel", "rx_invalid_descs",
	  "XDP_STATISTICS rx_invalid_descs." },
};

/* A queue's sample of counter @arg: its key of the queue (sub: of its "kernel" object). */
static void queue_sample(FILE *f, const char *engine, const json_t *q, const void *arg)
{
	const struct queue_counter *c = arg;
	const json_t *src = c->sub ? json_object_get(q, c->sub) : q;

	sample(f, c->metric, engine);
	fputs(",port=", f);
	label(f, json_string_value(json_object_get(q, "port")));
	fprintf(f, ",queue=\"%llu\"} %llu\n", (unsigned long long)num(q, "queue"),
		(unsigned long long)num(src, c->key));
}

/* A family whose samples are labelled with numbers of the member (NULL-ended) and
 * valued by one more of them. */
struct num_family {
	const char *name, *const *labels, *key;
};

static void num_sample(FILE *f, const char *engine, const json_t *m, const void *arg)
{
	const struct num_family *fam = arg;

	sample(f, fam->name, engine);
	for (const char *const *l = fam->labels; *l; l++)
		fprintf(f, ",%s=\"%llu\"", *l, (unsigned long long)num(m, *l));
	fprintf(f, "} %llu\n", (unsigned long long)num(m, fam->key));
}

static void worker_family(FILE *f, struct eng_answer *en, int n, const char *name, const char *type,
			  const char *key, const char *text)
{
	static const char *const labels[] = { "worker", "core", NULL };
	const struct num_family fam = { name, labels, key };

	help(f, name, type, text);
	each_member(f, en, n, ENG_WORKERS, "workers", num_sample, &fam);
}

/* One gauge a UMEM from field @field of each engine's alloc answer. */
static void umem_gauge(FILE *f, struct eng_answer *en, int n, const char *name, const char *text,
		       const char *field)
{
	static const char *const labels[] = { "umem", NULL };
	const struct num_family fam = { name, labels, field };

	help(f, name, "gauge", text);
	each_member(f, en, n, ENG_ALLOC, "umems", num_sample, &fam);
}

static void ledger_ok_sample(FILE *f, const char *engine, const json_t *u, const void *arg)
{
	sample(f, "xpile_engine_ledger_ok", engine);
	fprintf(f, ",umem=\"%llu\"} %d\n", (unsigned long long)num(u, "umem"),
		num(u, "failures") == 0);
}

static const char *const ledger_places[] = { "free", "fill",	  "kernel_rx",	"rx",	"app",
					     "tx",   "kernel_tx", "completion", "uring" };

static void ledger_frames_sample(FILE *f, const char *engine, const json_t *u, const void *arg)
{
	if (!json_object_get(u, "total"))
		return; /* no live audit yet */
	for (size_t p = 0; p < sizeof(ledger_places) / sizeof(ledger_places[0]); p++) {
		sample(f, "xpile_engine_ledger_frames", engine);
		fprintf(f, ",umem=\"%llu\",place=\"%s\"} %lld\n",
			(unsigned long long)num(u, "umem"), ledger_places[p],
			(long long)json_integer_value(json_object_get(u, ledger_places[p])));
	}
}

static void ledger_family(FILE *f, struct eng_answer *en, int n)
{
	help(f, "xpile_engine_ledger_ok", "gauge",
	     "1 while every live audit of the UMEM found every frame in exactly one place.");
	each_member(f, en, n, ENG_LEDGER, "umems", ledger_ok_sample, NULL);
	help(f, "xpile_engine_ledger_frames", "gauge",
	     "Frames of the UMEM in each place at the last live audit (they sum to its frames).");
	each_member(f, en, n, ENG_LEDGER, "umems", ledger_frames_sample, NULL);
	umem_gauge(f, en, n, "xpile_engine_umem_frames", "Frames of the UMEM.", "frames");
	umem_gauge(f, en, n, "xpile_engine_pile_frames",
		   "Frames of the UMEM free in its pile (estimate while running).", "pile");
}

void ag_engines_metrics(FILE *f)
{
	static char paths[UT_JL_MAX_SOCKS][256];
	static struct eng_answer en[UT_JL_MAX_SOCKS];
	int n = ut_jl_list(NULL, paths, UT_JL_MAX_SOCKS), m = 0;

	help(f, "xpile_engine_up", "gauge",
	     "1 when the engine's control socket answered this scrape, 0 when it is there and did not.");
	for (int i = 0; i < n; i++) {
		const char *base = strrchr(paths[i], '/') + 1;
		struct eng_answer *a = &en[m];

		memset(a, 0, sizeof(*a));
		snprintf(a->name, sizeof(a->name), "%.*s", (int)(strlen(base) - 5), base);
		a->ans[ENG_STATS] = ask(paths[i], eng_cmds[ENG_STATS]);
		for (int c = ENG_STATS + 1; a->ans[ENG_STATS] && c < ENG_ASKS; c++)
			a->ans[c] = ask(paths[i], eng_cmds[c]);
		fputs("xpile_engine_up{engine=", f);
		label(f, a->name);
		fprintf(f, "} %d\n", answered(a));
		if (answered(a))
			m++;
		else
			answer_put(a);
	}
	for (size_t k = 0; k < sizeof(queue_counters) / sizeof(queue_counters[0]); k++) {
		help(f, queue_counters[k].metric, "counter", queue_counters[k].help);
		each_member(f, en, m, ENG_STATS, "queues", queue_sample, &queue_counters[k]);
	}
	/* Cycles, not seconds: integers that only grow (seconds would come from a rate
	 * estimated at each scrape). Busy share: rate(busy) / (rate(busy) + rate(idle)). */
	worker_family(f, en, m, "xpile_engine_worker_busy_cycles_total", "counter", "busy_cycles",
		      "Cycles (TSC) the worker spent in loop turns that did work.");
	worker_family(
		f, en, m, "xpile_engine_worker_idle_cycles_total", "counter", "idle_cycles",
		"Cycles (TSC) the worker spent in loop turns that did none (sleeps included).");
	worker_family(f, en, m, "xpile_engine_worker_packets_total", "counter", "packets",
		      "Packets the worker's sockets received (txonly: sent).");
	worker_family(f, en, m, "xpile_engine_worker_sleeps_total", "counter", "sleeps",
		      "Times the idle worker went to sleep or napped.");
	worker_family(f, en, m, "xpile_engine_worker_wakeups_total", "counter", "wakeups",
		      "Sleeps after which the worker's next turn did work.");
	ledger_family(f, en, m);
	for (int i = 0; i < m; i++)
		answer_put(&en[i]);
}
