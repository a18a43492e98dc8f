// SPDX-License-Identifier: BSD-3-Clause
/*
 * What a command did, step by step: a line per step for people, or with --json one
 * object printed whole at the end, so a command that fails half-way leaves no half
 * object on stdout (its one line is on stderr).
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include "loader.h"

void json_str(FILE *f, const char *s)
{
	fputc('"', f);
	for (; s && *s; s++) {
		unsigned char c = (unsigned char)*s;

		if (c == '"' || c == '\\')
			fprintf(f, "\\%c", c);
		else if (c < 0x20)
			fprintf(f, "\\u%04x", c);
		else
			fputc(c, f);
	}
	fputc('"', f);
}

int out_open(struct out *o, bool json)
{
	*o = (struct out){ .json = json, .first = true };
	if (!json)
		return 0;
	o->steps = open_memstream(&o->steps_buf, &o->steps_len);
	o->more = open_memstream(&o->more_buf, &o->more_len);
	if (!o->steps || !o->more) {
		out_close(o);
		return ut_say(1, "out of memory");
	}
	return 0;
}

void out_step(struct out *o, const char *step, const char *fmt, ...)
{
	char msg[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (!o->json) {
		printf("  %s: %s\n", step, msg);
		return;
	}
	fprintf(o->steps, "%s{\"step\":", o->first ? "" : ",");
	json_str(o->steps, step);
	fprintf(o->steps, ",\"says\":");
	json_str(o->steps, msg);
	fputc('}', o->steps);
	o->first = false;
}

void out_print(struct out *o, const char *ifname)
{
	if (!o->json)
		return;
	fflush(o->steps);
	fflush(o->more);
	printf("{\"ifname\":");
	json_str(stdout, ifname);
	printf(",\"steps\":[%s]%s}\n", o->steps_buf ? o->steps_buf : "",
	       o->more_buf ? o->more_buf : "");
}

void out_close(struct out *o)
{
	/* Memory streams: what they held was printed (or is dropped on a failure). */
	if (o->steps)
		(void)fclose(o->steps);
	if (o->more)
		(void)fclose(o->more);
	free(o->steps_buf);
	free(o->more_buf);
	*o = (struct out){ 0 };
}
