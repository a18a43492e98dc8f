/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A line protocol over a server (server.h), as the agent's control socket speaks it
 * (lines.c): who may connect (SO_PEERCRED), bounded request lines, one reply line per
 * request, deadlines. A line holds no NUL byte and is at most @max bytes; a longer one
 * gets one error and the connection is closed (the stream cannot be trusted after it),
 * as is a peer that is not allowed. Refused peers are drained, not reset, so they read
 * why before the close. What a line means and how an error is worded are the
 * protocol's (the callbacks).
 */
#ifndef XPILE_UTIL_LINES_H
#define XPILE_UTIL_LINES_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/socket.h>

#include "server.h"

#define UT_LINE_MAX 4096

enum ut_line_err {
	UT_LINE_PEER, /* the peer may not connect (refused, then drained) */
	UT_LINE_NUL, /* a line holds a NUL byte (the connection goes on) */
	UT_LINE_EMPTY, /* a blank line (goes on) */
	UT_LINE_LONG, /* a line over the bound (refused, then drained) */
};

struct ut_line_conn;

struct ut_line_srv {
	struct ut_srv srv; /* first: name, release; accepted is the line server's */
	size_t max; /* bytes a line may hold (at most UT_LINE_MAX) */
	double idle_s; /* a silent connection's time */
	double drain_s; /* a refused peer's time to hang up */
	/* May @cr connect? */
	bool (*peer_ok)(struct ut_line_srv *ls, const struct ucred *cr);
	/* One request line, without its newline; replies go out with ut_line_send(). */
	void (*line)(struct ut_line_conn *c, char *line);
	/* The one reply that says why (@cr: the peer, for UT_LINE_PEER). */
	void (*error)(struct ut_line_conn *c, enum ut_line_err err, const struct ucred *cr);
};

struct ut_line_conn {
	struct ut_conn conn; /* first: the completion finds the conn */
	struct ut_line_srv *ls;
	bool done; /* the connection goes once its line is answered */
	bool draining; /* refused: its input is read and dropped until it hangs up */
	size_t len;
	char buf[UT_LINE_MAX + 1];
};

/* Serves @fd (listening) on @l as @ls says; @ctx is the program's (srv.ctx). */
void ut_line_serve(struct ut_line_srv *ls, struct ut_loop *l, void *ctx, int fd);
/* One reply line: @s (@n bytes) and a newline, without waiting: a peer that does not
 * read loses its connection, not the loop's time. */
void ut_line_send(struct ut_line_conn *c, const char *s, size_t n);
/* Closes the connections silent for longer than their bound. */
void ut_line_expire(struct ut_line_srv *ls, double now);

#endif /* XPILE_UTIL_LINES_H */
