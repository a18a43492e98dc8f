/* SPDX-License-Identifier: BSD-3-Clause */
/* xpile-bench: one subcommand per file, each registered in main.c's table. */
#ifndef XPILE_BENCH_H
#define XPILE_BENCH_H

struct bench_cmd {
	const char *name;
	const char *summary;
	int (*run)(int argc, char **argv); /* argv[0] is the subcommand */
};

int bench_alloc(int argc, char **argv);
int bench_layout(int argc, char **argv);
int bench_region(int argc, char **argv);
int bench_xdp(int argc, char **argv);
int bench_engine(int argc, char **argv);
int bench_gen(int argc, char **argv);

#endif
