// SPDX-License-Identifier: BSD-3-Clause
/* xpile-loader rule and stats. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <net/if.h>

#include "loader.h"
#include "xpile/text.h"

static struct xp_rule rules_buf[XP_STEER_MAX_RULES];
static struct xp_counter cnt_buf[XP_STEER_MAX_RULES];

static int rule_list(struct xp_steer *s, struct loader_args *a)
{
	struct xp_action d, pe;
	char line[512], ds[64], ps[64];
	__u32 n;

	if (xp_steer_rules_get(s, rules_buf, cnt_buf, XP_STEER_MAX_RULES, &n) ||
	    xp_steer_default_get(s, &d, &pe))
		return ut_say(1, "%s: cannot read the rules", a->ifname);
	xp_action_format(&d, ds, sizeof(ds));
	xp_action_format(&pe, ps, sizeof(ps));
	if (a->json)
		printf("{\"ifname\":\"%s\",\"default\":\"%s\",\"parse_error\":\"%s\",\"rules\":[",
		       a->ifname, ds, ps);
	for (__u32 i = 0; i < n; i++) {
		xp_rule_format(&rules_buf[i], line, sizeof(line));
		if (a->json)
			printf("%s{\"id\":%u,\"rule\":\"%s\",\"packets\":%llu,\"bytes\":%llu}",
			       i ? "," : "", rules_buf[i].id, line,
			       (unsigned long long)cnt_buf[i].packets,
			       (unsigned long long)cnt_buf[i].bytes);
		else
			printf("id %-5u %-60s %12llu pkts %14llu bytes\n", rules_buf[i].id, line,
			       (unsigned long long)cnt_buf[i].packets,
			       (unsigned long long)cnt_buf[i].bytes);
	}
	if (a->json)
		printf("]}\n");
	else
		printf("default action %s, parse errors %s, %u rule%s\n", ds, ps, n,
		       n == 1 ? "" : "s");
	return 0;
}

static const char *const rule_verbs[] = { "add", "del", "list", "replace", "default" };
#define RULE_VERBS "add, del, list, replace or default"

static bool is_verb(const char *w)
{
	for (size_t i = 0; i < sizeof(rule_verbs) / sizeof(rule_verbs[0]); i++)
		if (!strcmp(w, rule_verbs[i]))
			return true;
	return false;
}

/* Bad input: one line, exit status 2. */
#define bad(...) (ut_say(1, __VA_ARGS__) + 1)

/* A set too big for the tables is bad input (2); the library has said why. */
static int set_status(int err)
{
	return err == -E2BIG || err == -ENOSPC ? 2 : 1;
}

static int rule_del(struct xp_steer *s, struct loader_args *a)
{
	char range[64];
	__u32 id;
	int err;

	if (a->argc != 1)
		return bad("rule del: expected one rule id (see 'xpile-loader rule list %s')",
			   a->ifname);
	if (xp_parse_u32(a->argv[0], 1, UINT32_MAX, &id))
		return bad("rule del: expected a rule id (%s), got '%s'; see 'xpile-loader "
			   "rule list %s'",
			   xp_parse_range_str(1, UINT32_MAX, range, sizeof(range)), a->argv[0],
			   a->ifname);
	err = xp_steer_rule_del(s, id);
	/* The library said which id is not there; where to look is the loader's to say. */
	if (err == -ENOENT)
		return ut_say(1, "%s: the rules and their ids: xpile-loader rule list %s",
			      a->ifname, a->ifname);
	return err ? 1 : 0;
}

static int rule_default(struct xp_steer *s, struct loader_args *a)
{
	bool perr = a->argc >= 1 && !strcmp(a->argv[0], "parse-error");
	struct xp_action d, pe;
	char why[256];
	int used;

	if (perr) {
		a->argc--;
		a->argv++;
	}
	if (xp_action_parse(a->argc, a->argv, &used, perr ? &pe : &d, why, sizeof(why)))
		return bad("rule default%s: %s", perr ? " parse-error" : "", why);
	if (used != a->argc)
		return bad("rule default: unexpected '%s' after the action; usage: rule default "
			   "IFACE [parse-error] ACTION",
			   a->argv[used]);
	return xp_steer_default_set(s, perr ? NULL : &d, perr ? &pe : NULL) ? 1 : 0;
}

/* Rule text as words or as one quoted argument, alike: rule add eth0 udp dport 53
 * action pass, or rule add eth0 'udp dport 53 action pass' (what a rule file line and
 * the options that take a rule, --flow or --capture-rule, hold). */
