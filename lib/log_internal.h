/* SPDX-License-Identifier: BSD-3-Clause */
/* Library-internal logging; not installed. */
#ifndef XPILE_LOG_INTERNAL_H
#define XPILE_LOG_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>

#include "xpile/log.h"

__attribute__((format(printf, 2, 3))) void xp_log(enum xp_log_level level, const char *fmt, ...);

/*
 * A call whose failure a caller must show (opts with errbuf/errbuf_sz) collects its
 * errors and warnings in the caller's buffer instead of the hook, for the calls it
 * makes on this thread between begin and end; end makes them one line. A NULL or empty
 * buffer changes nothing: the messages go to the hook.
 */
struct xp_errsink {
	char *buf;
	size_t sz;
	struct xp_errsink *prev;
};
void xp_errsink_begin(struct xp_errsink *es, char *buf, size_t sz);
void xp_errsink_end(struct xp_errsink *es);

/* The hook in force into *@fn (NULL: silenced); false while it is the library's
 * default. The engine's own lines (user/api_engine.c) go to a caller's hook too. */
bool xp_log_hook(xp_log_fn *fn);

#define xp_err(...) xp_log(XP_LOG_ERR, __VA_ARGS__)
#define xp_warn(...) xp_log(XP_LOG_WARN, __VA_ARGS__)
#define xp_info(...) xp_log(XP_LOG_INFO, __VA_ARGS__)
#define xp_dbg(...) xp_log(XP_LOG_DEBUG, __VA_ARGS__)

#endif
