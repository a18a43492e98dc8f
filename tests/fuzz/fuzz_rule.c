// SPDX-License-Identifier: BSD-3-Clause
/*
 * The rule language (lib/rule_text.c): xp_rule_parse / xp_action_parse on words and
 * xp_rules_parse_file on whole files, checked against what steer.h and the grammar in
 * rule_text.c promise.
 *
 * Byte 0 picks the mode; the rest is text.
 *   words: the text split on blanks, as a shell would pass it. A refusal has a one-line
 *          reason; an accepted rule formats (xp_rule_format) to text that parses back
 *          to the same rule and the same text; and every word matters: any one word
 *          with a character appended ("80" -> "80z") must make the rule refused, so
 *          nothing is read past, truncated or ignored.
 *   file:  the text as a rule file ('#' comments, one rule per line). Accepted means
 *          every line, read whole, parses to the rule returned for it; a refusal names
 *          its line, and that line is wrong read whole (or holds a NUL, or is longer
 *          or has more words than a documented limit).
 *   struct: a rule built field by field, as the language can say it, formats to text
 *          that parses back to it.
 */
#include <errno.h>
#include <sched.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "fuzz.h"
#include "xpile/steer.h"

#define MAX_WORDS 256
#define FILE_RULES 64

/* Splits @s in place on blanks (the file reader's set); returns the word count. */
static int split(char *s, char **argv, int max)
{
	int argc = 0;
	char *save, *t;

	for (t = strtok_r(s, " \t\r\n", &save); t && argc < max;
	     t = strtok_r(NULL, " \t\r\n", &save))
		argv[argc++] = t;
	return argc;
}

static void check_err(int rc, const char *err, const char *what)
{
	FUZZ_CHECK(rc == 0 || rc == -EINVAL, "%s returned %d", what, rc);
	if (rc)
		FUZZ_CHECK(err[0] && !strchr(err, '\n'),
			   "%s: refusal without a one-line reason: '%s'", what, err);
}

static void check_words(char *text)
{
	char *argv[MAX_WORDS], err[256], fmt[512], fmt2[512], again[512], *argv2[MAX_WORDS];
	struct xp_rule r, r2;
	int argc = split(text, argv, MAX_WORDS), rc, argc2, used;
	struct xp_action a;

	/* The action parser alone, from every position. */
	for (int i = 0; i < argc; i++) {
		err[0] = 0;
		rc = xp_action_parse(argc - i, argv + i, &used, &a, err, sizeof(err));
		check_err(rc, err, "xp_action_parse");
		if (!rc)
			FUZZ_CHECK(used >= 1 && used <= argc - i && used <= 3, "used %d of %d",
				   used, argc - i);
	}

	err[0] = 0;
	rc = xp_rule_parse(argc, argv, &r, err, sizeof(err));
	check_err(rc, err, "xp_rule_parse");
	if (rc)
		return;

	/* Round trip: format, parse the text again, same rule, same text. */
	FUZZ_CHECK(xp_rule_format(&r, fmt, sizeof(fmt)) > 0, "format");
	snprintf(again, sizeof(again), "%s", fmt);
	argc2 = split(again, argv2, MAX_WORDS);
	err[0] = 0;
	rc = xp_rule_parse(argc2, argv2, &r2, err, sizeof(err));
	FUZZ_CHECK(!rc, "formatted rule '%s' does not parse: %s", fmt, err);
	FUZZ_CHECK(!memcmp(&r, &r2, sizeof(r)), "'%s' parses to another rule", fmt);
	FUZZ_CHECK(xp_rule_format(&r2, fmt2, sizeof(fmt2)) > 0 && !strcmp(fmt, fmt2),
		   "'%s' formats as '%s'", fmt, fmt2);

	/* Numbers read as text.h says: decimal unless 0x (a leading 0 changes nothing),
	 * no sign. */
	for (int i = 0; i < argc; i++) {
		char alt[1100], *keep = argv[i];
		bool hex = keep[0] == '0' && (keep[1] == 'x' || keep[1] == 'X');
		const char *digits = hex ? keep + 2 : keep;

		if (!*digits ||
		    strspn(digits, hex ? "0123456789abcdefABCDEF" : "0123456789") != strlen(digits))
			continue;
		snprintf(alt, sizeof(alt), hex ? "0x0%s" : "0%s", digits);
		argv[i] = alt;
		rc = xp_rule_parse(argc, argv, &r2, err, sizeof(err));
		/* a word over the parser's 31-byte limit may be refused, never misread */
		FUZZ_CHECK_KNOWN("rule-octal",
				 (rc && strlen(alt) > 31) || (!rc && !memcmp(&r, &r2, sizeof(r))),
				 "word %d '%s' written '%s' gives another rule (or none: %s)", i,
				 keep, alt, rc ? err : "");
		snprintf(alt, sizeof(alt), "+%s", keep);
		rc = xp_rule_parse(argc, argv, &r2, err, sizeof(err));
		argv[i] = keep;
		FUZZ_CHECK_KNOWN("rule-sign", rc, "word %d '%s' written '%s' still parses", i, keep,
				 alt);
	}

	/* Every word is read whole: spoiling any one must make the rule refused. */
	for (int i = 0; i < argc; i++) {
		char spoilt[1100], *keep = argv[i];

		snprintf(spoilt, sizeof(spoilt), "%sz", keep);
		argv[i] = spoilt;
		rc = xp_rule_parse(argc, argv, &r2, err, sizeof(err));
		argv[i] = keep;
		/* SIOCGIFINDEX drops an alias suffix: "lo:z" names lo */
		FUZZ_CHECK_KNOWN(i && !strcmp(argv[i - 1], "redirect") && strchr(keep, ':') ?
					 "rule-ifname-alias" :
				 strlen(keep) > 30 ? "rule-word-long" :
						     "rule-word",
				 rc,
				 "word %d '%s' changed to '%s' and the rule still parses (as '%s')",
				 i, keep, spoilt, fmt);
	}
}

