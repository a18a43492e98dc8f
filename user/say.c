// SPDX-License-Identifier: BSD-3-Clause
/* The engine's one way to report a cause: one line on stderr (set-up, capture, TAPs; the
 * capture bench links it with user/capture.c). */
#include <stdarg.h>
#include <stdio.h>

#include "engine.h"

int eng_say(int rc, const char *fmt, ...)
{
	va_list ap;

	fputs("xpile: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	return rc;
}
