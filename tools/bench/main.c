// SPDX-License-Identifier: BSD-3-Clause
/*
 * xpile-bench: microbenchmarks of the allocator, the UMEM layout, the dealer, the
 * region allocator, the XDP steer program and the engine. Each prints figures, one
 * line per run; comparisons are ratios measured in the same run.
 */
#include <stdio.h>
#include <string.h>

#include "bench.h"

static const struct cli_cmd *const cmds[] = {
	&bench_alloc_cmd.cli,
	&bench_layout_cmd.cli,
	&bench_deal_cmd.cli,
	&bench_region_cmd.cli,
	&bench_xdp_cmd.cli,
	&bench_engine_cmd.cli,
	&bench_gen_cmd.cli,
	&bench_capture_cmd.cli,
	&bench_punt_cmd.cli,
	&bench_handover_cmd.cli,
	&bench_wake_cmd.cli,
	&bench_lpm_cmd.cli,
	NULL,
};

const struct cli_prog bench_prog = {
	.name = "xpile-bench",
	.summary = "benchmarks for xpile",
	.description = "Every command prints one line per run; comparisons are ratios measured "
		       "in the same run, alternating the contenders so load from elsewhere hits "
		       "all alike.",
	.cmds = cmds,
	.version = XPILE_VERSION,
	.see_also = "xpile(8), xpile-loader(8), xpile-agent(8)",
	.sections =
		(const struct cli_section[]){
			{ "EXIT STATUS",
			  "0 success; 1 a run or its set-up failed; 2 bad usage (one line "
			  "names the option, the value and what is accepted)." },
			{ NULL } },
};

int bench_parse(const struct bench_cmd *c, int argc, char **argv, void *cfg)
{
	struct cli_args res;

	return cli_parse(&bench_prog, &c->cli, argc, argv, cfg, &res);
}

int main(int argc, char **argv)
{
	const struct cli_cmd *c;
	int rc = cli_select(&bench_prog, argc, argv, &c);

	if (rc != CLI_RUN)
		return rc;
	return ((const struct bench_cmd *)c)->run(argc - 1, argv + 1);
}
