/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Who uses an interface's queues: the engines serving them, recorded so that the loader
 * and other engines can ask (lib/users.c).
 *
 *   xp_users_register("eth0", prog_id, queues, nq);   // this process serves these queues
 *   n = xp_users_list("eth0", users, 8);              // live others (stale records removed)
 *
 * Users are recorded as /run/xpile/ns<inode>/IFACE/engine.<pid> (next to the wiring
 * plan, $XPILE_RUNDIR overrides /run/xpile): pid, the process's start time (so a
 * reused pid is not taken for the engine), the program id it serves through and its
 * queues. A record whose process is gone is stale and is removed by whoever lists.
 */
#ifndef XPILE_USERS_H
#define XPILE_USERS_H

#include <stddef.h>
#include <linux/types.h>

#include "xpile/api.h"

#ifdef __cplusplus
extern "C" {
#endif

#define XP_USER_MAX_QUEUES 64

struct xp_user {
	int pid;
	char comm[16];
	__u32 prog_id; /* 0: no steer program (txonly) */
	__u32 nqueues;
	__u32 queues[XP_USER_MAX_QUEUES];
};

/* Records this process as a user of @ifname's queues (replaces an earlier record). */
XP_API int xp_users_register(const char *ifname, __u32 prog_id, const __u32 *queues, __u32 nq);
XP_API void xp_users_unregister(const char *ifname);
/* Live users of @ifname other than this process, up to @max; returns how many. */
XP_API int xp_users_list(const char *ifname, struct xp_user *out, int max);
/* "pid 1234 (xpile, queues 0,1)" for the first of @n users, "+ N more" after it. */
XP_API void xp_users_format(const struct xp_user *u, int n, char *buf, size_t len);

#ifdef __cplusplus
}
#endif

#endif /* XPILE_USERS_H */
