/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * --host-tap PORT[=NAME]: the kernel as the engine's slow path (docs/hybrid.md).
 * A TAP interface per such port (default xp-PORT) with the port's MAC and MTU, up, in
 * the engine's namespace, removed at exit.
 *
 * Punt (engine -> host): frames received on the port for the port's MAC, or matching
 * --punt RULE, are written to the TAP from the frame itself (io_uring WRITE_FIXED, the
 * UMEM registered) and leave the mode's batch; broadcast and multicast frames are
 * copied to the TAP and stay in the batch (fwd forwards them as before, so ARP works
 * for the host and the far side).
 * Inject (host -> wire): the worker that owns the port's first queue keeps reads posted
 * on the TAP into frames from its dealer (READ_FIXED) and posts what they fill on that
 * queue's TX ring.
 * Never waits: with no room in the ring a punt is dropped and counted (punt_dropped);
 * an inject that finds the TX ring full is counted (inject_dropped). Frames in flight
 * in io_uring have a ledger place of their own, "uring", and all come back at exit.
 * The TAPs a worker injects for are in its idle wait (uring_wait.c) with its sockets.
 */
#ifndef XPILE_TAP_H
#define XPILE_TAP_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>
#include <linux/if_xdp.h>

#include "xpile/steer.h"

struct engine;
struct eng_worker;
struct eng_q;

enum eng_tap_read { ENG_TAP_READ_AUTO, ENG_TAP_READ_MSHOT, ENG_TAP_READ_FIXED };

#define ENG_TAP_MAX 8 /* one per port at most (ENG_MAX_PORTS) */

/* The --host-tap options (main.c; the engine's cfg.tap points here when given). */
struct eng_tap_cfg {
	struct {
		char port[16], name[16];
	} taps[ENG_TAP_MAX];
	__u32 ntaps;
	struct xp_rule punt_rule;
	bool punt_rule_set, tap_keep;
	int tap_read; /* enum eng_tap_read */
};

struct eng_tap; /* one per --host-tap port (tap.c) */
struct eng_tap_w; /* a worker's TAP ring (tap.c) */

/* --host-tap PORT[=NAME] into @c's list: 0 or -EINVAL with @why. */
int eng_tap_opt(struct eng_tap_cfg *c, const char *v, char *why, size_t len);
/* Set-up stage (main thread): 0, or -errno after one line. */
int eng_tap_setup(struct engine *e);
void eng_tap_destroy(struct engine *e);
/* After the RX ring: punts what is for the host; returns the batch's new length. */
__u32 eng_tap_rx(struct eng_worker *w, struct eng_q *q, struct xdp_desc *d, __u32 n);
/* One packet of @q (whole, one buffer) to its port's TAP, from the frame, which is no
 * longer the caller's (freed if the port has no usable TAP): false if dropped. The
 * router's punt: it decides what goes up. */
bool eng_tap_punt_one(struct eng_worker *w, struct eng_q *q, const struct xdp_desc *d);
/* A copy of it up; the frame stays the caller's. False: not sent. */
bool eng_tap_copy(struct eng_worker *w, struct eng_q *q, const struct xdp_desc *d);
/* Hands @n received descriptors of @q to its port's TAP (xp_pkt_punt()): 0, or -ENODEV
 * without one (nothing taken). */
int eng_tap_punt(struct eng_worker *w, struct eng_q *q, const struct xdp_desc *d, __u32 n);
/* Every loop turn: completions, reads re-posted, injects sent; returns work done. */
__u32 eng_tap_poll(struct eng_worker *w);
/* At stop: cancels the reads and waits for every frame in flight (bounded). */
void eng_tap_stop(struct eng_worker *w);
__u64 eng_tap_held(const struct engine *e); /* frames in io_uring, for audits */
/* ... of worker @w alone (the worker itself, at its live-audit cut). */
__u64 eng_tap_worker_held(const struct eng_worker *w);
/* The TAPs @w injects for, so its idle sleep wakes when the host sends: their count. */
__u32 eng_tap_wait_fds(const struct eng_worker *w, int *fds, __u32 max);
void eng_tap_report(struct engine *e); /* the counters, at exit */
/* The port's carrier onto its TAP (main thread; no TAP: nothing), as VPP's linux-cp
 * does: a dead port is a dead link to the host at once, so the kernel drops the routes
 * through it and a routing daemon reacts now, not at its dead interval. */
void eng_tap_carrier(const struct eng_port *p, bool up);

#endif /* XPILE_TAP_H */
