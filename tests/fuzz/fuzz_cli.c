// SPDX-License-Identifier: BSD-3-Clause
/*
 * The command-line framework (tools/util/cli.c, cli.h) on random argument vectors, against
 * what cli.h promises: a parse returns CLI_RUN, 0 (help, --parse-only) or 2; a usage
 * error is ONE line on stderr naming the program; when the command is to run, every
 * option given holds a value of its kind that reads back from its text the way
 * xpile/text.h reads numbers (decimal unless 0x, no sign, range checked; seconds
 * finite), an option that is not a list or a count was given once, options of an
 * exclusive group do not meet, and the positional arguments are within the command's
 * bounds.
 *
 * Input: byte 0 picks the command; the rest are the arguments, NUL-separated.
 * Built only where tools/util/cli.c exists (branch cli); elsewhere the replay skips.
 */
#if __has_include("../../tools/util/cli.c")
#include "../../tools/util/cli.c"
/* cli.c calls these for --version, --json errors, --man and --bash-completion. */
#include "../../tools/util/cli_json.c"
#include "../../tools/util/say.c"
#include "../../tools/util/cli_version.c"
#include "../../tools/util/cli_man.c"
#include "../../tools/util/cli_complete.c"
#define HAVE_CLI 1
#endif

#include <fcntl.h>
#include <sys/mman.h>

#include "fuzz.h"
#include "xpile/text.h"

#ifdef HAVE_CLI
enum color { RED = 1, GREEN = 2, BLUE = 7 };

struct cfg {
	uint32_t batch;
	uint16_t port;
	uint8_t small;
	uint64_t big;
	uint32_t ring;
	uint64_t size;
	double secs;
	int color;
	const char *name;
	const char *ifname;
	uint32_t cores[8];
	uint32_t ncores;
	uint32_t queues[4];
	uint32_t nqueues;
	unsigned char mac[6];
	uint32_t ip;
	bool flag;
	int mode;
	int verbose;
	bool quiet;
};

static const struct cli_name colors[] = { CLI_NAME("red", RED),
					  CLI_NAME("green", GREEN),
					  CLI_NAME("blue", BLUE),
					  CLI_ALIAS("b", BLUE),
					  { 0 } };

#define OPT(...) CLI_OPT(struct cfg, __VA_ARGS__)
static const struct cli_opt run_opts[] = {
	OPT("batch", NUM, batch, "N", "batch", .short_name = 'b', .min = 1, .max = 256),
	OPT("port", NUM, port, "PORT", "port"),
	OPT("small", NUM, small, "N", "u8", .min = 3),
	OPT("big", NUM, big, "N", "u64", .multiple = 8),
	OPT("ring", NUM, ring, "N", "ring", .min = 64, .max = 65536, .flags = CLI_F_POW2),
	OPT("size", SIZE, size, "BYTES", "size", .min = 4096, .max = UINT64_C(1) << 40),
	OPT("secs", SECONDS, secs, "S", "seconds", .short_name = 't', .dmin = 0.001, .dmax = 3600),
	OPT("color", ENUM, color, "C", "color", .names = colors),
	OPT("name", STR, name, "NAME", "name", .flags = CLI_F_REPEAT),
	OPT("iface", IFNAME, ifname, "IFACE", "iface", .short_name = 'i'),
	OPT("cores", LIST, cores, "LIST", "cores", .cap = 8, .max = 63,
	    .count_off = offsetof(struct cfg, ncores), .flags = CLI_F_UNIQUE),
	OPT("queues", LIST, queues, "LIST", "queues", .cap = 4, .min = 1, .max = 1000,
	    .count_off = offsetof(struct cfg, nqueues)),
	OPT("mac", MAC, mac, "MAC", "mac"),
	OPT("ip", IPV4, ip, "IP", "ip"),
	OPT("flag", FLAG, flag, NULL, "flag", .short_name = 'f'),
	OPT("fast", CONST, mode, NULL, "fast", .value = 3, .excl = 1),
	OPT("slow", CONST, mode, NULL, "slow", .value = -2, .excl = 1),
	{ 0 },
};
static const struct cli_opt rule_opts[] = {
	OPT("batch", NUM, batch, "N", "batch", .min = 1, .max = 256),
	{ 0 },
};
static const struct cli_opt common[] = {
	OPT("verbose", COUNT, verbose, NULL, "more", .short_name = 'v', .excl = 2),
	OPT("quiet", FLAG, quiet, NULL, "less", .short_name = 'q', .excl = 2),
	{ 0 },
};
static const struct cli_cmd cmd_run = CLI_COMMAND("run", NULL, "run", run_opts, .max_args = 2);
static const struct cli_cmd cmd_rule = CLI_COMMAND("rule", "IFACE WORDS...", "rule", rule_opts,
						   .min_args = 1, .max_args = -1, .words_after = 1);
