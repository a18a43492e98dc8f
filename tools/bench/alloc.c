// SPDX-License-Identifier: BSD-3-Clause
#include <stdio.h>

#include "bench.h"

int bench_alloc(int argc, char **argv)
{
	fprintf(stderr, "xpile-bench alloc: not built yet\n");
	return 2;
}
