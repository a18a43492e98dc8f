/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The queue-to-core wiring plan that `xpile-loader wire` writes and the engine reads
 * (lib/wire.c).
 *
 * All functions return 0 or a negative errno unless said otherwise.
 */
#ifndef XPILE_WIRE_H
#define XPILE_WIRE_H

#include <stddef.h>
#include <linux/types.h>

#include "xpile/api.h"

#ifdef __cplusplus
extern "C" {
#endif

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

#ifdef __cplusplus
}
#endif

#endif /* XPILE_WIRE_H */