static const struct cli_cmd *const cmds[] = { &cmd_run, &cmd_rule, NULL };
static const struct cli_prog prog = { .name = "xpf",
				      .summary = "fuzz",
				      .cmds = cmds,
				      .common = common,
				      .version = "0" };

static int err_fd = -1, null_fd = -1;

static bool is_pow2(uint64_t x)
{
	return x && !(x & (x - 1));
}

/* What the option's text says, read again independently of the parser. */
static void check_given(const struct cli_opt *o, const char *v, const struct cfg *c)
{
	uint64_t x;
	double d;

	switch (o->kind) {
	case CLI_NUM: {
		uint64_t max = opt_max(o);

		FUZZ_CHECK(!xp_parse_u64(v, o->min, max, &x), "--%s %s accepted, text.h refuses it",
			   o->name, v);
		FUZZ_CHECK(get_uint(o, (void *)c) == x, "--%s %s holds %" PRIu64, o->name, v,
			   get_uint(o, (void *)c));
		FUZZ_CHECK(!(o->flags & CLI_F_POW2) || is_pow2(x), "--%s %s not a power of two",
			   o->name, v);
		FUZZ_CHECK(o->multiple <= 1 || x % o->multiple == 0, "--%s %s not a multiple",
			   o->name, v);
		break;
	}
	case CLI_SIZE:
		x = get_uint(o, (void *)c);
		FUZZ_CHECK(x >= o->min && x <= opt_max(o),
			   "--%s %s holds %" PRIu64 ", out of range", o->name, v, x);
		break;
	case CLI_SECONDS:
		FUZZ_CHECK(!xp_parse_double(v, o->dmin, o->dmax, &d) && d == c->secs,
			   "--%s %s holds %g", o->name, v, c->secs);
		break;
	case CLI_ENUM: {
		const struct cli_name *e = o->names;

		while (e->name && strcmp(e->name, v))
			e++;
		FUZZ_CHECK(e->name && c->color == e->value, "--%s %s holds %d", o->name, v,
			   c->color);
		break;
	}
	case CLI_IFNAME:
		FUZZ_CHECK(*v && strlen(v) <= 15 && !strpbrk(v, "/ \t\n:") && c->ifname == v,
			   "--%s '%s' accepted", o->name, v);
		break;
	case CLI_STR:
		FUZZ_CHECK(*v, "--%s: an empty string accepted", o->name);
		break;
	case CLI_LIST: {
		const uint32_t *a = o->off == offsetof(struct cfg, cores) ? c->cores : c->queues;
		uint32_t n = o->off == offsetof(struct cfg, cores) ? c->ncores : c->nqueues;
		char buf[256];
		size_t off = 0;
		uint32_t again[8];

		FUZZ_CHECK(n >= 1 && n <= o->cap, "--%s %s: %u entries", o->name, v, n);
		for (uint32_t i = 0; i < n; i++) {
			FUZZ_CHECK(a[i] >= o->min && a[i] <= opt_max(o), "--%s %s: entry %u",
				   o->name, v, a[i]);
			for (uint32_t j = 0; (o->flags & CLI_F_UNIQUE) && j < i; j++)
				FUZZ_CHECK(a[i] != a[j], "--%s %s: %u twice", o->name, v, a[i]);
			off += (size_t)snprintf(buf + off, sizeof(buf) - off, "%s%u", i ? "," : "",
						a[i]);
		}
		char why[128];
		int m = cli_parse_list(buf, o->min, opt_max(o), o->flags & CLI_F_UNIQUE, again,
				       o->cap, why, sizeof(why));

		FUZZ_CHECK(m == (int)n && !memcmp(again, a, n * sizeof(*a)),
			   "--%s %s: reprinted '%s' reads %d entries", o->name, v, buf, m);
		break;
	}
	case CLI_MAC: {
		char buf[32];
		unsigned char m2[6];

		snprintf(buf, sizeof(buf), "%02x:%02x:%02x:%02x:%02x:%02x", c->mac[0], c->mac[1],
			 c->mac[2], c->mac[3], c->mac[4], c->mac[5]);
		FUZZ_CHECK(!parse_mac(buf, m2) && !memcmp(m2, c->mac, 6), "--mac %s", v);
		/* every part one or two hex digits, five colons */
		int colons = 0;

		for (const char *p = v; *p; p++)
			colons += *p == ':';
		FUZZ_CHECK(colons == 5 && strspn(v, "0123456789abcdefABCDEF:") == strlen(v),
			   "--mac '%s' accepted", v);
		break;
	}
	case CLI_IPV4: {
		uint32_t ip;

		FUZZ_CHECK(inet_pton(AF_INET, v, &ip) == 1 && ip == c->ip, "--ip %s", v);
		break;
	}
	default:
		break;
	}
}

