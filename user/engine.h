/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The engine's core: ports, queues (one AF_XDP socket each), workers, the modes'
 * contract and the engine itself, as every piece of user/ sees them; types only, and
 * no file's functions (run.h is run.c's: set-up, the main loop, tear-down).
 * Every feature beside the core (dom.h memory domains, capture.h, tap.h, handover.h,
 * audit.h, modes/router.h, ...) has a header of its own with its config; this one
 * includes none of them: the engine holds their config and state by pointer.
 *
 * Ownership: a struct eng_q (one AF_XDP socket = one interface queue) belongs to exactly
 * one worker, which alone touches its four rings, its counters' writes and its cache.
 * The main thread only reads counters (relaxed, 64-bit aligned) and, while every worker
 * is parked (audit pause) or gone, the rings' indices.
 */
#ifndef XPILE_ENG_ENGINE_H
#define XPILE_ENG_ENGINE_H

#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <linux/types.h>

#include "xpile/deal.h"
#include "xpile/engine_types.h"
#include "xpile/ledger.h"
#include "xpile/region.h"
#include "xpile/steer.h"
#include "xpile/layout.h"
#include "xpile/mem.h"
#include "xpile/xsk.h"

#include "clock.h"
#include "idle.h"
#include "say.h"
#include "wstats.h"

#define ENG_MAX_PORTS 8
#define ENG_MAX_QUEUES 64
#define ENG_MAX_WORKERS 64
#define ENG_MAX_BATCH 256
#define ENG_MAX_DOMS ENG_MAX_PORTS

struct eng_q;
struct engine;
/* Features beside the core (their headers): */
struct eng_dom; /* dom.h: a frame domain (one UMEM) */
struct eng_wdom; /* dom.h: a worker's allocator state in one */
struct eng_mem_cfg; /* dom.h */
struct ut_cap_ring; /* tools/util/capring.h, for capture.h */
struct ut_cap;
struct eng_capture_cfg; /* capture.h */
struct eng_cap_run;
struct xp_qsbr; /* xpile/qsbr.h */
struct eng_tap; /* tap.h */
struct eng_tap_w;
struct eng_tap_cfg;
struct eng_uwait; /* uring_wait.h */
struct eng_ho; /* handover_proto.h */
struct eng_ho_cfg; /* handover.h */
struct eng_ctl; /* ctl.h: the control socket */
struct eng_ctl_cfg;
struct eng_punt; /* punt.h */
struct eng_router; /* modes/router.h */
struct eng_router_cfg;

/* Per-socket counters: written by the owning worker only. */
struct eng_counters {
	__u64 rx_packets, rx_bytes, tx_packets, tx_bytes;
	__u64 tx_dropped; /* no room in the TX ring */
	__u64 bad_descs; /* descriptors from the kernel outside the UMEM or oversized */
	__u64 fill_starved; /* fill ring had room the pile could not fill */
	__u64 tx_kicks, rx_wakeups;
	__u64 fill_posted, tx_posted, completed; /* ring traffic, for the audit split */
	__u64 rx_descs; /* descriptors taken from RX: fill_posted - rx_descs are in the kernel */
	__u64 tx_copied; /* fwd across two UMEMs: frames copied into this socket's UMEM */
	__u64 leaked; /* frames its callback left unaccounted for (api.c) */
};

/* A socket's ring indices at its worker's cut (user/audit.c): fill, RX, TX and
 * completion producer and consumer. */
struct eng_ring_cut {
	__u32 fp, fc, rp, rc, tp, tc, cp, cc;
};

