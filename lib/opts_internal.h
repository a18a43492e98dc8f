/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * libbpf-style opts structs whose callers may be built against an older or newer
 * header: the caller's .sz says how much of the struct it knows.
 */
#ifndef XPILE_OPTS_INTERNAL_H
#define XPILE_OPTS_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <string.h>

/*
 * Copies the caller's @src (@src_sz bytes, its .sz) over the defaults in @dst, of
 * which this build knows the first @known bytes. False if @src_sz is below @min_sz,
 * or if a byte past @known is set: a newer caller's field is refused, never ignored.
 */
static inline bool xp_opts_copy(void *dst, size_t known, const void *src, size_t src_sz,
				size_t min_sz)
{
	if (src_sz < min_sz)
		return false;
	for (size_t i = known; i < src_sz; i++)
		if (((const char *)src)[i])
			return false;
	memcpy(dst, src, src_sz < known ? src_sz : known);
	return true;
}

#endif /* XPILE_OPTS_INTERNAL_H */
