// SPDX-License-Identifier: BSD-3-Clause
/*
 * The wiring plan (lib/wire.c): what `xpile-loader wire` writes reads back, and a
 * malformed plan (bad pair, sign, octal-looking word, long line, NUL, a queue twice)
 * is an error, never a partial plan.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

#include "xpile/log.h"
#include "xpile/wire.h"
#include "xpile/steer.h"
#include "xt.h"

#define IFN "xpt-plan0"

static char rundir[] = "/tmp/xpile-plan.XXXXXX", path[PATH_MAX], logged[512];

static int log_fn(enum xp_log_level lvl, const char *fmt, va_list ap)
{
	size_t off = strlen(logged);

	return vsnprintf(logged + off, sizeof(logged) - off, fmt, ap);
}

static void put(const void *data, size_t len)
{
	FILE *f = fopen(path, "we");

	if (!f || fwrite(data, 1, len, f) != len || fclose(f)) {
		perror(path);
		exit(1);
	}
}

/* A plan of @len bytes of @data is refused with one logged line holding @want. */
static void refused(const void *data, size_t len, const char *want)
{
	struct xp_wire_plan p;

	put(data, len);
	logged[0] = 0;
	memset(&p, 0xff, sizeof(p));
	XT_EQ(xp_wire_plan_read(IFN, &p), -EINVAL);
	XT_EQ(p.n, 0);
	if (!XT_CHECK(strstr(logged, want) != NULL))
		fprintf(stderr, "  logged '%s', expected '%s'\n", logged, want);
	XT_CHECK(strchr(logged, '\n') == logged + strlen(logged) - 1);
}

static void test_round_trip(void)
{
	struct xp_wire_plan p = { .n = 2, .map = { { 0, 1 }, { 3, 0 } } }, q;

	XT_EQ(xp_wire_plan_write(IFN, &p), 0);
	XT_EQ(xp_wire_plan_read(IFN, &q), 0);
	XT_EQ(q.n, 2);
	XT_EQ(q.map[1].queue, 3);
	XT_EQ(q.map[1].core, 0);
	put("# c\n\n 010  02 # tail\r\n", 22); /* decimal; blanks, comments, CR */
	XT_EQ(xp_wire_plan_read(IFN, &q), 0);
	XT_EQ(q.n, 1);
	XT_EQ(q.map[0].queue, 10);
	XT_EQ(q.map[0].core, 2);
}

static void test_malformed(void)
{
	static const char nul[] = "0 1\n1\0 2\n";
	size_t cap = (XP_WIRE_MAX + 1) * 12, off = 0;
	char buf[1024], *big;
	int len;

	refused("0 1\nx y\n", 8, "line 2: expected 'QUEUE CORE'");
	refused("0 1 2\n", 6, "line 1: expected 'QUEUE CORE'");
	refused("0\n", 2, "line 1: expected 'QUEUE CORE'");
	refused("-1 0\n", 5, "line 1: expected 'QUEUE CORE'");
	refused("0 -1\n", 5, "line 1: expected 'QUEUE CORE'");
	refused("0 1\n2 3\n0 4\n", 12, "line 3: queue 0 is wired twice");
	refused(nul, sizeof(nul) - 1, "line 2: holds a NUL byte");
	len = snprintf(buf, sizeof(buf), "#%400s\n0 1\n", "");
	refused(buf, len, "line 1: longer than 256 bytes");
	big = malloc(cap);
	XT_REQUIRE(big);
	for (int i = 0; i <= XP_WIRE_MAX; i++) /* one queue too many */
		off += snprintf(big + off, cap - off, "%d 0\n", i);
	refused(big, off, "line 257: more than 256 queues");
	free(big);
}

/* xp_wire_plan_load(): the reason in the caller's buffer, one line, the hook silent. */
static void test_load_errbuf(void)
{
	struct xp_wire_plan p;
	char why[256];

	put("0 1\n0 2\n", 8);
	logged[0] = 0;
	XT_EQ(xp_wire_plan_load(IFN, &p, why, sizeof(why)), -EINVAL);
	XT_EQ(p.n, 0);
	XT_CHECK(strstr(why, "line 2: queue 0 is wired twice") != NULL);
	XT_CHECK(strchr(why, '\n') == NULL);
	XT_EQ(logged[0], 0);
	put("0 1\n", 4);
	XT_EQ(xp_wire_plan_load(IFN, &p, why, sizeof(why)), 0);
	XT_EQ(p.n, 1);
}

static void test_read_error(void)
{
	struct xp_wire_plan p;

	unlink(path);
	XT_EQ(xp_wire_plan_read(IFN, &p), -ENOENT); /* no plan: the caller decides, silently */
	XT_REQUIRE(mkdir(path, 0700) == 0);
	logged[0] = 0;
	XT_EQ(xp_wire_plan_read(IFN, &p), -EISDIR);
	XT_CHECK(strstr(logged, "cannot read") && strstr(logged, "Is a directory"));
	rmdir(path);
}

int main(void)
{
	if (!mkdtemp(rundir) || setenv("XPILE_RUNDIR", rundir, 1) ||
	    xp_wire_plan_path(IFN, path, sizeof(path))) {
		perror("test set-up");
		return 1;
	}
	xp_set_log_fn(log_fn);
	XT_RUN(test_round_trip);
	XT_RUN(test_malformed);
	XT_RUN(test_load_errbuf);
	XT_RUN(test_read_error);
	xp_wire_plan_remove(IFN);
	rmdir(rundir);
	return xt_done();
}