struct eng_q {
	struct xp_queue pub; /* first: what xpile/pkt.h's inlines read (api.c fills it) */
	struct xp_xsk *xsk;
	struct eng_port *port;
	struct eng_worker *w;
	struct eng_dom *dom; /* the frame domain (UMEM) of its port */
	struct eng_wdom *wd; /* its worker's allocator state in that domain */
	__u32 queue;
	struct eng_q *peer; /* fwd: where what arrives here leaves */
	__u32 tx_inflight; /* posted to TX, not completed (frames) */
	struct eng_counters c;
	struct eng_counters shown; /* main thread: counters at the last stats line */
	bool napi_checked; /* main thread: --busy-poll's NAPI id looked at */
	__u64 leak_told; /* main thread: c.leaked at the last report (api_engine.c) */
	/* Its worker drives the queue's NAPI with a recvfrom per pass: --busy-poll, or busy
	 * polling on by itself (idle_engine.c) once the main thread saw a NAPI id. */
	bool busy_live;
	struct eng_ring_cut cut; /* written by the owning worker at its cut */
};

struct eng_port {
	char ifname[16];
	int ifindex;
	__u32 nqueues;
	__u32 queues[ENG_MAX_QUEUES];
	unsigned char mac[6];
	__u32 mtu; /* at set-up (xp_engine_port_mtu()) */
	struct xp_steer *steer;
	struct eng_tap *tap; /* --host-tap, else NULL */
	struct eng_dom *dom; /* the frame domain its sockets share */
	bool steer_borrowed; /* found attached: not ours to remove */
	int uds_map_fd; /* --uds: the XSKMAP the agent handed over (uds.c), else unused */
	/* --uds where the agent offers /xsk_socket (uds.c): AF_XDP sockets it made on the
	 * node, not used yet (one for the UMEM, one per queue), the ifindex to bind them
	 * to; remote: the interface is not in our namespace at all. */
	int uds_socks[ENG_MAX_QUEUES + 1];
	__u32 uds_nsocks;
	int uds_ifindex;
	bool uds_sock_mode, remote;
	/* Main thread (watch.c): what was last seen, so each change is told once. */
	bool link_up, gone, prog_lost, pins_told, half_seen, registered;
	__u64 vanished_ns; /* --reattach: when the program and its pins were first seen gone */
};

/* The worker loop's own state between turns (worker.c): the stop drain, the idle
 * policy's state (idle.h) and the idle period under way. */
struct eng_loop {
	__u64 stop_deadline, idle_since;
	bool napped; /* the idle period under way holds a nap */
	struct eng_idle st;
};

struct eng_worker {
	struct engine *e;
	struct eng_loop loop;
	int core;
	__u32 id;
	pthread_t thread;
	bool started;
	struct eng_q *q[ENG_MAX_QUEUES];
	__u32 nq;
	struct eng_wdom *wd; /* indexed by domain id: e->ndoms of them (dom.c) */
	/* The capture's ring (capture.h), else NULL: set before the workers start
	 * (--capture) or by the control thread (`capture start`, release); loaded once per
	 * batch (acquire), and freed only a grace period after it was unset. */
	struct ut_cap_ring *cap;
	__u32 grace_id; /* its slot in e->grace */
	struct eng_uwait *uwait; /* idle wait on io_uring (uring_wait.h), NULL: poll() */
	/* Its idle policy's choice and counts (idle.h), for the stats (relaxed): idle
	 * periods that ended spinning, napping, asleep; how (enum eng_idle_how). */
	struct {
		__u64 spins, naps, sleeps, gap_ns, pps;
		__u32 how, shared;
	} idle;
	struct eng_tap_w *tapw; /* --host-tap: this worker's TAP ring (tap.h), else NULL */
	__u32 parked_gen; /* last audit generation this worker parked for */
	bool done; /* xp_worker_done(): leaves once its TX is completed (worker.c) */
	bool exited; /* returned: the main thread may read its state */
	/* --handover / --take-over: when it parked, resumed, and its first and last turns
	 * that moved packets (CLOCK_MONOTONIC ns; the pause a handover costs) */
	__u64 ho_park_ns, ho_resume_ns, ho_first_work_ns, ho_last_work_ns;
	bool fault_done; /* XPILE_FAULT injected */
	__u32 cut_ticket; /* order of the cuts in a round (audit.c) */
	__u32 cut_gen; /* round its cuts answer; published last */
	struct eng_wstats ws; /* its time accounts (wstats.h): written by it alone */
	__u32 loop_work; /* own-loop style: the ring work of this turn (worker.c) */
	__u64 scratch[ENG_MAX_BATCH];
	struct xdp_desc descs[ENG_MAX_BATCH];
	struct xp_pkt pkts[ENG_MAX_BATCH]; /* the burst callbacks' (worker.c) */
};

