/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * libxpile never prints on its own: every message goes through the caller's hook,
 * like libbpf_set_print(). The default hook writes warnings and errors to stderr.
 */
#ifndef XPILE_LOG_H
#define XPILE_LOG_H

#include <stdarg.h>

#include "xpile/api.h"

#ifdef __cplusplus
extern "C" {
#endif

enum xp_log_level {
	XP_LOG_ERR,
	XP_LOG_WARN,
	XP_LOG_INFO,
	XP_LOG_DEBUG,
};

typedef int (*xp_log_fn)(enum xp_log_level level, const char *fmt, va_list ap);

/* Installs @fn (NULL silences the library); returns the previous hook. */
XP_API xp_log_fn xp_set_log_fn(xp_log_fn fn);

/* Sets the most verbose level the default hook prints (default XP_LOG_WARN). */
XP_API void xp_set_log_level(enum xp_log_level level);

#ifdef __cplusplus
}
#endif

#endif /* XPILE_LOG_H */
