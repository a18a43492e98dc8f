// SPDX-License-Identifier: BSD-3-Clause
/*
 * gRPC over HTTP/2 in the agent's loop (grpc.h has the contract). One struct ag_h2
 * per connection: a receive always pending in the ring (its completion feeds
 * nghttp2_session_mem_recv), the bytes nghttp2 wants out copied to a buffer and sent
 * at once with MSG_DONTWAIT; what the socket does not take waits for a POLLOUT
 * completion. A connection is freed only when no operation of the ring refers to it:
 * closing shuts the socket down, and the last completion frees it.
 */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <nghttp2/nghttp2.h>

#include "agent.h"
#include "grpc.h"
#include "hlist.h"

#define H2_IN_BUF 16384
#define H2_OUT_MAX (8u << 20) /* queued output past this: the peer does not read, close */
#define GRPC_PREFIX 5

struct ag_grpc_call {
	struct ag_h2 *h;
	struct ag_grpc_call *next;
	int32_t id;
	char path[128];
	uint8_t *in; /* the request body (server) or the reply body (client) */
	size_t in_len;
	uint8_t *out; /* framed messages not yet taken by nghttp2 */
	size_t out_len, out_off;
	bool responded; /* response headers submitted */
	bool deferred; /* the data source said DEFERRED: resume on new data */
	bool finished; /* ag_grpc_finish() called: trailers after the data */
	bool dispatched;
	int status;
	char message[160];
	void *user;
};

struct ag_h2 {
	struct ut_conn conn; /* first: the receive's completion finds the connection */
	struct ut_ev poll_ev;
	struct ag_h2 *cnext, **cpprev; /* client list (struct agent's grpc_clients) */
	nghttp2_session *ng;
	bool client, closing, polling, recving;
	bool in_recv; /* inside nghttp2_session_mem_recv: no mem_send from its callbacks */
	struct ag_grpc_srv *srv;
	struct ag_grpc_call *calls;
	uint8_t in[H2_IN_BUF];
	uint8_t *out;
	size_t out_len, out_cap;
	/* client */
	ag_grpc_done_fn done;
	void *done_ctx;
	double deadline;
	int http_status;
};

struct ag_grpc_srv {
	struct ut_srv srv; /* first: server.c's callbacks find it */
	struct ag_grpc_handler h;
	unsigned int nconns;
};

static void h2_flush(struct ag_h2 *h);
static void h2_close(struct ag_h2 *h);

/* ---- buffers ---- */

static int grow(uint8_t **buf, size_t *cap, size_t need)
{
	size_t n = *cap ? *cap : 1024;
	uint8_t *p;

	if (need <= *cap)
		return 0;
	while (n < need)
		n *= 2;
	p = realloc(*buf, n);
	if (!p)
		return -ENOMEM;
	*buf = p;
	*cap = n;
	return 0;
}

static int append(uint8_t **buf, size_t *len, size_t *cap, const void *src, size_t n)
{
	if (grow(buf, cap, *len + n))
		return -ENOMEM;
	memcpy(*buf + *len, src, n);
	*len += n;
	return 0;
}

/* The one message of a gRPC body (5-byte prefix, then the bytes): 0 and @msg/@len,
 * or -EINVAL (cut short, several messages, compressed: none of ours sends that). */
static int unframe(const uint8_t *b, size_t n, const uint8_t **msg, size_t *len)
{
	size_t m;

	*msg = NULL;
	*len = 0;
	if (!n)
		return 0;
	if (n < GRPC_PREFIX || b[0] != 0)
		return -EINVAL;
	m = (size_t)b[1] << 24 | (size_t)b[2] << 16 | (size_t)b[3] << 8 | b[4];
	if (m != n - GRPC_PREFIX)
		return -EINVAL;
	*msg = b + GRPC_PREFIX;
	*len = m;
	return 0;
}

