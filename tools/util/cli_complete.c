// SPDX-License-Identifier: BSD-3-Clause
/*
 * Bash completion from the option tables (cli.h), written by "PROG --bash-completion"
 * at build time: the commands, each command's options, the values of an option that
 * has names (--mode rxdrop|...), interface names where an option or argument takes an
 * interface (from /sys/class/net, so inside `ip netns exec` the namespace's), files
 * and directories where the metavar says FILE, PATH or DIR. Plain bash: it needs no
 * bash-completion helpers, so `source` of the file is enough to use it.
 */
#include <string.h>

#include "cli_complete.h"

enum what { NOTHING, WORDS, IFACES, FILES, DIRS };

static bool value_taken(const struct cli_opt *o)
{
	return o->kind != CLI_FLAG && o->kind != CLI_CONST && o->kind != CLI_COUNT;
}

/* What a value named @mv (a metavar or a SYNOPSIS word) is. */
static enum what classify(const char *mv)
{
	if (!mv)
		return NOTHING;
	if (strchr(mv, '|') && !strstr(mv, "FILE"))
		return WORDS;
	if (!strncmp(mv, "IFACE", 5) || !strncmp(mv, "PORT", 4))
		return IFACES;
	if (strstr(mv, "FILE") || strstr(mv, "PATH"))
		return FILES;
	if (strstr(mv, "DIR"))
		return DIRS;
	return NOTHING;
}

static enum what opt_what(const struct cli_opt *o)
{
	if (o->kind == CLI_ENUM)
		return WORDS;
	if (o->kind == CLI_IFNAME)
		return IFACES;
	return classify(o->metavar) == WORDS ? NOTHING : classify(o->metavar);
}

static void reply(FILE *f, enum what w, const char *words)
{
	switch (w) {
	case WORDS:
		fprintf(f, "mapfile -t COMPREPLY < <(compgen -W \"%s\" -- \"$cur\")", words);
		break;
	case IFACES:
		fputs("mapfile -t COMPREPLY < <(compgen -W \"$(command ls /sys/class/net 2>/dev/null)\" "
		      "-- \"$cur\")",
		      f);
		break;
	case FILES:
		fputs("compopt -o filenames 2>/dev/null\n\t\t\tmapfile -t COMPREPLY < <(compgen -f -- \"$cur\")",
		      f);
		break;
	case DIRS:
		fputs("compopt -o filenames 2>/dev/null\n\t\t\tmapfile -t COMPREPLY < <(compgen -d -- \"$cur\")",
		      f);
		break;
	default:
		fputs(":", f);
	}
}

static void opt_names(FILE *f, const struct cli_opt *o, bool values_only, const char *sep)
{
	for (; o && o->name; o++) {
		if ((o->flags & CLI_F_HIDDEN) || (values_only && !value_taken(o)))
			continue;
		fprintf(f, "%s--%s", sep, o->name);
		if (o->short_name)
			fprintf(f, "%s-%c", sep, o->short_name);
	}
}

/* The names of an enum option, aliases left out (help and errors name the canonical). */
static void enum_words(const struct cli_opt *o, char *buf, size_t len)
{
	size_t used = 0;

	buf[0] = 0;
	for (const struct cli_name *n = o->names; n && n->name && used < len; n++)
		if (!n->alias)
			used += (size_t)snprintf(buf + used, len - used, "%s%s", used ? " " : "",
						 n->name);
}

static void value_cases(FILE *f, const struct cli_opt *o)
{
	char words[512];

	for (; o && o->name; o++) {
		enum what w = opt_what(o);

		if ((o->flags & CLI_F_HIDDEN) || !value_taken(o))
			continue;
		fprintf(f, "\t\t--%s", o->name);
		if (o->short_name)
			fprintf(f, " | -%c", o->short_name);
		if (w == WORDS)
			enum_words(o, words, sizeof(words));
		fputs(")\n\t\t\t", f);
		reply(f, w, words);
		fputs("\n\t\t\treturn 0\n\t\t\t;;\n", f);
	}
}

/* The positional arguments SYNOPSIS names: options and their groups skipped, brackets
 * stripped, up to "...". Writes one case per position. */
static void positional_cases(FILE *f, const struct cli_cmd *c)
{
	const char *s = c->synopsis ? c->synopsis : "";
	size_t line = strcspn(s, "\n");
	int depth = 0, pos = 0;
	bool skip_group = false, skip_next = false;

	if (!c->max_args)
		return;
	for (const char *t = s; t < s + line;) {
		size_t n = strcspn(t, " \n");
		char tok[128];
		int opens = 0, closes = 0;

		if (!n) {
			t++;
			continue;
		}
		snprintf(tok, sizeof(tok), "%.*s", (int)(n < sizeof(tok) ? n : sizeof(tok) - 1), t);
		t += n;
		for (char *x = tok; *x; x++)
			opens += *x == '[', closes += *x == ']';
		if (depth == 0 && tok[0] == '[' && (tok[1] == '-' || !strncmp(tok, "[OPTIONS", 8)))
			skip_group = true;
		depth += opens - closes;
		if (skip_group) {
			skip_group = depth > 0;
			continue;
		}
		if (tok[0] == '-') { /* "--config FILE": the option and its value */
			skip_next = true;
			continue;
		}
		if (skip_next) {
			skip_next = false;
			continue;
		}
		if (strstr(tok, "..."))
			break;
		char word[128], *w = word;

		for (char *x = tok; *x; x++)
			if (*x != '[' && *x != ']')
				*w++ = *x;
		*w = 0;
		enum what what = classify(word);

		for (w = word; *w; w++)
			*w = *w == '|' ? ' ' : *w;

		if (what != NOTHING) {
			fprintf(f, "\t\t%d)\n\t\t\t", pos);
			reply(f, what, word);
			fputs("\n\t\t\t;;\n", f);
		}
		pos++;
	}
}

