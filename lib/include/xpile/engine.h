/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The engine as a library: ports and queues served by pinned workers, one AF_XDP
 * socket per queue, with the fill and completion rings, batching, the per-core
 * allocator, the idle policy, busy-poll, multi-buffer, host TAPs, capture, handover and
 * the frame ledger done for you; your code sees bursts of packets (xpile/pkt.h).
 * `xpile run` is a command line over exactly this.
 *
 *   XP_OPTS(xp_engine_opts, o, .ports = ports, .nports = 1, .on_burst = drop,
 *           .errbuf = err, .errbuf_len = sizeof(err));
 *   struct xp_engine *e;
 *   int ret = xp_engine_create(&o, &e);     set-up: sockets, UMEMs, steer program
 *   if (!ret) ret = xp_engine_run(e);       until xp_engine_stop() or .duration
 *   xp_engine_destroy(e);                   nothing left attached
 *
 * with, run-loop style (the engine loops, your callback gets each burst):
 *
 *   static void drop(struct xp_worker *w, struct xp_queue *q, struct xp_pkt *p,
 *                    __u32 n, void *arg)
 *   {
 *           xp_pkt_free(w, q, p, n);
 *   }
 *
 * or own-loop style (.worker_main, a DPDK lcore loop on each worker's thread):
 *
 *   static int loop(struct xp_worker *w, void *arg)
 *   {
 *           struct xp_pkt p[64];
 *
 *           while (xp_worker_turn(w)) {
 *                   __u32 work = 0;
 *
 *                   for (__u32 i = 0; i < xp_worker_nqueues(w); i++) {
 *                           struct xp_queue *q = xp_worker_queue(w, i);
 *                           __u32 n = xp_rx_burst(w, q, p, 64);
 *
 *                           xp_tx_burst(w, q, p, n, NULL);   back out where it came
 *                           work += n;
 *                   }
 *                   xp_worker_idle(w, work);
 *           }
 *           return 0;
 *   }
 *
 * Errors: libbpf's model. Every function that can fail returns 0 or a negative errno;
 * the one line that says why goes through the library's log hook (xp_set_log_fn(),
 * xpile/log.h: the engine's own lines, at their levels, and its lower layers'), with
 * the default hook to stderr as "xpile: ...", and the first into .errbuf when given.
 * The report lines of XP_ENGINE_OUT_TEXT and _QUIET (stats, ledger reports) are
 * stderr's; XP_ENGINE_OUT_NONE has none. -EOPNOTSUPP from
 * xp_engine_create() means the options can never work on this system (the command
 * line's exit status 2); anything else is the environment (exit status 1).
 *
 * Threads: create, run, destroy, the stats and the ledger calls from one control
 * thread; xp_engine_stop() from any thread or a signal handler. The worker calls
 * (xpile/pkt.h) only on the worker's own thread.
 */
#ifndef XPILE_ENGINE_H
#define XPILE_ENGINE_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>

#include "xpile/api.h"
#include "xpile/opts.h"
#include "xpile/pkt.h"

#ifdef __cplusplus
extern "C" {
#endif

#define XP_ENGINE_MAX_PORTS 8u
#define XP_ENGINE_MAX_QUEUES 64u /* per port, and per worker */
#define XP_ENGINE_MAX_CORES 64u
#define XP_ENGINE_MAX_TAPS 8u

/* One port: an interface and the RX queues it serves. */
struct xp_engine_port {
	const char *ifname;
	const __u32 *queues; /* NULL: queue 0 */
	__u32 nqueues;
	__u32 reserved_;
	/* The device plugin's socket that hands this port's XSKMAP or sockets over
	 * (`xpile run --uds`), NULL: none; either every port has one or none. */
	const char *uds;
};

enum xp_engine_output {
	XP_ENGINE_OUT_NONE = 0, /* nothing printed: read the stats and the ledger */
	XP_ENGINE_OUT_TEXT, /* `xpile run`'s lines on stderr, stats every .interval */
	XP_ENGINE_OUT_QUIET, /* the summary only (--quiet) */
	XP_ENGINE_OUT_JSON, /* one JSON object per line on stdout (--json) */
	XP_ENGINE_OUT_JSON_QUIET, /* JSON, and no text line but errors (--json --quiet) */
};

enum xp_engine_umem { XP_ENGINE_UMEM_SHARED = 0, XP_ENGINE_UMEM_PER_PORT = 1 };
enum xp_engine_idle { XP_ENGINE_IDLE_AUTO = 0, XP_ENGINE_IDLE_URING, XP_ENGINE_IDLE_POLL };
enum xp_engine_tri { XP_ENGINE_AUTO = 0, XP_ENGINE_ON, XP_ENGINE_OFF };

/*
 * Every knob of `xpile run` (its --help says what each does; the option is named in
 * the comment). Zero is the default throughout.
 */
struct xp_engine_opts {
	size_t sz; /* sizeof(struct xp_engine_opts); the rule: xpile/opts.h */
	/* What the workers do: one of on_burst, on_poll, worker_main. */
	xp_burst_fn on_burst;
	xp_poll_fn on_poll;
	xp_worker_fn worker_main;
	xp_worker_hook worker_init, worker_fini;
	void *arg; /* passed to every callback */
	const char *name; /* the callback's name in reports (default "callback") */
	bool no_rx; /* sends only (txonly): no steer program, no fill rings */
	bool handle_signals; /* run: SIGINT/SIGTERM/SIGHUP stop, SIGUSR1 audits */
	bool pair_queues; /* queue N of each of two ports on one worker (fwd: the peer is
			   * xp_worker_find(w, other port, N)) */
	__u8 reserved0_[5];
	/* Ports and cores (--iface, --cores, --uds). */
	const struct xp_engine_port *ports;
	__u32 nports, ncores;
	const int *cores; /* NULL: core 0 */
	__u32 nports_min, nports_max; /* the callback's needs (0: 1 .. XP_ENGINE_MAX_PORTS) */
	/* Output (--duration, --interval, --json, --quiet, --verbose). */
	double duration; /* seconds; 0: until xp_engine_stop() (or a signal) */
	double interval; /* seconds between stats lines and live audits; 0: 1 */
	enum xp_engine_output output;
	int verbose; /* 1: -v, 2: -vv */
	/* AF_XDP sockets. */
	int xsk_mode; /* enum xp_xsk_mode (xpile/xsk.h): --xsk-mode, --copy, --zero-copy */
	int xdp_mode; /* enum xp_steer_mode (xpile/steer.h): --xdp-mode */
	__u32 rx_ring, tx_ring, fill_ring, comp_ring; /* 0: 2048, 2048, 2 x RX, TX */
	__u32 batch; /* --batch, 0: 64 */
	__u32 busy_budget, tx_budget; /* --busy-budget, --tx-budget */
	bool no_need_wakeup, busy_poll, spin;
	__u8 multi_buffer; /* enum xp_engine_tri: --multi-buffer / --no-multi-buffer */
	int idle_wait; /* enum xp_engine_idle: --idle-wait */
	/* The steer program (--attach-existing, --force, --reattach, --pin-path). */
	bool attach_existing, force, reattach;
	bool audit; /* --audit: stop-the-world audit every interval too */
	const char *pin_path;
	/* UMEM and frames (--umem, --layout, --hugepages, --frame-size, --headroom,
	 * --frames, --cache, --pool, --m3-seed, --channels, --ranks, --ledger-debug). */
	int umem; /* enum xp_engine_umem */
	int layout; /* enum xp_layout_kind (xpile/layout.h) */
	int hugepages; /* enum xp_hugepages (xpile/mem.h) */
	int pool; /* enum xp_pool_backend (xpile/pool.h) */
	__u32 frame_size, headroom, frames;
	__s32 cache; /* per-core cache; 0: 256, -1: none */
	__u64 m3_seed;
	__u32 channels, ranks;
	bool ledger_debug;
	__u8 reserved1_[7];
	/* Capture (--capture, --capture-rule, --snaplen, --capture-dir, --capture-size,
	 * --capture-buffer). */
	const char *capture; /* FILE, "-": stdout; NULL: off */
	const char *capture_rule;
	__u32 snaplen, capture_dir; /* capture_dir: 1 rx, 2 tx, 3 both (0: both) */
	__u32 capture_size, capture_buffer;
	/* Host TAPs (--host-tap PORT[=NAME], --punt, --tap-keep, --tap-read). */
	const char *const *host_taps;
	__u32 nhost_taps;
	int tap_read; /* 0 auto, 1 multishot, 2 fixed */
	const char *punt_rule;
	bool tap_keep;
	__u8 reserved2_[7];
	/* Handover (--handover PATH, --take-over PATH). */
	const char *handover, *take_over;
	/* Errors: the first line also here (NUL-terminated, truncated), when given. */
	char *errbuf;
	size_t errbuf_len;
	/* The idle policy: what a sleep and its wake-up cost here, in us (--idle-wake-us;
	 * 0: measured at start), and the longest nap (--idle-nap-us; 0: 200 us, negative:
	 * never nap). */
	__u32 idle_wake_us;
	__s32 idle_nap_us;
	/* The control socket (docs/engine.md, Control socket): the engine's name (NULL:
	 * the ports joined by '+', "@NS" in a named network namespace), its path (NULL:
	 * /run/xpile/NAME.sock), none at all, and the uids and gids besides root and the
	 * engine's own that may use it (SO_PEERCRED). */
	const char *ctl_name, *ctl_path;
	const __u32 *ctl_uids, *ctl_gids;
	__u32 nctl_uids, nctl_gids;
	bool no_ctl;
	__u8 reserved3_[7];
};
#define xp_engine_opts__last_field reserved3_

/*
 * Sets the engine up as `xpile run` does before its ready line: ports checked, queues
 * planned on cores, UMEMs carved, sockets bound, the steer program attached, TAPs
 * opened. Nothing runs yet. *@out is the caller's to xp_engine_destroy(). -EINVAL: the
 * opts rule, no callback or more than one, a port or core list that cannot be;
 * -EOPNOTSUPP: options that can never work here; -ENODEV: a device refused what was
 * asked (zero-copy on a driver without it); else the environment's errno.
 */
XP_API int xp_engine_create(const struct xp_engine_opts *opts, struct xp_engine **out);
/*
 * Starts a worker per core, registers the sockets once their fill rings hold frames,
 * and returns when stopped (xp_engine_stop(), .duration, a signal with
 * .handle_signals, every worker returned): then the sockets leave the XSKMAP, the
 * workers drain and the exit audit proves every frame. 0; -EUCLEAN: a frame lost or
 * held twice (the ledger said where); -ENETDOWN: a port failed while running; another
 * errno: starting failed. Once per engine.
 */
XP_API int xp_engine_run(struct xp_engine *e);
/* Asks xp_engine_run() to stop: any thread, async-signal-safe. */
XP_API void xp_engine_stop(struct xp_engine *e);
/* Undoes the set-up: steer program detached (unless someone else's), UMEMs freed. */
XP_API void xp_engine_destroy(struct xp_engine *e);

/* The engine's ports, workers and queues (after create). */
XP_API __u32 xp_engine_nqueues(const struct xp_engine *e);
XP_API struct xp_queue *xp_engine_queue(struct xp_engine *e, __u32 i);
XP_API __u32 xp_engine_nworkers(const struct xp_engine *e);
XP_API struct xp_worker *xp_engine_worker(struct xp_engine *e, __u32 i);
/* The interface name of port @port, NULL out of range. */
XP_API const char *xp_engine_port_name(const struct xp_engine *e, __u32 port);
/* The port's MAC address into @mac: 0 or -ENOENT. */
XP_API int xp_engine_port_mac(const struct xp_engine *e, __u32 port, unsigned char mac[6]);
/* The port's MTU as set-up found it into *@mtu (a remote --uds port: 1500): 0 or
 * -ENOENT. A sender checks its packet size against it (txonly's --pkt-size). */
XP_API int xp_engine_port_mtu(const struct xp_engine *e, __u32 port, __u32 *mtu);
/* Whether the port's link was up when the engine last looked: 1, 0 (down, or no
 * carrier), -ENOENT. It looks when xp_engine_run() starts (0 before) and at each of its
 * watches while running; after run, the last look. */
XP_API int xp_engine_port_link(const struct xp_engine *e, __u32 port);

/* Per-queue counters, written by its worker: a relaxed copy, any time. */
struct xp_queue_stats {
	__u64 rx_packets, rx_bytes, tx_packets, tx_bytes;
	__u64 tx_dropped; /* no room in the TX ring */
	__u64 bad_descs; /* descriptors from the kernel outside the UMEM or oversized */
	__u64 fill_starved; /* the fill ring had room, or xp_pkt_alloc() was asked for
			     * frames, and the allocator had none */
	__u64 tx_kicks, rx_wakeups;
	__u64 fill_posted, tx_posted, completed, rx_descs;
	__u64 tx_copied; /* sent across two UMEMs: copies into this queue's UMEM */
	__u64 leaked; /* frames its callback left unaccounted for */
	__u64 reserved_[3];
};
XP_API int xp_queue_stats_get(const struct xp_engine *e, const struct xp_queue *q,
			      struct xp_queue_stats *out);

/* Where a UMEM's frames are (xpile/ledger.h's places, the engine's view). */
struct xp_engine_ledger {
	__u32 umem, nframes;
	__s64 free, fill, app, tx, uring; /* the ledger's counts (summed over accounts) */
	__s64 held; /* of app: held by workers (xp_pkt_hold()) */
	__u64 leaked; /* frames callbacks left unaccounted for, so far */
	__u64 live_failures; /* live audits that failed so far */
	__u64 reserved_[4];
};
/* UMEM @umem's ledger into @out: -ENOENT for no such UMEM. A relaxed read while
 * running; exact once run returned. */
XP_API int xp_engine_ledger_get(const struct xp_engine *e, __u32 umem,
				struct xp_engine_ledger *out);
XP_API __u32 xp_engine_numems(const struct xp_engine *e);
/* A live audit now (from the control thread while running): 0 or -EUCLEAN (reported). */
XP_API int xp_engine_audit(struct xp_engine *e);

#ifdef __cplusplus
}
#endif

#endif /* XPILE_ENGINE_H */
