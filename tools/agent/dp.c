// SPDX-License-Identifier: BSD-3-Clause
/*
 * The server side of the AF_XDP device plugin's Unix-socket protocol, as its clients
 * (DPDK's net_af_xdp with use_cni, `xpile run --uds`) speak it: one SOCK_SEQPACKET
 * socket per interface at DIR/NETDEV/afxdp.sock, one request per message, no NUL and
 * no newline, every reply shorter than 128 bytes (DPDK writes a NUL after the reply in
 * a 128-byte buffer), the XSKMAP fd by SCM_RIGHTS. Clients have no timeouts, so every
 * message gets an answer and a connection silent for dp_idle seconds is closed. A
 * client connects once per RX queue: accept never stops.
 *
 *   /connect,<hostname>                 /host_ok
 *   /version                            0.1
 *   /xsk_map_fd,<netdev>                /fd_ack + fd   (/fd_nak: another netdev, or
 *                                                       before /connect)
 *   /config_busy_poll,<usecs>,<budget>  /config_busy_poll_ack (_nak) on the fd sent
 *   /fin                                /fin_ack, then the agent closes
 *   anything else                       /nak
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>

#include "agent.h"
#include "dp.h"
#include "podres.h"
#include "xskpidfd.h"
#include "xsksock.h"
#include "xpile/devplugin.h"
#include "xpile/text.h"

struct ag_dp {
	struct ut_srv srv; /* first: the server's callbacks find the ag_dp */
	struct ag_iface *i;
	struct ag_sock sock; /* DIR/NETDEV/afxdp.sock (sockdir.c) */
};

struct ag_dp_conn {
	struct ut_conn conn; /* first, likewise */
	bool connected, done;
	char host[AG_HOST_MAX]; /* as /connect named it */
	unsigned int socks; /* xsksock.c: AF_XDP sockets made for it */
	int pid; /* SO_PEERCRED: 0 when not visible from the agent's pid namespace */
	struct msghdr msg;
	struct iovec iov;
	char buf[XP_DP_REQ_MAX + 2]; /* one more than a request may be, and its NUL */
	union {
		char b[CMSG_SPACE(sizeof(int))];
		struct cmsghdr align;
	} ctl;
};

static void arm_recv(struct agent *a, struct ag_dp_conn *c)
{
	c->iov.iov_base = c->buf;
	c->iov.iov_len = XP_DP_REQ_MAX + 1; /* one more: a longer request is seen as such */
	memset(&c->msg, 0, sizeof(c->msg));
	c->msg.msg_iov = &c->iov;
	c->msg.msg_iovlen = 1;
	c->msg.msg_control = c->ctl.b;
	c->msg.msg_controllen = sizeof(c->ctl.b);
	ut_loop_recvmsg(&a->loop, &c->conn.ev, c->conn.fd, &c->msg, MSG_CMSG_CLOEXEC);
}

/* One reply, at once: a few bytes on a fresh SEQPACKET socket never block for long;
 * a client that does not read gets its connection closed. */
static void reply(struct ag_dp_conn *c, const char *msg, int fd)
{
	if (xp_dp_send(c->conn.fd, msg, fd, MSG_DONTWAIT) < 0)
		c->done = true;
}

static int busy_poll(int fd, const char *args)
{
	char a1[16], a2[16];
	const char *comma = strchr(args, ',');
	__u32 usecs, budget;
	int one = 1, dom = 0;
	socklen_t sl = sizeof(dom);

	if (!comma || (size_t)(comma - args) >= sizeof(a1) || strlen(comma + 1) >= sizeof(a2))
		return -EINVAL;
	snprintf(a1, sizeof(a1), "%.*s", (int)(comma - args), args);
	snprintf(a2, sizeof(a2), "%s", comma + 1);
	if (xp_parse_u32(a1, 0, 1000000, &usecs) || xp_parse_u32(a2, 1, 65535, &budget))
		return -EINVAL;
	/* Only AF_XDP sockets: the agent's privileges are not for other sockets. */
	if (getsockopt(fd, SOL_SOCKET, SO_DOMAIN, &dom, &sl) || dom != AF_XDP)
		return -ENOTSOCK;
	if (setsockopt(fd, SOL_SOCKET, SO_PREFER_BUSY_POLL, &one, sizeof(one)) ||
	    setsockopt(fd, SOL_SOCKET, SO_BUSY_POLL, &usecs, sizeof(usecs)) ||
	    setsockopt(fd, SOL_SOCKET, SO_BUSY_POLL_BUDGET, &budget, sizeof(budget)))
		return -errno;
	return 0;
}

