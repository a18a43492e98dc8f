/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * xt: the tiny test harness every C suite uses.
 *
 * A suite is one binary: main() calls xt_run() per case and returns xt_done().
 * A failed check marks the current case and the suite failed, prints where and why,
 * and the case goes on (so one run shows every broken check). Exit codes follow
 * automake: 0 pass, 1 fail, 77 skip (whole suite; e.g. no privileges).
 */
#ifndef XT_H
#define XT_H

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define XT_SKIP_CODE 77

static int xt_case_failed;
static int xt_cases_failed;
static int xt_cases_run;
static const char *xt_case_name = "(main)";

static inline int xt_check_(int ok, const char *what, const char *file, int line)
{
	if (!ok) {
		fprintf(stderr, "FAIL %s: %s:%d: %s\n", xt_case_name, file, line, what);
		xt_case_failed = 1;
	}
	return ok;
}

#define XT_CHECK(cond) xt_check_(!!(cond), #cond, __FILE__, __LINE__)

/* Compare as signed 64-bit, print both sides on failure. */
#define XT_EQ(a, b)                                                                        \
	({                                                                                 \
		long long xt_a_ = (long long)(a), xt_b_ = (long long)(b);                  \
		if (xt_a_ != xt_b_)                                                        \
			fprintf(stderr, "  %s = %lld, %s = %lld\n", #a, xt_a_, #b, xt_b_); \
		xt_check_(xt_a_ == xt_b_, #a " == " #b, __FILE__, __LINE__);               \
	})

/* Stop the current case: later checks would only cascade. */
#define XT_REQUIRE(cond)             \
	do {                         \
		if (!XT_CHECK(cond)) \
			return;      \
	} while (0)

/* Skip the whole suite with a reason (exit 77). */
#define XT_SKIP(...)                                   \
	do {                                           \
		fprintf(stderr, "SKIP: " __VA_ARGS__); \
		fprintf(stderr, "\n");                 \
		exit(XT_SKIP_CODE);                    \
	} while (0)

static inline void xt_run(const char *name, void (*fn)(void))
{
	xt_case_name = name;
	xt_case_failed = 0;
	fn();
	xt_cases_run++;
	if (xt_case_failed)
		xt_cases_failed++;
	fprintf(stderr, "  %s %s\n", xt_case_failed ? "FAIL" : "ok  ", name);
	xt_case_name = "(main)";
}

#define XT_RUN(fn) xt_run(#fn, fn)

static inline int xt_done(void)
{
	fprintf(stderr, "%d cases, %d failed\n", xt_cases_run, xt_cases_failed);
	return xt_cases_failed || xt_case_failed ? 1 : 0;
}

#endif /* XT_H */
