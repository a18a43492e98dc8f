/* SPDX-License-Identifier: BSD-3-Clause */
/* xsksock.c: /xsk_socket, /xsk_insert, /xsk_remove on the device-plugin socket. */
#ifndef XPILE_AGENT_XSKSOCK_H
#define XPILE_AGENT_XSKSOCK_H

#include <stdbool.h>
#include <stddef.h>

#include "agent.h"
#include "xpile/devplugin.h"

/* What the device-plugin connection knows of its client. */
struct ag_xsk_peer {
	bool connected; /* /connect answered /host_ok */
	const char *host; /* the name it gave */
	unsigned int socks; /* sockets made for it */
	int pid; /* SO_PEERCRED (0: not visible), for xsk_stats "pidfd" */
};

/* Serves request @req with its argument @arg (xp_dp_req_parse(); with the fd it
 * carried, or -1) when it is one of ours: true, the reply in @rep and a socket to pass
 * in *@rep_fd (the caller closes it once sent). */
bool ag_xsksock_serve(struct agent *a, struct ag_iface *i, struct ag_xsk_peer *p,
		      enum xp_dp_req req, const char *arg, int fd, char *rep, size_t len,
		      int *rep_fd);

#endif /* XPILE_AGENT_XSKSOCK_H */
