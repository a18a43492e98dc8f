/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * gRPC over HTTP/2 on Unix sockets, inside the agent's one-thread loop: libnghttp2
 * does HTTP/2 from memory buffers (no I/O of its own, no threads), the loop receives
 * and sends; what gRPC adds to HTTP/2 is small and lives here: the 5-byte message
 * prefix (a compressed flag and a big-endian length), the request headers
 * (content-type application/grpc, te: trailers) and the status in the trailers
 * (grpc-status, grpc-message). Messages are opaque bytes: the callers encode and
 * decode them with protobuf-c.
 *
 * Server side: ag_grpc_serve() takes a listening socket and a handler; each call
 * (one HTTP/2 stream) reaches the handler once its request is complete, and is
 * answered by ag_grpc_finish() (unary), or by ag_grpc_send() as often as the handler
 * likes and ag_grpc_finish() at the end (a server stream, like ListAndWatch). A call
 * the peer abandons, or whose connection closes, is handed to @gone, after which the
 * handler must not use it.
 *
 * Client side: ag_grpc_unary() connects, sends one request and calls @done once,
 * with the status and the reply, or an error status (UNAVAILABLE when the socket
 * does not answer, DEADLINE_EXCEEDED after the timeout).
 */
#ifndef XPILE_AGENT_GRPC_H
#define XPILE_AGENT_GRPC_H

#include <stddef.h>
#include <stdint.h>

struct agent;
struct ag_grpc_call;
struct ag_grpc_srv;
struct ag_h2;

/* The status codes the agent uses (grpc/status.h's numbers). */
enum ag_grpc_status {
	AG_GRPC_OK = 0,
	AG_GRPC_CANCELLED = 1,
	AG_GRPC_UNKNOWN = 2,
	AG_GRPC_INVALID_ARGUMENT = 3,
	AG_GRPC_DEADLINE_EXCEEDED = 4,
	AG_GRPC_NOT_FOUND = 5,
	AG_GRPC_PERMISSION_DENIED = 7,
	AG_GRPC_RESOURCE_EXHAUSTED = 8,
	AG_GRPC_FAILED_PRECONDITION = 9,
	AG_GRPC_UNIMPLEMENTED = 12,
	AG_GRPC_INTERNAL = 13,
	AG_GRPC_UNAVAILABLE = 14,
};

#define AG_GRPC_MAX_MSG (4u << 20) /* a request or reply larger than this is refused */

struct ag_grpc_handler {
	void *ctx;
	/* A complete request to @path ("/v1beta1.DevicePlugin/Allocate"): @msg is its one
	 * message (NULL, 0 for an empty one). */
	void (*call)(void *ctx, struct ag_grpc_call *c, const char *path, const uint8_t *msg,
		     size_t len);
	/* @c is going away (peer reset, connection closed) before ag_grpc_finish(). */
	void (*gone)(void *ctx, struct ag_grpc_call *c);
};

/* Serves gRPC on @fd (listening, Unix stream); @name is for the log. NULL on ENOMEM
 * (then @fd is closed). */
struct ag_grpc_srv *ag_grpc_serve(struct agent *a, int fd, const char *name,
				  const struct ag_grpc_handler *h);
/* Closes the listening socket and every connection (their calls go to @gone first). */
void ag_grpc_srv_stop(struct ag_grpc_srv *s);
/* Connections the server holds (for a test or a log). */
unsigned int ag_grpc_srv_conns(const struct ag_grpc_srv *s);

/* Queues one reply message on @c (the response headers go first). 0, or -ENOMEM /
 * -EMSGSIZE / -EPIPE (the call is finished or gone). */
int ag_grpc_send(struct ag_grpc_call *c, const uint8_t *msg, size_t len);
/* Ends @c: @msg (if not NULL) as its last message, then the trailers with @status and
 * @message (one line, or NULL). @c is freed by the library once the peer has it. */
void ag_grpc_finish(struct ag_grpc_call *c, int status, const char *message, const uint8_t *msg,
		    size_t len);
/* What the handler keeps with a call (a list link, say). */
void ag_grpc_call_set_user(struct ag_grpc_call *c, void *user);
void *ag_grpc_call_user(const struct ag_grpc_call *c);

/* A client call's end: @status, its message ("" if none), the reply message. */
typedef void (*ag_grpc_done_fn)(void *ctx, int status, const char *message, const uint8_t *msg,
				size_t len);

/* Calls @path on the gRPC server at the Unix socket @sock with @req; @done runs once,
 * from the loop (never from within this call), at most @timeout seconds later. 0, or a
 * negative errno when the call could not start (then @done never runs). Outstanding
 * calls are cut short by ag_grpc_clients_stop(), @done seeing CANCELLED. */
int ag_grpc_unary(struct agent *a, const char *sock, const char *path, const uint8_t *req,
		  size_t len, double timeout, ag_grpc_done_fn done, void *ctx);
/* The loop's tick: client calls past their deadline end with DEADLINE_EXCEEDED. */
void ag_grpc_tick(struct agent *a, double now);
void ag_grpc_clients_stop(struct agent *a);

#endif /* XPILE_AGENT_GRPC_H */
