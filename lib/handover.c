// SPDX-License-Identifier: BSD-3-Clause
/*
 * The handover channel (xpile/handover.h): a Unix stream socket, same uid only, and
 * framed messages with fds. A stream rather than SOCK_SEQPACKET because a ledger
 * payload grows with the frames (one byte each, 16 MiB at the most) and a datagram
 * is bounded by the socket buffer; the fds ride on the header's bytes.
 */
#include <errno.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "log_internal.h"
#include "xpile/handover.h"

static int addr_of(const char *path, struct sockaddr_un *sa)
{
	memset(sa, 0, sizeof(*sa));
	sa->sun_family = AF_UNIX;
	if (!path || !*path || strlen(path) >= sizeof(sa->sun_path))
		return -ENAMETOOLONG;
	memcpy(sa->sun_path, path, strlen(path) + 1);
	return 0;
}

/* A connected @fd is *@out once its peer is of our uid (SO_PEERCRED), with timeouts
 * both ways; closed otherwise. */
static int adopt(int fd, int timeout_ms, int *out, pid_t *pid)
{
	struct timeval tv = { .tv_sec = timeout_ms / 1000,
			      .tv_usec = (long)(timeout_ms % 1000) * 1000 };
	struct ucred cr;
	socklen_t len = sizeof(cr);
	int err = getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cr, &len) ? -errno : 0;

	if (!err && pid)
		*pid = cr.pid;
	if (!err && cr.uid != geteuid())
		err = -EPERM;
	if (err) {
		close(fd);
		return err;
	}
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
	*out = fd;
	return 0;
}

__u64 xp_ho_path_ino(const char *path)
{
	struct stat st;

	return path && !lstat(path, &st) && S_ISSOCK(st.st_mode) ? (__u64)st.st_ino : 0;
}

int xp_ho_listen(const char *path, int *out)
{
	struct sockaddr_un sa;
	struct stat st;
	int fd, probe, err;

	if (!out || addr_of(path, &sa)) {
		xp_err("handover: socket path must be 1..%zu bytes\n", sizeof(sa.sun_path) - 1);
		return -EINVAL;
	}
	if (!lstat(path, &st)) {
		if (!S_ISSOCK(st.st_mode)) {
			xp_err("handover: %s exists and is not a socket; remove it or pick another path\n",
			       path);
			return -EEXIST;
		}
		/* Someone accepting there is a live owner: never steal its path. */
		probe = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
		if (probe >= 0 && !connect(probe, (struct sockaddr *)&sa, sizeof(sa))) {
			close(probe);
			xp_err("handover: a process listens on %s already (an engine serving it); give another --handover path, or take over from it (--take-over %s)\n",
			       path, path);
			return -EADDRINUSE;
		}
		if (probe >= 0)
			close(probe);
		unlink(path); /* left by a process that died */
	}
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0)
		return -errno;
	/* 0600 from birth (umask at bind): no window in which another uid may connect. */
	{
		mode_t old = umask(0177);

		err = bind(fd, (struct sockaddr *)&sa, sizeof(sa)) ? -errno : 0;
		umask(old);
	}
	if (!err && listen(fd, 4))
		err = -errno;
	if (err) {
		xp_err("handover: cannot listen on %s: %s\n", path, strerror(-err));
		close(fd);
		return err;
	}
	chmod(path, 0600);
	*out = fd;
	return 0;
}

int xp_ho_accept(int lfd, int timeout_ms, int *out, pid_t *pid)
{
	int fd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);

	if (fd < 0)
		return errno == EWOULDBLOCK ? -EAGAIN : -errno;
	return adopt(fd, timeout_ms, out, pid);
}

int xp_ho_connect(const char *path, int timeout_ms, int *out, pid_t *pid)
{
	struct sockaddr_un sa;
	int fd, err;

	if (!out || addr_of(path, &sa))
		return -EINVAL;
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa))) {
		err = -errno;
		close(fd);
		return err;
	}
	return adopt(fd, timeout_ms, out, pid);
}

ssize_t xp_fd_send(int sock, const void *buf, size_t len, const int *fds, __u32 nfds, int flags)
{
	union {
		char buf[CMSG_SPACE(sizeof(int) * XP_HO_MAX_FDS)];
		struct cmsghdr align;
	} cm;
	struct iovec iov = { (void *)buf, len };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1 };
	ssize_t n;

	if (nfds > XP_HO_MAX_FDS || (nfds && !fds) || (len && !buf))
		return -EINVAL;
	if (nfds) {
		struct cmsghdr *c;

		memset(&cm, 0, sizeof(cm));
		mh.msg_control = cm.buf;
		mh.msg_controllen = CMSG_SPACE(sizeof(int) * nfds);
		c = CMSG_FIRSTHDR(&mh);
		c->cmsg_level = SOL_SOCKET;
		c->cmsg_type = SCM_RIGHTS;
		c->cmsg_len = CMSG_LEN(sizeof(int) * nfds);
		memcpy(CMSG_DATA(c), fds, sizeof(int) * nfds);
	}
	do
		n = sendmsg(sock, &mh, flags | MSG_NOSIGNAL);
	while (n < 0 && errno == EINTR);
	return n < 0 ? -errno : n;
}

