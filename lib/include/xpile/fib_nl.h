/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The kernel's routing state mirrored into an xp_fib (xpile/fib.h) over rtnetlink, on
 * libmnl: a full dump when opened, then the kernel's notifications (RTM_NEWROUTE,
 * RTM_DELROUTE, RTM_NEWNEIGH, RTM_DELNEIGH, RTM_NEWADDR, RTM_DELADDR, RTM_NEWLINK,
 * RTM_DELLINK) from a multicast socket that the caller polls. It has no thread: the
 * caller's control thread waits for xp_fib_nl_fd() to be readable (poll, epoll,
 * io_uring) and calls xp_fib_nl_process(), which reads what is there without
 * blocking, applies it and commits (xp_fib_commit) once per call.
 *
 * - It mirrors the network namespace of the thread that opens it (setns() first to
 *   mirror another); the routes of one table (main by default), IPv4 and IPv6; every
 *   neighbour; every local address. Policy rules (ip rule) are not read: a router
 *   that uses them should punt what they affect.
 * - What the fast path cannot express is still mirrored, as a punt (xpile/fib.h):
 *   encapsulations (RTA_ENCAP), nexthop objects (RTA_NH_ID), gateways of the other
 *   family (RTA_VIA), TOS routes, unknown types. Cloned (cache) routes are skipped.
 * - IPv4 routes through an interface that goes down vanish from the kernel without a
 *   notification: the mirror follows the link state (RTM_NEWLINK, IFF_UP) instead.
 * - A notification lost (the socket overflowed: ENOBUFS) starts a resync: what is
 *   queued is dropped, everything is dumped again, and what the dump no longer shows
 *   is removed. The socket's buffer is large (opts.rcvbuf) to make that rare.
 *
 * Threading: one thread at a time, the FIB's writer. Errors are negative errnos;
 * nothing prints but through the log hook (xpile/log.h).
 */
#ifndef XPILE_FIB_NL_H
#define XPILE_FIB_NL_H

#include <stddef.h>
#include <linux/types.h>

#include "xpile/api.h"
#include "xpile/fib.h"
#include "xpile/opts.h"

#ifdef __cplusplus
extern "C" {
#endif

struct xp_fib_nl_opts {
	size_t sz; /* sizeof(struct xp_fib_nl_opts); the rule: xpile/opts.h */
	__u32 table; /* routing table to mirror; 0 = main (254) */
	/* Receive buffer of the notification socket in bytes (SO_RCVBUFFORCE with
	 * CAP_NET_ADMIN, else capped by net.core.rmem_max); 0 = 64 MiB. */
	__u32 rcvbuf;
};
#define xp_fib_nl_opts__last_field rcvbuf

struct xp_fib_nl_stats {
	__u64 msgs; /* notifications read */
	__u64 newroute, delroute, newneigh, delneigh, newaddr, deladdr, newlink, dellink;
	__u64 ignored; /* other tables, families, cloned routes, proxy neighbours */
	__u64 errors; /* malformed messages, and changes the FIB refused */
	__u64 enobufs; /* notifications lost by the kernel */
	__u64 resyncs; /* full dumps after the first */
	__u64 dumped; /* objects the dumps brought */
	__u64 batches; /* xp_fib_nl_process() calls that applied something */
	/* From the first notification read in a call to its commit done, in ns. */
	__u64 apply_ns_last, apply_ns_max, apply_ns_total;
};

struct xp_fib_nl;

/*
 * Subscribes to the notifications, then dumps links, addresses, neighbours and routes
 * into @fib and commits. *@out is the caller's to xp_fib_nl_close() (before the FIB
 * goes). -EINVAL, -ENOMEM, or the socket's negative errno (logged with the cause).
 */
XP_API int xp_fib_nl_open(struct xp_fib *fib, const struct xp_fib_nl_opts *opts,
			  struct xp_fib_nl **out);
XP_API void xp_fib_nl_close(struct xp_fib_nl *m);
/* The descriptor to wait on (readable: notifications are there). */
XP_API int xp_fib_nl_fd(const struct xp_fib_nl *m);
/*
 * Reads and applies up to @budget notifications (0: all there are) without waiting
 * for more, resyncs if some were lost, and commits once. The first change after a
 * flip of a double-buffered table waits for the readers' grace period (one burst of
 * each online worker: xpile/lpm.h). Returns how many it applied (0: none were
 * there), or a negative errno (the socket failed).
 */
XP_API int xp_fib_nl_process(struct xp_fib_nl *m, __u32 budget);
/* Dumps everything again and removes what the kernel no longer has. */
XP_API int xp_fib_nl_resync(struct xp_fib_nl *m);
XP_API void xp_fib_nl_stats(const struct xp_fib_nl *m, struct xp_fib_nl_stats *st);

#ifdef __cplusplus
}
#endif

#endif /* XPILE_FIB_NL_H */
