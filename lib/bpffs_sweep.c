// SPDX-License-Identifier: BSD-3-Clause
/*
 * Removing what xpile keeps per network namespace (<bpffs>/xpile/ns<inode>/ and
 * /run/xpile/ns<inode>/) once the namespace is gone: a namespace deleted under a killed
 * engine or loader leaves its pins, plans and records behind, and nothing else ever
 * removes them.
 *
 * A namespace exists while something holds it: a task in it, an open file of it, a bind
 * mount of it (in any mount namespace, /run/netns among them). The kernel lists none of
 * them by namespace, so all of /proc is read: only where every process is visible (the
 * initial PID namespace, told by the kernel threads in it) and every task's namespace can
 * be told, through its ns/net link or, for a task closed to us, by its /proc/PID/net
 * matching one of a task we can read. A process closed to us can still hold a namespace
 * by an fd or a mount we cannot see; a directory whose namespace we cannot find is moved
 * aside first and looked for again before it is removed, so a namespace that appears in
 * between (a reused inode) gets its directory back, never over one it made meanwhile; and
 * a directory that changed in the last seconds is left, as someone may be pinning there.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/stat.h>

#include "log_internal.h"
#include "steer_internal.h"
#include "xpile/bpffs.h"

struct inos {
	__u64 *v;
	size_t n, cap;
};

static bool inos_has(const struct inos *s, __u64 v)
{
	for (size_t i = 0; i < s->n; i++)
		if (s->v[i] == v)
			return true;
	return false;
}

/* Adds @v once: 1 when it is new, 0 when it was there, -ENOMEM. */
static int inos_add(struct inos *s, __u64 v)
{
	__u64 *nv;

	if (inos_has(s, v))
		return 0;
	if (s->n == s->cap) {
		nv = realloc(s->v, (s->cap ? s->cap * 2 : 16) * sizeof(*nv));
		if (!nv)
			return -ENOMEM;
		s->v = nv;
		s->cap = s->cap ? s->cap * 2 : 16;
	}
	s->v[s->n++] = v;
	return 1;
}

/* "net:[4026532177]" -> 4026532177 */
static bool parse_net(const char *s, __u64 *ino)
{
	unsigned long long v;
	char end;

	if (sscanf(s, "net:[%llu%c", &v, &end) != 2 || end != ']')
		return false;
	*ino = v;
	return true;
}

/* A pid, a tid or an fd number (at most 10 digits, so paths made of them fit). */
static bool is_num(const char *s)
{
	if (!*s || strlen(s) > 10)
		return false;
	for (; *s; s++)
		if (*s < '0' || *s > '9')
			return false;
	return true;
}

static bool link_net(const char *path, __u64 *ino, int *err)
{
	char buf[64];
	ssize_t n = readlink(path, buf, sizeof(buf) - 1);

	if (n < 0) {
		*err = errno;
		return false;
	}
	buf[n] = 0;
	*err = 0;
	return parse_net(buf, ino);
}

/* What the task scan learnt: the namespaces of the tasks we can read (and one such
 * task for each), and the /proc/PID/net identities of the tasks closed to us. */
struct tasks {
	struct inos live, closed, rep_ns;
	char (*rep)[48]; /* "PID/task/TID" of a task in rep_ns.v[i] */
	size_t rep_cap;
};

static int rep_add(struct tasks *t, __u64 ns, const char *task)
{
	int r = inos_add(&t->rep_ns, ns);

	if (r <= 0)
		return r;
	if (t->rep_ns.n > t->rep_cap) {
		void *nr = realloc(t->rep, t->rep_ns.cap * sizeof(*t->rep));

		if (!nr)
			return -ENOMEM;
		t->rep = nr;
		t->rep_cap = t->rep_ns.cap;
	}
	snprintf(t->rep[t->rep_ns.n - 1], sizeof(t->rep[0]), "%s", task);
	return 0;
}

