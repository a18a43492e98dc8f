// SPDX-License-Identifier: BSD-3-Clause
/*
 * The command-line framework (see cli.h): one parser, one help writer and one error
 * format for every binary. Numbers go through xpile/text.h only.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "cli_complete.h"
#include "cli_man.h"
#include "cli_version.h"
#include "xpile/text.h"

#define WIDTH 80

/* Whether @argv asks for JSON: "--json" (or the short name of a "json" option). */
static bool argv_json(int argc, char **argv, const struct cli_opt *const *tab, int n)
{
	for (int i = 1; i < argc && strcmp(argv[i], "--"); i++)
		for (int k = 0; k < n; k++)
			if (!strcmp(tab[k]->name, "json") &&
			    (!strcmp(argv[i], "--json") ||
			     (tab[k]->short_name && argv[i][0] == '-' &&
			      argv[i][1] == tab[k]->short_name && !argv[i][2])))
				return true;
	return false;
}

/* --version and --version --json, in either order. */
static int print_version(const struct cli_prog *p, int argc, char **argv)
{
	bool json = false;

	for (int i = 1; i < argc; i++)
		json |= !strcmp(argv[i], "--json");
	cli_version(stdout, p, json);
	return 0;
}

static bool takes_value(const struct cli_opt *o)
{
	return o->kind != CLI_FLAG && o->kind != CLI_CONST && o->kind != CLI_COUNT;
}

static bool single(const struct cli_prog *p)
{
	return p->cmds[0] && !p->cmds[1];
}

static void *field(const struct cli_opt *o, void *cfg)
{
	return (char *)cfg + o->off;
}

static uint64_t type_max(const struct cli_opt *o)
{
	return o->size >= 8 ? UINT64_MAX : (UINT64_C(1) << (8 * o->size)) - 1;
}

/* The effective maximum: .max, else what the field holds; CLI_F_CPUS: the last CPU. */
static uint64_t opt_max(const struct cli_opt *o)
{
	uint64_t m = o->kind == CLI_LIST ? (o->max ? o->max : UINT32_MAX) :
					   (o->max && o->max < type_max(o) ? o->max : type_max(o));

	if (o->flags & CLI_F_CPUS) {
		long n = sysconf(_SC_NPROCESSORS_CONF);

		m = n > 0 ? (uint64_t)n - 1 : 0;
	}
	return m;
}

static void put_uint(const struct cli_opt *o, void *cfg, uint64_t v)
{
	void *f = field(o, cfg);

	switch (o->size) {
	case 1: {
		uint8_t x = (uint8_t)v;
		memcpy(f, &x, 1);
		break;
	}
	case 2: {
		uint16_t x = (uint16_t)v;
		memcpy(f, &x, 2);
		break;
	}
	case 4: {
		uint32_t x = (uint32_t)v;
		memcpy(f, &x, 4);
		break;
	}
	default:
		memcpy(f, &v, 8);
	}
}

static uint64_t get_uint(const struct cli_opt *o, void *cfg)
{
	void *f = field(o, cfg);
	uint8_t b;
	uint16_t h;
	uint32_t w;
	uint64_t d;

	switch (o->size) {
	case 1:
		memcpy(&b, f, 1);
		return b;
	case 2:
		memcpy(&h, f, 2);
		return h;
	case 4:
		memcpy(&w, f, 4);
		return w;
	default:
		memcpy(&d, f, 8);
		return d;
	}
}

/* Prints @text at @indent: paragraphs wrapped, lines starting with a space kept. */
static void wrap(FILE *f, const char *text, int indent)
{
	const char *p = text;
	int col = 0;

	while (*p) {
		const char *nl = strchr(p, '\n');
		size_t len = nl ? (size_t)(nl - p) : strlen(p);

		if (!len || *p == ' ') {
			if (col)
				fputc('\n', f);
			col = 0;
			if (len)
				fprintf(f, "%*s%.*s", indent, "", (int)len, p);
			fputc('\n', f);
		} else {
			const char *w = p, *end = p + len;

			while (w < end) {
				const char *sp = memchr(w, ' ', (size_t)(end - w));
				int wl = (int)((sp ? sp : end) - w);

				if (col && col + 1 + wl > WIDTH) {
					fputc('\n', f);
					col = 0;
				}
				if (!col)
					col = fprintf(f, "%*s", indent, "");
				else
					col += fprintf(f, " ");
				col += fprintf(f, "%.*s", wl, w);
				w += wl;
				while (w < end && *w == ' ')
					w++;
			}
		}
		p += len;
		if (*p == '\n')
			p++;
	}
	if (col)
		fputc('\n', f);
}

