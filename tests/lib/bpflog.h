/* SPDX-License-Identifier: BSD-3-Clause */
/* The verifier-log keeper lives with its other user, xpile-bench; the tests include it here. */
#include "../../tools/bench/bpflog.h"
