// SPDX-License-Identifier: BSD-3-Clause
/*
 * Queues for clients that hold no capabilities: the device-plugin socket's requests
 * beyond what DPDK sends (CNDP reserves /xsk_socket and never uses it).
 *
 *   /xsk_socket,<netdev>[,<queue>] /xsk_socket_ack,<ifindex> + an AF_XDP socket
 *   /xsk_insert,<queue> + socket   /xsk_insert_ack   (the socket in the XSKMAP)
 *   /xsk_remove,<queue> + socket   /xsk_remove_ack   (out of it)
 *   each refused with its _nak.
 *
 * The agent makes the socket in its own network namespace (the node's), where the
 * interface is; the client registers its UMEM and rings on it and binds it to
 * (ifindex, queue) itself: bind resolves the ifindex in the socket's namespace, so a
 * client in a pod's namespace, which cannot see the interface, binds a queue of it.
 * socket(AF_XDP) is the one step that needs CAP_NET_RAW, and it is the agent's.
 *
 * The client never holds the XSKMAP: it asks for its socket to be put in, and the
 * agent inserts only a socket bound to a queue given to this client: the bound
 * queue told by the kernel (a probe reads bpf_xdp_sock.queue_id, xskpidfd.c), equal
 * to the queue asked, and that queue the client's: with the kubelet's PodResources
 * (podres.c), a queue allocated to the pod named in /connect; without, any queue the
 * interface serves. A client gets, per connection, a socket for each queue it may
 * use and one for its UMEM. Removal: only the socket that holds the slot takes itself out. A socket
 * bound elsewhere than it claims gets nothing (and the kernel delivers to a socket
 * only from its own device and queue anyway).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/socket.h>
#include <linux/if_xdp.h>
#include <bpf/bpf.h>

#include "agent.h"
#include "xskpidfd.h"
#include "podres.h"
#include "xpile/text.h"
#include "xpile/xsk.h"
#include "xsksock.h"

#ifndef AF_XDP
#define AF_XDP 44
#endif

static __u32 iface_queues(const struct ag_iface *i)
{
	int nq;

	if (i->cfg.queues)
		return i->cfg.queues;
	nq = i->lent ? (int)i->kube_queues : xp_ifname_rx_queues(i->name);
	return nq > 0 ? (__u32)nq : 0;
}

/* May this client use queue @q of @i? */
static bool queue_ok(struct agent *a, const struct ag_iface *i, const struct ag_xsk_peer *p,
		     __u32 q)
{
	if (q >= iface_queues(i) || q >= XP_STEER_MAX_QUEUES)
		return false;
	return !ag_podres_on(a) || ag_podres_queue_ok(a, i, p->host, q);
}

static unsigned int queues_allowed(struct agent *a, const struct ag_iface *i,
				   const struct ag_xsk_peer *p)
{
	unsigned int n = 0;

	for (__u32 q = 0; q < iface_queues(i) && q < XP_STEER_MAX_QUEUES; q++)
		n += queue_ok(a, i, p, q);
	return n;
}

static bool is_xsk(int fd)
{
	int dom = 0;
	socklen_t sl = sizeof(dom);

	return fd >= 0 && !getsockopt(fd, SOL_SOCKET, SO_DOMAIN, &dom, &sl) && dom == AF_XDP;
}

/* Bound already? Its queue id reads 0 unbound too, so ask bind: one that is bound
 * refuses any second bind with EBUSY before it looks at the address, and ifindex 0
 * makes an unbound one fail (ENODEV) without binding anything. */
static bool is_bound(int fd)
{
	struct sockaddr_xdp sx = { .sxdp_family = AF_XDP };

	return bind(fd, (struct sockaddr *)&sx, sizeof(sx)) && errno == EBUSY;
}

static void say(char *rep, size_t len, const char *what, const char *why, const struct ag_iface *i)
{
	snprintf(rep, len, "%s_nak", what);
	if (why)
		ut_warn("%s: %s refused: %s", i->name, what, why);
}

