// SPDX-License-Identifier: BSD-3-Clause
/*
 * Numbers and lines, read one way for every binary and file format: strtoull() alone
 * reads "0443" as octal, "-1" as 2^64-1 and " 7" as 7; fgets() alone splits a long line
 * into two and stops a line at a NUL without saying so.
 */
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "xpile/text.h"

int xp_parse_u64(const char *s, uint64_t min, uint64_t max, uint64_t *out)
{
	int base = 10;
	const char *p = s;
	char *end;
	unsigned long long v;

	if (!s || !*s)
		return -EINVAL;
	if (p[0] == '0' && (p[1] == 'x' || p[1] == 'X')) {
		base = 16;
		p += 2;
	}
	/* strtoull would take a sign or leading blanks, and in base 16 a second "0x"
	 * ("0x0x1b"): only digits may start it here. */
	if (!(base == 16 ? isxdigit((unsigned char)*p) : isdigit((unsigned char)*p)) ||
	    (base == 16 && p[0] == '0' && (p[1] == 'x' || p[1] == 'X')))
		return -EINVAL;
	errno = 0;
	v = strtoull(p, &end, base);
	if (*end)
		return -EINVAL;
	if (errno == ERANGE || v < min || v > max)
		return -ERANGE;
	*out = v;
	return 0;
}

int xp_parse_u32(const char *s, uint32_t min, uint32_t max, uint32_t *out)
{
	uint64_t v;
	int err = xp_parse_u64(s, min, max, &v);

	if (!err)
		*out = (uint32_t)v;
	return err;
}

int xp_parse_double(const char *s, double min, double max, double *out)
{
	const char *p;
	char *end;
	double v;

	if (!s || !*s)
		return -EINVAL;
	/* Decimal digits, one point, an exponent: no inf, nan, hex floats, signs or blanks. */
	for (p = s; *p; p++)
		if (!isdigit((unsigned char)*p) && *p != '.' && *p != 'e' && *p != 'E' &&
		    !((*p == '-' || *p == '+') && p > s && (p[-1] == 'e' || p[-1] == 'E')))
			return -EINVAL;
	if (!isdigit((unsigned char)s[0]) && !(s[0] == '.' && isdigit((unsigned char)s[1])))
		return -EINVAL;
	errno = 0;
	v = strtod(s, &end);
	if (*end || end == s)
		return -EINVAL;
	if (errno == ERANGE || !isfinite(v) || v < min || v > max)
		return -ERANGE;
	*out = v;
	return 0;
}

const char *xp_parse_range_str(uint64_t min, uint64_t max, char *buf, size_t len)
{
	if (max == UINT64_MAX)
		snprintf(buf, len, "a number from %" PRIu64, min);
	else
		snprintf(buf, len, "a number in %" PRIu64 "..%" PRIu64, min, max);
	return buf;
}

int xp_lines_init(struct xp_lines *r, FILE *f, size_t max_len)
{
	memset(r, 0, sizeof(*r));
	if (!f || !max_len || max_len > (1u << 20))
		return -EINVAL;
	r->buf = malloc(max_len + 2);
	if (!r->buf)
		return -ENOMEM;
	r->f = f;
	r->max_len = max_len;
	return 0;
}

void xp_lines_free(struct xp_lines *r)
{
	free(r->buf);
	r->buf = NULL;
	r->f = NULL;
}

int xp_lines_next(struct xp_lines *r, char **line)
{
	size_t n = 0;
	int c;

	if (!r->f)
		return -EBADF;
	/* getc, not fgets: a NUL must be seen, and a long line must not come back split. */
	while ((c = getc(r->f)) != EOF && c != '\n') {
		if (c == 0 || n == r->max_len) {
			int err = c == 0 ? -EILSEQ : -EFBIG;

			r->lineno++;
			r->f = NULL;
			return err;
		}
		r->buf[n++] = (char)c;
	}
	if (c == EOF && ferror(r->f)) {
		int err = errno ? -errno : -EIO;

		r->lineno++;
		r->f = NULL;
		return err;
	}
	if (c == EOF && n == 0)
		return 0;
	r->lineno++;
	if (n && r->buf[n - 1] == '\r')
		n--;
	r->buf[n] = 0;
	*line = r->buf;
	return 1;
}
