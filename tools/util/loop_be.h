/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * What loop.c asks of an event-loop back end (loop_uring.c, loop_epoll.c). A program's
 * modules see only loop.h's ut_loop_*(): an operation is data (struct ut_op), each
 * back end carries it out its own way, and completions come back in one shape, so
 * a program's logic exists once whichever back end runs.
 */
#ifndef XPILE_UTIL_LOOP_BE_H
#define XPILE_UTIL_LOOP_BE_H

#include <stddef.h>
#include <sys/socket.h>
#include <linux/time_types.h>

#include "loop_types.h"

enum ut_op_kind {
	UT_OP_ACCEPT, /* accept4(fd, SOCK_CLOEXEC): the new fd */
	UT_OP_RECV, /* recv(fd, buf, len, 0): bytes, 0 at end of stream */
	UT_OP_RECVMSG, /* recvmsg(fd, msg, flags): bytes */
	UT_OP_READ, /* read(fd, buf, len) */
	UT_OP_POLL_IN, /* one poll of fd for POLLIN: the events seen */
	UT_OP_POLL_OUT, /* one poll of fd for POLLOUT (the agent's gRPC output waits): the events */
	UT_OP_TIMEOUT, /* after *ts (relative): -ETIME */
};

struct ut_op {
	enum ut_op_kind kind;
	int fd;
	void *buf;
	size_t len;
	struct msghdr *msg;
	int flags;
	const struct __kernel_timespec *ts;
};

/* One completion taken off the back end's queue. */
struct ut_cqe {
	struct ut_ev *ev; /* NULL: nobody's (a cancel's own result) */
	int res;
	unsigned int flags;
};

struct ut_loop_be {
	const char *name;
	/* 0, or -errno with what refused it, one clause, in @why. */
	int (*init)(struct ut_loop *l, unsigned int entries, char *why, size_t len);
	void (*fini)(struct ut_loop *l);
	/* Queues @op; its completion goes to @ev. 0, or -errno (it will not run). */
	int (*submit)(struct ut_loop *l, struct ut_ev *ev, const struct ut_op *op);
	/* The pending operation of @ev completes with -ECANCELED (nothing if none). */
	int (*cancel)(struct ut_loop *l, struct ut_ev *ev);
	/* Waits up to @timeout_ms (-1: no bound) for completions: 0 when some may be
	 * there, -ETIME when none came, another -errno on failure (-EINTR: try again). */
	int (*wait)(struct ut_loop *l, int timeout_ms);
	/* Takes the next completion: true, or false when there is none. */
	bool (*next)(struct ut_loop *l, struct ut_cqe *c);
};

/* The two tables (loop_uring.c, loop_epoll.c) are named in loop.c alone. */

#endif /* XPILE_UTIL_LOOP_BE_H */
