// SPDX-License-Identifier: BSD-3-Clause
/*
 * The text of a NIC flow rule (xpile/ethtool.h): the match words of the rule text, read
 * by the rule parser itself so both languages take the same numbers, prefixes and
 * ports, then the target ("queue N" or "drop") and an optional "id N".
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <linux/if_ether.h>
#include <netinet/in.h>

#include "steer_internal.h"
#include "xpile/ethtool.h"
#include "xpile/steer.h"
#include "xpile/text.h"

#define FLOW_WORDS                                                                      \
	"ip, ipv6, tcp, udp, icmp, icmpv6, proto, src, dst, sport, dport, queue, drop " \
	"or id"

/* The words a flow takes and how many values follow each. */
static int flow_word(const char *k)
{
	static const struct {
		const char *name;
		int nval;
	} words[] = { { "ip", 0 },     { "ipv6", 0 },  { "tcp", 0 },  { "udp", 0 }, { "icmp", 0 },
		      { "icmpv6", 0 }, { "proto", 1 }, { "src", 1 },  { "dst", 1 }, { "sport", 1 },
		      { "dport", 1 },  { "queue", 1 }, { "drop", 0 }, { "id", 1 } };

	for (size_t i = 0; i < sizeof(words) / sizeof(words[0]); i++)
		if (!strcmp(k, words[i].name))
			return words[i].nval;
	return -1;
}

/* LO-HI as value and mask: the NIC compares ports under a mask, so only an aligned
 * block of a power-of-two size is one rule. */
static int port_mask(const char *what, __u16 lo, __u16 hi, __u16 *port, __u16 *mask, char *err,
		     size_t errlen)
{
	__u32 size = (__u32)hi - lo + 1;

	if (size & (size - 1) || lo & (size - 1))
		return xp_text_fail(
			err, errlen,
			"%s %u-%u: the NIC matches ports under a mask; give one port or "
			"an aligned block (4096-8191)",
			what, lo, hi);
	*port = lo;
	*mask = (__u16) ~(size - 1);
	return 0;
}

static void mask_prefix(__u8 *a, __u8 len)
{
	for (int i = 0; i < 16; i++) {
		int bits = len - i * 8;

		a[i] &= bits >= 8 ? 0xff : bits <= 0 ? 0 : (__u8)(0xff << (8 - bits));
	}
}

