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

/* Where the pins of @ifname live when --pin-path is not given:
 * <bpffs>/xpile/IFACE in the initial network namespace, <bpffs>/xpile/ns<inode>/IFACE
 * in others, where <bpffs> is /sys/fs/bpf or, when `ip netns exec` hid it, the host's
 * through /proc/<pid>/root of PID 1 or of the closest ancestor in the host's mount
 * namespace (mounted there if missing). $XPILE_BPFFS overrides. */
XP_API int xp_steer_pin_dir(const char *ifname, char *buf, size_t len);
/* A mounted bpffs root usable from here (see above); mounts one if needed. */
XP_API int xp_bpffs_root(char *buf, size_t len, bool mount_if_missing);
/* Network namespace key: "" in the initial one, "ns<inode>/" elsewhere. */
XP_API int xp_netns_key(char *buf, size_t len);

/* BPF objects: $XPILE_BPF_DIR, then <dir of /proc/self/exe>/bpf/, then
 * XPILE_DATADIR/bpf. */
XP_API int xp_bpf_obj_path(const char *name, char *buf, size_t len);

/* Wiring plan: which core serves which queue, written by `xpile-loader wire` under
 * /run/xpile/<netns key>IFACE/wire.plan and read by the engine. */
#define XP_WIRE_MAX 256
struct xp_wire_plan {
	__u32 n;
	struct {
		__u32 queue;
		__u32 core;
	} map[XP_WIRE_MAX];
};
XP_API int xp_wire_plan_read(const char *ifname, struct xp_wire_plan *out);
XP_API int xp_wire_plan_write(const char *ifname, const struct xp_wire_plan *p);
XP_API int xp_wire_plan_remove(const char *ifname);
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
XP_API int xp_if_features_probe(const char *ifname, struct xp_if_features *out);
/* Whether libxdp's dispatcher (freplace) loads on this kernel; @why on failure. */
XP_API bool xp_dispatcher_probe(char *why, size_t len);

#ifdef __cplusplus
}
#endif

#endif /* XPILE_HOST_H */
