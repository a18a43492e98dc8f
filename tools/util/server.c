// SPDX-License-Identifier: BSD-3-Clause
/*
 * A listening socket served by the loop, and its connections (server.h): what the
 * agent's control socket and device-plugin sockets share. The accept is a loop
 * operation re-armed after each completion.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <sys/socket.h>

#include "clock.h"
#include "hlist.h"
#include "say.h"
#include "server.h"

static void srv_arm(struct ut_srv *s)
{
	s->accepting = !ut_loop_accept(s->loop, &s->ev, s->fd);
}

static void srv_accept(struct ut_loop *l, struct ut_ev *ev, int res, unsigned int flags)
{
	struct ut_srv *s = (struct ut_srv *)ev;

	s->accepting = false;
	if (s->closing) {
		if (res >= 0)
			close(res);
		s->release(s);
		return;
	}
	if (res < 0) {
		if (res != -EINTR && res != -ECONNABORTED && res != -EAGAIN)
			ut_warn("%s: accept: %s", s->name, strerror(-res));
	} else if (s->accepted(s, res)) {
		/* A refused client sees its connection closed, never a silent wait. */
		close(res);
	}
	srv_arm(s);
}

void ut_srv_start(struct ut_srv *s, struct ut_loop *l, void *ctx, int fd)
{
	s->ev.fn = srv_accept;
	s->loop = l;
	s->ctx = ctx;
	s->fd = fd;
	srv_arm(s);
}

void ut_srv_stop(struct ut_srv *s)
{
	for (struct ut_conn *c = s->conns; c; c = c->next) {
		c->srv = NULL;
		c->pprev = NULL;
		shutdown(c->fd, SHUT_RDWR);
	}
	s->conns = NULL;
	shutdown(s->fd, SHUT_RDWR);
	close(s->fd);
	if (s->accepting) {
		s->closing = true;
		ut_loop_cancel(s->loop, &s->ev);
	} else {
		s->release(s);
	}
}

void ut_conn_add(struct ut_srv *s, struct ut_conn *c, int fd, ut_ev_fn on_recv)
{
	c->ev.fn = on_recv;
	c->loop = s->loop;
	c->ctx = s->ctx;
	c->srv = s;
	c->fd = fd;
	c->last = ut_now();
	UT_HLIST_ADD(&s->conns, c, next, pprev);
}

void ut_conn_close(struct ut_conn *c)
{
	if (c->pprev)
		UT_HLIST_DEL(c, next, pprev);
	c->pprev = NULL;
	close(c->fd);
}

void ut_srv_expire(struct ut_srv *s, double now, double (*limit)(const struct ut_conn *c))
{
	for (struct ut_conn *c = s ? s->conns : NULL; c; c = c->next)
		if (now - c->last > limit(c))
			shutdown(c->fd, SHUT_RDWR); /* its receive completes with 0: freed */
}
