// SPDX-License-Identifier: BSD-3-Clause
/*
 * The one JSON a failing --json command writes (see cli.h): an error object on stdout,
 * so a script that parses stdout always gets a document, whatever went wrong.
 */
#include <errno.h>
#include <unistd.h>

#include "cli_json.h"
#include "say.h"

static bool json_wanted;

void cli_json_want(bool on)
{
	json_wanted = on;
}

bool cli_json_wanted(void)
{
	return json_wanted;
}

void cli_json_str(FILE *f, const char *s)
{
	fputc('"', f);
	for (const unsigned char *c = (const unsigned char *)s; *c; c++)
		if (*c == '"' || *c == '\\')
			fprintf(f, "\\%c", *c);
		else if (*c < 0x20 || *c == 0x7f)
			fprintf(f, "\\u%04x", *c);
		else
			fputc(*c, f);
	fputc('"', f);
}

const char *cli_json_quote(const char *s, char *buf, size_t len)
{
	size_t k = 0;

	/* Room for the closing quote and NUL, and the longest escape (6 bytes). */
	if (len < 9)
		return "\"\"";
	buf[k++] = '"';
	for (const unsigned char *c = (const unsigned char *)s; *c && k + 8 < len; c++)
		if (*c == '"' || *c == '\\')
			k += (size_t)snprintf(buf + k, len - k, "\\%c", *c);
		else if (*c < 0x20 || *c == 0x7f)
			k += (size_t)snprintf(buf + k, len - k, "\\u%04x", *c);
		else
			buf[k++] = (char)*c;
	buf[k++] = '"';
	buf[k] = 0;
	return buf;
}

void cli_json_error(FILE *f, int status, const char *msg)
{
	fputs("{\"error\":", f);
	cli_json_str(f, msg);
	fprintf(f, ",\"status\":%d}\n", status);
	fflush(f);
}

/* --json: stdout goes through a counting stream, so a failure can tell whether it has
 * written anything already (then that is the JSON, and nothing is added). */
static unsigned long long json_written;
static FILE *json_real_stdout;

static ssize_t count_write(void *cookie, const char *buf, size_t n)
{
	size_t done = 0;

	while (done < n) {
		ssize_t w = write(STDOUT_FILENO, buf + done, n - done);

		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0)
			return done ? (ssize_t)done : -1;
		done += (size_t)w;
	}
	json_written += n;
	return (ssize_t)n;
}

void cli_json_begin(void)
{
	cookie_io_functions_t io = { .write = count_write };
	FILE *f;

	if (!cli_json_wanted() || json_real_stdout)
		return;
	fflush(stdout);
	f = fopencookie(NULL, "w", io);
	if (!f)
		return; /* then errors are not turned into JSON, nothing else changes */
	if (setvbuf(f, NULL, isatty(STDOUT_FILENO) ? _IOLBF : _IOFBF, BUFSIZ)) {
		(void)fclose(f); /* nothing written to it */
		return;
	}
	json_real_stdout = stdout;
	stdout = f;
}

int cli_json_finish(int status)
{
	if (!json_real_stdout)
		return status;
	fflush(stdout);
	if (status && !json_written) {
		const char *e = ut_say_first_error();

		cli_json_error(stdout, status, *e ? e : "failed; the cause is on stderr");
	}
	fflush(stdout);
	return status;
}
