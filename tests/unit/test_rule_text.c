// SPDX-License-Identifier: BSD-3-Clause
/*
 * The rule text and rule files (lib/rule_text.c): numbers are decimal, signs are
 * refused, each field is given once, a redirect names an interface that exists, and a
 * rule file is read whole or refused (read error, long line, NUL, too many words).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

#include "xpile/steer.h"
#include "xt.h"

static char err[512];

/* Parses @text (words split on spaces) into @r; returns xp_rule_parse()'s result. */
static int parse(const char *text, struct xp_rule *r)
{
	char buf[1024], *argv[128], *sp;
	int argc = 0;

	snprintf(buf, sizeof(buf), "%s", text);
	for (char *t = strtok_r(buf, " ", &sp); t && argc < 128; t = strtok_r(NULL, " ", &sp))
		argv[argc++] = t;
	err[0] = 0;
	return xp_rule_parse(argc, argv, r, err, sizeof(err));
}

/* @text is refused with one line that contains @want. */
static void refused(const char *text, const char *want)
{
	struct xp_rule r;

	XT_EQ(parse(text, &r), -EINVAL);
	if (!XT_CHECK(strstr(err, want) != NULL))
		fprintf(stderr, "  '%s' said '%s', expected '%s'\n", text, err, want);
	XT_CHECK(strchr(err, '\n') == NULL);
}

static void test_decimal(void)
{
	struct xp_rule r;

	XT_EQ(parse("udp dport 0443 action drop", &r), 0);
	XT_EQ(r.dport_lo, 443);
	XT_EQ(r.dport_hi, 443);
	XT_EQ(parse("prio 010 action drop", &r), 0);
	XT_EQ(r.prio, 10);
	XT_EQ(parse("sport 010-020 vlan 09 queue 08 action xsk slot 010", &r), 0);
	XT_EQ(r.sport_lo, 10);
	XT_EQ(r.sport_hi, 20);
	XT_EQ(r.vlan, 9);
	XT_EQ(r.queue, 8);
	XT_EQ(r.action.slot, 10);
	XT_EQ(parse("src 198.18.0.0/015 action drop", &r), 0);
	XT_EQ(r.src_len, 15);
	XT_EQ(parse("proto 017 action pass", &r), 0);
	XT_EQ(r.l4proto, 17);
	XT_EQ(parse("ethertype 0x88cc action pass", &r), 0); /* hex with 0x stays */
	XT_EQ(r.ethertype, 0x88cc);
	XT_EQ(parse("prio 4294967295 action pass", &r), 0);
	XT_CHECK(r.prio == 4294967295u);
	refused("prio 4294967296 action pass", "prio: expected a number in 0..4294967295");
	refused("udp dport 65536 action drop", "dport: expected PORT or LO-HI");
	refused("prio 1e3 action pass", "prio: expected a number");
	refused("prio 0x action pass", "prio: expected a number");
}

static void test_negative(void)
{
	refused("prio -1 action drop", "prio: expected a number in 0..4294967295, got '-1'");
	refused("udp dport -80 action drop", "dport: expected PORT or LO-HI");
	refused("udp dport -80 action drop", "got '-80'");
	refused("udp sport 10--20 action drop", "sport: expected PORT or LO-HI");
	refused("udp sport +5 action drop", "sport: expected PORT or LO-HI");
	refused("action xsk slot -1", "xsk slot: expected a number in 0..63, got '-1'");
	refused("vlan -1 action drop", "vlan: expected a number in 0..4095, got '-1'");
	refused("queue -1 action drop", "queue: expected a number in 0..255, got '-1'");
	refused("proto -6 action drop", "proto: expected a number in 0..255, got '-6'");
	refused("ethertype -1 action drop", "ethertype: expected a number in 0..65535");
	refused("src 198.18.0.0/-1 action drop", "src: expected ADDRESS[/LEN]");
	refused("action xsk slot", "xsk slot needs a number in 0..63");
}

static void test_duplicates(void)
{
	refused("action drop action pass", "'action' given twice");
	refused("prio 1 prio 2 action pass", "'prio' given twice");
	refused("udp dport 1 dport 2 action pass", "'dport' given twice");
	refused("udp tcp action pass", "'tcp' after 'udp'");
	refused("tcp proto 17 action pass", "'proto' after 'tcp'");
	refused("ip ipv6 action pass", "'ipv6' after 'ip'");
	refused("ethertype 0x800 arp action pass", "'arp' after 'ethertype'");
	refused("src 198.18.0.1 src 198.18.0.2 action pass", "'src' given twice");
	refused("queue 1 queue 1 action pass", "'queue' given twice");
	refused("vlan 1 vlan 2 action pass", "'vlan' given twice");
	refused("sport 1 sport 1 action pass", "'sport' given twice");
	refused("dst ::1 dst ::2 action pass", "'dst' given twice");
}

