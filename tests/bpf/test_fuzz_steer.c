// SPDX-License-Identifier: BSD-3-Clause
/* Replays tests/fuzz/corpus/steer (seeds and every disagreement found) through fuzz_steer:
 * the steer program under BPF_PROG_TEST_RUN against the reference classifier. */
#define FUZZ_CORPUS "tests/fuzz/corpus/steer"
#include "../fuzz/fuzz_steer.c"
#include "../fuzz/replay.h"
