/* SPDX-License-Identifier: BSD-3-Clause */
/* The Internet checksum (RFC 1071) of a header the tools and tests build: not a fast
 * path (the data path updates checksums incrementally, RFC 1624). */
#ifndef XPILE_UTIL_INET_CSUM_H
#define XPILE_UTIL_INET_CSUM_H

#include <linux/types.h>

/* Over @len bytes (even) of @h, in host order: store it with htons(). */
static inline __u16 ut_inet_csum(const __u8 *h, int len)
{
	__u32 s = 0;

	for (int i = 0; i < len; i += 2)
		s += (__u32)h[i] << 8 | h[i + 1];
	while (s >> 16)
		s = (s & 0xffff) + (s >> 16);
	return (__u16)~s;
}

#endif /* XPILE_UTIL_INET_CSUM_H */