static int frame(struct ag_grpc_call *c, const uint8_t *msg, size_t len)
{
	uint8_t p[GRPC_PREFIX] = { 0, (uint8_t)(len >> 24), (uint8_t)(len >> 16),
				   (uint8_t)(len >> 8), (uint8_t)len };
	size_t cap;

	if (len > AG_GRPC_MAX_MSG)
		return -EMSGSIZE;
	/* Compact what nghttp2 already took, then append. */
	if (c->out_off) {
		memmove(c->out, c->out + c->out_off, c->out_len - c->out_off);
		c->out_len -= c->out_off;
		c->out_off = 0;
	}
	cap = c->out ? c->out_len : 0;
	if (grow(&c->out, &cap, c->out_len + GRPC_PREFIX + len))
		return -ENOMEM;
	memcpy(c->out + c->out_len, p, GRPC_PREFIX);
	if (len)
		memcpy(c->out + c->out_len + GRPC_PREFIX, msg, len);
	c->out_len += GRPC_PREFIX + len;
	return 0;
}

/* ---- calls ---- */

static struct ag_grpc_call *call_find(struct ag_h2 *h, int32_t id)
{
	for (struct ag_grpc_call *c = h->calls; c; c = c->next)
		if (c->id == id)
			return c;
	return NULL;
}

static struct ag_grpc_call *call_new(struct ag_h2 *h, int32_t id)
{
	struct ag_grpc_call *c = calloc(1, sizeof(*c));

	if (!c)
		return NULL;
	c->h = h;
	c->id = id;
	c->status = -1;
	c->next = h->calls;
	h->calls = c;
	return c;
}

static void call_free(struct ag_grpc_call *c)
{
	struct ag_h2 *h = c->h;

	for (struct ag_grpc_call **p = &h->calls; *p; p = &(*p)->next)
		if (*p == c) {
			*p = c->next;
			break;
		}
	free(c->in);
	free(c->out);
	free(c);
}

void ag_grpc_call_set_user(struct ag_grpc_call *c, void *user)
{
	c->user = user;
}

void *ag_grpc_call_user(const struct ag_grpc_call *c)
{
	return c->user;
}

/* nghttp2 takes the reply body from here; trailers once the handler finished. */
static ssize_t data_read(nghttp2_session *ng, int32_t id, uint8_t *buf, size_t len, uint32_t *flags,
			 nghttp2_data_source *src, void *user)
{
	struct ag_grpc_call *c = src->ptr;
	size_t n = c->out_len - c->out_off;

	if (n > len)
		n = len;
	if (n) /* a call finished with no message has no buffer at all */
		memcpy(buf, c->out + c->out_off, n);
	c->out_off += n;
	if (c->out_off < c->out_len)
		return (ssize_t)n;
	c->out_off = c->out_len = 0;
	if (!c->finished) {
		if (n)
			return (ssize_t)n;
		c->deferred = true;
		return NGHTTP2_ERR_DEFERRED;
	}
	if (c->h->client) { /* the request: one message, then END_STREAM */
		*flags |= NGHTTP2_DATA_FLAG_EOF;
		return (ssize_t)n;
	}
	*flags |= NGHTTP2_DATA_FLAG_EOF | NGHTTP2_DATA_FLAG_NO_END_STREAM;
	{
		char st[12];
		nghttp2_nv tr[2] = {
			{ (uint8_t *)"grpc-status", (uint8_t *)st, 11, 0, NGHTTP2_NV_FLAG_NONE },
			{ (uint8_t *)"grpc-message", (uint8_t *)c->message, 12, strlen(c->message),
			  NGHTTP2_NV_FLAG_NONE },
		};

		tr[0].valuelen = (size_t)snprintf(st, sizeof(st), "%d", c->status);
		nghttp2_submit_trailer(ng, id, tr, c->message[0] ? 2 : 1);
	}
	return (ssize_t)n;
}

#define NV(n, v)                                                                               \
	{                                                                                      \
		(uint8_t *)(n), (uint8_t *)(v), sizeof(n) - 1, strlen(v), NGHTTP2_NV_FLAG_NONE \
	}

static int respond(struct ag_grpc_call *c)
{
	nghttp2_nv hd[] = { NV(":status", "200"), NV("content-type", "application/grpc") };
	nghttp2_data_provider dp = { .source.ptr = c, .read_callback = data_read };

	if (c->responded)
		return 0;
	c->responded = true;
	return nghttp2_submit_response(c->h->ng, c->id, hd, 2, &dp) ? -EIO : 0;
}

