// SPDX-License-Identifier: BSD-3-Clause
/*
 * The netlink xpile-cni needs, through libmnl: one RTM_GETLINK (flags, MAC, the XDP
 * program, RX queues) and one RTM_NEWLINK with IFLA_NET_NS_FD (a move that keeps the
 * name). A socket works in the namespace it was created in: for another namespace we
 * enter it just long enough to create the socket, then come back.
 */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdbool.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <linux/if_link.h>
#include <linux/rtnetlink.h>
#include <libmnl/libmnl.h>

#include "cni.h"

/* A NETLINK_ROUTE socket of the namespace @netns_fd (-1: ours). */
static struct mnl_socket *nl_open(int netns_fd)
{
	struct mnl_socket *nl = NULL;
	int self = -1, err = 0;

	if (netns_fd >= 0) {
		self = open("/proc/self/ns/net", O_RDONLY | O_CLOEXEC);
		if (self < 0 || setns(netns_fd, CLONE_NEWNET)) {
			err = errno;
			if (self >= 0)
				close(self);
			errno = err;
			return NULL;
		}
	}
	nl = mnl_socket_open2(NETLINK_ROUTE, SOCK_CLOEXEC);
	if (nl && mnl_socket_bind(nl, 0, MNL_SOCKET_AUTOPID)) {
		err = errno;
		mnl_socket_close(nl);
		nl = NULL;
	} else if (!nl) {
		err = errno;
	}
	if (self >= 0) {
		/* Back where we were, or nothing after this is where it should be. */
		if (setns(self, CLONE_NEWNET))
			_exit(CNI_ERR_IO);
		close(self);
	}
	errno = err;
	return nl;
}

/* Sends @nlh and runs @cb over the replies: 0 or -errno. */
static int nl_talk(struct mnl_socket *nl, struct nlmsghdr *nlh, mnl_cb_t cb, void *data)
{
	char buf[MNL_SOCKET_BUFFER_SIZE];
	unsigned int seq = nlh->nlmsg_seq, port = mnl_socket_get_portid(nl);
	bool dump = nlh->nlmsg_flags & NLM_F_DUMP;
	ssize_t n;
	int rc;

	if (mnl_socket_sendto(nl, nlh, nlh->nlmsg_len) < 0)
		return -errno;
	while ((n = mnl_socket_recvfrom(nl, buf, sizeof(buf))) > 0) {
		rc = mnl_cb_run(buf, (size_t)n, seq, port, cb, data);
		/* One answer, unless a dump (which ends with NLMSG_DONE: STOP). */
		if (rc <= MNL_CB_STOP || !dump)
			return rc < 0 ? -errno : 0;
	}
	return n < 0 ? -errno : 0;
}

static int xdp_attr(const struct nlattr *a, void *data)
{
	if (mnl_attr_get_type(a) == IFLA_XDP_PROG_ID && !mnl_attr_validate(a, MNL_TYPE_U32))
		*(__u32 *)data = mnl_attr_get_u32(a);
	return MNL_CB_OK;
}

static int link_attr(const struct nlattr *a, void *data)
{
	struct cni_link *l = data;

	switch (mnl_attr_get_type(a)) {
	case IFLA_IFNAME:
		if (!mnl_attr_validate(a, MNL_TYPE_NUL_STRING))
			snprintf(l->name, sizeof(l->name), "%s", mnl_attr_get_str(a));
		break;
	case IFLA_ADDRESS:
		if (mnl_attr_get_payload_len(a) == 6)
			memcpy(l->mac, mnl_attr_get_payload(a), 6);
		break;
	case IFLA_NUM_RX_QUEUES:
		if (!mnl_attr_validate(a, MNL_TYPE_U32))
			l->rx_queues = mnl_attr_get_u32(a);
		break;
	case IFLA_XDP:
		mnl_attr_parse_nested(a, xdp_attr, &l->xdp_prog_id);
		break;
	}
	return MNL_CB_OK;
}

static int link_cb(const struct nlmsghdr *nlh, void *data)
{
	struct cni_link *l = data;
	const struct ifinfomsg *ifi = mnl_nlmsg_get_payload(nlh);

	l->ifindex = ifi->ifi_index;
	l->flags = ifi->ifi_flags;
	mnl_attr_parse(nlh, sizeof(*ifi), link_attr, l);
	return MNL_CB_OK;
}

int cni_link_get(int netns_fd, const char *name, struct cni_link *l)
{
	char buf[MNL_SOCKET_BUFFER_SIZE];
	struct mnl_socket *nl;
	struct nlmsghdr *nlh;
	struct ifinfomsg *ifi;
	int err;

	memset(l, 0, sizeof(*l));
	if (strlen(name) >= IF_NAMESIZE)
		return -ENODEV;
	nl = nl_open(netns_fd);
	if (!nl)
		return -errno;
	nlh = mnl_nlmsg_put_header(buf);
	nlh->nlmsg_type = RTM_GETLINK;
	nlh->nlmsg_flags = NLM_F_REQUEST;
	nlh->nlmsg_seq = (unsigned int)time(NULL);
	ifi = mnl_nlmsg_put_extra_header(nlh, sizeof(*ifi));
	ifi->ifi_family = AF_UNSPEC;
	mnl_attr_put_strz(nlh, IFLA_IFNAME, name);
	err = nl_talk(nl, nlh, link_cb, l);
	mnl_socket_close(nl);
	if (err == -ENODEV || (!err && !l->ifindex))
		return -ENODEV;
	return err;
}

/* One RTM_NEWLINK on @name in the namespace of @netns_fd: up (set), or moved to the
 * namespace of @to_fd (>= 0). 0 or -errno. */
static int newlink(int netns_fd, const char *name, bool up, int to_fd)
{
	char buf[MNL_SOCKET_BUFFER_SIZE];
	struct mnl_socket *nl = nl_open(netns_fd);
	struct nlmsghdr *nlh;
	struct ifinfomsg *ifi;
	int err;

	if (!nl)
		return -errno;
	nlh = mnl_nlmsg_put_header(buf);
	nlh->nlmsg_type = RTM_NEWLINK;
	nlh->nlmsg_flags = NLM_F_REQUEST | NLM_F_ACK;
	nlh->nlmsg_seq = (unsigned int)time(NULL);
	ifi = mnl_nlmsg_put_extra_header(nlh, sizeof(*ifi));
	ifi->ifi_family = AF_UNSPEC;
	if (up) {
		ifi->ifi_flags = IFF_UP;
		ifi->ifi_change = IFF_UP;
	}
	mnl_attr_put_strz(nlh, IFLA_IFNAME, name);
	if (to_fd >= 0)
		mnl_attr_put_u32(nlh, IFLA_NET_NS_FD, (__u32)to_fd);
	err = nl_talk(nl, nlh, NULL, NULL);
	mnl_socket_close(nl);
	return err;
}

int cni_link_up(int netns_fd, const char *name)
{
	return newlink(netns_fd, name, true, -1);
}

int cni_link_move(int from_fd, const char *name, int to_fd)
{
	return to_fd < 0 ? -EBADF : newlink(from_fd, name, false, to_fd);
}
