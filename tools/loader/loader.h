/* SPDX-License-Identifier: BSD-3-Clause */
/* xpile-loader: one file per subcommand group, each command described by a table. */
#ifndef XPILE_LOADER_H
#define XPILE_LOADER_H

#include <stdbool.h>
#include <stddef.h>

#include "xpile/steer.h"

/* Everything any subcommand's options can set. */
struct args {
	const char *ifname;
	enum xp_steer_mode mode;
	const char *mode_str;
	const char *pin_path;
	const char *obj;
	const char *dflt;
	const char *queues;
	const char *cores;
	bool force;
	bool json;
	bool watch;
	bool all;
	unsigned interval;
	unsigned count;
	int verbose;
	int argc; /* positional arguments after IFACE */
	char **argv;
};

enum opt_kind { OPT_FLAG, OPT_STR, OPT_UINT, OPT_COUNT };

struct opt {
	const char *name;
	char short_name;
	enum opt_kind kind;
	size_t off; /* offsetof(struct args, field) */
	const char *metavar;
	const char *help;
};

struct cmd {
	const char *name;
	const char *usage; /* after "xpile-loader NAME " */
	const char *summary;
	const char *description; /* paragraphs, shown by --help */
	const struct opt *opts; /* terminated by an entry with name NULL */
	int need_ifname; /* 1 required, 0 optional, -1 none */
	bool rest; /* takes further positional arguments */
	int (*run)(struct args *a);
};

#define OPT_PIN                                                                       \
	{                                                                             \
		"pin-path", 'p', OPT_STR, offsetof(struct args, pin_path), "DIR",     \
			"Pin directory (default /sys/fs/bpf/xpile/[ns<inode>/]IFACE)" \
	}
#define OPT_JSON                                                                       \
	{                                                                              \
		"json", 'j', OPT_FLAG, offsetof(struct args, json), NULL, "Print JSON" \
	}

extern const struct cmd cmd_load, cmd_unload, cmd_status, cmd_stats, cmd_rule, cmd_wire,
	cmd_features;

/* Opens the steer of a->ifname that `load` set up; prints the cause on failure. */
int open_existing(struct args *a, struct xp_steer **s);
int fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#endif
