// SPDX-License-Identifier: BSD-3-Clause
/* Replays tests/fuzz/corpus/desc (seeds and every crash found) through fuzz_desc's checks
 * of the library's RX and completion descriptor check (xpile/desc.h). */
#define FUZZ_CORPUS "tests/fuzz/corpus/desc"
#include "../fuzz/fuzz_desc.c"
#include "../fuzz/replay.h"
