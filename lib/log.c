// SPDX-License-Identifier: BSD-3-Clause
#include <stdatomic.h>
#include <stdio.h>

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

void xp_set_log_level(enum xp_log_level level)
{
	atomic_store(&default_level, (int)level);
}

void xp_log(enum xp_log_level level, const char *fmt, ...)
{
	xp_log_fn fn = atomic_load_explicit(&log_fn, memory_order_acquire);
	va_list ap;

	if (!fn)
		return;
	va_start(ap, fmt);
	fn(level, fmt, ap);
	va_end(ap);
}
