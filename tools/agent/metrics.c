// SPDX-License-Identifier: BSD-3-Clause
/*
 * /metrics (Prometheus text exposition 0.0.4), /healthz and /readyz over HTTP, served
 * by libmicrohttpd in its external-loop mode: its epoll fd is polled by the agent's
 * io_uring loop, MHD_run() runs when it is readable or when MHD's own timeout is
 * due. MHD bounds each connection's memory (a request larger than 16 KiB is refused)
 * and its idle time (5 s): a slow or stuck client cannot hold the loop, which never
 * blocks in MHD.
 *
 * Nor can slow clients hold the port, which the liveness probe needs: MHD's idle
 * timeout restarts at every byte, so a client sending a header line every 3 s was
 * never closed, and 64 of them kept everyone else out. Here each connection is
 * tracked from MHD's connection notifications: the request line and headers must
 * come within MET_HEAD_S of the connect (or of the previous response), the answer
 * must be taken within MET_ANSWER_S; one peer address holds at most MET_PER_PEER
 * connections and all together MET_CONN_LIMIT, a new one taking the place of the
 * oldest still sending its headers (refusing the new one would refuse the probe,
 * which comes from the same address as anything local). A connection is closed by
 * shutting its socket down: MHD sees the end of it and frees it as usual.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/socket.h>
#include <microhttpd.h>

#include "agent.h"
#include "dp.h"
#include "hlist.h"
#include "iface.h"
#include "lent.h"
#include "engines.h"
#include "metrics.h"
#include "podres.h"
#include "xskdiag.h"
#include "xskpidfd.h"
#include "xpile/steer_owner.h"
#include "xpile/text.h"

#define MET_CONN_MEMORY (16 * 1024)
#define MET_CONN_TIMEOUT 5
#define MET_CONN_LIMIT 64
#define MET_PER_PEER 16
#define MET_HEAD_S 5.0
#define MET_ANSWER_S 30.0

enum met_close { MET_HEAD_LATE, MET_ANSWER_LATE, MET_PEER_LIMIT, MET_CONN_FULL, MET_NCLOSE };

static const char *const close_names[MET_NCLOSE] = {
	[MET_HEAD_LATE] = "header_deadline",
	[MET_ANSWER_LATE] = "answer_deadline",
	[MET_PEER_LIMIT] = "peer_limit",
	[MET_CONN_FULL] = "connection_limit",
};

/* One HTTP connection, from MHD's STARTED notification to its CLOSED one. */
struct met_conn {
	struct met_conn *next, **pprev;
	int fd;
	struct in_addr peer;
	double since; /* connected, or answered its last request */
	bool answering; /* its headers are in: the request is being answered */
	bool kept; /* answered a request already: kept alive */
	bool closing; /* shut down by us: MHD frees it on its next run */
};

struct ag_metrics {
	struct ut_ev poll_ev, timer_ev;
	struct agent *a;
	struct MHD_Daemon *d;
	int epfd;
	bool timer_armed;
	struct __kernel_timespec ts;
	double started; /* unix time */
	struct met_conn *conns;
	__u64 closed[MET_NCLOSE];
};

struct buf {
	char *p;
	size_t len, cap;
	bool oom;
};

/* Appends to @b, growing it: at most one retry, with room for what vsnprintf said. */
__attribute__((format(printf, 2, 3))) static void put(struct buf *b, const char *fmt, ...)
{
	va_list ap, again;
	int n;

	va_start(ap, fmt);
	va_copy(again, ap);
	n = b->oom ? -1 : vsnprintf(b->p + b->len, b->cap - b->len, fmt, ap);
	if (n >= 0 && (size_t)n >= b->cap - b->len) {
		size_t cap = (b->len + (size_t)n + 1) * 2;
		char *np = realloc(b->p, cap);

		if (np) {
			b->p = np;
			b->cap = cap;
			n = vsnprintf(b->p + b->len, b->cap - b->len, fmt, again);
		} else {
			n = -1;
		}
	}
	va_end(again);
	va_end(ap);
	if (n < 0)
		b->oom = true;
	else
		b->len += (size_t)n;
}

