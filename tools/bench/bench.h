/* SPDX-License-Identifier: BSD-3-Clause */
/* xpile-bench: one subcommand per file, each declared as a tools/util/cli.h command. */
#ifndef XPILE_BENCH_H
#define XPILE_BENCH_H

#include "cli.h"
#include "xpile/mem.h"

struct bench_cmd {
	struct cli_cmd cli;
	int (*run)(int argc, char **argv); /* argv[0] is the subcommand */
};

/* Defines @var, the command @name (no positional arguments) that @fn runs. */
#define BENCH_COMMAND(var, fn, name, synopsis, summary, opts, ...)                           \
	const struct bench_cmd var = {                                                       \
		CLI_COMMAND(name, synopsis, summary, opts, .max_args = 0, ##__VA_ARGS__), fn \
	}

extern const struct cli_prog bench_prog;
extern const struct bench_cmd bench_alloc_cmd, bench_layout_cmd, bench_deal_cmd, bench_region_cmd,
	bench_xdp_cmd, bench_engine_cmd, bench_gen_cmd, bench_capture_cmd, bench_punt_cmd,
	bench_handover_cmd, bench_wake_cmd, bench_lpm_cmd;

/* Parses @c's options into @cfg: CLI_RUN, or the exit status (help, a usage error). */
int bench_parse(const struct bench_cmd *c, int argc, char **argv, void *cfg);

int bench_alloc(int argc, char **argv);
int bench_layout(int argc, char **argv);
int bench_deal(int argc, char **argv);
int bench_region(int argc, char **argv);
/* region --umems: N UMEMs from one arena against one mapping each (region_umems.c). */
int bench_region_umems(__u32 n, __u64 bytes, __u32 runs, enum xp_hugepages hp);
int bench_xdp(int argc, char **argv);
int bench_engine(int argc, char **argv);
int bench_gen(int argc, char **argv);
int bench_capture(int argc, char **argv);
int bench_punt(int argc, char **argv);
int bench_lpm(int argc, char **argv);

#endif