/*
 * What the workers run: the public API's callbacks (xpile/engine.h), one of on_burst,
 * on_poll or worker_main, or an internal poll (the router, not on the public API).
 */
struct eng_mode {
	const char *name;
	bool needs_rx; /* attach the steer program and register sockets */
	bool paired; /* queue N of each of two ports on one worker, each the other's peer */
	__u32 nports_min, nports_max;
	/* Per-socket work for one loop turn: returns packets handled (0 = idle). */
	__u32 (*poll)(struct eng_worker *w, struct eng_q *q);
	xp_burst_fn on_burst;
	xp_poll_fn on_poll;
	xp_worker_fn worker_main;
	xp_worker_hook worker_init, worker_fini;
	void *arg;
	/* Set-up after the host TAPs (the router's FIB maps them to ports), its tear-down,
	 * and its report at exit, after the workers stopped (NULL: none). */
	int (*setup_late)(struct engine *e);
	void (*teardown_late)(struct engine *e);
	void (*report)(struct engine *e);
};

struct eng_config {
	const struct eng_mode *mode;
	struct {
		char ifname[16];
		__u32 nqueues;
		__u32 queues[ENG_MAX_QUEUES];
	} ports[ENG_MAX_PORTS];
	__u32 nports;
	int cores[ENG_MAX_WORKERS];
	__u32 ncores;
	double duration, interval;
	bool json, quiet, verbose;
	bool silent; /* XP_ENGINE_OUT_NONE: no line but errors */
	enum xp_xsk_mode xsk_mode;
	enum xp_steer_mode xdp_mode;
	__u32 rx_ring, tx_ring, fill_ring, comp_ring, batch;
	bool no_need_wakeup, busy_poll, multi_buffer, multi_buffer_set, attach_existing, force;
	bool reattach; /* put our own program back when someone removes it */
	__u32 busy_budget, tx_budget;
	const char *pin_path;
	const char *uds[ENG_MAX_PORTS]; /* --uds PATH of each --iface, in order */
	__u32 nuds;
	bool handle_signals; /* the main loop takes SIGINT/SIGTERM/SIGHUP/SIGUSR1 */
	bool audit_each_interval; /* --audit: the main loop's stop-the-world audit (audit.h) */
	bool spin; /* never sleep in poll() when idle */
	int idle_wait; /* enum eng_idle_wait (uring_wait.h) */
	__u32 idle_wake_us; /* --idle-wake-us: a wake-up's cost given, not measured (0) */
	__u32 idle_nap_us; /* --idle-nap-us: the longest nap (idle.h) */
	/* XPILE_FAULT (tests): once running, each worker loses one frame or frees one twice. */
	enum { ENG_FAULT_NONE, ENG_FAULT_LOSE, ENG_FAULT_TWICE } fault;
	/* The features' own config (their headers); NULL: the feature is off. */
	const struct eng_mem_cfg *mem; /* never NULL: the UMEMs, frames and allocator */
	const struct eng_capture_cfg *capture; /* --capture */
	const struct eng_tap_cfg *tap; /* --host-tap */
	const struct eng_ho_cfg *ho; /* --handover, --take-over */
	const struct eng_ctl_cfg *ctl; /* the control socket's options (ctl.h) */
	const struct eng_router_cfg *router; /* --mode router */
};

