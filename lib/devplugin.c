// SPDX-License-Identifier: BSD-3-Clause
/* The AF_XDP device plugin's protocol, both ends (xpile/devplugin.h). */
#include <errno.h>
#include <stdbool.h>
#include <string.h>
#include <unistd.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/un.h>

#include "xpile/devplugin.h"
#include "xpile/handover.h"

static const struct {
	const char *word;
	enum xp_dp_req req;
	bool arg; /* a comma and an argument follow */
} reqs[] = {
	{ XP_DP_CONNECT, XP_DP_REQ_CONNECT, true },
	{ XP_DP_VERSION, XP_DP_REQ_VERSION, false },
	{ XP_DP_XSK_MAP_FD, XP_DP_REQ_XSK_MAP_FD, true },
	{ XP_DP_BUSY_POLL, XP_DP_REQ_BUSY_POLL, true },
	{ XP_DP_XSK_SOCKET, XP_DP_REQ_XSK_SOCKET, true },
	{ XP_DP_XSK_INSERT, XP_DP_REQ_XSK_INSERT, true },
	{ XP_DP_XSK_REMOVE, XP_DP_REQ_XSK_REMOVE, true },
	{ XP_DP_FIN, XP_DP_REQ_FIN, false },
};

enum xp_dp_req xp_dp_req_parse(const char *msg, size_t len, int flags, const char **arg)
{
	if (arg)
		*arg = "";
	if ((flags & MSG_TRUNC) || len > XP_DP_REQ_MAX || strlen(msg) != len ||
	    strpbrk(msg, "\n\r"))
		return XP_DP_REQ_UNKNOWN;
	for (size_t k = 0; k < sizeof(reqs) / sizeof(reqs[0]); k++) {
		size_t n = strlen(reqs[k].word);

		if (strncmp(msg, reqs[k].word, n))
			continue;
		if (!reqs[k].arg && !msg[n])
			return reqs[k].req;
		/* /connect takes a name; the others may take an empty one (refused later). */
		if (reqs[k].arg && msg[n] == ',' &&
		    (msg[n + 1] || reqs[k].req != XP_DP_REQ_CONNECT)) {
			if (arg)
				*arg = msg + n + 1;
			return reqs[k].req;
		}
	}
	return XP_DP_REQ_UNKNOWN;
}

int xp_dp_msg_fd(struct msghdr *m)
{
	struct cmsghdr *cm;
	int fd = -1;

	for (cm = CMSG_FIRSTHDR(m); cm; cm = CMSG_NXTHDR(m, cm)) {
		int n;

		if (cm->cmsg_level != SOL_SOCKET || cm->cmsg_type != SCM_RIGHTS)
			continue;
		n = (int)((cm->cmsg_len - CMSG_LEN(0)) / sizeof(int));
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

int xp_dp_send(int sock, const char *msg, int fd, int flags)
{
	ssize_t n = xp_fd_send(sock, msg, strlen(msg), &fd, fd >= 0, flags);

	return n < 0 ? (int)n : 0;
}

int xp_dp_recv(int sock, char *buf, size_t len, int *fd)
{
	union {
		char b[CMSG_SPACE(sizeof(int))];
		struct cmsghdr align;
	} u;
	struct iovec iov = { .iov_base = buf, .iov_len = len - 1 };
	struct msghdr m = { .msg_iov = &iov, .msg_iovlen = 1 };
	ssize_t n;
	int f;

	if (fd)
		*fd = -1;
	if (len < 2)
		return -EINVAL;
	m.msg_control = u.b;
	m.msg_controllen = sizeof(u.b);
	do
		n = recvmsg(sock, &m, MSG_CMSG_CLOEXEC);
	while (n < 0 && errno == EINTR);
	if (n < 0)
		return errno == EAGAIN ? -ETIMEDOUT : -errno;
	buf[n] = 0;
	f = xp_dp_msg_fd(&m);
	if (fd)
		*fd = f;
	else if (f >= 0)
		close(f);
	return n ? (int)n : -ECONNRESET;
}

int xp_dp_dial(const char *path, int timeout_s)
{
	struct sockaddr_un sun = { .sun_family = AF_UNIX };
	struct timeval tv = { .tv_sec = timeout_s };
	int fd, err;

	if (strlen(path) >= sizeof(sun.sun_path))
		return -ENAMETOOLONG;
	memcpy(sun.sun_path, path, strlen(path) + 1);
	fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	if (timeout_s) {
		setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
		setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
	}
	if (connect(fd, (struct sockaddr *)&sun, sizeof(sun))) {
		err = -errno;
		close(fd);
		return err;
	}
	return fd;
}
