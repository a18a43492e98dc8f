/* SPDX-License-Identifier: BSD-3-Clause */
/* What lib/fib_nl.c needs of lib/fib.c beyond xpile/fib.h: a resync's mark and sweep,
 * the gateways to resolve. */
#ifndef XPILE_FIB_INTERNAL_H
#define XPILE_FIB_INTERNAL_H

#include "xpile/fib.h"

#define XP_FIB_SYNC_ROUTES (1u << 0)
#define XP_FIB_SYNC_NEIGHS (1u << 1)
#define XP_FIB_SYNC_ADDRS (1u << 2)

/*
 * A full dump follows (@what: XP_FIB_SYNC_*): the objects it brings are marked, the
 * first route of each key replaces that key's unmarked ones, and
 * xp_fib_resync_end() removes what was not marked (what the kernel no longer has).
 */
void xp_fib_resync_begin(struct xp_fib *f, unsigned int what);
void xp_fib_resync_end(struct xp_fib *f);

/* A gateway for the kernel to resolve (xp_fib_opts.resolve_gateways). */
struct xp_fib_gw {
	__u8 family; /* AF_INET, AF_INET6 */
	__u8 addr[16];
	__u32 ifindex;
};

/* Up to @max of the gateways queued since the last call, into @out: how many. */
__u32 xp_fib_resolve_take(struct xp_fib *f, struct xp_fib_gw *out, __u32 max);

#endif
