/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Host plumbing around the steer program: where bpffs and the pins are (across network
 * namespaces and `ip netns exec`), where the BPF objects are, the queue-to-core wiring
 * plan, and what an interface and the kernel support (probed, never guessed).
 *
 * All functions return 0 or a negative errno unless said otherwise.
 */
#ifndef XPILE_HOST_H
#define XPILE_HOST_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>

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

/* Wiring plan: which core serves which queue, written by `xpile-loader wire` under
 * /run/xpile/ns<inode>/IFACE/wire.plan ($XPILE_RUNDIR overrides /run/xpile) and
 * read by the engine. */
#define XP_WIRE_MAX 256
struct xp_wire_plan {
	__u32 n;
	struct {
		__u32 queue;
		__u32 core;
	} map[XP_WIRE_MAX];
};
/* Reads @ifname's plan into @out: 0, -ENOENT (no plan: the caller decides), -EINVAL
 * (a malformed line, logged with its number) or another negative errno. */
XP_API int xp_wire_plan_read(const char *ifname, struct xp_wire_plan *out);
/* xp_wire_plan_read() with the reason of a failure as one line in @errbuf (@errbuf_sz
 * bytes) instead of the log hook. */
XP_API int xp_wire_plan_load(const char *ifname, struct xp_wire_plan *out, char *errbuf,
			     size_t errbuf_sz);
/* Writes plan @p for @ifname atomically (a reader never sees half of it), creating
 * its directory: 0, -E2BIG (n > XP_WIRE_MAX) or the negative errno (logged). */
XP_API int xp_wire_plan_write(const char *ifname, const struct xp_wire_plan *p);
/* Removes @ifname's plan and its directories left empty: 0 (also when there was
 * none) or a negative errno. */
XP_API int xp_wire_plan_remove(const char *ifname);
/* Writes the path of @ifname's plan file to @buf: 0, -ENAMETOOLONG or -errno. */
XP_API int xp_wire_plan_path(const char *ifname, char *buf, size_t len);

/* What an interface supports, probed (never guessed). */
struct xp_if_features {
	bool native_xdp; /* a program attaches in driver mode */
	bool xsk_zerocopy; /* netlink XDP features: NETDEV_XDP_ACT_XSK_ZEROCOPY */
	bool multibuf; /* native multi-buffer (xdp.frags) */
	bool redirect_target; /* NETDEV_XDP_ACT_NDO_XMIT */
	bool features_known; /* the kernel reported XDP features via netlink */
	bool dispatcher; /* libxdp multiprog dispatcher (freplace) works */
	char dispatcher_why[128]; /* why not, when it does not */
	__u32 rx_queues, tx_queues, combined, max_combined, max_rx, max_tx;
	bool channels_known; /* ETHTOOL_GCHANNELS answered */
};
/*
 * Fills @out for @ifname: XDP features from netlink when the kernel reports them,
 * else by attaching a probe program in driver mode (never over a program already
 * attached: then its mode tells), queue counts from ETHTOOL_GCHANNELS or sysfs, and
 * xp_dispatcher_probe(). 0, or -ENODEV (no such interface here).
 */
XP_API int xp_if_features_probe(const char *ifname, struct xp_if_features *out);
/* Whether libxdp's dispatcher (freplace) loads and attaches on this kernel; when it
 * does not, @why (@len bytes) says why. Loads steer.o; needs CAP_BPF. */
XP_API bool xp_dispatcher_probe(char *why, size_t len);
/*
 * Why io_uring is refused here, @call (io_uring_setup, io_uring_enter...) having
 * failed with @err: one clause in @buf, e.g. "io_uring_setup: Function not
 * implemented; a seccomp profile without io_uring, as containerd's and podman's
 * defaults, or a kernel without it" (for EPERM it reads kernel.io_uring_disabled).
 * Returns @buf.
 */
XP_API const char *xp_uring_refusal(int err, const char *call, char *buf, size_t len);

#ifdef __cplusplus
}
#endif

#endif /* XPILE_HOST_H */
