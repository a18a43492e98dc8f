// SPDX-License-Identifier: BSD-3-Clause
/*
 * `xpile run --uds PATH`: the engine as an unprivileged client of the AF_XDP device
 * plugin's socket (served by xpile-agent, or by the device plugin itself). The engine
 * loads and attaches nothing: its sockets exist already (lib/xsk.c binds them with the
 * kernel API, no program involved); the handshake gets the XSKMAP of the program the
 * agent attached, and each socket goes in at key = its queue id, as DPDK does:
 *
 *   /connect,<hostname> -> /host_ok    /version -> 0.1
 *   /xsk_map_fd,<netdev> -> /fd_ack + SCM_RIGHTS(fd)    /fin -> /fin_ack
 *
 * Unlike DPDK, every reply is checked exactly (DPDK takes /fd_nak for /fd_ack), the
 * fd must be an XSKMAP, and a silent server times out.
 *
 * Where the agent offers it (xpile-agent's /xsk_socket), the engine holds no
 * capability at all and never the XSKMAP: the agent makes the AF_XDP sockets on the
 * node (socket() is what takes CAP_NET_RAW), one for the UMEM and one per queue; the
 * engine registers its UMEM and rings on them and binds them to the ifindex the
 * agent names, which need not exist in the engine's namespace (bind resolves it in
 * the socket's); then asks the agent to put each in the XSKMAP (/xsk_insert,<queue>
 * with the socket) and to take it out before it drains (/xsk_remove). An agent that
 * does not know the request answers /nak, and the XSKMAP is asked for as before.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/socket.h>
#include <bpf/bpf.h>

#include "engine.h"
#include "uds.h"
#include "xpile/devplugin.h"

#define UDS_TIMEOUT_S 5
#define UDS_REPLY_MAX XP_DP_REPLY_MAX

static int say(int fd, const char *msg)
{
	return xp_dp_send(fd, msg, -1, 0);
}

/* One reply into @buf; *@passed gets the first fd that came with it (else -1). */
static int hear(int fd, char *buf, int *passed)
{
	int n = xp_dp_recv(fd, buf, UDS_REPLY_MAX, passed);

	return n < 0 ? n : 0;
}

/* Says why the handshake with @path failed: @err (0: the agent's answer was wrong,
 * -EPROTO). */
static int uds_fail(const struct eng_port *p, const char *path, const char *what, int err)
{
	return ut_say(err ? err : -EPROTO, "%s: --uds %s: %s%s%s", p->ifname, path, what,
		      err ? ": " : "", err ? strerror(-err) : "");
}

static int dial(const struct eng_port *p, const char *path, int *out)
{
	char host[64] = "", req[64], rep[UDS_REPLY_MAX];
	int fd, err;

	fd = xp_dp_dial(path, UDS_TIMEOUT_S);
	if (fd == -ENAMETOOLONG)
		return uds_fail(p, path, "path too long for a Unix socket", 0);
	if (fd < 0)
		return uds_fail(
			p, path,
			"cannot connect (is xpile-agent serving this interface, and may this user connect?)",
			fd);
	gethostname(host, sizeof(host) - 10); /* the request fits 64 bytes, as DPDK's */
	snprintf(req, sizeof(req), XP_DP_CONNECT ",%.54s", host[0] ? host : "localhost");
	err = say(fd, req) ?: hear(fd, rep, NULL);
	if (!err && strcmp(rep, XP_DP_HOST_OK)) {
		close(fd);
		return uds_fail(p, path,
				"the agent refused this host (reply to /connect was not /host_ok)",
				0);
	}
	if (err) {
		close(fd);
		return uds_fail(p, path, "handshake failed", err);
	}
	*out = fd;
	return 0;
}

/* One request with @xfd attached; 0 when the reply is @want. */
static int ask_fd(int fd, const char *req, int xfd, const char *want, char *rep)
{
	int err = xp_dp_send(fd, req, xfd, 0) ?: hear(fd, rep, NULL);

	return err ? err : strcmp(rep, want) ? -EPERM : 0;
}

/* Socket mode: /xsk_socket,<netdev> for the UMEM and each queue. 1 when the agent
 * offers it (sockets in p->uds_socks), 0 when it does not know it (/nak), -errno after
 * one line. */
static int get_sockets(struct eng_port *p, const char *path, int fd)
{
	char req[64], rep[UDS_REPLY_MAX];

	for (__u32 k = 0; k <= p->nqueues; k++) {
		int s = -1, err;

		/* The UMEM's with the first queue, then one for each queue. */
		snprintf(req, sizeof(req), XP_DP_XSK_SOCKET ",%s,%u", p->ifname,
			 p->queues[k ? k - 1 : 0]);
		err = say(fd, req) ?: hear(fd, rep, &s);

		if (err)
			return uds_fail(p, path, "/xsk_socket failed", err);
		if (!k && !strcmp(rep, XP_DP_NAK))
			return 0; /* an agent before /xsk_socket */
		if (strncmp(rep, XP_DP_XSK_SOCKET_ACK ",", 16) || s < 0) {
			if (s >= 0)
				close(s);
			return ut_say(
				-EPROTO,
				"%s: --uds %s: the agent refused an AF_XDP socket (reply '%.40s' to %s, %u of %u given): does it serve %s on this socket, and is queue %u this pod's?",
				p->ifname, path, rep, req, k, p->nqueues + 1, p->ifname,
				p->queues[k ? k - 1 : 0]);
		}
		p->uds_ifindex = atoi(rep + 16);
		p->uds_socks[p->uds_nsocks++] = s;
	}
	p->uds_sock_mode = true;
	return 1;
}