static void test_redirect(void)
{
	struct xp_rule r;

	/* lo is index 1 in every network namespace */
	XT_EQ(parse("action redirect lo", &r), 0);
	XT_EQ(r.action.ifindex, 1);
	XT_EQ(parse("action redirect 1", &r), 0);
	XT_EQ(r.action.ifindex, 1);
	refused("action redirect 99999", "no interface with index 99999");
	refused("action redirect 0", "no interface '0'");
	refused("action redirect -1", "no interface '-1'");
	refused("action redirect nosuch0", "no interface 'nosuch0'");
	refused("action redirect", "redirect needs an interface");
}

static void test_messages(void)
{
	refused("action fly", "unknown action 'fly': expected pass, drop, tx");
	refused("udp", "missing 'action ACTION'");
	refused("frob 1 action drop", "unknown keyword 'frob'");
	refused("prio", "'prio' needs a value");
	refused("action", "missing action: expected pass, drop, tx");
}

/* Writes @len bytes of @data to a new file; returns its path (static). */
static const char *file_of(const void *data, size_t len)
{
	static char path[64];
	int fd;

	snprintf(path, sizeof(path), "/tmp/xpile-rules.XXXXXX");
	fd = mkstemp(path);
	if (fd < 0 || write(fd, data, len) != (ssize_t)len) {
		perror("test file");
		exit(1);
	}
	close(fd);
	return path;
}

static struct xp_rule rules[XP_STEER_MAX_RULES];

/* Parses a rule file holding @len bytes of @data; @n gets the rule count. */
static int parse_data(const void *data, size_t len, __u32 *n)
{
	const char *path = file_of(data, len);
	int rc;

	err[0] = 0;
	*n = 12345;
	rc = xp_rules_parse_file(path, rules, XP_STEER_MAX_RULES, n, err, sizeof(err));
	unlink(path);
	return rc;
}

static void file_refused(const void *data, size_t len, const char *want)
{
	__u32 n;

	XT_EQ(parse_data(data, len, &n), -EINVAL);
	XT_EQ(n, 0);
	if (!XT_CHECK(strstr(err, want) != NULL))
		fprintf(stderr, "  file said '%s', expected '%s'\n", err, want);
	XT_CHECK(strchr(err, '\n') == NULL);
}

static void test_file_ok(void)
{
	const char ok[] = "# comment\r\n\nprio 5 udp dport 0443 action drop # tail\n"
			  "\t src 198.18.0.0/15\taction pass\n"
			  "action tx"; /* no final newline */
	__u32 n;

	XT_EQ(parse_data(ok, sizeof(ok) - 1, &n), 0);
	XT_EQ(n, 3);
	XT_EQ(rules[0].dport_lo, 443);
	XT_EQ(rules[1].src_len, 15);
	XT_EQ(rules[2].action.kind, XP_ACT_TX);
	XT_EQ(parse_data("", 0, &n), 0); /* an empty file: an empty set, on purpose */
	XT_EQ(n, 0);
}

static void test_file_read_error(void)
{
	char dir[] = "/tmp/xpile-rules-dir.XXXXXX";
	__u32 n = 7;

	XT_REQUIRE(mkdtemp(dir));
	XT_EQ(xp_rules_parse_file(dir, rules, XP_STEER_MAX_RULES, &n, err, sizeof(err)), -EINVAL);
	XT_EQ(n, 0);
	XT_CHECK(strstr(err, "cannot read") && strstr(err, dir) && strstr(err, "Is a directory"));
	rmdir(dir);
	/* fopen succeeds, every read fails (EIO): no rules is not "an empty file" */
	n = 7;
	XT_EQ(xp_rules_parse_file("/proc/self/mem", rules, XP_STEER_MAX_RULES, &n, err,
				  sizeof(err)),
	      -EINVAL);
	XT_EQ(n, 0);
	XT_CHECK(strstr(err, "cannot read /proc/self/mem") != NULL);
	n = 7;
	XT_EQ(xp_rules_parse_file("/nonexistent/x.rules", rules, XP_STEER_MAX_RULES, &n, err,
				  sizeof(err)),
	      -EINVAL);
	XT_CHECK(strstr(err, "cannot open /nonexistent/x.rules: No such file") != NULL);
}

