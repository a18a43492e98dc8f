/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * l3fwd's route file: IPv4 and IPv6 prefixes to ports, into two xpile LPM tables
 * (xpile/lpm.h, DIR-24-8). The format is DPDK examples/l3fwd's lpm_default_v4.cfg and
 * lpm_default_v6.cfg (`R<prefix>/<len> <port>`), so one file serves both programs, and
 * `route <prefix>/<len> <port>` reads better; '#' starts a comment. Both families in
 * one file. Every error is one line naming FILE:LINE, what is wrong and how to write
 * it; the caller exits 2 with it, before anything is attached.
 *
 * A header of static functions so that the example stays two files and builds with
 * one compiler line; only l3fwd.c includes it.
 */
#ifndef L3FWD_ROUTES_H
#define L3FWD_ROUTES_H

#include <arpa/inet.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <xpile/lpm.h>
#include <xpile/text.h>

struct routes {
	struct xp_lpm *v4;
	struct xp_lpm6 *v6;
	unsigned int n4, n6;
};

static int routes_err(char *err, size_t len, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static int routes_err(char *err, size_t len, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(err, len, fmt, ap);
	va_end(ap);
	return -EINVAL;
}

/* One route into the tables: 0, or -EINVAL with the line's message in @err. */
static int routes_add(struct routes *r, const char *where, const char *pfx, const char *port,
		      unsigned int nports, char *err, size_t errlen)
{
	char addr[INET6_ADDRSTRLEN + 1];
	const char *slash = strchr(pfx, '/');
	__u32 len, p;
	bool v6 = strchr(pfx, ':') != NULL;
	__u8 a6[16];
	__u32 a4, hop;
	int err_add;

	if (!slash || slash == pfx || (size_t)(slash - pfx) >= sizeof(addr))
		return routes_err(
			err, errlen,
			"%s: '%s' is not a prefix; write ADDR/LEN, e.g. 198.18.1.0/24 or 2001:2:0:1::/64",
			where, pfx);
	memcpy(addr, pfx, slash - pfx);
	addr[slash - pfx] = 0;
	if (xp_parse_u32(slash + 1, 0, v6 ? 128 : 32, &len))
		return routes_err(err, errlen, "%s: prefix length '%s' out of range; use 0..%u",
				  where, slash + 1, v6 ? 128 : 32);
	if (v6 ? inet_pton(AF_INET6, addr, a6) != 1 : inet_pton(AF_INET, addr, &a4) != 1)
		return routes_err(err, errlen, "%s: '%s' is not an %s address; write e.g. %s",
				  where, addr, v6 ? "IPv6" : "IPv4",
				  v6 ? "2001:2:0:1::" : "198.18.1.0");
	if (xp_parse_u32(port, 0, nports - 1, &p))
		return routes_err(err, errlen,
				  "%s: port '%s' is not one of the %u --iface given; use 0..%u",
				  where, port, nports, nports - 1);
	/* The same prefix twice is a typo (the second would silently win). */
	if (v6 ? !xp_lpm6_get(r->v6, a6, len, &hop) : !xp_lpm_get(r->v4, ntohl(a4), len, &hop))
		return routes_err(err, errlen,
				  "%s: %s already routed to port %u; delete one of the two lines",
				  where, pfx, hop);
	err_add = v6 ? xp_lpm6_add(r->v6, a6, len, p) : xp_lpm_add(r->v4, ntohl(a4), len, p);
	if (err_add)
		return routes_err(err, errlen, "%s: cannot add %s: %s; use fewer long prefixes",
				  where, pfx, strerror(-err_add));
	v6 ? r->n6++ : r->n4++;
	return 0;
}

/*
 * Reads @path into the tables of @r (created by the caller). 0, or -EINVAL / -errno
 * with one line in @err: "FILE:LINE: what; how to fix".
 */
static int routes_load(struct routes *r, const char *path, unsigned int nports, char *err,
		       size_t errlen)
{
	struct xp_lines lr;
	char where[300], *line;
	int rc;
	FILE *f;

	f = fopen(path, "r");
	if (!f) {
		rc = -errno;
		routes_err(err, errlen, "%s: %s; give an existing route file", path, strerror(-rc));
		return rc;
	}
	rc = xp_lines_init(&lr, f, 510);
	while (!rc && (rc = xp_lines_next(&lr, &line)) == 1) {
		char *pfx, *port, *extra, *hash, *save;

		snprintf(where, sizeof(where), "%s:%u", path, lr.lineno);
		hash = strchr(line, '#');
		if (hash)
			*hash = 0;
		pfx = strtok_r(line, " \t", &save);
		rc = 0;
		if (!pfx)
			continue;
		if (!strcmp(pfx, "route"))
			pfx = strtok_r(NULL, " \t", &save);
		else if (pfx[0] == 'R')
			pfx++; /* DPDK's R<prefix> */
		else
			pfx = NULL;
		port = pfx ? strtok_r(NULL, " \t", &save) : NULL;
		extra = port ? strtok_r(NULL, " \t", &save) : NULL;
		if (!pfx || !*pfx || !port || extra)
			rc = routes_err(
				err, errlen,
				"%s: not a route; write 'route PREFIX/LEN PORT' (or DPDK's 'RPREFIX/LEN PORT'), e.g. 'route 198.18.1.0/24 1'",
				where);
		else
			rc = routes_add(r, where, pfx, port, nports, err, errlen);
	}
	if (rc < 0 && rc != -EINVAL)
		routes_err(err, errlen, "%s:%u: %s; one route per line, plain text", path,
			   lr.lineno,
			   rc == -EFBIG	 ? "line too long" :
			   rc == -EILSEQ ? "NUL byte" :
					   strerror(-rc));
	xp_lines_free(&lr);
	(void)fclose(f); /* read only: nothing to lose */
	if (rc > 0)
		rc = 0;
	if (!rc && !r->n4 && !r->n6)
		rc = routes_err(err, errlen,
				"%s: no routes; add lines like 'route 198.18.1.0/24 1'", path);
	return rc;
}

/*
 * DPDK's default table shape: 198.18.P.0/24 -> port P, and for IPv6 the benchmarking
 * range (RFC 5180) 2001:2:0:P::/64 -> port P.
 */
static int routes_default(struct routes *r, unsigned int nports)
{
	for (unsigned int p = 0; p < nports; p++) {
		__u8 a6[16] = { 0x20, 0x01, 0x00, 0x02, 0, 0, 0, (__u8)p };
		int rc;

		rc = xp_lpm_add(r->v4, 0xc6120000u | p << 8, 24, p);
		rc = rc ?: xp_lpm6_add(r->v6, a6, 64, p);
		if (rc)
			return rc;
		r->n4++, r->n6++;
	}
	return 0;
}

#endif