static void wake(struct ag_grpc_call *c)
{
	if (c->deferred) {
		c->deferred = false;
		nghttp2_session_resume_data(c->h->ng, c->id);
	}
}

int ag_grpc_send(struct ag_grpc_call *c, const uint8_t *msg, size_t len)
{
	int err;

	if (c->finished || c->h->closing)
		return -EPIPE;
	err = frame(c, msg, len);
	if (!err)
		err = respond(c);
	if (err)
		return err;
	wake(c);
	h2_flush(c->h);
	return 0;
}

void ag_grpc_finish(struct ag_grpc_call *c, int status, const char *message, const uint8_t *msg,
		    size_t len)
{
	if (c->finished)
		return;
	if (msg && frame(c, msg, len)) {
		status = AG_GRPC_RESOURCE_EXHAUSTED;
		message = "reply too large";
	}
	c->finished = true;
	c->status = status;
	/* grpc-message is percent-encoded text: ours is plain ASCII without '%'. */
	snprintf(c->message, sizeof(c->message), "%s", message ? message : "");
	for (char *p = c->message; *p; p++)
		if (*p == '%' || *p < 0x20 || *p > 0x7e)
			*p = ' ';
	if (c->h->closing)
		return; /* freed with the connection */
	respond(c);
	wake(c);
	h2_flush(c->h);
}

/* ---- nghttp2 callbacks ---- */

static int on_begin_headers(nghttp2_session *ng, const nghttp2_frame *f, void *user)
{
	struct ag_h2 *h = user;

	if (h->client || f->hd.type != NGHTTP2_HEADERS || f->headers.cat != NGHTTP2_HCAT_REQUEST)
		return 0;
	return call_new(h, f->hd.stream_id) ? 0 : NGHTTP2_ERR_CALLBACK_FAILURE;
}

static int on_header(nghttp2_session *ng, const nghttp2_frame *f, const uint8_t *name, size_t nlen,
		     const uint8_t *value, size_t vlen, uint8_t flags, void *user)
{
	struct ag_h2 *h = user;
	struct ag_grpc_call *c = call_find(h, f->hd.stream_id);

	if (!c || f->hd.type != NGHTTP2_HEADERS)
		return 0;
	if (!h->client && nlen == 5 && !memcmp(name, ":path", 5))
		snprintf(c->path, sizeof(c->path), "%.*s", (int)vlen, (const char *)value);
	else if (h->client && nlen == 7 && !memcmp(name, ":status", 7))
		h->http_status = atoi((const char *)value); /* NUL-terminated by nghttp2 */
	else if (h->client && nlen == 11 && !memcmp(name, "grpc-status", 11))
		c->status = atoi((const char *)value);
	else if (h->client && nlen == 12 && !memcmp(name, "grpc-message", 12))
		snprintf(c->message, sizeof(c->message), "%.*s", (int)vlen, (const char *)value);
	return 0;
}

static int on_data(nghttp2_session *ng, uint8_t flags, int32_t id, const uint8_t *data, size_t len,
		   void *user)
{
	struct ag_h2 *h = user;
	struct ag_grpc_call *c = call_find(h, id);
	size_t cap;

	if (!c)
		return 0;
	if (c->in_len + len > AG_GRPC_MAX_MSG + GRPC_PREFIX) {
		nghttp2_submit_rst_stream(ng, NGHTTP2_FLAG_NONE, id, NGHTTP2_REFUSED_STREAM);
		return 0;
	}
	cap = c->in ? c->in_len : 0;
	if (append(&c->in, &c->in_len, &cap, data, len))
		return NGHTTP2_ERR_CALLBACK_FAILURE;
	return 0;
}

static void client_done(struct ag_h2 *h, int status, const char *message, const uint8_t *msg,
			size_t len)
{
	ag_grpc_done_fn done = h->done;

	h->done = NULL;
	if (done)
		done(h->done_ctx, status, message, msg, len);
}

