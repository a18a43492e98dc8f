// SPDX-License-Identifier: BSD-3-Clause
/* Replays tests/fuzz/corpus/rule (seeds and every crash found) through fuzz_rule's checks. */
#define FUZZ_CORPUS "tests/fuzz/corpus/rule"
#include "../fuzz/fuzz_rule.c"
#include "../fuzz/replay.h"
