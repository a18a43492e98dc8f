/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * --capture (capture.c): every frame a worker receives or sends (or those matching
 * --capture-rule), up to --snaplen bytes, to a pcapng file or stdout, through the
 * capture ring (tools/util/capring.h: a ring of chunks per worker, one writer thread on
 * io_uring; a worker never waits for it, a frame that finds its ring full is counted as
 * capture_dropped). A write error is told once, the file cut back to its last whole
 * chunk, and capture stops; the engine goes on.
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

/* The worker's hooks (the worker owning @q, with w->cap set). @dir: UT_CAP_RX or
 * UT_CAP_TX. */
static inline void eng_capture_batch(struct eng_worker *w, const struct eng_q *q,
				     const struct xdp_desc *d, __u32 n, unsigned int dir)
{
	ut_cap_batch(w->cap, (__u32)(q - w->e->qs), &q->dom->layout, q->dom->mem.base, q->queue, d,
		     n, dir);
}

static inline void eng_capture_idle(struct eng_worker *w)
{
	ut_cap_idle(w->cap);
}

#endif /* XPILE_ENG_CAPTURE_H */
