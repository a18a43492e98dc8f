// SPDX-License-Identifier: BSD-3-Clause
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>

#include "log_internal.h"

static _Atomic int default_level = XP_LOG_WARN;

static int default_log(enum xp_log_level level, const char *fmt, va_list ap)
{
	if ((int)level > atomic_load_explicit(&default_level, memory_order_relaxed))
		return 0;
	fputs("xpile: ", stderr);
	return vfprintf(stderr, fmt, ap);
}

/* The one process-wide setting, as in libbpf: a log sink is not per-object state. */
static _Atomic(xp_log_fn) log_fn = default_log;

xp_log_fn xp_set_log_fn(xp_log_fn fn)
{
	return atomic_exchange(&log_fn, fn);
}

bool xp_log_hook(xp_log_fn *fn)
{
	*fn = atomic_load_explicit(&log_fn, memory_order_acquire);
	return *fn != default_log;
}

void xp_set_log_level(enum xp_log_level level)
{
	atomic_store(&default_level, (int)level);
}

/* The innermost errbuf of the calls running on this thread (log_internal.h). */
static _Thread_local struct xp_errsink *sink;

void xp_errsink_begin(struct xp_errsink *es, char *buf, size_t sz)
{
	es->buf = buf && sz ? buf : NULL;
	es->sz = sz;
	es->prev = sink;
	if (!es->buf)
		return;
	buf[0] = 0;
	sink = es;
}

void xp_errsink_end(struct xp_errsink *es)
{
	if (!es->buf)
		return;
	sink = es->prev;
	/* One line: each message ends with a newline, and there may be several. */
	for (char *p = es->buf; *p; p++)
		if (*p == '\n')
			*p = p[1] ? ' ' : 0;
}

void xp_log(enum xp_log_level level, const char *fmt, ...)
{
	xp_log_fn fn = atomic_load_explicit(&log_fn, memory_order_acquire);
	struct xp_errsink *es = sink;
	va_list ap;

	if (es && level <= XP_LOG_WARN) {
		size_t n = strlen(es->buf);

		if (n < es->sz - 1) {
			va_start(ap, fmt);
			vsnprintf(es->buf + n, es->sz - n, fmt, ap);
			va_end(ap);
		}
		return;
	}
	if (!fn)
		return;
	va_start(ap, fmt);
	fn(level, fmt, ap);
	va_end(ap);
}