static void serve(struct ag_dp_conn *c, size_t n, int flags)
{
	struct ag_dp *dp = (struct ag_dp *)c->conn.srv;
	int fd = xp_dp_msg_fd(&c->msg); /* closed here */
	bool on = dp && dp->i, ok;
	const char *arg;

	c->buf[n] = 0;
	enum xp_dp_req req = xp_dp_req_parse(c->buf, n, flags, &arg);

	switch (req) {
	case XP_DP_REQ_CONNECT:
		ok = on && !dp->i->cfg.nhosts;
		for (__u32 k = 0; on && k < dp->i->cfg.nhosts; k++)
			ok |= !strcmp(arg, dp->i->cfg.hosts[k]);
		/* With the kubelet: a pod holding a queue of this interface (podres.c). */
		if (ok && ag_podres_on(dp->srv.ctx))
			ok = ag_podres_host_ok(dp->srv.ctx, dp->i, arg);
		snprintf(c->host, sizeof(c->host), "%s", arg);
		c->connected = ok;
		reply(c, ok ? XP_DP_HOST_OK : XP_DP_HOST_NAK, -1);
		break;
	case XP_DP_REQ_VERSION:
		reply(c, XP_DP_PROTO_VERSION, -1);
		break;
	case XP_DP_REQ_XSK_MAP_FD:
		if (c->connected && on && !strcmp(arg, dp->i->name)) {
			reply(c, XP_DP_FD_ACK, xp_steer_xskmap_fd(dp->i->steer));
			/* Whose sockets go into this map: for xsk_stats "pidfd". */
			ag_xsk_client_add(dp->srv.ctx, dp->i, c->pid);
		} else
			reply(c, XP_DP_FD_NAK, -1);
		break;
	case XP_DP_REQ_BUSY_POLL:
		ok = c->connected && fd >= 0 && !busy_poll(fd, arg);
		reply(c, ok ? XP_DP_BUSY_POLL_ACK : XP_DP_BUSY_POLL_NAK, -1);
		break;
	case XP_DP_REQ_XSK_SOCKET:
	case XP_DP_REQ_XSK_INSERT:
	case XP_DP_REQ_XSK_REMOVE:
		if (on) {
			/* Queues for clients without capabilities (xsksock.c). */
			struct ag_xsk_peer p = { .connected = c->connected,
						 .host = c->host,
						 .socks = c->socks,
						 .pid = c->pid };
			char rep[64];
			int sfd;

			if (!ag_xsksock_serve(dp->srv.ctx, dp->i, &p, req, arg, fd, rep,
					      sizeof(rep), &sfd))
				snprintf(rep, sizeof(rep), XP_DP_NAK);
			c->socks = p.socks;
			reply(c, rep, sfd);
			if (sfd >= 0)
				close(sfd);
		} else
			reply(c, XP_DP_NAK, -1);
		break;
	case XP_DP_REQ_FIN:
		reply(c, XP_DP_FIN_ACK, -1);
		c->done = true;
		if (dp)
			((struct agent *)dp->srv.ctx)->dp_handshakes++;
		break;
	default:
		reply(c, XP_DP_NAK, -1);
	}
	if (fd >= 0)
		close(fd);
}

static void conn_free(struct agent *a, struct ag_dp_conn *c)
{
	ut_conn_close(&c->conn);
	a->dp_conns--;
	free(c);
}

static void conn_recv(struct ut_loop *l, struct ut_ev *ev, int res, unsigned int flags)
{
	struct ag_dp_conn *c = (struct ag_dp_conn *)ev;
	struct agent *a = c->conn.ctx;

	if (res <= 0 || !c->conn.srv) {
		conn_free(a, c);
		return;
	}
	c->conn.last = ut_now();
	serve(c, (size_t)res, c->msg.msg_flags);
	if (c->done)
		conn_free(a, c);
	else
		arm_recv(a, c);
}

static void dp_release(struct ut_srv *s)
{
	free(s);
}

static int dp_accepted(struct ut_srv *s, int fd)
{
	struct agent *a = s->ctx;
	struct ag_dp_conn *c;

	if (a->dp_conns >= a->cfg.dp_max_conns || !(c = calloc(1, sizeof(*c))))
		return -EBUSY;
	{
		struct ucred cr = { 0 };
		socklen_t sl = sizeof(cr);

		if (!getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cr, &sl))
			c->pid = cr.pid;
	}
	a->dp_conns++;
	ut_conn_add(s, &c->conn, fd, conn_recv);
	arm_recv(a, c);
	return 0;
}

int ag_dp_open(struct agent *a, struct ag_iface *i, char *err, size_t len)
{
	struct ag_dp *dp = calloc(1, sizeof(*dp));
	char dir[AG_SUN_PATH], why[512];
	int fd;

	if (!dp) {
		snprintf(err, len, "%s: out of memory", i->name);
		return -1;
	}
	dp->i = i;
	snprintf(dp->srv.name, sizeof(dp->srv.name), "%s: device-plugin", i->name);
	dp->srv.accepted = dp_accepted;
	dp->srv.release = dp_release;
	/* The configured directory and the netdev's are the agent's own (2 levels). */
	snprintf(dir, sizeof(dir), "%s/%s", a->cfg.dp_dir, i->name);
	fd = ag_sock_listen(&dp->sock, dir, 2, XP_DP_SOCK_NAME, SOCK_SEQPACKET, a->cfg.dp_mode,
			    a->cfg.dp_gid, 128, why, sizeof(why));
	if (fd < 0) {
		snprintf(err, len, "%s: device-plugin socket: %s", i->name, why);
		free(dp);
		return -1;
	}
	i->dp = dp;
	ut_srv_start(&dp->srv, &a->loop, a, fd);
	ut_say(0, "%s: device-plugin socket %s", i->name, dp->sock.path);
	return 0;
}

bool ag_dp_intact(const struct ag_iface *i)
{
	return i->dp && ag_sock_intact(&i->dp->sock);
}

const char *ag_dp_path(const struct ag_iface *i)
{
	return i->dp ? i->dp->sock.path : "";
}

void ag_dp_close(struct agent *a, struct ag_iface *i)
{
	struct ag_dp *dp = i->dp;

	if (!dp)
		return;
	i->dp = NULL;
	dp->i = NULL;
	if (!ag_sock_close(&dp->sock, true))
		ut_warn("%s: %s is not the socket this agent bound (removed or replaced): left as it is",
			dp->srv.name, dp->sock.path);
	ut_srv_stop(&dp->srv);
}

static double dp_limit(const struct ut_conn *c)
{
	return ((const struct agent *)c->ctx)->cfg.dp_idle;
}

void ag_dp_tick(struct agent *a, double now)
{
	for (int k = 0; k < AG_MAX_IFACES; k++)
		if (a->ifaces[k].dp)
			ut_srv_expire(&a->ifaces[k].dp->srv, now, dp_limit);
}