static const char *const action_names[XP_CNT_MAX] = {
	[XP_CNT_PASS] = "pass",	      [XP_CNT_DROP] = "drop",
	[XP_CNT_TX] = "tx",	      [XP_CNT_REDIRECT] = "redirect",
	[XP_CNT_XSK] = "xsk",	      [XP_CNT_XSK_NOSOCK] = "xsk_nosocket",
	[XP_CNT_DEFAULT] = "default", [XP_CNT_PARSE_ERR] = "parse_error",
};

/* A verdict, not the reason for one (those count again under their verdict). */
static bool verdict_final(int v)
{
	return v != XP_CNT_DEFAULT && v != XP_CNT_XSK_NOSOCK && v != XP_CNT_PARSE_ERR;
}

/* A family over the verdict counters of every interface whose counters were read
 * (@have): the final verdicts labelled action, else the reasons labelled reason. */
static void verdict_family(struct buf *b, const struct agent *a, const struct xp_steer_stats *st,
			   const bool *have, const char *name, bool final, bool bytes)
{
	for (int k = 0; k < AG_MAX_IFACES; k++)
		for (int v = 0; have[k] && v < XP_CNT_MAX; v++)
			if (verdict_final(v) == final)
				put(b, "%s{interface=\"%s\",%s=\"%s\"} %llu\n", name,
				    a->ifaces[k].name, final ? "action" : "reason", action_names[v],
				    (unsigned long long)(bytes ? st[k].verdict[v].bytes :
								 st[k].verdict[v].packets));
}

static const char *const perr_names[XP_PERR_MAX] = {
	[XP_PERR_ETH_TRUNC] = "eth_trunc",
	[XP_PERR_VLAN_TRUNC] = "vlan_trunc",
	[XP_PERR_VLAN_DEPTH] = "vlan_depth",
	[XP_PERR_IP4_TRUNC] = "ip4_trunc",
	[XP_PERR_IP4_HDR] = "ip4_hdr",
	[XP_PERR_IP4_OPT_TRUNC] = "ip4_opt_trunc",
	[XP_PERR_IP6_TRUNC] = "ip6_trunc",
	[XP_PERR_IP6_EXT_TRUNC] = "ip6_ext_trunc",
	[XP_PERR_IP6_EXT_DEPTH] = "ip6_ext_depth",
	[XP_PERR_TCP_TRUNC] = "tcp_trunc",
	[XP_PERR_TCP_HDR] = "tcp_hdr",
	[XP_PERR_UDP_TRUNC] = "udp_trunc",
	[XP_PERR_ICMP_TRUNC] = "icmp_trunc",
	[XP_PERR_ICMP6_TRUNC] = "icmp6_trunc",
};

static void help(struct buf *b, const char *name, const char *type, const char *text)
{
	put(b, "# HELP %s %s\n# TYPE %s %s\n", name, text, name, type);
}

static bool iface_ready(struct ag_iface *i, char *why, size_t len)
{
	struct xp_steer_health h;

	if (i->lent) { /* in a pod's namespace (lend.c): our link holds the program, or not */
		if (ag_lent_attached(i))
			return true;
		snprintf(why, len, "%s: steer program not attached (lent to a pod)", i->name);
		return false;
	}
	if (xp_steer_check(i->steer, &h)) {
		snprintf(why, len, "%s: cannot query its XDP program", i->name);
		return false;
	}
	if (h.iface_gone || h.prog_gone || h.prog_replaced) {
		snprintf(why, len, "%s: steer program not attached", i->name);
		return false;
	}
	if (h.pins_gone || h.pins_replaced) {
		snprintf(why, len, "%s: maps not pinned", i->name);
		return false;
	}
	return true;
}

/* The counters of one interface's AF_XDP sockets, summed per queue (with xsk_diag
 * several sockets may share one queue; Prometheus wants one series). */
static void xsk_series(struct buf *b, const char *name, const struct ag_iface *i,
		       const struct ag_xsk_stat *xs, int nx, int field)
{
	for (__u32 q = 0; q < XP_STEER_MAX_QUEUES; q++) {
		unsigned long long sum = 0;
		int cnt = 0;

		for (int j = 0; j < nx; j++) {
			const __u64 *v = &xs[j].st.n_rx_dropped;

			if (xs[j].ifindex != i->ifindex || xs[j].queue != q)
				continue;
			cnt++;
			sum += field < 0 ? 1 : field == 6 ? xs[j].zc : v[field]; /* 6: zero-copy */
		}
		if (cnt)
			put(b, "%s{interface=\"%s\",queue=\"%u\"} %llu\n", name, i->name, q, sum);
	}
}

