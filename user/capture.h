/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * --capture (capture.c): every frame a worker receives or sends (or those matching
 * --capture-rule), up to --snaplen bytes, to a pcapng file or stdout, through the
 * capture ring (tools/util/capring.h: a ring of chunks per worker, one writer thread on
 * io_uring; a worker never waits for it, a frame that finds its ring full is counted as
 * capture_dropped). A write error is told once, the file cut back to its last whole
 * chunk, and capture stops; the engine goes on.
 *
 * The control socket (ctl_cmds.c) starts one on a running engine too (a new file,
 * 0600, never one that exists), changes the rule of the one in force and stops it. It
 * runs on the control thread alone: the workers see a ring or a rule through a pointer
 * each loads once per batch (acquire), and what was replaced or stopped is freed a
 * grace period later (worker.h), never under a worker.
 */
#ifndef XPILE_ENG_CAPTURE_H
#define XPILE_ENG_CAPTURE_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>
#include <linux/if_xdp.h>

#include "capring.h"
#include "dom.h"
#include "engine.h"
#include "xpile/steer.h"

/* The --capture options (main.c; the engine's cfg.capture points here when given). */
struct eng_capture_cfg {
	const char *file; /* FILE, or "-" for stdout */
	struct xp_rule rule;
	bool rule_set;
	int dir; /* UT_CAP_RX | UT_CAP_TX */
	__u32 snaplen, buffer;
	__u32 size; /* --capture-size MB: rotate (FILE, FILE1, ...); 0: never */
};

/* The capture in force (the control thread's, or --capture's from set-up). */
struct eng_cap_rule {
	struct xp_rule r;
	__u64 token; /* retired: its grace period's */
	struct eng_cap_rule *older;
};

struct eng_cap_run {
	char file[4096]; /* for messages ("stdout" for -) */
	char rule_text[XP_RULE_TEXT_MAX + 1]; /* "": every frame */
	struct eng_cap_rule *rule; /* in force, else NULL */
	struct eng_cap_rule *retired; /* replaced rules, newest first */
	__u32 snaplen;
	bool live; /* started through the control socket: `capture stop` closes it */
	bool detached; /* stopping: its rings unset, waiting for a grace period */
};

/* The control socket's (control thread only); each returns 0 or -errno with one line
 * naming the fix in @why. Opens @file (absolute, created 0600, O_EXCL|O_NOFOLLOW) and
 * captures what @rule matches (NULL: every frame), @snaplen bytes of each. */
int eng_capture_live_start(struct engine *e, const char *file, const char *rule, __u32 snaplen,
			   char *why, size_t len);
/* The capture in force matches @rule from the workers' next batch on. */
int eng_capture_rule_change(struct engine *e, const char *rule, char *why, size_t len);
/* Stops and closes a capture started here (@st: its figures). */
int eng_capture_live_stop(struct engine *e, struct ut_cap_stats *st, char *why, size_t len);
/* Frees the replaced rules whose grace period has passed (the control thread's tick). */
void eng_capture_reclaim(struct engine *e);

/* Parses --capture-rule's text (rule words without an action) into @r: 0 or -EINVAL
 * with the reason in @why. */
int eng_capture_rule_parse(const char *text, struct xp_rule *r, char *why, size_t len);
/* Set-up stage: opens the output, writes the file header, a ring per worker: 0, or
 * -errno after one line. Nothing to do without --capture. */
int eng_capture_setup(struct engine *e);
int eng_capture_start(struct engine *e); /* the writer thread: 0 or -errno (told) */
/* After the workers are gone: publishes what they held, writes it, prints the figures. */
void eng_capture_stop(struct engine *e);
void eng_capture_destroy(struct engine *e);

/* The worker's hooks. Its ring, once per batch: NULL when nothing captures. */
static inline struct ut_cap_ring *eng_capture_ring(const struct eng_worker *w)
{
	return __atomic_load_n(&w->cap, __ATOMIC_ACQUIRE);
}

/* @r: eng_capture_ring()'s, @q the worker's. @dir: UT_CAP_RX or UT_CAP_TX. */
static inline void eng_capture_batch(struct ut_cap_ring *r, struct eng_worker *w,
				     const struct eng_q *q, const struct xdp_desc *d, __u32 n,
				     unsigned int dir)
{
	ut_cap_batch(r, (__u32)(q - w->e->qs), &q->dom->layout, q->dom->mem.base, q->queue, d, n,
		     dir);
}

#endif /* XPILE_ENG_CAPTURE_H */
