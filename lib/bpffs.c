// SPDX-License-Identifier: BSD-3-Clause
/*
 * Finding the host's bpffs, keying pins by network namespace, and finding BPF objects.
 *
 * Where the pins live must not depend on how a process was started (a shell, `ip netns
 * exec`, setsid, a supervisor, a container whose PID 1 is the agent itself), so the rule
 * looks at no ancestor, and never mounts a bpffs that only this process would see. The
 * host's bpffs is, in this order:
 *   1. --bpffs DIR / $XPILE_BPFFS, as given (it must be a bpffs);
 *   2. /sys/fs/bpf as the host sees it: through /proc/1/root, the root of PID 1 of our
 *      PID namespace (in a container, the container's own view, where the DaemonSet's
 *      hostPath puts the host's bpffs); where PID 1 is closed to us, through /proc/2/root
 *      of kthreadd, the kernel's own thread, which lives in the initial mount namespace.
 *      `ip netns exec` remounts /sys for its command only, so the view through them
 *      still holds the host's bpffs; `unshare --mount` copies the mount tree, and its
 *      /sys/fs/bpf stays the host's superblock unless /sys is remounted there too;
 *   3. where neither can be read (no CAP_SYS_PTRACE, a reduced capability set), our own
 *      /sys/fs/bpf when it is a bpffs.
 * When the view of step 2 has no bpffs, one is mounted there only if that view is the
 * initial mount namespace (kthreadd's): what systemd does at boot, visible to all. In any
 * other case it is a refusal naming both fixes: mount the host's, or --bpffs DIR.
 */
#include <dlfcn.h>
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
#include "xpile/bpffs.h"
#include "xpile/steer.h"

#define PF_KTHREAD_FLAG 0x00200000 /* include/linux/sched.h PF_KTHREAD */
#define FIX_BPFFS "--bpffs DIR (or XPILE_BPFFS=DIR)"

bool xp_is_bpffs(const char *path)
{
	struct statfs st;

	return !statfs(path, &st) && st.f_type == BPF_FS_MAGIC;
}

