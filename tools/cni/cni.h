/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * xpile-cni: the CNI plugin (spec 1.0) that gives a pod an interface the agent serves.
 * cni.c speaks CNI (environment, the config on stdin, a result or an error on
 * stdout), link.c the netlink it needs (libmnl), agent.c the agent's control socket.
 */
#ifndef XPILE_CNI_H
#define XPILE_CNI_H

#include <net/if.h>
#include <stdbool.h>
#include <linux/types.h>

/* The CNI spec's error codes (and ours from 100 on). */
enum cni_code {
	CNI_ERR_VERSION = 1,
	CNI_ERR_FIELD = 2,
	CNI_ERR_CONTAINER = 3,
	CNI_ERR_ENV = 4,
	CNI_ERR_IO = 5,
	CNI_ERR_DECODE = 6,
	CNI_ERR_CONFIG = 7,
	CNI_ERR_AGAIN = 11,
	CNI_ERR_CHECK = 100, /* CHECK found the attachment not as ADD left it */
	CNI_ERR_AGENT = 101, /* the agent refused or cannot be reached */
};

/* ---- link.c ---- */
struct cni_link {
	int ifindex;
	char name[IF_NAMESIZE];
	unsigned int flags; /* IFF_* */
	__u8 mac[6];
	__u32 xdp_prog_id; /* 0: none attached */
	__u32 rx_queues;
};

/* @name in the network namespace of @netns_fd (-1: ours): 0, -ENODEV, or -errno. */
int cni_link_get(int netns_fd, const char *name, struct cni_link *l);
/* Moves @name from the namespace of @from_fd (-1: ours) to that of @to_fd, keeping its
 * name: 0 or -errno. */
int cni_link_move(int from_fd, const char *name, int to_fd);
/* Sets @name up (a move to another namespace takes it down): 0 or -errno. */
int cni_link_up(int netns_fd, const char *name);

/* ---- agent.c: one request line to the control socket, one reply ---- */
/* {"cmd":CMD,"iface":IFACE, extra...}: 0 when ok; else -1 and the agent's error (or
 * why it cannot be reached) in @err. @prog_id, if not NULL, gets the interface's
 * prog_id from a "status" reply. */
int cni_agent_lend(const char *sock, const char *iface, const char *netns, const char *container,
		   char *err, size_t len);
int cni_agent_reclaim(const char *sock, const char *iface, char *err, size_t len);
int cni_agent_prog_id(const char *sock, const char *iface, __u32 *prog_id, char *err, size_t len);

#endif /* XPILE_CNI_H */