static int scan_task(struct tasks *t, const char *pid, const char *tid)
{
	char path[96], task[48];
	struct stat st;
	__u64 ino;
	int err;

	snprintf(task, sizeof(task), "%s/task/%s", pid, tid);
	snprintf(path, sizeof(path), "/proc/%s/ns/net", task);
	if (link_net(path, &ino, &err)) {
		err = inos_add(&t->live, ino);
		return err < 0 ? err : rep_add(t, ino, task);
	}
	if (err == ENOENT || err == ESRCH)
		return 0; /* gone, or a zombie: it holds no namespace */
	if (err != EACCES && err != EPERM)
		return -(err ?: EINVAL);
	snprintf(path, sizeof(path), "/proc/%s/net/dev", task);
	if (stat(path, &st))
		return errno == ENOENT || errno == ESRCH ? 0 : -errno;
	err = inos_add(&t->closed, st.st_ino);
	return err < 0 ? err : 0;
}

static int scan_tasks(struct tasks *t)
{
	char path[64];
	struct dirent *pe, *te;
	DIR *pd = opendir("/proc"), *td;
	int err = 0;

	if (!pd)
		return -errno;
	while (!err && (pe = readdir(pd))) {
		if (!is_num(pe->d_name))
			continue;
		snprintf(path, sizeof(path), "/proc/%s/task", pe->d_name);
		td = opendir(path);
		if (!td)
			continue; /* gone */
		while (!err && (te = readdir(td)))
			if (is_num(te->d_name))
				err = scan_task(t, pe->d_name, te->d_name);
		closedir(td);
	}
	closedir(pd);
	return err;
}

/* Whether every task closed to us is in a namespace of a task we can read: /proc/PID/net
 * shows the task's namespace, and its entries' inodes are that namespace's own. */
static bool closed_known(const struct tasks *t)
{
	struct inos seen = { 0 };
	char path[96];
	struct stat st;
	bool ok = true;
	__u64 again;
	int err;

	for (size_t i = 0; ok && t->closed.n && i < t->rep_ns.n; i++) {
		snprintf(path, sizeof(path), "/proc/%s/net/dev", t->rep[i]);
		if (stat(path, &st))
			continue;
		snprintf(path, sizeof(path), "/proc/%s/ns/net", t->rep[i]);
		/* Still the namespace it was in when we read it: the pair is one task's. */
		if (link_net(path, &again, &err) && again == t->rep_ns.v[i])
			ok = inos_add(&seen, st.st_ino) >= 0;
	}
	for (size_t i = 0; ok && i < t->closed.n; i++)
		ok = inos_has(&seen, t->closed.v[i]);
	free(seen.v);
	return ok;
}

/* Namespaces bind-mounted in the mount namespace of process @pid (nsfs, root net:[N]). */
static int scan_mounts(const char *pid, struct inos *live)
{
	char path[64], line[4096], root[256], type[64];
	FILE *f;
	int err = 0;
	__u64 ino;

	if (snprintf(path, sizeof(path), "/proc/%s/mountinfo", pid) >= (int)sizeof(path))
		return 0;
	f = fopen(path, "re");
	if (!f)
		return 0;
	while (!err && fgets(line, sizeof(line), f)) {
		char *dash = strstr(line, " - ");

		if (!dash || sscanf(line, "%*s %*s %*s %255s", root) != 1 ||
		    sscanf(dash + 3, "%63s", type) != 1)
			continue;
		if (!strcmp(type, "nsfs") && parse_net(root, &ino))
			err = inos_add(live, ino) < 0 ? -ENOMEM : 0;
	}
	(void)fclose(f); /* read only: nothing to lose */
	return err;
}

/* Namespaces open in process @pid: an fd's link names the path it was opened by
 * (/run/netns/NAME), so the file itself is asked, by its nsfs device and inode. */
