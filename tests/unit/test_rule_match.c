// SPDX-License-Identifier: BSD-3-Clause
/*
 * xp_rule_match() (lib/rule_match.c): rule text against crafted frames, the steer
 * program's parser underneath: every named field must match, unnamed ones are
 * wildcards, a frame the parser refuses matches nothing, and the queue is the caller's.
 */
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>

#include "pkt.h"
#include "xpile/steer.h"
#include "xt.h"

static struct pkt P;

/* Does rule @text (without its action) match the frame @s describes on @queue? */
static int match(const char *text, const struct pkt_spec *s, __u32 len_cut, __u32 queue)
{
	char buf[512], err[256], *argv[64], *sp;
	struct xp_rule r;
	int argc = 0;

	snprintf(buf, sizeof(buf), "%s action pass", text);
	for (char *t = strtok_r(buf, " ", &sp); t && argc < 64; t = strtok_r(NULL, " ", &sp))
		argv[argc++] = t;
	if (!XT_CHECK(xp_rule_parse(argc, argv, &r, err, sizeof(err)) == 0)) {
		fprintf(stderr, "  '%s': %s\n", text, err);
		return -1;
	}
	if (!XT_CHECK(pkt_build(s, &P) == 0))
		return -1;
	return xp_rule_match(&r, P.buf, len_cut ? len_cut : P.len, queue);
}

static const struct pkt_spec udp4 = { .family = 4,
				      .src = "198.18.1.1",
				      .dst = "198.18.2.2",
				      .l4 = IPPROTO_UDP,
				      .sport = 1234,
				      .dport = 5555,
				      .payload = 10 };
static const struct pkt_spec tcp6 = { .family = 6,
				      .src = "2001:db8::1",
				      .dst = "2001:db8::2",
				      .l4 = IPPROTO_TCP,
				      .sport = 80,
				      .dport = 40000 };
static const struct pkt_spec vlan_udp4 = { .nvlan = 1,
					   .vlan = { 100 },
					   .family = 4,
					   .src = "198.18.1.1",
					   .dst = "198.18.2.2",
					   .l4 = IPPROTO_UDP,
					   .sport = 1,
					   .dport = 5555 };
static const struct pkt_spec frag4 = { .family = 4,
				       .src = "198.18.1.1",
				       .dst = "198.18.2.2",
				       .l4 = IPPROTO_UDP,
				       .frag = 10,
				       .payload = 8 };
static const struct pkt_spec arp = { .family = 0, .ethertype = 0x0806, .payload = 28 };

static void test_fields(void)
{
	XT_EQ(match("udp dport 5555", &udp4, 0, 0), 1);
	XT_EQ(match("udp dport 5556", &udp4, 0, 0), 0);
	XT_EQ(match("tcp dport 5555", &udp4, 0, 0), 0);
	XT_EQ(match("udp sport 1000-2000", &udp4, 0, 0), 1);
	XT_EQ(match("src 198.18.0.0/15", &udp4, 0, 0), 1);
	XT_EQ(match("src 198.18.2.0/24", &udp4, 0, 0), 0);
	XT_EQ(match("dst 198.18.2.2/32 udp", &udp4, 0, 0), 1);
	XT_EQ(match("dst 198.18.2.3", &udp4, 0, 0), 0);
	XT_EQ(match("ip", &udp4, 0, 0), 1);
	XT_EQ(match("ipv6", &udp4, 0, 0), 0);
	XT_EQ(match("src 2001:db8::/32 tcp sport 80", &tcp6, 0, 0), 1);
	XT_EQ(match("src 198.18.0.0/15", &tcp6, 0, 0), 0); /* family differs */
	XT_EQ(match("dst 2001:db8::3/128", &tcp6, 0, 0), 0);
	XT_EQ(match("arp", &arp, 0, 0), 1);
	XT_EQ(match("udp", &arp, 0, 0), 0);
	XT_EQ(match("dport 0-65535", &arp, 0, 0), 0); /* no ports: no port rule matches */
}

static void test_vlan_queue(void)
{
	XT_EQ(match("vlan 100 udp dport 5555", &vlan_udp4, 0, 0), 1);
	XT_EQ(match("vlan 101", &vlan_udp4, 0, 0), 0);
	XT_EQ(match("vlan 100", &udp4, 0, 0), 0);
	XT_EQ(match("ip udp", &vlan_udp4, 0, 0), 1); /* ethertype after the tag */
	XT_EQ(match("queue 3 udp", &udp4, 0, 3), 1);
	XT_EQ(match("queue 3 udp", &udp4, 0, 2), 0);
}

/* Later fragments carry no ports: they match on protocol and addresses only. */
static void test_fragments(void)
{
	XT_EQ(match("udp", &frag4, 0, 0), 1);
	XT_EQ(match("udp dport 0-65535", &frag4, 0, 0), 0);
	XT_EQ(match("src 198.18.1.1", &frag4, 0, 0), 1);
}

/* A frame cut inside its headers is a parse error: no rule matches it. */
static void test_truncated(void)
{
	XT_EQ(match("ip", &udp4, 14 + 10, 0), 0);
	XT_EQ(match("udp", &udp4, 14 + 20 + 4, 0), 0);
	XT_EQ(match("ip", &udp4, 10, 0), 0);
	XT_EQ(match("udp dport 5555", &udp4, 14 + 20 + 8, 0), 1); /* headers whole, no data */
}

int main(void)
{
	XT_RUN(test_fields);
	XT_RUN(test_vlan_queue);
	XT_RUN(test_fragments);
	XT_RUN(test_truncated);
	return xt_done();
}
