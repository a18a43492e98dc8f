/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The main thread's watch over every port (watch.c): link, interface, steer program
 * and pins, each change told once as an event, repaired (--reattach) or the end of
 * the run (exit status 4).
 */
#ifndef XPILE_ENG_WATCH_H
#define XPILE_ENG_WATCH_H

#include <linux/types.h>

struct engine;
struct eng_port;

void eng_watch_start(struct engine *e);
int eng_watch(struct engine *e, __u64 now); /* non-zero: stop with that status */
/* One event of port @p: a JSON object with --json, else one line on stderr. */
void eng_event(struct engine *e, const struct eng_port *p, const char *event, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

#endif /* XPILE_ENG_WATCH_H */
