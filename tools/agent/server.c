// SPDX-License-Identifier: BSD-3-Clause
/*
 * What the control socket (ctl.c) and the device-plugin sockets (dp.c) share: a
 * listening socket whose accept is an io_uring operation re-armed after each
 * completion, the list of its open connections, and a shutdown that never frees what
 * the ring still refers to (a pending accept is cancelled and its completion frees
 * the server; connections are shut down and their pending receive frees each).
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <sys/socket.h>
#include <sys/stat.h>

#include "agent.h"

static void srv_arm(struct ag_srv *s)
{
	struct io_uring_sqe *sqe = ag_loop_sqe(&s->a->loop, &s->ev);

	if (sqe) {
		io_uring_prep_accept(sqe, s->fd, NULL, NULL, SOCK_CLOEXEC);
		s->accepting = true;
	}
}

static void srv_accept(struct ag_loop *l, struct ag_ev *ev, int res, unsigned int flags)
{
	struct ag_srv *s = (struct ag_srv *)ev;

	s->accepting = false;
	if (s->closing) {
		if (res >= 0)
			close(res);
		s->release(s);
		return;
	}
	if (res < 0) {
		if (res != -EINTR && res != -ECONNABORTED && res != -EAGAIN)
			ag_log("%s: accept: %s", s->name, strerror(-res));
	} else if (s->accepted(s, res)) {
		/* A refused client sees its connection closed, never a silent wait. */
		close(res);
	}
	srv_arm(s);
}

void ag_srv_start(struct ag_srv *s, struct agent *a, int fd)
{
	s->ev.fn = srv_accept;
	s->a = a;
	s->fd = fd;
	srv_arm(s);
}

void ag_srv_stop(struct ag_srv *s)
{
	for (struct ag_conn *c = s->conns; c; c = c->next) {
		c->srv = NULL;
		c->pprev = NULL;
		shutdown(c->fd, SHUT_RDWR);
	}
	s->conns = NULL;
	shutdown(s->fd, SHUT_RDWR);
	close(s->fd);
	if (s->accepting) {
		struct io_uring_sqe *sqe = ag_loop_sqe(&s->a->loop, NULL);

		s->closing = true;
		if (sqe)
			io_uring_prep_cancel(sqe, &s->ev, 0);
		io_uring_submit(&s->a->loop.ring);
	} else {
		s->release(s);
	}
}

void ag_conn_add(struct ag_srv *s, struct ag_conn *c, int fd, ag_ev_fn on_recv)
{
	c->ev.fn = on_recv;
	c->a = s->a;
	c->srv = s;
	c->fd = fd;
	c->last = ag_now();
	c->next = s->conns;
	if (c->next)
		c->next->pprev = &c->next;
	c->pprev = &s->conns;
	s->conns = c;
}

void ag_conn_close(struct ag_conn *c)
{
	if (c->pprev) {
		*c->pprev = c->next;
		if (c->next)
			c->next->pprev = c->pprev;
	}
	c->pprev = NULL;
	close(c->fd);
}

void ag_srv_expire(struct ag_srv *s, double now, double (*limit)(const struct ag_conn *c))
{
	for (struct ag_conn *c = s ? s->conns : NULL; c; c = c->next)
		if (now - c->last > limit(c))
			shutdown(c->fd, SHUT_RDWR); /* its receive completes with 0: freed */
}

int ag_mkdir_p(const char *dir)
{
	char p[PATH_MAX];

	if (snprintf(p, sizeof(p), "%s", dir) >= (int)sizeof(p))
		return -ENAMETOOLONG;
	for (char *s = p + 1; *s; s++)
		if (*s == '/') {
			*s = 0;
			if (mkdir(p, 0755) && errno != EEXIST)
				return -errno;
			*s = '/';
		}
	if (mkdir(p, 0755) && errno != EEXIST)
		return -errno;
	return 0;
}
