// SPDX-License-Identifier: BSD-3-Clause
/*
 * xpile-bench engine: AF_XDP engine Mpps on veth pairs in namespaces, against DPDK
 * testpmd (net_af_xdp) when it is installed. The namespaces, processes and counters are
 * shell work, so this front end only validates options and hands them to
 * tools/bench/engine.sh through XB_* variables; the option table below (tools/util/cli.h) is
 * the single source of the parser, the checks and --help.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench.h"
#include "benchutil.h"
#include "xpile/text.h"

/* Each option is checked here and handed to engine.sh as its XB_* variable (.env). */
struct engine_args {
	const char *modes, *xpile, *xpile_args, *napi, *dpdk_args, *against;
	unsigned runs, seconds, warmup, pkt, gen_core, dut_core, hugepages, rate;
	int dpdk, gen, napi_thread, sink_napi;
};

/* --modes rxdrop,fwd: one or both. */
static int parse_modes(const struct cli_opt *o, const char *v, void *cfg, char *why, size_t len)
{
	for (const char *p = v; *p;) {
		size_t l = strcspn(p, ",");

		if (!((l == 6 && !strncmp(p, "rxdrop", 6)) || (l == 3 && !strncmp(p, "fwd", 3)))) {
			snprintf(why, len, "expected rxdrop, fwd or rxdrop,fwd");
			return -1;
		}
		p += l;
		if (*p == ',' && !*++p) {
			snprintf(why, len, "expected rxdrop, fwd or rxdrop,fwd");
			return -1;
		}
	}
	return 0;
}

/* --napi DEFER,NS: napi_defer_hard_irqs and gro_flush_timeout. */
static int parse_napi(const struct cli_opt *o, const char *v, void *cfg, char *why, size_t len)
{
	const char *comma = strchr(v, ',');
	char defer[16];
	uint64_t x;

	if (!comma || comma - v >= (long)sizeof(defer) ||
	    (snprintf(defer, sizeof(defer), "%.*s", (int)(comma - v), v),
	     xp_parse_u64(defer, 0, UINT32_MAX, &x)) ||
	    xp_parse_u64(comma + 1, 0, UINT32_MAX, &x)) {
		snprintf(why, len, "expected DEFER,NS: two numbers, e.g. 2,200000");
		return -1;
	}
	return 0;
}

static const struct cli_name dpdk_names[] = { CLI_NAME("auto", 0),
					      CLI_NAME("yes", 1),
					      CLI_NAME("no", 2),
					      { 0 } };
static const struct cli_name gen_names[] = { CLI_NAME("auto", 0),
					     CLI_NAME("testpmd", 1),
					     CLI_NAME("xpile", 2),
					     CLI_NAME("xdp", 3),
					     { 0 } };
static const struct cli_name bit_names[] = { CLI_NAME("0", 0), CLI_NAME("1", 1), { 0 } };

#define OPT(...) CLI_OPT(struct engine_args, __VA_ARGS__)