static void help_opt(FILE *f, const struct cli_opt *o)
{
	if (o->flags & CLI_F_HIDDEN)
		return;
	if (o->section)
		fprintf(f, "\n  %s\n", o->section);
	fprintf(f, "    ");
	if (o->short_name)
		fprintf(f, "-%c, ", o->short_name);
	fprintf(f, "--%s%s%s\n", o->name, takes_value(o) ? " " : "",
		takes_value(o) ? (o->metavar ? o->metavar : "VALUE") : "");
	if (o->help)
		wrap(f, o->help, 8);
}

static void help_sections(FILE *f, const struct cli_section *s)
{
	for (; s && s->title; s++) {
		fprintf(f, "\n%s\n", s->title);
		wrap(f, s->text, 4);
	}
}

static void help_synopsis(FILE *f, const struct cli_prog *p, const struct cli_cmd *c)
{
	const char *s = c->synopsis ? c->synopsis : "[OPTIONS]";

	while (*s) {
		size_t len = strcspn(s, "\n");

		fprintf(f, "    %s %s %.*s\n", p->name, c->name, (int)len, s);
		s += len + (s[len] == '\n');
	}
}

void cli_help_cmd(FILE *f, const struct cli_prog *p, const struct cli_cmd *c)
{
	const struct cli_opt *o;

	if (single(p))
		fprintf(f, "NAME\n    %s - %s\n\nSYNOPSIS\n", p->name, p->summary);
	else
		fprintf(f, "NAME\n    %s %s - %s\n\nSYNOPSIS\n", p->name, c->name, c->summary);
	help_synopsis(f, p, c);
	fprintf(f, "    %s %s --help\n", p->name, c->name);
	if (single(p) && p->version)
		fprintf(f, "    %s --version\n", p->name);
	if (c->description) {
		fprintf(f, "\nDESCRIPTION\n");
		wrap(f, c->description, 4);
	}
	fprintf(f, "\nOPTIONS\n");
	for (o = c->opts; o && o->name; o++)
		help_opt(f, o);
	if (p->common && p->common->name)
		fprintf(f, "\n  Common options\n");
	for (o = p->common; o && o->name; o++)
		help_opt(f, o);
	fprintf(f, "    -h, --help\n        Print this help and exit.\n");
	if (single(p) && p->version)
		fprintf(f, "    -V, --version\n        Print the version and exit.\n");
	help_sections(f, c->sections);
	if (single(p))
		help_sections(f, p->sections);
	for (const char *e = c->examples; e && *e;) { /* one command a line, as given */
		size_t len = strcspn(e, "\n");

		if (e == c->examples)
			fprintf(f, "\nEXAMPLES\n");
		fprintf(f, "    %.*s\n", (int)len, e);
		e += len + (e[len] == '\n');
	}
}

void cli_help_prog(FILE *f, const struct cli_prog *p)
{
	const struct cli_cmd *const *c;

	if (single(p)) {
		cli_help_cmd(f, p, p->cmds[0]);
		return;
	}
	fprintf(f,
		"NAME\n    %s - %s\n\nSYNOPSIS\n    %s COMMAND [OPTIONS] [ARGUMENTS]\n"
		"    %s COMMAND --help\n    %s --help\n",
		p->name, p->summary, p->name, p->name, p->name);
	if (p->version)
		fprintf(f, "    %s --version [--json]\n", p->name);
	if (p->description) {
		fprintf(f, "\nDESCRIPTION\n");
		wrap(f, p->description, 4);
	}
	fprintf(f, "\nCOMMANDS\n");
	for (c = p->cmds; *c; c++)
		fprintf(f, "    %-10s %s\n", (*c)->name, (*c)->summary);
	if (p->common && p->common->name) {
		fprintf(f, "\nCOMMON OPTIONS\n");
		for (const struct cli_opt *o = p->common; o->name; o++)
			help_opt(f, o);
	}
	help_sections(f, p->sections);
	fprintf(f, "\nRun '%s COMMAND --help' for a command's options.\n", p->name);
}

static const char *shown(const char *v, char *buf, size_t len)
{
	if (!*v || strchr(v, ' '))
		snprintf(buf, len, "'%.64s'", v);
	else
		snprintf(buf, len, "%.64s", v);
	return buf;
}

