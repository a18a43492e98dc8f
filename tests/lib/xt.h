/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * xt: the tiny test harness every C suite uses.
 *
 * A suite is one binary: main() calls xt_run() per case and returns xt_done().
 * A failed check marks the current case and the suite failed, prints where and why,
 * and the case goes on (so one run shows every broken check). Exit codes follow
 * automake: 0 pass, 1 fail, 77 skip.
 *
 * Skips are decisions with a reason, never a silent pass:
 *   XT_SKIP("why")       whole suite, from main() before any case (exit 77)
 *   XT_SKIP_CASE("why")  this case only: it stops and prints "  skip <case>: why";
 *                        a case that failed a check before it still fails
 * The suite exits 77 only when it ran cases and every one of them skipped (it proved
 * nothing); with some cases passed it exits 0 and tests/run.sh lists the skipped ones
 * (and fails them in strict mode unless they are on its allowlist).
 */
#ifndef XT_H
#define XT_H

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define XT_SKIP_CODE 77

static int xt_case_failed;
static int xt_case_skipped;
static int xt_cases_failed;
static int xt_cases_skipped;
static int xt_cases_run;
static char xt_skip_reason[256];
static char xt_first_skip[sizeof(xt_skip_reason) + 64];
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

/* Skip the rest of the current case with a reason; only inside a case (void fn). */
#define XT_SKIP_CASE(...)                                                      \
	do {                                                                   \
		snprintf(xt_skip_reason, sizeof(xt_skip_reason), __VA_ARGS__); \
		xt_case_skipped = 1;                                           \
		return;                                                        \
	} while (0)

static inline void xt_run(const char *name, void (*fn)(void))
{
	xt_case_name = name;
	xt_case_failed = 0;
	xt_case_skipped = 0;
	fn();
	xt_cases_run++;
	if (xt_case_failed) {
		xt_cases_failed++;
		fprintf(stderr, "  FAIL %s\n", name);
	} else if (xt_case_skipped) {
		xt_cases_skipped++;
		/* tests/run.sh counts these lines: keep the format */
		fprintf(stderr, "  skip %s: %s\n", name, xt_skip_reason);
		if (!xt_first_skip[0])
			snprintf(xt_first_skip, sizeof(xt_first_skip), "%s: %s", name,
				 xt_skip_reason);
	} else {
		fprintf(stderr, "  ok   %s\n", name);
	}
	xt_case_name = "(main)";
}

#define XT_RUN(fn) xt_run(#fn, fn)

static inline int xt_done(void)
{
	fprintf(stderr, "%d cases, %d failed, %d skipped\n", xt_cases_run, xt_cases_failed,
		xt_cases_skipped);
	if (xt_cases_failed || xt_case_failed)
		return 1;
	if (xt_cases_run && xt_cases_skipped == xt_cases_run) {
		fprintf(stderr, "SKIP: every case skipped (first: %s)\n", xt_first_skip);
		return XT_SKIP_CODE;
	}
	return 0;
}

#endif /* XT_H */
