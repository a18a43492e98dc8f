/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * One command line for every xpile binary (xpile, xpile-loader, xpile-bench).
 *
 * A command is a table of options, each naming its kind, the field of the command's
 * config struct it fills, its range or names, a metavar and its help. The parser,
 * --help (a man page: NAME, SYNOPSIS, DESCRIPTION, OPTIONS, sections, EXAMPLES) and
 * the error messages all come from the table, so they cannot disagree:
 *
 *   static const struct cli_opt opts[] = {
 *           CLI_OPT(struct cfg, "batch", NUM, batch, "N", "Descriptors per batch.",
 *                   .min = 1, .max = 256),
 *           { 0 },
 *   };
 *
 * Rules the same everywhere: numbers are decimal unless 0x (xpile/text.h), no sign,
 * range checked; seconds are finite; an option that is not a list or a count may be
 * given once, and options of one exclusive group (.excl) contradict each other; a
 * flag takes no value; string values are never empty. Every error is ONE line naming
 * the option, the value and what is accepted, and the exit status is 2.
 *
 * Hidden options every command takes, for tests: --list-options prints, per option,
 * bad arguments the parser must refuse (one per line, tab separated, after the
 * command's name); --parse-only parses, prints each given option as name=value and
 * exits 0 without running anything.
 */
#ifndef XPILE_CLI_H
#define XPILE_CLI_H
#include "cli_json.h"
#include "cli_types.h"

/* Returned by the parsers when the command is to run; any other value is an exit status. */
#define CLI_RUN (-1)

/*
 * Finds the command argv[1] names. Handles "PROG" (a usage error: one line naming
 * the commands), "PROG --help|-h|help", "PROG --version" and "PROG --list-options"
 * itself. With a single command, its options
 * may come right after PROG. Returns CLI_RUN with *@cmd set, or an exit status.
 */
int cli_select(const struct cli_prog *p, int argc, char **argv, const struct cli_cmd **cmd);

/*
 * Parses the options and arguments of @c (argv[0] is the command's name) into @cfg and
 * @res. Returns CLI_RUN, 0 after --help/--list-options/--parse-only, or 2 after
 * printing one line for a usage error.
 */
int cli_parse(const struct cli_prog *p, const struct cli_cmd *c, int argc, char **argv, void *cfg,
	      struct cli_args *res);

/* The text @name was given with, or NULL if it was not given. */
const char *cli_given(const struct cli_args *res, const char *name);

/* Prints the usage error "PROG CMD: MESSAGE (see 'PROG CMD --help')"; returns 2. */
int cli_usage_error(const struct cli_prog *p, const struct cli_cmd *c, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* Checks an interface name (1..15 bytes, no '/', no space); writes why to @why. */
int cli_check_ifname(const char *s, char *why, size_t len);

/*
 * Parses a range list "0,2,4-7" of values in [@min, @max] into @out (@cap entries),
 * with @unique no value twice. Returns the entry count or -1 with @why set.
 */
int cli_parse_list(const char *s, uint64_t min, uint64_t max, bool unique, uint32_t *out,
		   uint32_t cap, char *why, size_t len);

void cli_help_cmd(FILE *f, const struct cli_prog *p, const struct cli_cmd *c);
void cli_help_prog(FILE *f, const struct cli_prog *p);

#endif