/* AF_XDP sockets: from xsk_diag (all bound to a served interface, whoever holds
 * them) or from the device-plugin clients (pidfd: those in a served XSKMAP). */
static void xsk_render(struct agent *a, struct buf *b)
{
	static struct ag_xsk_stat xs[256];
	static const char *const xn[6][2] = {
		{ "xpile_xsk_rx_dropped_total", "Frames the socket dropped (no room)." },
		{ "xpile_xsk_rx_invalid_descs_total", "Invalid RX descriptors." },
		{ "xpile_xsk_rx_ring_full_total", "Frames dropped because the RX ring was full." },
		{ "xpile_xsk_fill_ring_empty_total", "Times the fill ring was empty." },
		{ "xpile_xsk_tx_invalid_descs_total", "Invalid TX descriptors." },
		{ "xpile_xsk_tx_ring_empty_total", "Times the TX ring was empty." },
	};
	const char *src = a->cfg.xsk_stats == AG_XSK_PIDFD ? "pidfd" : "diag";
	bool denied = false;
	int nx;

	if (a->cfg.xsk_stats == AG_XSK_OFF)
		return;
	nx = a->cfg.xsk_stats == AG_XSK_PIDFD ? ag_xsk_pidfd(a, xs, 256, &denied) :
						ag_xsk_diag(xs, 256);
	help(b, "xpile_xsk_stats_available", "gauge",
	     "1 when the configured source (metrics.xsk_stats) reads every AF_XDP socket: diag needs the kernel's xsk_diag, pidfd CAP_SYS_PTRACE over the clients.");
	put(b, "xpile_xsk_stats_available{source=\"%s\"} %d\n", src, nx >= 0 && !denied);
	if (nx < 0)
		nx = 0;
	help(b, "xpile_xsk_sockets", "gauge", "AF_XDP sockets bound to the queue.");
	for (int k = 0; k < AG_MAX_IFACES; k++)
		if (a->ifaces[k].used)
			xsk_series(b, "xpile_xsk_sockets", &a->ifaces[k], xs, nx, -1);
	if (a->cfg.xsk_stats == AG_XSK_PIDFD) {
		help(b, "xpile_xsk_zerocopy", "gauge",
		     "1 when the queue's socket runs in zero-copy mode (XDP_OPTIONS).");
		for (int k = 0; k < AG_MAX_IFACES; k++)
			if (a->ifaces[k].used)
				xsk_series(b, "xpile_xsk_zerocopy", &a->ifaces[k], xs, nx, 6);
	}
	for (int f = 0; f < 6; f++) {
		help(b, xn[f][0], "counter", xn[f][1]);
		for (int k = 0; k < AG_MAX_IFACES; k++)
			if (a->ifaces[k].used)
				xsk_series(b, xn[f][0], &a->ifaces[k], xs, nx, f);
	}
}

