/* SPDX-License-Identifier: BSD-3-Clause */
/* The library's side of the options-struct rule (xpile/opts.h); not installed. */
#ifndef XPILE_OPTS_INTERNAL_H
#define XPILE_OPTS_INTERNAL_H

#include "xpile/opts.h"
#include "log_internal.h"

/*
 * XP_OPTS_LOAD() for the create and open calls: *DST becomes the caller's @opts as this build
 * knows it (zeros for what they do not set or know), or the one-line cause is logged
 * under @what and it is false.
 */
#define XP_OPTS_LOAD_LOG(what, DST, opts, TYPE) \
	xp_opts_load_log((what), #TYPE, (DST), sizeof(struct TYPE), (opts), XP_OPTS_KNOWN(TYPE))

static inline bool xp_opts_load_log(const char *what, const char *type, void *dst, size_t dst_sz,
				    const void *opts, size_t known)
{
	if (xp_opts_load(dst, dst_sz, opts, known))
		return true;
	xp_err("%s: opts.sz %zu is too small or sets bytes past the %zu this library knows; "
	       "zero the struct (XP_OPTS()) and set sz = sizeof(struct %s)\n",
	       what, *(const size_t *)opts, known, type);
	return false;
}

/*
 * A reserved_ field the struct grew past (a field added after it) is inside what this
 * build knows, so xp_opts_load() no longer checks it: a caller that set it meant
 * something this build does not have. True when every byte of @field is zero.
 */
#define XP_OPTS_RESERVED_CLEAR(field) xp_opts_zero_(&(field), sizeof(field))

static inline bool xp_opts_zero_(const void *p, size_t n)
{
	const unsigned char *b = p;

	for (size_t i = 0; i < n; i++)
		if (b[i])
			return false;
	return true;
}

#endif /* XPILE_OPTS_INTERNAL_H */
