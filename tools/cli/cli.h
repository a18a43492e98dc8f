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

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

enum cli_kind {
	CLI_FLAG, /* no value: the field (bool or integer) becomes 1 */
	CLI_CONST, /* no value: the field (an integer or enum) becomes .value */
	CLI_COUNT, /* no value, may repeat (-vv): the int field counts */
	CLI_NUM, /* unsigned integer in [.min, .max], written by the field's size */
	CLI_SECONDS, /* finite decimal in [.dmin, .dmax] into a double */
	CLI_ENUM, /* one of .names into an int (enum) field */
	CLI_STR, /* non-empty string: the field is a const char * */
	CLI_IFNAME, /* interface name (1..15 bytes, IFNAMSIZ) into a const char * */
	CLI_LIST, /* "0,2,4-7" into a 32-bit array (.cap), count at .count_off */
	CLI_MAC, /* aa:bb:cc:dd:ee:ff into unsigned char[6] */
	CLI_IPV4, /* dotted quad into a 32-bit field, network order */
	CLI_SIZE, /* bytes with an optional unit k, M, G (KiB...) in [.min, .max] */
	CLI_FUNC, /* .parse does it */
};

enum {
	CLI_F_REPEAT = 1 << 0, /* may be given more than once (each adds) */
	CLI_F_POW2 = 1 << 1, /* CLI_NUM/CLI_SIZE: a power of two */
	CLI_F_CPUS = 1 << 2, /* CLI_LIST/CLI_NUM: at most the last CPU of this machine */
	CLI_F_UNIQUE = 1 << 3, /* CLI_LIST: no entry twice */
	CLI_F_HIDDEN = 1 << 4, /* not in --help */
};

struct cli_name {
	const char *name;
	int value;
	bool alias; /* accepted, not shown: help and errors name the canonical one */
};

#define CLI_NAME(n, v)                    \
	{                                 \
		.name = (n), .value = (v) \
	}
#define CLI_ALIAS(n, v)                                  \
	{                                                \
		.name = (n), .value = (v), .alias = true \
	}

struct cli_opt;
/* CLI_FUNC: parses @v into @cfg; on error writes what is accepted to @why, returns -1. */
typedef int (*cli_parse_fn)(const struct cli_opt *o, const char *v, void *cfg, char *why,
			    size_t len);

struct cli_opt {
	const char *name; /* long name, without "--" */
	char short_name;
	enum cli_kind kind;
	size_t off, size; /* CLI_FIELD() */
	const char *metavar;
	const char *help;
	const char *section; /* starts a group of options in --help */
	uint64_t min, max; /* CLI_NUM, CLI_SIZE and CLI_LIST entries */
	double dmin, dmax; /* CLI_SECONDS */
	uint64_t multiple; /* CLI_NUM/CLI_SIZE: the value is a multiple of it */
	const struct cli_name *names; /* CLI_ENUM: ends with { NULL } */
	size_t count_off; /* CLI_LIST: offsetof the __u32 entry count */
	uint32_t cap; /* CLI_LIST: entries the array holds */
	int value; /* CLI_CONST */
	int excl; /* non-zero: options of the same group contradict each other */
	unsigned int flags; /* CLI_F_* */
	cli_parse_fn parse; /* CLI_FUNC */
	const char *env; /* exported with the given text when set (scripts read it) */
};

#define CLI_FIELD(type, field) .off = offsetof(type, field), .size = sizeof(((type *)0)->field)

/*
 * One table entry in the style of xdp-tools' DEFINE_OPTION: the long name, the kind
 * without CLI_, the field of @type, the metavar, the help, then any other field
 * (.short_name, .min, .max, .names, .flags...). A file usually defines
 *   #define OPT(...) CLI_OPT(struct my_cfg, __VA_ARGS__)
 */
#define CLI_OPT(type, n, k, f, mv, h, ...)                                                      \
	{                                                                                       \
		.name = (n), .kind = CLI_##k, CLI_FIELD(type, f), .metavar = (mv), .help = (h), \
		##__VA_ARGS__                                                                   \
	}

struct cli_args;

struct cli_section {
	const char *title; /* "SIGNALS" */
	const char *text; /* paragraphs; lines that start with a space are kept as they are */
};

struct cli_cmd {
	const char *name;
	const char *synopsis; /* after "PROG NAME ", one line per form */
	const char *summary; /* one line: NAME and the command list */
	const char *description;
	const struct cli_opt *opts; /* ends with { 0 } */
	const struct cli_section *sections; /* after OPTIONS, ends with { NULL } */
	const char *examples; /* one command per line */
	int min_args, max_args; /* positional arguments; max -1: any number */
	/* > 0: after this many positional arguments the rest are words (rule text: "prio
	 * -1" is a word, not an option) except the command's own options spelled in full. */
	int words_after;
	/* Checks what the table cannot (an argument that names an interface...) before the
	 * command runs or --parse-only prints; -1 with @why, the usage error's text. */
	int (*check)(const struct cli_cmd *c, void *cfg, const struct cli_args *res, char *why,
		     size_t len);
};

/*
 * One command in the style of xdp-tools' DEFINE_COMMAND: its name, the words after it
 * in SYNOPSIS (NULL: "[OPTIONS]"), the one-line summary, its option table, then any
 * other field (.min_args, .max_args, .description, .examples...).
 */
#define CLI_COMMAND(n, syn, sum, o, ...)                                                     \
	{                                                                                    \
		.name = (n), .synopsis = (syn), .summary = (sum), .opts = (o), ##__VA_ARGS__ \
	}

/* A program: its commands and the options every command takes (-v...). */
struct cli_prog {
	const char *name;
	const char *summary;
	const char *description;
	const struct cli_cmd *const *cmds; /* ends with NULL */
	const struct cli_opt *common; /* may be NULL */
	const struct cli_section *sections; /* of the program's page, may be NULL */
	const char *version; /* NULL: no --version */
};

#define CLI_MAX_OPTS 96
#define CLI_MAX_ARGS 256

/* What a parse found besides the config fields: positional arguments, given options. */
struct cli_args {
	int argc;
	char **argv;
	const struct cli_opt *given[CLI_MAX_OPTS];
	const char *value[CLI_MAX_OPTS]; /* the text of each given option */
	int ngiven;
};

/* Returned by the parsers when the command is to run; any other value is an exit status. */
#define CLI_RUN (-1)

/*
 * Finds the command argv[1] names. Handles "PROG", "PROG --help|-h|help", "PROG
 * --version" and "PROG --list-options" itself. With a single command, its options
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
