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

__attribute__((format(printf, 3, 4))) static int fail(char *err, size_t len, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	if (err && len)
		vsnprintf(err, len, fmt, ap);
	va_end(ap);
	return -EINVAL;
}

static bool num(const char *s, unsigned long max, unsigned long *out)
{
	char *end;

	if (!s || !*s || *s == '-')
		return false;
	errno = 0;
	*out = strtoul(s, &end, 0);
	return !errno && !*end && *out <= max;
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
	unsigned long a, b;
	char buf[32], *dash;

	snprintf(buf, sizeof(buf), "%s", s);
	dash = strchr(buf, '-');
	if (dash)
		*dash = 0;
	if (!num(buf, 65535, &a))
		return -1;
	b = a;
	if (dash && !num(dash + 1, 65535, &b))
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
	unsigned long l;
	int fam;

	snprintf(buf, sizeof(buf), "%s", s);
	slash = strchr(buf, '/');
	if (slash)
		*slash = 0;
	fam = strchr(buf, ':') ? 6 : 4;
	memset(addr, 0, 16);
	if (inet_pton(fam == 6 ? AF_INET6 : AF_INET, buf, addr) != 1)
		return -1;
	l = fam == 6 ? 128 : 32;
	if (slash && !num(slash + 1, l, &l))
		return -1;
	if (*family && *family != fam)
		return -2;
	*family = fam;
	*len = l;
	return 0;
}

int xp_action_parse(int argc, char **argv, int *used, struct xp_action *a, char *err, size_t errlen)
{
	unsigned long v;

	memset(a, 0, sizeof(*a));
	*used = 1;
	if (argc < 1)
		return fail(err, errlen, "missing action: pass, drop, tx, redirect IFNAME, xsk");
	if (!strcmp(argv[0], "pass"))
		a->kind = XP_ACT_PASS;
	else if (!strcmp(argv[0], "drop"))
		a->kind = XP_ACT_DROP;
	else if (!strcmp(argv[0], "tx"))
		a->kind = XP_ACT_TX;
	else if (!strcmp(argv[0], "redirect")) {
		if (argc < 2)
			return fail(err, errlen, "redirect needs an interface name or index");
		a->kind = XP_ACT_REDIRECT;
		a->ifindex = if_nametoindex(argv[1]);
		if (!a->ifindex && num(argv[1], 0xffffffff, &v))
			a->ifindex = v;
		if (!a->ifindex)
			return fail(err, errlen, "redirect: no interface '%s' here", argv[1]);
		*used = 2;
	} else if (!strcmp(argv[0], "xsk")) {
		a->kind = XP_ACT_XSK;
		if (argc >= 3 && !strcmp(argv[1], "slot")) {
			if (!num(argv[2], XP_STEER_XSK_SLOTS - 1, &v))
				return fail(err, errlen, "xsk slot: expected 0..%d, got '%s'",
					    XP_STEER_XSK_SLOTS - 1, argv[2]);
			a->flags = XP_ACT_F_SLOT;
			a->slot = v;
			*used = 3;
		}
	} else {
		return fail(err, errlen,
			    "unknown action '%s': expected pass, drop, tx, redirect IFNAME, xsk",
			    argv[0]);
	}
	return 0;
}

