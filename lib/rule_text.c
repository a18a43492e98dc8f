// SPDX-License-Identifier: BSD-3-Clause
/*
 * The rule language of `xpile-loader rule` and rule files:
 *
 *   [prio N] [queue N] [vlan N] [ip|ipv6|arp|ethertype N] [src PREFIX] [dst PREFIX]
 *   [tcp|udp|icmp|icmpv6|proto N] [sport N[-M]] [dport N[-M]] action ACTION
 *   ACTION: pass | drop | tx | redirect IFNAME | xsk [slot N]
 */
#include <arpa/inet.h>
#include <errno.h>
#include <net/if.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/if_ether.h>
#include <netinet/in.h>

#include "steer_internal.h"
#include "xpile/steer.h"
#include "xpile/text.h"

int xp_text_fail(char *err, size_t len, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	if (err && len)
		vsnprintf(err, len, fmt, ap);
	va_end(ap);
	return -EINVAL;
}

/* A number word of the rule text: decimal unless 0x, no sign (xpile/text.h). */
static int word_u32(const char *key, const char *val, __u32 max, __u32 *out, char *err,
		    size_t errlen)
{
	char range[64];

	if (!xp_parse_u32(val, 0, max, out))
		return 0;
	return xp_text_fail(err, errlen, "%s: expected %s, got '%s'", key,
			    xp_parse_range_str(0, max, range, sizeof(range)), val);
}

static const struct {
	const char *name;
	__u8 proto;
} l4_names[] = { { "tcp", IPPROTO_TCP },
		 { "udp", IPPROTO_UDP },
		 { "icmp", IPPROTO_ICMP },
		 { "icmpv6", IPPROTO_ICMPV6 } };

static const struct {
	const char *name;
	__u16 type;
} eth_names[] = { { "ip", ETH_P_IP }, { "ipv6", ETH_P_IPV6 }, { "arp", ETH_P_ARP } };

static int parse_range(const char *s, __u16 *lo, __u16 *hi)
{
	char buf[32], *dash;
	__u32 a, b;

	if (snprintf(buf, sizeof(buf), "%s", s) >= (int)sizeof(buf))
		return -1;
	dash = strchr(buf, '-');
	if (dash)
		*dash = 0;
	if (xp_parse_u32(buf, 0, 65535, &a))
		return -1;
	b = a;
	if (dash && xp_parse_u32(dash + 1, 0, 65535, &b))
		return -1;
	if (b < a)
		return -1;
	*lo = a;
	*hi = b;
	return 0;
}

static int parse_prefix(const char *s, __u8 *addr, __u8 *len, __u8 *family)
{
	char buf[INET6_ADDRSTRLEN + 8], *slash;
	__u32 l;
	int fam;

	if (snprintf(buf, sizeof(buf), "%s", s) >= (int)sizeof(buf))
		return -1;
	slash = strchr(buf, '/');
	if (slash)
		*slash = 0;
	fam = strchr(buf, ':') ? 6 : 4;
	memset(addr, 0, 16);
	if (inet_pton(fam == 6 ? AF_INET6 : AF_INET, buf, addr) != 1)
		return -1;
	l = fam == 6 ? 128 : 32;
	if (slash && xp_parse_u32(slash + 1, 0, l, &l))
		return -1;
	if (*family && *family != fam)
		return -2;
	*family = fam;
	*len = l;
	return 0;
}

#define ACTIONS "pass, drop, tx, redirect IFNAME, xsk [slot N], route [via IFNAME]"

/* An interface of this network namespace by name, else by index: a rule that
 * redirects to no interface would drop silently in the kernel. */
static int parse_ifindex(const char *s, __u32 *ifindex, char *err, size_t errlen)
{
	char name[IF_NAMESIZE];
	__u32 v;

	/* SIOCGIFINDEX reads "lo:z" as lo (an alias suffix): the name must come back. */
	*ifindex = if_nametoindex(s);
	if (*ifindex && if_indextoname(*ifindex, name) && !strcmp(name, s))
		return 0;
	*ifindex = 0;
	if (xp_parse_u32(s, 1, UINT32_MAX, &v))
		return xp_text_fail(
			err, errlen,
			"redirect: no interface '%s' in this network namespace; give a name "
			"or index from `ip link`",
			s);
	if (!if_indextoname(v, name))
		return xp_text_fail(
			err, errlen,
			"redirect: no interface with index %u in this network namespace; "
			"give a name or index from `ip link`",
			v);
	*ifindex = v;
	return 0;
}