bool ag_xsksock_serve(struct agent *a, struct ag_iface *i, struct ag_xsk_peer *p,
		      enum xp_dp_req req, const char *arg, int fd, char *rep, size_t len,
		      int *rep_fd)
{
	__u32 q;
	int bound;

	*rep_fd = -1;
	if (req == XP_DP_REQ_XSK_SOCKET) {
		const char *comma = strchr(arg, ',');
		size_t nl = comma ? (size_t)(comma - arg) : strlen(arg);
		char nd[IF_NAMESIZE + 1];
		int s;

		snprintf(nd, sizeof(nd), "%.*s", (int)(nl < IF_NAMESIZE ? nl : IF_NAMESIZE), arg);
		if (!p->connected || nl >= IF_NAMESIZE || strcmp(nd, i->name) ||
		    (comma && xp_parse_u32(comma + 1, 0, XP_STEER_MAX_QUEUES - 1, &q))) {
			say(rep, len, XP_DP_XSK_SOCKET, NULL, i);
			return true;
		}
		/* The queue it is for, when named: refused now rather than at /xsk_insert. */
		if (comma && !queue_ok(a, i, p, q)) {
			char why[96];

			snprintf(why, sizeof(why), "queue %u is not allocated to %.48s", q,
				 p->host);
			say(rep, len, XP_DP_XSK_SOCKET, why, i);
			return true;
		}
		/* One per queue it may use, and one for its UMEM. */
		if (!queues_allowed(a, i, p) || p->socks > queues_allowed(a, i, p)) {
			say(rep, len, XP_DP_XSK_SOCKET,
			    p->socks ? "a socket per queue given and one for the UMEM already" :
				       "no queue of this interface is allocated to this client",
			    i);
			return true;
		}
		s = socket(AF_XDP, SOCK_RAW | SOCK_CLOEXEC, 0);
		if (s < 0) {
			say(rep, len, XP_DP_XSK_SOCKET,
			    errno == EPERM ?
				    "the agent lacks CAP_NET_RAW (add it to the DaemonSet)" :
				    strerror(errno),
			    i);
			return true;
		}
		p->socks++;
		*rep_fd = s; /* the caller sends, then closes our copy */
		snprintf(rep, len, XP_DP_XSK_SOCKET_ACK ",%d", i->ifindex);
		return true;
	}
	if (req != XP_DP_REQ_XSK_INSERT && req != XP_DP_REQ_XSK_REMOVE)
		return false;
	{
		bool ins = req == XP_DP_REQ_XSK_INSERT;
		const char *what = ins ? XP_DP_XSK_INSERT : XP_DP_XSK_REMOVE;
		int map = xp_steer_xskmap_fd(i->steer);

		if (!p->connected || xp_parse_u32(arg, 0, XP_STEER_MAX_QUEUES - 1, &q) ||
		    !is_xsk(fd)) {
			say(rep, len, what, NULL, i);
			return true;
		}
		if (!queue_ok(a, i, p, q)) {
			char why[96];

			snprintf(why, sizeof(why), "queue %u is not allocated to %.48s", q,
				 p->host);
			say(rep, len, what, why, i);
			return true;
		}
		if (!ins) {
			/* Only the socket in the slot takes itself out. */
			if (ag_xsk_in_map(a, i, fd) != (int)q || bpf_map_delete_elem(map, &q))
				say(rep, len, what, NULL, i);
			else
				snprintf(rep, len, "%s_ack", what);
			return true;
		}
		bound = is_bound(fd) ? ag_xsk_bound_queue(a, fd) : -1;
		if (bound != (int)q) {
			char why[96];

			snprintf(why, sizeof(why),
				 bound < 0 ? "the socket is not bound" :
					     "the socket is bound to queue %d, not %u",
				 bound, q);
			say(rep, len, what, why, i);
			return true;
		}
		if (bpf_map_update_elem(map, &q, &fd, 0)) {
			say(rep, len, what, strerror(errno), i);
			return true;
		}
		ag_xsk_client_add(a, i, p->pid); /* whose sockets the map holds: "pidfd" stats */
		snprintf(rep, len, "%s_ack", what);
	}
	return true;
}
