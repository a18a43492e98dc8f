// SPDX-License-Identifier: BSD-3-Clause
/*
 * The loop's epoll back end (loop.h), for where io_uring is refused. An operation
 * waits for its fd's readiness (one-shot), is then carried out with a non-blocking
 * system call (again on EAGAIN), and its result goes to a completion queue that
 * loop.c dispatches exactly as io_uring's. Each waiting operation holds a duplicate
 * of its fd, as io_uring holds a file reference: a caller may close its fd with the
 * operation pending (a server's stop: shutdown, close, cancel) and the registration
 * is neither lost nor confused with a new file that reuses the number. Timeouts are
 * deadlines that bound epoll_wait. Callbacks run only from dispatch, never from a
 * batch of epoll events, so no event can name an operation that is gone.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/epoll.h>

#include "clock.h"
#include "loop_be.h"

struct ep_op {
	struct ut_ev *ev;
	struct ut_op op;
	int fd; /* our duplicate of op.fd; -1 for a timeout */
	double deadline; /* UT_OP_TIMEOUT, ut_now() seconds */
	int res;
	struct ep_op *next, **pprev; /* waiting on its fd, or its deadline */
	struct ep_op *qnext; /* completed, not yet dispatched */
};

struct ep_loop {
	int epfd;
	struct ep_op *waiting, *timers;
	struct ep_op *done, **done_tail;
};

static void link_op(struct ep_op **head, struct ep_op *o)
{
	o->next = *head;
	if (o->next)
		o->next->pprev = &o->next;
	o->pprev = head;
	*head = o;
}

/* Off its list, out of epoll, its duplicate closed; onto the completion queue. */
static void complete(struct ep_loop *p, struct ep_op *o, int res)
{
	*o->pprev = o->next;
	if (o->next)
		o->next->pprev = o->pprev;
	if (o->fd >= 0) {
		epoll_ctl(p->epfd, EPOLL_CTL_DEL, o->fd, NULL);
		close(o->fd);
		o->fd = -1;
	}
	o->res = res;
	o->qnext = NULL;
	*p->done_tail = o;
	p->done_tail = &o->qnext;
}

static int ep_init(struct ut_loop *l, unsigned int entries, char *why, size_t len)
{
	struct ep_loop *p = calloc(1, sizeof(*p));

	if (!p)
		return -ENOMEM;
	p->epfd = epoll_create1(EPOLL_CLOEXEC);
	if (p->epfd < 0) {
		int err = -errno;

		free(p);
		return err;
	}
	p->done_tail = &p->done;
	l->priv = p;
	return 0;
}

static void free_list(struct ep_op *o, bool queue)
{
	while (o) {
		struct ep_op *n = queue ? o->qnext : o->next;

		if (o->fd >= 0)
			close(o->fd);
		free(o);
		o = n;
	}
}

static void ep_fini(struct ut_loop *l)
{
	struct ep_loop *p = l->priv;

	free_list(p->waiting, false);
	free_list(p->timers, false);
	free_list(p->done, true);
	close(p->epfd);
	free(p);
	l->priv = NULL;
}

static int ep_submit(struct ut_loop *l, struct ut_ev *ev, const struct ut_op *op)
{
	struct ep_loop *p = l->priv;
	struct ep_op *o = calloc(1, sizeof(*o));
	struct epoll_event e = { .events = EPOLLIN | EPOLLONESHOT };
	int err;

	if (!o)
		return -ENOMEM;
	o->ev = ev;
	o->op = *op;
	o->fd = -1;
	if (op->kind == UT_OP_TIMEOUT) {
		o->deadline = ut_now() + (double)op->ts->tv_sec + (double)op->ts->tv_nsec / 1e9;
		link_op(&p->timers, o);
		return 0;
	}
	o->fd = fcntl(op->fd, F_DUPFD_CLOEXEC, 0);
	if (op->kind == UT_OP_POLL_OUT)
		e.events = EPOLLOUT | EPOLLONESHOT;
	e.data.ptr = o;
	if (o->fd < 0 || epoll_ctl(p->epfd, EPOLL_CTL_ADD, o->fd, &e)) {
		err = -errno;
		if (o->fd >= 0)
			close(o->fd);
		free(o);
		return err;
	}
	link_op(&p->waiting, o);
	return 0;
}

