/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The programs' one reporter: every cause, refusal or notice a program tells a person
 * is one line "PROG: ..." on stderr (the engine's JSON records go to stdout, not here).
 * One call is one write: a line built in pieces is built in a buffer first, so lines of
 * two threads never interleave; a message of several lines gets the prefix on each.
 *
 * When stderr is the journal (systemd sets JOURNAL_STREAM to the device and inode of
 * the stream it gave us, sd-daemon(3)), each line starts with its syslog priority, "<3>"
 * for an error, so `journalctl -p err` finds the errors; anywhere else lines are plain.
 * Paths the library reached through /proc/PID/root/ are shown as the host's.
 *
 *   ut_say_prog("xpile-agent");              once, first thing in main
 *   return ut_say(-ENOENT, "no %s", path);    a failure: LOG_ERR, returns the error
 *   ut_say(0, "ready: %u ports", n);          what happened: LOG_INFO
 *   ut_warn("%s: link down", ifname);         what went wrong and is handled
 *   ut_log(LOG_ERR, "cannot serve %s", p);    a priority chosen by the caller
 *   xp_set_log_fn(ut_say_xp);                 libxpile's messages, the same way
 */
#ifndef XPILE_UTIL_SAY_H
#define XPILE_UTIL_SAY_H

#include <stdarg.h>
#include <stdbool.h>
#include <syslog.h> /* LOG_ERR, LOG_WARNING, LOG_NOTICE, LOG_INFO, LOG_DEBUG */

#include "xpile/log.h"

/* The name every line starts with; "xpile" until then. Also looks whether stderr is
 * the journal, and forgets the first error. */
void ut_say_prog(const char *name);
/* How much of libxpile's log ut_say_xp() passes: 0 errors and warnings, 1 (-v) also its
 * info, 2 (-vv) its debug. */
void ut_say_verbose(int verbose);
/* Whether stderr is the journal's stream (JOURNAL_STREAM matches fd 2). */
bool ut_say_journal(void);

/* Says one line; returns @err, so a failure is `return ut_say(-ENOENT, ...)`. A
 * non-zero @err is an error (LOG_ERR), 0 a notice (LOG_INFO). */
int ut_say(int err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
int ut_vsay(int err, const char *fmt, va_list ap) __attribute__((format(printf, 2, 0)));
/* One line at the syslog priority @prio (LOG_*). */
void ut_log(int prio, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void ut_vlog(int prio, const char *fmt, va_list ap) __attribute__((format(printf, 2, 0)));
/* What went wrong and is handled (LOG_WARNING). */
#define ut_warn(...) ut_log(LOG_WARNING, __VA_ARGS__)

/* libxpile's hook (xp_set_log_fn): its levels as priorities, filtered by ut_say_verbose(). */
int ut_say_xp(enum xp_log_level level, const char *fmt, va_list ap)
	__attribute__((format(printf, 2, 0)));
/* Where every line goes instead of stderr when @fn takes it (returns true): @prio and
 * the message without the program's prefix, after the first error was kept. NULL:
 * stderr always (the default). The engine library sends its lines to an embedder's
 * log hook this way (user/api_engine.c). */
void ut_say_route(bool (*fn)(int prio, const char *msg));
/* The first error said since ut_say_prog(), "" if none (the --json error object). */
const char *ut_say_first_error(void);
/* Forgets it: the next error is the first (the engine library, per xp_engine_create()). */
void ut_say_first_clear(void);

#endif /* XPILE_UTIL_SAY_H */
