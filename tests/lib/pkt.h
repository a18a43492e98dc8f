/* SPDX-License-Identifier: BSD-3-Clause */
/* The packet crafter lives with its other user, xpile-bench xdp; the tests include it here. */
#include "../../tools/bench/pkt.h"
