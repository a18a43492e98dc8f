// SPDX-License-Identifier: BSD-3-Clause
/*
 * `xpile run --uds PATH`: the engine as an unprivileged client of the AF_XDP device
 * plugin's socket (served by xpile-agent, or by the device plugin itself). The engine
 * loads and attaches nothing: its sockets exist already (lib/xsk.c binds them with the
 * kernel API, no program involved); the handshake gets the XSKMAP of the program the
 * agent attached, and each socket goes in at key = its queue id, as DPDK does:
 *
 *   /connect,<hostname> -> /host_ok    /version -> 0.1
 *   /xsk_map_fd,<netdev> -> /fd_ack + SCM_RIGHTS(fd)    /fin -> /fin_ack
 *
 * Unlike DPDK, every reply is checked exactly (DPDK takes /fd_nak for /fd_ack), the
 * fd must be an XSKMAP, and a silent server times out.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/un.h>
#include <bpf/bpf.h>

#include "engine.h"

#define UDS_TIMEOUT_S 5
#define UDS_REPLY_MAX 128

static int say(int fd, const char *msg)
{
	return write(fd, msg, strlen(msg)) == (ssize_t)strlen(msg) ? 0 : -errno;
}

/* One reply into @buf; *@passed gets the first fd that came with it (else -1). */
static int hear(int fd, char *buf, int *passed)
{
	union {
		char b[CMSG_SPACE(sizeof(int))];
		struct cmsghdr align;
	} u;
	struct iovec iov = { .iov_base = buf, .iov_len = UDS_REPLY_MAX - 1 };
	struct msghdr m = { .msg_iov = &iov, .msg_iovlen = 1 };
	struct cmsghdr *cm;
	ssize_t n;

	m.msg_control = u.b;
	m.msg_controllen = sizeof(u.b);
	if (passed)
		*passed = -1;
	n = recvmsg(fd, &m, MSG_CMSG_CLOEXEC);
	if (n < 0)
		return errno == EAGAIN ? -ETIMEDOUT : -errno;
	if (n == 0)
		return -ECONNRESET;
	buf[n] = 0;
	for (cm = CMSG_FIRSTHDR(&m); cm; cm = CMSG_NXTHDR(&m, cm))
		if (cm->cmsg_level == SOL_SOCKET && cm->cmsg_type == SCM_RIGHTS) {
			int f;

			memcpy(&f, CMSG_DATA(cm), sizeof(f));
			if (passed && *passed < 0)
				*passed = f;
			else
				close(f);
		}
	return 0;
}

static int uds_fail(const struct eng_port *p, const char *path, const char *what, int err)
{
	fprintf(stderr, "xpile: %s: --uds %s: %s%s%s\n", p->ifname, path, what, err ? ": " : "",
		err ? strerror(-err) : "");
	return -1;
}

/* The request/expected-reply exchange; *@map_fd gets the XSKMAP. */
static int handshake(const struct eng_port *p, const char *path, int *map_fd)
{
	struct sockaddr_un sun = { .sun_family = AF_UNIX };
	struct timeval tv = { .tv_sec = UDS_TIMEOUT_S };
	char host[64] = "", req[64], rep[UDS_REPLY_MAX];
	struct bpf_map_info info = {};
	__u32 ilen = sizeof(info);
	int fd, err, mfd = -1;

	if (strlen(path) >= sizeof(sun.sun_path))
		return uds_fail(p, path, "path too long for a Unix socket", 0);
	memcpy(sun.sun_path, path, strlen(path) + 1);
	fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return uds_fail(p, path, "socket", -errno);
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
	if (connect(fd, (struct sockaddr *)&sun, sizeof(sun))) {
		err = -errno;
		close(fd);
		return uds_fail(
			p, path,
			"cannot connect (is xpile-agent serving this interface, and may this user connect?)",
			err);
	}
	gethostname(host, sizeof(host) - 10); /* the request fits 64 bytes, as DPDK's */
	snprintf(req, sizeof(req), "/connect,%.54s", host[0] ? host : "localhost");
	err = say(fd, req) ?: hear(fd, rep, NULL);
	if (err)
		goto io;
	if (strcmp(rep, "/host_ok")) {
		close(fd);
		return uds_fail(p, path,
				"the agent refused this host (reply to /connect was not /host_ok)",
				0);
	}
	err = say(fd, "/version") ?: hear(fd, rep, NULL);
	if (err)
		goto io;
	snprintf(req, sizeof(req), "/xsk_map_fd,%s", p->ifname);
	err = say(fd, req) ?: hear(fd, rep, &mfd);
	if (err)
		goto io;
	if (strcmp(rep, "/fd_ack") || mfd < 0) {
		if (mfd >= 0)
			close(mfd);
		close(fd);
		fprintf(stderr,
			"xpile: %s: --uds %s: the agent refused the XSKMAP (reply '%.40s'%s); does it serve %s on this socket?\n",
			p->ifname, path, rep, mfd < 0 ? ", no fd" : "", p->ifname);
		return -1;
	}
	err = say(fd, "/fin") ?: hear(fd, rep, NULL);
	if (err)
		goto io;
	close(fd);
	if (bpf_obj_get_info_by_fd(mfd, &info, &ilen) || info.type != BPF_MAP_TYPE_XSKMAP) {
		close(mfd);
		return uds_fail(p, path, "the fd the agent passed is not an XSKMAP", 0);
	}
	*map_fd = mfd;
	return 0;
io:
	if (mfd >= 0)
		close(mfd);
	close(fd);
	return uds_fail(p, path, "handshake failed", err);
}

int eng_uds_setup(struct engine *e)
{
	for (__u32 i = 0; i < e->cfg.nports; i++) {
		struct eng_port *p = &e->ports[i];

		p->uds_map_fd = -1;
		if (handshake(p, e->cfg.uds[i], &p->uds_map_fd))
			return -1;
	}
	return 0;
}

void eng_uds_xskmap_set(struct eng_q *q, bool on)
{
	int fd = q->port->uds_map_fd, xfd = q->xsk->fd;

	if (fd < 0)
		return;
	if (on && bpf_map_update_elem(fd, &q->queue, &xfd, 0))
		fprintf(stderr, "xpile: %s: queue %u: XSKMAP update failed: %s\n", q->port->ifname,
			q->queue, strerror(errno));
	if (!on)
		bpf_map_delete_elem(fd, &q->queue);
}

void eng_uds_close(struct eng_port *p)
{
	if (p->uds_map_fd > 0)
		close(p->uds_map_fd);
	p->uds_map_fd = -1;
}