static void fn_name(FILE *f, const struct cli_prog *p)
{
	fputc('_', f);
	for (const char *s = p->name; *s; s++)
		fputc(*s == '-' ? '_' : *s, f);
}

void cli_complete_bash(FILE *f, const struct cli_prog *p)
{
	fprintf(f,
		"# bash completion for %s, generated from its option tables by '%s "
		"--bash-completion'.\n",
		p->name, p->name);
	fn_name(f, p);
	fputs("()\n{\n"
	      "\tlocal cur=${COMP_WORDS[COMP_CWORD]} prev='' cmd='' ci=0 i w n=0 opts='' vals=\n"
	      "\t[ \"$COMP_CWORD\" -gt 0 ] && prev=${COMP_WORDS[COMP_CWORD - 1]}\n"
	      "\t# --opt=value: bash splits the word at '='\n"
	      "\tif [ \"$cur\" = = ]; then\n\t\tcur=''\n"
	      "\telif [ \"$prev\" = = ] && [ \"$COMP_CWORD\" -gt 1 ]; then\n"
	      "\t\tprev=${COMP_WORDS[COMP_CWORD - 2]}\n\tfi\n"
	      "\tCOMPREPLY=()\n"
	      "\tfor ((i = 1; i < COMP_CWORD; i++)); do\n"
	      "\t\tcase ${COMP_WORDS[i]} in\n\t\t-*) ;;\n"
	      "\t\t*) cmd=${COMP_WORDS[i]} ci=$i && break ;;\n\t\tesac\n\tdone\n"
	      "\tif [ -z \"$cmd\" ]; then\n\t\tmapfile -t COMPREPLY < <(compgen -W \"",
	      f);
	for (const struct cli_cmd *const *c = p->cmds; *c; c++)
		fprintf(f, "%s ", (*c)->name);
	fprintf(f, "--help%s\" -- \"$cur\")\n\t\treturn 0\n\tfi\n\tcase $cmd in\n",
		p->version ? " --version" : "");
	for (const struct cli_cmd *const *c = p->cmds; *c; c++) {
		fprintf(f, "\t%s)\n\t\topts=\"", (*c)->name);
		opt_names(f, (*c)->opts, false, " ");
		opt_names(f, p->common, false, " ");
		fputs(" --help -h", f);
		if (p->version)
			fputs(" --version", f);
		fputs("\"\n\t\tvals=\"", f);
		opt_names(f, (*c)->opts, true, " ");
		opt_names(f, p->common, true, " ");
		fputs(" \"\n\t\tcase $prev in\n", f);
		value_cases(f, (*c)->opts);
		value_cases(f, p->common);
		fputs("\t\tesac\n\t\t;;\n", f);
	}
	fputs("\t*) return 0 ;;\n\tesac\n"
	      "\tif [[ $cur == -* ]]; then\n"
	      "\t\tmapfile -t COMPREPLY < <(compgen -W \"$opts\" -- \"$cur\")\n\t\treturn 0\n\tfi\n"
	      "\t# Which positional argument this is: options and their values do not count.\n"
	      "\tfor ((i = ci + 1; i < COMP_CWORD; i++)); do\n"
	      "\t\tw=${COMP_WORDS[i]}\n"
	      "\t\tif [ \"$w\" = = ]; then\n\t\t\t((i++))\n\t\t\tcontinue\n\t\tfi\n"
	      "\t\tcase $w in\n\t\t-*)\n"
	      "\t\t\t[[ $vals == *\" $w \"* ]] && [ \"${COMP_WORDS[i + 1]}\" != = ] && ((i++))\n"
	      "\t\t\tcontinue\n\t\t\t;;\n\t\tesac\n"
	      "\t\t((n++))\n\tdone\n"
	      "\tcase $cmd in\n",
	      f);
	for (const struct cli_cmd *const *c = p->cmds; *c; c++) {
		fprintf(f, "\t%s)\n\t\tcase $n in\n", (*c)->name);
		positional_cases(f, *c);
		fputs("\t\tesac\n\t\t;;\n", f);
	}
	fputs("\tesac\n"
	      "\t# Nothing to offer for an argument: the options, as for '-'.\n"
	      "\t[ ${#COMPREPLY[@]} -gt 0 ] || mapfile -t COMPREPLY < <(compgen -W \"$opts\" -- \"$cur\")\n"
	      "\treturn 0\n}\ncomplete -F ",
	      f);
	fn_name(f, p);
	fprintf(f, " %s\n", p->name);
}
