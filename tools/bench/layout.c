// SPDX-License-Identifier: BSD-3-Clause
#include <stdio.h>

#include "bench.h"

int bench_layout(int argc, char **argv)
{
	fprintf(stderr, "xpile-bench layout: not built yet\n");
	return 2;
}
