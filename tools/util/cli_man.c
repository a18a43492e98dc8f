// SPDX-License-Identifier: BSD-3-Clause
/*
 * Man pages from the option tables (cli.h): the NAME, SYNOPSIS, DESCRIPTION, OPTIONS,
 * sections and EXAMPLES that --help prints, in man(7) markup, so `man xpile-loader-wire`
 * and `xpile-loader wire --help` cannot disagree. The build runs "PROG --man [CMD]".
 *
 * One page per program and one per command, PROG-CMD(8), as git and ip(8) have them:
 * a command's --help is already a whole page of its own, and `man xpile-loader-wire`
 * goes straight to it where one long page would need a search. A program with a single
 * command (xpile run) has the one page, under the program's name. Section 8: these are
 * system administration commands, most of them need root.
 */
#include <ctype.h>
#include <string.h>

#include "cli_man.h"

static bool one_command(const struct cli_prog *p)
{
	return p->cmds[0] && !p->cmds[1];
}

static bool has_value(const struct cli_opt *o)
{
	return o->kind != CLI_FLAG && o->kind != CLI_CONST && o->kind != CLI_COUNT;
}

/* @n bytes of @s with roff's escape character made literal and every '-' a real
 * hyphen-minus (\-: options stay searchable and copyable), a line may break after a
 * '|' (\:, nothing visible); at the start of a line a
 * '.' or '\'' would be a request, so it is preceded by \&. */
static void esc(FILE *f, const char *s, size_t n, bool bol)
{
	for (size_t i = 0; i < n; i++, bol = false) {
		if (bol && (s[i] == '.' || s[i] == '\''))
			fputs("\\&", f);
		if (s[i] == '\\')
			fputs("\\e", f);
		else if (s[i] == '-')
			fputs("\\-", f);
		else if (s[i] == '|') /* a long "a|b|c" may break after a bar */
			fputs("|\\:", f);
		else
			fputc(s[i], f);
	}
}

static void esc_str(FILE *f, const char *s)
{
	esc(f, s, strlen(s), false);
}

/* Text as --help reads it: a line that starts with a space is kept as it is (no
 * filling), an empty line ends a paragraph (@para: .PP, or .IP inside an option),
 * the other lines are filled together. */
static void text(FILE *f, const char *t, const char *para)
{
	bool nf = false;

	while (*t) {
		size_t len = strcspn(t, "\n");
		bool verbatim = len && t[0] == ' ';

		if (verbatim != nf)
			fputs(verbatim ? ".nf\n" : ".fi\n", f);
		nf = verbatim;
		if (!len) {
			fprintf(f, "%s\n", para);
		} else {
			esc(f, t, len, true);
			fputc('\n', f);
		}
		t += len + (t[len] == '\n');
	}
	if (nf)
		fputs(".fi\n", f);
}

static void upper(FILE *f, const char *s)
{
	for (; *s; s++)
		if (*s == '-')
			fputs("\\-", f);
		else
			fputc(toupper((unsigned char)*s), f);
}

static void header(FILE *f, const struct cli_prog *p, const struct cli_cmd *c)
{
	const char *v = p->version ? p->version : "";

	fprintf(f, ".\\\" Generated from the option tables of %s by '%s --man%s%s'.\n", p->name,
		p->name, c ? " " : "", c ? c->name : "");
	fputs(".TH ", f);
	upper(f, p->name);
	if (c) {
		fputs("\\-", f);
		upper(f, c->name);
	}
	fprintf(f, " 8 \"\" \"xpile %s\" \"xpile manual\"\n", v);
	/* As --help: left-aligned, no words split (option names stay whole). */
	fputs(".ad l\n.nh\n", f);
	fputs(".SH NAME\n", f);
	esc_str(f, p->name);
	if (c) {
		fputs("\\-", f);
		esc_str(f, c->name);
	}
	fputs(" \\- ", f);
	esc_str(f, c ? c->summary : p->summary);
	fputc('\n', f);
}

static void opt_entry(FILE *f, const struct cli_opt *o)
{
	if (o->flags & CLI_F_HIDDEN)
		return;
	if (o->section) {
		fputs(".SS ", f);
		esc_str(f, o->section);
		fputc('\n', f);
	}
	fputs(".TP\n", f);
	if (o->short_name)
		fprintf(f, "\\fB\\-%c\\fR, ", o->short_name);
	fputs("\\fB\\-\\-", f);
	esc_str(f, o->name);
	fputs("\\fR", f);
	if (has_value(o)) {
		fputs(" \\fI", f);
		esc_str(f, o->metavar ? o->metavar : "VALUE");
		fputs("\\fR", f);
	}
	fputc('\n', f);
	if (o->help)
		text(f, o->help, ".IP");
}

static void builtin_opts(FILE *f, const struct cli_prog *p, bool version)
{
	fputs(".TP\n\\fB\\-h\\fR, \\fB\\-\\-help\\fR\nPrint the help and exit.\n", f);
	if (version && p->version)
		fputs(".TP\n\\fB\\-V\\fR, \\fB\\-\\-version\\fR\nPrint the program's version and "
		      "the versions of libbpf, libxdp and liburing it runs with, on one line "
		      "(with \\fB\\-\\-json\\fR one JSON object), and exit.\n",
		      f);
}