static void render(struct ag_metrics *m, struct buf *b)
{
	struct agent *a = m->a;

	help(b, "xpile_agent_info", "gauge", "The agent's version (value 1).");
	put(b, "xpile_agent_info{version=\"%s\"} 1\n", XPILE_VERSION);
	help(b, "xpile_agent_start_time_seconds", "gauge", "When this agent process started.");
	put(b, "xpile_agent_start_time_seconds %.3f\n", m->started);
	help(b, "xpile_agent_config_generation", "gauge", "Configs applied by this process.");
	put(b, "xpile_agent_config_generation %llu\n", (unsigned long long)a->generation);
	help(b, "xpile_agent_last_reload_success", "gauge",
	     "1 when the last config read (start, SIGHUP, reload) was applied, 0 when refused.");
	put(b, "xpile_agent_last_reload_success %d\n", a->last_reload_ok ? 1 : 0);
	help(b, "xpile_device_plugin_handshakes_total", "counter",
	     "Device-plugin handshakes completed (/fin answered) by this process.");
	put(b, "xpile_device_plugin_handshakes_total %llu\n", (unsigned long long)a->dp_handshakes);
	help(b, "xpile_device_plugin_connections", "gauge", "Open device-plugin connections.");
	put(b, "xpile_device_plugin_connections %u\n", a->dp_conns);

	{ /* podres.c: who holds which queue */
		char pr[16384];

		if (ag_podres_metrics(a, pr, sizeof(pr)))
			put(b, "%s", pr);
	}
	{ /* engines.c: the node's engines, by their control sockets */
		char *es = NULL;
		size_t elen = 0;
		FILE *f = open_memstream(&es, &elen);

		if (f) {
			ag_engines_metrics(f);
			/* Closing flushes: only then does es hold it all. */
			if (!fclose(f) && es)
				put(b, "%s", es);
		}
		free(es);
	}
	help(b, "xpile_interface_ready", "gauge",
	     "1 when the interface's steer program is attached and its maps pinned.");
	for (int k = 0; k < AG_MAX_IFACES; k++) {
		char why[128];

		if (a->ifaces[k].used)
			put(b, "xpile_interface_ready{interface=\"%s\"} %d\n", a->ifaces[k].name,
			    iface_ready(&a->ifaces[k], why, sizeof(why)));
	}
	help(b, "xpile_rules_installed", "gauge", "Rules in the set in force.");
	for (int k = 0; k < AG_MAX_IFACES; k++) {
		int n = a->ifaces[k].used ? ag_rules_count(a->ifaces[k].steer) : -1;

		if (n >= 0)
			put(b, "xpile_rules_installed{interface=\"%s\"} %d\n", a->ifaces[k].name,
			    n);
	}
	help(b, "xpile_interface_reattach_total", "counter",
	     "Times this agent attached the steer program again after it was detached or replaced.");
	for (int k = 0; k < AG_MAX_IFACES; k++)
		if (a->ifaces[k].used)
			put(b, "xpile_interface_reattach_total{interface=\"%s\"} %llu\n",
			    a->ifaces[k].name, (unsigned long long)a->ifaces[k].reattached);
	/* The counters live in the pinned maps: they go on across agent restarts. */
	struct xp_steer_stats st[AG_MAX_IFACES];
	bool have[AG_MAX_IFACES] = { 0 };

	for (int k = 0; k < AG_MAX_IFACES; k++)
		have[k] = a->ifaces[k].used && !xp_steer_stats_read(a->ifaces[k].steer, &st[k]);
	/* The verdicts a packet gets exactly one of; why the program chose it (no rule
	 * matched, no socket on the queue, a malformed packet) is a second, orthogonal
	 * family, so that sum() over either counts every packet once. */
	help(b, "xpile_verdict_packets_total", "counter",
	     "Packets by the steer program's verdict: pass, drop, tx, redirect, xsk (each packet once).");
	verdict_family(b, a, st, have, "xpile_verdict_packets_total", true, false);
	help(b, "xpile_verdict_bytes_total", "counter", "Bytes by the steer program's verdict.");
	verdict_family(b, a, st, have, "xpile_verdict_bytes_total", true, true);
	help(b, "xpile_verdict_reason_packets_total", "counter",
	     "Packets whose verdict came from a fallback: default (no rule matched), xsk_nosocket (no socket on the queue: passed), parse_error (malformed); each also counts once in xpile_verdict_packets_total.");
	verdict_family(b, a, st, have, "xpile_verdict_reason_packets_total", false, false);
	help(b, "xpile_parse_errors_total", "counter", "Malformed packets by reason.");
	for (int k = 0; k < AG_MAX_IFACES; k++)
		for (int v = 0; have[k] && v < XP_PERR_MAX; v++)
			put(b, "xpile_parse_errors_total{interface=\"%s\",reason=\"%s\"} %llu\n",
			    a->ifaces[k].name, perr_names[v],
			    (unsigned long long)st[k].parse_err[v]);

	help(b, "xpile_http_connections_closed_total", "counter",
	     "HTTP connections the agent closed: headers not in within 5 s, an answer not taken within 30 s, a peer over 16 connections, all over 64.");
	for (int r = 0; r < MET_NCLOSE; r++)
		put(b, "xpile_http_connections_closed_total{reason=\"%s\"} %llu\n", close_names[r],
		    (unsigned long long)m->closed[r]);
	xsk_render(a, b);
}

