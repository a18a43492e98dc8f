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
#include "xpile/handover.h"
#include "xpile/text.h"

#define DP_MSG_MAX 64 /* the device plugin's request buffer */
#define DP_SOCK "afxdp.sock"

struct ag_dp {
	struct ag_srv srv; /* first: the server's callbacks find the ag_dp */
	struct ag_iface *i;
	char path[AG_SUN_PATH];
	char dir[AG_SUN_PATH];
};

struct ag_dp_conn {
	struct ag_conn conn; /* first, likewise */
	bool connected, done;
	int pid; /* SO_PEERCRED: 0 when not visible from the agent's pid namespace */
	struct msghdr msg;
	struct iovec iov;
	char buf[DP_MSG_MAX + 2]; /* one more than a request may be, and its NUL */
	union {
		char b[CMSG_SPACE(sizeof(int))];
		struct cmsghdr align;
	} ctl;
};

static void arm_recv(struct agent *a, struct ag_dp_conn *c)
{
	struct io_uring_sqe *sqe = ag_loop_sqe(&a->loop, &c->conn.ev);

	c->iov.iov_base = c->buf;
	c->iov.iov_len = DP_MSG_MAX + 1; /* one more: a longer request is seen as such */
	memset(&c->msg, 0, sizeof(c->msg));
	c->msg.msg_iov = &c->iov;
	c->msg.msg_iovlen = 1;
	c->msg.msg_control = c->ctl.b;
	c->msg.msg_controllen = sizeof(c->ctl.b);
	if (sqe)
		io_uring_prep_recvmsg(sqe, c->conn.fd, &c->msg, MSG_CMSG_CLOEXEC);
}

/* One reply, at once: a few bytes on a fresh SEQPACKET socket never block for long;
 * a client that does not read gets its connection closed. */