static int rule_words(struct loader_args *a, char *buf, size_t len, char **words, int max)
{
	size_t used = 0;
	int n = 0;

	for (int i = 0; i < a->argc; i++) {
		size_t l = strlen(a->argv[i]);
		char *sp, *t;

		if (used + l + 1 > len)
			return bad("rule: longer than %zu bytes; a rule is a few words", len - 1);
		memcpy(buf + used, a->argv[i], l + 1);
		for (t = strtok_r(buf + used, " \t", &sp); t; t = strtok_r(NULL, " \t", &sp)) {
			if (n == max)
				return bad("rule: more than %d words; a rule has fewer", max);
			words[n++] = t;
		}
		used += l + 1;
	}
	a->argc = n;
	a->argv = words;
	return 0;
}

static int run_rule(struct loader_args *a)
{
	static char text[4096], *words[256];
	struct xp_steer *s;
	const char *verb;
	char why[512];
	int rc = 0;

	if (a->argc < 1)
		return bad("rule: missing IFACE or subcommand; usage: xpile-loader rule "
			   "add|del|list|replace|default IFACE ...");
	/* Both "rule eth0 add ..." and "rule add eth0 ..." read naturally. */
	if (is_verb(a->ifname)) {
		verb = a->ifname;
		a->ifname = a->argv[0];
	} else if (is_verb(a->argv[0])) {
		verb = a->argv[0];
	} else {
		/* Name the word that is not an interface here: "rule frob eth0" and
		 * "rule eth0 frob" both mean an unknown subcommand. */
		return bad("rule: unknown subcommand '%s': %s",
			   if_nametoindex(a->ifname) ? a->argv[0] : a->ifname, RULE_VERBS);
	}
	a->argc--;
	a->argv++;
	if ((!strcmp(verb, "add") || !strcmp(verb, "default")) &&
	    (rc = rule_words(a, text, sizeof(text), words, 256)))
		return rc;
	if (loader_open_existing(a, &s))
		return 1;
	if (!strcmp(verb, "list")) {
		rc = a->argc ?
			     bad("rule list: unexpected '%s'; usage: rule list IFACE", a->argv[0]) :
			     rule_list(s, a);
	} else if (!strcmp(verb, "add")) {
		struct xp_rule r;
		__u32 id;

		if (xp_rule_parse(a->argc, a->argv, &r, why, sizeof(why)))
			rc = bad("rule add: %s; see 'xpile-loader rule --help'", why);
		else if ((rc = xp_steer_rule_add(s, &r, &id)))
			rc = set_status(rc);
		else
			printf(a->json ? "{\"id\":%u}\n" : "rule %u added\n", id);
	} else if (!strcmp(verb, "del")) {
		rc = rule_del(s, a);
	} else if (!strcmp(verb, "replace")) {
		__u32 n;

		/* A file that cannot be read whole changes nothing: the parser refuses it
		 * before the set in force is touched. */
		if (a->argc != 1)
			rc = bad("rule replace: expected one FILE ('-' for stdin)");
		else if (xp_rules_parse_file(a->argv[0], rules_buf, XP_STEER_MAX_RULES, &n, why,
					     sizeof(why)))
			rc = bad("rule replace: %s", why);
		else if ((rc = xp_steer_rules_replace(s, rules_buf, n)))
			rc = set_status(rc);
		else
			printf(a->json ? "{\"ifname\":\"%s\",\"rules\":%u}\n" :
					 "%s: %u rules in force\n",
			       a->ifname, n);
	} else {
		rc = rule_default(s, a);
	}
	xp_steer_close(s, false);
	return rc;
}

static const char *const cnt_names[XP_CNT_MAX] = {
	"pass", "drop", "tx", "redirect", "xsk", "xsk_nosock", "default", "parse_error",
};
static const char *const perr_names[XP_PERR_MAX] = {
	"eth_trunc",	 "vlan_trunc", "vlan_depth",	"ip4_trunc",	 "ip4_hdr",
	"ip4_opt_trunc", "ip6_trunc",  "ip6_ext_trunc", "ip6_ext_depth", "tcp_trunc",
	"tcp_hdr",	 "udp_trunc",  "icmp_trunc",	"icmp6_trunc",
};

static void print_stats(struct loader_args *a, const struct xp_steer_stats *st,
			const struct xp_steer_stats *prev, double dt)
{
	if (a->json) {
		printf("{\"ifname\":\"%s\"", a->ifname);
		for (int i = 0; i < XP_CNT_MAX; i++)
			printf(",\"%s_packets\":%llu,\"%s_bytes\":%llu", cnt_names[i],
			       (unsigned long long)st->verdict[i].packets, cnt_names[i],
			       (unsigned long long)st->verdict[i].bytes);
		for (int i = 0; i < XP_PERR_MAX; i++)
			printf(",\"err_%s\":%llu", perr_names[i],
			       (unsigned long long)st->parse_err[i]);
		printf("}\n");
		fflush(stdout);
		return;
	}
	printf("%s:\n", a->ifname);
	for (int i = 0; i < XP_CNT_MAX; i++) {
		printf("  %-12s %14llu pkts %16llu bytes", cnt_names[i],
		       (unsigned long long)st->verdict[i].packets,
		       (unsigned long long)st->verdict[i].bytes);
		if (prev && dt > 0)
			printf(" %12.0f pps",
			       (st->verdict[i].packets - prev->verdict[i].packets) / dt);
		printf("\n");
	}
	for (int i = 0; i < XP_PERR_MAX; i++)
		if (st->parse_err[i])
			printf("  error %-16s %12llu\n", perr_names[i],
			       (unsigned long long)st->parse_err[i]);
	fflush(stdout);
}

