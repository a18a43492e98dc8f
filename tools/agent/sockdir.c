// SPDX-License-Identifier: BSD-3-Clause
/*
 * The agent's Unix sockets (the device plugin's, the control socket), bound where no
 * one else can swap them. A directory made by another user, or one others may write,
 * lets them replace the socket the pods connect to (and have the agent unlink theirs
 * at exit); a symbolic link sends the socket elsewhere. So the directory is walked
 * from / one component at a time (openat O_PATH|O_NOFOLLOW|O_DIRECTORY), creating what
 * is missing, and each must be a directory owned by root or the agent's uid and not
 * writable by group or others. Above the agent's own levels a sticky directory passes
 * (/tmp): there the kernel lets nobody else rename or remove what the agent made.
 * The socket is bound under a umask that gives it its mode from the start, and only
 * the very file bound (its device and inode) is ever removed.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>

#include "agent.h"

/* Why the directory @path (just opened as @st) is not safe, or NULL. */
static const char *unsafe(const struct stat *st, bool strict, char *why, size_t len)
{
	if (st->st_uid != 0 && st->st_uid != geteuid()) {
		snprintf(why, len, "is owned by uid %u, not by the agent (uid %u) or root",
			 (unsigned int)st->st_uid, (unsigned int)geteuid());
		return why;
	}
	if ((st->st_mode & (S_IWGRP | S_IWOTH)) && (strict || !(st->st_mode & S_ISVTX))) {
		snprintf(why, len, "is writable by %s (mode %04o)",
			 st->st_mode & S_IWOTH ? "others" : "its group",
			 (unsigned int)(st->st_mode & 07777));
		return why;
	}
	return NULL;
}

/* Opens @path (absolute) as O_PATH, creating missing directories (0755); the last
 * @strict components may not be sticky-writable. The fd, or -1 with @err. Also the
 * parent's fd in *@parent (-1 for /). */
static int walk(const char *path, int strict, int *parent, char *err, size_t len)
{
	char p[PATH_MAX], why[128], *save, *c;
	int fd = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC), n = 0, k = 0;
	struct stat st;

	*parent = -1;
	if (snprintf(p, sizeof(p), "%s", path) >= (int)sizeof(p) || fd < 0) {
		snprintf(err, len, "%s: %s", path, fd < 0 ? strerror(errno) : "path too long");
		if (fd >= 0)
			close(fd);
		return -1;
	}
	for (c = p; *c; c++)
		n += *c == '/' && c[1] && c[1] != '/';
	for (c = strtok_r(p, "/", &save); c; c = strtok_r(NULL, "/", &save), k++) {
		int nfd;

		if (!strcmp(c, "..") || !strcmp(c, ".")) {
			snprintf(err, len, "%s: a '%s' in the path: give it plainly", path, c);
			goto fail;
		}
		nfd = openat(fd, c, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (nfd < 0 && errno == ENOENT) {
			if (mkdirat(fd, c, 0755) && errno != EEXIST) {
				snprintf(err, len, "cannot create %.*s: %s",
					 (int)(c - p + strlen(c)), path, strerror(errno));
				goto fail;
			}
			fchmodat(fd, c, 0755, 0); /* what the umask took: pods traverse it */
			nfd = openat(fd, c, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		}
		if (nfd < 0) {
			int e = errno;
			bool link =
				!fstatat(fd, c, &st, AT_SYMLINK_NOFOLLOW) && S_ISLNK(st.st_mode);

			snprintf(err, len, "%.*s %s", (int)(c - p + strlen(c)), path,
				 link ? "is a symbolic link: the agent follows none; remove it" :
				 e == ENOTDIR ? "is not a directory: remove it" :
						strerror(e));
			goto fail;
		}
		if (fstat(nfd, &st) || unsafe(&st, k >= n - strict, why, sizeof(why))) {
			snprintf(err, len, "%.*s %s: remove it (or make it root's, mode 0755)",
				 (int)(c - p + strlen(c)), path, why);
			close(nfd);
			goto fail;
		}
		if (*parent >= 0)
			close(*parent);
		*parent = fd;
		fd = nfd;
	}
	return fd;
fail:
	close(fd);
	if (*parent >= 0)
		close(*parent);
	*parent = -1;
	return -1;
}

/* What is at the socket's name: nothing (0), a stale socket file nobody listens on,
 * removed (0), or -1 with @err (a live one, or not a socket). */
static int clear_name(struct ag_sock *s, int type, char *err, size_t len)
{
	struct sockaddr_un sun = { .sun_family = AF_UNIX };
	struct stat st;
	int fd;

	if (fstatat(s->dirfd, s->name, &st, AT_SYMLINK_NOFOLLOW)) {
		if (errno == ENOENT)
			return 0;
		snprintf(err, len, "%s: %s", s->path, strerror(errno));
		return -1;
	}
	if (!S_ISSOCK(st.st_mode)) {
		snprintf(err, len, "%s exists and is not a socket: remove it", s->path);
		return -1;
	}
	memcpy(sun.sun_path, s->path, strlen(s->path) + 1);
	fd = socket(AF_UNIX, type | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd >= 0 && (!connect(fd, (struct sockaddr *)&sun, sizeof(sun)) || errno == EAGAIN)) {
		struct ucred cr = { 0 };
		socklen_t sl = sizeof(cr);

		getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cr, &sl);
		close(fd);
		fd = -1;
		/* A process killed with its accept still queued in io_uring leaves its socket
		 * listening until the kernel's deferred ring tear-down lets go: its pid no
		 * longer exists, and the socket is as stale as one nobody listens on. */
		if (cr.pid <= 0 || !kill(cr.pid, 0) || errno != ESRCH) {
			snprintf(err, len,
				 "%s: a live process (pid %d) serves this socket: stop it first",
				 s->path, (int)cr.pid);
			return -1;
		}
	}
	if (fd >= 0)
		close(fd);
	if (unlinkat(s->dirfd, s->name, 0) && errno != ENOENT) {
		snprintf(err, len, "%s: cannot remove the stale socket: %s", s->path,
			 strerror(errno));
		return -1;
	}
	return 0;
}

