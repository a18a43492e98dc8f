// SPDX-License-Identifier: BSD-3-Clause
/*
 * xpile-loader: puts the xpile steer program on interfaces, manages its rules, wires
 * queues to cores and reports what interfaces support. Option parsing is driven by
 * each command's table, so --help and the parser never disagree.
 */
#include <errno.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <bpf/libbpf.h>
#include <xdp/libxdp.h>

#include "loader.h"
#include "xpile/log.h"

static const struct cmd *const cmds[] = { &cmd_load, &cmd_unload, &cmd_status,	&cmd_stats,
					  &cmd_rule, &cmd_wire,	  &cmd_features };
#define NCMDS (sizeof(cmds) / sizeof(cmds[0]))

static const struct opt common_opts[] = {
	{ "verbose", 'v', OPT_COUNT, offsetof(struct args, verbose), NULL,
	  "Print more about what is done (repeat for debug output)" },
	{ "help", 'h', OPT_FLAG, 0, NULL, "Show this help" },
	{ 0 },
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

static void print_opts(FILE *f, const struct opt *opts)
{
	for (const struct opt *o = opts; o && o->name; o++) {
		char left[64];

		snprintf(left, sizeof(left), "%c%c%s--%s%s%s", o->short_name ? '-' : ' ',
			 o->short_name ? o->short_name : ' ', o->short_name ? ", " : "  ", o->name,
			 o->metavar ? " " : "", o->metavar ? o->metavar : "");
		fprintf(f, "  %-28s %s\n", left, o->help);
	}
}

static void cmd_help(FILE *f, const struct cmd *c)
{
	fprintf(f, "Usage: xpile-loader %s %s\n\n%s\n", c->name, c->usage, c->summary);
	if (c->description)
		fprintf(f, "\n%s", c->description);
	fprintf(f, "\nOptions:\n");
	print_opts(f, c->opts);
	print_opts(f, common_opts);
}

static void usage(FILE *f)
{
	fprintf(f, "Usage: xpile-loader COMMAND [OPTIONS] [IFACE] ...\n\n"
		   "Loads the xpile XDP steer program on network interfaces and manages it:\n"
		   "which packets go to AF_XDP sockets, stay in the kernel, are dropped,\n"
		   "bounced or redirected, and which core serves which queue.\n\n"
		   "Commands:\n");
	for (size_t i = 0; i < NCMDS; i++)
		fprintf(f, "  %-9s %s\n", cmds[i]->name, cmds[i]->summary);
	fprintf(f, "\nRun 'xpile-loader COMMAND --help' for a command's options,\n"
		   "'xpile-loader --version' for the version.\n"
		   "Pins live in /sys/fs/bpf/xpile/IFACE (other network namespaces:\n"
		   "/sys/fs/bpf/xpile/ns<inode>/IFACE), also from inside 'ip netns exec'.\n");
}

static int verbosity;

static int log_fn(enum xp_log_level lvl, const char *fmt, va_list ap)
{
	if ((int)lvl > verbosity)
		return 0;
	fprintf(stderr, "xpile-loader: ");
	return vfprintf(stderr, fmt, ap);
}

static int parse(const struct cmd *c, int argc, char **argv, struct args *a)
{
	struct option lo[48];
	const struct opt *tab[48];
	char so[128];
	int n = 0, sl = 0, ch, idx;

	/* Options may follow the verb and IFACE ("rule list eth0 --json"). */
	for (int t = 0; t < 2; t++)
		for (const struct opt *o = t ? common_opts : c->opts; o && o->name; o++) {
			lo[n] = (struct option){ o->name, o->kind == OPT_STR || o->kind == OPT_UINT,
						 NULL, 1000 + n };
			tab[n] = o;
			if (o->short_name) {
				so[sl++] = o->short_name;
				if (lo[n].has_arg)
					so[sl++] = ':';
			}
			n++;
		}
	lo[n] = (struct option){ 0 };
	so[sl] = 0;
	optind = 1;
	while ((ch = getopt_long(argc, argv, so, lo, &idx)) != -1) {
		const struct opt *o = NULL;
		char *end;

		if (ch == '?')
			return fail("see 'xpile-loader %s --help'", c->name) ? 2 : 2;
		if (ch >= 1000)
			o = tab[ch - 1000];
		for (int i = 0; !o && i < n; i++)
			if (tab[i]->short_name == ch)
				o = tab[i];
		if (!strcmp(o->name, "help")) {
			cmd_help(stdout, c);
			exit(0);
		}
		switch (o->kind) {
		case OPT_FLAG:
			*(bool *)((char *)a + o->off) = true;
			break;
		case OPT_COUNT:
			(*(int *)((char *)a + o->off))++;
			break;
		case OPT_STR:
			*(const char **)((char *)a + o->off) = optarg;
			break;
		case OPT_UINT:
			errno = 0;
			*(unsigned *)((char *)a + o->off) = strtoul(optarg, &end, 0);
			if (errno || *end || !*optarg)
				return fail("--%s: expected a number, got '%s'", o->name, optarg) +
				       1;
			break;
		}
	}
	if (c->need_ifname >= 0 && optind < argc)
		a->ifname = argv[optind++];
	if (c->need_ifname == 1 && !a->ifname)
		return fail("%s: missing IFACE; usage: xpile-loader %s %s", c->name, c->name,
			    c->usage) +
		       1;
	a->argc = argc - optind;
	a->argv = argv + optind;
	if (a->argc && !c->rest)
		return fail("%s: unexpected argument '%s'; see 'xpile-loader %s --help'", c->name,
			    a->argv[0], c->name) +
		       1;
	return 0;
}

int main(int argc, char **argv)
{
	struct args a = { .interval = 1 };
	const struct cmd *c = NULL;
	int err;

	if (argc < 2 || !strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") ||
	    !strcmp(argv[1], "help")) {
		usage(argc < 2 ? stderr : stdout);
		return argc < 2 ? 2 : 0;
	}
	if (!strcmp(argv[1], "--version") || !strcmp(argv[1], "-V")) {
		/* as xdp-loader says it */
		printf("xpile-loader version %s using libbpf version %s\n", XPILE_VERSION,
		       libbpf_version_string() + (libbpf_version_string()[0] == 'v'));
		return 0;
	}
	for (size_t i = 0; i < NCMDS; i++)
		if (!strcmp(argv[1], cmds[i]->name))
			c = cmds[i];
	if (!c) {
		fail("unknown command '%s'; see 'xpile-loader --help'", argv[1]);
		return 2;
	}
	err = parse(c, argc - 1, argv + 1, &a);
	if (err)
		return err;
	verbosity = a.verbose >= 2 ? XP_LOG_DEBUG : a.verbose ? XP_LOG_INFO : XP_LOG_WARN;
	xp_set_log_fn(log_fn);
	if (a.verbose < 2) { /* the library names causes; libxdp's own chatter is for -vv */
		libxdp_set_print(NULL);
		libbpf_set_print(NULL);
	}
	return c->run(&a);
}
