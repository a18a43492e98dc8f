/* SPDX-License-Identifier: BSD-3-Clause */
/* A mirror without sockets, fed by hand: the fuzzer's way into lib/fib_nl.c. */
#ifndef XPILE_FIB_NL_INTERNAL_H
#define XPILE_FIB_NL_INTERNAL_H

#include <stddef.h>

#include "xpile/fib_nl.h"

/* A mirror of @table (0: main) into @fib that reads nothing by itself: NULL on -ENOMEM. */
struct xp_fib_nl *xp_fib_nl_detached(struct xp_fib *fib, __u32 table);
/* Applies the rtnetlink messages in @buf as if they were notifications, then commits. */
void xp_fib_nl_feed(struct xp_fib_nl *m, const void *buf, size_t len);

#endif
