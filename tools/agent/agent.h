/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * xpile-agent: the node daemon. One thread, one event loop (tools/util/loop.h:
 * io_uring, or epoll where io_uring is refused) serving the signals, a tick timer, the
 * device-plugin sockets (dp.c) and the control socket (ctl.c); the config (config.c)
 * is applied to the interfaces by iface.c, which keeps the steer programs attached
 * through pinned bpf_links across restarts. This header holds the agent's types; each
 * file's functions are in its own header.
 */
#ifndef XPILE_AGENT_H
#define XPILE_AGENT_H

#include <limits.h>
#include <net/if.h>
#include <stdbool.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <sys/un.h>
#include <linux/time_types.h>
#include <linux/types.h>
#include <jansson.h>
#include <linux/xdp_diag.h>

#include "clock.h"
#include "lines.h"
#include "loop.h"
#include "say.h"
#include "server.h"
#include "sockdir.h"
#include "xpile/steer.h"

#define AG_MAX_IFACES 32
#define AG_MAX_IDS 32
#define AG_MAX_HOSTS 16
#define AG_HOST_MAX 64 /* a /connect request fits the plugin's 64-byte buffer */
#define AG_SUN_PATH (sizeof(((struct sockaddr_un *)0)->sun_path))
#define AG_POOL_MAX 32
#define AG_NUMA_SYSFS (-2)

/* ---- config.c ---- */
struct ag_iface_cfg {
	char name[IF_NAMESIZE];
	__u32 queues; /* RX queues clients may use (0: every queue of the interface) */
	enum xp_steer_mode mode;
	struct xp_action dflt;
	struct xp_rule *rules;
	__u32 nrules;
	/* /connect,<hostname> answered /host_ok for these only (none: any host). */
	char hosts[AG_MAX_HOSTS][AG_HOST_MAX];
	__u32 nhosts;
	/* on_replace: take the interface back from a foreign program (else report it). */
	bool reattach;
	/* kubelet.c: the device pool of its queues (resource PREFIX/POOL), its NUMA node
	 * (AG_NUMA_SYSFS: the device's numa_node in sysfs), the pinned-map mode. */
	char pool[AG_POOL_MAX];
	int numa_node;
	bool pinned_map;
};

struct ag_config {
	char file[PATH_MAX];
	struct ag_iface_cfg ifaces[AG_MAX_IFACES];
	__u32 nifaces;
	char ctl_path[AG_SUN_PATH];
	mode_t ctl_mode;
	uid_t allow_uids[AG_MAX_IDS];
	__u32 nallow_uids;
	gid_t allow_gids[AG_MAX_IDS];
	__u32 nallow_gids;
	char metrics_addr[64];
	char dp_dir[AG_SUN_PATH - IF_NAMESIZE - 16];
	mode_t dp_mode;
	gid_t dp_gid; /* the sockets' group, (gid_t)-1: the agent's */
	double dp_idle; /* seconds a device-plugin connection may stay silent */
	enum ag_xsk_source { AG_XSK_DIAG, AG_XSK_PIDFD, AG_XSK_OFF } xsk_stats;
	__u32 dp_max_conns;
	/* kubelet.c: the Device Plugin API (on when the config has "kubelet"). */
	struct ag_kubelet_cfg {
		bool on;
		char dir[AG_SUN_PATH - 32]; /* the kubelet's device-plugins directory */
		char prefix[64]; /* resource names are PREFIX/POOL */
		char pod_resources[AG_SUN_PATH]; /* the PodResources API's socket */
	} kubelet;
};

/* ---- the agent ---- */
#define AG_XSK_CLIENTS 64 /* device-plugin client processes remembered per interface */
struct ag_xsk_client {
	int pid;
	int pidfd; /* polls readable once the process exited */
	bool warned; /* its sockets could not be read: logged */
};

struct ag_iface {
	bool used;
	char name[IF_NAMESIZE];
	struct xp_steer *steer;
	struct ag_iface_cfg cfg; /* as applied (rules owned here) */
	bool adopted; /* found attached at start, not loaded by this run */
	struct ag_dp *dp; /* its device-plugin socket */
	int ifindex;
	int lock_fd; /* iface.c: one agent per interface (an abstract socket) */
	int watch_state; /* watch.c: what was logged last */
	/* xskpidfd.c: the clients given the XSKMAP, and the socket probe. */
	struct ag_xsk_client clients[AG_XSK_CLIENTS];
	__u32 nclients;
	int probe_fd;
	bool probe_loaded;
	__u64 reattached; /* times watch.c attached the program again */
	__u32 kube_queues; /* kubelet.c: RX queues it had when last seen */
	bool pinned, pin_mounted; /* pinmap.c: xsks_map pinned; its bpffs mounted by us */
	/* lend.c: moved into a pod's namespace by xpile-cni, served there. */
	bool lent;
	char lent_container[96];
	char lent_netns[256];
};

struct agent {
	struct ag_config cfg;
	const char *cfg_path;
	bool detach_on_exit;
	struct ut_loop loop;
	struct ag_iface ifaces[AG_MAX_IFACES];
	__u64 generation; /* configs applied */
	bool last_reload_ok;
	int sigfd;
	struct ut_ev sig_ev;
	char sigbuf[128];
	struct ut_ev tick_ev;
	struct __kernel_timespec tick_ts;
	struct ut_line_srv *ctl; /* the control socket (ctl.c) */
	struct ag_sock ctl_sock; /* where it is bound (sockdir.h) */
	struct ag_metrics *metrics;
	__u64 dp_handshakes; /* /fin answered */
	__u32 dp_conns; /* open device-plugin connections */
	int watch_fd; /* RTNLGRP_LINK notifications (watch.c), or -1 */
	int xsk_scratch_fd; /* xskpidfd.c's one-slot XSKMAP, or -1 */
	int xsk_bound_fd; /* xskpidfd.c's bound-queue probe, or -1 */
	struct ag_podres *podres; /* podres.c: who holds which queue, or NULL */
	struct ag_kubelet *kubelet; /* kubelet.c, or NULL */
	struct ag_h2 *grpc_clients; /* grpc.c: calls out (Register, PodResources) */
};

#endif /* XPILE_AGENT_H */
