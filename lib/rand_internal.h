/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * splitmix64 for the library's seeded dispersals (M3's initial fill order, the
 * dealer's random pick): tiny, stateless beyond one word, and good enough to spread
 * frames over DRAM rows and banks; and the one 64-bit mixer of the hash tables. Not
 * for anything that needs unpredictability.
 */
#ifndef XPILE_RAND_INTERNAL_H
#define XPILE_RAND_INTERNAL_H

#include <linux/types.h>

static inline __u64 xp_rand_next(__u64 *s)
{
	__u64 z = (*s += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

/* Uniform in [0, n) for n <= 2^32, without a division (Lemire). */
static inline __u32 xp_rand_below(__u64 *s, __u32 n)
{
	return (__u32)(((xp_rand_next(s) >> 32) * n) >> 32);
}

/* MurmurHash3's finaliser: every input bit reaches every output bit; for hash keys. */
static inline __u64 xp_mix64(__u64 h)
{
	h ^= h >> 33;
	h *= 0xff51afd7ed558ccdull;
	h ^= h >> 33;
	h *= 0xc4ceb9fe1a85ec53ull;
	return h ^ (h >> 33);
}

#endif /* XPILE_RAND_INTERNAL_H */
