// SPDX-License-Identifier: BSD-3-Clause
/*
 * xpile-bench engine: AF_XDP engine Mpps on veth pairs in namespaces, against DPDK
 * testpmd (net_af_xdp) when it is installed. The namespaces, processes and counters are
 * shell work, so this front end only validates options and hands them to
 * tools/bench/engine.sh through XB_* variables; the option table below is the single
 * source of both the parser and --help.
 */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench.h"

struct engine_opt {
	const char *name; /* long option */
	const char *env; /* variable engine.sh reads */
	const char *arg; /* metavar */
	const char *def; /* default shown in --help */
	const char *help;
};

static const struct engine_opt opts[] = {
	{ "modes", "XB_MODES", "LIST", "rxdrop,fwd", "modes to measure: rxdrop, fwd or both" },
	{ "runs", "XB_RUNS", "N", "5", "runs per contender and mode; medians are reported" },
	{ "seconds", "XB_SECONDS", "S", "4", "measured window of each run" },
	{ "warmup", "XB_WARMUP", "S", "1", "traffic before the window opens" },
	{ "pkt-size", "XB_PKT", "BYTES", "64", "frame size sent by the generator (60..1514)" },
	{ "dpdk", "XB_DPDK", "auto|yes|no", "auto", "also run DPDK testpmd with net_af_xdp" },
	{ "gen", "XB_GEN", "auto|testpmd|xpile|xdp", "auto",
	  "traffic source for both contenders (auto: testpmd if installed; xdp: xpile-bench gen, XDP live frames, about twice testpmd's rate)" },
	{ "gen-core", "XB_GEN_CORE", "CPU", "0", "core of the generator" },
	{ "dut-core", "XB_DUT_CORE", "CPU", "1", "core of the contender" },
	{ "hugepages", "XB_HUGEPAGES", "N", "256",
	  "2 MiB pages reserved for testpmd during the run" },
	{ "xpile", "XB_XPILE", "PATH", "xpile next to xpile-bench", "engine binary to measure" },
	{ "xpile-args", "XB_XPILE_ARGS", "'OPTS'", "",
	  "extra 'xpile run' options, e.g. --busy-poll" },
	{ "napi", "XB_NAPI", "DEFER,NS", "",
	  "napi_defer_hard_irqs and gro_flush_timeout on d0,d1 (for busy polling), e.g. 2,200000" },
	{ "napi-thread", "XB_NAPI_THREAD", "0|1", "0",
	  "1: run d0/d1's NAPI (XDP, copy to UMEM) in a kthread pinned to --dut-core" },
	{ "dpdk-args", "XB_DPDK_ARGS", "DEVARGS", "",
	  "extra net_af_xdp devargs, e.g. busy_budget=0" },
};
#define NOPTS (sizeof(opts) / sizeof(opts[0]))

static void usage(FILE *f)
{
	fprintf(f, "Usage: xpile-bench engine [OPTIONS]\n\n"
		   "Measures the xpile engine on veth pairs in namespaces it creates and removes\n"
		   "(198.18.0.0/15 only):  [gen] g0 <-> d0 [dut] d1 <-> s1 [sink].\n"
		   "One generator (DPDK testpmd txonly, xpile txonly, or the XDP live-frames\n"
		   "source of 'xpile-bench gen') feeds both contenders:\n"
		   "  rxdrop  xpile run --mode rxdrop  vs  testpmd --forward-mode=rxonly on d0\n"
		   "  fwd     xpile run --mode fwd     vs  testpmd --forward-mode=io on d0,d1\n"
		   "Runs alternate A/B (order flipped every run). Rates come from one outside\n"
		   "observer for both: the kernel's successful XDP redirects on d0 (rxdrop) and\n"
		   "the frames s1 receives (fwd). CPU time per packet is the contender's\n"
		   "utime+stime over the window divided by the packets counted.\n\n"
		   "Output: one line per contender per run, then per mode\n"
		   "  engine mode=M xpile_mpps=X dpdk_mpps=D ratio=X/D xpile_ns_per_pkt=N ...\n"
		   "DPDK is optional: without dpdk-testpmd, xpile is measured alone (needs its\n"
		   "txonly mode as the generator) and a '# DPDK skipped' line says so.\n"
		   "testpmd needs hugepages: the bench reserves --hugepages on a private\n"
		   "hugetlbfs mount and restores the previous count on exit.\n\n"
		   "Options:\n");
	for (size_t i = 0; i < NOPTS; i++) {
		char lhs[64];

		snprintf(lhs, sizeof(lhs), "--%s %s", opts[i].name, opts[i].arg);
		fprintf(f, "  %-32s %s", lhs, opts[i].help);
		if (opts[i].def[0])
			fprintf(f, " [%s]", opts[i].def);
		fputc('\n', f);
	}
	fprintf(f, "  %-32s %s\n\n", "-h, --help", "this text");
	fprintf(f, "Needs root. Takes about runs x modes x contenders x (seconds + 4) s.\n"
		   "Example: xpile-bench engine --runs 5 --seconds 4\n"
		   "See docs/bench-engine.md for method and figures.\n");
}

