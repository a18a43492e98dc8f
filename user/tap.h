/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * --host-tap PORT[=NAME]: the kernel as the engine's slow path (issue 11, section 1).
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
#include <linux/types.h>
#include <linux/if_xdp.h>

struct engine;
struct eng_worker;
struct eng_q;

enum eng_tap_read { ENG_TAP_READ_AUTO, ENG_TAP_READ_MSHOT, ENG_TAP_READ_FIXED };

struct eng_tap; /* one per --host-tap port (tap.c) */
struct eng_tap_w; /* a worker's TAP ring (tap.c) */

/* --host-tap PORT[=NAME] into the config's list: 0 or -1 with @why. */
int eng_tap_opt(void *cfg, const char *v, char *why, size_t len);
int eng_tap_setup(struct engine *e); /* 0, or -1 after one line (main thread) */
void eng_tap_destroy(struct engine *e);
/* After the RX ring: punts what is for the host; returns the batch's new length. */
__u32 eng_tap_rx(struct eng_worker *w, struct eng_q *q, struct xdp_desc *d, __u32 n);
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

#endif /* XPILE_TAP_H */
