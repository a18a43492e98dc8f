// SPDX-License-Identifier: BSD-3-Clause
/* A line protocol over a server (lines.h): peers, bounded lines, deadlines. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "clock.h"
#include "lines.h"
#include "say.h"

void ut_line_send(struct ut_line_conn *c, const char *s, size_t n)
{
	size_t off = 0;

	while (off < n) {
		ssize_t w = send(c->conn.fd, s + off, n - off, MSG_DONTWAIT | MSG_NOSIGNAL);

		if (w <= 0) {
			c->done = true;
			break;
		}
		off += (size_t)w;
	}
	if (!n || c->done || send(c->conn.fd, "\n", 1, MSG_DONTWAIT | MSG_NOSIGNAL) != 1)
		c->done = true;
}

static void arm_recv(struct ut_line_conn *c)
{
	ut_loop_recv(c->conn.loop, &c->conn.ev, c->conn.fd, c->buf + (c->draining ? 0 : c->len),
		     c->ls->max + 1 - (c->draining ? 0 : c->len));
}

static void conn_free(struct ut_line_conn *c)
{
	ut_conn_close(&c->conn);
	free(c);
}

static void conn_recv(struct ut_loop *l, struct ut_ev *ev, int res, unsigned int flags)
{
	struct ut_line_conn *c = (struct ut_line_conn *)ev;
	char *nl;

	if (res <= 0 || !c->conn.srv) {
		conn_free(c);
		return;
	}
	c->conn.last = ut_now();
	if (c->draining) {
		/* Closing with unread input would reset the peer before it reads the error. */
		arm_recv(c);
		return;
	}
	c->len += (size_t)res;
	while (!c->done && (nl = memchr(c->buf, '\n', c->len))) {
		size_t used = (size_t)(nl - c->buf) + 1;

		*nl = 0;
		if (strlen(c->buf) != used - 1)
			c->ls->error(c, UT_LINE_NUL, NULL);
		else if (!c->buf[strspn(c->buf, " \t\r")])
			c->ls->error(c, UT_LINE_EMPTY, NULL);
		else
			c->ls->line(c, c->buf);
		memmove(c->buf, c->buf + used, c->len - used);
		c->len -= used;
	}
	if (!c->done && c->len > c->ls->max) {
		c->ls->error(c, UT_LINE_LONG, NULL);
		shutdown(c->conn.fd, SHUT_WR);
		c->draining = true;
		c->len = 0;
	}
	if (c->done || l->stop)
		conn_free(c);
	else
		arm_recv(c);
}

static int line_accepted(struct ut_srv *s, int fd)
{
	struct ut_line_srv *ls = (struct ut_line_srv *)s;
	struct ut_line_conn *c = calloc(1, sizeof(*c));
	struct ucred cr = { 0 };
	socklen_t sl = sizeof(cr);

	if (!c)
		return -ENOMEM;
	c->ls = ls;
	/* Added first: the error goes out on it. */
	ut_conn_add(s, &c->conn, fd, conn_recv);
	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cr, &sl) || !ls->peer_ok(ls, &cr)) {
		if (sl != sizeof(cr))
			memset(&cr, 0, sizeof(cr));
		ls->error(c, UT_LINE_PEER, &cr);
		if (c->done)
			ut_warn("%s: refused peer did not take its error", s->name);
		ut_warn("%s: peer uid %u gid %u pid %d refused", s->name, cr.uid, cr.gid, cr.pid);
		/* Its request is read and dropped: a close with unread input would reset
		 * the peer before it reads why. */
		shutdown(fd, SHUT_WR);
		c->done = false;
		c->draining = true;
	}
	arm_recv(c);
	return 0;
}

void ut_line_serve(struct ut_line_srv *ls, struct ut_loop *l, void *ctx, int fd)
{
	if (!ls->max || ls->max > UT_LINE_MAX)
		ls->max = UT_LINE_MAX;
	ls->srv.accepted = line_accepted;
	ut_srv_start(&ls->srv, l, ctx, fd);
}

static double line_limit(const struct ut_conn *c)
{
	const struct ut_line_conn *lc = (const struct ut_line_conn *)c;

	return lc->draining ? lc->ls->drain_s : lc->ls->idle_s;
}

void ut_line_expire(struct ut_line_srv *ls, double now)
{
	if (ls)
		ut_srv_expire(&ls->srv, now, line_limit);
}
