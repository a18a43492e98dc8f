// SPDX-License-Identifier: BSD-3-Clause
/*
 * A deliberately broken suite. tests/run.sh runs it through itself and demands that the
 * harness reports it failed: a suite that prints a failure and still exits 0 (as the pile
 * RFC's stack test did) must never again pass unseen. It also checks that a skipped case
 * is reported as skipped, never as ok, and that a case failing before it skips still
 * fails. `broken skip` runs only skipping cases: the suite must exit 77.
 */
#include <string.h>

#include "xt.h"

static void passing_case(void)
{
	XT_EQ(1 + 1, 2);
}

static void failing_case(void)
{
	int pushed = 0; /* pretend a push failed */

	XT_EQ(pushed, 32);
}

static void skipping_case(void)
{
	XT_SKIP_CASE("no hugepages here (%d free)", 0);
	XT_CHECK(0); /* never reached */
}

static void fail_then_skip_case(void)
{
	XT_CHECK(1 == 2);
	XT_SKIP_CASE("a skip does not hide a failure");
}

int main(int argc, char **argv)
{
	if (argc > 1 && !strcmp(argv[1], "skip")) {
		XT_RUN(skipping_case);
		XT_RUN(skipping_case);
		return xt_done();
	}
	XT_RUN(passing_case);
	XT_RUN(failing_case);
	XT_RUN(skipping_case);
	XT_RUN(fail_then_skip_case);
	return xt_done();
}