static int verror(const struct cli_prog *p, const struct cli_cmd *c, const char *fmt, va_list ap)
{
	char msg[512];

	/* A quoted argument may hold a newline or another control byte: escape it, so
	 * the error stays one line. */
	vsnprintf(msg, sizeof(msg), fmt, ap);
	if (cli_json_wanted())
		cli_json_error(stdout, 2, msg);
	fprintf(stderr, "%s: ", p->name);
	for (const unsigned char *m = (const unsigned char *)msg; *m; m++)
		if (*m < 0x20 || *m == 0x7f)
			fprintf(stderr, "\\x%02x", *m);
		else
			fputc(*m, stderr);
	if (c)
		fprintf(stderr, " (see '%s %s --help')\n", p->name, c->name);
	else
		fprintf(stderr, " (see '%s --help')\n", p->name);
	return 2;
}

int cli_usage_error(const struct cli_prog *p, const struct cli_cmd *c, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	verror(p, c, fmt, ap);
	va_end(ap);
	return 2;
}

int cli_check_ifname(const char *s, char *why, size_t len)
{
	if (!*s) {
		snprintf(why, len, "expected an interface name, not an empty value");
		return -1;
	}
	if (strlen(s) > 15) {
		snprintf(why, len,
			 "an interface name has at most 15 characters (IFNAMSIZ 16), this one %zu",
			 strlen(s));
		return -1;
	}
	if (strpbrk(s, "/ \t\n:")) {
		snprintf(why, len, "an interface name has no '/', ':' or white space");
		return -1;
	}
	return 0;
}

int cli_parse_list(const char *s, uint64_t min, uint64_t max, bool unique, uint32_t *out,
		   uint32_t cap, char *why, size_t len)
{
	char range[64], tok[32];
	uint32_t n = 0;

	xp_parse_range_str(min, max, range, sizeof(range));
	while (*s) {
		size_t tl = strcspn(s, ",");
		char *dash;
		uint64_t a, b;

		if (!tl || tl >= sizeof(tok))
			goto syntax;
		memcpy(tok, s, tl);
		tok[tl] = 0;
		dash = strchr(tok, '-');
		if (dash)
			*dash = 0;
		if (xp_parse_u64(tok, 0, UINT64_MAX, &a))
			goto syntax;
		b = a;
		if (dash && xp_parse_u64(dash + 1, 0, UINT64_MAX, &b))
			goto syntax;
		if (a < min || b > max) {
			snprintf(why, len, "expected a list like 0,2,4-7 of %s", range);
			return -1;
		}
		if (b < a) {
			snprintf(why, len, "%s-%s runs backwards; write LOW-HIGH", tok, dash + 1);
			return -1;
		}
		for (; a <= b; a++) {
			if (n == cap) {
				snprintf(why, len, "more than %u entries", cap);
				return -1;
			}
			for (uint32_t i = 0; unique && i < n; i++)
				if (out[i] == a) {
					snprintf(why, len,
						 "%" PRIu64 " is listed twice; give each once", a);
					return -1;
				}
			out[n++] = (uint32_t)a;
		}
		s += tl;
		if (*s == ',' && !*++s)
			goto syntax;
	}
	if (n)
		return (int)n;
syntax:
	snprintf(why, len, "expected a list like 0,2,4-7 of %s", range);
	return -1;
}

static void num_expect(const struct cli_opt *o, uint64_t max, char *why, size_t len)
{
	char range[64];
	const char *unit = o->kind == CLI_SIZE ? " bytes (units k, M, G)" : "";

	xp_parse_range_str(o->min, max, range, sizeof(range));
	if (o->flags & CLI_F_POW2)
		snprintf(why, len, "expected a power of two, %s%s", range, unit);
	else if (o->multiple > 1)
		snprintf(why, len, "expected a multiple of %" PRIu64 ", %s%s", o->multiple, range,
			 unit);
	else
		snprintf(why, len, "expected %s%s", range, unit);
}