struct engine {
	struct eng_config cfg;
	struct eng_port ports[ENG_MAX_PORTS];
	struct eng_q qs[ENG_MAX_PORTS * ENG_MAX_QUEUES];
	__u32 nq;
	struct eng_worker workers[ENG_MAX_WORKERS];
	__u32 nworkers;
	/* One arena per NUMA node; each UMEM is a carve of its port's node's arena. */
	struct {
		int node;
		struct xp_arena *a;
	} arenas[ENG_MAX_PORTS];
	__u32 narenas;
	__u32 page_size; /* UMEM page size chosen at set-up */
	/* --hugepages auto fell back to 4 KiB pages: free, needed, the nr_hugepages to set */
	long huge_free, huge_want;
	__u32 huge_need;
	struct eng_dom *dom; /* ndoms of them (dom.c) */
	__u32 ndoms;
	/* 1: the rings are another engine's (handed over, or never taken): workers leave
	 * at once, touching nothing, and no exit path drains, audits or unmaps the XSKMAP. */
	volatile int hands_off;
	struct eng_ho *ho; /* --handover / --take-over state, else NULL */
	bool take_over; /* the sockets and UMEMs are a running engine's (handover_take.c) */
	char topo_note[512]; /* where the channels and ranks came from */
	bool topo_guessed; /* a default stands in for what the probe did not find */
	bool sg; /* the sockets bind with XDP_USE_SG (multi-buffer) */
	bool sg_auto; /* multi-buffer turned on because an MTU exceeds a frame */
	bool busy_auto; /* every port defers its IRQs: preferred busy polling on (idle_engine.c) */
	struct ut_cap *cap; /* the capture's writer (capture.h), else NULL */
	struct eng_cap_run *capr; /* the capture in force: its file and rule (capture.h) */
	/* The workers' quiescent states (worker.h): what the control thread replaces while
	 * they run (a punt set, a capture rule or ring) is freed a grace period later. */
	struct xp_qsbr *grace;
	struct eng_tap *taps[ENG_MAX_PORTS]; /* --host-tap */
	__u32 ntaps;
	struct eng_router *router; /* --mode router: the FIB and its mirror */
	/* Control, written by the main thread. */
	volatile int stop; /* 1: stop receiving, drain; workers exit when drained */
	volatile int stop_req; /* xp_engine_stop(): the main loop ends at its next wake */
	int setup_err; /* the failing set-up stage's negative errno */
	volatile __u32 pause_gen; /* audit request generation; workers park while paused */
	volatile int paused;
	volatile __u32 parked; /* workers parked for the current generation */
	volatile __u32 finished; /* workers that returned */
	int wait_told; /* the idle wait in use was said (uring_wait.c) */
	__u64 start_ns;
	__u64 last_tick_ns;
	__u64 next_watch_ns;
	/* What a wake-up costs here (idle.h struct eng_idle_cost), measured at start. */
	__u64 wake_ns, timer_ns;
	int fault_status; /* 4 when a port failed while running (watch.c) */
	bool refused; /* set-up: the options can never work here (eng_refuse(), exit 2) */
	__u32 stages_up; /* set-up stages reached (run.c): what tear-down undoes */
	/* Live audit (user/audit.c): workers cut when cut_gen moves. */
	volatile __u32 cut_gen;
	__u32 cut_ticket;
	struct eng_ctl *ctl; /* the control socket (ctl.h), else NULL */
	struct eng_punt *punt; /* --host-tap: the punt rules in force (punt.h) */
	__u64 live_failures; /* live audits that failed */
	char live_why[256]; /* the first one's reason */
};

/*
 * The one error convention: a function that can fail returns 0 or a negative errno,
 * after one line said why (ut_say(), say.h, or the library's log). A refusal of options
 * that can never work on this system is eng_refuse(): the same, and exit status 2.
 */
#define eng_refuse(e, err, ...) ((e)->refused = true, ut_say(err, __VA_ARGS__))

/* Exit statuses. */
#define ENG_SETUP_FAILED 1 /* set-up: the environment */
#define ENG_BAD_INPUT 2 /* set-up: the options can never work (eng_refuse()) */
#define ENG_AUDIT_FAILED 3 /* a frame lost or held twice (audit.h) */
#define ENG_PORT_FAILED 4 /* a port failed while running (watch.h) */

static inline __u64 eng_now_ns(void)
{
	return ut_now_ns();
}

#endif /* XPILE_ENG_ENGINE_H */
