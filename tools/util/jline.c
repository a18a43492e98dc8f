// SPDX-License-Identifier: BSD-3-Clause
/* JSON lines over the line protocol (jline.h). */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jline.h"

json_t *ut_jl_ok(void)
{
	json_t *o = json_object();

	json_object_set_new(o, "ok", json_true());
	return o;
}

json_t *ut_jl_err(const char *fmt, ...)
{
	json_t *o = json_object();
	char msg[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	for (char *p = msg; *p; p++)
		if (*p == '\n')
			*p = ' ';
	json_object_set_new(o, "ok", json_false());
	/* Unchecked: a cut may split a UTF-8 character of what the peer sent. */
	json_object_set_new(o, "error", json_string_nocheck(msg));
	return o;
}

void ut_jl_send(struct ut_line_conn *c, json_t *o)
{
	char *s = o ? json_dumps(o, JSON_COMPACT) : NULL;

	/* A peer that stops reading loses its connection (ut_line_send()). */
	ut_line_send(c, s ? s : "", s ? strlen(s) : 0);
	free(s);
	json_decref(o);
}

json_t *ut_jl_parse(const char *line, json_t **rep)
{
	json_error_t e;
	json_t *req = json_loads(line, JSON_REJECT_DUPLICATES, &e);

	*rep = NULL;
	if (!req)
		*rep = ut_jl_err("malformed JSON at column %d: %s", e.column, e.text);
	else if (!json_is_object(req))
		*rep = ut_jl_err("a request is one JSON object, e.g. {\"cmd\":\"stats\"}");
	if (*rep) {
		json_decref(req);
		return NULL;
	}
	return req;
}
