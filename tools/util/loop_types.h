/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The event loop's types (loop.h holds its calls): apart, so that its back ends
 * (loop_be.h) see the loop without its calls, and the only way between loop.c and
 * them stays the back-end table.
 */
#ifndef XPILE_UTIL_LOOP_TYPES_H
#define XPILE_UTIL_LOOP_TYPES_H

#include <stdbool.h>

struct ut_loop;
struct ut_ev;
/* The completion of the operation @ev was given to: @res as the system call returns
 * it (bytes, an fd, poll events) or -errno (-ECANCELED: ut_loop_cancel(); -ETIME: a
 * timeout ran out). @flags: io_uring's CQE flags, 0 on epoll; the agent needs none. */
typedef void (*ut_ev_fn)(struct ut_loop *l, struct ut_ev *ev, int res, unsigned int flags);
struct ut_ev {
	ut_ev_fn fn;
};

enum ut_loop_kind { UT_LOOP_AUTO, UT_LOOP_URING, UT_LOOP_EPOLL };

struct ut_loop {
	const struct ut_loop_be *be; /* loop_be.h */
	void *priv; /* the back end's */
	bool stop;
	char said[320]; /* which back end runs and why, for ut_loop_say() */
	int said_prio; /* its syslog priority: LOG_WARNING for a fallback */
};

#endif /* XPILE_UTIL_LOOP_TYPES_H */
