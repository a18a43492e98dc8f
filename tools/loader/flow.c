// SPDX-License-Identifier: BSD-3-Clause
/*
 * xpile-loader wire, in the NIC: the RSS indirection table spread over the wired
 * queues, and ntuple flows (one flow to one queue). A NIC that lacks either is said so
 * in one line naming the driver, the ioctl that told and what to do instead.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "loader.h"
#include "xpile/text.h"

#define FLOW_MAX_WORDS 64
#define FLOW_LIST_MAX 4096

int flow_req_parse(const struct loader_args *a, struct flow_req *r)
{
	memset(r, 0, sizeof(*r));
	r->list = a->flow_list;
	if (a->flow) {
		char buf[1024], *argv[FLOW_MAX_WORDS], *sp, why[256];
		int argc = 0;

		if (snprintf(buf, sizeof(buf), "%s", a->flow) >= (int)sizeof(buf))
			return ut_say(1,
				      "wire: --flow: longer than %zu bytes; a flow is a few words",
				      sizeof(buf) - 1) +
			       1;
		for (char *t = strtok_r(buf, " \t", &sp); t; t = strtok_r(NULL, " \t", &sp)) {
			if (argc == FLOW_MAX_WORDS)
				return ut_say(1,
					      "wire: --flow: more than %d words; a flow has fewer",
					      FLOW_MAX_WORDS) +
				       1;
			argv[argc++] = t;
		}
		if (xp_flow_parse(argc, argv, &r->flow, why, sizeof(why)))
			return ut_say(1, "wire: --flow: %s", why) + 1;
		r->add = true;
	}
	if (a->flow_del) {
		if (xp_parse_u32(a->flow_del, 0, RX_CLS_LOC_SPECIAL - 1, &r->del_id))
			return ut_say(1,
				      "wire: --flow-del: expected a flow id (a number from "
				      "--flow-list), got '%s'",
				      a->flow_del) +
			       1;
		r->del = true;
	}
	return 0;
}

static const char *drv(const struct xp_ethtool_caps *c)
{
	return c->driver[0] ? c->driver : "driver unknown";
}

void wire_rss(struct loader_args *a, struct out *o, const __u32 *q, int n)
{
	struct xp_ethtool_caps c;
	char list[XP_WIRE_MAX * 5] = ""; /* 4 digits and a comma per queue */
	size_t off = 0;
	__u32 size;
	int err;

	for (int i = 0; i < n && off < sizeof(list); i++)
		off += snprintf(list + off, sizeof(list) - off, "%s%u", i ? "," : "", q[i]);
	if (a->no_rss) {
		out_step(o, "rss", "left as it is (--no-rss)");
		return;
	}
	xp_ethtool_caps_probe(a->ifname, &c);
	if (!c.rss) {
		out_step(o, "rss",
			 "skipped, %s (%s) has no RSS indirection table (ETHTOOL_GRXFHINDIR: %s); "
			 "flows reach the queues as the driver spreads them",
			 a->ifname, drv(&c), strerror(-c.rss_err));
		return;
	}
	err = xp_rss_spread(a->ifname, q, (__u32)n, &size);
	if (err) {
		out_step(o, "rss",
			 "skipped, %s (%s) refused the %u-entry table over queues %s "
			 "(ETHTOOL_SRXFHINDIR: %s)",
			 a->ifname, drv(&c), c.rss_size, list, strerror(-err));
		return;
	}
	if (size % n)
		out_step(o, "rss",
			 "%u-entry indirection table spread over queues %s (%u or %u entries each)",
			 size, list, size / n, size / n + 1);
	else
		out_step(o, "rss",
			 "%u-entry indirection table spread over queues %s (%u entries each)", size,
			 list, size / n);
	if (o->json)
		fprintf(o->more, ",\"rss\":{\"size\":%u,\"queues\":[%s]}", size, list);
}

/* Whether flows can be steered here; else one line naming why, and false. */
static bool can_steer(const struct loader_args *a, const struct xp_ethtool_caps *c)
{
	if (!c->ntuple) {
		ut_say(1,
		       "wire: %s (%s) has no ntuple filters (ETHTOOL_GRXCLSRLCNT: %s), so it cannot "
		       "steer a flow to a queue; steer in XDP instead: xpile-loader rule add %s "
		       "MATCH action xsk slot N",
		       a->ifname, drv(c), strerror(-c->ntuple_err), a->ifname);
		return false;
	}
	if (c->ntuple_feature_known && !c->ntuple_on) {
		if (c->ntuple_fixed)
			ut_say(1,
			       "wire: %s (%s) has ntuple filters off and fixed off "
			       "(rx-ntuple-filter); steer in XDP instead: xpile-loader rule add %s "
			       "MATCH action xsk slot N",
			       a->ifname, drv(c), a->ifname);
		else
			ut_say(1,
			       "wire: %s (%s) has ntuple filters switched off; turn them on with "
			       "'ethtool -K %s ntuple on'",
			       a->ifname, drv(c), a->ifname);
		return false;
	}
	return true;
}

