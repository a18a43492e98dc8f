// SPDX-License-Identifier: BSD-3-Clause
/*
 * router_xdp: set-up, upkeep and counters of the router's XDP fast path (router_xdp.h).
 *
 * Every port's program needs every port in its xp_route_via: a frame enters by one
 * port's TAP and leaves by another's. The maps are written through fds of our own
 * (xp_steer_route_via_fd()), so the control thread's upkeep touches no steer handle the
 * main thread may be using.
 *
 * The programs' IPv4 flow cache (bpf/route.h) is ours to keep true: a socket of its own
 * hears every rtnetlink group a lookup's answer depends on, and each time it is
 * readable (or lost some) every program's xp_route_gen takes a new value. It is
 * subscribed before the first value turns the cache on, so no change falls between.
 */
#include <errno.h>
#include <net/if.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <libmnl/libmnl.h>
#include <linux/rtnetlink.h>

#include "xpile/features.h"
#include "xpile/steer.h"

#include "../engine.h"
#include "../tap.h"
#include "router_xdp.h"

struct rt_xdp_port {
	__u32 tap_ifindex; /* what the FIB names */
	struct xp_route_via via; /* the port behind it */
	int map_fd; /* this port's program's xp_route_via; -1: the engine's path only */
	int gen_fd; /* its xp_route_gen; -1: no flow cache there */
	const char *ifname;
	struct xp_steer *steer;
};

struct eng_rt_xdp {
	__u32 nports;
	struct rt_xdp_port p[ENG_MAX_PORTS];
	__u64 probed_ns;
	struct mnl_socket *nl; /* the cache's invalidations; NULL: the cache stays off */
	__u32 gen; /* the value in every gen_fd */
	bool quiet;
};

/* A new value in every program's xp_route_gen: every flow looks its route up again. */
static void gen_bump(struct eng_rt_xdp *x)
{
	if (!x->nl)
		return;
	if (!++x->gen)
		x->gen = 1; /* 0 is off */
	for (__u32 k = 0; k < x->nports; k++)
		if (x->p[k].gen_fd >= 0)
			(void)bpf_map_update_elem(x->p[k].gen_fd, &(__u32){ 0 }, &x->gen, BPF_ANY);
}

/* Every group whose messages can change what bpf_fib_lookup() answers. */
static const unsigned int cache_groups[] = {
	RTNLGRP_LINK,	      RTNLGRP_NEIGH,	    RTNLGRP_IPV4_IFADDR, RTNLGRP_IPV6_IFADDR,
	RTNLGRP_IPV4_ROUTE,   RTNLGRP_IPV6_ROUTE,   RTNLGRP_IPV4_RULE,	 RTNLGRP_IPV6_RULE,
	RTNLGRP_IPV4_NETCONF, RTNLGRP_IPV6_NETCONF, RTNLGRP_NEXTHOP,
};

static int cache_listen(struct eng_rt_xdp *x)
{
	struct mnl_socket *nl = mnl_socket_open2(NETLINK_ROUTE, SOCK_NONBLOCK | SOCK_CLOEXEC);
	int err = 0;

	if (!nl)
		return -errno;
	if (mnl_socket_bind(nl, 0, MNL_SOCKET_AUTOPID))
		err = -errno;
	for (size_t i = 0; !err && i < sizeof(cache_groups) / sizeof(cache_groups[0]); i++) {
		unsigned int g = cache_groups[i];

		if (mnl_socket_setsockopt(nl, NETLINK_ADD_MEMBERSHIP, &g, sizeof(g)))
			err = -errno;
	}
	if (err) {
		mnl_socket_close(nl);
		return err;
	}
	x->nl = nl;
	return 0;
}

int eng_rt_xdp_nl_fd(const struct eng_rt_xdp *x)
{
	return x && x->nl ? mnl_socket_get_fd(x->nl) : -1;
}

void eng_rt_xdp_changed(struct eng_rt_xdp *x)
{
	char buf[16384];
	int fd = eng_rt_xdp_nl_fd(x);

	if (fd < 0)
		return;
	/* Only that something changed matters, not what: drain (a bounded number of
	 * reads, the rest wakes the thread again), then one new value for all. A lost
	 * message (ENOBUFS) is a change too. */
	for (int i = 0; i < 64; i++) {
		ssize_t n = recv(fd, buf, sizeof(buf), MSG_DONTWAIT);

		if (n < 0 && errno != ENOBUFS && errno != EINTR)
			break;
	}
	gen_bump(x);
}

/* The entry of port @i in every armed program's map. */
static void via_write(struct eng_rt_xdp *x, __u32 i)
{
	for (__u32 k = 0; k < x->nports; k++)
		if (x->p[k].map_fd >= 0)
			(void)bpf_map_update_elem(x->p[k].map_fd, &x->p[i].tap_ifindex,
						  &x->p[i].via, BPF_ANY);
	gen_bump(x);
}

static bool probe_egress(const struct rt_xdp_port *p)
{
	return xp_if_redirect_target((int)p->via.ifindex) == 1;
}

