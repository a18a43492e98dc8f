/* SPDX-License-Identifier: BSD-3-Clause */
/* xpile-bench lpm: what lpm.c, lpm_nl.c and lpm_dpdk.c share. */
#ifndef XPILE_BENCH_LPM_H
#define XPILE_BENCH_LPM_H

#include <stdbool.h>
#include <linux/types.h>

#include "xpile/mem.h"

struct route4 {
	__u32 addr;
	__u8 depth;
};

enum lpm_dist { DIST_RANDOM = 1, DIST_BGP = 2 };

/* @n distinct IPv4 prefixes of @dist (seeded, so every run has the same ones), none
 * under 0/8, 127/8, 198.18/15 or 224/3; malloc'd. */
struct route4 *lpm_bench_routes4(__u32 n, enum lpm_dist dist, __u64 seed);
/* Groups (tbl8s) a DIR-24-8 table needs for @r: the /24s holding a longer prefix. */
__u32 lpm_bench_groups4(const struct route4 *r, __u32 n);
const char *lpm_bench_dist_name(enum lpm_dist d);

/* The DPDK side (Debian libdpdk-dev); stubs without it. */
bool lpm_dpdk_available(void);
int lpm_dpdk_init(__u64 bytes);
/* rte_lpm of @r (hop i & 0xffffff), *out the table. -1 on failure (printed). */
int lpm_dpdk_load4(const struct route4 *r, __u32 n, __u32 tbl8s, void **out, double *ms);
/* ns per lookup of @n addresses: single rte_lpm_lookup, bulk of 32, lookupx4. */
double lpm_dpdk_single4(void *t, const __u32 *a, __u32 n, __u64 *sum);
double lpm_dpdk_bulk4(void *t, const __u32 *a, __u32 n, __u64 *sum);
double lpm_dpdk_x4(void *t, const __u32 *a, __u32 n, __u64 *sum);
void lpm_dpdk_free4(void *t);
/* rte_lpm6 of @n prefixes (16 bytes each) and depths. */
int lpm_dpdk_load6(const __u8 (*a)[16], const __u8 *depth, __u32 n, __u32 tbl8s, void **out,
		   double *ms);
double lpm_dpdk_bulk6(void *t, const __u8 (*a)[16], __u32 n, __u64 *sum);
void lpm_dpdk_free6(void *t);

struct lpm_nl_args {
	const __u32 *routes;
	__u32 nroutes;
	__u32 changes, budget;
	bool inplace, dbl;
	enum xp_hugepages hp;
};

/* xpile-bench lpm --netlink: the mirror against `ip -batch` in a namespace of its
 * own (lpm_nl.c). */
int lpm_bench_netlink(const struct lpm_nl_args *a);

#endif
