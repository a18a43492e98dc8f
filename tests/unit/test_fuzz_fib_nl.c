// SPDX-License-Identifier: BSD-3-Clause
/* Replays tests/fuzz/corpus/fib_nl (seeds and every crash found) through fuzz_fib_nl's checks. */
#define FUZZ_CORPUS "tests/fuzz/corpus/fib_nl"
#include "../fuzz/fuzz_fib_nl.c"
#include "../fuzz/replay.h"
