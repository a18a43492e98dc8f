/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The AF_XDP device plugin's Unix-socket protocol, both ends (lib/devplugin.c), as
 * DPDK's net_af_xdp (use_cni) speaks it and afxdp-plugins-for-kubernetes serves it: one
 * SOCK_SEQPACKET socket per interface at DIR/NETDEV/afxdp.sock, one request per message
 * (no NUL, no newline, shorter than XP_DP_REQ_MAX), every reply shorter than
 * XP_DP_REPLY_MAX (DPDK writes a NUL after the reply in a buffer of that size), an fd by
 * SCM_RIGHTS beside a reply or a request:
 *
 *   /connect,<hostname>                 /host_ok (/host_nak)
 *   /version                            0.1
 *   /xsk_map_fd,<netdev>                /fd_ack + the XSKMAP (/fd_nak)
 *   /config_busy_poll,<usecs>,<budget>  /config_busy_poll_ack (_nak), on the fd sent
 *   /xsk_socket,<netdev>,<queue>        /xsk_socket_ack,<ifindex> + an AF_XDP socket
 *   /xsk_insert,<queue> + socket        /xsk_insert_ack   (xpile-agent's, for clients
 *   /xsk_remove,<queue> + socket        /xsk_remove_ack    without capabilities)
 *   /fin                                /fin_ack, then the server closes
 *   anything else                       /nak
 *
 * The server (xpile-agent) reads requests with xp_dp_req_parse() and the fd one carried
 * with xp_dp_msg_fd(); a client (`xpile run --uds`, tests) dials with xp_dp_dial() and
 * reads each reply with xp_dp_recv(); both send with xp_dp_send().
 */
#ifndef XPILE_DEVPLUGIN_H
#define XPILE_DEVPLUGIN_H

#include <stddef.h>
#include <sys/socket.h>

#include "xpile/api.h"

#ifdef __cplusplus
extern "C" {
#endif

#define XP_DP_REQ_MAX 64 /* the device plugin's request buffer */
#define XP_DP_REPLY_MAX 128 /* DPDK's reply buffer, its NUL included */
#define XP_DP_SOCK_NAME "afxdp.sock"
#define XP_DP_PROTO_VERSION "0.1"

#define XP_DP_CONNECT "/connect"
#define XP_DP_HOST_OK "/host_ok"
#define XP_DP_HOST_NAK "/host_nak"
#define XP_DP_VERSION "/version"
#define XP_DP_XSK_MAP_FD "/xsk_map_fd"
#define XP_DP_FD_ACK "/fd_ack"
#define XP_DP_FD_NAK "/fd_nak"
#define XP_DP_BUSY_POLL "/config_busy_poll"
#define XP_DP_BUSY_POLL_ACK "/config_busy_poll_ack"
#define XP_DP_BUSY_POLL_NAK "/config_busy_poll_nak"
#define XP_DP_XSK_SOCKET "/xsk_socket"
#define XP_DP_XSK_SOCKET_ACK "/xsk_socket_ack"
#define XP_DP_XSK_INSERT "/xsk_insert"
#define XP_DP_XSK_INSERT_ACK "/xsk_insert_ack"
#define XP_DP_XSK_REMOVE "/xsk_remove"
#define XP_DP_XSK_REMOVE_ACK "/xsk_remove_ack"
#define XP_DP_FIN "/fin"
#define XP_DP_FIN_ACK "/fin_ack"
#define XP_DP_NAK "/nak"

enum xp_dp_req {
	XP_DP_REQ_UNKNOWN, /* answered /nak */
	XP_DP_REQ_CONNECT, /* arg: the hostname (not empty) */
	XP_DP_REQ_VERSION,
	XP_DP_REQ_XSK_MAP_FD, /* arg: the netdev */
	XP_DP_REQ_BUSY_POLL, /* arg: "<usecs>,<budget>" */
	XP_DP_REQ_XSK_SOCKET, /* arg: "<netdev>,<queue>" */
	XP_DP_REQ_XSK_INSERT, /* arg: the queue */
	XP_DP_REQ_XSK_REMOVE, /* arg: the queue */
	XP_DP_REQ_FIN,
};

/* Which request the @len bytes of @msg (NUL-terminated at @len; @flags the recvmsg()
 * flags) are, and *@arg (NULL to skip) what follows the request's comma ("" for none).
 * A request too long (MSG_TRUNC, @len over XP_DP_REQ_MAX), holding a NUL or a line end,
 * or not known is XP_DP_REQ_UNKNOWN. */
XP_API enum xp_dp_req xp_dp_req_parse(const char *msg, size_t len, int flags, const char **arg);
/* The first fd message @m carried by SCM_RIGHTS (any others closed), or -1. */
XP_API int xp_dp_msg_fd(struct msghdr *m);
/* Sends @msg as one message, with @fd attached (-1: none); @flags as sendmsg()'s.
 * 0 or -errno. */
XP_API int xp_dp_send(int sock, const char *msg, int fd, int flags);
/* Receives one message into @buf (@len bytes, at least 2), NUL-terminated; *@fd (NULL:
 * closed) gets the fd it carried, or -1. Its length, or -ECONNRESET (the server hung
 * up), -ETIMEDOUT (SO_RCVTIMEO passed) or -errno. */
XP_API int xp_dp_recv(int sock, char *buf, size_t len, int *fd);
/* Connects a SOCK_SEQPACKET socket to @path, with send and receive timeouts of
 * @timeout_s seconds (0: none): the socket, or -ENAMETOOLONG or connect()'s -errno. */
XP_API int xp_dp_dial(const char *path, int timeout_s);

#ifdef __cplusplus
}
#endif

#endif /* XPILE_DEVPLUGIN_H */