static int flow_add(struct loader_args *a, struct out *o, const struct flow_req *r,
		    const struct xp_ethtool_caps *c)
{
	char text[256];
	__u32 id;
	int err = xp_flow_add(a->ifname, &r->flow, &id);

	xp_flow_format(&r->flow, text, sizeof(text));
	if (err == -ERANGE)
		return ut_say(1,
			      "wire: --flow: queue %u does not exist: %s has %u RX queues; pick a "
			      "queue below %u",
			      r->flow.queue, a->ifname, c->rx_rings, c->rx_rings) +
		       1;
	if (err == -ENOSPC)
		return ut_say(1,
			      "wire: --flow: the flow table of %s is full (%u rules); delete one "
			      "with --flow-del ID (see --flow-list)",
			      a->ifname, c->ntuple_size);
	if (err)
		return ut_say(1,
			      "wire: --flow: %s (%s) refused '%s' (%s); it may not match these "
			      "fields (see ethtool -n %s)",
			      a->ifname, drv(c), text, strerror(-err), a->ifname);
	if (o->json) {
		fprintf(o->more, ",\"flow_added\":{\"id\":%u,\"flow\":", id);
		json_str(o->more, text);
		fputc('}', o->more);
	} else {
		printf("%s: flow id %u added: %s\n", a->ifname, id, text);
	}
	return 0;
}

static int flow_list(struct loader_args *a, struct out *o, const struct xp_ethtool_caps *c)
{
	static struct xp_flow flows[FLOW_LIST_MAX];
	static bool ok[FLOW_LIST_MAX];
	char text[256];
	__u32 n;
	int err = xp_flow_list(a->ifname, flows, ok, FLOW_LIST_MAX, &n);

	if (err)
		return ut_say(1, "wire: --flow-list: cannot read the flow table of %s (%s)",
			      a->ifname, strerror(-err));
	if (!o->json)
		printf("%s: %u flow%s (table of %u)\n", a->ifname, n, n == 1 ? "" : "s",
		       c->ntuple_size);
	else
		fprintf(o->more, ",\"flow_table_size\":%u,\"flows\":[", c->ntuple_size);
	for (__u32 i = 0; i < n; i++) {
		if (ok[i])
			xp_flow_format(&flows[i], text, sizeof(text));
		if (!o->json) {
			printf("  %-6u %s\n", flows[i].id,
			       ok[i] ? text :
				       "(not in xpile's words; "
				       "see ethtool -n)");
			continue;
		}
		fprintf(o->more, "%s{\"id\":%u,\"flow\":", i ? "," : "", flows[i].id);
		if (ok[i])
			json_str(o->more, text);
		else
			fputs("null", o->more);
		fputc('}', o->more);
	}
	if (o->json)
		fputc(']', o->more);
	return 0;
}

int flow_req_check(const struct loader_args *a, const struct flow_req *r)
{
	struct xp_ethtool_caps c;

	if (!r->add && !r->del && !r->list)
		return 0;
	if (xp_ethtool_caps_probe(a->ifname, &c))
		return 1;
	return can_steer(a, &c) ? 0 : 1;
}

int wire_flows(struct loader_args *a, struct out *o, const struct flow_req *r)
{
	struct xp_ethtool_caps c;
	int err;

	if (!r->add && !r->del && !r->list)
		return 0;
	if (xp_ethtool_caps_probe(a->ifname, &c))
		return 1;
	if (!can_steer(a, &c))
		return 1;
	if (r->del) {
		err = xp_flow_del(a->ifname, r->del_id);
		if (err)
			return ut_say(1,
				      "wire: --flow-del: %s has no flow with id %u (%s); see "
				      "--flow-list",
				      a->ifname, r->del_id, strerror(-err));
		if (o->json)
			fprintf(o->more, ",\"flow_deleted\":%u", r->del_id);
		else
			printf("%s: flow id %u deleted\n", a->ifname, r->del_id);
	}
	if (r->add && (err = flow_add(a, o, r, &c)))
		return err;
	return r->list ? flow_list(a, o, &c) : 0;
}