static const struct cli_opt opts[] = {
	OPT("modes", FUNC, modes, "LIST", "modes to measure: rxdrop, fwd or both [rxdrop,fwd]",
	    .parse = parse_modes, .env = "XB_MODES"),
	OPT("runs", NUM, runs, "N", "runs per contender and mode; medians are reported [5]",
	    .min = 1, .max = 1000, .env = "XB_RUNS"),
	OPT("seconds", NUM, seconds, "S", "measured window of each run, whole seconds [4]",
	    .min = 1, .max = 3600, .env = "XB_SECONDS"),
	OPT("warmup", NUM, warmup, "S", "traffic before the window opens, whole seconds [1]",
	    .max = 600, .env = "XB_WARMUP"),
	OPT("pkt-size", NUM, pkt, "BYTES", "frame size sent by the generator (60..1514) [64]",
	    .min = 60, .max = 1514, .env = "XB_PKT"),
	OPT("dpdk", ENUM, dpdk, "auto|yes|no", "also run DPDK testpmd with net_af_xdp [auto]",
	    .names = dpdk_names, .env = "XB_DPDK"),
	OPT("gen", ENUM, gen, "auto|testpmd|xpile|xdp",
	    "traffic source for both contenders (auto: testpmd if installed; xdp: xpile-bench gen, XDP live frames, about twice testpmd's rate) [auto]",
	    .names = gen_names, .env = "XB_GEN"),
	OPT("rate", NUM, rate, "PPS",
	    "the generator's rate, packets a second (needs --gen xpile: testpmd's txonly has no rate); 0: as fast as it goes [0]",
	    .max = 100000000, .env = "XB_RATE"),
	OPT("gen-core", NUM, gen_core, "CPU", "core of the generator [0]", .flags = CLI_F_CPUS,
	    .env = "XB_GEN_CORE"),
	OPT("dut-core", NUM, dut_core, "CPU", "core of the contender [1]", .flags = CLI_F_CPUS,
	    .env = "XB_DUT_CORE"),
	OPT("hugepages", NUM, hugepages, "N",
	    "2 MiB pages reserved for testpmd during the run [256]", .max = 1u << 20,
	    .env = "XB_HUGEPAGES"),
	OPT("xpile", STR, xpile, "PATH", "engine binary to measure [xpile next to xpile-bench]",
	    .env = "XB_XPILE"),
	OPT("against", STR, against, "PATH",
	    "another xpile binary (e.g. an old build) as the second contender instead of DPDK: prints old_mpps and the paired ratio new/old",
	    .env = "XB_AGAINST"),
	OPT("xpile-args", STR, xpile_args, "'OPTS'", "extra 'xpile run' options, e.g. --busy-poll",
	    .env = "XB_XPILE_ARGS"),
	OPT("napi", FUNC, napi, "DEFER,NS",
	    "napi_defer_hard_irqs and gro_flush_timeout on d0,d1 (for busy polling), e.g. 2,200000",
	    .parse = parse_napi, .env = "XB_NAPI"),
	OPT("napi-thread", ENUM, napi_thread, "0|1",
	    "1: run d0/d1's NAPI (XDP, copy to UMEM) in a kthread pinned to --dut-core [0]",
	    .names = bit_names, .env = "XB_NAPI_THREAD"),
	OPT("sink-napi", ENUM, sink_napi, "0|1",
	    "1: s1's receive (NAPI with GRO on) in a kthread pinned to --gen-core, so fwd's contenders do not run the sink's receive path in their own sends [0]",
	    .names = bit_names, .env = "XB_SINK_NAPI"),
	OPT("dpdk-args", STR, dpdk_args, "DEVARGS", "extra net_af_xdp devargs, e.g. busy_budget=0",
	    .env = "XB_DPDK_ARGS"),
	{ 0 },
};

BENCH_COMMAND(
	bench_engine_cmd, bench_engine, "engine", NULL,
	"AF_XDP engine Mpps on veth (and DPDK testpmd when present)", opts,
	.description =
		"Measures the xpile engine on veth pairs in namespaces it creates and removes "
		"(198.18.0.0/15 only):  [gen] g0 <-> d0 [dut] d1 <-> s1 [sink]. One generator "
		"(DPDK testpmd txonly, xpile txonly, or the XDP live-frames source of "
		"'xpile-bench gen') feeds both contenders:\n"
		"  rxdrop  xpile run --mode rxdrop  vs  testpmd --forward-mode=rxonly on d0\n"
		"  fwd     xpile run --mode fwd     vs  testpmd --forward-mode=io on d0,d1\n"
		"Runs alternate A/B (order flipped every run). Rates come from one outside "
		"observer for both: the kernel's successful XDP redirects on d0 (rxdrop) and "
		"the frames s1 receives (fwd). CPU time per packet is the contender's "
		"utime+stime over the window divided by the packets counted.\n"
		"\n"
		"Output: one line per contender per run, then per mode\n"
		"  engine mode=M xpile_mpps=X dpdk_mpps=D ratio=X/D xpile_ns_per_pkt=N ...\n"
		"DPDK is optional: without dpdk-testpmd, xpile is measured alone (needs its "
		"txonly mode as the generator) and a '# DPDK skipped' line says so. testpmd "
		"needs hugepages: the bench reserves --hugepages on a private hugetlbfs mount "
		"and restores the previous count on exit. Needs root. Takes about runs x modes "
		"x contenders x (seconds + 4) s. See docs/bench-engine.md for method and "
		"figures. Defaults in [brackets].",
	.examples = "xpile-bench engine --runs 5 --seconds 4");

int bench_engine(int argc, char **argv)
{
	struct engine_args a = { 0 };
	int rc = bench_parse(&bench_engine_cmd, argc, argv, &a); /* exports XB_* */

	return rc != CLI_RUN ? rc : bench_exec_script("engine", "engine.sh");
}
