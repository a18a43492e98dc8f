/* SPDX-License-Identifier: BSD-3-Clause */
/* xpile-loader: one file per subcommand group, each command declared as a tools/cli table. */
#ifndef XPILE_LOADER_H
#define XPILE_LOADER_H

#include <stdbool.h>
#include <stddef.h>

#include "cli.h"
#include "xpile/steer.h"

/* Everything any subcommand's options can set. */
struct args {
	const char *ifname;
	int mode; /* enum xp_steer_mode */
	const char *pin_path;
	const char *obj;
	const char *dflt;
	__u32 queues[XP_WIRE_MAX], nqueues;
	__u32 cores[XP_WIRE_MAX], ncores;
	bool force;
	bool json;
	bool watch;
	unsigned interval;
	unsigned count;
	int verbose;
	int argc; /* positional arguments after IFACE */
	char **argv;
};

/* A command: its cli table and what runs it (the first positional argument is IFACE). */
struct cmd {
	struct cli_cmd cli;
	int (*run)(struct args *a);
};

#define OPT_PIN                                                                       \
	{                                                                             \
		.name = "pin-path", .short_name = 'p', .kind = CLI_STR,               \
		CLI_FIELD(struct args, pin_path), .metavar = "DIR",                   \
		.help = "Pin directory (default /sys/fs/bpf/xpile/[ns<inode>/]IFACE)" \
	}
#define OPT_JSON                                                                                   \
	{                                                                                          \
		.name = "json", .short_name = 'j', .kind = CLI_FLAG, CLI_FIELD(struct args, json), \
		.help = "Print JSON"                                                               \
	}

extern const struct cmd cmd_load, cmd_unload, cmd_status, cmd_stats, cmd_rule, cmd_wire,
	cmd_features;

/* Opens the steer of a->ifname that `load` set up; prints the cause on failure. */
int open_existing(struct args *a, struct xp_steer **s);
/* Every command's cli check: the IFACE argument is an interface name (IFNAMSIZ). */
int loader_check_iface(const struct cli_cmd *c, void *cfg, const struct cli_args *res, char *why,
		       size_t len);
int fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#endif