int xp_action_parse(int argc, char **argv, int *used, struct xp_action *a, char *err, size_t errlen)
{
	int rc;

	memset(a, 0, sizeof(*a));
	*used = 1;
	if (argc < 1)
		return xp_text_fail(err, errlen, "missing action: expected " ACTIONS);
	if (!strcmp(argv[0], "pass"))
		a->kind = XP_ACT_PASS;
	else if (!strcmp(argv[0], "drop"))
		a->kind = XP_ACT_DROP;
	else if (!strcmp(argv[0], "tx"))
		a->kind = XP_ACT_TX;
	else if (!strcmp(argv[0], "redirect")) {
		if (argc < 2)
			return xp_text_fail(err, errlen,
					    "redirect needs an interface name or index");
		a->kind = XP_ACT_REDIRECT;
		rc = parse_ifindex(argv[1], &a->ifindex, err, errlen);
		if (rc)
			return rc;
		*used = 2;
	} else if (!strcmp(argv[0], "route")) {
		/* By the FIB of IFNAME (a port's TAP), else the receiving device's. */
		a->kind = XP_ACT_ROUTE;
		if (argc >= 2 && !strcmp(argv[1], "via")) {
			if (argc < 3)
				return xp_text_fail(err, errlen,
						    "route via needs an interface name or index");
			rc = parse_ifindex(argv[2], &a->ifindex, err, errlen);
			if (rc)
				return rc;
			*used = 3;
		}
	} else if (!strcmp(argv[0], "xsk")) {
		a->kind = XP_ACT_XSK;
		if (argc >= 2 && !strcmp(argv[1], "slot")) {
			__u32 v;

			if (argc < 3)
				return xp_text_fail(err, errlen, "xsk slot needs a number in 0..%d",
						    XP_STEER_XSK_SLOTS - 1);
			rc = word_u32("xsk slot", argv[2], XP_STEER_XSK_SLOTS - 1, &v, err, errlen);
			if (rc)
				return rc;
			a->flags = XP_ACT_F_SLOT;
			a->slot = v;
			*used = 3;
		}
	} else {
		return xp_text_fail(err, errlen, "unknown action '%s': expected " ACTIONS, argv[0]);
	}
	return 0;
}

/* The fields a rule sets, each at most once: a repeat would silently win. */
enum field_slot {
	S_PRIO,
	S_QUEUE,
	S_VLAN,
	S_ETH,
	S_L4,
	S_SRC,
	S_DST,
	S_SPORT,
	S_DPORT,
	S_ACTION,
	S_NR,
};

static enum field_slot slot_of(const char *k)
{
	static const struct {
		const char *name;
		enum field_slot slot;
	} words[] = { { "prio", S_PRIO },     { "queue", S_QUEUE }, { "vlan", S_VLAN },
		      { "ethertype", S_ETH }, { "proto", S_L4 },    { "src", S_SRC },
		      { "dst", S_DST },	      { "sport", S_SPORT }, { "dport", S_DPORT },
		      { "action", S_ACTION } };
	size_t j;

	for (j = 0; j < sizeof(l4_names) / sizeof(l4_names[0]); j++)
		if (!strcmp(k, l4_names[j].name))
			return S_L4;
	for (j = 0; j < sizeof(eth_names) / sizeof(eth_names[0]); j++)
		if (!strcmp(k, eth_names[j].name))
			return S_ETH;
	for (j = 0; j < sizeof(words) / sizeof(words[0]); j++)
		if (!strcmp(k, words[j].name))
			return words[j].slot;
	return S_NR;
}

