/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The engine's internal structures, shared by main.c (CLI), engine.c (set-up and
 * tear-down), worker.c (the per-core loop), stats.c and the modes.
 *
 * Ownership: a struct eng_q (one AF_XDP socket = one interface queue) belongs to exactly
 * one worker, which alone touches its four rings, its counters' writes and its cache.
 * The main thread only reads counters (relaxed, 64-bit aligned) and, while every worker
 * is parked (audit pause) or gone, the rings' indices.
 */
#ifndef XPILE_ENGINE_H
#define XPILE_ENGINE_H

#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <linux/types.h>

#include "xpile/deal.h"
#include "xpile/ledger.h"
#include "xpile/pile.h"
#include "xpile/region.h"
#include "xpile/steer.h"
#include "xpile/umem.h"
#include "xpile/xsk.h"

#include "capture.h"
#include "handover.h"
#include "uring_wait.h"
#include "tap.h"

#define ENG_MAX_PORTS 8
#define ENG_MAX_QUEUES 64
#define ENG_MAX_WORKERS 64
#define ENG_MAX_BATCH 256
#define ENG_MAX_DOMS ENG_MAX_PORTS

struct eng_q;
struct engine;

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
};

/* A socket's ring indices at its worker's cut (user/audit.c): fill, RX, TX and
 * completion producer and consumer. */
struct eng_ring_cut {
	__u32 fp, fc, rp, rc, tp, tc, cp, cc;
};

struct eng_q {
	struct xp_xsk *xsk;
	struct eng_port *port;
	struct eng_worker *w;
	struct eng_dom *dom; /* the frame domain (UMEM) of its port */
	struct eng_wdom *wd; /* its worker's allocator state in that domain */
	__u32 queue;
	struct eng_q *peer; /* fwd: where what arrives here leaves */
	__u32 tx_inflight; /* posted to TX, not completed (frames) */
	__u64 tx_budget; /* txonly: packets left to send (~0 = unlimited) */
	__u16 flow; /* txonly: next flow */
	struct eng_counters c;
	struct eng_counters shown; /* main thread: counters at the last stats line */
	bool napi_checked; /* main thread: --busy-poll's NAPI id looked at */
	struct eng_ring_cut cut; /* written by the owning worker at its cut */
};

struct eng_port {
	char ifname[16];
	int ifindex;
	__u32 nqueues;
	__u32 queues[ENG_MAX_QUEUES];
	unsigned char mac[6];
	struct xp_steer *steer;
	struct eng_tap *tap; /* --host-tap, else NULL */
	struct eng_dom *dom; /* the frame domain its sockets share */
	bool steer_borrowed; /* found attached: not ours to remove */
	int uds_map_fd; /* --uds: the XSKMAP the agent handed over (uds.c), else unused */
	/* Main thread (watch.c): what was last seen, so each change is told once. */
	bool link_up, gone, prog_lost, pins_told, half_seen, registered;
};

/* What a worker saw of one frame domain at its cut, between two loop turns
 * (user/audit.c). */
struct eng_cut {
	struct xp_ledger_cut led;
	__u64 allocator; /* frames in its cache and dealer */
	__u64 pile_ops; /* its cache's slow paths so far: every pile access is one */
	__u64 app; /* frames it holds at the cut: those in its TAP ring's io_uring */
	__u32 pile; /* the domain's pile count */
};

/*
 * A frame domain (user/dom.c): one UMEM carved from its NUMA node's arena, with its
 * own layout, frame pool, ledger and handles. --umem shared: one domain for every
 * port; per-port: one per port. A frame never leaves its domain: fwd between two
 * domains copies (modes/fwd.c).
 */
