/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Where bpffs and the pins are (across network namespaces and `ip netns exec`), what
 * is kept per namespace and swept when the namespace is gone, and where the BPF objects
 * are (lib/bpffs.c, lib/bpffs_sweep.c).
 *
 * All functions return 0 or a negative errno unless said otherwise.
 */
#ifndef XPILE_BPFFS_H
#define XPILE_BPFFS_H

#include <stdbool.h>
#include <stddef.h>

#include "xpile/api.h"

#ifdef __cplusplus
extern "C" {
#endif

/*
 * Where the pins are. <bpffs> is the host's bpffs, found by one rule that looks at no
 * ancestor of the process (so a shell, `ip netns exec`, setsid, a supervisor or a
 * container make no difference), the first of:
 *   1. $XPILE_BPFFS (the binaries' --bpffs DIR sets it), which must be a bpffs;
 *   2. /sys/fs/bpf as PID 1 of our PID namespace sees it (/proc/1/root/sys/fs/bpf), or,
 *      where PID 1 is closed to us, as kthreadd sees it (/proc/2/root/..., the kernel's
 *      thread in the initial mount namespace); reported as /sys/fs/bpf when ours is the
 *      same mount. `ip netns exec` hides it behind a fresh /sys: this finds it anyway;
 *   3. where neither PID 1 nor kthreadd can be looked at (a reduced capability set
 *      without CAP_SYS_PTRACE), our own /sys/fs/bpf if it is a bpffs.
 * Never a private bpffs: when step 2 finds none, one is mounted there only if that is
 * the initial mount namespace (and only when asked to); otherwise a refusal that names
 * both fixes (mount the host's bpffs, or --bpffs DIR).
 *
 * The pins of @ifname: <bpffs>/xpile/ns<inode>/IFACE, <inode> that of the calling
 * thread's network namespace (every namespace the same way, the initial one too), so
 * every process in one namespace finds the same pins however it was started, and two
 * namespaces never share a path. Writes it to @buf (@len bytes); 0, -ENAMETOOLONG, or
 * the error of finding bpffs.
 */
XP_API int xp_steer_pin_dir(const char *ifname, char *buf, size_t len);
/*
 * Writes to @buf the host's bpffs root by the rule above; with @mount_if_missing, mounts
 * one on the initial mount namespace's /sys/fs/bpf where it has none. 0, -ENOTDIR
 * ($XPILE_BPFFS is no bpffs), -ENOENT (none) or the mount's negative errno; each logged
 * with the fix.
 */
XP_API int xp_bpffs_root(char *buf, size_t len, bool mount_if_missing);
/* Writes this network namespace's key to @buf: "ns<inode>/" (pins and run files of
 * different namespaces never collide). 0 or -errno. */
XP_API int xp_netns_key(char *buf, size_t len);
/*
 * Removes what is kept per network namespace, <bpffs>/xpile/ns<inode>/ (pins) and
 * /run/xpile/ns<inode>/ (plans, engine records), of namespaces that no longer exist. A
 * namespace exists while a task is in it or an open file or a bind mount (in any mount
 * namespace) holds it; each directory is moved aside and looked for again before it is
 * removed. Looks only where the whole host is visible (the initial PID namespace: kernel
 * threads in /proc) and every task's namespace can be told; elsewhere does nothing.
 * xpile-loader load, the engine (when it loads) and the agent (at start) call it. The
 * number of directories removed, or a negative errno.
 */
XP_API int xp_netns_sweep(void);

/*
 * Writes to @buf the path of BPF object @name (e.g. "steer.o"), the first readable
 * one of $XPILE_BPF_DIR/, next to the program (<dir of /proc/self/exe>/bpf/, ../../bpf/
 * for the test suites, ../lib/xpile/bpf/ when installed: the install's DATADIR seen
 * from its BINDIR) and next to libxpile.so (xpile/bpf/, DATADIR seen from LIBDIR). No
 * absolute path is compiled in, so an install works under any PREFIX. 0, or -ENOENT
 * (logged with the places tried).
 */
XP_API int xp_bpf_obj_path(const char *name, char *buf, size_t len);

#ifdef __cplusplus
}
#endif

#endif /* XPILE_BPFFS_H */