static void check_file(const uint8_t *d, size_t n)
{
	static struct xp_rule rules[FILE_RULES];
	char path[64], err[512];
	__u32 got = 0;
	int fd = memfd_create("rules", MFD_CLOEXEC), rc;

	FUZZ_CHECK(fd >= 0, "memfd_create");
	FUZZ_CHECK(write(fd, d, n) == (ssize_t)n, "write");
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	err[0] = 0;
	rc = xp_rules_parse_file(path, rules, FILE_RULES, &got, err, sizeof(err));
	close(fd);
	check_err(rc, err, "xp_rules_parse_file");

	/* The model: split on '\n', cut at '#', words on blanks, each line whole. */
	size_t pos = 0;
	unsigned lineno = 0, k = 0;
	unsigned bad_line = 0;
	bool excused = false, nul = false, lng = false, many = false;

	while (pos < n) {
		size_t end = pos, len;
		static char line[1 << 16];
		char *argv[MAX_WORDS], lerr[256];
		struct xp_rule r;
		int argc;

		while (end < n && d[end] != '\n')
			end++;
		len = end - pos;
		lineno++;
		memcpy(line, d + pos, len);
		line[len] = 0;
		pos = end + 1;
		char *hash = memchr(line, '#', len);
		size_t eff = hash ? (size_t)(hash - line) : len;
		/* words of the whole line, counted past a NUL too */
		char copy[1 << 16];

		memcpy(copy, line, eff);
		for (size_t i = 0; i < eff; i++)
			if (!copy[i])
				copy[i] = ' ';
		copy[eff] = 0;
		argc = split(copy, argv, MAX_WORDS);
		/* Over a limit: a NUL (text.h: a line with one is an error), a raw line of 1023 bytes or more (a reader on fgets(1024) splits
		 * it, comment and all), more than 64 words. It tags whatever goes wrong from
		 * here on. */
		bool l_nul = memchr(line, 0, len) != NULL, l_lng = len >= 1023, l_many = argc > 64;
		bool lim = l_nul || l_lng || l_many;

		nul |= l_nul;
		lng |= l_lng;
		many |= l_many;

		/* Over a limit, a line may be refused (the refusal naming it), or else must be
		 * read whole and right like any other. */
		if (lim && rc && !bad_line) {
			char here[32];

			snprintf(here, sizeof(here), "line %u:", lineno);
			if (strstr(err, here)) {
				bad_line = lineno;
				excused = true;
				break;
			}
		}
		if (!argc)
			continue;
		if (k >= FILE_RULES) {
			bad_line = lineno;
			break;
		}
		lerr[0] = 0;
		if (xp_rule_parse(argc, argv, &r, lerr, sizeof(lerr))) {
			bad_line = lineno;
			break;
		}
		if (!rc || k < got)
			FUZZ_CHECK_KNOWN(
				nul  ? "rule-file-nul" :
				lng  ? "rule-file-long" :
				many ? "rule-file-words" :
				       "rule-file",
				k < got && !memcmp(&r, &rules[k], sizeof(r)),
				"line %u: the file reader's rule %u differs from the line read whole",
				lineno, k);
		k++;
	}
	if (!rc) {
		FUZZ_CHECK_KNOWN(nul  ? "rule-file-nul" :
				 lng  ? "rule-file-long" :
				 many ? "rule-file-words" :
					"rule-file",
				 !bad_line, "file accepted, but line %u is wrong (read whole)",
				 bad_line);
		if (bad_line)
			return;
		FUZZ_CHECK_KNOWN(nul  ? "rule-file-nul" :
				 lng  ? "rule-file-long" :
				 many ? "rule-file-words" :
					"rule-file",
				 got == k, "file gave %u rules, its lines hold %u", got, k);
		return;
	}
	FUZZ_CHECK(bad_line, "file refused (%s), but every line is right", err);
	char want[32];

	snprintf(want, sizeof(want), "line %u:", bad_line);
	FUZZ_CHECK_KNOWN(nul  ? "rule-file-nul" :
			 lng  ? "rule-file-long" :
			 many ? "rule-file-words" :
				"rule-file",
			 strstr(err, want), "refusal '%s' should name line %u%s", err, bad_line,
			 excused ? " (over a limit)" : "");
}

