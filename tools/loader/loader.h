/* SPDX-License-Identifier: BSD-3-Clause */
/* xpile-loader: one file per subcommand group, each command declared as a tools/util/cli.h table. */
#ifndef XPILE_LOADER_H
#define XPILE_LOADER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "xpile/ethtool.h"
#include "cli.h"
#include "say.h"
#include "xpile/wire.h"
#include "xpile/steer.h"

/* Everything any subcommand's options can set. */
struct loader_args {
	const char *ifname;
	int mode; /* enum xp_steer_mode */
	const char *pin_path;
	const char *bpffs; /* --bpffs: exported as XPILE_BPFFS */
	const char *obj;
	struct xp_action dflt; /* --default */
	bool has_dflt;
	__u32 queues[XP_WIRE_MAX], nqueues;
	__u32 cores[XP_WIRE_MAX], ncores;
	const char *flow; /* wire --flow TEXT */
	const char *flow_del;
	bool flow_list;
	bool no_rss;
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
struct loader_cmd {
	struct cli_cmd cli;
	int (*run)(struct loader_args *a);
};

#define OPT(...) CLI_OPT(struct loader_args, __VA_ARGS__)
#define OPT_PIN                                                                     \
	OPT("pin-path", STR, pin_path, "DIR",                                       \
	    "Pin directory (default /sys/fs/bpf/xpile/ns<inode>/IFACE, see FILES)", \
	    .short_name = 'p')
/* --obj, for load and replace: @what is the object's part in the command. */
#define OPT_OBJ(what)                                                            \
	OPT("obj", STR, obj, "FILE",                                             \
	    what " (default steer.o from $XPILE_BPF_DIR or next to the binary)", \
	    .short_name = 'o')
#define OPT_JSON OPT("json", FLAG, json, NULL, "Print JSON", .short_name = 'j')

/* Defines @var, the command @name that @fn runs on its one argument, IFACE (checked by
 * loader_check_iface): the shape of most commands, the rest written out. */
#define LOADER_IFACE_COMMAND(var, fn, name, summary, opts, ...)                                  \
	const struct loader_cmd var = { CLI_COMMAND(name, "[OPTIONS] IFACE", summary, opts,      \
						    .min_args = 1, .max_args = 1,                \
						    .check = loader_check_iface, ##__VA_ARGS__), \
					fn }

extern const struct loader_cmd cmd_load, cmd_unload, cmd_status, cmd_stats, cmd_rule, cmd_wire,
	cmd_features, cmd_replace;

/* Opens the steer of a->ifname that `load` set up; prints the cause on failure: 0 or 1.
 * A failure elsewhere is one line and exit status 1: return ut_say(1, ...) (say.h). */
int loader_open_existing(struct loader_args *a, struct xp_steer **s);
/* Every command's cli check: the IFACE argument is an interface name (IFNAMSIZ). */
int loader_check_iface(const struct cli_cmd *c, void *cfg, const struct cli_args *res, char *why,
		       size_t len);

/* Step-by-step output (out.c): a line per step, or with --json one object at the end. */
struct out {
	bool json, first;
	FILE *steps, *more; /* the "steps" array; further members, each ",\"key\":value" */
	char *steps_buf, *more_buf;
	size_t steps_len, more_len;
};
int out_open(struct out *o, bool json);
void out_step(struct out *o, const char *step, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
void out_print(struct out *o, const char *ifname);
void out_close(struct out *o);
void json_str(FILE *f, const char *s);

/* wire's steering in the NIC (flow.c): RSS over the wired queues, ntuple flows. */
struct flow_req {
	bool add, del, list;
	struct xp_flow flow;
	__u32 del_id;
};
/* Reads --flow and --flow-del before anything changes; 0, or 2 after one line. */
int flow_req_parse(const struct loader_args *a, struct flow_req *r);
/* Whether the NIC can do what @r asks; else 1 after one line saying what it lacks. */
int flow_req_check(const struct loader_args *a, const struct flow_req *r);
void wire_rss(struct loader_args *a, struct out *o, const __u32 *queues, int n);
/* 0, or 1 after one line naming what the NIC lacks or refused (2: a queue it lacks). */
int wire_flows(struct loader_args *a, struct out *o, const struct flow_req *r);

#endif