int xp_rule_parse(int argc, char **argv, struct xp_rule *r, char *err, size_t errlen)
{
	const char *seen[S_NR] = { 0 };
	int i = 0, used, rc;

	memset(r, 0, sizeof(*r));
	while (i < argc) {
		const char *k = argv[i], *val = i + 1 < argc ? argv[i + 1] : NULL;
		enum field_slot slot = slot_of(k);
		__u32 v;
		size_t j;

		if (slot == S_NR)
			return xp_text_fail(
				err, errlen,
				"unknown keyword '%s': expected prio, queue, vlan, ip, ipv6, arp, "
				"ethertype, src, dst, tcp, udp, icmp, icmpv6, proto, sport, dport "
				"or action",
				k);
		if (seen[slot] && !strcmp(seen[slot], k))
			return xp_text_fail(err, errlen,
					    "'%s' given twice: a rule names each field once", k);
		if (seen[slot])
			return xp_text_fail(err, errlen,
					    "'%s' after '%s': a rule names each field once", k,
					    seen[slot]);
		seen[slot] = k;

		if (slot == S_L4 && strcmp(k, "proto")) {
			for (j = 0; strcmp(k, l4_names[j].name); j++)
				;
			r->fields |= XP_RF_L4PROTO;
			r->l4proto = l4_names[j].proto;
			i++;
			continue;
		}
		if (slot == S_ETH && strcmp(k, "ethertype")) {
			for (j = 0; strcmp(k, eth_names[j].name); j++)
				;
			r->fields |= XP_RF_ETHTYPE;
			r->ethertype = eth_names[j].type;
			i++;
			continue;
		}
		if (slot == S_ACTION) {
			rc = xp_action_parse(argc - i - 1, argv + i + 1, &used, &r->action, err,
					     errlen);
			if (rc)
				return rc;
			i += 1 + used;
			continue;
		}
		if (!val)
			return xp_text_fail(err, errlen, "'%s' needs a value", k);
		switch (slot) {
		case S_PRIO:
			rc = word_u32(k, val, UINT32_MAX, &r->prio, err, errlen);
			break;
		case S_QUEUE:
			rc = word_u32(k, val, XP_STEER_MAX_QUEUES - 1, &v, err, errlen);
			r->fields |= XP_RF_QUEUE;
			r->queue = v;
			break;
		case S_VLAN:
			rc = word_u32(k, val, 4095, &v, err, errlen);
			r->fields |= XP_RF_VLAN;
			r->vlan = v;
			break;
		case S_ETH:
			rc = word_u32(k, val, 0xffff, &v, err, errlen);
			r->fields |= XP_RF_ETHTYPE;
			r->ethertype = v;
			break;
		case S_L4:
			rc = word_u32(k, val, 255, &v, err, errlen);
			r->fields |= XP_RF_L4PROTO;
			r->l4proto = v;
			break;
		case S_SRC:
		case S_DST: {
			bool dst = slot == S_DST;

			rc = parse_prefix(val, dst ? r->dst : r->src,
					  dst ? &r->dst_len : &r->src_len, &r->family);
			if (rc == -2)
				return xp_text_fail(err, errlen,
						    "src and dst must be the same IP version");
			if (rc)
				return xp_text_fail(
					err, errlen,
					"%s: expected ADDRESS[/LEN] (LEN 0..32 for IPv4, 0..128 "
					"for IPv6), got '%s'",
					k, val);
			r->fields |= dst ? XP_RF_DST : XP_RF_SRC;
			break;
		}
		default: { /* S_SPORT, S_DPORT */
			bool dst = slot == S_DPORT;

			rc = parse_range(val, dst ? &r->dport_lo : &r->sport_lo,
					 dst ? &r->dport_hi : &r->sport_hi);
			if (rc)
				return xp_text_fail(
					err, errlen,
					"%s: expected PORT or LO-HI with LO <= HI in 0..65535, "
					"got '%s'",
					k, val);
			r->fields |= dst ? XP_RF_DPORT : XP_RF_SPORT;
			break;
		}
		}
		if (rc)
			return rc;
		i += 2;
	}
	if (!seen[S_ACTION])
		return xp_text_fail(err, errlen, "missing 'action ACTION'");
	return xp_rule_check(r, err, errlen);
}