/* Any rule the language can say (fields it does not constrain zeroed) formats to text
 * that parses back to it. */
static void check_struct(const uint8_t *d, size_t n)
{
	struct fuzz_in in = { d, n };
	struct xp_rule r, r2;
	char fmt[512], *argv[MAX_WORDS], err[256];
	int argc;

	memset(&r, 0, sizeof(r));
	r.prio = fuzz_u8(&in) & 1 ? fuzz_u32(&in) : fuzz_u8(&in);
	r.fields = fuzz_u8(&in);
	if (r.fields & XP_RF_QUEUE)
		r.queue = fuzz_u8(&in);
	if (r.fields & XP_RF_VLAN)
		r.vlan = fuzz_u16(&in) & 0x0fff;
	if (r.fields & XP_RF_ETHTYPE)
		r.ethertype = fuzz_u16(&in);
	if (r.fields & (XP_RF_SRC | XP_RF_DST)) {
		r.family = fuzz_u8(&in) & 1 ? 6 : 4;
		if (fuzz_u8(&in) & 1) {
			r.fields |= XP_RF_ETHTYPE;
			r.ethertype = r.family == 4 ? 0x0800 : 0x86dd;
		}
	}
	if (r.fields & XP_RF_SRC) {
		r.src_len = fuzz_u8(&in) % (r.family == 4 ? 33 : 129);
		for (int i = 0; i < (r.family == 4 ? 4 : 16); i++)
			r.src[i] = fuzz_u8(&in);
	}
	if (r.fields & XP_RF_DST) {
		r.dst_len = fuzz_u8(&in) % (r.family == 4 ? 33 : 129);
		for (int i = 0; i < (r.family == 4 ? 4 : 16); i++)
			r.dst[i] = fuzz_u8(&in);
	}
	if (r.fields & XP_RF_L4PROTO)
		r.l4proto = fuzz_u8(&in);
	if (r.fields & XP_RF_SPORT) {
		r.sport_lo = fuzz_u16(&in);
		r.sport_hi = fuzz_u8(&in) & 1 ? r.sport_lo : fuzz_u16(&in);
	}
	if (r.fields & XP_RF_DPORT) {
		r.dport_lo = fuzz_u16(&in);
		r.dport_hi = fuzz_u8(&in) & 1 ? r.dport_lo : fuzz_u16(&in);
	}
	r.action.kind = fuzz_u8(&in) % XP_ACT_MAX;
	if (r.action.kind == XP_ACT_REDIRECT)
		r.action.ifindex = 1; /* lo: the only interface of our namespace */
	if (r.action.kind == XP_ACT_XSK && fuzz_u8(&in) & 1) {
		r.action.flags = XP_ACT_F_SLOT;
		r.action.slot = fuzz_u8(&in) % XP_STEER_XSK_SLOTS;
	}
	/* what the language cannot say: a contradiction, an empty range, no interface */
	if (((r.fields & XP_RF_ETHTYPE) && (r.fields & (XP_RF_SRC | XP_RF_DST)) &&
	     r.ethertype != (r.family == 4 ? 0x0800 : 0x86dd)) ||
	    r.sport_lo > r.sport_hi || r.dport_lo > r.dport_hi ||
	    (r.action.kind == XP_ACT_REDIRECT && !r.action.ifindex))
		return;
	FUZZ_CHECK(xp_rule_format(&r, fmt, sizeof(fmt)) > 0, "format");
	argc = split(fmt, argv, MAX_WORDS);
	err[0] = 0;
	FUZZ_CHECK(!xp_rule_parse(argc, argv, &r2, err, sizeof(err)),
		   "formatted rule does not parse: %s", err);
	xp_rule_format(&r, fmt, sizeof(fmt));
	FUZZ_CHECK(!memcmp(&r, &r2, sizeof(r)), "'%s' parses to another rule", fmt);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	/* Own network namespace when allowed: interface names and indexes ("redirect")
	 * must not change under the round trip as other tests add and remove veths. */
	if (unshare(CLONE_NEWNET))
		fprintf(stderr, "fuzz_rule: no private network namespace (%s); using this one\n",
			strerror(errno));
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static char text[1 << 16];

	if (!size || size >= sizeof(text))
		return 0;
	if (data[0] & 1) {
		check_file(data + 1, size - 1);
		return 0;
	}
	if (data[0] & 2) {
		check_struct(data + 1, size - 1);
		return 0;
	}
	memcpy(text, data + 1, size - 1);
	text[size - 1] = 0;
	check_words(text);
	return 0;
}
