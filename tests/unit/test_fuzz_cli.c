// SPDX-License-Identifier: BSD-3-Clause
/* Replays tests/fuzz/corpus/cli (seeds and every crash found) through fuzz_cli's checks of
 * the command-line framework (tools/util/cli.c). */
#define FUZZ_CORPUS "tests/fuzz/corpus/cli"
#include "../fuzz/fuzz_cli.c"
#include "../fuzz/replay.h"