static enum MHD_Result respond(struct MHD_Connection *conn, unsigned int status, const char *type,
			       char *body, size_t len)
{
	struct MHD_Response *r = MHD_create_response_from_buffer(len, body, MHD_RESPMEM_MUST_FREE);
	enum MHD_Result ret;

	if (!r) {
		free(body);
		return MHD_NO;
	}
	MHD_add_response_header(r, "Content-Type", type);
	ret = MHD_queue_response(conn, status, r);
	MHD_destroy_response(r);
	return ret;
}

static enum MHD_Result text(struct MHD_Connection *conn, unsigned int status, const char *msg)
{
	char *body = strdup(msg);

	return body ? respond(conn, status, "text/plain; charset=utf-8", body, strlen(body)) :
		      MHD_NO;
}

static struct met_conn *conn_of(struct MHD_Connection *conn)
{
	const union MHD_ConnectionInfo *ci =
		MHD_get_connection_info(conn, MHD_CONNECTION_INFO_SOCKET_CONTEXT);

	return ci ? ci->socket_context : NULL;
}

static void conn_shut(struct ag_metrics *m, struct met_conn *c, enum met_close why)
{
	c->closing = true;
	m->closed[why]++;
	shutdown(c->fd, SHUT_RDWR);
}

/* The oldest connection still sending its headers, of @peer (NULL: of anyone). */
static struct met_conn *oldest_waiting(struct ag_metrics *m, const struct in_addr *peer)
{
	struct met_conn *o = NULL;

	for (struct met_conn *c = m->conns; c; c = c->next)
		if (!c->closing && !c->answering && c->fd >= 0 &&
		    (!peer || c->peer.s_addr == peer->s_addr) && (!o || c->since < o->since))
			o = c;
	return o;
}

/* A new connection @n within the bounds: over them, the oldest one still sending its
 * headers goes (the peer's own first), else the new one. */
static void admit(struct ag_metrics *m, struct met_conn *n)
{
	unsigned int all = 0, mine = 0;
	struct met_conn *o;

	for (struct met_conn *c = m->conns; c; c = c->next)
		if (!c->closing) {
			all++;
			mine += c->peer.s_addr == n->peer.s_addr;
		}
	if (mine > MET_PER_PEER) {
		o = oldest_waiting(m, &n->peer);
		conn_shut(m, o ? o : n, MET_PEER_LIMIT);
		all--;
	}
	if (all > MET_CONN_LIMIT && !n->closing) {
		o = oldest_waiting(m, NULL);
		conn_shut(m, o ? o : n, MET_CONN_FULL);
	}
}

static void on_connection(void *cls, struct MHD_Connection *conn, void **socket_context,
			  enum MHD_ConnectionNotificationCode toe)
{
	struct ag_metrics *m = cls;
	struct met_conn *c = *socket_context;

	if (toe == MHD_CONNECTION_NOTIFY_CLOSED) {
		if (c) {
			UT_HLIST_DEL(c, next, pprev);
			free(c);
		}
		*socket_context = NULL;
		return;
	}
	c = calloc(1, sizeof(*c));
	if (!c)
		return; /* untracked: MHD's own bounds hold it */
	const union MHD_ConnectionInfo *fi =
		MHD_get_connection_info(conn, MHD_CONNECTION_INFO_CONNECTION_FD);
	const union MHD_ConnectionInfo *ai =
		MHD_get_connection_info(conn, MHD_CONNECTION_INFO_CLIENT_ADDRESS);

	c->fd = fi ? fi->connect_fd : -1;
	if (ai && ai->client_addr && ai->client_addr->sa_family == AF_INET)
		c->peer = ((const struct sockaddr_in *)ai->client_addr)->sin_addr;
	c->since = ut_now();
	UT_HLIST_ADD(&m->conns, c, next, pprev);
	*socket_context = c;
	if (c->fd >= 0)
		admit(m, c);
}

/* A request answered: the connection's next one has its own MET_HEAD_S. */
static void on_completed(void *cls, struct MHD_Connection *conn, void **req_cls,
			 enum MHD_RequestTerminationCode toe)
{
	struct met_conn *c = conn_of(conn);

	if (c) {
		c->answering = false;
		c->kept = true;
		c->since = ut_now();
	}
}

