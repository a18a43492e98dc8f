/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Compatibility umbrella: the UMEM layout and M3 fill order (xpile/layout.h) and the
 * memory behind it (xpile/mem.h). New code includes the one it needs.
 */
#ifndef XPILE_UMEM_H
#define XPILE_UMEM_H

#include "xpile/layout.h"
#include "xpile/mem.h"

#endif /* XPILE_UMEM_H */
