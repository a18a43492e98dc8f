/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The engine's per-burst calls (xpile/engine.h makes the engine): what a worker does
 * with packets. A worker owns its queues (one AF_XDP socket each); only that worker's
 * thread calls these with them, between two turns of its loop (run-loop style: inside
 * the burst or poll callback; own-loop style: between xp_worker_turn() calls).
 *
 * A packet handle is a struct xp_pkt of the queue it came from: its frame's UMEM
 * address, its length and its flags; data is xp_pkt_data(q, p). A packet larger than
 * a frame (multi-buffer, XDP_USE_SG) is a chain of consecutive handles in the burst,
 * each but the last with XP_PKT_MORE set; a burst only ever holds whole chains.
 *
 * Ownership: every handle xp_rx_burst() or xp_pkt_alloc() gives is the caller's until
 * it goes back through exactly one of
 *
 *   xp_tx_burst()   out of any port: the frame itself within one UMEM, a copy (counted
 *                   as the destination's tx_copied) across two, the source frame freed;
 *   xp_pkt_free()   back to the allocator;
 *   xp_pkt_punt()   to the host through the port's TAP (xp_engine_opts.host_taps);
 *   xp_pkt_hold()   kept across bursts (queueing, reassembly, per-flow state) in the
 *                   worker's hold place; xp_pkt_unhold() takes it back into the turn.
 *
 * The frame ledger accounts for every frame: held frames are a place of their own in
 * every audit. A handle the callback neither sent, freed, punted nor held is a leak:
 * the engine compares the worker's frames out with its held count after every burst
 * callback and every own-loop turn, and reports it naming the port, queue and callback
 * (at once with xp_engine_opts.ledger_debug, else at the next audit); the exit audit
 * fails (xp_engine_run() returns -EUCLEAN). A handle freed twice is caught by the debug
 * ledger where it happens, and by the audits otherwise.
 *
 * ABI: struct xp_pkt is struct xdp_desc's layout (the rings' descriptors are copied, not
 * converted) and struct xp_queue's public head is read in place by the inlines below:
 * both are frozen for libxpile.so.0 (tests/unit/test_abi.c).
 */
#ifndef XPILE_PKT_H
#define XPILE_PKT_H

#include <stdbool.h>
#include <linux/types.h>

#include "xpile/api.h"
#include "xpile/engine_types.h"

