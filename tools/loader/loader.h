/* SPDX-License-Identifier: BSD-3-Clause */
/* xpile-loader: one file per subcommand group, each command described by a table. */
#ifndef XPILE_LOADER_H
#define XPILE_LOADER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "xpile/ethtool.h"
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
	const char *flow; /* wire --flow TEXT */
	const char *flow_del;
	bool flow_list;
	bool no_rss;
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
int flow_req_parse(const struct args *a, struct flow_req *r);
/* Whether the NIC can do what @r asks; else 1 after one line saying what it lacks. */
int flow_req_check(const struct args *a, const struct flow_req *r);
void wire_rss(struct args *a, struct out *o, const __u32 *queues, int n);
/* 0, or 1 after one line naming what the NIC lacks or refused (2: a queue it lacks). */
int wire_flows(struct args *a, struct out *o, const struct flow_req *r);

#endif