/* "4k", "2M", "1GiB", "4096", "0x1000" -> bytes. */
static int parse_size(const char *v, uint64_t *out)
{
	static const struct {
		const char *s;
		unsigned int shift;
	} units[] = { { "", 0 },     { "k", 10 }, { "K", 10 }, { "KiB", 10 }, { "M", 20 },
		      { "MiB", 20 }, { "m", 20 }, { "G", 30 }, { "GiB", 30 }, { "g", 30 } };
	char num[32];
	size_t n = strlen(v), u = n;
	uint64_t x;

	if (strncmp(v, "0x", 2))
		while (u && ((v[u - 1] >= 'a' && v[u - 1] <= 'z') ||
			     (v[u - 1] >= 'A' && v[u - 1] <= 'Z')))
			u--;
	if (!u || u >= sizeof(num))
		return -EINVAL;
	memcpy(num, v, u);
	num[u] = 0;
	if (xp_parse_u64(num, 0, UINT64_MAX, &x))
		return -EINVAL;
	for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++)
		if (!strcmp(v + u, units[i].s)) {
			if (units[i].shift && x > (UINT64_MAX >> units[i].shift))
				return -ERANGE;
			*out = x << units[i].shift;
			return 0;
		}
	return -EINVAL;
}

static void enum_expect(const struct cli_opt *o, char *why, size_t len)
{
	size_t used = (size_t)snprintf(why, len, "expected ");
	int n = 0, k = 0;

	for (const struct cli_name *e = o->names; e->name; e++)
		n += !e->alias;
	for (const struct cli_name *e = o->names; e->name && used < len; e++) {
		if (e->alias)
			continue;
		used += (size_t)snprintf(why + used, len - used, "%s%s",
					 !k	    ? "" :
					 k == n - 1 ? " or " :
						      ", ",
					 e->name);
		k++;
	}
}

static int parse_mac(const char *v, unsigned char *mac)
{
	char hex[8];
	int i = 0;

	for (const char *p = v; i < 6; i++) {
		size_t l = strcspn(p, ":");
		uint32_t b;

		if (!l || l > 2 || (i < 5 && p[l] != ':') || (i == 5 && p[l]))
			return -1;
		snprintf(hex, sizeof(hex), "0x%.*s", (int)l, p);
		if (xp_parse_u32(hex, 0, 255, &b))
			return -1;
		mac[i] = (unsigned char)b;
		p += l + (p[l] == ':');
	}
	return 0;
}

/* Parses @v for @o into @cfg; on error fills @why with what is accepted. */
static int set_value(const struct cli_opt *o, const char *v, void *cfg, char *why, size_t len)
{
	uint64_t x, max = opt_max(o);
	double d;
	int n;

	if (!*v) {
		snprintf(why, len, "expected %s, not an empty value",
			 o->metavar ? o->metavar : "a value");
		return -1;
	}
	switch (o->kind) {
	case CLI_NUM:
	case CLI_SIZE:
		if ((o->kind == CLI_NUM ? xp_parse_u64(v, o->min, max, &x) : parse_size(v, &x)) ||
		    x < o->min || x > max || ((o->flags & CLI_F_POW2) && (x & (x - 1))) ||
		    (o->multiple > 1 && x % o->multiple)) {
			num_expect(o, max, why, len);
			return -1;
		}
		put_uint(o, cfg, x);
		return 0;
	case CLI_SECONDS:
		if (xp_parse_double(v, o->dmin, o->dmax, &d)) {
			snprintf(why, len, "expected seconds, a finite number in %.15g..%.15g",
				 o->dmin, o->dmax);
			return -1;
		}
		memcpy(field(o, cfg), &d, sizeof(d));
		return 0;
	case CLI_ENUM:
		for (const struct cli_name *e = o->names; e->name; e++)
			if (!strcmp(v, e->name)) {
				memcpy(field(o, cfg), &e->value, sizeof(int));
				return 0;
			}
		enum_expect(o, why, len);
		return -1;
	case CLI_IFNAME:
		if (cli_check_ifname(v, why, len))
			return -1;
		/* fall through */
	case CLI_STR:
		memcpy(field(o, cfg), &v, sizeof(v));
		return 0;
	case CLI_LIST:
		n = cli_parse_list(v, o->min, max, o->flags & CLI_F_UNIQUE, field(o, cfg), o->cap,
				   why, len);
		if (n < 0) {
			if (o->flags & CLI_F_CPUS)
				snprintf(why, len,
					 "expected CPUs like 0,2,4-7 in %" PRIu64 "..%" PRIu64
					 " (this machine has %" PRIu64 ")",
					 o->min, max, max + 1);
			return -1;
		}
		memcpy((char *)cfg + o->count_off, &(uint32_t){ (uint32_t)n }, sizeof(uint32_t));
		return 0;
	case CLI_MAC:
		if (parse_mac(v, field(o, cfg))) {
			snprintf(why, len, "expected a MAC address like 02:00:00:00:00:01");
			return -1;
		}
		return 0;
	case CLI_IPV4:
		if (inet_pton(AF_INET, v, field(o, cfg)) != 1) {
			snprintf(why, len, "expected an IPv4 address like 198.18.0.2");
			return -1;
		}
		return 0;
	case CLI_FUNC:
		return o->parse(o, v, cfg, why, len);
	default:
		return -1;
	}
}

