// SPDX-License-Identifier: BSD-3-Clause
#include <stdio.h>

#include "bench.h"

int bench_xdp(int argc, char **argv)
{
	fprintf(stderr, "xpile-bench xdp: not built yet\n");
	return 2;
}