int xp_ho_send(int fd, __u16 type, __u16 version, const void *data, __u32 len, const int *fds,
	       __u32 nfds)
{
	struct xp_ho_hdr h = { XP_HO_MAGIC, version ? version : XP_HO_VERSION, type, len, nfds };
	const char *p = data;
	ssize_t n;

	if (len && !data)
		return -EINVAL;
	n = xp_fd_send(fd, &h, sizeof(h), fds, nfds, 0);
	if (n < 0)
		return (int)n;
	if ((size_t)n < sizeof(h)) /* the rest of the header, without the fds */
		if (send(fd, (const char *)&h + n, sizeof(h) - n, MSG_NOSIGNAL) !=
		    (ssize_t)(sizeof(h) - n))
			return -EIO;
	while (len) {
		n = send(fd, p, len, MSG_NOSIGNAL);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return n < 0 ? -errno : -EIO;
		p += n;
		len -= (__u32)n;
	}
	return 0;
}

int xp_ho_send_error(int fd, const char *fmt, ...)
{
	char line[512];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	if (n < 0)
		return -EINVAL;
	if ((size_t)n >= sizeof(line))
		n = sizeof(line) - 1;
	return xp_ho_send(fd, XP_HO_MSG_ERROR, 0, line, (__u32)n, NULL, 0);
}

static __u64 now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (__u64)ts.tv_sec * 1000 + (__u64)ts.tv_nsec / 1000000;
}

/* Waits for @fd to be readable until @deadline (ms): 0, -ETIMEDOUT or -errno. */
static int wait_in(int fd, __u64 deadline)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };

	for (;;) {
		__u64 now = now_ms();
		int n;

		if (now >= deadline)
			return -ETIMEDOUT;
		n = poll(&p, 1, (int)(deadline - now));
		if (n > 0)
			return 0;
		if (n < 0 && errno != EINTR)
			return -errno;
	}
}

/* Once a message has begun, the rest of it may take this long (ms). */
#define HO_REST_MS 1000

/* Reads exactly @len bytes, the first by @deadline (0: only if there now), the rest
 * within HO_REST_MS more; fds that come with them go to @fds. */
static int read_all(int fd, void *buf, size_t len, __u64 deadline, int *fds, __u32 maxfds,
		    __u32 *nfds, bool *extra)
{
	char *p = buf;

	while (len) {
		union {
			char buf[CMSG_SPACE(sizeof(int) * XP_HO_MAX_FDS)];
			struct cmsghdr align;
		} cm;
		struct iovec iov = { p, len };
		struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1 };
		ssize_t n;
		int err;

		mh.msg_control = fds ? cm.buf : NULL;
		mh.msg_controllen = fds ? sizeof(cm.buf) : 0;
		n = recvmsg(fd, &mh, MSG_CMSG_CLOEXEC | MSG_DONTWAIT);
		if (n < 0 && (errno == EINTR || errno == EAGAIN)) {
			err = wait_in(fd, deadline);
			if (err)
				return err;
			continue;
		}
		if (n < 0)
			return -errno;
		if (n == 0)
			return -ECONNRESET;
		if (deadline < now_ms() + HO_REST_MS)
			deadline = now_ms() + HO_REST_MS;
		for (struct cmsghdr *c = fds ? CMSG_FIRSTHDR(&mh) : NULL; c;
		     c = CMSG_NXTHDR(&mh, c)) {
			__u32 k;
			int *in;

			if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS)
				continue;
			in = (int *)CMSG_DATA(c);
			k = (__u32)((c->cmsg_len - CMSG_LEN(0)) / sizeof(int));
			for (__u32 i = 0; i < k; i++) {
				if (*nfds < maxfds) {
					fds[(*nfds)++] = in[i];
				} else {
					close(in[i]);
					*extra = true;
				}
			}
		}
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

/* Reads and drops @len bytes: a message of another version leaves the stream in step
 * (and the peer's close, with nothing unread, sends no reset over its last words). */
static int skip(int fd, __u32 len, __u64 deadline)
{
	char junk[4096];
	bool extra = false;
	__u32 none = 0;

	while (len) {
		__u32 n = len < sizeof(junk) ? len : (__u32)sizeof(junk);
		int err = read_all(fd, junk, n, deadline, NULL, 0, &none, &extra);

		if (err)
			return err;
		len -= n;
	}
	return 0;
}

int xp_ho_recv(int fd, struct xp_ho_hdr *hdr, void *buf, __u32 cap, int *fds, __u32 maxfds,
	       int timeout_ms)
{
	__u64 deadline = now_ms() + (timeout_ms > 0 ? (__u64)timeout_ms : 0);
	bool extra = false;
	__u32 got = 0;
	int err;

	if (!hdr || (cap && !buf))
		return -EINVAL;
	memset(hdr, 0, sizeof(*hdr));
	err = read_all(fd, hdr, sizeof(*hdr), deadline, fds, fds ? maxfds : 0, &got, &extra);
	if (!err && hdr->magic != XP_HO_MAGIC)
		err = -EBADMSG;
	else if (!err && hdr->version != XP_HO_VERSION)
		err = skip(fd, hdr->len, deadline) ?: -EPROTONOSUPPORT;
	else if (!err && (extra || got != hdr->nfds || hdr->len > cap))
		err = -EMSGSIZE;
	if (!err) {
		__u32 none = 0;

		err = read_all(fd, buf, hdr->len, deadline, NULL, 0, &none, &extra);
	}
	if (err && fds)
		while (got)
			close(fds[--got]);
	return err;
}
