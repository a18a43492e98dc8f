// SPDX-License-Identifier: BSD-3-Clause
/*
 * Records of the processes serving an interface's queues (xpile/users.h). The kernel
 * offers no way to ask who has an AF_XDP socket on a queue without
 * CONFIG_XDP_SOCKETS_DIAG, so each engine says so itself, and a record outlives a
 * killed engine only until someone looks: a dead pid (or a pid reused by another
 * process, told apart by its start time) makes it stale.
 */
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "log_internal.h"
#include "steer_internal.h"
#include "xpile/users.h"
#include "xpile/wire.h"

static int users_dir(const char *ifname, char *buf, size_t len)
{
	char *slash;
	int err = xp_wire_plan_path(ifname, buf, len);

	if (err)
		return err;
	slash = strrchr(buf, '/');
	if (slash)
		*slash = 0;
	return 0;
}

/* Field 22 of /proc/PID/stat, and the command name; 0 when the process is gone. */
static unsigned long long start_time(int pid, char *comm, size_t len)
{
	char path[64], buf[1024], *p, *q;
	unsigned long long t = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/stat", pid);
	f = fopen(path, "re");
	if (!f)
		return 0;
	if (fgets(buf, sizeof(buf), f) && (p = strchr(buf, '(')) && (q = strrchr(buf, ')'))) {
		if (comm)
			snprintf(comm, len, "%.*s", (int)(q - p - 1), p + 1);
		if (sscanf(q + 2,
			   "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %*u %*u %*d %*d "
			   "%*d %*d %*d %*d %llu",
			   &t) != 1)
			t = 0;
	}
	(void)fclose(f); /* read only: nothing to lose */
	return t;
}

int xp_users_register(const char *ifname, __u32 prog_id, const __u32 *queues, __u32 nq)
{
	char dir[PATH_MAX], path[PATH_MAX + 32], tmp[PATH_MAX + 40];
	FILE *f;
	int err = users_dir(ifname, dir, sizeof(dir));

	if (err)
		return err;
	err = xp_mkdir_p(dir);
	if (err)
		return err;
	snprintf(path, sizeof(path), "%s/engine.%d", dir, (int)getpid());
	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	f = fopen(tmp, "we");
	if (!f)
		return -errno;
	fprintf(f, "pid %d\nstart %llu\nprog %u\nqueues", (int)getpid(),
		start_time(getpid(), NULL, 0), prog_id);
	for (__u32 i = 0; i < nq && i < XP_USER_MAX_QUEUES; i++)
		fprintf(f, " %u", queues[i]);
	fputc('\n', f);
	if (fclose(f) || rename(tmp, path)) {
		err = -errno;
		unlink(tmp);
		return err;
	}
	return 0;
}

void xp_users_unregister(const char *ifname)
{
	char dir[PATH_MAX], path[PATH_MAX + 32];

	if (users_dir(ifname, dir, sizeof(dir)))
		return;
	snprintf(path, sizeof(path), "%s/engine.%d", dir, (int)getpid());
	unlink(path);
	/* Empty directories go, up to and with /run/xpile (as xp_wire_plan_remove()):
	 * rmdir fails where a plan or another engine's record remains. */
	snprintf(path, sizeof(path), "%s", xp_run_dir());
	if (strrchr(path, '/') && strrchr(path, '/') != path)
		*strrchr(path, '/') = 0;
	xp_rmdir_up(dir, path);
}

static bool read_user(const char *path, struct xp_user *u)
{
	unsigned long long start = 0, now;
	char line[512], *p, *end;
	FILE *f = fopen(path, "re");

	if (!f)
		return false;
	memset(u, 0, sizeof(*u));
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "pid %d", &u->pid) == 1 ||
		    sscanf(line, "start %llu", &start) == 1 ||
		    sscanf(line, "prog %u", &u->prog_id) == 1)
			continue;
		if (strncmp(line, "queues", 6))
			continue;
		for (p = line + 6; u->nqueues < XP_USER_MAX_QUEUES; p = end) {
			unsigned long v = strtoul(p, &end, 10);

			if (end == p)
				break;
			u->queues[u->nqueues++] = (__u32)v;
		}
	}
	(void)fclose(f); /* read only: nothing to lose */
	now = u->pid > 0 ? start_time(u->pid, u->comm, sizeof(u->comm)) : 0;
	return now && now == start;
}

int xp_users_list(const char *ifname, struct xp_user *out, int max)
{
	char dir[PATH_MAX], path[PATH_MAX + 300];
	struct dirent *de;
	struct xp_user u;
	int n = 0;
	DIR *d;

	if (users_dir(ifname, dir, sizeof(dir)))
		return 0;
	d = opendir(dir);
	if (!d)
		return 0;
	while ((de = readdir(d))) {
		int pid;
		char extra;

		if (sscanf(de->d_name, "engine.%d%c", &pid, &extra) != 1)
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
		if (!read_user(path, &u) || u.pid != pid) {
			unlink(path); /* stale: its engine is gone */
			continue;
		}
		if (pid == (int)getpid())
			continue;
		if (n < max)
			out[n] = u;
		n++;
	}
	closedir(d);
	return n < max ? n : max;
}

void xp_users_format(const struct xp_user *u, int n, char *buf, size_t len)
{
	size_t off;

	if (n <= 0) {
		snprintf(buf, len, "no process");
		return;
	}
	off = snprintf(buf, len, "pid %d (%s, queue%s", u->pid, u->comm[0] ? u->comm : "?",
		       u->nqueues == 1 ? "" : "s");
	for (__u32 i = 0; i < u->nqueues && off < len; i++)
		off += snprintf(buf + off, len - off, "%s%u", i ? "," : " ", u->queues[i]);
	if (off < len)
		off += snprintf(buf + off, len - off, ")");
	if (n > 1 && off < len)
		snprintf(buf + off, len - off, " and %d more", n - 1);
}