int ag_sock_listen(struct ag_sock *s, const char *dir, int strict, const char *name, int type,
		   mode_t mode, gid_t gid, int backlog, char *err, size_t len)
{
	struct sockaddr_un sun = { .sun_family = AF_UNIX };
	struct stat st;
	mode_t old;
	int fd, e;

	memset(s, 0, sizeof(*s));
	s->parentfd = -1;
	if (snprintf(s->path, sizeof(s->path), "%s/%s", dir, name) >= (int)sizeof(s->path) ||
	    snprintf(s->name, sizeof(s->name), "%s", name) >= (int)sizeof(s->name)) {
		snprintf(err, len, "%s/%s: longer than a Unix socket path may be", dir, name);
		return -1;
	}
	s->dirfd = walk(dir, strict, &s->parentfd, err, len);
	if (s->dirfd < 0)
		return -1;
	snprintf(s->dname, sizeof(s->dname), "%s", strrchr(dir, '/') + 1);
	if (clear_name(s, type, err, len))
		goto fail;
	memcpy(sun.sun_path, s->path, strlen(s->path) + 1);
	fd = socket(AF_UNIX, type | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		snprintf(err, len, "%s: socket: %s", s->path, strerror(errno));
		goto fail;
	}
	/* The mode from the start: never a moment with more than it allows. */
	old = umask(0777 & ~mode);
	e = bind(fd, (struct sockaddr *)&sun, sizeof(sun)) ? errno : 0;
	umask(old);
	if (e || fstatat(s->dirfd, s->name, &st, AT_SYMLINK_NOFOLLOW) || !S_ISSOCK(st.st_mode)) {
		snprintf(err, len, "cannot bind %s: %s", s->path, strerror(e ? e : EEXIST));
		close(fd);
		goto fail;
	}
	s->dev = st.st_dev;
	s->ino = st.st_ino;
	if (gid != (gid_t)-1 && fchownat(s->dirfd, s->name, (uid_t)-1, gid, AT_SYMLINK_NOFOLLOW)) {
		snprintf(
			err, len,
			"%s: cannot give it group %u: %s: the agent needs that group among its own (supplementalGroups, SupplementaryGroups=) or CAP_CHOWN",
			s->path, (unsigned int)gid, strerror(errno));
		close(fd);
		ag_sock_close(s, false);
		return -1;
	}
	if (listen(fd, backlog)) {
		snprintf(err, len, "%s: listen: %s", s->path, strerror(errno));
		close(fd);
		ag_sock_close(s, false);
		return -1;
	}
	return fd;
fail:
	close(s->dirfd);
	if (s->parentfd >= 0)
		close(s->parentfd);
	s->dirfd = s->parentfd = -1;
	return -1;
}

bool ag_sock_intact(const struct ag_sock *s)
{
	struct stat st;

	return s->dirfd >= 0 && !fstatat(s->dirfd, s->name, &st, AT_SYMLINK_NOFOLLOW) &&
	       st.st_dev == s->dev && st.st_ino == s->ino;
}

bool ag_sock_close(struct ag_sock *s, bool rmdir)
{
	bool ours = ag_sock_intact(s);

	if (s->dirfd < 0)
		return true;
	if (ours)
		unlinkat(s->dirfd, s->name, 0);
	/* Only when empty: whatever else is there is not ours to remove. */
	if (rmdir && s->parentfd >= 0)
		unlinkat(s->parentfd, s->dname, AT_REMOVEDIR);
	close(s->dirfd);
	if (s->parentfd >= 0)
		close(s->parentfd);
	s->dirfd = s->parentfd = -1;
	return ours;
}
