// SPDX-License-Identifier: BSD-3-Clause
/*
 * The AF_XDP sockets of this network namespace and their kernel counters, from the
 * sock_diag netlink interface (what `ss --xdp` reads): the agent holds no socket of
 * the engines it serves, yet reports theirs. Needs the kernel's xsk_diag
 * (CONFIG_XDP_SOCKETS_DIAG); without it the dump fails with -ENOENT.
 */
#include <errno.h>
#include <string.h>
#include <unistd.h>
#include <sys/socket.h>
#include <linux/netlink.h>
#include <linux/sock_diag.h>
#include <linux/xdp_diag.h>

#include "agent.h"

#ifndef AF_XDP
#define AF_XDP 44
#endif

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
	int fd = socket(AF_NETLINK, SOCK_DGRAM | SOCK_CLOEXEC, NETLINK_SOCK_DIAG), n = 0;
	struct timeval tv = { .tv_sec = 1 };
	bool done = false;
	int err = 0;

	if (fd < 0)
		return -errno;
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	if (send(fd, &req, sizeof(req), 0) < 0) {
		err = -errno;
		close(fd);
		return err;
	}
	while (!done) {
		ssize_t len = recv(fd, buf, sizeof(buf), 0);
		struct nlmsghdr *h;

		if (len <= 0)
			break;
		for (h = (struct nlmsghdr *)buf; NLMSG_OK(h, (size_t)len); h = NLMSG_NEXT(h, len)) {
			struct xdp_diag_msg *m = NLMSG_DATA(h);
			struct rtattr_like {
				unsigned short len, type;
			} * a;
			int rem;
			struct ag_xsk_stat s = { 0 };
			bool info = false;

			if (h->nlmsg_type == NLMSG_ERROR) {
				/* -ENOENT: a kernel without CONFIG_XDP_SOCKETS_DIAG (xsk_diag) */
				err = ((struct nlmsgerr *)NLMSG_DATA(h))->error;
				done = true;
				break;
			}
			if (h->nlmsg_type == NLMSG_DONE) {
				done = true;
				break;
			}
			rem = (int)h->nlmsg_len - (int)NLMSG_LENGTH(sizeof(*m));
			a = (struct rtattr_like *)(m + 1);
			while (rem >= (int)sizeof(*a) && a->len >= sizeof(*a) && a->len <= rem) {
				void *d = a + 1;

				if (a->type == XDP_DIAG_INFO) {
					struct xdp_diag_info di;

					memcpy(&di, d, sizeof(di));
					s.ifindex = (int)di.ifindex;
					s.queue = di.queue_id;
					info = true;
				} else if (a->type == XDP_DIAG_STATS) {
					memcpy(&s.st, d, sizeof(s.st));
				}
				rem -= (a->len + 3) & ~3;
				a = (struct rtattr_like *)((char *)a + ((a->len + 3) & ~3));
			}
			if (info && s.ifindex && n < max)
				out[n++] = s;
		}
	}
	close(fd);
	return err ? err : n;
}
