// SPDX-License-Identifier: BSD-3-Clause
/* The programs' one reporter (say.h). */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

#include "say.h"

static const char *say_prog_name = "xpile";
static int say_verbosity;
static bool say_journal_on;
static char say_first[512];
static bool (*_Atomic say_route)(int prio, const char *msg);

/* sd-daemon(3): JOURNAL_STREAM is "DEV:INODE" of the stream systemd connected; it is
 * inherited, so it counts only while fd 2 is still that stream. */
static bool stderr_is_journal(void)
{
	const char *js = getenv("JOURNAL_STREAM");
	unsigned long long dev, ino;
	struct stat st;

	return js && sscanf(js, "%llu:%llu", &dev, &ino) == 2 && !fstat(STDERR_FILENO, &st) &&
	       (unsigned long long)st.st_dev == dev && (unsigned long long)st.st_ino == ino;
}

void ut_say_prog(const char *name)
{
	say_prog_name = name;
	say_journal_on = stderr_is_journal();
	say_first[0] = 0;
}

void ut_say_verbose(int verbose)
{
	say_verbosity = verbose;
}

bool ut_say_journal(void)
{
	return say_journal_on;
}

const char *ut_say_first_error(void)
{
	return say_first;
}

void ut_say_first_clear(void)
{
	say_first[0] = 0;
}

void ut_say_route(bool (*fn)(int prio, const char *msg))
{
	say_route = fn;
}

/* The library reaches the host's bpffs from inside `ip netns exec` as
 * /proc/PID/root/sys/fs/bpf/...; a person knows it as /sys/fs/bpf/...: each
 * "/proc/<digits>/root/" becomes "/" in what is shown. */
static void host_paths(char *s)
{
	for (char *p = strstr(s, "/proc/"); p; p = strstr(p + 1, "/proc/")) {
		size_t d = strspn(p + 6, "0123456789");

		if (d && !strncmp(p + 6 + d, "/root/", 6))
			memmove(p, p + 6 + d + 5, strlen(p + 6 + d + 5) + 1);
	}
}

void ut_vlog(int prio, const char *fmt, va_list ap)
{
	bool (*route)(int, const char *) = say_route;
	char msg[4096], out[8192];
	size_t used = 0, n;
	const char *line = msg;

	vsnprintf(msg, sizeof(msg), fmt, ap);
	host_paths(msg);
	n = strlen(msg);
	while (n && msg[n - 1] == '\n')
		msg[--n] = 0;
	if (prio <= LOG_ERR && !say_first[0])
		snprintf(say_first, sizeof(say_first), "%s", msg);
	if (route && route(prio, msg))
		return;
	do {
		size_t len = strcspn(line, "\n");
		int w;

		if (say_journal_on)
			w = snprintf(out + used, sizeof(out) - used, "<%d>%s: %.*s\n", prio,
				     say_prog_name, (int)len, line);
		else
			w = snprintf(out + used, sizeof(out) - used, "%s: %.*s\n", say_prog_name,
				     (int)len, line);
		if (w < 0 || (size_t)w >= sizeof(out) - used) {
			/* A longer message is cut, never split. */
			used = sizeof(out) - 1;
			out[used - 1] = '\n';
			break;
		}
		used += (size_t)w;
		line += len + (line[len] == '\n');
	} while (*line);
	/* One write: a line is never split by another thread's. */
	if (write(STDERR_FILENO, out, used) < 0)
		return; /* nowhere left to say it */
}

void ut_log(int prio, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	ut_vlog(prio, fmt, ap);
	va_end(ap);
}

int ut_vsay(int err, const char *fmt, va_list ap)
{
	ut_vlog(err ? LOG_ERR : LOG_INFO, fmt, ap);
	return err;
}

int ut_say(int err, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	err = ut_vsay(err, fmt, ap);
	va_end(ap);
	return err;
}

int ut_say_xp(enum xp_log_level level, const char *fmt, va_list ap)
{
	static const int xp_prio[] = { [XP_LOG_ERR] = LOG_ERR,
				       [XP_LOG_WARN] = LOG_WARNING,
				       [XP_LOG_INFO] = LOG_INFO,
				       [XP_LOG_DEBUG] = LOG_DEBUG };

	if ((level == XP_LOG_INFO && say_verbosity < 1) ||
	    (level == XP_LOG_DEBUG && say_verbosity < 2))
		return 0;
	ut_vlog(xp_prio[level], fmt, ap);
	return 0;
}
