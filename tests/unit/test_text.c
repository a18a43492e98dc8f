// SPDX-License-Identifier: BSD-3-Clause
/* xpile/text.h: one number parser and one bounded line reader for every input. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "xpile/text.h"
#include "xt.h"

static void test_u64(void)
{
	uint64_t v = 7;

	XT_EQ(xp_parse_u64("443", 0, 65535, &v), 0);
	XT_EQ(v, 443);
	XT_EQ(xp_parse_u64("0443", 0, 65535, &v), 0); /* decimal, never octal */
	XT_EQ(v, 443);
	XT_EQ(xp_parse_u64("010", 0, 100, &v), 0);
	XT_EQ(v, 10);
	XT_EQ(xp_parse_u64("0x1f", 0, 100, &v), 0);
	XT_EQ(v, 31);
	XT_EQ(xp_parse_u64("0", 0, 0, &v), 0);
	XT_EQ(v, 0);
	XT_EQ(xp_parse_u64("18446744073709551615", 0, UINT64_MAX, &v), 0);
	XT_CHECK(v == UINT64_MAX);
	v = 7;
	XT_EQ(xp_parse_u64("-1", 0, UINT64_MAX, &v), -EINVAL);
	XT_EQ(xp_parse_u64("+1", 0, 10, &v), -EINVAL);
	XT_EQ(xp_parse_u64(" 1", 0, 10, &v), -EINVAL);
	XT_EQ(xp_parse_u64("1 ", 0, 10, &v), -EINVAL);
	XT_EQ(xp_parse_u64("", 0, 10, &v), -EINVAL);
	XT_EQ(xp_parse_u64(NULL, 0, 10, &v), -EINVAL);
	XT_EQ(xp_parse_u64("0x", 0, 10, &v), -EINVAL);
	XT_EQ(xp_parse_u64("0x-1", 0, 10, &v), -EINVAL);
	XT_EQ(xp_parse_u64("1e3", 0, 10000, &v), -EINVAL);
	XT_EQ(xp_parse_u64("inf", 0, 10, &v), -EINVAL);
	XT_EQ(xp_parse_u64("11", 0, 10, &v), -ERANGE);
	XT_EQ(xp_parse_u64("3", 5, 10, &v), -ERANGE);
	XT_EQ(xp_parse_u64("18446744073709551616", 0, UINT64_MAX, &v), -ERANGE);
	XT_EQ(v, 7); /* untouched on failure */
}

static void test_u32(void)
{
	uint32_t v = 0;

	XT_EQ(xp_parse_u32("4294967295", 0, UINT32_MAX, &v), 0);
	XT_CHECK(v == UINT32_MAX);
	XT_EQ(xp_parse_u32("4294967296", 0, UINT32_MAX, &v), -ERANGE);
}

static void test_double(void)
{
	double d = -1;

	XT_EQ(xp_parse_double("1.5", 0, 100, &d), 0);
	XT_CHECK(d == 1.5);
	XT_EQ(xp_parse_double(".5", 0, 100, &d), 0);
	XT_EQ(xp_parse_double("2e1", 0, 100, &d), 0);
	XT_CHECK(d == 20);
	XT_EQ(xp_parse_double("2e-1", 0, 100, &d), 0);
	XT_EQ(xp_parse_double("inf", 0, 1e9, &d), -EINVAL);
	XT_EQ(xp_parse_double("nan", 0, 1e9, &d), -EINVAL);
	XT_EQ(xp_parse_double("-1", 0, 1e9, &d), -EINVAL);
	XT_EQ(xp_parse_double("0x10", 0, 1e9, &d), -EINVAL);
	XT_EQ(xp_parse_double("1e", 0, 1e9, &d), -EINVAL);
	XT_EQ(xp_parse_double("", 0, 1e9, &d), -EINVAL);
	XT_EQ(xp_parse_double("e5", 0, 1e9, &d), -EINVAL);
	XT_EQ(xp_parse_double("1e300", 0, 1e9, &d), -ERANGE);
	XT_EQ(xp_parse_double("1e400", 0, 1e9, &d), -ERANGE);
	XT_EQ(xp_parse_double("0.001", 0.01, 1e9, &d), -ERANGE);
}