/* Closes the connections past their deadline; the seconds until the next one is due. */
static double sweep(struct ag_metrics *m)
{
	double now = ut_now(), next = 1;

	for (struct met_conn *c = m->conns; c; c = c->next) {
		/* A kept-alive connection that stays silent is MHD's to close (its idle
		 * timeout, as long): ours closes one that trickles. */
		double limit = c->answering ? MET_ANSWER_S : MET_HEAD_S + (c->kept ? 1 : 0);
		double left = c->since + limit - now;

		if (c->closing || c->fd < 0)
			continue;
		if (left <= 0)
			conn_shut(m, c, c->answering ? MET_ANSWER_LATE : MET_HEAD_LATE);
		else if (left < next)
			next = left;
	}
	return next;
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *conn, const char *url,
				  const char *method, const char *version, const char *upload,
				  size_t *upload_size, void **req_cls)
{
	struct ag_metrics *m = cls;
	struct agent *a = m->a;
	struct met_conn *c = conn_of(conn);

	if (c && !c->answering) {
		c->answering = true; /* the request line and headers are in */
		c->since = ut_now();
	}

	if (strcmp(method, "GET") && strcmp(method, "HEAD"))
		return text(conn, MHD_HTTP_METHOD_NOT_ALLOWED, "only GET and HEAD\n");
	if (*upload_size) {
		*upload_size = 0; /* a GET body is ignored */
		return MHD_YES;
	}
	if (!strcmp(url, "/metrics")) {
		struct buf b = { .p = malloc(16384), .cap = 16384 };

		if (!b.p)
			return MHD_NO;
		b.p[0] = 0;
		render(m, &b);
		if (b.oom) {
			free(b.p);
			return text(conn, MHD_HTTP_INTERNAL_SERVER_ERROR, "out of memory\n");
		}
		return respond(conn, MHD_HTTP_OK, "text/plain; version=0.0.4; charset=utf-8", b.p,
			       b.len);
	}
	if (!strcmp(url, "/healthz"))
		return text(conn, MHD_HTTP_OK, "ok\n"); /* answering is the loop being alive */
	if (!strcmp(url, "/readyz")) {
		char why[4096] = "", line[256];

		for (__u32 k = 0; k < a->cfg.nifaces; k++) {
			struct ag_iface *i = ag_iface_find(a, a->cfg.ifaces[k].name);

			line[0] = 0;
			if (!i)
				snprintf(line, sizeof(line), "%s: not served (detached)",
					 a->cfg.ifaces[k].name);
			else if (iface_ready(i, line, sizeof(line)) && ag_dp_intact(i))
				continue;
			else if (!line[0])
				snprintf(line, sizeof(line),
					 "%s: device-plugin socket %s removed or replaced", i->name,
					 ag_dp_path(i));
			snprintf(why + strlen(why), sizeof(why) - strlen(why), "%s\n", line);
		}
		if (why[0])
			return text(conn, MHD_HTTP_SERVICE_UNAVAILABLE, why);
		return text(conn, MHD_HTTP_OK, "ready\n");
	}
	return text(conn, MHD_HTTP_NOT_FOUND, "not found: /metrics, /healthz, /readyz\n");
}

static void arm_poll(struct ag_metrics *m);

/* MHD's own timeout (a connection to time out, a response to finish), or the next
 * deadline of ours, if any. */
static void arm_timer(struct ag_metrics *m)
{
	MHD_UNSIGNED_LONG_LONG ms;
	double ours = sweep(m);

	if (m->timer_armed)
		return;
	if (MHD_get_timeout(m->d, &ms) != MHD_YES) {
		if (!m->conns)
			return;
		ms = 1000;
	}
	if (ms > 1000)
		ms = 1000;
	if (ms > (MHD_UNSIGNED_LONG_LONG)(ours * 1000) + 1)
		ms = (MHD_UNSIGNED_LONG_LONG)(ours * 1000) + 1;
	m->ts.tv_sec = (long long)(ms / 1000);
	m->ts.tv_nsec = (long long)(ms % 1000) * 1000000;
	m->timer_armed = !ut_loop_timeout(&m->a->loop, &m->timer_ev, &m->ts);
}