int xp_rule_check(const struct xp_rule *r, char *err, size_t errlen)
{
	if ((r->fields & (XP_RF_SRC | XP_RF_DST)) && r->family != 4 && r->family != 6)
		return xp_text_fail(err, errlen, "address family must be 4 or 6");
	if ((r->fields & XP_RF_SRC) && r->src_len > (r->family == 4 ? 32 : 128))
		return xp_text_fail(err, errlen, "source prefix length too long");
	if ((r->fields & XP_RF_DST) && r->dst_len > (r->family == 4 ? 32 : 128))
		return xp_text_fail(err, errlen, "destination prefix length too long");
	if ((r->fields & XP_RF_QUEUE) && r->queue >= XP_STEER_MAX_QUEUES)
		return xp_text_fail(err, errlen, "queue must be below %d", XP_STEER_MAX_QUEUES);
	if ((r->fields & XP_RF_SPORT) && r->sport_lo > r->sport_hi)
		return xp_text_fail(err, errlen, "empty source port range");
	if ((r->fields & XP_RF_DPORT) && r->dport_lo > r->dport_hi)
		return xp_text_fail(err, errlen, "empty destination port range");
	if ((r->fields & XP_RF_ETHTYPE) && (r->fields & (XP_RF_SRC | XP_RF_DST)) &&
	    r->ethertype != (r->family == 4 ? ETH_P_IP : ETH_P_IPV6))
		return xp_text_fail(err, errlen, "ethertype contradicts the address family");
	if (r->action.kind >= XP_ACT_MAX)
		return xp_text_fail(err, errlen, "unknown action %u", r->action.kind);
	if ((r->action.flags & XP_ACT_F_SLOT) && r->action.slot >= XP_STEER_XSK_SLOTS)
		return xp_text_fail(err, errlen, "xsk slot must be below %d", XP_STEER_XSK_SLOTS);
	return 0;
}

int xp_action_format(const struct xp_action *a, char *buf, size_t len)
{
	char ifn[IF_NAMESIZE];

	switch (a->kind) {
	case XP_ACT_DROP:
		return snprintf(buf, len, "drop");
	case XP_ACT_TX:
		return snprintf(buf, len, "tx");
	case XP_ACT_REDIRECT:
		if (if_indextoname(a->ifindex, ifn))
			return snprintf(buf, len, "redirect %s", ifn);
		return snprintf(buf, len, "redirect %u", a->ifindex);
	case XP_ACT_ROUTE:
		if (!a->ifindex)
			return snprintf(buf, len, "route");
		if (if_indextoname(a->ifindex, ifn))
			return snprintf(buf, len, "route via %s", ifn);
		return snprintf(buf, len, "route via %u", a->ifindex);
	case XP_ACT_XSK:
		if (a->flags & XP_ACT_F_SLOT)
			return snprintf(buf, len, "xsk slot %u", a->slot);
		return snprintf(buf, len, "xsk");
	default:
		return snprintf(buf, len, "pass");
	}
}