static FILE *from(const char *data, size_t len)
{
	return fmemopen((void *)data, len, "r");
}

static void test_lines(void)
{
	static const char data[] = "a\nbb\r\n\n# c\nlast";
	struct xp_lines r;
	char *line;
	FILE *f = from(data, sizeof(data) - 1);

	XT_REQUIRE(f);
	XT_EQ(xp_lines_init(&r, f, 8), 0);
	XT_EQ(xp_lines_next(&r, &line), 1);
	XT_CHECK(!strcmp(line, "a"));
	XT_EQ(xp_lines_next(&r, &line), 1);
	XT_CHECK(!strcmp(line, "bb"));
	XT_EQ(xp_lines_next(&r, &line), 1);
	XT_CHECK(!strcmp(line, ""));
	XT_EQ(xp_lines_next(&r, &line), 1);
	XT_CHECK(!strcmp(line, "# c"));
	XT_EQ(xp_lines_next(&r, &line), 1); /* no final newline */
	XT_CHECK(!strcmp(line, "last"));
	XT_EQ(r.lineno, 5);
	XT_EQ(xp_lines_next(&r, &line), 0);
	xp_lines_free(&r);
	fclose(f);
}

static void test_lines_too_long(void)
{
	static const char data[] = "ok\n123456789\nnever\n";
	struct xp_lines r;
	char *line;
	FILE *f = from(data, sizeof(data) - 1);

	XT_REQUIRE(f);
	XT_EQ(xp_lines_init(&r, f, 8), 0);
	XT_EQ(xp_lines_next(&r, &line), 1);
	XT_EQ(xp_lines_next(&r, &line), -EFBIG);
	XT_EQ(r.lineno, 2);
	XT_EQ(xp_lines_next(&r, &line), -EBADF); /* stays failed: no tail as a line */
	xp_lines_free(&r);
	fclose(f);
}

static void test_lines_exact_limit(void)
{
	static const char data[] = "12345678\n";
	struct xp_lines r;
	char *line;
	FILE *f = from(data, sizeof(data) - 1);

	XT_REQUIRE(f);
	XT_EQ(xp_lines_init(&r, f, 8), 0);
	XT_EQ(xp_lines_next(&r, &line), 1);
	XT_CHECK(!strcmp(line, "12345678"));
	XT_EQ(xp_lines_next(&r, &line), 0);
	xp_lines_free(&r);
	fclose(f);
}

static void test_lines_nul(void)
{
	static const char data[] = "x\naction drop\0 udp dport 9\n";
	struct xp_lines r;
	char *line;
	FILE *f = from(data, sizeof(data) - 1);

	XT_REQUIRE(f);
	XT_EQ(xp_lines_init(&r, f, 64), 0);
	XT_EQ(xp_lines_next(&r, &line), 1);
	XT_EQ(xp_lines_next(&r, &line), -EILSEQ);
	XT_EQ(r.lineno, 2);
	xp_lines_free(&r);
	fclose(f);
}

static void test_lines_dir(void)
{
	struct xp_lines r;
	char *line;
	FILE *f = fopen("/", "r");

	XT_REQUIRE(f);
	XT_EQ(xp_lines_init(&r, f, 64), 0);
	XT_EQ(xp_lines_next(&r, &line), -EISDIR);
	xp_lines_free(&r);
	fclose(f);
}

int main(void)
{
	XT_RUN(test_u64);
	XT_RUN(test_u32);
	XT_RUN(test_double);
	XT_RUN(test_lines);
	XT_RUN(test_lines_too_long);
	XT_RUN(test_lines_exact_limit);
	XT_RUN(test_lines_nul);
	XT_RUN(test_lines_dir);
	return xt_done();
}