static void test_file_long_line(void)
{
	char buf[8192];
	__u32 n;
	int len;

	/* The reproducer: a 1,100-byte comment whose tail is a rule is one comment. */
	len = snprintf(buf, sizeof(buf), "# disabled:%1100s action drop\n", "");
	XT_EQ(parse_data(buf, len, &n), 0);
	XT_EQ(n, 0);
	len = snprintf(buf, sizeof(buf), "# disabled:%5000s action drop\n", "");
	file_refused(buf, len, "line 1: longer than 4096 bytes");
	/* A comment just under the limit is a comment, whatever it holds. */
	len = snprintf(buf, sizeof(buf), "action pass\n#%4083s action drop\n", "");
	XT_EQ(len, 12 + 4096 + 1);
	XT_EQ(parse_data(buf, len, &n), 0);
	XT_EQ(n, 1);
	XT_EQ(rules[0].action.kind, XP_ACT_PASS);
	len = snprintf(buf, sizeof(buf), "action pass\n#%4084s action drop\n", "");
	file_refused(buf, len, "line 2: longer than 4096 bytes");
}

static void test_file_nul(void)
{
	static const char nul[] = "action pass\naction drop\0 udp dport 9\n";

	file_refused(nul, sizeof(nul) - 1, "line 2: holds a NUL byte");
}

static void test_file_words(void)
{
	char buf[4096];
	int len = 0;

	/* The reproducer: action drop, 62 words, udp dport 22 (65 words). */
	len += snprintf(buf + len, sizeof(buf) - len, "action drop");
	for (int i = 0; i < 62; i++)
		len += snprintf(buf + len, sizeof(buf) - len, " ip");
	len += snprintf(buf + len, sizeof(buf) - len, " udp dport 22\n");
	file_refused(buf, len, "line 1: more than 64 words");
}

/* The one tokeniser from a string: the file's limits and messages, blanks of any kind. */
static void test_parse_str(void)
{
	char buf[XP_RULE_TEXT_MAX + 16], why[256];
	struct xp_rule r, w;
	int len = 0;

	XT_EQ(xp_rule_parse_str(" udp\tdport 4789\r\naction  xsk ", &r, why, sizeof(why)), 0);
	{
		char *argv[] = { "udp", "dport", "4789", "action", "xsk" };

		XT_EQ(xp_rule_parse(5, argv, &w, why, sizeof(why)), 0);
	}
	XT_EQ(memcmp(&r, &w, sizeof(r)), 0);
	XT_EQ(xp_rule_parse_str(" \t", &r, why, sizeof(why)), -EINVAL);
	XT_CHECK(strstr(why, "empty rule") != NULL);
	len += snprintf(buf + len, sizeof(buf) - len, "action drop");
	for (int i = 0; i < 62; i++)
		len += snprintf(buf + len, sizeof(buf) - len, " ip");
	xp_rule_parse_str(buf, &r, why, sizeof(why)); /* 64 words: the parser's to judge */
	XT_CHECK(strstr(why, "words") == NULL);
	snprintf(buf + len, sizeof(buf) - len, " udp");
	XT_EQ(xp_rule_parse_str(buf, &r, why, sizeof(why)), -EINVAL);
	XT_CHECK(strstr(why, "more than 64 words; a rule has fewer") != NULL);
	memset(buf, ' ', XP_RULE_TEXT_MAX + 1);
	buf[XP_RULE_TEXT_MAX + 1] = 0;
	XT_EQ(xp_rule_parse_str(buf, &r, why, sizeof(why)), -EINVAL);
	XT_CHECK(strstr(why, "rule longer than 4096 bytes") != NULL);
	XT_EQ(xp_rule_parse_str("udp dport 65536 action drop", &r, why, sizeof(why)), -EINVAL);
	XT_CHECK(strstr(why, "dport") != NULL);
}

static void test_file_bad_rule(void)
{
	static const char bad[] = "action pass\n\nudp dport 0443 prio -1 action drop\n";
	static const char dup[] = "action drop action pass\n";

	file_refused(bad, sizeof(bad) - 1, "line 3: prio: expected a number");
	file_refused(dup, sizeof(dup) - 1, "line 1: 'action' given twice");
}

static void test_file_too_many(void)
{
	size_t cap = (XP_STEER_MAX_RULES + 1) * 12;
	char *buf = malloc(cap);
	size_t len = 0;

	XT_REQUIRE(buf);
	for (int i = 0; i <= XP_STEER_MAX_RULES; i++)
		len += snprintf(buf + len, cap - len, "action tx\n");
	file_refused(buf, len, "line 1025: more than 1024 rules");
	free(buf);
}

int main(void)
{
	XT_RUN(test_decimal);
	XT_RUN(test_negative);
	XT_RUN(test_duplicates);
	XT_RUN(test_redirect);
	XT_RUN(test_messages);
	XT_RUN(test_file_ok);
	XT_RUN(test_file_read_error);
	XT_RUN(test_file_long_line);
	XT_RUN(test_file_nul);
	XT_RUN(test_file_words);
	XT_RUN(test_parse_str);
	XT_RUN(test_file_bad_rule);
	XT_RUN(test_file_too_many);
	return xt_done();
}
