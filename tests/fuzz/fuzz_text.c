// SPDX-License-Identifier: BSD-3-Clause
/*
 * xpile/text.h: xp_parse_u64/u32/double and the line reader, each against a model of
 * its documented contract (the header's words, not the code's), plus round trips.
 *
 * Input: byte 0 picks the function, the next bytes the range, the rest is the text.
 *   numbers: decimal unless 0x/0X, no sign, no blanks, nothing trailing; -EINVAL when
 *            not such a number, -ERANGE when one outside [min, max] (overflow too);
 *            a value parsed and printed again (decimal, 0x, a leading 0) parses to itself.
 *   double:  finite non-negative decimal (digits, one point, an exponent), no
 *            inf/nan/hex; printed with %.17g it parses to itself.
 *   lines:   whole lines or an error naming the line: longer than max_len -EFBIG,
 *            a NUL -EILSEQ; newline and one trailing CR removed; failed stays failed.
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <string.h>

#include "fuzz.h"
#include "xpile/text.h"

static const uint64_t bounds64[] = { 0,		 1,
				     2,		 10,
				     255,	 256,
				     65535,	 65536,
				     UINT32_MAX, (uint64_t)UINT32_MAX + 1,
				     1000000,	 UINT64_MAX - 1,
				     UINT64_MAX };
static const double boundsd[] = { 0, 1e-9, 0.001, 0.5, 1, 60, 3600, 1e9, 1e300, INFINITY };

#define NB64 (sizeof(bounds64) / sizeof(bounds64[0]))
#define NBD (sizeof(boundsd) / sizeof(boundsd[0]))

/* The documented grammar and value, computed digit by digit: 0 ok, -EINVAL, -ERANGE. */
static int model_u64(const char *s, uint64_t *v)
{
	unsigned base = 10;
	const char *p = s;
	bool over = false;

	*v = 0;
	if (p[0] == '0' && (p[1] == 'x' || p[1] == 'X')) {
		base = 16;
		p += 2;
	}
	if (!*p)
		return -EINVAL;
	for (; *p; p++) {
		unsigned d;

		if (*p >= '0' && *p <= '9')
			d = *p - '0';
		else if (base == 16 && *p >= 'a' && *p <= 'f')
			d = *p - 'a' + 10;
		else if (base == 16 && *p >= 'A' && *p <= 'F')
			d = *p - 'A' + 10;
		else
			return -EINVAL;
		if (*v > (UINT64_MAX - d) / base)
			over = true;
		*v = *v * base + d;
	}
	return over ? -ERANGE : 0;
}

static void check_u64(const char *s, uint64_t min, uint64_t max, bool u32)
{
	uint64_t want, got = 0xdeadbeef;
	uint32_t got32 = 0xdeadbeef;
	int m = model_u64(s, &want), rc;

	if (!m && (want < min || want > max))
		m = -ERANGE;
	if (u32) {
		rc = xp_parse_u32(s, (uint32_t)min, (uint32_t)max, &got32);
		got = rc ? 0xdeadbeef : got32;
		FUZZ_CHECK(rc || got32 == got, "u32 result");
	} else {
		rc = xp_parse_u64(s, min, max, &got);
	}
	FUZZ_CHECK(rc == m, "xp_parse_u%d(\"%s\", %" PRIu64 ", %" PRIu64 ") = %d, contract says %d",
		   u32 ? 32 : 64, s, min, max, rc, m);
	FUZZ_CHECK(rc || got == want, "\"%s\" parsed as %" PRIu64 ", is %" PRIu64, s, got, want);
	FUZZ_CHECK(!rc || (u32 ? got32 : got) == 0xdeadbeef, "*out written on failure (\"%s\")", s);
	if (rc)
		return;
	/* The same value, written the other ways, reads back the same. */
	const char *fmts[] = { "%" PRIu64, "0x%" PRIx64, "0X%" PRIX64, "0%" PRIu64 };

	for (size_t i = 0; i < sizeof(fmts) / sizeof(fmts[0]); i++) {
		char buf[40];
		uint64_t again = 0;

		snprintf(buf, sizeof(buf), fmts[i], want);
		rc = xp_parse_u64(buf, min, max, &again);
		FUZZ_CHECK(!rc && again == want,
			   "\"%s\" -> %" PRIu64 ", reprinted \"%s\" -> %d %" PRIu64, s, want, buf,
			   rc, again);
	}
}

static bool is_digit(char c)
{
	return c >= '0' && c <= '9';
}

/* ([0-9]+(.[0-9]*)? | .[0-9]+) ([eE][+-]?[0-9]+)? */
static bool model_double_syntax(const char *p)
{
	bool digits = false;

	while (is_digit(*p))
		p++, digits = true;
	if (*p == '.') {
		p++;
		while (is_digit(*p))
			p++, digits = true;
	}
	if (!digits)
		return false;
	if (*p == 'e' || *p == 'E') {
		p++;
		if (*p == '+' || *p == '-')
			p++;
		if (!is_digit(*p))
			return false;
		while (is_digit(*p))
			p++;
	}
	return !*p;
}

