// SPDX-License-Identifier: BSD-3-Clause
/*
 * One rule against one frame in user space, with the steer program's own parser
 * (bpf/parse.h), so --capture-rule and --punt mean what the same text means in
 * `xpile-loader rule`: a field a rule names must match, an unnamed one is a wildcard,
 * and a frame the parser refuses (truncated, malformed) matches no rule (the program
 * applies its parse-error action to it instead).
 */
#include <stdbool.h>
#include <string.h>

/* parse.h is written for the BPF target: its loop hints mean nothing to gcc. */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunknown-pragmas"
#include "parse.h"
#pragma GCC diagnostic pop

#include "xpile/steer.h"

static bool prefix_eq(const __u8 *a, const __u8 *b, __u32 bits)
{
	__u32 bytes = bits / 8, rest = bits % 8;

	if (memcmp(a, b, bytes))
		return false;
	return !rest || !((a[bytes] ^ b[bytes]) & (0xff00u >> rest));
}

#define MATCH_HEAD 256u /* enough for Ethernet, two tags, IPv4 with options and TCP */
#define MATCH_MAX 4096u /* a frame's first buffer is at most one UMEM chunk */

/* The parser reads headers in place, as in the kernel, where an IPv4 header 14 bytes
 * into a frame is only 2-byte aligned: in C that is undefined, so the headers are
 * copied to a buffer that puts the L3 header on 4 bytes. A frame whose headers run past
 * MATCH_HEAD (long IPv6 extension chains) is parsed again from a whole copy, so the
 * result is always the program's. */
static int parse_aligned(const void *frame, __u32 len, struct xp_parsed *p)
{
	__u8 buf[MATCH_MAX + 2] __attribute__((aligned(8)));
	__u32 n = len < MATCH_HEAD ? len : MATCH_HEAD;
	int rc;

	if (len > MATCH_MAX)
		len = MATCH_MAX;
	memcpy(buf + 2, frame, n);
	rc = xp_parse(buf + 2, buf + 2 + n, p, 1);
	if (rc == XP_PARSE_OK || n == len)
		return rc;
	memcpy(buf + 2, frame, len);
	return xp_parse(buf + 2, buf + 2 + len, p, 1);
}

int xp_rule_match(const struct xp_rule *r, const void *frame, __u32 len, __u32 queue)
{
	struct xp_parsed p = { 0 };
	__u32 f = r->fields, sport, dport;

	if ((f & XP_RF_QUEUE) && queue != r->queue)
		return 0;
	if (parse_aligned(frame, len, &p) != XP_PARSE_OK)
		return 0;
	/* The parse fills the flow key: the fields are read back out of it. */
	sport = xp_parsed_sport(&p);
	dport = xp_parsed_dport(&p);
	if ((f & XP_RF_VLAN) && xp_parsed_vlan(&p) != r->vlan)
		return 0;
	if ((f & XP_RF_ETHTYPE) && xp_parsed_ethertype(&p) != r->ethertype)
		return 0;
	if ((f & (XP_RF_SRC | XP_RF_DST)) && p.family != r->family)
		return 0;
	if ((f & XP_RF_SRC) && !prefix_eq(xp_parsed_src(&p), r->src, r->src_len))
		return 0;
	if ((f & XP_RF_DST) && !prefix_eq(xp_parsed_dst(&p), r->dst, r->dst_len))
		return 0;
	if ((f & XP_RF_L4PROTO) && (!p.family || xp_parsed_l4proto(&p) != r->l4proto))
		return 0;
	if ((f & XP_RF_SPORT) &&
	    (!xp_parsed_has_ports(&p) || sport < r->sport_lo || sport > r->sport_hi))
		return 0;
	if ((f & XP_RF_DPORT) &&
	    (!xp_parsed_has_ports(&p) || dport < r->dport_lo || dport > r->dport_hi))
		return 0;
	return 1;
}
