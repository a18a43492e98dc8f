/* SPDX-License-Identifier: BSD-3-Clause */
/* Shared by layout.c and layout_m3.c; not installed. */
#ifndef XPILE_LAYOUT_INTERNAL_H
#define XPILE_LAYOUT_INTERNAL_H

#include <linux/types.h>

static inline __u64 xp_gcd64(__u64 a, __u64 b)
{
	while (b) {
		__u64 t = a % b;

		a = b;
		b = t;
	}
	return a;
}

#endif