static int scan_fds(const char *pid, dev_t nsfs, struct inos *live)
{
	char path[PATH_MAX];
	struct dirent *de;
	struct stat st;
	DIR *d;
	int err = 0;

	snprintf(path, sizeof(path), "/proc/%s/fd", pid);
	d = opendir(path);
	if (!d)
		return 0;
	while (!err && (de = readdir(d))) {
		if (!is_num(de->d_name))
			continue;
		snprintf(path, sizeof(path), "/proc/%s/fd/%s", pid, de->d_name);
		if (!stat(path, &st) && st.st_dev == nsfs)
			err = inos_add(live, st.st_ino) < 0 ? -ENOMEM : 0;
	}
	closedir(d);
	return err;
}

static bool all_in(const struct inos *want, const struct inos *live)
{
	for (size_t i = 0; i < want->n; i++)
		if (!inos_has(live, want->v[i]))
			return false;
	return true;
}

/* Fills @live with every namespace something holds, as far as needed to tell about
 * @want: open files and mounts are read only while some of @want is not found yet.
 * -EAGAIN when the host cannot be seen whole from here. */
static int scan_live(struct inos *live, const struct inos *want)
{
	struct tasks t = { 0 };
	struct inos mnts = { 0 };
	struct dirent *de;
	char path[64];
	struct stat st;
	dev_t nsfs;
	int err;
	DIR *d;

	if (stat("/proc/self/ns/net", &st))
		return -errno;
	nsfs = st.st_dev;
	err = scan_tasks(&t);
	if (!err && !closed_known(&t))
		err = -EAGAIN;
	*live = t.live;
	t.live.v = NULL;
	free(t.closed.v);
	free(t.rep_ns.v);
	free(t.rep);
	if (err || all_in(want, live))
		return err;
	d = opendir("/proc");
	if (!d)
		return -errno;
	while (!err && (de = readdir(d)) && !all_in(want, live)) {
		if (!is_num(de->d_name))
			continue;
		err = scan_fds(de->d_name, nsfs, live);
		snprintf(path, sizeof(path), "/proc/%s/ns/mnt", de->d_name);
		if (err || stat(path, &st))
			continue;
		if (inos_add(&mnts, st.st_ino) > 0)
			err = scan_mounts(de->d_name, live);
	}
	closedir(d);
	free(mnts.v);
	return err;
}

struct cand {
	char path[PATH_MAX], moved[PATH_MAX + 32];
	__u64 ino;
};

#define SWEEP_QUIET_S 10

/* Whether @path (a directory) or a directory in it (an interface's) changed within
 * SWEEP_QUIET_S: a pin, a plan or a directory made there moves its parent's mtime. */
static bool recently_changed(const char *path)
{
	char sub[PATH_MAX + NAME_MAX + 2];
	struct timespec now;
	struct dirent *de;
	struct stat st;
	bool recent;
	DIR *d;

	clock_gettime(CLOCK_REALTIME, &now);
	if (stat(path, &st))
		return false;
	recent = now.tv_sec - st.st_mtim.tv_sec < SWEEP_QUIET_S;
	d = opendir(path);
	while (!recent && d && (de = readdir(d))) {
		if (de->d_name[0] == '.')
			continue;
		snprintf(sub, sizeof(sub), "%s/%s", path, de->d_name);
		recent = !stat(sub, &st) && S_ISDIR(st.st_mode) &&
			 now.tv_sec - st.st_mtim.tv_sec < SWEEP_QUIET_S;
	}
	if (d)
		closedir(d);
	return recent;
}

/* Adds the ns<N> directories under @dir. */
static int list_ns_dirs(const char *dir, struct cand **c, size_t *n)
{
	struct dirent *de;
	DIR *d = opendir(dir);
	int err = 0;

	if (!d)
		return 0;
	while (!err && (de = readdir(d))) {
		unsigned long long v;
		struct cand *nc;
		int end = 0;

		/* ns<digits> only: not a directory moved aside (ns<N>-sweep<pid>) */
		if (sscanf(de->d_name, "ns%llu%n", &v, &end) != 1 || de->d_name[end] ||
		    de->d_name[2] < '0' || de->d_name[2] > '9')
			continue;
		nc = realloc(*c, (*n + 1) * sizeof(**c));
		if (!nc) {
			err = -ENOMEM;
			break;
		}
		*c = nc;
		nc += (*n)++;
		nc->ino = v;
		nc->moved[0] = 0;
		if (snprintf(nc->path, sizeof(nc->path), "%s/%s", dir, de->d_name) >=
		    (int)sizeof(nc->path))
			(*n)--;
	}
	closedir(d);
	return err;
}

