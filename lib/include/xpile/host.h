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
 * Writes to @buf (@len bytes) the directory where the pins of @ifname live when no
 * pin path is given: <bpffs>/xpile/IFACE in the initial network namespace,
 * <bpffs>/xpile/ns<inode>/IFACE in others, where <bpffs> is /sys/fs/bpf or, when
 * `ip netns exec` hid it, the host's through /proc/<pid>/root of PID 1 or of the
 * closest ancestor in the host's mount namespace (mounted there if missing).
 * $XPILE_BPFFS overrides <bpffs>. 0, -ENAMETOOLONG, or the error of finding bpffs.
 */
XP_API int xp_steer_pin_dir(const char *ifname, char *buf, size_t len);
/*
 * Writes to @buf a mounted bpffs root usable from here (see xp_steer_pin_dir());
 * with @mount_if_missing, mounts one on the host's /sys/fs/bpf where none is. 0,
 * -ENOTDIR ($XPILE_BPFFS is no bpffs), -ENOENT (none, and not asked to mount) or the
 * mount's negative errno; each logged with the fix.
 */
XP_API int xp_bpffs_root(char *buf, size_t len, bool mount_if_missing);
/* Writes this network namespace's key to @buf: "" in the initial one, "ns<inode>/"
 * elsewhere (pins and run files of different namespaces never collide). 0 or -errno. */
XP_API int xp_netns_key(char *buf, size_t len);

/*
 * Writes to @buf the path of BPF object @name (e.g. "steer.o"), the first readable
 * one of $XPILE_BPF_DIR/, next to the binary (<dir of /proc/self/exe>/bpf/, or
 * ../../bpf/ for the test suites, ../lib/xpile/bpf/ when installed) and
 * XPILE_DATADIR/bpf/. 0, or -ENOENT (logged with the places tried).
 */
XP_API int xp_bpf_obj_path(const char *name, char *buf, size_t len);

/* Wiring plan: which core serves which queue, written by `xpile-loader wire` under
 * /run/xpile/<netns key>IFACE/wire.plan ($XPILE_RUNDIR overrides /run/xpile) and
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

#ifdef __cplusplus
}
#endif

#endif /* XPILE_HOST_H */
