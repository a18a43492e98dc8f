/* SPDX-License-Identifier: BSD-3-Clause */
/* AF_XDP socket counters by sock_diag (xskdiag.c). */
#ifndef XPILE_AGENT_XSKDIAG_H
#define XPILE_AGENT_XSKDIAG_H

#include <stdbool.h>
#include <linux/types.h>
#include <linux/xdp_diag.h>

/* xskdiag.c: the AF_XDP sockets of this namespace (sock_diag), at most @max: how
 * many, or a negative errno (-ENOENT: the kernel has no xsk_diag). */
struct ag_xsk_stat {
	int ifindex;
	__u32 queue;
	struct xdp_diag_stats st;
	__u64 ino; /* the socket's inode (pidfd) */
	bool have_zc, zc; /* XDP_OPTIONS read (pidfd); zero-copy */
};
int ag_xsk_diag(struct ag_xsk_stat *out, int max);

#endif /* XPILE_AGENT_XSKDIAG_H */