static void on_poll(struct ut_loop *l, struct ut_ev *ev, int res, unsigned int flags)
{
	struct ag_metrics *m =
		(struct ag_metrics *)((char *)ev - offsetof(struct ag_metrics, poll_ev));

	if (!m->d)
		return; /* closing */
	MHD_run(m->d);
	arm_poll(m);
	arm_timer(m);
}

static void on_timer(struct ut_loop *l, struct ut_ev *ev, int res, unsigned int flags)
{
	struct ag_metrics *m =
		(struct ag_metrics *)((char *)ev - offsetof(struct ag_metrics, timer_ev));

	m->timer_armed = false;
	if (!m->d)
		return; /* closing */
	MHD_run(m->d);
	arm_timer(m);
}

static void arm_poll(struct ag_metrics *m)
{
	ut_loop_poll_in(&m->a->loop, &m->poll_ev, m->epfd);
}

int ag_metrics_open(struct agent *a)
{
	struct ag_metrics *m = calloc(1, sizeof(*m));
	struct sockaddr_in sin = { .sin_family = AF_INET };
	char host[64], *colon;
	const union MHD_DaemonInfo *di;
	struct timespec now;
	__u32 port;

	if (!m)
		return -ENOMEM;
	snprintf(host, sizeof(host), "%s", a->cfg.metrics_addr);
	colon = strrchr(host, ':');
	*colon = 0;
	xp_parse_u32(colon + 1, 1, 65535, &port); /* checked by the config */
	if (inet_pton(AF_INET, host, &sin.sin_addr) != 1) {
		ut_log(LOG_ERR,
		       "metrics.address %s: the host must be an IPv4 address (e.g. 127.0.0.1 or 0.0.0.0)",
		       a->cfg.metrics_addr);
		free(m);
		return -EINVAL;
	}
	sin.sin_port = htons((uint16_t)port);
	m->a = a;
	m->poll_ev.fn = on_poll;
	m->timer_ev.fn = on_timer;
	clock_gettime(CLOCK_REALTIME, &now);
	m->started = (double)now.tv_sec + now.tv_nsec / 1e9;
	m->d = MHD_start_daemon(
		MHD_USE_EPOLL, (uint16_t)port, NULL, NULL, on_request, m, MHD_OPTION_SOCK_ADDR,
		&sin, MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t)MET_CONN_MEMORY,
		MHD_OPTION_CONNECTION_TIMEOUT, (unsigned int)MET_CONN_TIMEOUT,
		/* Hard bounds over ours, which make room by closing. No address reuse
		 * option: SO_REUSEPORT let a second agent share the port and answer every
		 * other scrape; MHD's default SO_REUSEADDR is what a restart needs. */
		MHD_OPTION_CONNECTION_LIMIT, (unsigned int)(2 * MET_CONN_LIMIT),
		MHD_OPTION_PER_IP_CONNECTION_LIMIT, (unsigned int)(2 * MET_PER_PEER),
		MHD_OPTION_NOTIFY_CONNECTION, on_connection, m, MHD_OPTION_NOTIFY_COMPLETED,
		on_completed, m, MHD_OPTION_END);
	if (!m->d) {
		ut_log(LOG_ERR,
		       "metrics: cannot serve HTTP on %s (address in use? metrics.address)",
		       a->cfg.metrics_addr);
		free(m);
		return -EADDRINUSE;
	}
	di = MHD_get_daemon_info(m->d, MHD_DAEMON_INFO_EPOLL_FD);
	m->epfd = di ? di->epoll_fd : -1;
	if (m->epfd < 0) {
		MHD_stop_daemon(m->d);
		free(m);
		return -EINVAL;
	}
	a->metrics = m;
	arm_poll(m);
	ut_say(0, "metrics: http://%s/metrics", a->cfg.metrics_addr);
	return 0;
}

void ag_metrics_close(struct agent *a)
{
	struct ag_metrics *m = a->metrics;

	if (!m)
		return;
	MHD_stop_daemon(m->d);
	m->d = NULL;
	/* The poll holds the epoll fd open in the loop: cancel it, and the timer. */
	ut_loop_cancel(&a->loop, &m->poll_ev);
	ut_loop_cancel(&a->loop, &m->timer_ev);
}

void ag_metrics_free(struct agent *a)
{
	free(a->metrics);
	a->metrics = NULL;
}
