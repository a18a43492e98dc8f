// SPDX-License-Identifier: BSD-3-Clause
/*
 * xpile-bench handover: the pause a hot handover costs the traffic (docs/engine.md,
 * Handover). Namespaces, engines and the generator are shell work
 * (tools/bench/handover.sh); this front end is the option table that checks them and
 * hands them over as XB_* variables.
 */
#include <stdio.h>

#include "bench.h"
#include "benchutil.h"

struct handover_args {
	const char *rates;
	unsigned handovers, core;
};

#define OPT(...) CLI_OPT(struct handover_args, __VA_ARGS__)

static const struct cli_opt opts[] = {
	OPT("handovers", NUM, handovers, "N", "handovers per rate, 1..1000 [100]", .min = 1,
	    .max = 1000, .env = "XB_HANDOVERS"),
	OPT("rates", STR, rates, "LIST",
	    "packet rates to measure at, comma-separated pps; 0 is no traffic [0,100000]",
	    .env = "XB_RATES"),
	OPT("core", NUM, core, "N", "core of the engine under test [0]", .max = 1023,
	    .env = "XB_CORE"),
	{ 0 },
};

static int bench_handover(int argc, char **argv);

BENCH_COMMAND(
	bench_handover_cmd, bench_handover, "handover", NULL,
	"the pause of an engine hot handover, at rest and under load", opts,
	.description =
		"Runs h1 <-> e1 [xpile fwd --handover] e2 <-> h2 in namespaces it creates "
		"and removes (198.18.0.0/15 only) and hands the engine over --handovers times "
		"in a row, each to a new process, per rate of --rates: 0 is no traffic (the "
		"pause alone), a rate R adds an xpile txonly generator on h1 sending R UDP "
		"packets per second to h2. The pause is from the last old worker parking "
		"(it stops polling) to the first new worker's first turn (it polls), both "
		"CLOCK_MONOTONIC, from the engines' handover JSON lines. One line per rate:\n"
		"  handover rate=R handovers=N pause_us min=A median=B p99=C max=D "
		"gap_us median=G sent=S lost=L ring_pps=P load=X\n"
		"gap: the old engine's last turn that moved packets to the new one's first "
		"(rate > 0); lost: generator packets h2 never received, counted from before "
		"the generator starts to after the path drained; ring_pps: the rate an "
		"RX ring of 2048 entries holds through the median pause (2048 / median). "
		"At a rate > 0 two lines before it say where packets went:\n"
		"  handover rate=R drops KEY=N...\n"
		"  handover rate=R path gen=G h1_tx=A e1_rx=B engine_rx=C engine_tx=D "
		"engine_tx_dropped=X e2_tx=E h2_rx=F\n"
		"drops: every loss counter on the path that moved (the links' drops, the "
		"per-CPU backlogs, e1's non-AF_XDP verdicts, the sockets' XDP_STATISTICS); "
		"path: each stage's count, the first one short of the one before it is where "
		"they went. "
		"Needs root. About 0.3 s per handover.",
	.examples = "xpile-bench handover\n"
		    "xpile-bench handover --handovers 20 --rates 0");

static int bench_handover(int argc, char **argv)
{
	struct handover_args a = { 0 };
	int rc = bench_parse(&bench_handover_cmd, argc, argv, &a); /* exports XB_* */

	return rc != CLI_RUN ? rc : bench_exec_script("handover", "handover.sh");
}
