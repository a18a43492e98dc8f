/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * --capture: every frame a worker receives or sends (or those matching --capture-rule),
 * up to --snaplen bytes, to a pcapng file or stdout.
 *
 * A worker copies each frame into its own ring of chunks (single producer, single
 * consumer) and publishes a chunk when it is full or when the worker goes idle with data
 * older than ENG_CAP_FLUSH_NS; one capture thread writes published chunks out on
 * io_uring, several in flight at their own offsets for a file, one at a time for a pipe.
 * A worker never waits for it: with no free chunk the frame is not captured and counted
 * (capture_dropped). A write error (disk full, reader gone) is told once, the file is cut
 * back to its last whole chunk and capture stops; the engine goes on.
 */
#ifndef XPILE_CAPTURE_H
#define XPILE_CAPTURE_H

#include <linux/types.h>
#include <linux/if_xdp.h>

#include "xpile/steer.h"

struct engine;
struct eng_worker;
struct eng_q;

enum { ENG_CAP_RX = 1, ENG_CAP_TX = 2, ENG_CAP_BOTH = 3 };

/* The worker's side of its ring; the rest is in capture.c. */
struct eng_cap_ring;

/* Parses --capture-rule's text (rule words without an action) into @r: 0 or -EINVAL
 * with the reason in @why. */
int eng_capture_rule_parse(const char *text, struct xp_rule *r, char *why, size_t len);
/* Opens the output and writes the file header: 0, or -1 after one line naming the
 * cause (ENG_SETUP_FAILED). Nothing to do without --capture. */
int eng_capture_setup(struct engine *e);
int eng_capture_start(struct engine *e); /* the capture thread: 0 or -1 (told) */
/* After the workers are gone: publishes what they held, writes it, prints the figures. */
void eng_capture_stop(struct engine *e);
void eng_capture_destroy(struct engine *e);

/* Worker hooks (the worker owning @q). @dir: ENG_CAP_RX or ENG_CAP_TX. */
void eng_capture_batch(struct eng_worker *w, const struct eng_q *q, const struct xdp_desc *d,
		       __u32 n, unsigned int dir);
void eng_capture_idle(struct eng_worker *w);
/* Frames this worker could not capture (ring full); any thread. */
__u64 eng_capture_dropped(const struct eng_worker *w);

#endif /* XPILE_CAPTURE_H */
