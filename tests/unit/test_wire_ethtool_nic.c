// SPDX-License-Identifier: BSD-3-Clause
/*
 * The ethtool ioctl path of lib/ethtool.c against a NIC that has what veth lacks: this
 * binary's own ioctl() (tests/lib/fakenic.h) answers SIOCETHTOOL on "lo" as a driver
 * with 4 RX rings, a 128-entry indirection table and a 16-rule ntuple table would
 * (every other request goes to the kernel). No NIC on the test machine has either table, so this is where the probe,
 * the table written, the location picked, the rules listed back and deleted are seen
 * end to end, on the bytes the kernel would get.
 */
#include <errno.h>
#include <net/if.h>
#include <netinet/in.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "fakenic.h" /* this binary's ioctl() */
#include "xpile/ethtool.h"
#include "xpile/log.h"
#include "xt.h"

static struct xp_flow flow(const char *text)
{
	char buf[256], *argv[32], *sp, err[256];
	struct xp_flow f;
	int argc = 0;

	snprintf(buf, sizeof(buf), "%s", text);
	for (char *t = strtok_r(buf, " ", &sp); t && argc < 32; t = strtok_r(NULL, " ", &sp))
		argv[argc++] = t;
	if (xp_flow_parse(argc, argv, &f, err, sizeof(err))) {
		fprintf(stderr, "  '%s': %s\n", text, err);
		memset(&f, 0, sizeof(f));
	}
	return f;
}

static void reset(void)
{
	memset(&nic, 0, sizeof(nic));
}

static void test_probe(void)
{
	struct xp_ethtool_caps c;

	reset();
	nic.used[5] = true;
	XT_REQUIRE(xp_ethtool_caps_probe("lo", &c) == 0);
	XT_CHECK(!strcmp(c.driver, "fakenic"));
	XT_EQ(c.rx_rings, RINGS);
	XT_CHECK(c.rss);
	XT_EQ(c.rss_size, INDIR);
	XT_CHECK(c.ntuple);
	XT_EQ(c.ntuple_size, RULES);
	XT_EQ(c.ntuple_rules, 1);
	XT_CHECK(!c.ntuple_loc_any);
	XT_CHECK(c.ntuple_feature_known && c.ntuple_on && !c.ntuple_fixed);

	nic.veth = true;
	XT_REQUIRE(xp_ethtool_caps_probe("lo", &c) == 0);
	XT_CHECK(!strcmp(c.driver, "veth"));
	XT_CHECK(!c.rss && !c.ntuple && !c.ntuple_feature_known);
	XT_EQ(c.rss_err, -EOPNOTSUPP);
	XT_EQ(c.ntuple_err, -EOPNOTSUPP);
	xp_set_log_fn(NULL); /* the one line it logs is not this test's output */
	XT_EQ(xp_ethtool_caps_probe("xpt-nosuch0", &c), -ENODEV);
}

static void test_rss(void)
{
	static const __u32 q[] = { 1, 3 };
	__u32 size = 0;

	reset();
	XT_EQ(xp_rss_spread("lo", q, 2, &size), 0);
	XT_EQ(size, INDIR);
	XT_EQ(nic.indir_sets, 1);
	for (int i = 0; i < INDIR; i++)
		XT_EQ(nic.indir[i], q[i % 2]);
	nic.veth = true;
	XT_EQ(xp_rss_spread("lo", q, 2, &size), -EOPNOTSUPP);
	XT_EQ(size, 0);
}

static void test_flows(void)
{
	struct xp_flow f = flow("udp dport 4789 queue 2"), g = flow("ipv6 tcp dport 443 drop"),
		       got[RULES];
	bool ok[RULES];
	char text[256];
	__u32 id = 99, n = 0;

	reset();
	nic.used[15] = true; /* someone's rule, in words xpile cannot say */
	nic.rule[15].flow_type = ETHER_FLOW;
	nic.rule[15].location = 15;
	/* the last free place, as ethtool picks */
	XT_EQ(xp_flow_add("lo", &f, &id), 0);
	XT_EQ(id, 14);
	XT_EQ(nic.rule[14].flow_type, UDP_V4_FLOW);
	XT_EQ(ntohs(nic.rule[14].h_u.udp_ip4_spec.pdst), 4789);
	XT_EQ(nic.rule[14].ring_cookie, 2);
	g.has_id = true;
	g.id = 3;
	XT_EQ(xp_flow_add("lo", &g, &id), 0);
	XT_EQ(id, 3);
	/* a queue the NIC lacks is refused before the driver is asked */
	f.queue = RINGS;
	XT_EQ(xp_flow_add("lo", &f, &id), -ERANGE);
	XT_EQ(nic.inserts, 2);

	XT_EQ(xp_flow_list("lo", got, ok, RULES, &n), 0);
	XT_REQUIRE(n == 3);
	XT_EQ(got[0].id, 3);
	XT_CHECK(ok[0] && xp_flow_format(&got[0], text, sizeof(text)) > 0 &&
		 !strcmp(text, "ipv6 tcp dport 443 drop"));
	XT_EQ(got[1].id, 14);
	XT_CHECK(ok[1] && xp_flow_format(&got[1], text, sizeof(text)) > 0 &&
		 !strcmp(text, "ip udp dport 4789 queue 2"));
	XT_EQ(got[2].id, 15);
	XT_CHECK(!ok[2]);
	XT_EQ(xp_flow_list("lo", got, ok, 2, &n), -ENOSPC);

	XT_EQ(xp_flow_del("lo", 14), 0);
	XT_CHECK(!nic.used[14]);
	XT_EQ(xp_flow_del("lo", 14), -ENOENT);

	/* a driver that picks the place itself gets RX_CLS_LOC_ANY */
	nic.loc_special = true;
	f.queue = 1;
	XT_EQ(xp_flow_add("lo", &f, &id), 0);
	XT_EQ(id, 0);
	/* a full table */
	nic.loc_special = false;
	for (int l = 0; l < RULES; l++)
		nic.used[l] = true;
	XT_EQ(xp_flow_add("lo", &f, &id), -ENOSPC);
	nic.veth = true;
	XT_EQ(xp_flow_add("lo", &f, &id), -EOPNOTSUPP);
	XT_EQ(xp_flow_list("lo", got, ok, RULES, &n), -EOPNOTSUPP);
	XT_EQ(xp_flow_del("lo", 1), -EOPNOTSUPP);
}

int main(void)
{
	if (!if_nametoindex("lo"))
		XT_SKIP("no loopback interface in this network namespace");
	XT_RUN(test_probe);
	XT_RUN(test_rss);
	XT_RUN(test_flows);
	return xt_done();
}