void eng_rt_xdp_refresh(struct eng_rt_xdp *x, __u64 now_ns)
{
	if (!x || now_ns - x->probed_ns < ENG_RT_XDP_PROBE_NS)
		return;
	x->probed_ns = now_ns;
	for (__u32 i = 0; i < x->nports; i++) {
		struct rt_xdp_port *p = &x->p[i];
		__u32 f = probe_egress(p) ? XP_ROUTE_VIA_F_EGRESS : 0;

		if ((p->via.flags & XP_ROUTE_VIA_F_EGRESS) == f)
			continue;
		p->via.flags = (p->via.flags & ~XP_ROUTE_VIA_F_EGRESS) | f;
		via_write(x, i);
		if (!x->quiet)
			ut_say(0,
			       f ? "router: %s takes redirected frames again: routes out of it are forwarded in XDP" :
				   "router: %s no longer takes redirected frames (a veth whose peer lost GRO and XDP): routes out of it go through the engine",
			       p->ifname);
	}
}

int eng_rt_xdp_setup(struct engine *e, __u32 table, struct eng_rt_xdp **out)
{
	struct eng_rt_xdp *x;
	__u32 armed = 0;
	int err;

	*out = NULL;
	x = calloc(1, sizeof(*x));
	if (!x)
		return ut_say(-ENOMEM, "out of memory for the router");
	x->quiet = e->cfg.quiet; /* changes are said in --json too: scripts wait for them */
	/* Ports by their TAPs: every port has one in router mode (main.c). */
	for (__u32 t = 0; t < e->cfg.tap->ntaps && x->nports < ENG_MAX_PORTS; t++) {
		unsigned int tap = if_nametoindex(e->cfg.tap->taps[t].name);

		for (__u32 j = 0; j < e->cfg.nports; j++) {
			struct eng_port *ep = &e->ports[j];
			struct rt_xdp_port *p;

			if (strcmp(ep->ifname, e->cfg.tap->taps[t].port) || !tap)
				continue;
			p = &x->p[x->nports++];
			p->tap_ifindex = tap;
			p->via.ifindex = (__u32)ep->ifindex;
			memcpy(p->via.mac, ep->mac, 6);
			p->via.table = table == 254 ? 0 : table;
			p->via.flags = probe_egress(p) ? XP_ROUTE_VIA_F_EGRESS : 0;
			p->ifname = ep->ifname;
			/* Not ours (the loader's program): its default stays as its owner set it. */
			p->steer = ep->steer && !ep->steer_borrowed ? ep->steer : NULL;
			p->map_fd = p->steer ? xp_steer_route_via_fd(p->steer) : -1;
			if (p->steer && p->map_fd < 0)
				p->steer = NULL; /* logged: a program without the route action */
			p->gen_fd = p->steer ? xp_steer_route_gen_fd(p->steer) : -1;
		}
	}
	err = cache_listen(x);
	if (err && !x->quiet)
		ut_say(0,
		       "router: no XDP flow cache (cannot listen for rtnetlink changes: %s): every packet of the fast path is looked up",
		       strerror(-err));
	for (__u32 i = 0; i < x->nports; i++)
		via_write(x, i);
	for (__u32 i = 0; i < x->nports; i++) {
		struct xp_action a = { .kind = XP_ACT_ROUTE, .ifindex = x->p[i].tap_ifindex };

		if (!x->p[i].steer)
			continue;
		err = xp_steer_default_set(x->p[i].steer, &a, NULL);
		if (err) {
			ut_say(err, "router: %s: cannot set the route action: %s", x->p[i].ifname,
			       strerror(-err));
			eng_rt_xdp_free(x);
			return err;
		}
		armed++;
	}
	if (!armed) {
		if (!x->quiet)
			ut_say(0,
			       "router: no XDP fast path: the steer programs are not the engine's (xpile-loader loaded them); every packet goes through the engine");
		eng_rt_xdp_free(x);
		return 0;
	}
	*out = x;
	return 0;
}

bool eng_rt_xdp_stats(struct eng_rt_xdp *x, struct xp_route_stats *sum)
{
	memset(sum, 0, sizeof(*sum));
	if (!x)
		return false;
	for (__u32 i = 0; i < x->nports; i++) {
		struct xp_route_stats st;

		if (!x->p[i].steer || xp_steer_route_stats_read(x->p[i].steer, &st))
			continue;
		for (size_t w = 0; w < sizeof(st) / 8; w++)
			((__u64 *)sum)[w] += ((const __u64 *)&st)[w];
	}
	return true;
}

void eng_rt_xdp_ports(const struct eng_rt_xdp *x, char *buf, size_t len)
{
	size_t off = 0;

	buf[0] = 0;
	for (__u32 i = 0; x && i < x->nports && off < len; i++) {
		const struct rt_xdp_port *p = &x->p[i];
		int n = snprintf(buf + off, len - off, "%s%s%s%s", off ? ", " : "", p->ifname,
				 p->steer ? "" : " (not ours)",
				 p->via.flags & XP_ROUTE_VIA_F_EGRESS ? "" : " (no egress)");

		if (n > 0)
			off += (size_t)n;
	}
}

void eng_rt_xdp_free(struct eng_rt_xdp *x)
{
	if (!x)
		return;
	for (__u32 i = 0; i < x->nports; i++) {
		if (x->p[i].gen_fd >= 0) {
			/* Off: nobody hears the changes any more (a program that outlives us,
			 * a handover's, is given a value by its next owner). */
			(void)bpf_map_update_elem(x->p[i].gen_fd, &(__u32){ 0 }, &(__u32){ 0 },
						  BPF_ANY);
			close(x->p[i].gen_fd);
		}
		if (x->p[i].map_fd >= 0)
			close(x->p[i].map_fd);
	}
	if (x->nl)
		mnl_socket_close(x->nl);
	free(x);
}