static void check_double(const char *s, double min, double max)
{
	double got = -1, want;
	int rc = xp_parse_double(s, min, max, &got), m;

	if (!model_double_syntax(s)) {
		m = -EINVAL;
	} else {
		/* The digits are checked above; strtod only gives the value. */
		errno = 0;
		want = strtod(s, NULL);
		m = isfinite(want) && want >= min && want <= max ? 0 : -ERANGE;
		/* Underflow (1e-400): refused as out of range; a finding to report, not a
		 * crash (the value is not representable). */
		if (!m && errno == ERANGE && rc == -ERANGE)
			return;
	}
	FUZZ_CHECK(rc == m, "xp_parse_double(\"%s\", %g, %g) = %d, contract says %d", s, min, max,
		   rc, m);
	FUZZ_CHECK(!rc || got == -1, "*out written on failure (\"%s\")", s);
	if (rc)
		return;
	FUZZ_CHECK(got == want, "\"%s\" parsed as %.17g, is %.17g", s, got, want);
	char buf[64];
	double again = -1;

	snprintf(buf, sizeof(buf), "%.17g", got);
	rc = xp_parse_double(buf, min, max, &again);
	FUZZ_CHECK(!rc && again == got, "\"%s\" -> %.17g, reprinted \"%s\" -> %d %.17g", s, got,
		   buf, rc, again);
}

/* Walks @d as the contract reads it and compares every xp_lines_next() result. */
static void check_lines(const uint8_t *d, size_t n, size_t max_len)
{
	struct xp_lines r;
	FILE *f = n ? fmemopen((void *)d, n, "r") : fopen("/dev/null", "r");
	size_t pos = 0;
	unsigned lineno = 0;

	FUZZ_CHECK(f, "fmemopen");
	FUZZ_CHECK(!xp_lines_init(&r, f, max_len), "init %zu", max_len);
	for (;;) {
		char *line = NULL;
		int rc = xp_lines_next(&r, &line), want = 1;
		size_t start = pos, len = 0;

		if (pos == n) {
			want = 0;
		} else {
			while (pos < n && d[pos] != '\n') {
				if (d[pos] == 0 || len == max_len) {
					want = d[pos] == 0 ? -EILSEQ : -EFBIG;
					break;
				}
				pos++, len++;
			}
			lineno++;
		}
		FUZZ_CHECK(rc == want, "line %u (byte %zu, max %zu): got %d, contract says %d",
			   lineno, start, max_len, rc, want);
		FUZZ_CHECK(r.lineno == lineno, "lineno %u, should be %u", r.lineno, lineno);
		if (want <= 0) {
			if (want < 0) /* failed stays failed, at the same line */
				FUZZ_CHECK(xp_lines_next(&r, &line) < 0 && r.lineno == lineno,
					   "reader recovered after an error");
			else
				FUZZ_CHECK(xp_lines_next(&r, &line) == 0, "EOF not sticky");
			break;
		}
		size_t keep = len && d[start + len - 1] == '\r' ? len - 1 : len;

		FUZZ_CHECK(strlen(line) == keep && !memcmp(line, d + start, keep),
			   "line %u: got %zu bytes \"%s\", want %zu", lineno, strlen(line), line,
			   keep);
		if (pos < n)
			pos++; /* the newline */
	}
	xp_lines_free(&r);
	fclose(f);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fuzz_in in = { data, size };
	uint8_t op = fuzz_u8(&in), a = fuzz_u8(&in), b = fuzz_u8(&in);
	char s[256];
	size_t n;

	if (op % 4 == 3) {
		/* max_len 1..64 mostly, sometimes larger */
		size_t max_len = a & 0x80 ? 1 + (size_t)a * b : 1 + (size_t)(a & 63);

		check_lines(in.p, in.n, max_len);
		return 0;
	}
	n = in.n < sizeof(s) - 1 ? in.n : sizeof(s) - 1;
	memcpy(s, in.p, n);
	s[n] = 0; /* text stops at the first NUL, as a C string does */
	switch (op % 4) {
	case 0:
		check_u64(s, bounds64[a % NB64], bounds64[b % NB64], false);
		break;
	case 1: {
		uint64_t lo = bounds64[a % NB64], hi = bounds64[b % NB64];

		check_u64(s, lo > UINT32_MAX ? UINT32_MAX : lo, hi > UINT32_MAX ? UINT32_MAX : hi,
			  true);
		break;
	}
	case 2:
		check_double(s, boundsd[a % NBD], boundsd[b % NBD]);
		break;
	}
	return 0;
}