static void dispatch(struct ag_h2 *h, struct ag_grpc_call *c)
{
	const uint8_t *msg;
	size_t len;

	if (c->dispatched)
		return;
	c->dispatched = true;
	if (h->client) {
		int st = c->status;

		if (h->http_status != 200 && st < 0)
			st = AG_GRPC_UNKNOWN;
		if (st < 0)
			st = AG_GRPC_UNKNOWN; /* no grpc-status: not a gRPC server */
		if (unframe(c->in, c->in_len, &msg, &len)) {
			client_done(h, st ? st : AG_GRPC_INTERNAL,
				    st ? c->message : "malformed reply", NULL, 0);
		} else {
			client_done(h, st, st < 0 ? "no grpc-status" : c->message, msg, len);
		}
		h2_close(h);
		return;
	}
	if (unframe(c->in, c->in_len, &msg, &len)) {
		ag_grpc_finish(c, AG_GRPC_INTERNAL, "one uncompressed message per request", NULL,
			       0);
		return;
	}
	h->srv->h.call(h->srv->h.ctx, c, c->path, msg, len);
}

static int on_frame(nghttp2_session *ng, const nghttp2_frame *f, void *user)
{
	struct ag_h2 *h = user;
	struct ag_grpc_call *c;

	if ((f->hd.type != NGHTTP2_DATA && f->hd.type != NGHTTP2_HEADERS) ||
	    !(f->hd.flags & NGHTTP2_FLAG_END_STREAM))
		return 0;
	c = call_find(h, f->hd.stream_id);
	if (c)
		dispatch(h, c);
	return 0;
}

static int on_stream_close(nghttp2_session *ng, int32_t id, uint32_t code, void *user)
{
	struct ag_h2 *h = user;
	struct ag_grpc_call *c = call_find(h, id);

	if (!c)
		return 0;
	if (h->client) {
		if (!c->dispatched)
			client_done(h, AG_GRPC_UNAVAILABLE, "stream reset by the server", NULL, 0);
		h2_close(h);
	} else if (!c->finished && c->dispatched && h->srv->h.gone) {
		h->srv->h.gone(h->srv->h.ctx, c);
	}
	call_free(c);
	return 0;
}

static nghttp2_session_callbacks *h2_callbacks(void)
{
	nghttp2_session_callbacks *cb;

	if (nghttp2_session_callbacks_new(&cb))
		return NULL;
	nghttp2_session_callbacks_set_on_begin_headers_callback(cb, on_begin_headers);
	nghttp2_session_callbacks_set_on_header_callback(cb, on_header);
	nghttp2_session_callbacks_set_on_data_chunk_recv_callback(cb, on_data);
	nghttp2_session_callbacks_set_on_frame_recv_callback(cb, on_frame);
	nghttp2_session_callbacks_set_on_stream_close_callback(cb, on_stream_close);
	return cb;
}

/* ---- the connection and the loop ---- */

static void h2_maybe_free(struct ag_h2 *h)
{
	if (h->recving || h->polling)
		return;
	while (h->calls) {
		struct ag_grpc_call *c = h->calls;

		if (!h->client && c->dispatched && !c->finished && h->srv && h->srv->h.gone)
			h->srv->h.gone(h->srv->h.ctx, c);
		call_free(c);
	}
	if (h->client)
		client_done(h, AG_GRPC_UNAVAILABLE, "connection closed", NULL, 0);
	if (h->cpprev)
		UT_HLIST_DEL(h, cnext, cpprev);
	if (h->srv)
		h->srv->nconns--;
	ut_conn_close(&h->conn);
	nghttp2_session_del(h->ng);
	free(h->out);
	free(h);
}

static void h2_close(struct ag_h2 *h)
{
	if (h->closing)
		return;
	h->closing = true;
	/* Pending operations complete (recv with 0, poll with POLLHUP) and free it. */
	shutdown(h->conn.fd, SHUT_RDWR);
}

static void on_poll(struct ut_loop *l, struct ut_ev *ev, int res, unsigned int flags)
{
	struct ag_h2 *h = (struct ag_h2 *)((char *)ev - offsetof(struct ag_h2, poll_ev));

	h->polling = false;
	if (h->closing || res < 0 || (res & (POLLERR | POLLHUP))) {
		h2_close(h);
		h2_maybe_free(h);
		return;
	}
	h2_flush(h);
}

static void arm_poll(struct ag_h2 *h)
{
	if (h->polling)
		return;
	h->polling = !ut_loop_poll_out(h->conn.loop, &h->poll_ev, h->conn.fd);
	if (!h->polling)
		h2_close(h); /* cannot wait: the output would never go */
}

