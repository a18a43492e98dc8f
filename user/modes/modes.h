/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The five modes of `xpile run` (main.c). rxdrop, txonly, l2fwd and fwd are callbacks
 * of the public API (xpile/engine.h), one header each: each fills the fields of the
 * engine's opts that make it (txonly also builds its packet once the engine is made,
 * txonly.h). The router is still the engine's internal mode (router.c).
 */
#ifndef XPILE_ENG_MODES_H
#define XPILE_ENG_MODES_H

#include "fwd.h"
#include "l2fwd.h"
#include "rxdrop.h"
#include "txonly.h"

struct eng_mode;

extern const struct eng_mode eng_mode_router; /* router.c (router.h) */

#endif /* XPILE_ENG_MODES_H */