static void print_value(FILE *f, const struct cli_opt *o, void *cfg, const char *raw)
{
	const unsigned char *m = field(o, cfg);
	char ip[INET_ADDRSTRLEN];
	uint32_t n;
	int e;

	switch (o->kind) {
	case CLI_FLAG:
	case CLI_CONST:
	case CLI_COUNT:
	case CLI_NUM:
	case CLI_SIZE:
		fprintf(f, "%" PRIu64, get_uint(o, cfg));
		break;
	case CLI_SECONDS:
		fprintf(f, "%.17g", *(double *)field(o, cfg));
		break;
	case CLI_ENUM:
		memcpy(&e, field(o, cfg), sizeof(e));
		for (const struct cli_name *x = o->names; x->name; x++)
			if (x->value == e && !x->alias) {
				fprintf(f, "%s", x->name);
				break;
			}
		break;
	case CLI_LIST:
		memcpy(&n, (char *)cfg + o->count_off, sizeof(n));
		for (uint32_t i = 0; i < n; i++)
			fprintf(f, "%s%u", i ? "," : "", ((uint32_t *)field(o, cfg))[i]);
		break;
	case CLI_MAC:
		fprintf(f, "%02x:%02x:%02x:%02x:%02x:%02x", m[0], m[1], m[2], m[3], m[4], m[5]);
		break;
	case CLI_IPV4:
		fprintf(f, "%s", inet_ntop(AF_INET, m, ip, sizeof(ip)));
		break;
	default:
		fprintf(f, "%s", raw);
	}
}

/* Bad arguments for @o that the parser must refuse, one tab-separated line each. */
static void list_bad(const struct cli_cmd *c, const struct cli_opt *o, const struct cli_opt *all,
		     const struct cli_opt *common)
{
	const char *n = o->name, *cmd = c->name;
	uint64_t max = opt_max(o);

	printf("opt\t%s\t--%s\t%s\n", cmd, n, (o->flags & CLI_F_HIDDEN) ? "hidden" : "shown");
	if (!takes_value(o)) {
		printf("bad\t%s\t--%s=x\n", cmd, n);
		if (o->kind != CLI_COUNT)
			printf("bad\t%s\t--%s\t--%s\n", cmd, n, n);
		for (int t = 0; t < 2 && o->excl; t++)
			for (const struct cli_opt *x = t ? common : all; x && x->name; x++)
				if (x != o && x->excl == o->excl && !takes_value(x))
					printf("bad\t%s\t--%s\t--%s\n", cmd, n, x->name);
		return;
	}
	printf("bad\t%s\t--%s\n", cmd, n);
	printf("bad\t%s\t--%s\t<empty>\n", cmd, n);
	switch (o->kind) {
	case CLI_NUM:
	case CLI_SIZE:
		printf("bad\t%s\t--%s\tx1\nbad\t%s\t--%s\t-1\n", cmd, n, cmd, n);
		if (max < UINT64_MAX)
			printf("bad\t%s\t--%s\t%" PRIu64 "\n", cmd, n, max + 1);
		if (o->min)
			printf("bad\t%s\t--%s\t%" PRIu64 "\n", cmd, n, o->min - 1);
		if (o->kind == CLI_SIZE)
			printf("bad\t%s\t--%s\t1q\n", cmd, n);
		if (((o->flags & CLI_F_POW2) || o->multiple > 1) && o->min + 1 < max)
			printf("bad\t%s\t--%s\t%" PRIu64 "\n", cmd, n, o->min + 1);
		if (!(o->flags & CLI_F_REPEAT))
			printf("bad\t%s\t--%s\t%" PRIu64 "\t--%s\t%" PRIu64 "\n", cmd, n, o->min, n,
			       o->min);
		break;
	case CLI_SECONDS:
		printf("bad\t%s\t--%s\tnan\nbad\t%s\t--%s\tinf\nbad\t%s\t--%s\t1e300\n"
		       "bad\t%s\t--%s\t-1\n",
		       cmd, n, cmd, n, cmd, n, cmd, n);
		if (!(o->flags & CLI_F_REPEAT))
			printf("bad\t%s\t--%s\t%g\t--%s\t%g\n", cmd, n, o->dmax, n, o->dmax);
		break;
	case CLI_ENUM:
		printf("bad\t%s\t--%s\tno-such\n", cmd, n);
		if (!(o->flags & CLI_F_REPEAT))
			printf("bad\t%s\t--%s\t%s\t--%s\t%s\n", cmd, n, o->names[0].name, n,
			       o->names[0].name);
		break;
	case CLI_IFNAME:
		printf("bad\t%s\t--%s\tabcdefghijklmnop\n", cmd, n);
		break;
	case CLI_LIST:
		printf("bad\t%s\t--%s\tx\nbad\t%s\t--%s\t2-1\nbad\t%s\t--%s\t0,\n", cmd, n, cmd, n,
		       cmd, n);
		printf("bad\t%s\t--%s\t%" PRIu64 "\n", cmd, n, max + 1);
		if (o->flags & CLI_F_UNIQUE)
			printf("bad\t%s\t--%s\t%" PRIu64 ",%" PRIu64 "\n", cmd, n, o->min, o->min);
		break;
	case CLI_MAC:
		printf("bad\t%s\t--%s\t02:00:00:00:00\nbad\t%s\t--%s\t02:00:00:00:00:0g\n", cmd, n,
		       cmd, n);
		break;
	case CLI_IPV4:
		printf("bad\t%s\t--%s\t198.18.0\nbad\t%s\t--%s\t198.18.0.256\n", cmd, n, cmd, n);
		break;
	case CLI_STR:
		if (!(o->flags & CLI_F_REPEAT))
			printf("bad\t%s\t--%s\tx\t--%s\tx\n", cmd, n, n);
		break;
	default:
		break;
	}
}

