// SPDX-License-Identifier: BSD-3-Clause
/*
 * Keeping the steer program on its interfaces when someone else moves it: its link
 * detached (`bpftool link detach`), or, after that, another program attached through
 * netlink (`ip link set dev X xdp obj ...`, xdp-loader). A netlink attach or detach
 * is announced on RTNLGRP_LINK, which the loop reads, so the agent answers within
 * the loop's latency; a detached link is announced by nothing, so the tick (1 s)
 * checks every interface as well.
 *
 * What it does is the interface's on_replace: "reattach" (the default) removes a
 * foreign program attached through netlink and attaches the steer program again
 * through a new link, with the same maps (sockets, rules, counters stay); "report"
 * leaves a foreign program in place and /readyz reports it, but still re-attaches
 * to an interface left with no program, which takes nothing from anyone. A foreign
 * program held by its own bpf_link cannot be removed (the kernel allows it only to
 * the link's holder): /readyz reports it. Each change of state is logged once.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <sys/socket.h>
#include <linux/if_link.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <bpf/libbpf.h>
#include <libmnl/libmnl.h>

#include "agent.h"
#include "kubelet.h"
#include "watch.h"
#include "xpile/steer_owner.h"

/* What was logged last; WATCH_OK (0) is where a new interface starts. */
enum { WATCH_OK, WATCH_FOREIGN, WATCH_STUCK, WATCH_NOIFACE };

struct ag_watch {
	struct ut_ev ev;
	struct agent *a;
	int fd;
	char buf[8192];
};

/* Removes a foreign program attached through netlink; -EBUSY when a link holds it. */
static int remove_foreign(int ifindex)
{
	LIBBPF_OPTS(bpf_xdp_query_opts, q);
	int err = 0;

	if (bpf_xdp_query(ifindex, 0, &q))
		return -errno;
	if (q.drv_prog_id && bpf_xdp_detach(ifindex, XDP_FLAGS_DRV_MODE, NULL))
		err = -errno;
	if (!err && q.skb_prog_id && bpf_xdp_detach(ifindex, XDP_FLAGS_SKB_MODE, NULL))
		err = -errno;
	return err;
}

static void say_once(struct ag_iface *i, int state, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void say_once(struct ag_iface *i, int state, const char *fmt, ...)
{
	char line[512];
	va_list ap;

	if (i->watch_state == state)
		return;
	i->watch_state = state;
	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	ut_warn("%s: %s", i->name, line);
}

void ag_watch_iface(struct agent *a, struct ag_iface *i)
{
	struct xp_steer_health h;
	double t0 = ut_now();
	int err;

	if (!i->used || i->lent || xp_steer_check(i->steer, &h)) /* lent: in a pod (lend.c) */
		return;
	if (h.iface_gone) {
		say_once(i, WATCH_NOIFACE, "interface gone; its program went with it");
		return;
	}
	if (!h.prog_gone && !h.prog_replaced) {
		if (i->watch_state != WATCH_OK && i->watch_state != WATCH_NOIFACE)
			ut_say(0, "%s: steer program attached again (id %u)", i->name,
			       xp_steer_prog_id(i->steer));
		i->watch_state = WATCH_OK;
		return;
	}
	if (h.prog_replaced) {
		if (!i->cfg.reattach) {
			say_once(
				i, WATCH_FOREIGN,
				"another XDP program (id %u, %s) replaced the steer program; left in place (on_replace \"report\"): not ready",
				h.attached_id, h.attached_name);
			return;
		}
		err = remove_foreign(i->ifindex);
		if (err) {
			say_once(
				i, WATCH_STUCK,
				"another XDP program (id %u, %s) replaced the steer program and cannot be removed (%s: attached through its own bpf_link?): not ready",
				h.attached_id, h.attached_name, strerror(-err));
			return;
		}
	}
	err = xp_steer_reattach(i->steer);
	if (err) {
		say_once(i, WATCH_STUCK, "steer program not attached and cannot be re-attached: %s",
			 strerror(-err));
		return;
	}
	i->reattached++;
	if (h.pins_gone)
		xp_steer_repin(i->steer);
	i->watch_state = WATCH_OK;
	if (h.prog_replaced)
		ut_warn("%s: another XDP program (id %u, %s) had replaced the steer program: removed it and re-attached ours through a new bpf_link in %.1f ms",
			i->name, h.attached_id, h.attached_name, (ut_now() - t0) * 1e3);
	else
		ut_warn("%s: steer program gone from the interface (its link detached?): re-attached through a new bpf_link in %.1f ms",
			i->name, (ut_now() - t0) * 1e3);
}

void ag_watch_all(struct agent *a)
{
	for (int k = 0; k < AG_MAX_IFACES; k++)
		ag_watch_iface(a, &a->ifaces[k]);
}

static void arm(struct ag_watch *w)
{
	ut_loop_recv(&w->a->loop, &w->ev, w->fd, w->buf, sizeof(w->buf));
}

/* A link changed: the interfaces of ours with that index are looked at again. */
static int link_msg(const struct nlmsghdr *h, void *data)
{
	struct agent *a = data;
	const struct ifinfomsg *ifi = mnl_nlmsg_get_payload(h);

	if (h->nlmsg_type != RTM_NEWLINK || h->nlmsg_len < NLMSG_LENGTH(sizeof(*ifi)))
		return MNL_CB_OK;
	for (int k = 0; k < AG_MAX_IFACES; k++)
		if (a->ifaces[k].used && a->ifaces[k].ifindex == ifi->ifi_index)
			ag_watch_iface(a, &a->ifaces[k]);
	return MNL_CB_OK;
}

static void on_link(struct ut_loop *l, struct ut_ev *ev, int res, unsigned int flags)
{
	struct ag_watch *w = (struct ag_watch *)ev;
	struct agent *a = w->a;

	if (l->stop || w->fd < 0)
		return;
	if (res == -ENOBUFS) {
		ag_watch_all(a); /* notifications lost: look at everything */
	} else if (res > 0) {
		mnl_cb_run(w->buf, (size_t)res, 0, 0, link_msg, a);
		ag_kubelet_health(a); /* a link went up or down: the devices' health */
	} else if (res < 0 && res != -EINTR && res != -EAGAIN) {
		ut_warn("link notifications: %s; the 1 s check goes on", strerror(-res));
		return;
	}
	arm(w);
}

int ag_watch_open(struct agent *a)
{
	static struct ag_watch w; /* one per process; the ring refers to it until exit */
	struct sockaddr_nl sa = { .nl_family = AF_NETLINK, .nl_groups = RTMGRP_LINK };

	w.ev.fn = on_link;
	w.a = a;
	w.fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_ROUTE);
	if (w.fd < 0 || bind(w.fd, (struct sockaddr *)&sa, sizeof(sa))) {
		ut_warn("link notifications: %s; the 1 s check alone watches the programs",
			strerror(errno));
		if (w.fd >= 0)
			close(w.fd);
		w.fd = -1;
		return 0;
	}
	a->watch_fd = w.fd;
	arm(&w);
	return 0;
}
