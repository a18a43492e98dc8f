// SPDX-License-Identifier: BSD-3-Clause
/*
 * xpile-bench: microbenchmarks of the allocator, the UMEM layout, the region
 * allocator, the XDP steer program and the engine. Each prints figures, one line
 * per run; comparisons are ratios measured in the same run.
 */
#include <stdio.h>
#include <string.h>

#include "bench.h"

static const struct bench_cmd cmds[] = {
	{ "alloc", "pile/ring allocator throughput (DPDK mempool_perf protocol)", bench_alloc },
	{ "layout", "header-line touch cost: interleaved vs aligned UMEM layout", bench_layout },
	{ "region", "lazy iBuddy vs eager buddy region allocator", bench_region },
	{ "xdp", "steer program ns/packet via BPF_PROG_TEST_RUN", bench_xdp },
	{ "engine", "AF_XDP engine Mpps on veth (and DPDK testpmd when present)", bench_engine },
	{ "gen", "XDP live-frames traffic source (the engine bench's --gen xdp)", bench_gen },
};

static void usage(FILE *f)
{
	fprintf(f, "Usage: xpile-bench COMMAND [OPTIONS]\n\n"
		   "Benchmarks for xpile. Every command prints one line per run; run\n"
		   "'xpile-bench COMMAND --help' for its options.\n\nCommands:\n");
	for (size_t i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++)
		fprintf(f, "  %-8s %s\n", cmds[i].name, cmds[i].summary);
}

int main(int argc, char **argv)
{
	if (argc < 2 || !strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
		usage(argc < 2 ? stderr : stdout);
		return argc < 2 ? 2 : 0;
	}
	for (size_t i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++)
		if (!strcmp(argv[1], cmds[i].name))
			return cmds[i].run(argc - 1, argv + 1);
	fprintf(stderr, "xpile-bench: unknown command '%s'; see 'xpile-bench --help'\n", argv[1]);
	return 2;
}
