// SPDX-License-Identifier: BSD-3-Clause
/*
 * xpile-loader: puts the xpile steer program on interfaces, manages its rules, wires
 * queues to cores and reports what interfaces support. Each command is a tools/cli
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
	{ .name = "verbose",
	  .short_name = 'v',
	  .kind = CLI_COUNT,
	  CLI_FIELD(struct args, verbose),
	  .help = "Print more about what is done: -v what each step does, -vv also libbpf's and "
		  "libxdp's debug output" },
	{ 0 },
};

static const struct cli_section sections[] = {
	{ "FILES", "Pins live in /sys/fs/bpf/xpile/IFACE (other network namespaces: "
		   "/sys/fs/bpf/xpile/ns<inode>/IFACE), also from inside 'ip netns exec'; wiring "
		   "plans in /run/xpile/[ns<inode>/]IFACE/wire.plan." },
	{ "EXIT STATUS",
	  "0 success; 1 the operation failed (one line names the cause and the fix); 2 bad "
	  "usage (one line names the option, the value and what is accepted)." },
	{ NULL },
};

static struct cli_prog prog = {
	.name = "xpile-loader",
	.summary = "load the xpile XDP steer program and manage its rules and wiring",
	.description = "Loads the xpile XDP steer program on network interfaces and manages it: "
		       "which packets go to AF_XDP sockets, stay in the kernel, are dropped, "
		       "bounced or redirected, and which core serves which queue.",
	.cmds = cmds,
	.common = common_opts,
	.sections = sections,
};

int fail(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "xpile-loader: ");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	return 1;
}

int open_existing(struct args *a, struct xp_steer **s)
{
	struct xp_steer_opts o = { .sz = sizeof(o),
				   .ifname = a->ifname,
				   .pin_path = a->pin_path,
				   .attach_existing = true };

	return xp_steer_open(&o, s) ? 1 : 0;
}

static int verbosity;

static int log_fn(enum xp_log_level lvl, const char *fmt, va_list ap)
{
	if ((int)lvl > verbosity)
		return 0;
	fprintf(stderr, "xpile-loader: ");
	return vfprintf(stderr, fmt, ap);
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
	static char version[96];
	struct args a = { .interval = 1 };
	const struct cli_cmd *cc;
	const struct cmd *c;
	struct cli_args res;
	int rc;

	/* As xdp-loader says it: "xpile-loader version X using libbpf version Y". */
	snprintf(version, sizeof(version), "version %s using libbpf version %s", XPILE_VERSION,
		 libbpf_version_string() + (libbpf_version_string()[0] == 'v'));
	prog.version = version;

	rc = cli_select(&prog, argc, argv, &cc);
	if (rc != CLI_RUN)
		return rc;
	rc = cli_parse(&prog, cc, argc - 1, argv + 1, &a, &res);
	if (rc != CLI_RUN)
		return rc;
	c = (const struct cmd *)cc; /* cli is the first member */
	if (res.argc) {
		a.ifname = res.argv[0];
		a.argc = res.argc - 1;
		a.argv = res.argv + 1;
	}
	verbosity = a.verbose >= 2 ? XP_LOG_DEBUG : a.verbose ? XP_LOG_INFO : XP_LOG_WARN;
	xp_set_log_fn(log_fn);
	if (a.verbose < 2) { /* the library names causes; libxdp's own chatter is for -vv */
		libxdp_set_print(NULL);
		libbpf_set_print(NULL);
	}
	return c->run(&a);
}
