// SPDX-License-Identifier: BSD-3-Clause
/*
 * The agent's one event loop: every wait is an operation (accept, recv, recvmsg, the
 * signalfd's read, a poll, a timeout) whose completion calls back the struct ut_ev it
 * was given. Two back ends carry the operations out (loop.h): io_uring, where the
 * thread blocks in io_uring_enter, and epoll, for where io_uring is refused
 * (containerd's and podman's default seccomp profiles, kernel.io_uring_disabled).
 * Nothing polls or sleeps in either. Run, drain and dispatch are written once, here.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <syslog.h>

#include "loop.h"
#include "loop_be.h"
#include "say.h"

/* The back ends (loop_be.h): declared here, where alone they are chosen. */
extern const struct ut_loop_be ut_loop_uring, ut_loop_epoll;

int ut_loop_init(struct ut_loop *l, enum ut_loop_kind kind, unsigned int entries)
{
	char why[256] = "--loop epoll";
	int err;

	memset(l, 0, sizeof(*l));
	if (kind != UT_LOOP_EPOLL) {
		err = ut_loop_uring.init(l, entries, why, sizeof(why));
		if (!err) {
			l->be = &ut_loop_uring;
			snprintf(l->said, sizeof(l->said), "io_uring (%u entries)", entries);
			l->said_prio = LOG_INFO;
			return 0;
		}
		if (kind == UT_LOOP_URING) {
			ut_say(err,
			       "--loop io_uring: io_uring refused: %s; --loop auto falls back to epoll",
			       why);
			return err;
		}
		memset(l, 0, sizeof(*l));
	}
	err = ut_loop_epoll.init(l, entries, NULL, 0);
	if (err) {
		ut_say(err, "event loop: epoll_create1: %s", strerror(-err));
		return err;
	}
	l->be = &ut_loop_epoll;
	snprintf(l->said, sizeof(l->said), "epoll (%s%s)",
		 kind == UT_LOOP_EPOLL ? "" : "io_uring refused: ", why);
	/* A fallback is worth a warning; asked for, it is news. */
	l->said_prio = kind == UT_LOOP_EPOLL ? LOG_INFO : LOG_WARNING;
	return 0;
}

void ut_loop_say(const struct ut_loop *l)
{
	ut_log(l->said_prio, "event loop: %s", l->said);
}

const char *ut_loop_name(const struct ut_loop *l)
{
	return l->be ? l->be->name : "none";
}

void ut_loop_fini(struct ut_loop *l)
{
	if (l->be)
		l->be->fini(l);
	l->be = NULL;
}

static int submit(struct ut_loop *l, struct ut_ev *ev, const struct ut_op *op)
{
	return l->be->submit(l, ev, op);
}

int ut_loop_accept(struct ut_loop *l, struct ut_ev *ev, int fd)
{
	return submit(l, ev, &(struct ut_op){ .kind = UT_OP_ACCEPT, .fd = fd });
}

int ut_loop_recv(struct ut_loop *l, struct ut_ev *ev, int fd, void *buf, size_t len)
{
	return submit(l, ev,
		      &(struct ut_op){ .kind = UT_OP_RECV, .fd = fd, .buf = buf, .len = len });
}

int ut_loop_recvmsg(struct ut_loop *l, struct ut_ev *ev, int fd, struct msghdr *msg, int flags)
{
	return submit(
		l, ev,
		&(struct ut_op){ .kind = UT_OP_RECVMSG, .fd = fd, .msg = msg, .flags = flags });
}

int ut_loop_read(struct ut_loop *l, struct ut_ev *ev, int fd, void *buf, size_t len)
{
	return submit(l, ev,
		      &(struct ut_op){ .kind = UT_OP_READ, .fd = fd, .buf = buf, .len = len });
}

int ut_loop_poll_in(struct ut_loop *l, struct ut_ev *ev, int fd)
{
	return submit(l, ev, &(struct ut_op){ .kind = UT_OP_POLL_IN, .fd = fd });
}

int ut_loop_poll_out(struct ut_loop *l, struct ut_ev *ev, int fd)
{
	return submit(l, ev, &(struct ut_op){ .kind = UT_OP_POLL_OUT, .fd = fd });
}

int ut_loop_timeout(struct ut_loop *l, struct ut_ev *ev, const struct __kernel_timespec *ts)
{
	return submit(l, ev, &(struct ut_op){ .kind = UT_OP_TIMEOUT, .fd = -1, .ts = ts });
}

int ut_loop_cancel(struct ut_loop *l, struct ut_ev *ev)
{
	return l->be->cancel(l, ev);
}

/* Runs the callbacks of what completed (@until_stop: not after l->stop is set). A
 * callback may queue, cancel, and free its own @ev: the completion was taken first. */
static void dispatch(struct ut_loop *l, bool until_stop)
{
	struct ut_cqe c;

	while (!(until_stop && l->stop) && l->be->next(l, &c))
		if (c.ev && c.ev->fn)
			c.ev->fn(l, c.ev, c.res, c.flags);
}

void ut_loop_drain(struct ut_loop *l)
{
	/* Cancelled and shut-down operations complete within microseconds; 10 ms of
	 * silence means none is left. */
	for (int round = 0; round < 100; round++) {
		if (l->be->wait(l, 10))
			return;
		dispatch(l, false);
	}
}

int ut_loop_run(struct ut_loop *l)
{
	while (!l->stop) {
		int err = l->be->wait(l, -1);

		if (err < 0 && err != -EINTR && err != -EAGAIN && err != -EBUSY && err != -ETIME)
			return err;
		dispatch(l, true);
	}
	return 0;
}
