/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * xpile-agent: the node daemon. One thread, one io_uring loop (loop.c) serving the
 * signals, a tick timer, the device-plugin sockets (dp.c) and the control socket
 * (ctl.c); the config (config.c) is applied to the interfaces by iface.c, which
 * keeps the steer programs attached through pinned bpf_links across restarts.
 */
#ifndef XPILE_AGENT_H
#define XPILE_AGENT_H

#include <limits.h>
#include <net/if.h>
#include <stdbool.h>
#include <sys/types.h>
#include <sys/un.h>
#include <linux/types.h>
#include <jansson.h>
#include <liburing.h>
#include <linux/xdp_diag.h>

#include "xpile/steer.h"

#define AG_MAX_IFACES 32
#define AG_MAX_IDS 32
#define AG_MAX_HOSTS 16
#define AG_HOST_MAX 64 /* a /connect request fits the plugin's 64-byte buffer */
#define AG_SUN_PATH (sizeof(((struct sockaddr_un *)0)->sun_path))

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
	double dp_idle; /* seconds a device-plugin connection may stay silent */
	enum ag_xsk_source { AG_XSK_DIAG, AG_XSK_PIDFD, AG_XSK_OFF } xsk_stats;
	__u32 dp_max_conns;
};

/* Reads and checks @path into @c (zeroed first). 0, or -1 with ONE line "FILE:
 * FIELD.PATH: what is wrong" in @err. */
int ag_config_load(const char *path, struct ag_config *c, char *err, size_t len);
void ag_config_free(struct ag_config *c);

/* dupkeys.c: where the duplicate key jansson refused (@e, json_error_duplicate_key)
 * stands in @text: 1 and @d filled, or 0 when its path cannot be told. */
struct ag_dupkey {
	char path[256]; /* of the object holding it: "" (the top), "interfaces[1]" */
	char key[128];
};
int ag_json_dupkey(const char *text, const json_error_t *e, struct ag_dupkey *d);

/* ---- loop.c ---- */
struct ag_loop;
struct ag_ev;
/* A completion of the operation @ev was submitted with: @res as io_uring gives it. */
typedef void (*ag_ev_fn)(struct ag_loop *l, struct ag_ev *ev, int res, unsigned int flags);
struct ag_ev {
	ag_ev_fn fn;
};

struct ag_loop {
	struct io_uring ring;
	bool stop;
};

int ag_loop_init(struct ag_loop *l, unsigned int entries);
void ag_loop_fini(struct ag_loop *l);
/* An SQE whose completion goes to @ev (the ring is flushed when full). */
struct io_uring_sqe *ag_loop_sqe(struct ag_loop *l, struct ag_ev *ev);
/* Waits and dispatches until l->stop. */
int ag_loop_run(struct ag_loop *l);
/* After l->stop: dispatches what cancelled and shut-down operations complete with,
 * so that their owners free themselves. */
void ag_loop_drain(struct ag_loop *l);

/* ---- server.c: a listening socket served by the loop, and its connections ---- */
struct ag_conn {
	struct ag_ev ev; /* its pending receive; first: the completion finds the conn */
	struct ag_conn *next, **pprev;
	struct agent *a;
	struct ag_srv *srv; /* NULL once the server is gone */
	int fd;
	double last; /* when it last spoke */
};

struct ag_srv {
	struct ag_ev ev; /* accept; first, likewise */
	struct agent *a;
	char name[32]; /* for the log */
	int fd;
	bool closing, accepting;
	struct ag_conn *conns;
	/* A new connection: 0 when taken (ag_conn_add), else it is closed at once. */
	int (*accepted)(struct ag_srv *s, int fd);
	/* Frees the server once the ring no longer refers to it. */
	void (*release)(struct ag_srv *s);
};

/* Serves @fd (listening): accepts until ag_srv_stop(), @s->accepted for each. */
void ag_srv_start(struct ag_srv *s, struct agent *a, int fd);
/* Shuts every connection down (each receive's completion frees its conn), closes the
 * listening socket; @s->release runs now or when the cancelled accept completes. */
void ag_srv_stop(struct ag_srv *s);
void ag_conn_add(struct ag_srv *s, struct ag_conn *c, int fd, ag_ev_fn on_recv);
/* Unlinks @c (if still listed) and closes its fd; the caller frees it. */
void ag_conn_close(struct ag_conn *c);
/* Shuts down the connections silent for longer than limit(conn) seconds. */
void ag_srv_expire(struct ag_srv *s, double now, double (*limit)(const struct ag_conn *c));
int ag_mkdir_p(const char *dir);

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
	int watch_state; /* watch.c: what was logged last */
	/* xskpidfd.c: the clients given the XSKMAP, and the socket probe. */
	struct ag_xsk_client clients[AG_XSK_CLIENTS];
	__u32 nclients;
	int probe_fd;
	bool probe_loaded;
	__u64 reattached; /* times watch.c attached the program again */
};

