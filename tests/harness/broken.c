// SPDX-License-Identifier: BSD-3-Clause
/*
 * A deliberately broken suite. tests/run.sh runs it through itself and demands that the
 * harness reports it failed: a suite that prints a failure and still exits 0 (as the pile
 * RFC's stack test did) must never again pass unseen.
 */
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

int main(void)
{
	XT_RUN(passing_case);
	XT_RUN(failing_case);
	return xt_done();
}