static void sections(FILE *f, const struct cli_section *s)
{
	for (; s && s->title; s++) {
		fputs(".SH ", f);
		esc_str(f, s->title);
		fputc('\n', f);
		text(f, s->text, ".PP");
	}
}

/* The entries of table @o (may be NULL), after @lead when there is one. */
static void opt_list(FILE *f, const struct cli_opt *o, const char *lead)
{
	if (o && o->name)
		fputs(lead, f);
	for (; o && o->name; o++)
		opt_entry(f, o);
}

/* "a(8), b(8)": each name in bold. */
static void see_also(FILE *f, const char *list, bool first)
{
	while (list && *list) {
		size_t n = strcspn(list, "(,");

		fputs(first ? "" : ",\n", f);
		first = false;
		fputs("\\fB", f);
		esc(f, list, n, false);
		fputs("\\fR", f);
		list += n;
		n = strcspn(list, ",");
		esc(f, list, n, false);
		list += n;
		list += strspn(list, ", ");
	}
	if (!first)
		fputc('\n', f);
}

void cli_man_cmd(FILE *f, const struct cli_prog *p, const struct cli_cmd *c)
{
	bool single = one_command(p);
	const char *syn = c->synopsis ? c->synopsis : "[OPTIONS]";

	header(f, p, single ? NULL : c); /* a single command's page is the program's */
	fputs(".SH SYNOPSIS\n.in +4n\n", f);
	while (*syn) {
		size_t len = strcspn(syn, "\n");

		fputs(".ti -4n\n\\fB", f);
		esc_str(f, p->name);
		fputc(' ', f);
		esc_str(f, c->name);
		fputs("\\fR ", f);
		esc(f, syn, len, false);
		fputs("\n.br\n", f);
		syn += len + (syn[len] == '\n');
	}
	fputs(".ti -4n\n\\fB", f);
	esc_str(f, p->name);
	fputc(' ', f);
	esc_str(f, c->name);
	fputs(" \\-\\-help\\fR\n", f);
	if (single && p->version) {
		fputs(".br\n.ti -4n\n\\fB", f);
		esc_str(f, p->name);
		fputs(" \\-\\-version\\fR [\\fB\\-\\-json\\fR]\n", f);
	}
	fputs(".in -4n\n", f);
	if (c->description) {
		fputs(".SH DESCRIPTION\n", f);
		text(f, c->description, ".PP");
	}
	fputs(".SH OPTIONS\n", f);
	opt_list(f, c->opts, "");
	opt_list(f, p->common, ".SS Common options\n");
	builtin_opts(f, p, single);
	sections(f, c->sections);
	if (single)
		sections(f, p->sections);
	if (c->examples && *c->examples) {
		fputs(".SH EXAMPLES\n.nf\n", f);
		text(f, c->examples, "");
		fputs(".fi\n", f);
	}
	if (!single || p->see_also) {
		fputs(".SH SEE ALSO\n", f);
		if (!single) {
			fputs("\\fB", f);
			esc_str(f, p->name);
			fputs("\\fR(8)", f);
		}
		see_also(f, p->see_also, single);
		if (!single && !p->see_also)
			fputc('\n', f);
	}
}

void cli_man_prog(FILE *f, const struct cli_prog *p)
{
	if (one_command(p)) {
		cli_man_cmd(f, p, p->cmds[0]);
		return;
	}
	header(f, p, NULL);
	fputs(".SH SYNOPSIS\n.nf\n", f);
	fprintf(f, "\\fB%s\\fR \\fICOMMAND\\fR [\\fIOPTIONS\\fR] [\\fIARGUMENTS\\fR]\n", p->name);
	fprintf(f, "\\fB%s\\fR \\fICOMMAND\\fR \\fB\\-\\-help\\fR\n", p->name);
	fprintf(f, "\\fB%s \\-\\-help\\fR\n", p->name);
	if (p->version)
		fprintf(f, "\\fB%s \\-\\-version\\fR [\\fB\\-\\-json\\fR]\n", p->name);
	fputs(".fi\n", f);
	if (p->description) {
		fputs(".SH DESCRIPTION\n", f);
		text(f, p->description, ".PP");
	}
	fputs(".SH COMMANDS\n", f);
	for (const struct cli_cmd *const *c = p->cmds; *c; c++) {
		fputs(".TP\n\\fB", f);
		esc_str(f, (*c)->name);
		fputs("\\fR\n", f);
		esc_str(f, (*c)->summary);
		fputs(": \\fB", f);
		esc_str(f, p->name);
		fputs("\\-", f);
		esc_str(f, (*c)->name);
		fputs("\\fR(8).\n", f);
	}
	fputs(".SH OPTIONS\n", f);
	opt_list(f, p->common, "Every command takes these:\n");
	builtin_opts(f, p, true);
	sections(f, p->sections);
	fputs(".SH SEE ALSO\n", f);
	for (const struct cli_cmd *const *c = p->cmds; *c; c++) {
		fputs(c == p->cmds ? "\\fB" : ",\n\\fB", f);
		esc_str(f, p->name);
		fputs("\\-", f);
		esc_str(f, (*c)->name);
		fputs("\\fR(8)", f);
	}
	see_also(f, p->see_also, false);
	if (!p->see_also)
		fputc('\n', f);
}
