/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The capture ring (capring.c): frames copied, up to a snaplen, as pcapng enhanced
 * packet blocks into per-producer rings of chunks, and written out by one writer
 * thread on io_uring. The engine's --capture (user/capture.c) and `xpile-bench capture`
 * use it alike.
 *
 * A producer (a worker) copies each frame into its own ring (single producer, single
 * consumer) and publishes a chunk when it is full or when the producer goes idle with
 * data older than 1 ms; the writer writes published chunks on io_uring, several in
 * flight at their own offsets for a file, one at a time for a pipe. A producer never
 * waits for it: with no free chunk the frame is not captured and counted (dropped). A
 * write error (disk full, reader gone) is told once, the file is cut back to its last
 * whole chunk and capture stops; the producers go on. Without io_uring (disabled by
 * sysctl or seccomp) the writer uses write(), said once.
 */
#ifndef XPILE_UTIL_CAPRING_H
#define XPILE_UTIL_CAPRING_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>
#include <linux/if_xdp.h>

#include "xpile/layout.h"
#include "xpile/steer.h"

enum { UT_CAP_RX = 1, UT_CAP_TX = 2, UT_CAP_BOTH = 3 };

struct ut_cap; /* the writer: the file, its thread, the rings */
struct ut_cap_ring; /* one producer's ring */

struct ut_cap_opts {
	size_t sz;
	const char *name; /* the file, or "stdout", for messages and rotated names */
	int fd; /* the writer's from now on (closed by ut_cap_destroy() unless stdout) */
	/* Written by the caller already; every rotated file starts with it again. */
	const void *hdr;
	__u64 hdr_len;
	__u64 limit; /* a regular file rotates past this many bytes (FILE1, ...); 0: never */
	__u32 nrings; /* producers */
	__u32 snaplen, buffer; /* bytes captured per frame; ring bytes per producer */
	unsigned int dirs; /* UT_CAP_RX | UT_CAP_TX: what the producers capture */
	const struct xp_rule *rule; /* only the frames matching it (no action); NULL: all */
};

/* 0, or -ENOMEM (nothing created). */
int ut_cap_create(const struct ut_cap_opts *o, struct ut_cap **out);
struct ut_cap_ring *ut_cap_ring(struct ut_cap *c, __u32 i);
struct ut_cap_info {
	__u32 nchunks, chunk_size; /* of each ring */
	bool uring; /* writes on io_uring, else write() */
};
void ut_cap_info(const struct ut_cap *c, struct ut_cap_info *in);
int ut_cap_start(struct ut_cap *c); /* the writer thread: 0 or -errno (said) */
struct ut_cap_stats {
	__u64 frames, bytes; /* written out */
	__u64 dropped; /* frames that found their ring full */
	__u64 lost; /* frames in chunks a failed write threw away */
	__u32 files;
	bool failed;
};
/* Once the producers are gone: publishes what they held, writes it (2 s at most),
 * joins the writer: 1 and @st filled, or 0 when it was not running. */
int ut_cap_stop(struct ut_cap *c, struct ut_cap_stats *st);
void ut_cap_destroy(struct ut_cap *c); /* stops it first if it runs; NULL is fine */

/* Any thread: the producers copy nothing while paused (the engine's control socket,
 * `capture stop|start`); what they hold already is written. */
void ut_cap_pause(struct ut_cap *c, bool on);
bool ut_cap_paused(const struct ut_cap *c);
/* Any thread: the producers match @rule (NULL: every frame) from their next batch on
 * (each loads the pointer once per batch). The old rule is the caller's to free once
 * no producer can be in a batch that loaded it (a grace period, user/worker.h). */
void ut_cap_rule_set(struct ut_cap *c, const struct xp_rule *rule);

/* The producer's side, on its own thread. Copies the @n frames of @d (XDP_PKT_CONTD
 * chains are one packet) that match, laid out by @l at @base, received (@dir UT_CAP_RX)
 * or sent on interface @ifid (the header's interface block), RX queue @queue for the
 * rule. One timestamp per batch. */
void ut_cap_batch(struct ut_cap_ring *r, __u32 ifid, const struct xp_layout *l, void *base,
		  __u32 queue, const struct xdp_desc *d, __u32 n, unsigned int dir);
void ut_cap_idle(struct ut_cap_ring *r); /* publishes a chunk older than 1 ms */
__u64 ut_cap_dropped(const struct ut_cap_ring *r); /* any thread; NULL: 0 */

/* All of @n bytes to @fd (EINTR retried): 0 or -errno. */
int ut_write_all(int fd, const void *p, size_t n);

#endif /* XPILE_UTIL_CAPRING_H */
