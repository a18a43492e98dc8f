/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * What an interface and the kernel support, probed, never guessed: XDP modes and
 * features, queue counts, libxdp's dispatcher, io_uring (lib/features.c).
 */
#ifndef XPILE_FEATURES_H
#define XPILE_FEATURES_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>

#include "xpile/api.h"

#ifdef __cplusplus
extern "C" {
#endif

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
/* Whether @ifindex takes frames other devices' XDP programs redirect to it
 * (NETDEV_XDP_ACT_NDO_XMIT; a veth only while its peer has NAPI, GRO or an XDP program,
 * so it can change): 1 or 0, or -errno when the kernel does not say (no netdev
 * netlink family: -ENOENT). One netlink round trip, nothing attached. */
XP_API int xp_if_redirect_target(int ifindex);
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

#endif /* XPILE_FEATURES_H */
