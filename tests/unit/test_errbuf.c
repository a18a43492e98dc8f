// SPDX-License-Identifier: BSD-3-Clause
/*
 * A call's errors reach the caller without the log hook (lib/log.c): with errbuf in
 * its opts, the reason is one line in the caller's buffer and the hook hears nothing
 * of it; without, the hook hears it as before. Needs no privileges: the interface does
 * not exist, which xp_steer_open() finds first.
 */
#include <errno.h>
#include <string.h>

#include "xpile/log.h"
#include "xpile/steer.h"
#include "xt.h"

#define IFN "xpt-noif0"

static char heard[512];

static int hook(enum xp_log_level lvl, const char *fmt, va_list ap)
{
	size_t off = strlen(heard);

	return vsnprintf(heard + off, sizeof(heard) - off, fmt, ap);
}

static void test_open_errbuf(void)
{
	struct xp_steer_opts o = { .sz = sizeof(o), .ifname = IFN, .attach_existing = true };
	struct xp_steer *s = NULL;
	char why[256] = "stale";

	heard[0] = 0;
	o.errbuf = why;
	o.errbuf_sz = sizeof(why);
	XT_EQ(xp_steer_open(&o, &s), -ENODEV);
	XT_CHECK(!s);
	XT_CHECK(strstr(why, "interface " IFN " not found") != NULL);
	XT_CHECK(strchr(why, '\n') == NULL);
	XT_EQ(heard[0], 0);
}

/* A buffer too small holds the start of the reason, terminated. */
static void test_open_errbuf_short(void)
{
	struct xp_steer_opts o = { .sz = sizeof(o), .ifname = IFN, .attach_existing = true };
	struct xp_steer *s = NULL;
	char why[12];

	heard[0] = 0;
	o.errbuf = why;
	o.errbuf_sz = sizeof(why);
	XT_EQ(xp_steer_open(&o, &s), -ENODEV);
	XT_EQ(strcmp(why, "interface x"), 0);
	XT_EQ(heard[0], 0);
}

static void test_open_hook(void)
{
	struct xp_steer_opts o = { .sz = sizeof(o), .ifname = IFN, .attach_existing = true };
	struct xp_steer *s = NULL;

	heard[0] = 0;
	XT_EQ(xp_steer_open(&o, &s), -ENODEV);
	XT_CHECK(strstr(heard, "interface " IFN " not found") != NULL);
}

/* An opts struct of the size before errbuf (0.1's) still opens, and logs. */
static void test_open_old_size(void)
{
	struct xp_steer_opts o = { .sz = offsetof(struct xp_steer_opts, errbuf),
				   .ifname = IFN,
				   .attach_existing = true };
	struct xp_steer *s = NULL;

	heard[0] = 0;
	XT_EQ(xp_steer_open(&o, &s), -ENODEV);
	XT_CHECK(strstr(heard, "not found") != NULL);
}

int main(void)
{
	xp_set_log_fn(hook);
	XT_RUN(test_open_errbuf);
	XT_RUN(test_open_errbuf_short);
	XT_RUN(test_open_hook);
	XT_RUN(test_open_old_size);
	return xt_done();
}