/* The script lives in the source tree: walk up from the binary (build/, build/asan/). */
static int find_script(const char *exe_dir, char *out, size_t len)
{
	const char *env = getenv("XPILE_SRCDIR");
	char dir[PATH_MAX];

	if (env) {
		snprintf(out, len, "%s/tools/bench/engine.sh", env);
		return access(out, R_OK) ? -ENOENT : 0;
	}
	snprintf(dir, sizeof(dir), "%s", exe_dir);
	for (int up = 0; up < 4; up++) {
		char *slash;

		snprintf(out, len, "%s/tools/bench/engine.sh", dir);
		if (!access(out, R_OK))
			return 0;
		slash = strrchr(dir, '/');
		if (!slash || slash == dir)
			break;
		*slash = '\0';
	}
	return -ENOENT;
}

int bench_engine(int argc, char **argv)
{
	struct option longopts[NOPTS + 2];
	char exe[PATH_MAX], script[PATH_MAX + 32], xpile[PATH_MAX + 8], self[PATH_MAX + 16];
	ssize_t n;
	int c;

	for (size_t i = 0; i < NOPTS; i++)
		longopts[i] = (struct option){ opts[i].name, required_argument, NULL, (int)i };
	longopts[NOPTS] = (struct option){ "help", no_argument, NULL, 'h' };
	longopts[NOPTS + 1] = (struct option){ 0 };

	opterr = 0;
	while ((c = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
		if (c == 'h') {
			usage(stdout);
			return 0;
		}
		if (c < 0 || (size_t)c >= NOPTS) {
			fprintf(stderr,
				"xpile-bench engine: bad option or missing value in '%s'; "
				"see 'xpile-bench engine --help'\n",
				argv[optind - 1]);
			return 2;
		}
		setenv(opts[c].env, optarg, 1);
	}
	if (optind < argc) {
		fprintf(stderr, "xpile-bench engine: unexpected argument '%s'; see --help\n",
			argv[optind]);
		return 2;
	}

	n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (n <= 0) {
		fprintf(stderr, "xpile-bench engine: cannot read /proc/self/exe: %s\n",
			strerror(errno));
		return 2;
	}
	exe[n] = '\0';
	*strrchr(exe, '/') = '\0';
	if (find_script(exe, script, sizeof(script))) {
		fprintf(stderr,
			"xpile-bench engine: tools/bench/engine.sh not found above %s; "
			"run from the source tree or set XPILE_SRCDIR\n",
			exe);
		return 2;
	}
	snprintf(xpile, sizeof(xpile), "%s/xpile", exe);
	setenv("XB_XPILE", xpile, 0);
	snprintf(self, sizeof(self), "%s/xpile-bench", exe);
	setenv("XB_SELF", self, 1);
	fflush(stdout);
	execl("/bin/bash", "bash", script, (char *)NULL);
	fprintf(stderr, "xpile-bench engine: cannot run /bin/bash %s: %s\n", script,
		strerror(errno));
	return 2;
}
