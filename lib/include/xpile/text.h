/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Text input, read one way everywhere: numbers on command lines, in rule text, rule
 * files, wiring plans and configs, and the lines of those files.
 *
 * Numbers are decimal unless they start with 0x (a leading 0 is a decimal digit, never
 * octal: "0443" is 443), have no sign, no spaces and no trailing characters, and must
 * lie in [min, max]. Durations are finite, non-negative decimals ("inf", "nan" and
 * hexadecimal floats are refused).
 *
 * Lines are read whole or not at all: a line longer than the reader's limit, a NUL byte
 * or a read error is an error naming the line, never a silently split, truncated or
 * empty result.
 */
#ifndef XPILE_TEXT_H
#define XPILE_TEXT_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "xpile/api.h"

#ifdef __cplusplus
extern "C" {
#endif

/*
 * Parses @s as an unsigned integer in [@min, @max]. Returns 0, -EINVAL when @s is not
 * a number (empty, a sign, a space, trailing text) or -ERANGE when it is one outside
 * the range (overflow included); *@out is written only on success.
 */
XP_API int xp_parse_u64(const char *s, uint64_t min, uint64_t max, uint64_t *out);

/* xp_parse_u64() into a 32-bit result; @max is at most UINT32_MAX. */
XP_API int xp_parse_u32(const char *s, uint32_t min, uint32_t max, uint32_t *out);

/*
 * Parses @s as a finite decimal number in [@min, @max] (seconds, rates). Returns 0,
 * -EINVAL (not a finite decimal number) or -ERANGE.
 */
XP_API int xp_parse_double(const char *s, double min, double max, double *out);

/*
 * Writes "a number in MIN..MAX" (or "a number from MIN" when @max is UINT64_MAX) for
 * error messages that say what is accepted.
 */
XP_API const char *xp_parse_range_str(uint64_t min, uint64_t max, char *buf, size_t len);

/* A bounded line reader over a stdio stream. */
struct xp_lines {
	FILE *f;
	size_t max_len; /* longest accepted line, without its newline */
	char *buf; /* max_len + 2 bytes */
	unsigned int lineno; /* of the line last returned (or failed) */
};

/* Prepares @r to read @f, accepting lines of up to @max_len bytes (>= 1). */
XP_API int xp_lines_init(struct xp_lines *r, FILE *f, size_t max_len);
XP_API void xp_lines_free(struct xp_lines *r);

/*
 * Reads the next line into *@line (NUL-terminated, newline and a trailing CR removed;
 * valid until the next call). Returns 1 for a line, 0 at the end of the input, or
 * -EFBIG (line r->lineno is longer than max_len), -EILSEQ (line r->lineno holds a NUL
 * byte) or the negative errno of a read error (-EISDIR for a directory, -EIO...).
 * After an error the reader stays failed.
 */
XP_API int xp_lines_next(struct xp_lines *r, char **line);

#ifdef __cplusplus
}
#endif

#endif /* XPILE_TEXT_H */
