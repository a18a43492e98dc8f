// SPDX-License-Identifier: BSD-3-Clause
/*
 * xpile-loader: puts the xpile steer program on interfaces, manages its rules, wires
 * queues to cores and reports what interfaces support. Each command is a tools/util/cli.h
 * table, so --help, the parser and its errors never disagree.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <bpf/libbpf.h>
#include <xdp/libxdp.h>

#include "loader.h"
#include "xpile/log.h"

static const struct cli_cmd *const cmds[] = {
	&cmd_load.cli, &cmd_unload.cli,	  &cmd_status.cli,  &cmd_stats.cli, &cmd_rule.cli,
	&cmd_wire.cli, &cmd_features.cli, &cmd_replace.cli, NULL,
};

static const struct cli_opt common_opts[] = {
	OPT("verbose", COUNT, verbose, NULL,
	    "Print more about what is done: -v what each step does, -vv also libbpf's and "
	    "libxdp's debug output",
	    .short_name = 'v'),
	OPT("bpffs", STR, bpffs, "DIR", CLI_BPFFS_HELP, .env = "XPILE_BPFFS"),
	{ 0 },
};

static const struct cli_section sections[] = {
	{ "FILES", "Pins live in the host's bpffs as /sys/fs/bpf/xpile/ns<inode>/IFACE, <inode> "
		   "that of the network namespace (the initial one too), the same for every "
		   "process in it however it was started (a shell, setsid, 'ip netns exec', "
		   "'unshare --pid --fork --mount-proc'); --bpffs names another bpffs. Wiring "
		   "plans are in /run/xpile/ns<inode>/IFACE/wire.plan. 'load' first removes the "
		   "directories of namespaces that no longer exist." },
	{ "EXIT STATUS",
	  "0 success; 1 the operation failed (one line names the cause and the fix); 2 bad "
	  "usage (one line names the option, the value and what is accepted)." },
	{ NULL },
};

static const struct cli_prog prog = {
	.name = "xpile-loader",
	.summary = "load the xpile XDP steer program and manage its rules and wiring",
	.description = "Loads the xpile XDP steer program on network interfaces and manages it: "
		       "which packets go to AF_XDP sockets, stay in the kernel, are dropped, "
		       "bounced or redirected, and which core serves which queue.",
	.cmds = cmds,
	.common = common_opts,
	.sections = sections,
	.version = XPILE_VERSION,
	.see_also = "xpile(8), xpile-agent(8), xpile-bench(8)",
};

/* What to run after a failed open of what is pinned: the library says what is wrong,
 * the loader what to do about it. */
static const char *open_hint(const char *ifname, int err, char *buf, size_t len)
{
	if (err == -ENOENT)
		snprintf(buf, len, "; run: xpile-loader load %s", ifname);
	else if (err == -ESTALE)
		snprintf(buf, len, "; run: xpile-loader unload %s; xpile-loader load %s", ifname,
			 ifname);
	else
		buf[0] = 0;
	return buf;
}

int loader_open_existing(struct loader_args *a, struct xp_steer **s)
{
	struct xp_steer_opts o = { .sz = sizeof(o),
				   .ifname = a->ifname,
				   .pin_path = a->pin_path,
				   .attach_existing = true };
	char why[1024], hint[160];
	int err;

	o.errbuf = why;
	o.errbuf_sz = sizeof(why);
	err = xp_steer_open(&o, s);
	if (!err)
		return 0;
	ut_say(1, "%s%s", why[0] ? why : strerror(-err),
	       open_hint(a->ifname, err, hint, sizeof(hint)));
	return 1;
}

/* The interface argument: the first positional one ("rule" also takes "rule VERB IFACE"). */
int loader_check_iface(const struct cli_cmd *c, void *cfg, const struct cli_args *res, char *why,
		       size_t len)
{
	static const char *const verbs[] = { "add", "del", "list", "replace", "default" };
	const char *ifn = res->argc ? res->argv[0] : NULL;
	char w[128];

	for (size_t i = 0; c == &cmd_rule.cli && res->argc > 1 && i < 5; i++)
		if (!strcmp(ifn, verbs[i]))
			ifn = res->argv[1];
	if (!ifn || !cli_check_ifname(ifn, w, sizeof(w)))
		return 0;
	snprintf(why, len, "IFACE %s: %s", ifn, w);
	return -1;
}

int main(int argc, char **argv)
{
	struct loader_args a = { .interval = 1 };
	const struct cli_cmd *cc;
	const struct loader_cmd *c;
	struct cli_args res;
	int rc;

	ut_say_prog(prog.name);
	rc = cli_select(&prog, argc, argv, &cc);
	if (rc != CLI_RUN)
		return rc;
	rc = cli_parse(&prog, cc, argc - 1, argv + 1, &a, &res);
	if (rc != CLI_RUN)
		return rc;
	c = (const struct loader_cmd *)cc; /* cli is the first member */
	if (res.argc) {
		a.ifname = res.argv[0];
		a.argc = res.argc - 1;
		a.argv = res.argv + 1;
	}
	ut_say_verbose(a.verbose);
	xp_set_log_fn(ut_say_xp);
	if (a.verbose < 2) { /* the library names causes; libxdp's own chatter is for -vv */
		libxdp_set_print(NULL);
		libbpf_set_print(NULL);
	}
	cli_json_begin();
	return cli_json_finish(c->run(&a));
}
