// SPDX-License-Identifier: BSD-3-Clause
/*
 * Finding a bpffs that outlives `ip netns exec`, keying pins by network namespace, and
 * finding BPF objects. `ip netns exec` runs each command in a fresh mount namespace
 * with a fresh /sys, so a bpffs mounted or pinned there vanishes with the command;
 * the host's one stays reachable as /proc/1/root/sys/fs/bpf.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/wait.h>
#include <linux/magic.h>

#include "log_internal.h"
#include "steer_internal.h"
#include "xpile/steer.h"

static bool is_bpffs(const char *path)
{
	struct statfs st;

	return !statfs(path, &st) && st.f_type == BPF_FS_MAGIC;
}

static int ns_id(pid_t pid, const char *kind, char *buf, size_t len)
{
	char path[64];
	ssize_t n;

	if (pid)
		snprintf(path, sizeof(path), "/proc/%d/ns/%s", (int)pid, kind);
	else
		snprintf(path, sizeof(path), "/proc/self/ns/%s", kind);
	n = readlink(path, buf, len - 1);
	if (n < 0)
		return -errno;
	buf[n] = 0;
	return 0;
}

static pid_t parent_of(pid_t pid);

/* The process whose namespaces count as the host's: PID 1 when we may read its
 * namespace links, else our highest ancestor we may read (PID 1 can be closed to us
 * even as root). 0 when there is none. */
static pid_t ref_pid(void)
{
	char id[64];
	pid_t best = 0;

	if (!ns_id(1, "mnt", id, sizeof(id)))
		return 1;
	for (pid_t p = getppid(); p > 1; p = parent_of(p))
		if (!ns_id(p, "mnt", id, sizeof(id)))
			best = p;
	return best;
}

/* Whether we share the host's namespace of @kind (unknown counts as yes). */
static bool init_ns(const char *kind)
{
	char a[64], b[64];
	pid_t ref = ref_pid();

	if (!ref || ns_id(0, kind, a, sizeof(a)) || ns_id(ref, kind, b, sizeof(b)))
		return true;
	return !strcmp(a, b);
}

static pid_t parent_of(pid_t pid)
{
	char path[64], buf[512], *p;
	int ppid = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	f = fopen(path, "re");
	if (!f)
		return 0;
	if (!fgets(buf, sizeof(buf), f) || !(p = strrchr(buf, ')')) ||
	    sscanf(p + 2, "%*c %d", &ppid) != 1)
		ppid = 0;
	(void)fclose(f); /* read only: nothing to lose */
	return ppid;
}

/* A process in the host's mount namespace whose root we may look through: the closest
 * one among PID 1 and our ancestors (the shell that ran `ip netns exec`). */
static pid_t host_mnt_pid(bool need_root)
{
	char want[64], have[64], path[64];
	pid_t ref = ref_pid();

	if (!ref || ns_id(ref, "mnt", want, sizeof(want)))
		return 0;
	for (pid_t p = getppid();; p = parent_of(p)) {
		if (p <= 1)
			p = 1;
		if (!ns_id(p, "mnt", have, sizeof(have)) && !strcmp(have, want)) {
			snprintf(path, sizeof(path), "/proc/%d/root/", (int)p);
			if (!need_root || !access(path, X_OK))
				return p;
		}
		if (p == 1)
			return 0;
	}
}

/* Mount a bpffs on /sys/fs/bpf of PID 1's mount namespace, from a short-lived child:
 * setns() to a mount namespace needs a single-threaded caller. */
static int mount_host_bpffs(void)
{
	char ns[64];
	pid_t pid, hp;
	int st;

	if (init_ns("mnt"))
		return mount("bpf", "/sys/fs/bpf", "bpf", 0, "mode=0700") ? -errno : 0;
	hp = host_mnt_pid(false);
	if (!hp)
		return -ENOENT;
	snprintf(ns, sizeof(ns), "/proc/%d/ns/mnt", (int)hp);
	pid = fork();
	if (pid < 0)
		return -errno;
	if (!pid) {
		int fd = open(ns, O_RDONLY | O_CLOEXEC);

		if (fd < 0 || setns(fd, CLONE_NEWNS) || chdir("/"))
			_exit(1);
		_exit(mount("bpf", "/sys/fs/bpf", "bpf", 0, "mode=0700") ? 2 : 0);
	}
	if (waitpid(pid, &st, 0) < 0)
		return -errno;
	return WIFEXITED(st) && !WEXITSTATUS(st) ? 0 : -EPERM;
}

static int find_root(char *buf, size_t len)
{
	pid_t p;

	if (init_ns("mnt")) {
		snprintf(buf, len, "/sys/fs/bpf");
		return is_bpffs(buf) ? 0 : -ENOENT;
	}
	/* Inside `ip netns exec` /sys/fs/bpf is at best a private, short-lived mount. */
	p = host_mnt_pid(true);
	if (!p)
		return -ENOENT;
	snprintf(buf, len, "/proc/%d/root/sys/fs/bpf", (int)p);
	return is_bpffs(buf) ? 0 : -ENOENT;
}

