/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * JSON lines over the line protocol (lines.h), as every control socket answers
 * (jline.c): one object per reply line, {"ok":true,...} or {"ok":false,"error":"one
 * line"}, written by jansson (so every string is escaped). The agent's control socket
 * and the engine's share it.
 */
#ifndef XPILE_UTIL_JLINE_H
#define XPILE_UTIL_JLINE_H

#include <jansson.h>

#include "lines.h"

/* {"ok":true} to add to. */
json_t *ut_jl_ok(void);
/* {"ok":false,"error":MESSAGE}, the message on one line. */
json_t *ut_jl_err(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Sends @o as one line (never waits: lines.h) and releases it. */
void ut_jl_send(struct ut_line_conn *c, json_t *o);
/* Parses @line into a request object: NULL with the error reply in *@rep. */
json_t *ut_jl_parse(const char *line, json_t **rep);

#endif /* XPILE_UTIL_JLINE_H */