static void check_run(const struct cli_cmd *cmd, const struct cfg *c, const struct cli_args *res,
		      char **words, int nwords)
{
	for (int i = 0; i < res->ngiven; i++) {
		const struct cli_opt *o = res->given[i];

		check_given(o, res->value[i], c);
		for (int k = 0; k < i; k++) {
			const struct cli_opt *p = res->given[k];

			FUZZ_CHECK(p != o || o->kind == CLI_COUNT || (o->flags & CLI_F_REPEAT),
				   "--%s given twice and accepted", o->name);
			FUZZ_CHECK(p == o || !o->excl || p->excl != o->excl,
				   "--%s and --%s contradict each other, both accepted", p->name,
				   o->name);
		}
	}
	FUZZ_CHECK(res->argc >= cmd->min_args && (cmd->max_args < 0 || res->argc <= cmd->max_args),
		   "%d positional arguments accepted", res->argc);
	/* positional arguments are words of the input, in order */
	for (int i = 0, w = 0; i < res->argc; i++, w++) {
		while (w < nwords && words[w] != res->argv[i])
			w++;
		FUZZ_CHECK(w < nwords, "argument %d '%s' is not an input word in order", i,
			   res->argv[i]);
	}
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	err_fd = memfd_create("stderr", MFD_CLOEXEC);
	null_fd = open("/dev/null", O_WRONLY | O_CLOEXEC);
	return err_fd < 0 || null_fd < 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static char buf[4096], out[4096];
	char *argv[66], *words[66];
	struct cli_args res;
	struct cfg c;
	const struct cli_cmd *cmd;
	int argc = 1, nwords, rc, save_err, save_out;
	size_t n;
	ssize_t got;

	if (!size || size >= sizeof(buf))
		return 0;
	cmd = data[0] & 1 ? &cmd_rule : &cmd_run;
	memcpy(buf, data + 1, size - 1);
	buf[size - 1] = 0;
	argv[0] = (char *)cmd->name;
	for (char *p = buf; p < buf + size - 1 && argc < 65; p += strlen(p) + 1)
		argv[argc++] = p;
	argv[argc] = NULL;
	nwords = argc;
	memcpy(words, argv, sizeof(argv[0]) * (size_t)(argc + 1));
	memset(&c, 0, sizeof(c));

	fflush(stdout);
	save_err = dup(2);
	save_out = dup(1);
	FUZZ_CHECK(save_err >= 0 && save_out >= 0, "dup");
	FUZZ_CHECK(!ftruncate(err_fd, 0) && lseek(err_fd, 0, SEEK_SET) == 0, "memfd");
	dup2(err_fd, 2);
	dup2(null_fd, 1);
	rc = cli_parse(&prog, cmd, argc, argv, &c, &res);
	fflush(stdout);
	dup2(save_out, 1);
	dup2(save_err, 2);
	close(save_out);
	close(save_err);
	got = pread(err_fd, out, sizeof(out) - 1, 0);
	n = got > 0 ? (size_t)got : 0;
	out[n] = 0;

	FUZZ_CHECK(rc == CLI_RUN || rc == 0 || rc == 2, "cli_parse returned %d", rc);
	if (rc == 2) {
		bool nl_in_input = false;

		for (int i = 1; i < nwords; i++)
			nl_in_input |= strchr(words[i], '\n') != NULL;
		FUZZ_CHECK(n && !strncmp(out, "xpf: ", 5), "usage error without its line: '%s'",
			   out);
		FUZZ_CHECK_KNOWN(nl_in_input ? "cli-newline" : "cli-lines",
				 out[n - 1] == '\n' && !memchr(out, '\n', n - 1),
				 "a usage error of more than one line: '%s'", out);
	} else {
		FUZZ_CHECK(!n, "rc %d and stderr '%s'", rc, out);
	}
	if (rc == CLI_RUN)
		check_run(cmd, &c, &res, words, nwords);
	return 0;
}
#else
int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	fprintf(stderr, "SKIP: tools/util/cli.c is not in this tree (branch cli)\n");
	exit(77);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	return 0;
}
#endif