static void h2_flush(struct ag_h2 *h)
{
	const uint8_t *p;
	ssize_t n;

	if (h->closing || h->in_recv)
		return;
	while ((n = nghttp2_session_mem_send(h->ng, &p)) > 0) {
		if (h->out_len + (size_t)n > H2_OUT_MAX ||
		    append(&h->out, &h->out_len, &h->out_cap, p, (size_t)n)) {
			h2_close(h);
			return;
		}
	}
	if (n < 0) {
		h2_close(h);
		return;
	}
	while (h->out_len) {
		n = send(h->conn.fd, h->out, h->out_len, MSG_DONTWAIT | MSG_NOSIGNAL);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
			arm_poll(h);
			return;
		}
		if (n <= 0) {
			h2_close(h);
			return;
		}
		memmove(h->out, h->out + n, h->out_len - (size_t)n);
		h->out_len -= (size_t)n;
	}
	if (!nghttp2_session_want_read(h->ng) && !nghttp2_session_want_write(h->ng))
		h2_close(h);
}

static void arm_recv(struct ag_h2 *h)
{
	h->recving = !ut_loop_recv(h->conn.loop, &h->conn.ev, h->conn.fd, h->in, sizeof(h->in));
	if (!h->recving)
		h2_close(h);
}

static void on_recv(struct ut_loop *l, struct ut_ev *ev, int res, unsigned int flags)
{
	struct ag_h2 *h = (struct ag_h2 *)ev;
	ssize_t n;

	h->recving = false;
	if (res == -EINTR || res == -EAGAIN) {
		if (!h->closing)
			arm_recv(h);
		h2_maybe_free(h);
		return;
	}
	if (res <= 0 || h->closing || (!h->client && !h->conn.srv)) {
		h2_close(h);
		h2_maybe_free(h);
		return;
	}
	h->conn.last = ut_now();
	h->in_recv = true;
	n = nghttp2_session_mem_recv(h->ng, h->in, (size_t)res);
	h->in_recv = false;
	if (n < 0) {
		h2_close(h);
		h2_maybe_free(h);
		return;
	}
	h2_flush(h);
	if (!h->closing)
		arm_recv(h);
	h2_maybe_free(h);
}

static struct ag_h2 *h2_new(struct agent *a, int fd, bool client)
{
	nghttp2_session_callbacks *cb = h2_callbacks();
	nghttp2_settings_entry set[] = { { NGHTTP2_SETTINGS_MAX_CONCURRENT_STREAMS, 64 } };
	struct ag_h2 *h = calloc(1, sizeof(*h));
	nghttp2_option *opt = NULL;
	int err;

	if (!cb || !h || nghttp2_option_new(&opt)) {
		nghttp2_session_callbacks_del(cb);
		free(h);
		return NULL;
	}
	/* grpc-go (the kubelet's) sends the socket's path as :authority, which HTTP's
	 * rules refuse ('/'): take the headers as they come, check what we use. */
	nghttp2_option_set_no_http_messaging(opt, 1);
	err = client ? nghttp2_session_client_new2(&h->ng, cb, h, opt) :
		       nghttp2_session_server_new2(&h->ng, cb, h, opt);
	nghttp2_option_del(opt);
	nghttp2_session_callbacks_del(cb);
	if (err || nghttp2_submit_settings(h->ng, NGHTTP2_FLAG_NONE, set, 1)) {
		nghttp2_session_del(h->ng);
		free(h);
		return NULL;
	}
	h->client = client;
	h->conn.ev.fn = on_recv;
	h->conn.loop = &a->loop;
	h->conn.ctx = a;
	h->conn.fd = fd;
	h->conn.last = ut_now();
	h->poll_ev.fn = on_poll;
	return h;
}

/* ---- server ---- */

static int srv_accepted(struct ut_srv *s, int fd)
{
	struct ag_grpc_srv *g = (struct ag_grpc_srv *)s;
	struct ag_h2 *h;

	if (g->nconns >= 64 || !(h = h2_new(s->ctx, fd, false)))
		return -EBUSY;
	h->srv = g;
	g->nconns++;
	ut_conn_add(s, &h->conn, fd, on_recv);
	h2_flush(h); /* our SETTINGS */
	arm_recv(h);
	return 0;
}