bool xp_pid_is_kthread(int pid)
{
	char path[64], buf[512], *p;
	unsigned int flags = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/stat", pid);
	f = fopen(path, "re");
	if (!f)
		return false;
	if (!fgets(buf, sizeof(buf), f) || !(p = strrchr(buf, ')')) ||
	    sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %u", &flags) != 1)
		flags = 0;
	(void)fclose(f); /* read only: nothing to lose */
	return flags & PF_KTHREAD_FLAG;
}

/* Whether we may look through /proc/@pid/root (ptrace read access). */
static bool root_open(int pid)
{
	char path[64], buf[PATH_MAX];

	snprintf(path, sizeof(path), "/proc/%d/root", pid);
	return readlink(path, buf, sizeof(buf)) > 0;
}

static bool same_ns(int a, int b, const char *kind)
{
	char pa[64], pb[64];
	struct stat sa, sb;

	snprintf(pa, sizeof(pa), "/proc/%d/ns/%s", a, kind);
	snprintf(pb, sizeof(pb), "/proc/%d/ns/%s", b, kind);
	return !stat(pa, &sa) && !stat(pb, &sb) && sa.st_ino == sb.st_ino && sa.st_dev == sb.st_dev;
}

/* The process whose root shows the host: PID 1, else kthreadd; 0 when neither opens. */
static int host_view(void)
{
	if (root_open(1))
		return 1;
	if (xp_pid_is_kthread(2) && root_open(2))
		return 2;
	return 0;
}

/* Mounts a bpffs on /sys/fs/bpf of the initial mount namespace, from a short-lived
 * child: setns() to a mount namespace needs a single-threaded caller. */
static int mount_initial_bpffs(void)
{
	pid_t pid;
	int st;

	pid = fork();
	if (pid < 0)
		return -errno;
	if (!pid) {
		int fd = open("/proc/2/ns/mnt", O_RDONLY | O_CLOEXEC);

		if (fd < 0 || setns(fd, CLONE_NEWNS) || chdir("/"))
			_exit(errno == EPERM || errno == EACCES ? 1 : 2);
		_exit(mount("bpf", "/sys/fs/bpf", "bpf", 0, "mode=0700") ? 3 : 0);
	}
	if (waitpid(pid, &st, 0) < 0)
		return -errno;
	if (WIFEXITED(st) && !WEXITSTATUS(st))
		return 0;
	return WIFEXITED(st) && WEXITSTATUS(st) == 2 ? -ENOENT : -EPERM;
}

/* Writes the shortest path to the bpffs at @path: /sys/fs/bpf when ours is that one. */
static void short_path(const char *path, char *buf, size_t len)
{
	struct stat a, b;

	if (!stat("/sys/fs/bpf", &a) && !stat(path, &b) && a.st_dev == b.st_dev &&
	    a.st_ino == b.st_ino)
		path = "/sys/fs/bpf";
	snprintf(buf, len, "%s", path);
}

int xp_bpffs_find(char *buf, size_t len, bool mount_if_missing, char *why, size_t wlen)
{
	const char *env = getenv("XPILE_BPFFS");
	char path[64];
	int view, err;

	if (env && *env) {
		if (!xp_is_bpffs(env)) {
			snprintf(why, wlen,
				 "--bpffs/XPILE_BPFFS=%s is not a bpffs mount; name the host's "
				 "bpffs, or mount one there: mount -t bpf bpf %s",
				 env, env);
			return -ENOTDIR;
		}
		snprintf(buf, len, "%s", env);
		return 0;
	}
	view = host_view();
	if (!view) {
		if (xp_is_bpffs("/sys/fs/bpf")) {
			snprintf(buf, len, "/sys/fs/bpf");
			return 0;
		}
		snprintf(
			why, wlen,
			"no bpffs on /sys/fs/bpf here, and the host's is out of reach (/proc/1/root "
			"is closed to this process); name it with " FIX_BPFFS
			", or run with CAP_SYS_PTRACE");
		return -ENOENT;
	}
	snprintf(path, sizeof(path), "/proc/%d/root/sys/fs/bpf", view);
	if (xp_is_bpffs(path)) {
		short_path(path, buf, len);
		return 0;
	}
	/* Mount only where everyone sees it: never into a copy (unshare -m, a container). */
	if (!mount_if_missing || !xp_pid_is_kthread(2) || (view != 2 && !same_ns(view, 2, "mnt"))) {
		snprintf(why, wlen,
			 "no bpffs on /sys/fs/bpf as %s sees it (%s); mount the host's there "
			 "(mount -t bpf bpf /sys/fs/bpf) or name it with " FIX_BPFFS,
			 view == 1 ? "PID 1" : "kthreadd", path);
		return -ENOENT;
	}
	err = mount_initial_bpffs();
	if (!err && !xp_is_bpffs(path))
		err = -ENOENT;
	if (err) {
		snprintf(
			why, wlen,
			"no bpffs on the host's /sys/fs/bpf and mounting one failed (%s); as root "
			"on the host: mount -t bpf bpf /sys/fs/bpf, or name another with " FIX_BPFFS,
			strerror(-err));
		return err;
	}
	xp_info("mounted bpffs on the host's /sys/fs/bpf\n");
	short_path(path, buf, len);
	return 0;
}

int xp_bpffs_root(char *buf, size_t len, bool mount_if_missing)
{
	char why[512];
	int err = xp_bpffs_find(buf, len, mount_if_missing, why, sizeof(why));

	if (err)
		xp_err("%s\n", why);
	return err;
}

int xp_netns_ino(__u64 *ino)
{
	struct stat st;

	/* The calling thread's: a thread may have entered another namespace. */
	if (stat("/proc/thread-self/ns/net", &st) && stat("/proc/self/ns/net", &st))
		return -errno;
	*ino = st.st_ino;
	return 0;
}

int xp_netns_key(char *buf, size_t len)
{
	__u64 ino = 0;
	int err = xp_netns_ino(&ino);

	if (err)
		return err;
	if ((size_t)snprintf(buf, len, "ns%llu/", (unsigned long long)ino) >= len)
		return -ENAMETOOLONG;
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
	if (!xp_is_bpffs(tmp)) {
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

/* Where an install keeps the BPF objects, seen from BINDIR and from LIBDIR (the
 * Makefile computes both from its directories; these are its defaults). */
#ifndef XPILE_BPF_FROM_BIN
#define XPILE_BPF_FROM_BIN "../lib/xpile/bpf"
#endif
#ifndef XPILE_BPF_FROM_LIB
#define XPILE_BPF_FROM_LIB "xpile/bpf"
#endif

/* @name in one of @n directories relative to the directory of the file @self. */
static bool obj_near(const char *self, const char *const *rel, size_t n, const char *name,
		     char *buf, size_t len)
{
	char dir[PATH_MAX];
	char *slash;

	if (!realpath(self, dir) || !(slash = strrchr(dir, '/')))
		return false;
	*slash = 0;
	for (size_t i = 0; i < n; i++) {
		snprintf(buf, len, "%s/%s/%s", dir, rel[i], name);
		if (!access(buf, R_OK))
			return true;
	}
	return false;
}

int xp_bpf_obj_path(const char *name, char *buf, size_t len)
{
	/* build/ (the programs), build/tests/<kind>/ (the suites), an install's BINDIR */
	static const char *const from_exe[] = { "bpf", "../../bpf", XPILE_BPF_FROM_BIN };
	static const char *const from_lib[] = { XPILE_BPF_FROM_LIB };
	const char *env = getenv("XPILE_BPF_DIR");
	char exe[PATH_MAX], lib[PATH_MAX];
	Dl_info di;

	if (env && *env) {
		snprintf(buf, len, "%s/%s", env, name);
		if (!access(buf, R_OK))
			return 0;
	}
	if (realpath("/proc/self/exe", exe) &&
	    obj_near(exe, from_exe, sizeof(from_exe) / sizeof(from_exe[0]), name, buf, len))
		return 0;
	/* A program installed elsewhere that links libxpile.so: next to the library. */
	if (dladdr((void *)xp_bpf_obj_path, &di) && di.dli_fname && *di.dli_fname &&
	    realpath(di.dli_fname, lib) && strcmp(lib, exe) &&
	    obj_near(lib, from_lib, 1, name, buf, len))
		return 0;
	xp_err("BPF object %s not found (looked in $XPILE_BPF_DIR, then bpf/ and %s/ next to "
	       "the program, %s/ next to libxpile.so); build it with make, install it with make "
	       "install, or set XPILE_BPF_DIR\n",
	       name, XPILE_BPF_FROM_BIN, XPILE_BPF_FROM_LIB);
	return -ENOENT;
}
