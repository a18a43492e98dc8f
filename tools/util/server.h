/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A listening socket served by the loop (loop.h), and its connections (server.c): the
 * accept is an io_uring operation re-armed after each completion, the open connections
 * are listed, the silent ones expire, and a shutdown never frees what the ring still
 * refers to (a pending accept is cancelled and its completion frees the server;
 * connections are shut down and their pending receive frees each). The agent's control
 * and device-plugin sockets are two; lines.h is the line protocol over it.
 */
#ifndef XPILE_UTIL_SERVER_H
#define XPILE_UTIL_SERVER_H

#include <stdbool.h>

#include "loop.h"

struct ut_srv;

struct ut_conn {
	struct ut_ev ev; /* its pending receive; first: the completion finds the conn */
	struct ut_conn *next, **pprev;
	struct ut_loop *loop;
	void *ctx; /* the server's */
	struct ut_srv *srv; /* NULL once the server is gone */
	int fd;
	double last; /* when it last spoke (ut_now()) */
};

struct ut_srv {
	struct ut_ev ev; /* accept; first, likewise */
	struct ut_loop *loop;
	void *ctx; /* the program's, for its callbacks */
	char name[32]; /* for the log */
	int fd;
	bool closing, accepting;
	struct ut_conn *conns;
	/* A new connection: 0 when taken (ut_conn_add), else it is closed at once. */
	int (*accepted)(struct ut_srv *s, int fd);
	/* Frees the server once the ring no longer refers to it. */
	void (*release)(struct ut_srv *s);
};

/* Serves @fd (listening) on @l: accepts until ut_srv_stop(), @s->accepted for each. */
void ut_srv_start(struct ut_srv *s, struct ut_loop *l, void *ctx, int fd);
/* Shuts every connection down (each receive's completion frees its conn), closes the
 * listening socket; @s->release runs now or when the cancelled accept completes. */
void ut_srv_stop(struct ut_srv *s);
void ut_conn_add(struct ut_srv *s, struct ut_conn *c, int fd, ut_ev_fn on_recv);
/* Unlinks @c (if still listed) and closes its fd; the caller frees it. */
void ut_conn_close(struct ut_conn *c);
/* Shuts down the connections silent for longer than limit(conn) seconds. */
void ut_srv_expire(struct ut_srv *s, double now, double (*limit)(const struct ut_conn *c));

#endif /* XPILE_UTIL_SERVER_H */