int xp_rule_parse(int argc, char **argv, struct xp_rule *r, char *err, size_t errlen)
{
	unsigned long v;
	bool have_action = false;
	int i = 0, used, rc;

	memset(r, 0, sizeof(*r));
	while (i < argc) {
		const char *k = argv[i], *val = i + 1 < argc ? argv[i + 1] : NULL;
		size_t j;

		for (j = 0; j < sizeof(l4_names) / sizeof(l4_names[0]); j++)
			if (!strcmp(k, l4_names[j].name))
				break;
		if (j < sizeof(l4_names) / sizeof(l4_names[0])) {
			if (r->fields & XP_RF_L4PROTO)
				return fail(err, errlen, "L4 protocol given twice");
			r->fields |= XP_RF_L4PROTO;
			r->l4proto = l4_names[j].proto;
			i++;
			continue;
		}
		for (j = 0; j < sizeof(eth_names) / sizeof(eth_names[0]); j++)
			if (!strcmp(k, eth_names[j].name))
				break;
		if (j < sizeof(eth_names) / sizeof(eth_names[0])) {
			r->fields |= XP_RF_ETHTYPE;
			r->ethertype = eth_names[j].type;
			i++;
			continue;
		}
		if (!strcmp(k, "action")) {
			rc = xp_action_parse(argc - i - 1, argv + i + 1, &used, &r->action, err,
					     errlen);
			if (rc)
				return rc;
			i += 1 + used;
			have_action = true;
			continue;
		}
		if (!val)
			return fail(err, errlen, "'%s' needs a value", k);
		if (!strcmp(k, "prio")) {
			if (!num(val, 0xffffffff, &v))
				return fail(err, errlen, "prio: expected a number, got '%s'", val);
			r->prio = v;
		} else if (!strcmp(k, "queue")) {
			if (!num(val, XP_STEER_MAX_QUEUES - 1, &v))
				return fail(err, errlen, "queue: expected 0..%d, got '%s'",
					    XP_STEER_MAX_QUEUES - 1, val);
			r->fields |= XP_RF_QUEUE;
			r->queue = v;
		} else if (!strcmp(k, "vlan")) {
			if (!num(val, 4095, &v))
				return fail(err, errlen, "vlan: expected 0..4095, got '%s'", val);
			r->fields |= XP_RF_VLAN;
			r->vlan = v;
		} else if (!strcmp(k, "ethertype")) {
			if (!num(val, 0xffff, &v))
				return fail(err, errlen, "ethertype: expected 0..0xffff, got '%s'",
					    val);
			r->fields |= XP_RF_ETHTYPE;
			r->ethertype = v;
		} else if (!strcmp(k, "proto")) {
			if (!num(val, 255, &v))
				return fail(err, errlen, "proto: expected 0..255, got '%s'", val);
			r->fields |= XP_RF_L4PROTO;
			r->l4proto = v;
		} else if (!strcmp(k, "src") || !strcmp(k, "dst")) {
			bool dst = k[0] == 'd';

			rc = parse_prefix(val, dst ? r->dst : r->src,
					  dst ? &r->dst_len : &r->src_len, &r->family);
			if (rc == -2)
				return fail(err, errlen, "src and dst must be the same IP version");
			if (rc)
				return fail(err, errlen, "%s: expected ADDRESS[/LEN], got '%s'", k,
					    val);
			r->fields |= dst ? XP_RF_DST : XP_RF_SRC;
		} else if (!strcmp(k, "sport") || !strcmp(k, "dport")) {
			bool dst = k[0] == 'd';

			if (parse_range(val, dst ? &r->dport_lo : &r->sport_lo,
					dst ? &r->dport_hi : &r->sport_hi))
				return fail(err, errlen, "%s: expected PORT or LO-HI, got '%s'", k,
					    val);
			r->fields |= dst ? XP_RF_DPORT : XP_RF_SPORT;
		} else {
			return fail(err, errlen, "unknown keyword '%s'", k);
		}
		i += 2;
	}
	if (!have_action)
		return fail(err, errlen, "missing 'action ACTION'");
	return xp_rule_check(r, err, errlen);
}

int xp_rule_check(const struct xp_rule *r, char *err, size_t errlen)
{
	if ((r->fields & (XP_RF_SRC | XP_RF_DST)) && r->family != 4 && r->family != 6)
		return fail(err, errlen, "address family must be 4 or 6");
	if ((r->fields & XP_RF_SRC) && r->src_len > (r->family == 4 ? 32 : 128))
		return fail(err, errlen, "source prefix length too long");
	if ((r->fields & XP_RF_DST) && r->dst_len > (r->family == 4 ? 32 : 128))
		return fail(err, errlen, "destination prefix length too long");
	if ((r->fields & XP_RF_QUEUE) && r->queue >= XP_STEER_MAX_QUEUES)
		return fail(err, errlen, "queue must be below %d", XP_STEER_MAX_QUEUES);
	if ((r->fields & XP_RF_SPORT) && r->sport_lo > r->sport_hi)
		return fail(err, errlen, "empty source port range");
	if ((r->fields & XP_RF_DPORT) && r->dport_lo > r->dport_hi)
		return fail(err, errlen, "empty destination port range");
	if ((r->fields & XP_RF_ETHTYPE) && (r->fields & (XP_RF_SRC | XP_RF_DST)) &&
	    r->ethertype != (r->family == 4 ? ETH_P_IP : ETH_P_IPV6))
		return fail(err, errlen, "ethertype contradicts the address family");
	if (r->action.kind >= XP_ACT_MAX)
		return fail(err, errlen, "unknown action %u", r->action.kind);
	if ((r->action.flags & XP_ACT_F_SLOT) && r->action.slot >= XP_STEER_XSK_SLOTS)
		return fail(err, errlen, "xsk slot must be below %d", XP_STEER_XSK_SLOTS);
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

int xp_rules_parse_file(const char *path, struct xp_rule *rules, __u32 max, __u32 *n, char *err,
			size_t errlen)
{
	char line[1024], tmp[256];
	FILE *f = strcmp(path, "-") ? fopen(path, "re") : stdin;
	int lineno = 0, rc = 0;

	*n = 0;
	if (!f)
		return fail(err, errlen, "cannot open %s: %s", path, strerror(errno));
	while (fgets(line, sizeof(line), f)) {
		char *argv[64], *hash = strchr(line, '#'), *tok, *save;
		int argc = 0;

		lineno++;
		if (hash)
			*hash = 0;
		for (tok = strtok_r(line, " \t\r\n", &save); tok && argc < 64;
		     tok = strtok_r(NULL, " \t\r\n", &save))
			argv[argc++] = tok;
		if (!argc)
			continue;
		if (*n >= max) {
			rc = fail(err, errlen, "line %d: more than %u rules", lineno, max);
			break;
		}
		rc = xp_rule_parse(argc, argv, &rules[*n], tmp, sizeof(tmp));
		if (rc) {
			fail(err, errlen, "%s line %d: %s", path, lineno, tmp);
			break;
		}
		(*n)++;
	}
	if (f != stdin)
		(void)fclose(f); /* read only: nothing to lose */
	return rc;
}
