// SPDX-License-Identifier: BSD-3-Clause
/*
 * The programs' event loop (tools/util/loop.c), each case on both back ends: every
 * operation completes once with what its system call returns (recv, recvmsg with a
 * passed fd, read, accept, a poll for POLLIN or POLLOUT, a timeout's -ETIME), a cancel
 * completes its operation with -ECANCELED, a shutdown ends a pending receive with 0, and
 * a server's stop (shutdown, close, then cancel the pending accept) completes the
 * accept once.
 * io_uring cases skip where io_uring is refused.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdarg.h>
#include <time.h>
#include <unistd.h>
#include <sys/socket.h>
#include <sys/un.h>

#include "clock.h"
#include "loop.h"
#include "xt.h"

struct probe {
	struct ut_ev ev;
	int n, res;
};

static void on_done(struct ut_loop *l, struct ut_ev *ev, int res, unsigned int flags)
{
	struct probe *p = (struct probe *)ev;

	p->n++;
	p->res = res;
}

static enum ut_loop_kind kind;

/* The loop of this round's back end; a case skips where io_uring is refused. */
#define LOOP_OPEN(l)                                                                \
	do {                                                                        \
		if (ut_loop_init((l), kind, 32))                                    \
			XT_SKIP_CASE("%s refused here",                             \
				     kind == UT_LOOP_URING ? "io_uring" : "epoll"); \
	} while (0)

/* Runs the loop until @p completed or @ms passed. */
static void until(struct ut_loop *l, struct probe *p, int ms)
{
	double end = ut_now() + ms / 1e3;

	while (!p->n && ut_now() < end)
		ut_loop_drain(l);
}

static void test_recv_read_poll(void)
{
	struct ut_loop l;
	struct probe r = { .ev.fn = on_done }, rd = { .ev.fn = on_done }, pl = { .ev.fn = on_done };
	int sv[2], pfd[2];
	char buf[16];

	LOOP_OPEN(&l);
	XT_REQUIRE(!socketpair(AF_UNIX, SOCK_STREAM, 0, sv) && !pipe(pfd));
	XT_EQ(ut_loop_recv(&l, &r.ev, sv[0], buf, sizeof(buf)), 0);
	XT_EQ(ut_loop_read(&l, &rd.ev, pfd[0], buf + 8, 8), 0);
	XT_EQ(ut_loop_poll_in(&l, &pl.ev, pfd[0]), 0);
	ut_loop_drain(&l);
	XT_EQ(r.n + rd.n, 0); /* nothing to read yet */
	XT_EQ(write(sv[1], "hello", 5), 5);
	until(&l, &r, 1000);
	XT_EQ(r.n, 1);
	XT_EQ(r.res, 5);
	XT_CHECK(!memcmp(buf, "hello", 5));
	XT_EQ(write(pfd[1], "ab", 2), 2);
	until(&l, &rd, 1000);
	until(&l, &pl, 1000);
	XT_EQ(rd.n, 1);
	XT_EQ(rd.res, 2);
	XT_EQ(pl.n, 1);
	XT_CHECK(pl.res & POLLIN);
	/* A shutdown ends a pending receive with 0 (how the agent closes connections). */
	r.n = 0;
	XT_EQ(ut_loop_recv(&l, &r.ev, sv[0], buf, sizeof(buf)), 0);
	ut_loop_drain(&l);
	shutdown(sv[0], SHUT_RDWR);
	until(&l, &r, 1000);
	XT_EQ(r.n, 1);
	XT_EQ(r.res, 0);
	ut_loop_fini(&l);
	close(sv[0]);
	close(sv[1]);
	close(pfd[0]);
	close(pfd[1]);
}

/* A poll for POLLOUT (the agent's gRPC output waits) completes once the peer made room. */
static void test_poll_out(void)
{
	struct ut_loop l;
	struct probe po = { .ev.fn = on_done };
	char buf[4096] = { 0 };
	int sv[2];

	LOOP_OPEN(&l);
	XT_REQUIRE(!socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0, sv));
	while (send(sv[0], buf, sizeof(buf), MSG_DONTWAIT) > 0)
		; /* until the send buffer is full */
	XT_EQ(ut_loop_poll_out(&l, &po.ev, sv[0]), 0);
	ut_loop_drain(&l);
	XT_EQ(po.n, 0); /* no room yet */
	while (recv(sv[1], buf, sizeof(buf), MSG_DONTWAIT) > 0)
		;
	until(&l, &po, 1000);
	XT_EQ(po.n, 1);
	XT_CHECK(po.res & POLLOUT);
	ut_loop_fini(&l);
	close(sv[0]);
	close(sv[1]);
}