int xp_flow_parse(int argc, char **argv, struct xp_flow *f, char *err, size_t errlen)
{
	char *match[64], pass[] = "action", act[] = "pass";
	const char *target = NULL;
	struct xp_rule r;
	int n = 0, rc;

	memset(f, 0, sizeof(*f));
	for (int i = 0; i < argc; i++) {
		const char *k = argv[i];
		int nval = flow_word(k);
		__u32 v;

		if (nval < 0)
			return xp_text_fail(err, errlen,
					    "unknown flow word '%s': expected " FLOW_WORDS, k);
		if (nval && i + 1 >= argc)
			return xp_text_fail(err, errlen, "'%s' needs a value", k);
		if (!strcmp(k, "queue") || !strcmp(k, "drop")) {
			if (target)
				return xp_text_fail(
					err, errlen,
					"'%s' after '%s': a flow goes to one queue or is dropped",
					k, target);
			target = k;
			f->drop = !nval;
			if (nval && xp_parse_u32(argv[i + 1], 0, UINT32_MAX - 1, &f->queue))
				return xp_text_fail(err, errlen,
						    "queue: expected a number, got '%s'",
						    argv[i + 1]);
		} else if (!strcmp(k, "id")) {
			if (f->has_id)
				return xp_text_fail(err, errlen,
						    "'id' given twice: a flow has one");
			if (xp_parse_u32(argv[i + 1], 0, RX_CLS_LOC_SPECIAL - 1, &v))
				return xp_text_fail(err, errlen, "id: expected a number, got '%s'",
						    argv[i + 1]);
			f->has_id = true;
			f->id = v;
		} else {
			if (n + 1 + nval + 2 > (int)(sizeof(match) / sizeof(match[0])))
				return xp_text_fail(err, errlen, "more words than a flow has");
			match[n++] = argv[i];
			if (nval)
				match[n++] = argv[i + 1];
		}
		i += nval;
	}
	if (!target)
		return xp_text_fail(err, errlen,
				    "missing 'queue N' or 'drop': where the flow goes");
	/* The rule parser reads the match; the action it needs is a placeholder. */
	match[n++] = pass;
	match[n++] = act;
	rc = xp_rule_parse(n, match, &r, err, errlen);
	if (rc)
		return rc;
	f->family = r.family ? r.family : r.ethertype == ETH_P_IPV6 ? 6 : 4;
	if ((r.fields & XP_RF_ETHTYPE) && r.ethertype != ETH_P_IP && r.ethertype != ETH_P_IPV6)
		return xp_text_fail(err, errlen, "a flow is IPv4 (ip) or IPv6 (ipv6)");
	if (r.fields & XP_RF_L4PROTO)
		f->l4proto = r.l4proto;
	if ((r.fields & (XP_RF_SPORT | XP_RF_DPORT)) && f->l4proto != IPPROTO_TCP &&
	    f->l4proto != IPPROTO_UDP)
		return xp_text_fail(err, errlen, "sport and dport need tcp or udp before them");
	if ((r.fields & XP_RF_SPORT) && (rc = port_mask("sport", r.sport_lo, r.sport_hi, &f->sport,
							&f->sport_mask, err, errlen)))
		return rc;
	if ((r.fields & XP_RF_DPORT) && (rc = port_mask("dport", r.dport_lo, r.dport_hi, &f->dport,
							&f->dport_mask, err, errlen)))
		return rc;
	if (r.fields & XP_RF_SRC) {
		f->src_len = r.src_len;
		memcpy(f->src, r.src, 16);
		mask_prefix(f->src, f->src_len);
	}
	if (r.fields & XP_RF_DST) {
		f->dst_len = r.dst_len;
		memcpy(f->dst, r.dst, 16);
		mask_prefix(f->dst, f->dst_len);
	}
	return 0;
}

static int put_port(char *buf, size_t len, const char *key, __u16 port, __u16 mask)
{
	if (!mask)
		return 0;
	if (mask == 0xffff)
		return snprintf(buf, len, " %s %u", key, port);
	return snprintf(buf, len, " %s %u-%u", key, port, port | (__u16)~mask);
}

int xp_flow_format(const struct xp_flow *f, char *buf, size_t len)
{
	static const struct {
		__u8 proto;
		const char *name;
	} l4[] = { { IPPROTO_TCP, "tcp" },
		   { IPPROTO_UDP, "udp" },
		   { IPPROTO_ICMP, "icmp" },
		   { IPPROTO_ICMPV6, "icmpv6" } };
	int af = f->family == 6 ? AF_INET6 : AF_INET;
	char a[INET6_ADDRSTRLEN];
	size_t off = 0;
	int n;

#define PUT(...)                                                                 \
	do {                                                                     \
		n = snprintf(buf + off, off < len ? len - off : 0, __VA_ARGS__); \
		off += n > 0 ? (size_t)n : 0;                                    \
	} while (0)
	PUT("%s", f->family == 6 ? "ipv6" : "ip");
	if (f->l4proto) {
		const char *name = NULL;

		for (size_t i = 0; i < sizeof(l4) / sizeof(l4[0]); i++)
			if (l4[i].proto == f->l4proto)
				name = l4[i].name;
		if (name)
			PUT(" %s", name);
		else
			PUT(" proto %u", f->l4proto);
	}
	if (f->src_len)
		PUT(" src %s/%u", inet_ntop(af, f->src, a, sizeof(a)), f->src_len);
	if (f->dst_len)
		PUT(" dst %s/%u", inet_ntop(af, f->dst, a, sizeof(a)), f->dst_len);
	n = put_port(buf + off, off < len ? len - off : 0, "sport", f->sport, f->sport_mask);
	off += n;
	n = put_port(buf + off, off < len ? len - off : 0, "dport", f->dport, f->dport_mask);
	off += n;
	if (f->drop)
		PUT(" drop");
	else
		PUT(" queue %u", f->queue);
#undef PUT
	return off < len ? (int)off : -ENOSPC;
}
