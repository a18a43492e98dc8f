// SPDX-License-Identifier: BSD-3-Clause
/*
 * The AF_XDP sockets of this network namespace and their kernel counters, from the
 * sock_diag netlink interface (what `ss --xdp` reads): the agent holds no socket of
 * the engines it serves, yet reports theirs. Needs the kernel's xsk_diag
 * (CONFIG_XDP_SOCKETS_DIAG); without it the dump fails with -ENOENT.
 */
#include <errno.h>
#include <stdbool.h>
#include <string.h>
#include <unistd.h>
#include <sys/socket.h>
#include <linux/netlink.h>
#include <linux/sock_diag.h>
#include <linux/xdp_diag.h>
#include <libmnl/libmnl.h>

#include "agent.h"
#include "xskdiag.h"

#ifndef AF_XDP
#define AF_XDP 44
#endif

struct diag_one {
	struct ag_xsk_stat s;
	bool info;
};

struct diag_all {
	struct ag_xsk_stat *out;
	int max, n;
};

static int diag_attr(const struct nlattr *a, void *data)
{
	struct diag_one *d = data;

	if (mnl_attr_get_type(a) == XDP_DIAG_INFO &&
	    mnl_attr_get_payload_len(a) >= sizeof(struct xdp_diag_info)) {
		struct xdp_diag_info di;

		memcpy(&di, mnl_attr_get_payload(a), sizeof(di));
		d->s.ifindex = (int)di.ifindex;
		d->s.queue = di.queue_id;
		d->info = true;
	} else if (mnl_attr_get_type(a) == XDP_DIAG_STATS &&
		   mnl_attr_get_payload_len(a) >= sizeof(d->s.st)) {
		memcpy(&d->s.st, mnl_attr_get_payload(a), sizeof(d->s.st));
	}
	return MNL_CB_OK;
}

static int diag_msg(const struct nlmsghdr *h, void *data)
{
	struct diag_all *all = data;
	struct diag_one d = { 0 };

	if (h->nlmsg_len < NLMSG_LENGTH(sizeof(struct xdp_diag_msg)))
		return MNL_CB_OK;
	mnl_attr_parse(h, sizeof(struct xdp_diag_msg), diag_attr, &d);
	if (d.info && d.s.ifindex && all->n < all->max)
		all->out[all->n++] = d.s;
	return MNL_CB_OK;
}

int ag_xsk_diag(struct ag_xsk_stat *out, int max)
{
	struct {
		struct nlmsghdr nh;
		struct xdp_diag_req r;
	} req = {
		.nh = { .nlmsg_len = sizeof(req),
			.nlmsg_type = SOCK_DIAG_BY_FAMILY,
			.nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP },
		.r = { .sdiag_family = AF_XDP, .xdiag_show = XDP_SHOW_INFO | XDP_SHOW_STATS },
	};
	static char buf[32768];
	int fd = socket(AF_NETLINK, SOCK_DGRAM | SOCK_CLOEXEC, NETLINK_SOCK_DIAG);
	struct diag_all all = { .out = out, .max = max };
	struct timeval tv = { .tv_sec = 1 };
	int err = 0;

	if (fd < 0)
		return -errno;
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	if (send(fd, &req, sizeof(req), 0) < 0) {
		err = -errno;
		close(fd);
		return err;
	}
	for (;;) {
		ssize_t len = recv(fd, buf, sizeof(buf), 0);
		int rc;

		if (len <= 0)
			break;
		/* NLMSG_DONE stops; an error (-ENOENT: a kernel without
		 * CONFIG_XDP_SOCKETS_DIAG, xsk_diag) too. */
		rc = mnl_cb_run(buf, (size_t)len, 0, 0, diag_msg, &all);
		if (rc == MNL_CB_ERROR)
			err = -errno;
		if (rc <= MNL_CB_STOP)
			break;
	}
	close(fd);
	return err ? err : all.n;
}