static void test_recvmsg_fd(void)
{
	struct ut_loop l;
	struct probe r = { .ev.fn = on_done };
	union {
		char b[CMSG_SPACE(sizeof(int))];
		struct cmsghdr align;
	} ctl, out;
	char buf[16], msgtext[] = "/fd";
	struct iovec iov = { buf, sizeof(buf) }, siov = { msgtext, 3 };
	struct msghdr m = { .msg_iov = &iov,
			    .msg_iovlen = 1,
			    .msg_control = ctl.b,
			    .msg_controllen = sizeof(ctl.b) };
	struct msghdr sm = { .msg_iov = &siov,
			     .msg_iovlen = 1,
			     .msg_control = out.b,
			     .msg_controllen = sizeof(out.b) };
	struct cmsghdr *cm = CMSG_FIRSTHDR(&sm);
	int sv[2], passed = 1, got = -1;

	LOOP_OPEN(&l);
	XT_REQUIRE(!socketpair(AF_UNIX, SOCK_SEQPACKET, 0, sv));
	XT_EQ(ut_loop_recvmsg(&l, &r.ev, sv[0], &m, MSG_CMSG_CLOEXEC), 0);
	cm->cmsg_level = SOL_SOCKET;
	cm->cmsg_type = SCM_RIGHTS;
	cm->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(cm), &passed, sizeof(int));
	XT_EQ(sendmsg(sv[1], &sm, 0), 3);
	until(&l, &r, 1000);
	XT_EQ(r.n, 1);
	XT_EQ(r.res, 3);
	cm = CMSG_FIRSTHDR(&m);
	XT_REQUIRE(cm && cm->cmsg_type == SCM_RIGHTS);
	memcpy(&got, CMSG_DATA(cm), sizeof(int));
	XT_CHECK(got > 2);
	XT_EQ(fcntl(got, F_GETFD) & FD_CLOEXEC, FD_CLOEXEC);
	close(got);
	ut_loop_fini(&l);
	close(sv[0]);
	close(sv[1]);
}

static void test_timeouts(void)
{
	struct __kernel_timespec t50 = { .tv_nsec = 50000000 }, t10 = { .tv_nsec = 10000000 };
	struct probe a = { .ev.fn = on_done }, b = { .ev.fn = on_done };
	struct ut_loop l;
	double t0 = ut_now();

	LOOP_OPEN(&l);
	XT_EQ(ut_loop_timeout(&l, &a.ev, &t50), 0);
	XT_EQ(ut_loop_timeout(&l, &b.ev, &t10), 0);
	until(&l, &b, 1000);
	XT_EQ(b.n, 1);
	XT_EQ(b.res, -ETIME);
	XT_EQ(a.n, 0);
	until(&l, &a, 1000);
	XT_EQ(a.n, 1);
	XT_EQ(a.res, -ETIME);
	XT_CHECK(ut_now() - t0 >= 0.045);
	ut_loop_fini(&l);
}

static void test_cancel(void)
{
	struct __kernel_timespec t = { .tv_sec = 10 };
	struct probe r = { .ev.fn = on_done }, tm = { .ev.fn = on_done };
	struct ut_loop l;
	int sv[2];
	char buf[8];

	LOOP_OPEN(&l);
	XT_REQUIRE(!socketpair(AF_UNIX, SOCK_STREAM, 0, sv));
	XT_EQ(ut_loop_recv(&l, &r.ev, sv[0], buf, sizeof(buf)), 0);
	XT_EQ(ut_loop_timeout(&l, &tm.ev, &t), 0);
	ut_loop_drain(&l);
	XT_EQ(ut_loop_cancel(&l, &r.ev), 0);
	XT_EQ(ut_loop_cancel(&l, &tm.ev), 0);
	until(&l, &r, 1000);
	until(&l, &tm, 1000);
	XT_EQ(r.n, 1);
	XT_EQ(r.res, -ECANCELED);
	XT_EQ(tm.n, 1);
	XT_EQ(tm.res, -ECANCELED);
	/* Nothing pending: a cancel completes nothing. */
	ut_loop_cancel(&l, &r.ev);
	ut_loop_drain(&l);
	XT_EQ(r.n, 1);
	ut_loop_fini(&l);
	close(sv[0]);
	close(sv[1]);
}

/* A listening socket served, then stopped as server.c does: shutdown, close, cancel. */
static void test_accept_and_stop(void)
{
	struct sockaddr_un sun = { .sun_family = AF_UNIX };
	struct probe a = { .ev.fn = on_done };
	struct ut_loop l;
	int ls, c;

	LOOP_OPEN(&l);
	snprintf(sun.sun_path, sizeof(sun.sun_path), "/tmp/xpile-loop-%d.sock", (int)getpid());
	unlink(sun.sun_path);
	ls = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	XT_REQUIRE(!bind(ls, (struct sockaddr *)&sun, sizeof(sun)) && !listen(ls, 4));
	XT_EQ(ut_loop_accept(&l, &a.ev, ls), 0);
	c = socket(AF_UNIX, SOCK_STREAM, 0);
	XT_EQ(connect(c, (struct sockaddr *)&sun, sizeof(sun)), 0);
	until(&l, &a, 1000);
	XT_EQ(a.n, 1);
	XT_CHECK(a.res > 2);
	XT_EQ(fcntl(a.res, F_GETFD) & FD_CLOEXEC, FD_CLOEXEC);
	close(a.res);
	close(c);
	a.n = 0;
	XT_EQ(ut_loop_accept(&l, &a.ev, ls), 0);
	ut_loop_drain(&l);
	shutdown(ls, SHUT_RDWR);
	close(ls);
	ut_loop_cancel(&l, &a.ev);
	until(&l, &a, 1000);
	ut_loop_drain(&l);
	XT_EQ(a.n, 1); /* once, whichever way it ended */
	XT_CHECK(a.res < 0);
	unlink(sun.sun_path);
	ut_loop_fini(&l);
}

int main(void)
{
	static const enum ut_loop_kind kinds[] = { UT_LOOP_EPOLL, UT_LOOP_URING };

	for (int k = 0; k < 2; k++) {
		kind = kinds[k];
		fprintf(stderr, "== %s\n", k ? "io_uring" : "epoll");
		XT_RUN(test_recv_read_poll);
		XT_RUN(test_poll_out);
		XT_RUN(test_recvmsg_fd);
		XT_RUN(test_timeouts);
		XT_RUN(test_cancel);
		XT_RUN(test_accept_and_stop);
	}
	return xt_done();
}
