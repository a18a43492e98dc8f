/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The kubelet side's own state (kubelet.c, kubemount.c): pools and their devices. Not
 * for the rest of the agent (kubelet.h has its hooks).
 */
#ifndef XPILE_AGENT_KUBELET_TYPES_H
#define XPILE_AGENT_KUBELET_TYPES_H

#include <stdbool.h>
#include <sys/types.h>

#include "agent.h"

#define AG_MAX_POOLS 8
#define AG_POOL_DEVS 512 /* devices (queues) per pool */
#define AG_POOL_WATCHERS 8 /* ListAndWatch streams per pool (the kubelet holds one) */

struct ag_dev {
	char id[IF_NAMESIZE + 12]; /* "eth1:0" */
	int iface; /* index into agent.ifaces */
	__u32 queue;
	int numa; /* -1: none */
	bool healthy;
	const char *why; /* when not healthy */
};

struct ag_kubelet;

struct ag_pool {
	bool used;
	struct ag_kubelet *k;
	char name[AG_POOL_MAX];
	char resource[AG_POOL_MAX + 64];
	char endpoint[AG_POOL_MAX + 16]; /* xpile-POOL.sock, in the kubelet's directory */
	char path[AG_SUN_PATH];
	ino_t ino; /* of the socket we bound: a path re-created by another is not ours */
	dev_t dev;
	struct ag_grpc_srv *srv;
	struct ag_grpc_call *watch[AG_POOL_WATCHERS];
	struct ag_dev devs[AG_POOL_DEVS]; /* as last sent */
	unsigned int ndevs;
	struct ag_dev next[AG_POOL_DEVS]; /* scratch: as they are now */
	unsigned int nnext;
	bool scanned;
	bool registered, registering, reg_failed_logged;
	double reg_start, next_try;
	unsigned int registrations;
	__u64 allocations;
};

struct ag_kubelet {
	struct agent *a;
	struct ag_pool pools[AG_MAX_POOLS];
	char kubelet_sock[AG_SUN_PATH];
	int ino_fd;
	struct ut_ev ino_ev;
	bool ino_armed, closing;
	/* Register again soon: kubelet.sock exists before it listens (bind, then listen). */
	struct ut_ev retry_ev;
	struct __kernel_timespec retry_ts;
	bool retry_armed;
	double retry_wait;
	char ino_buf[4096] __attribute__((aligned(8)));
	double kubelet_created;
	int ioctl_fd; /* SIOCGIFFLAGS */
};

#endif /* XPILE_AGENT_KUBELET_TYPES_H */