struct agent {
	struct ag_config cfg;
	const char *cfg_path;
	bool detach_on_exit;
	struct ag_loop loop;
	struct ag_iface ifaces[AG_MAX_IFACES];
	__u64 generation; /* configs applied */
	bool last_reload_ok;
	int sigfd;
	struct ag_ev sig_ev;
	char sigbuf[128];
	struct ag_ev tick_ev;
	struct __kernel_timespec tick_ts;
	struct ag_srv *ctl;
	struct ag_metrics *metrics;
	__u64 dp_handshakes; /* /fin answered */
	__u32 dp_conns; /* open device-plugin connections */
	int watch_fd; /* RTNLGRP_LINK notifications (watch.c), or -1 */
	int xsk_scratch_fd; /* xskpidfd.c's one-slot XSKMAP, or -1 */
};

/* iface.c: brings the interfaces to @new (adopting what runs there, replacing rule
 * sets that differ, detaching interfaces no longer listed). 0, or -1 with one line in
 * @err; on a failure the interfaces already changed stay changed (logged). */
int ag_apply(struct agent *a, const struct ag_config *new, char *err, size_t len);
/* Checks, before anything changes, that @new can be applied over the running state. */
int ag_apply_check(struct agent *a, const struct ag_config *new, char *err, size_t len);
void ag_ifaces_close(struct agent *a, bool detach);
/* Serves one interface as @c says (adopt or attach, rules, device-plugin socket). */
int ag_iface_serve(struct agent *a, const struct ag_iface_cfg *c, char *err, size_t len);
/* Detaches and unpins @i, closes its device-plugin socket. */
void ag_iface_detach(struct agent *a, struct ag_iface *i);
struct ag_iface *ag_iface_find(struct agent *a, const char *name);
/* Rules in force on @s, or a negative errno. */
int ag_rules_count(struct xp_steer *s);
bool ag_rules_equal(const struct xp_rule *a, __u32 na, const struct xp_rule *b, __u32 nb);

/* dp.c: the AF_XDP device plugin's socket of @i (at cfg dp_dir/NAME/afxdp.sock). */
int ag_dp_open(struct agent *a, struct ag_iface *i);
void ag_dp_close(struct agent *a, struct ag_iface *i);
/* Closes connections silent for longer than the bound. */
void ag_dp_tick(struct agent *a, double now);

/* watch.c: puts the steer program back when it is detached or replaced (the
 * interface's on_replace says whether a foreign program is removed). */
int ag_watch_open(struct agent *a);
void ag_watch_iface(struct agent *a, struct ag_iface *i);
void ag_watch_all(struct agent *a);

/* ctl.c: the control socket. */
int ag_ctl_open(struct agent *a);
void ag_ctl_close(struct agent *a);
void ag_ctl_tick(struct agent *a, double now);

/* metrics.c: HTTP /metrics, /healthz, /readyz (libmicrohttpd, external loop). */
int ag_metrics_open(struct agent *a);
void ag_metrics_close(struct agent *a); /* stops serving; pending ops cancelled */
void ag_metrics_free(struct agent *a); /* after ag_loop_drain() */

/* xskdiag.c: the AF_XDP sockets of this namespace (sock_diag), at most @max: how
 * many, or a negative errno (-ENOENT: the kernel has no xsk_diag). */
struct ag_xsk_stat {
	int ifindex;
	__u32 queue;
	struct xdp_diag_stats st;
	__u64 ino; /* the socket's inode (pidfd) */
	bool have_zc, zc; /* XDP_OPTIONS read (pidfd); zero-copy */
};
int ag_xsk_diag(struct ag_xsk_stat *out, int max);
/* xskpidfd.c: the sockets of the device-plugin clients that are in a served XSKMAP
 * (metrics.xsk_stats "pidfd"); @denied: some could not be read (no CAP_SYS_PTRACE). */
int ag_xsk_pidfd(struct agent *a, struct ag_xsk_stat *out, int max, bool *denied);
/* Remembers the process @pid as a client of @i (given its XSKMAP). */
void ag_xsk_client_add(struct agent *a, struct ag_iface *i, int pid);
void ag_xsk_iface_close(struct agent *a, struct ag_iface *i);

/* main.c */
double ag_now(void);
void ag_log(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* SIGHUP and the control socket's reload: parse, check, apply; one line either way. */
int ag_reload(struct agent *a, char *err, size_t len);

#endif /* XPILE_AGENT_H */