static int run_stats(struct loader_args *a)
{
	struct xp_steer_stats st, prev;
	struct xp_steer *s;
	struct timespec t0, t1;
	unsigned rounds = 0;

	if (loader_open_existing(a, &s))
		return 1;
	if (xp_steer_stats_read(s, &st)) {
		xp_steer_close(s, false);
		return ut_say(1, "%s: cannot read counters", a->ifname);
	}
	print_stats(a, &st, NULL, 0);
	if (!a->json && !a->watch)
		rule_list(s, a);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	while (a->watch && (!a->count || ++rounds < a->count)) {
		double dt;

		sleep(a->interval ?: 1);
		prev = st;
		if (xp_steer_stats_read(s, &st))
			break;
		clock_gettime(CLOCK_MONOTONIC, &t1);
		dt = (t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) / 1e9;
		t0 = t1;
		print_stats(a, &st, &prev, dt);
	}
	xp_steer_close(s, false);
	return 0;
}

static const struct cli_opt rule_opts[] = { OPT_PIN, OPT_JSON, { 0 } };

const struct loader_cmd cmd_rule = {
	CLI_COMMAND(
		"rule", "add|del|list|replace|default IFACE ...",
		"Add, delete, list or replace rules", rule_opts, .min_args = 2, .max_args = -1,
		.words_after = 2, .check = loader_check_iface,
		.description =
			"  rule add IFACE [prio N] MATCH... action ACTION\n"
			"  rule del IFACE ID\n"
			"  rule list IFACE             rules in evaluation order with packet/byte counters\n"
			"  rule replace IFACE FILE     swap in a whole rule file ('-': stdin) atomically\n"
			"  rule default IFACE [parse-error] ACTION\n"
			"\n"
			"MATCH (all optional, all must hold):\n"
			"  queue N                 RX queue\n"
			"  vlan N                  outer VLAN id (802.1Q or 802.1ad)\n"
			"  ip | ipv6 | arp | ethertype N\n"
			"  src PREFIX, dst PREFIX  IPv4 or IPv6 address[/len]\n"
			"  tcp | udp | icmp | icmpv6 | proto N\n"
			"  sport N[-M], dport N[-M] (TCP/UDP; later fragments have no ports)\n"
			"ACTION: pass | drop | tx | redirect IFACE | xsk [slot N] | route [via IFACE]\n"
			"  xsk sends to the AF_XDP socket of the packet's RX queue (slot N: a named\n"
			"  socket); with no socket there the packet goes to the kernel instead.\n"
			"\n"
			"Rules run by ascending prio (ties: insertion order); the first match acts. "
			"Every change swaps the whole rule set at once: no packet sees a mix of old and "
			"new rules. Rule files hold one rule per line (the text after 'rule add IFACE'), "
			"'#' starts a comment. After the verb and IFACE, every word belongs to the rule "
			"(\"prio -1\" is a rule word, not an option) except this command's options "
			"spelled in full (--json, -j, --pin-path DIR); the rule may as well be one "
			"quoted argument ('udp dport 4789 action xsk'), as wire --flow takes it.",
		.examples = "xpile-loader rule add eth0 prio 10 udp dport 4789 action xsk\n"
			    "xpile-loader rule add eth0 src 198.18.0.0/15 action drop\n"
			    "xpile-loader rule replace eth0 /etc/xpile/eth0.rules"),
	run_rule,
};

static const struct cli_opt stats_opts[] = {
	OPT_PIN,
	OPT_JSON,
	OPT("watch", FLAG, watch, NULL, "Print again every interval, with rates",
	    .short_name = 'w'),
	OPT("interval", NUM, interval, "SECONDS",
	    "Seconds between --watch reports, 1..3600 (default 1)", .short_name = 'i', .min = 1,
	    .max = 3600),
	OPT("count", NUM, count, "N", "Stop --watch after N reports (default: until interrupted)",
	    .short_name = 'c', .min = 1),
	{ 0 },
};

LOADER_IFACE_COMMAND(
	cmd_stats, run_stats, "stats", "Show verdict, parse-error and per-rule counters",
	stats_opts,
	.description = "Counters are per CPU in the kernel and summed here: packets and bytes "
		       "per verdict (xsk_nosock: steered to a queue without a socket, so passed; "
		       "default: no rule matched; parse_error: truncated or malformed), per "
		       "parse-error reason and per rule.",
	.examples =
		"xpile-loader stats eth0\nxpile-loader stats --watch --interval 2 --count 10 eth0");
