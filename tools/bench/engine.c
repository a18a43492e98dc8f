// SPDX-License-Identifier: BSD-3-Clause
#include <stdio.h>

#include "bench.h"

int bench_engine(int argc, char **argv)
{
	fprintf(stderr, "xpile-bench engine: not built yet\n");
	return 2;
}