#ifdef __cplusplus
extern "C" {
#endif

/*
 * Up to @max (<= XP_BURST_MAX) handles received on @q, whole packets only, into @pkts;
 * returns how many (0: nothing arrived). Packets the port's punt rule sends to the host
 * TAP and captured copies (--capture) are dealt with before they get here.
 */
XP_API __u32 xp_rx_burst(struct xp_worker *w, struct xp_queue *q, struct xp_pkt *pkts, __u32 max);

/*
 * Sends the @n handles of @pkts, frames of @from's UMEM (NULL: @to's), out of queue
 * @to, any queue of this worker on any port. Within one UMEM the frames themselves go
 * on the TX ring; across two each packet is copied into a fresh frame of @to's UMEM
 * (counted in @to's tx_copied) and the source frame is freed. Takes every handle:
 * what the ring has no room for is freed and counted in tx_dropped. Returns the
 * buffers posted. Kicks the kernel where it needs it: a lone packet never waits.
 */
XP_API __u32 xp_tx_burst(struct xp_worker *w, struct xp_queue *to, struct xp_pkt *pkts, __u32 n,
			 const struct xp_queue *from);

/* Frees the @n handles of @pkts, frames of @q's UMEM. */
XP_API void xp_pkt_free(struct xp_worker *w, struct xp_queue *q, const struct xp_pkt *pkts,
			__u32 n);

/*
 * Up to @n (<= XP_BURST_MAX) fresh frames of @q's UMEM for packets to send: each handle
 * points at the frame's data_off with len 0 (write up to xp_pkt_room() bytes, set len).
 * All or a power-of-two share of @n when the allocator runs short: returns how many.
 */
XP_API __u32 xp_pkt_alloc(struct xp_worker *w, struct xp_queue *q, struct xp_pkt *pkts, __u32 n);

/*
 * Hands the @n packets of @pkts (received on @q, whole chains) to the host through the
 * TAP of @q's port: 0, or -ENODEV when the port has none (the handles stay the
 * caller's). A TAP ring that is full frees the frame and counts punt_dropped.
 */
XP_API int xp_pkt_punt(struct xp_worker *w, struct xp_queue *q, const struct xp_pkt *pkts, __u32 n);

/*
 * Keeps the @n handles of @pkts (frames of @q's UMEM) across bursts: they move into the
 * worker's hold place, which every audit counts, until xp_pkt_unhold() gives them
 * back to the turn that then sends, frees or punts them. Only the holding worker may
 * unhold them. A worker_fini callback must leave nothing held.
 */
XP_API void xp_pkt_hold(struct xp_worker *w, struct xp_queue *q, const struct xp_pkt *pkts,
			__u32 n);
XP_API void xp_pkt_unhold(struct xp_worker *w, struct xp_queue *q, const struct xp_pkt *pkts,
			  __u32 n);
/* Frames the worker holds now in @q's UMEM. */
XP_API __u64 xp_worker_held(const struct xp_worker *w, const struct xp_queue *q);

/*
 * Free slots of @q's TX ring: how many buffers xp_tx_burst() to @q posts before it
 * starts dropping. A sender that allocates its own packets (txonly) asks first and
 * builds no more than this. Never more than the ring's room; when the worker's cached
 * view already shows a full burst (XP_BURST_MAX) the kernel's index is not read, and
 * the answer may be below the true room. A call, not an inline: it is asked once per
 * burst, and the ring stays out of struct xp_queue's frozen head.
 */
XP_API __u32 xp_tx_room(struct xp_worker *w, const struct xp_queue *q);

/* ---- the worker (both loop styles) ---- */

XP_API __u32 xp_worker_id(const struct xp_worker *w);
XP_API int xp_worker_core(const struct xp_worker *w);
XP_API __u32 xp_worker_nqueues(const struct xp_worker *w);
/* Queue @i (< xp_worker_nqueues()) of the worker, NULL out of range. */
XP_API struct xp_queue *xp_worker_queue(struct xp_worker *w, __u32 i);
/* The queue with the same queue id on port @port, if this worker owns it (fwd's peer). */
XP_API struct xp_queue *xp_worker_find(struct xp_worker *w, __u32 port, __u32 queue);
XP_API struct xp_engine *xp_worker_engine(struct xp_worker *w);
/* True once the engine stops: stop producing (receiving stops by itself). */
XP_API bool xp_worker_stopping(const struct xp_worker *w);
/*
 * The worker has finished its work (txonly's --count sent): it leaves once every packet
 * it sent has completed (however long the kernel takes: a down link holds them until
 * .duration or a stop), and xp_engine_run() returns when every
 * worker has left (or earlier, as always: stop, .duration). Run-loop style: its
 * callbacks may still be called until then; own-loop style: xp_worker_turn() returns
 * false then. Idempotent; only on the worker's own thread.
 */
XP_API void xp_worker_done(struct xp_worker *w);

/*
 * Own-loop style (xp_engine_opts.worker_main), the top of every turn: the live audit's
 * cut, the audit pause and a handover's park, completions, refills, busy-poll, the host
 * TAP. Returns false when the worker must return (stopped and drained, or its rings
 * handed over). The worker holds nothing but its held frames here.
 */
XP_API bool xp_worker_turn(struct xp_worker *w);
/*
 * The bottom of a turn that moved @work packets: the engine's idle policy (spin a while,
 * then sleep until traffic, xp_engine_opts.spin, idle_wait). Returns at once if work.
 */
XP_API void xp_worker_idle(struct xp_worker *w, __u32 work);

#ifdef __cplusplus
}
#endif

#endif /* XPILE_PKT_H */