struct eng_dom {
	__u32 id;
	int node; /* NUMA node of its arena (-1: none) */
	struct xp_layout layout;
	struct xp_arena_buf buf; /* the carve */
	struct xp_mem mem; /* describes the carve: base, size, page size, node, memfd */
	bool mem_ok;
	bool unaligned;
	bool imported; /* mapped from a predecessor's memfd (handover.h): no carve of ours */
	__u64 *handles; /* every frame, in fill order */
	__u32 *starts; /* unaligned chunks: low bits of the frame start in each ledger slot */
	struct xp_pool *pool;
	struct xp_umem *umem; /* registered on its first socket */
	struct xp_ledger *ledger;
	__u32 frames; /* --frames, or what its sockets and workers need */
	__u32 nq, nrx; /* its sockets, those that receive */
	__u32 nworkers; /* workers with a socket in it */
	__u32 fill_cap; /* most frames one fill ring may hold (fair share of a small pool) */
};

/* A worker's allocator state in one domain: NULL d when it has no socket there. */
struct eng_wdom {
	struct eng_dom *d;
	struct xp_cache *cache;
	struct xp_deal *deal; /* in front of cache: refills even over channels */
	struct xp_ledger_acct *acct;
	__u32 rank; /* its index among the domain's workers: its M3 slice, its stripe */
	__u32 slice_first, slice_count; /* its M3 slice of the fill order (xpile/layout.h) */
	struct eng_cut cut;
};

struct eng_worker {
	struct engine *e;
	int core;
	__u32 id;
	pthread_t thread;
	bool started;
	struct eng_q *q[ENG_MAX_QUEUES];
	__u32 nq;
	struct eng_wdom wd[ENG_MAX_DOMS]; /* indexed by domain id */
	struct eng_cap_ring *cap; /* --capture: this worker's ring (capture.h), else NULL */
	struct eng_uwait *uwait; /* idle wait on io_uring (uring_wait.h), NULL: poll() */
	struct eng_tap_w *tapw; /* --host-tap: this worker's TAP ring (tap.h), else NULL */
	__u64 next_tx_ns; /* txonly rate limit */
	__u32 parked_gen; /* last audit generation this worker parked for */
	bool done; /* txonly: sent its share and got every completion back */
	bool exited; /* returned: the main thread may read its state */
	/* --handover / --take-over: when it parked, resumed, and its first and last turns
	 * that moved packets (CLOCK_MONOTONIC ns; the pause a handover costs) */
	__u64 ho_park_ns, ho_resume_ns, ho_first_work_ns, ho_last_work_ns;
	bool fault_done; /* XPILE_FAULT injected */
	__u32 cut_ticket; /* order of the cuts in a round (audit.c) */
	__u32 cut_gen; /* round its cuts answer; published last */
	__u64 scratch[ENG_MAX_BATCH];
	struct xdp_desc descs[ENG_MAX_BATCH];
};

struct eng_mode {
	const char *name;
	bool needs_rx; /* attach the steer program and register sockets */
	__u32 nports_min, nports_max;
	/* Per-socket work for one loop turn: returns packets handled (0 = idle). */
	__u32 (*poll)(struct eng_worker *w, struct eng_q *q);
};