int xp_bpffs_root(char *buf, size_t len, bool mount_if_missing)
{
	const char *env = getenv("XPILE_BPFFS");
	int err;

	if (env && *env) {
		if (!is_bpffs(env)) {
			xp_err("XPILE_BPFFS=%s is not a bpffs mount; unset it or mount one there\n",
			       env);
			return -ENOTDIR;
		}
		snprintf(buf, len, "%s", env);
		return 0;
	}
	if (!find_root(buf, len))
		return 0;
	if (!mount_if_missing) {
		xp_err("no bpffs mounted on the host's /sys/fs/bpf; mount one: "
		       "mount -t bpf bpf /sys/fs/bpf\n");
		return -ENOENT;
	}
	err = mount_host_bpffs();
	if (!err)
		err = find_root(buf, len);
	if (err) {
		xp_err("no bpffs on the host's /sys/fs/bpf and mounting one failed (%s); as root "
		       "in the initial namespace: mount -t bpf bpf /sys/fs/bpf\n",
		       strerror(-err));
		return err;
	}
	xp_info("mounted bpffs on the host's /sys/fs/bpf\n");
	return 0;
}

int xp_netns_key(char *buf, size_t len)
{
	struct stat st;

	if (init_ns("net")) {
		snprintf(buf, len, "%s", "");
		return 0;
	}
	if (stat("/proc/self/ns/net", &st))
		return -errno;
	snprintf(buf, len, "ns%lu/", (unsigned long)st.st_ino);
	return 0;
}

int xp_steer_pin_dir(const char *ifname, char *buf, size_t len)
{
	char root[PATH_MAX], key[64];
	int err;

	err = xp_bpffs_root(root, sizeof(root), true);
	if (err)
		return err;
	err = xp_netns_key(key, sizeof(key));
	if (err)
		return err;
	if ((size_t)snprintf(buf, len, "%s/xpile/%s%s", root, key, ifname) >= len)
		return -ENAMETOOLONG;
	return 0;
}

int xp_pin_dir_check(const char *pin, char *root, size_t len)
{
	char tmp[PATH_MAX], *sl;
	struct stat st;
	bool exists;

	if (!*pin) {
		xp_err("--pin-path is empty; give a directory on a bpffs, e.g. "
		       "/sys/fs/bpf/xpile/IFACE\n");
		return -EINVAL;
	}
	if (snprintf(tmp, sizeof(tmp), "%s", pin) >= (int)sizeof(tmp))
		return -ENAMETOOLONG;
	exists = !stat(tmp, &st);
	/* The closest existing ancestor decides: nothing is created outside a bpffs. */
	while (stat(tmp, &st)) {
		sl = strrchr(tmp, '/');
		if (!sl || sl == tmp) {
			snprintf(tmp, sizeof(tmp), "%s", sl == tmp ? "/" : ".");
			break;
		}
		*sl = 0;
	}
	if (!is_bpffs(tmp)) {
		xp_err("pin path %s: %s is not on a bpffs, and pins live only in one; use a "
		       "directory under /sys/fs/bpf (or mount one: mount -t bpf bpf DIR)\n",
		       pin, tmp);
		return -ENOTDIR;
	}
	/* Cleanup removes what we create, up to the directory that was there. */
	if (exists) {
		snprintf(tmp, sizeof(tmp), "%s", pin);
		sl = strrchr(tmp, '/');
		if (sl)
			*sl = 0;
	}
	snprintf(root, len, "%s", tmp);
	return 0;
}

int xp_mkdir_p(const char *path)
{
	char tmp[PATH_MAX];

	if (snprintf(tmp, sizeof(tmp), "%s", path) >= (int)sizeof(tmp))
		return -ENAMETOOLONG;
	for (char *p = tmp + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = 0;
		if (mkdir(tmp, 0700) && errno != EEXIST)
			return -errno;
		*p = '/';
	}
	if (mkdir(tmp, 0700) && errno != EEXIST)
		return -errno;
	return 0;
}

/* Remove @path and its now-empty parents up to (not including) @stop. */
void xp_rmdir_up(const char *path, const char *stop)
{
	char tmp[PATH_MAX];
	size_t sl = strlen(stop);

	snprintf(tmp, sizeof(tmp), "%s", path);
	while (strlen(tmp) > sl && !strncmp(tmp, stop, sl)) {
		char *slash;

		if (rmdir(tmp))
			break;
		slash = strrchr(tmp, '/');
		if (!slash)
			break;
		*slash = 0;
	}
}

int xp_bpf_obj_path(const char *name, char *buf, size_t len)
{
	const char *env = getenv("XPILE_BPF_DIR");
	char exe[PATH_MAX];
	ssize_t n;

	if (env && *env) {
		snprintf(buf, len, "%s/%s", env, name);
		if (!access(buf, R_OK))
			return 0;
	}
	n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (n > 0) {
		char *slash;

		exe[n] = 0;
		slash = strrchr(exe, '/');
		if (slash) {
			/* build/ (binaries), build/tests/<kind>/ (suites), and an installed
			 * PREFIX/bin next to PREFIX/lib/xpile, whatever PREFIX was at build time */
			static const char *const rel[] = { "bpf", "../../bpf", "../lib/xpile/bpf" };

			*slash = 0;
			for (size_t i = 0; i < sizeof(rel) / sizeof(rel[0]); i++) {
				snprintf(buf, len, "%s/%s/%s", exe, rel[i], name);
				if (!access(buf, R_OK))
					return 0;
			}
		}
	}
	snprintf(buf, len, "%s/bpf/%s", XPILE_DATADIR, name);
	if (!access(buf, R_OK))
		return 0;
	xp_err("BPF object %s not found (looked in $XPILE_BPF_DIR, next to the binary, %s/bpf); "
	       "build it with make or set XPILE_BPF_DIR\n",
	       name, XPILE_DATADIR);
	return -ENOENT;
}
