/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The option tables' types (cli.h): what a command, an option and a program are. Apart
 * from the parser's calls, so that the tables' other readers (cli_man.c, cli_complete.c,
 * cli_version.c), which the parser calls, know the tables and not the parser.
 */
#ifndef XPILE_CLI_TYPES_H
#define XPILE_CLI_TYPES_H

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

/* --bpffs DIR, the same on every binary that pins or reads pins: a CLI_STR with
 * .env = "XPILE_BPFFS", which the library reads (xpile/bpffs.h has the whole rule). */
#define CLI_BPFFS_HELP                                                                            \
	"The host's bpffs, where the pins live (sets XPILE_BPFFS, which does the same). "         \
	"Default: /sys/fs/bpf as PID 1 sees it (kthreadd where PID 1 is closed), so every "       \
	"process finds the same pins, also from inside 'ip netns exec'; give it where that view " \
	"has none, e.g. under 'ip netns exec NS unshare --pid --mount-proc'."

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
	/* Pages of the other programs for SEE ALSO in the man pages ("xpile(8), ..."). */
	const char *see_also;
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

#endif /* XPILE_CLI_TYPES_H */