static void srv_release(struct ut_srv *s)
{
	free(s);
}

struct ag_grpc_srv *ag_grpc_serve(struct agent *a, int fd, const char *name,
				  const struct ag_grpc_handler *h)
{
	struct ag_grpc_srv *g = calloc(1, sizeof(*g));

	if (!g) {
		close(fd);
		return NULL;
	}
	g->h = *h;
	snprintf(g->srv.name, sizeof(g->srv.name), "%s", name);
	g->srv.accepted = srv_accepted;
	g->srv.release = srv_release;
	ut_srv_start(&g->srv, &a->loop, a, fd);
	return g;
}

void ag_grpc_srv_stop(struct ag_grpc_srv *g)
{
	/* Calls still open go to @gone now: the handler forgets them at once. */
	for (struct ut_conn *c = g->srv.conns; c; c = c->next) {
		struct ag_h2 *h = (struct ag_h2 *)c;

		for (struct ag_grpc_call *k = h->calls; k; k = k->next)
			if (k->dispatched && !k->finished && g->h.gone) {
				k->finished = true;
				g->h.gone(g->h.ctx, k);
			}
		h->closing = true;
		h->srv = NULL; /* the server is freed before its connections */
	}
	ut_srv_stop(&g->srv);
}

unsigned int ag_grpc_srv_conns(const struct ag_grpc_srv *g)
{
	return g->nconns;
}

/* ---- client ---- */

int ag_grpc_unary(struct agent *a, const char *sock, const char *path, const uint8_t *req,
		  size_t len, double timeout, ag_grpc_done_fn done, void *ctx)
{
	struct sockaddr_un sun = { .sun_family = AF_UNIX };
	nghttp2_nv hd[] = { NV(":method", "POST"),
			    NV(":scheme", "http"),
			    NV(":path", path),
			    NV(":authority", "localhost"),
			    NV("content-type", "application/grpc"),
			    NV("te", "trailers"),
			    NV("user-agent", "xpile-agent/" XPILE_VERSION) };
	nghttp2_data_provider dp;
	struct ag_grpc_call *c;
	struct ag_h2 *h;
	int fd, err;
	int32_t id;

	if (strlen(sock) >= sizeof(sun.sun_path))
		return -ENAMETOOLONG;
	memcpy(sun.sun_path, sock, strlen(sock) + 1);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	/* A Unix socket connects at once or fails (no listener: ECONNREFUSED). */
	if (connect(fd, (struct sockaddr *)&sun, sizeof(sun))) {
		err = -errno;
		close(fd);
		return err;
	}
	h = h2_new(a, fd, true);
	if (!h) {
		close(fd);
		return -ENOMEM;
	}
	h->done = done;
	h->done_ctx = ctx;
	h->deadline = ut_now() + timeout;
	c = call_new(h, 0);
	if (!c || frame(c, req, len)) {
		nghttp2_session_del(h->ng);
		free(h);
		close(fd);
		return -ENOMEM;
	}
	c->finished = true;
	c->dispatched = false;
	dp.source.ptr = c;
	dp.read_callback = data_read;
	id = nghttp2_submit_request(h->ng, NULL, hd, sizeof(hd) / sizeof(hd[0]), &dp, NULL);
	if (id < 0) {
		call_free(c);
		nghttp2_session_del(h->ng);
		free(h);
		close(fd);
		return -EIO;
	}
	c->id = id;
	UT_HLIST_ADD(&a->grpc_clients, h, cnext, cpprev);
	h2_flush(h);
	if (!h->closing)
		arm_recv(h);
	return 0;
}

void ag_grpc_tick(struct agent *a, double now)
{
	for (struct ag_h2 *h = a->grpc_clients; h; h = h->cnext)
		if (!h->closing && now > h->deadline) {
			client_done(h, AG_GRPC_DEADLINE_EXCEEDED, "no reply in time", NULL, 0);
			h2_close(h);
		}
}

void ag_grpc_clients_stop(struct agent *a)
{
	for (struct ag_h2 *h = a->grpc_clients; h; h = h->cnext) {
		client_done(h, AG_GRPC_CANCELLED, "agent stopping", NULL, 0);
		h2_close(h);
	}
}