static void list_cmd(const struct cli_prog *p, const struct cli_cmd *c)
{
	for (const struct cli_opt *o = c->opts; o && o->name; o++)
		list_bad(c, o, c->opts, p->common);
	for (const struct cli_opt *o = p->common; o && o->name; o++)
		list_bad(c, o, c->opts, p->common);
}

int cli_select(const struct cli_prog *p, int argc, char **argv, const struct cli_cmd **cmd)
{
	const char *a = argc > 1 ? argv[1] : NULL;

	if (!a) {
		char list[256] = "";
		int n = 0;

		for (const struct cli_cmd *const *c = p->cmds; *c; c++)
			n++;
		for (int i = 0; i < n; i++)
			snprintf(list + strlen(list), sizeof(list) - strlen(list), "%s%s",
				 !i	    ? "" :
				 i == n - 1 ? " or " :
					      ", ",
				 p->cmds[i]->name);
		return cli_usage_error(p, NULL, "a command is required: %s", list);
	}
	if (!strcmp(a, "--help") || !strcmp(a, "-h") || !strcmp(a, "help")) {
		cli_help_prog(stdout, p);
		return 0;
	}
	if (p->version && (!strcmp(a, "--version") || !strcmp(a, "-V") ||
			   (!strcmp(a, "--json") && argc > 2 && !strcmp(argv[2], "--version"))))
		return print_version(p, argc, argv);
	if (!strcmp(a, "--man") && argc <= 3) { /* hidden: the build writes the man pages */
		if (argc == 2 || single(p)) {
			cli_man_prog(stdout, p);
			return 0;
		}
		for (const struct cli_cmd *const *c = p->cmds; *c; c++)
			if (!strcmp(argv[2], (*c)->name)) {
				cli_man_cmd(stdout, p, *c);
				return 0;
			}
		return cli_usage_error(p, NULL, "--man: unknown command '%s'", argv[2]);
	}
	if (!strcmp(a, "--commands")) {
		for (const struct cli_cmd *const *c = p->cmds; *c && !single(p); c++)
			printf("%s\n", (*c)->name);
		return 0;
	}
	if (!strcmp(a, "--bash-completion")) {
		cli_complete_bash(stdout, p);
		return 0;
	}
	if (!strcmp(a, "--list-options")) {
		for (const struct cli_cmd *const *c = p->cmds; *c; c++)
			list_cmd(p, *c);
		return 0;
	}
	for (const struct cli_cmd *const *c = p->cmds; *c; c++)
		if (!strcmp(a, (*c)->name)) {
			*cmd = *c;
			return CLI_RUN;
		}
	if (single(p))
		return cli_usage_error(p, NULL, "unknown command '%s'; the command is '%s %s'", a,
				       p->name, p->cmds[0]->name);
	return cli_usage_error(p, NULL, "unknown command '%s'", a);
}