extern const struct eng_mode eng_mode_rxdrop, eng_mode_txonly, eng_mode_l2fwd, eng_mode_fwd;

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
	enum xp_xsk_mode xsk_mode;
	enum xp_steer_mode xdp_mode;
	enum xp_layout_kind layout;
	enum xp_hugepages hugepages;
	__u32 frame_size, headroom, frames, rx_ring, tx_ring, fill_ring, comp_ring, batch, cache;
	__u64 m3_seed; /* 0: deterministic fill order, LIFO refills */
	__u32 channels, ranks; /* memory topology; 0: probed (xp_topology_probe) */
	bool no_need_wakeup, busy_poll, multi_buffer, multi_buffer_set, attach_existing, force;
	bool reattach; /* put our own program back when someone removes it */
	__u32 busy_budget, tx_budget;
	const char *pin_path;
	const char *uds[ENG_MAX_PORTS]; /* --uds PATH of each --iface, in order */
	__u32 nuds;
	bool ledger_debug, audit_each_interval;
	bool spin; /* never sleep in poll() when idle */
	int idle_wait; /* enum eng_idle_wait */
	enum xp_pool_backend pool_backend;
	const char *handover; /* --handover PATH: serve a successor there (handover.h) */
	const char *take_over; /* --take-over PATH: take a running engine's sockets */
	int umem; /* enum eng_umem */
	/* XPILE_FAULT (tests): once running, each worker loses one frame or frees one twice. */
	enum { ENG_FAULT_NONE, ENG_FAULT_LOSE, ENG_FAULT_TWICE } fault;
	/* --capture (capture.h) */
	const char *capture; /* FILE, "-" for stdout, NULL: none */
	struct xp_rule capture_rule;
	bool capture_rule_set;
	int capture_dir; /* ENG_CAP_RX | ENG_CAP_TX */
	__u32 snaplen, capture_buffer;
	__u32 capture_size; /* --capture-size MB: rotate (FILE, FILE1, ...); 0: never */
	/* --host-tap (tap.h) */
	struct {
		char port[16], name[16];
	} taps[ENG_MAX_PORTS];
	__u32 ntaps;
	struct xp_rule punt_rule;
	bool punt_rule_set, tap_keep;
	int tap_read; /* enum eng_tap_read */
	/* txonly */
	__u32 pkt_size, flows;
	__u64 count, rate;
	unsigned char dst_mac[6], src_mac[6];
	bool dst_mac_set, src_mac_set;
	__u32 src_ip, dst_ip; /* network order */
	__u16 src_port, dst_port;
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
	struct eng_dom dom[ENG_MAX_DOMS];
	__u32 ndoms;
	/* 1: the rings are another engine's (handed over, or never taken): workers leave
	 * at once, touching nothing, and no exit path drains, audits or unmaps the XSKMAP. */
	volatile int hands_off;
	struct eng_ho *ho; /* --handover / --take-over state, else NULL */
	char topo_note[512]; /* where the channels and ranks came from */
	bool topo_guessed; /* a default stands in for what the probe did not find */
	bool sg_auto; /* multi-buffer turned on because an MTU exceeds a frame */
	struct eng_capture *cap; /* --capture, else NULL */
	struct eng_tap *taps[ENG_MAX_PORTS]; /* --host-tap */
	__u32 ntaps;
	__u8 tx_template[10240];
	__u32 tx_len;
	/* Control, written by the main thread. */
	volatile int stop; /* 1: stop receiving, drain; workers exit when drained */
	volatile __u32 pause_gen; /* audit request generation; workers park while paused */
	volatile int paused;
	volatile __u32 parked; /* workers parked for the current generation */
	volatile __u32 finished; /* workers that returned */
	int wait_told; /* the idle wait in use was said (uring_wait.c) */
	__u64 start_ns;
	__u64 last_tick_ns;
	__u64 next_watch_ns;
	int fault_status; /* 4 when a port failed while running (watch.c) */
	/* Live audit (user/audit.c): workers cut when cut_gen moves. */
	volatile __u32 cut_gen;
	__u32 cut_ticket;
	__u64 live_failures; /* live audits that failed */
	char live_why[256]; /* the first one's reason */
};

enum eng_umem { ENG_UMEM_SHARED, ENG_UMEM_PER_PORT };

