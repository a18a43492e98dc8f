// SPDX-License-Identifier: BSD-3-Clause
/*
 * The pinned-map mode (interfaces[].pinned_map): DPDK 24.07+ with use_pinned_map=1
 * opens no socket; it takes the XSKMAP from a path, by default
 * /tmp/afxdp_dp/NETDEV/xsks_map. The agent gives each such interface a bpffs of its
 * own, DIR/NETDEV/bpf, holding that one map as xsks_map (device_plugin.mode and group),
 * and Allocate mounts that file at /tmp/afxdp_dp/NETDEV/xsks_map in the pod. The file,
 * not the bpffs: every bpffs has the two iterators bpf_preload pins at its root
 * (maps.debug, progs.debug: every map and program of the host), which nobody can
 * remove (EPERM), so a pod given the whole bpffs, as the intel AF_XDP plugin gives
 * it, could list them.
 *
 * A bpffs someone mounted there already (an operator's mount, or a previous agent's
 * that survived it) is used as it is. Otherwise the agent mounts one, which takes
 * CAP_SYS_ADMIN and, for the kubelet to see it, the directory shared with the host
 * (mountPropagation: Bidirectional): refused in one line naming both fixes.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <linux/magic.h>
#include <bpf/bpf.h>

#include "agent.h"
#include "pinmap.h"

#define PIN_DIR "bpf"
#define PIN_NAME "xsks_map"

int ag_mkdir_p(const char *dir)
{
	char p[PATH_MAX];

	if (snprintf(p, sizeof(p), "%s", dir) >= (int)sizeof(p))
		return -ENAMETOOLONG;
	for (char *s = p + 1; *s; s++)
		if (*s == '/') {
			*s = 0;
			if (mkdir(p, 0755) && errno != EEXIST)
				return -errno;
			*s = '/';
		}
	if (mkdir(p, 0755) && errno != EEXIST)
		return -errno;
	return 0;
}

static int pin_paths(const struct agent *a, const struct ag_iface *i, char *dir, char *file,
		     size_t len)
{
	if (snprintf(dir, len, "%s/%s/%s", a->cfg.dp_dir, i->name, PIN_DIR) >= (int)len ||
	    snprintf(file, len, "%s/%s", dir, PIN_NAME) >= (int)len)
		return -ENAMETOOLONG;
	return 0;
}

static bool is_bpffs(const char *path)
{
	struct statfs st;

	return !statfs(path, &st) && st.f_type == BPF_FS_MAGIC;
}

/* The pin as the sockets are: device_plugin.mode, and its group when one is set. */
static int pin_access(const struct agent *a, const char *file)
{
	if (a->cfg.dp_gid != (gid_t)-1 && chown(file, (uid_t)-1, a->cfg.dp_gid))
		return -1;
	return chmod(file, a->cfg.dp_mode);
}

static bool same_map(const char *file, int fd)
{
	struct bpf_map_info x = { 0 }, y = { 0 };
	__u32 lx = sizeof(x), ly = sizeof(y);
	int pin = bpf_obj_get(file);
	bool same;

	if (pin < 0)
		return false;
	same = !bpf_obj_get_info_by_fd(pin, &x, &lx) && !bpf_obj_get_info_by_fd(fd, &y, &ly) &&
	       x.id == y.id;
	close(pin);
	return same;
}

int ag_pinmap_open(struct agent *a, struct ag_iface *i)
{
	char dir[PATH_MAX], file[PATH_MAX];
	int err;

	if (pin_paths(a, i, dir, file, sizeof(dir)))
		return -ENAMETOOLONG;
	err = ag_mkdir_p(dir);
	if (err) {
		ut_log(LOG_ERR, "%s: pinned map: cannot create %s: %s", i->name, dir,
		       strerror(-err));
		return err;
	}
	if (!is_bpffs(dir)) {
		if (mount("bpf", dir, "bpf", MS_NOSUID | MS_NODEV | MS_NOEXEC, "mode=0755")) {
			err = -errno;
			ut_log(LOG_ERR,
			       "%s: pinned map: cannot mount a bpffs at %s (%s): give the agent CAP_SYS_ADMIN, or mount one there first (mount -t bpf bpf %s)",
			       i->name, dir, strerror(-err), dir);
			rmdir(dir);
			return err;
		}
		i->pin_mounted = true;
	}
	/* A previous run's pin stays when it is this map (adopted with the program): pods
	 * bound to that file keep it. Another map's goes. */
	if (same_map(file, xp_steer_xskmap_fd(i->steer))) {
		i->pinned = true;
		return pin_access(a, file) ? -errno : 0;
	}
	unlink(file);
	if (bpf_obj_pin(xp_steer_xskmap_fd(i->steer), file) || pin_access(a, file)) {
		err = -errno;
		ut_log(LOG_ERR, "%s: pinned map: cannot pin the XSKMAP at %s: %s", i->name, file,
		       strerror(-err));
		unlink(file);
		return err;
	}
	i->pinned = true;
	ut_say(0, "%s: pinned map: %s (DPDK: use_pinned_map=1 in a pod, or dp_path=%s)", i->name,
	       file, file);
	return 0;
}

void ag_pinmap_close(struct agent *a, struct ag_iface *i, bool detach)
{
	char dir[PATH_MAX], file[PATH_MAX];

	if (!i->pinned || pin_paths(a, i, dir, file, sizeof(dir)))
		return;
	i->pinned = false;
	/* The pin stays for the next agent, as the program does, unless detaching. */
	if (!detach)
		return;
	unlink(file);
	if (i->pin_mounted)
		umount2(dir, MNT_DETACH);
	rmdir(dir);
	i->pin_mounted = false;
}

int ag_pinmap_file(const struct agent *a, const struct ag_iface *i, char *file, size_t len)
{
	char dir[PATH_MAX];

	return pin_paths(a, i, dir, file, len);
}