static void cat(char *buf, size_t len, size_t *off, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
static void cat(char *buf, size_t len, size_t *off, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (*off >= len)
		return;
	va_start(ap, fmt);
	n = vsnprintf(buf + *off, len - *off, fmt, ap);
	va_end(ap);
	if (n > 0)
		*off += n;
}

int xp_rule_format(const struct xp_rule *r, char *buf, size_t len)
{
	char a[INET6_ADDRSTRLEN], act[64];
	int af = r->family == 6 ? AF_INET6 : AF_INET;
	size_t off = 0;

	buf[0] = 0;
	cat(buf, len, &off, "prio %u", r->prio);
	if (r->fields & XP_RF_QUEUE)
		cat(buf, len, &off, " queue %u", r->queue);
	if (r->fields & XP_RF_VLAN)
		cat(buf, len, &off, " vlan %u", r->vlan);
	if (r->fields & XP_RF_ETHTYPE) {
		const char *n = r->ethertype == ETH_P_IP   ? "ip" :
				r->ethertype == ETH_P_IPV6 ? "ipv6" :
				r->ethertype == ETH_P_ARP  ? "arp" :
							     NULL;
		if (n)
			cat(buf, len, &off, " %s", n);
		else
			cat(buf, len, &off, " ethertype 0x%04x", r->ethertype);
	}
	if (r->fields & XP_RF_SRC)
		cat(buf, len, &off, " src %s/%u", inet_ntop(af, r->src, a, sizeof(a)), r->src_len);
	if (r->fields & XP_RF_DST)
		cat(buf, len, &off, " dst %s/%u", inet_ntop(af, r->dst, a, sizeof(a)), r->dst_len);
	if (r->fields & XP_RF_L4PROTO) {
		const char *n = NULL;

		for (size_t j = 0; j < sizeof(l4_names) / sizeof(l4_names[0]); j++)
			if (l4_names[j].proto == r->l4proto)
				n = l4_names[j].name;
		if (n)
			cat(buf, len, &off, " %s", n);
		else
			cat(buf, len, &off, " proto %u", r->l4proto);
	}
	if (r->fields & XP_RF_SPORT) {
		cat(buf, len, &off, " sport %u", r->sport_lo);
		if (r->sport_hi != r->sport_lo)
			cat(buf, len, &off, "-%u", r->sport_hi);
	}
	if (r->fields & XP_RF_DPORT) {
		cat(buf, len, &off, " dport %u", r->dport_lo);
		if (r->dport_hi != r->dport_lo)
			cat(buf, len, &off, "-%u", r->dport_hi);
	}
	xp_action_format(&r->action, act, sizeof(act));
	cat(buf, len, &off, " action %s", act);
	return off < len ? (int)off : -ENOSPC;
}

#define RULE_LINE_MAX XP_RULE_TEXT_MAX
#define RULE_SEP " \t\r\n"

int xp_rule_words(char *text, char **argv, int max, char *err, size_t errlen)
{
	char *tok, *save = NULL;
	int argc = 0;

	if (max > XP_RULE_WORDS_MAX)
		max = XP_RULE_WORDS_MAX;
	for (tok = strtok_r(text, RULE_SEP, &save); tok; tok = strtok_r(NULL, RULE_SEP, &save)) {
		if (argc == max) {
			xp_text_fail(err, errlen, "more than %d words; a rule has fewer", max);
			return -E2BIG;
		}
		argv[argc++] = tok;
	}
	return argc;
}

int xp_rule_parse_str(const char *text, struct xp_rule *out, char *err, size_t errlen)
{
	char buf[XP_RULE_TEXT_MAX + 1], *argv[XP_RULE_WORDS_MAX];
	size_t len = strnlen(text, sizeof(buf));
	int argc;

	if (len > XP_RULE_TEXT_MAX)
		return xp_text_fail(err, errlen, "rule longer than %d bytes", XP_RULE_TEXT_MAX);
	memcpy(buf, text, len + 1);
	argc = xp_rule_words(buf, argv, XP_RULE_WORDS_MAX, err, errlen);
	if (argc < 0)
		return -EINVAL;
	if (!argc)
		return xp_text_fail(err, errlen, "empty rule");
	return xp_rule_parse(argc, argv, out, err, errlen);
}

static int read_fail(const char *path, const struct xp_lines *lr, int rc, char *err, size_t errlen)
{
	if (rc == -EFBIG)
		return xp_text_fail(
			err, errlen,
			"%s line %u: longer than %d bytes (comments included); shorten it", path,
			lr->lineno, RULE_LINE_MAX);
	if (rc == -EILSEQ)
		return xp_text_fail(err, errlen,
				    "%s line %u: holds a NUL byte; a rule file is text", path,
				    lr->lineno);
	return xp_text_fail(err, errlen, "cannot read %s: %s", path, strerror(-rc));
}

int xp_rules_parse_file(const char *path, struct xp_rule *rules, __u32 max, __u32 *n, char *err,
			size_t errlen)
{
	FILE *f = strcmp(path, "-") ? fopen(path, "re") : stdin;
	struct xp_lines lr;
	char tmp[256], *line;
	int rc;

	*n = 0;
	if (!f)
		return xp_text_fail(err, errlen, "cannot open %s: %s", path, strerror(errno));
	rc = xp_lines_init(&lr, f, RULE_LINE_MAX);
	if (rc) {
		if (f != stdin)
			(void)fclose(f); /* read only: nothing to lose */
		return xp_text_fail(err, errlen, "cannot read %s: %s", path, strerror(-rc));
	}
	while ((rc = xp_lines_next(&lr, &line)) > 0) {
		line[strcspn(line, "#")] = 0;
		if (line[strspn(line, RULE_SEP)] == 0)
			continue;
		if (*n >= max) {
			rc = xp_text_fail(err, errlen,
					  "%s line %u: more than %u rules; a set holds %u", path,
					  lr.lineno, max, max);
			goto out;
		}
		rc = xp_rule_parse_str(line, &rules[*n], tmp, sizeof(tmp));
		if (rc) {
			xp_text_fail(err, errlen, "%s line %u: %s", path, lr.lineno, tmp);
			goto out;
		}
		(*n)++;
	}
	if (rc < 0)
		rc = read_fail(path, &lr, rc, err, errlen);
out:
	if (rc)
		*n = 0;
	xp_lines_free(&lr);
	if (f != stdin)
		(void)fclose(f); /* read only: nothing to lose */
	return rc;
}