/* engine.c */
/* eng_setup's failures are the process exit status (2: the options can never work). */
#define ENG_SETUP_FAILED 1
#define ENG_BAD_INPUT 2
#define ENG_PORT_FAILED 4 /* eng_run(): a port failed while running (watch.c) */
/* One line "xpile: ..." on stderr, the one way the engine reports a cause; returns @rc. */
int eng_say(int rc, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
int eng_setup(struct engine *e); /* 0, ENG_SETUP_FAILED or ENG_BAD_INPUT */
/* Parks every running worker between loop turns (the audit's pause; @why for the
 * message when they do not within 1 s): 0 or -ETIMEDOUT (then nothing is paused). */
int eng_pause(struct engine *e, const char *why);
void eng_resume(struct engine *e);
/* Channels and ranks: the options, else the probe, which says where it looked. */
void eng_topology(struct engine *e, struct xp_topology *t);
/* Carves @bytes for a large buffer from the arena of NUMA node @node (-1: none). */
int eng_carve(struct engine *e, int node, __u64 bytes, struct xp_arena_buf *out);
int eng_run(struct engine *e); /* returns the process exit status */
void eng_teardown(struct engine *e);
__u64 eng_now_ns(void);
/* worker.c */
void *eng_worker_main(void *arg);
__u32 eng_refill(struct eng_worker *w, struct eng_q *q);
__u32 eng_complete(struct eng_worker *w, struct eng_q *q);
__u32 eng_rx(struct eng_worker *w, struct eng_q *q, struct xdp_desc *out, __u32 max);
__u32 eng_tx(struct eng_worker *w, struct eng_q *q, const struct xdp_desc *d, __u32 n);
/* Frees @n descriptors of @wd's domain to its dealer (@scratch: room for @n handles). */
void eng_free_descs(struct eng_wdom *wd, __u64 *scratch, const struct xdp_desc *d, __u32 n);
/* d->starts, for the check that a kernel descriptor is a frame start (unaligned). */
int eng_dom_starts(struct eng_dom *d, const struct xp_ledger_acct *a);
void eng_kick(struct eng_q *q);
static inline void *eng_data(const struct eng_dom *d, __u64 addr)
{
	return xp_layout_ptr(&d->layout, d->mem.base, addr);
}
/* dom.c: the frame domains */
int eng_dom_assign(struct engine *e); /* queues to domains, frames and fill shares */
int eng_dom_memory(struct engine *e); /* layouts, then each UMEM carved from its arena */
int eng_dom_frames(struct engine *e); /* pools, ledgers, caches, dealers, slices, UMEMs */
void eng_dom_caches_destroy(struct engine *e); /* dealers first, then caches */
/* The workers' M3 slices of @d from its pool: the frames its ledger has free only (a
 * handover's others are in rings). */
int eng_dom_deal(struct engine *e, struct eng_dom *d);
/* @d's fill ring share of its frames (a handover changes its frames): 0 or refused. */
int eng_dom_fill_cap(struct engine *e, struct eng_dom *d);
void eng_dom_destroy(struct engine *e); /* UMEMs, ledgers, pools, carves */
struct xp_arena *eng_node_arena(struct engine *e, int node, __u64 want, enum xp_hugepages hp);
/* watch.c: link, interface, program and pins of every port, from the main thread */
void eng_watch_start(struct engine *e);
int eng_watch(struct engine *e, __u64 now); /* non-zero: stop with that status */
void eng_event(struct engine *e, const struct eng_port *p, const char *event, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
/* audit.c: the live ledger audit, the ring split every audit reports */
struct eng_split {
	__s64 fill_ring, kernel_rx, rx_ring, tx_ring, kernel_tx, comp_ring;
	__s64 fill_side, tx_side; /* frames the sockets hold, from our own indices */
	char bad[160]; /* a ring index out of bounds, when set */
};
void eng_cut_take(struct eng_worker *w); /* the worker, between loop turns */
void eng_cut_ring(struct eng_q *q); /* records q->cut from the rings now */
void eng_split_add(struct eng_split *s, const struct eng_q *q); /* adds q->cut */
int eng_audit_live(struct engine *e); /* 0, or -EUCLEAN (reported, counted) */
/* stats.c */
void eng_stats_tick(struct engine *e, bool final);
void eng_stats_allocator(struct engine *e, bool final);
__u64 eng_tx_unsent(struct engine *e); /* TX descriptors never completed */
/* uds.c: the XSKMAP from the AF_XDP device plugin's socket (xpile-agent) */
int eng_uds_setup(struct engine *e); /* 0 or -1 after one line */
void eng_uds_xskmap_set(struct eng_q *q, bool on);
void eng_uds_close(struct eng_port *p);
/* modes/txonly.c */
int eng_txonly_prepare(struct engine *e);

#endif /* XPILE_ENGINE_H */