static int ep_cancel(struct ut_loop *l, struct ut_ev *ev)
{
	struct ep_loop *p = l->priv;

	for (int k = 0; k < 2; k++)
		for (struct ep_op *o = k ? p->timers : p->waiting; o; o = o->next)
			if (o->ev == ev) {
				complete(p, o, -ECANCELED);
				return 0;
			}
	return -ENOENT;
}

/* @o's fd is ready (@events): carries the operation out, or waits again. */
static void perform(struct ep_loop *p, struct ep_op *o, unsigned int events)
{
	const struct ut_op *op = &o->op;
	ssize_t n = -1;

	switch (op->kind) {
	case UT_OP_ACCEPT:
		n = accept4(o->fd, NULL, NULL, SOCK_CLOEXEC);
		break;
	case UT_OP_RECV:
		n = recv(o->fd, op->buf, op->len, MSG_DONTWAIT);
		break;
	case UT_OP_RECVMSG:
		n = recvmsg(o->fd, op->msg, op->flags | MSG_DONTWAIT);
		break;
	case UT_OP_READ:
		n = read(o->fd, op->buf, op->len);
		break;
	case UT_OP_POLL_IN:
		n = (ssize_t)(events & (EPOLLIN | EPOLLERR | EPOLLHUP)); /* poll()'s bits */
		break;
	case UT_OP_POLL_OUT:
		n = (ssize_t)(events & (EPOLLOUT | EPOLLERR | EPOLLHUP));
		break;
	case UT_OP_TIMEOUT:
		return;
	}
	if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
		struct epoll_event e = { .events = EPOLLIN | EPOLLONESHOT, .data.ptr = o };

		if (!epoll_ctl(p->epfd, EPOLL_CTL_MOD, o->fd, &e))
			return;
	}
	complete(p, o, n < 0 ? -errno : (int)n);
}

static int ep_wait(struct ut_loop *l, int timeout_ms)
{
	struct ep_loop *p = l->priv;
	struct epoll_event evs[64];
	double now = ut_now();
	int n, t = p->done ? 0 : timeout_ms;

	for (struct ep_op *o = p->timers; o && t; o = o->next) {
		/* Rounded up: waking before the deadline would only wait again. */
		int ms = o->deadline <= now ? 0 : (int)((o->deadline - now) * 1e3) + 1;

		if (t < 0 || ms < t)
			t = ms;
	}
	n = epoll_wait(p->epfd, evs, 64, t);
	if (n < 0)
		return -errno;
	for (int k = 0; k < n; k++)
		perform(p, evs[k].data.ptr, evs[k].events);
	now = ut_now();
	for (struct ep_op *o = p->timers, *nx; o; o = nx) {
		nx = o->next;
		if (o->deadline <= now)
			complete(p, o, -ETIME);
	}
	return p->done ? 0 : -ETIME;
}

static bool ep_next(struct ut_loop *l, struct ut_cqe *c)
{
	struct ep_loop *p = l->priv;
	struct ep_op *o = p->done;

	if (!o)
		return false;
	p->done = o->qnext;
	if (!p->done)
		p->done_tail = &p->done;
	c->ev = o->ev;
	c->res = o->res;
	c->flags = 0;
	free(o);
	return true;
}

const struct ut_loop_be ut_loop_epoll = {
	.name = "epoll",
	.init = ep_init,
	.fini = ep_fini,
	.submit = ep_submit,
	.cancel = ep_cancel,
	.wait = ep_wait,
	.next = ep_next,
};
