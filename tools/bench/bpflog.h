/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Keeps the tail of what libbpf and libxdp say instead of printing it, so that a BPF
 * program which fails to load is shown with the last lines of its verifier log (libbpf
 * hands the log to its print hook as a warning) rather than a bare errno, and a
 * program which loads stays quiet (libxdp narrates its dispatcher fallback).
 *
 *   bpflog_capture();          before anything opens or loads a BPF object
 *   bpflog_dump(stderr, 30);   after a load failed: its last 30 lines
 *
 * Header-only (one buffer per file that uses it): xpile-bench and the tests (through
 * tests/lib/bpflog.h) share it.
 */
#ifndef BPFLOG_H
#define BPFLOG_H

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <bpf/libbpf.h>
#include <xdp/libxdp.h>

#define BPFLOG_KEEP 65536 /* bytes: the end of a verifier log is where the reason is */

static char bpflog_buf[BPFLOG_KEEP];
static size_t bpflog_len;

static inline void bpflog_add(const char *fmt, va_list ap)
{
	char *msg = NULL;
	int n = vasprintf(&msg, fmt, ap);
	size_t len;

	if (n < 0)
		return;
	len = (size_t)n;
	if (len >= BPFLOG_KEEP) { /* keep the message's end */
		memcpy(bpflog_buf, msg + len - BPFLOG_KEEP, BPFLOG_KEEP);
		bpflog_len = BPFLOG_KEEP;
	} else {
		if (bpflog_len + len > BPFLOG_KEEP) {
			size_t drop = bpflog_len + len - BPFLOG_KEEP;

			memmove(bpflog_buf, bpflog_buf + drop, bpflog_len - drop);
			bpflog_len -= drop;
		}
		memcpy(bpflog_buf + bpflog_len, msg, len);
		bpflog_len += len;
	}
	free(msg);
}

static inline int bpflog_libbpf(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	if (level != LIBBPF_DEBUG)
		bpflog_add(fmt, ap);
	return 0;
}

static inline int bpflog_libxdp(enum libxdp_print_level level, const char *fmt, va_list ap)
{
	if (level != LIBXDP_DEBUG)
		bpflog_add(fmt, ap);
	return 0;
}

static inline void bpflog_capture(void)
{
	bpflog_len = 0;
	libbpf_set_print(bpflog_libbpf);
	libxdp_set_print(bpflog_libxdp);
}

/* Prints the last @lines lines kept, each indented, under a heading. */
static inline void bpflog_dump(FILE *f, int lines)
{
	size_t start, end = bpflog_len;

	while (end && bpflog_buf[end - 1] == '\n')
		end--;
	start = end;
	while (start && lines) {
		start--;
		if (bpflog_buf[start] == '\n' && --lines == 0)
			start++;
	}
	if (start == end) {
		fprintf(f, "  (libbpf and libxdp said nothing)\n");
		return;
	}
	fprintf(f, "  last lines of the libbpf/libxdp log (verifier log included):\n");
	for (size_t i = start; i < end;) {
		size_t j = i;

		while (j < end && bpflog_buf[j] != '\n')
			j++;
		fprintf(f, "  | %.*s\n", (int)(j - i), bpflog_buf + i);
		i = j + 1;
	}
}

#endif /* BPFLOG_H */