/* The option @a names exactly (--name, --name=V, -x), for rule words. */
static bool names_option(const char *a, const struct cli_opt *const *tab, int n)
{
	for (int i = 0; i < n; i++) {
		size_t l = strlen(tab[i]->name);

		if (a[0] == '-' && a[1] == '-' && !strncmp(a + 2, tab[i]->name, l) &&
		    (!a[2 + l] || a[2 + l] == '='))
			return true;
		if (a[0] == '-' && tab[i]->short_name && a[1] == tab[i]->short_name && !a[2])
			return true;
	}
	return !strcmp(a, "--help") || !strcmp(a, "-h") || !strcmp(a, "--parse-only") ||
	       !strcmp(a, "--list-options");
}

struct parse_state {
	const struct cli_prog *p;
	const struct cli_cmd *c;
	const struct cli_opt *tab[CLI_MAX_OPTS];
	const char *seen[CLI_MAX_OPTS];
	int n;
	void *cfg;
	struct cli_args *res;
};

static int apply(struct parse_state *s, int i, const char *v)
{
	const struct cli_opt *o = s->tab[i];
	char why[192], b1[80], b2[80];

	if (!takes_value(o) && v)
		return cli_usage_error(s->p, s->c, "--%s takes no value (got --%s=%s)", o->name,
				       o->name, shown(v, b1, sizeof(b1)));
	if (s->seen[i] && o->kind != CLI_COUNT && !(o->flags & CLI_F_REPEAT)) {
		if (!takes_value(o))
			return cli_usage_error(s->p, s->c, "--%s is given twice; give it once",
					       o->name);
		return cli_usage_error(s->p, s->c,
				       "--%s is given twice (%s, then %s); give it once", o->name,
				       shown(s->seen[i], b1, sizeof(b1)), shown(v, b2, sizeof(b2)));
	}
	for (int k = 0; o->excl && k < s->n; k++)
		if (k != i && s->seen[k] && s->tab[k]->excl == o->excl)
			return cli_usage_error(
				s->p, s->c, "--%s and --%s contradict each other; give one of them",
				s->tab[k]->name, o->name);
	if (o->kind == CLI_FLAG) {
		put_uint(o, s->cfg, 1);
	} else if (o->kind == CLI_CONST) {
		put_uint(o, s->cfg, (uint64_t)(int64_t)o->value);
	} else if (o->kind == CLI_COUNT) {
		int c;

		memcpy(&c, field(o, s->cfg), sizeof(c));
		c++;
		memcpy(field(o, s->cfg), &c, sizeof(c));
	} else if (set_value(o, v, s->cfg, why, sizeof(why))) {
		return cli_usage_error(s->p, s->c, "--%s %s: %s", o->name, shown(v, b1, sizeof(b1)),
				       why);
	}
	s->seen[i] = v ? v : "";
	if (o->env)
		setenv(o->env, v ? v : "1", 1);
	if (s->res->ngiven < CLI_MAX_OPTS) {
		s->res->given[s->res->ngiven] = o;
		s->res->value[s->res->ngiven++] = s->seen[i];
	}
	return 0;
}

int cli_parse(const struct cli_prog *p, const struct cli_cmd *c, int argc, char **argv, void *cfg,
	      struct cli_args *res)
{
	struct parse_state s = { 0 };
	bool dashdash = false, parse_only = false;
	int npos = 0, rc;