static void reply(struct ag_dp_conn *c, const char *msg, int fd)
{
	if (xp_fd_send(c->conn.fd, msg, strlen(msg), &fd, fd >= 0, MSG_DONTWAIT) < 0)
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

/* The fd a request carried, if any (closed by the caller). */
static int passed_fd(struct ag_dp_conn *c)
{
	struct cmsghdr *cm;
	int fd = -1;

	for (cm = CMSG_FIRSTHDR(&c->msg); cm; cm = CMSG_NXTHDR(&c->msg, cm))
		if (cm->cmsg_level == SOL_SOCKET && cm->cmsg_type == SCM_RIGHTS) {
			int n = (int)((cm->cmsg_len - CMSG_LEN(0)) / sizeof(int));

			for (int k = 0; k < n; k++) {
				int f;

				memcpy(&f, CMSG_DATA(cm) + k * sizeof(int), sizeof(int));
				if (fd < 0)
					fd = f;
				else
					close(f);
			}
		}
	return fd;
}

static void serve(struct ag_dp_conn *c, size_t n, int flags)
{
	struct ag_dp *dp = (struct ag_dp *)c->conn.srv;
	int fd = passed_fd(c);
	const char *m = c->buf;

	c->buf[n] = 0;
	/* Too long, or with a NUL or a line end: /nak like any unknown request. */
	if ((flags & MSG_TRUNC) || n > DP_MSG_MAX || strlen(m) != n || strpbrk(m, "\n\r"))
		m = "";
	if (!strncmp(m, "/connect,", 9) && m[9]) {
		bool ok = dp && dp->i && !dp->i->cfg.nhosts;

		for (__u32 k = 0; dp && dp->i && k < dp->i->cfg.nhosts; k++)
			ok |= !strcmp(m + 9, dp->i->cfg.hosts[k]);
		c->connected = ok;
		reply(c, ok ? "/host_ok" : "/host_nak", -1);
	} else if (!strcmp(m, "/version")) {
		reply(c, "0.1", -1);
	} else if (!strncmp(m, "/xsk_map_fd,", 12)) {
		bool ok = c->connected && dp && dp->i && !strcmp(m + 12, dp->i->name);

		if (ok) {
			reply(c, "/fd_ack", xp_steer_xskmap_fd(dp->i->steer));
			/* Whose sockets go into this map: for xsk_stats "pidfd". */
			ag_xsk_client_add(dp->srv.a, dp->i, c->pid);
		} else
			reply(c, "/fd_nak", -1);
	} else if (!strncmp(m, "/config_busy_poll,", 18)) {
		bool ok = c->connected && fd >= 0 && !busy_poll(fd, m + 18);

		reply(c, ok ? "/config_busy_poll_ack" : "/config_busy_poll_nak", -1);
	} else if (!strcmp(m, "/fin")) {
		reply(c, "/fin_ack", -1);
		c->done = true;
		if (dp)
			dp->srv.a->dp_handshakes++;
	} else {
		reply(c, "/nak", -1);
	}
	if (fd >= 0)
		close(fd);
}

static void conn_free(struct agent *a, struct ag_dp_conn *c)
{
	ag_conn_close(&c->conn);
	a->dp_conns--;
	free(c);
}

static void conn_recv(struct ag_loop *l, struct ag_ev *ev, int res, unsigned int flags)
{
	struct ag_dp_conn *c = (struct ag_dp_conn *)ev;
	struct agent *a = c->conn.a;

	if (res <= 0 || !c->conn.srv) {
		conn_free(a, c);
		return;
	}
	c->conn.last = ag_now();
	serve(c, (size_t)res, c->msg.msg_flags);
	if (c->done)
		conn_free(a, c);
	else
		arm_recv(a, c);
}

static void dp_release(struct ag_srv *s)
{
	free(s);
}

static int dp_accepted(struct ag_srv *s, int fd)
{
	struct agent *a = s->a;
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
	ag_conn_add(s, &c->conn, fd, conn_recv);
	arm_recv(a, c);
	return 0;
}

int ag_dp_open(struct agent *a, struct ag_iface *i)
{
	struct sockaddr_un sun = { .sun_family = AF_UNIX };
	struct ag_dp *dp = calloc(1, sizeof(*dp));
	int err, fd;

	if (!dp)
		return -ENOMEM;
	dp->i = i;
	snprintf(dp->srv.name, sizeof(dp->srv.name), "%s: device-plugin", i->name);
	dp->srv.accepted = dp_accepted;
	dp->srv.release = dp_release;
	snprintf(dp->dir, sizeof(dp->dir), "%s/%s", a->cfg.dp_dir, i->name);
	if (snprintf(dp->path, sizeof(dp->path), "%s/%s", dp->dir, DP_SOCK) >=
	    (int)sizeof(dp->path)) {
		ag_log("%s: device-plugin socket path too long under %s", i->name, a->cfg.dp_dir);
		free(dp);
		return -ENAMETOOLONG;
	}
	err = ag_mkdir_p(dp->dir);
	if (err) {
		ag_log("%s: cannot create %s: %s", i->name, dp->dir, strerror(-err));
		free(dp);
		return err;
	}
	/* Left by a previous run (the socket of a dead process accepts nothing). */
	unlink(dp->path);
	memcpy(sun.sun_path, dp->path, strlen(dp->path) + 1);
	fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	if (fd < 0 || bind(fd, (struct sockaddr *)&sun, sizeof(sun)) ||
	    chmod(dp->path, a->cfg.dp_mode) || listen(fd, 128)) {
		err = -errno;
		ag_log("%s: cannot serve %s: %s", i->name, dp->path, strerror(-err));
		if (fd >= 0)
			close(fd);
		unlink(dp->path);
		rmdir(dp->dir);
		free(dp);
		return err;
	}
	i->dp = dp;
	ag_srv_start(&dp->srv, a, fd);
	ag_log("%s: device-plugin socket %s", i->name, dp->path);
	return 0;
}

void ag_dp_close(struct agent *a, struct ag_iface *i)
{
	struct ag_dp *dp = i->dp;

	if (!dp)
		return;
	i->dp = NULL;
	dp->i = NULL;
	unlink(dp->path);
	rmdir(dp->dir);
	ag_srv_stop(&dp->srv);
}

static double dp_limit(const struct ag_conn *c)
{
	return c->a->cfg.dp_idle;
}

void ag_dp_tick(struct agent *a, double now)
{
	for (int k = 0; k < AG_MAX_IFACES; k++)
		if (a->ifaces[k].dp)
			ag_srv_expire(&a->ifaces[k].dp->srv, now, dp_limit);
}