/* The XSKMAP on a connection /connect accepted, as DPDK asks it: *@map_fd. */
static int get_map(const struct eng_port *p, const char *path, int fd, int *map_fd)
{
	char req[64], rep[UDS_REPLY_MAX];
	struct bpf_map_info info = {};
	__u32 ilen = sizeof(info);
	int err, mfd = -1;

	err = say(fd, XP_DP_VERSION) ?: hear(fd, rep, NULL);
	snprintf(req, sizeof(req), XP_DP_XSK_MAP_FD ",%s", p->ifname);
	err = err ?: say(fd, req) ?: hear(fd, rep, &mfd);
	if (err) {
		if (mfd >= 0)
			close(mfd);
		return uds_fail(p, path, "handshake failed", err);
	}
	if (strcmp(rep, XP_DP_FD_ACK) || mfd < 0) {
		if (mfd >= 0)
			close(mfd);
		return ut_say(
			-EPROTO,
			"%s: --uds %s: the agent refused the XSKMAP (reply '%.40s'%s); does it serve %s on this socket?",
			p->ifname, path, rep, mfd < 0 ? ", no fd" : "", p->ifname);
	}
	if (bpf_obj_get_info_by_fd(mfd, &info, &ilen) || info.type != BPF_MAP_TYPE_XSKMAP) {
		close(mfd);
		return uds_fail(p, path, "the fd the agent passed is not an XSKMAP", 0);
	}
	*map_fd = mfd;
	return 0;
}

int eng_uds_setup(struct engine *e)
{
	for (__u32 i = 0; i < e->cfg.nports; i++) {
		struct eng_port *p = &e->ports[i];
		const char *path = e->cfg.uds[i];
		char rep[UDS_REPLY_MAX];
		int fd = -1, got;

		p->uds_map_fd = -1;
		got = dial(p, path, &fd);
		if (got)
			return got;
		/* The agent's sockets; an agent without /xsk_socket: the XSKMAP. */
		got = get_sockets(p, path, fd);
		if (!got && p->remote)
			got = ut_say(
				-EOPNOTSUPP,
				"%s: not in this network namespace, and the agent at %s offers no /xsk_socket: update xpile-agent, or give the pod the netdev (xpile-cni netdev mode) and CAP_NET_RAW",
				p->ifname, path);
		else if (!got)
			got = get_map(p, path, fd, &p->uds_map_fd);
		if (got >= 0 &&
		    (say(fd, XP_DP_FIN) || hear(fd, rep, NULL) || strcmp(rep, XP_DP_FIN_ACK)))
			got = uds_fail(p, path, "the agent did not answer /fin with /fin_ack", 0);
		close(fd);
		if (got < 0)
			return got;
	}
	return 0;
}

int eng_uds_take(struct engine *e, const struct eng_dom *d, int *ifindex)
{
	for (__u32 i = 0; i < e->cfg.nports; i++) {
		struct eng_port *p = &e->ports[i];

		if (p->dom == d && p->uds_nsocks) {
			*ifindex = p->uds_ifindex;
			return p->uds_socks[--p->uds_nsocks];
		}
	}
	return -1;
}

/* Socket mode: the agent puts @q's socket in (or takes it out of) the XSKMAP. */
static void agent_xskmap_set(struct engine *e, struct eng_q *q, bool on)
{
	const struct eng_port *p = q->port;
	const char *path = e->cfg.uds[p - e->ports];
	char req[64], rep[UDS_REPLY_MAX];
	int fd = -1, err;

	if (dial(p, path, &fd))
		return;
	snprintf(req, sizeof(req), "%s,%u", on ? XP_DP_XSK_INSERT : XP_DP_XSK_REMOVE, q->queue);
	err = ask_fd(fd, req, q->xsk->fd, on ? XP_DP_XSK_INSERT_ACK : XP_DP_XSK_REMOVE_ACK, rep);
	if (err)
		ut_say(err, "%s: queue %u: the agent %s: %s", p->ifname, q->queue,
		       on ? "did not put the socket in the XSKMAP" : "did not take the socket out",
		       err == -EPERM ? rep : strerror(-err));
	if (!say(fd, XP_DP_FIN))
		hear(fd, rep, NULL);
	close(fd);
}

void eng_uds_xskmap_set(struct engine *e, struct eng_q *q, bool on)
{
	int fd = q->port->uds_map_fd, xfd = q->xsk->fd;

	if (q->port->uds_sock_mode) {
		agent_xskmap_set(e, q, on);
		return;
	}
	if (fd < 0)
		return;
	if (on && bpf_map_update_elem(fd, &q->queue, &xfd, 0))
		ut_say(0, "%s: queue %u: XSKMAP update failed: %s", q->port->ifname, q->queue,
		       strerror(errno));
	if (!on)
		bpf_map_delete_elem(fd, &q->queue);
}

void eng_uds_close(struct eng_port *p)
{
	if (p->uds_map_fd > 0)
		close(p->uds_map_fd);
	p->uds_map_fd = -1;
	while (p->uds_nsocks) /* not taken: the UMEM was shared with another port's */
		close(p->uds_socks[--p->uds_nsocks]);
}
