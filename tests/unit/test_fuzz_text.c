// SPDX-License-Identifier: BSD-3-Clause
/* Replays tests/fuzz/corpus/text (seeds and every crash found) through fuzz_text's checks. */
#define FUZZ_CORPUS "tests/fuzz/corpus/text"
#include "../fuzz/fuzz_text.c"
#include "../fuzz/replay.h"
