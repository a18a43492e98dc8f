/* SPDX-License-Identifier: BSD-3-Clause */
/* Library-internal logging; not installed. */
#ifndef XPILE_LOG_INTERNAL_H
#define XPILE_LOG_INTERNAL_H

#include "xpile/log.h"

__attribute__((format(printf, 2, 3))) void xp_log(enum xp_log_level level, const char *fmt, ...);

#define xp_err(...) xp_log(XP_LOG_ERR, __VA_ARGS__)
#define xp_warn(...) xp_log(XP_LOG_WARN, __VA_ARGS__)
#define xp_info(...) xp_log(XP_LOG_INFO, __VA_ARGS__)
#define xp_dbg(...) xp_log(XP_LOG_DEBUG, __VA_ARGS__)

#endif