/* @path as the host names it, without the /proc/PID/root it was reached through. */
static const char *host_path(const char *path)
{
	int skip = 0;

	if (sscanf(path, "/proc/%*d/root%n", &skip) >= 0 && skip > 0 && path[skip] == '/')
		return path + skip;
	return path;
}

static int rm_one(const char *path, const struct stat *st, int flag, struct FTW *f)
{
	(void)st;
	(void)flag;
	(void)f;
	if (remove(path) && errno != ENOENT)
		xp_warn("cannot remove %s: %s\n", path, strerror(errno));
	return 0;
}

int xp_netns_sweep(void)
{
	char bpffs[PATH_MAX], dirs[2][PATH_MAX + 8], why[512];
	struct inos live = { 0 }, want = { 0 };
	struct cand *c = NULL;
	size_t n = 0, nd = 0;
	int err, removed = 0;

	if (!xp_pid_is_kthread(2)) {
		xp_dbg("sweep: not every process is visible here (no kernel threads in /proc); "
		       "left to a process of the host\n");
		return 0;
	}
	if (!xp_bpffs_find(bpffs, sizeof(bpffs), false, why, sizeof(why)))
		snprintf(dirs[nd++], sizeof(dirs[0]), "%s/xpile", bpffs);
	snprintf(dirs[nd++], sizeof(dirs[0]), "%s", xp_run_dir());
	err = 0;
	for (size_t i = 0; !err && i < nd; i++)
		err = list_ns_dirs(dirs[i], &c, &n);
	for (size_t i = 0; !err && i < n; i++)
		err = inos_add(&want, c[i].ino) < 0 ? -ENOMEM : 0;
	if (err || !n)
		goto out;
	err = scan_live(&live, &want);
	if (err)
		goto out;
	/* Aside first (no dot: bpffs refuses dots in names), then looked for again: a
	 * namespace that took a dead one's inode in the meantime gets its directory back.
	 * A directory changed in the last SWEEP_QUIET_S is left for a later sweep: a
	 * process of a namespace born with that inode since the scan may be pinning in it. */
	for (size_t i = 0; i < n; i++) {
		if (inos_has(&live, c[i].ino) || recently_changed(c[i].path))
			continue;
		snprintf(c[i].moved, sizeof(c[i].moved), "%.*s-sweep%d", PATH_MAX, c[i].path,
			 (int)getpid());
		if (rename(c[i].path, c[i].moved))
			c[i].moved[0] = 0;
	}
	free(live.v);
	live.v = NULL;
	live.n = live.cap = 0;
	err = scan_live(&live, &want);
	for (size_t i = 0; i < n; i++) {
		if (!c[i].moved[0])
			continue;
		if (err || inos_has(&live, c[i].ino)) {
			/* Never over a directory made meanwhile: that one is the live user's,
			 * and what was moved aside is then a dead namespace's. */
			if (!renameat2(AT_FDCWD, c[i].moved, AT_FDCWD, c[i].path, RENAME_NOREPLACE))
				continue;
			if (errno != EEXIST) {
				xp_warn("sweep: cannot put %s back: %s\n", c[i].path,
					strerror(errno));
				continue;
			}
		}
		(void)nftw(c[i].moved, rm_one, 8, FTW_DEPTH | FTW_PHYS | FTW_MOUNT);
		xp_info("removed %s: its network namespace no longer exists\n",
			host_path(c[i].path));
		removed++;
	}
out:
	if (err == -EAGAIN)
		xp_dbg("sweep: a process's network namespace cannot be told from here; left\n");
	free(live.v);
	free(want.v);
	free(c);
	return err == -EAGAIN ? 0 : err ?: removed;
}
