// SPDX-License-Identifier: BSD-3-Clause
#include <stdio.h>

#include "bench.h"

int bench_region(int argc, char **argv)
{
	fprintf(stderr, "xpile-bench region: not built yet\n");
	return 2;
}
