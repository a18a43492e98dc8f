// SPDX-License-Identifier: BSD-3-Clause
/* The client side of a JSON-lines control socket (jclient.h). */
#include <dirent.h>
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/socket.h>
#include <sys/un.h>

#include "clock.h"
#include "jclient.h"

const char *ut_run_dir(void)
{
	const char *d = getenv("XPILE_RUNDIR");

	return d && *d ? d : "/run/xpile";
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(a, b);
}

int ut_jl_list(const char *dir, char paths[][256], int max)
{
	DIR *d = opendir(dir ? dir : ut_run_dir());
	struct dirent *de;
	int n = 0;

	if (!d)
		return 0;
	while ((de = readdir(d)) && n < max) {
		size_t l = strlen(de->d_name);

		if (l > 5 && !strcmp(de->d_name + l - 5, ".sock") && l < 200)
			snprintf(paths[n++], 256, "%s/%s", dir ? dir : ut_run_dir(), de->d_name);
	}
	closedir(d);
	qsort(paths, (size_t)n, 256, cmp_str);
	return n;
}

json_t *ut_jl_call(const char *path, json_t *req, int timeout_ms, char *why, size_t len)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	size_t cap = 1 << 16, got = 0;
	char *buf = NULL, *s = NULL, *nl = NULL;
	__u64 end = ut_now_ns() + (__u64)timeout_ms * 1000000ull;
	json_t *rep = NULL;
	json_error_t je;
	int fd = -1;

	if (strlen(path) >= sizeof(sa.sun_path)) {
		snprintf(why, len, "%s: path too long", path);
		return NULL;
	}
	memcpy(sa.sun_path, path, strlen(path) + 1);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0 || connect(fd, (struct sockaddr *)&sa, sizeof(sa))) {
		snprintf(why, len, "%s: %s%s", path, strerror(errno),
			 errno == ENOENT || errno == ECONNREFUSED ? " (is it running?)" :
			 errno == EACCES ? " (run as root or as the engine's user)" :
					   "");
		goto out;
	}
	s = json_dumps(req, JSON_COMPACT);
	buf = malloc(cap + 1);
	if (!s || !buf) {
		snprintf(why, len, "out of memory");
		goto out;
	}
	if (send(fd, s, strlen(s), MSG_NOSIGNAL) != (ssize_t)strlen(s) ||
	    send(fd, "\n", 1, MSG_NOSIGNAL) != 1) {
		snprintf(why, len, "%s: send: %s", path, strerror(errno));
		goto out;
	}
	while (!nl) {
		struct pollfd p = { .fd = fd, .events = POLLIN };
		__u64 now = ut_now_ns();
		ssize_t r;

		if (now >= end || poll(&p, 1, (int)((end - now) / 1000000ull) + 1) <= 0) {
			snprintf(why, len, "%s: no reply within %d ms", path, timeout_ms);
			goto out;
		}
		if (got == cap) {
			char *nb = cap < (64u << 20) ? realloc(buf, cap * 4 + 1) : NULL;

			if (!nb) {
				snprintf(why, len, "%s: reply too long", path);
				goto out;
			}
			buf = nb;
			cap *= 4;
		}
		r = recv(fd, buf + got, cap - got, 0);
		if (r <= 0) {
			snprintf(why, len, "%s: the engine closed the connection", path);
			goto out;
		}
		got += (size_t)r;
		buf[got] = 0;
		nl = memchr(buf, '\n', got);
	}
	*nl = 0;
	rep = json_loads(buf, 0, &je);
	if (!rep)
		snprintf(why, len, "%s: bad reply: %s", path, je.text);
out:
	free(s);
	free(buf);
	if (fd >= 0)
		close(fd);
	return rep;
}
