/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The options-struct rule, libbpf style, for every xp_*_opts of the library.
 *
 * A caller zero-fills the struct, sets .sz = sizeof(struct xp_foo_opts) as its
 * header knows it, then the fields it wants (XP_OPTS() does all three). The
 * library built against another version of the header reads the struct like this:
 *
 * - Fields beyond the caller's .sz read as zero: an older caller gets the defaults
 *   for what it does not know, and nothing past its .sz is ever read.
 * - Bytes beyond what this build knows (past xp_foo_opts__last_field) must be zero:
 *   a newer caller's field that this build would ignore is refused with -EINVAL,
 *   never silently dropped. Structs keep no unnamed tail padding for that reason
 *   (the named reserved_ fields stand in for it and must be zero).
 * - .sz below sizeof(size_t) is refused with -EINVAL; a NULL opts means all defaults
 *   (and fails like an all-zero struct where a field is required).
 *
 * New fields only ever go at the end (or into a reserved_ field), and
 * xp_foo_opts__last_field moves to the new last one.
 */
#ifndef XPILE_OPTS_H
#define XPILE_OPTS_H

#include <stdbool.h>
#include <stddef.h>
#include <string.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Declares struct TYPE NAME, zero-filled (padding too), .sz set, then the fields given:
 *   XP_OPTS(xp_pool_opts, o, .backend = XP_POOL_RING); */
#define XP_OPTS(TYPE, NAME, ...)                                         \
	struct TYPE NAME = ({                                            \
		memset(&NAME, 0, sizeof(struct TYPE));                   \
		(struct TYPE){ .sz = sizeof(struct TYPE), __VA_ARGS__ }; \
	})

#define XP_OFFSETOFEND(TYPE, FIELD) (offsetof(TYPE, FIELD) + sizeof(((TYPE *)0)->FIELD))

/* Bytes of struct TYPE this build knows: up to the end of TYPE##__last_field. */
#define XP_OPTS_KNOWN(TYPE) XP_OFFSETOFEND(struct TYPE, TYPE##__last_field)

/* Whether the caller's struct covers FIELD entirely (false for NULL opts). */
#define XP_OPTS_HAS(opts, FIELD) xp_opts_has_((opts), XP_OFFSETOFEND(__typeof__(*(opts)), FIELD))

/* FIELD's value, or FALLBACK when the caller's struct ends before it. */
#define XP_OPTS_GET(opts, FIELD, FALLBACK) (XP_OPTS_HAS(opts, FIELD) ? (opts)->FIELD : (FALLBACK))

/* The rule above: NULL is valid; else .sz covers .sz and no unknown byte is set. */
#define XP_OPTS_VALID(opts, TYPE) xp_opts_valid_((opts), XP_OPTS_KNOWN(TYPE))

/*
 * XP_OPTS_VALID, then *DST (a struct TYPE) becomes the caller's struct as this build
 * knows it: zero-filled, the bytes both sides know copied, .sz = sizeof(struct TYPE),
 * so that the rest of the function reads plain fields. NULL opts gives all zeros.
 * False (and *DST all zeros) when the opts are invalid.
 */
#define XP_OPTS_LOAD(DST, opts, TYPE) \
	xp_opts_load((DST), sizeof(struct TYPE), (opts), XP_OPTS_KNOWN(TYPE))

/* Bytes [@known, @sz) of @opts are zero, and @sz holds at least the sz field. */
static inline bool xp_opts_tail_zero(const void *opts, size_t sz, size_t known)
{
	if (sz < sizeof(size_t))
		return false;
	for (size_t i = known; i < sz; i++)
		if (((const unsigned char *)opts)[i])
			return false;
	return true;
}

static inline bool xp_opts_has_(const void *opts, size_t end)
{
	return opts && *(const size_t *)opts >= end;
}

static inline bool xp_opts_valid_(const void *opts, size_t known)
{
	return !opts || xp_opts_tail_zero(opts, *(const size_t *)opts, known);
}

static inline bool xp_opts_load(void *dst, size_t dst_sz, const void *opts, size_t known)
{
	memset(dst, 0, dst_sz);
	if (opts) {
		size_t sz = *(const size_t *)opts;

		if (!xp_opts_tail_zero(opts, sz, known))
			return false;
		memcpy(dst, opts, sz < known ? sz : known);
	}
	*(size_t *)dst = dst_sz;
	return true;
}

#ifdef __cplusplus
}
#endif

#endif /* XPILE_OPTS_H */
