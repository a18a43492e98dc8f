/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The five modes of `xpile run` (main.c). rxdrop, l2fwd and fwd are callbacks of the
 * public API (xpile/engine.h), one header each: each fills the fields of the engine's
 * opts that make it. txonly and the router are still the engine's internal modes
 * (txonly.c, router.c).
 */
#ifndef XPILE_ENG_MODES_H
#define XPILE_ENG_MODES_H

#include "fwd.h"
#include "l2fwd.h"
#include "rxdrop.h"

struct eng_mode;

extern const struct eng_mode eng_mode_txonly; /* txonly.c (txonly.h) */
extern const struct eng_mode eng_mode_router; /* router.c (router.h) */

#endif /* XPILE_ENG_MODES_H */