	memset(res, 0, sizeof(*res));
	s.p = p;
	s.c = c;
	s.cfg = cfg;
	s.res = res;
	for (int t = 0; t < 2; t++)
		for (const struct cli_opt *o = t ? p->common : c->opts; o && o->name; o++) {
			if (s.n == CLI_MAX_OPTS) /* a table bug, caught by any test that runs it */
				return cli_usage_error(p, c,
						       "more than %d options: raise CLI_MAX_OPTS",
						       CLI_MAX_OPTS);
			s.tab[s.n++] = o;
		}
	/* Given --json: the usage errors are JSON on stdout too (cli_json.h). */
	cli_json_want(argv_json(argc, argv, s.tab, s.n));
	for (int i = 1; i < argc; i++) {
		char *a = argv[i];
		bool words = c->words_after > 0 && npos >= c->words_after;

		/* "--" ends the options; among rule words too, where it is never a word. */
		if (!dashdash && !strcmp(a, "--")) {
			dashdash = true;
			continue;
		}
		if (dashdash || a[0] != '-' || !a[1] || (words && !names_option(a, s.tab, s.n))) {
			if (npos >= CLI_MAX_ARGS)
				return cli_usage_error(p, c, "too many arguments");
			argv[1 + npos++] = a; /* compacted in place: 1 + npos <= i */
			continue;
		}
		if (a[1] == '-') {
			const char *name = a + 2, *eq = strchr(name, '=');
			size_t nl = eq ? (size_t)(eq - name) : strlen(name);
			int k;

			if (nl == 4 && !strncmp(name, "help", 4)) {
				cli_help_cmd(stdout, p, c);
				return 0;
			}
			if (p->version && !strcmp(name, "version"))
				return print_version(p, argc, argv);
			if (!strcmp(name, "list-options")) {
				list_cmd(p, c);
				return 0;
			}
			if (!strcmp(name, "parse-only")) {
				parse_only = true;
				continue;
			}
			for (k = 0; k < s.n; k++)
				if (strlen(s.tab[k]->name) == nl &&
				    !strncmp(s.tab[k]->name, name, nl))
					break;
			if (k == s.n)
				return cli_usage_error(p, c, "unknown option --%.*s", (int)nl,
						       name);
			if (eq || !takes_value(s.tab[k])) {
				rc = apply(&s, k, eq ? eq + 1 : NULL);
			} else if (i + 1 < argc) {
				rc = apply(&s, k, argv[++i]);
			} else {
				return cli_usage_error(
					p, c, "--%s needs a value (%s)", s.tab[k]->name,
					s.tab[k]->metavar ? s.tab[k]->metavar : "VALUE");
			}
			if (rc)
				return rc;
			continue;
		}
		for (int j = 1; a[j]; j++) {
			int k;

			if (a[j] == 'h') {
				cli_help_cmd(stdout, p, c);
				return 0;
			}
			if (a[j] == 'V' && p->version)
				return print_version(p, argc, argv);
			for (k = 0; k < s.n && s.tab[k]->short_name != a[j]; k++)
				;
			if (k == s.n)
				return cli_usage_error(p, c, "unknown option -%c", a[j]);
			if (!takes_value(s.tab[k])) {
				rc = apply(&s, k, NULL);
			} else if (a[j + 1]) {
				rc = apply(&s, k, a + j + 1);
				j = (int)strlen(a) - 1;
			} else if (i + 1 < argc) {
				rc = apply(&s, k, argv[++i]);
			} else {
				return cli_usage_error(p, c, "-%c needs a value (%s)", a[j],
						       s.tab[k]->metavar ? s.tab[k]->metavar :
									   "VALUE");
			}
			if (rc)
				return rc;
			if (takes_value(s.tab[k]))
				break;
		}
	}
	res->argc = npos;
	res->argv = argv + 1;
	argv[1 + npos] = NULL;
	if (npos < c->min_args)
		return cli_usage_error(p, c, "missing %s; usage: %s %s %s",
				       c->min_args - npos > 1 ? "arguments" : "an argument",
				       p->name, c->name, c->synopsis ? c->synopsis : "");
	if (c->max_args >= 0 && npos > c->max_args)
		return cli_usage_error(p, c, "unexpected argument '%s'", res->argv[c->max_args]);
	if (c->check) {
		char why[192];

		if (c->check(c, cfg, res, why, sizeof(why)))
			return cli_usage_error(p, c, "%s", why);
	}
	if (parse_only) {
		for (int i = 0; i < res->ngiven; i++) {
			bool again = false;

			for (int k = 0; k < i && res->given[i]->kind == CLI_COUNT; k++)
				again |= res->given[k] == res->given[i];
			if (again)
				continue;
			printf("%s=", res->given[i]->name);
			print_value(stdout, res->given[i], cfg, res->value[i]);
			putchar('\n');
		}
		for (int i = 0; i < npos; i++)
			printf("arg=%s\n", res->argv[i]);
		return 0;
	}
	return CLI_RUN;
}

const char *cli_given(const struct cli_args *res, const char *name)
{
	for (int i = 0; i < res->ngiven; i++)
		if (!strcmp(res->given[i]->name, name))
			return res->value[i];
	return NULL;
}
