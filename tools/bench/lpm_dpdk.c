// SPDX-License-Identifier: BSD-3-Clause
/*
 * The DPDK side of xpile-bench lpm: rte_lpm and rte_lpm6 loaded with the same routes
 * and looked up with the same addresses as xp_lpm, in the same run. Built only when
 * the Makefile finds libdpdk (XPILE_HAVE_DPDK: Debian's libdpdk-dev); otherwise stubs.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "benchutil.h"
#include "lpm_bench.h"

#ifdef XPILE_HAVE_DPDK
#include <rte_errno.h>
#include <rte_lpm.h>
#include <rte_lpm6.h>

bool lpm_dpdk_available(void)
{
	return true;
}

int lpm_dpdk_init(__u64 bytes)
{
	return bench_dpdk_eal_init("lpm", (size_t)(bytes >> 20) + 256);
}

int lpm_dpdk_load4(const struct route4 *r, __u32 n, __u32 tbl8s, void **out, double *ms)
{
	static unsigned int seq;
	struct rte_lpm_config c = { .max_rules = n + 16, .number_tbl8s = tbl8s };
	char name[32];
	struct rte_lpm *t;
	double t0;

	snprintf(name, sizeof(name), "xpb%u", seq++);
	t = rte_lpm_create(name, SOCKET_ID_ANY, &c);
	if (!t) {
		fprintf(stderr, "xpile-bench lpm: rte_lpm_create: %s\n", rte_strerror(rte_errno));
		return -1;
	}
	t0 = bench_now_ns();
	for (__u32 i = 0; i < n; i++)
		if (rte_lpm_add(t, r[i].addr, r[i].depth, i & 0xffffff) < 0) {
			fprintf(stderr, "xpile-bench lpm: rte_lpm_add: route %u refused\n", i);
			rte_lpm_free(t);
			return -1;
		}
	*ms = (bench_now_ns() - t0) / 1e6;
	*out = t;
	return 0;
}

double lpm_dpdk_single4(void *t, const __u32 *a, __u32 n, __u64 *sum)
{
	double t0 = bench_now_ns();
	__u64 s = 0;

	for (__u32 i = 0; i < n; i++) {
		__u32 h = 0;

		rte_lpm_lookup(t, a[i], &h);
		s += h;
	}
	*sum += s;
	return (bench_now_ns() - t0) / n;
}

double lpm_dpdk_bulk4(void *t, const __u32 *a, __u32 n, __u64 *sum)
{
	double t0 = bench_now_ns();
	__u32 h[32];
	__u64 s = 0;

	for (__u32 i = 0; i + 32 <= n; i += 32) {
		rte_lpm_lookup_bulk(t, a + i, h, 32);
		for (int k = 0; k < 32; k++)
			s += h[k];
	}
	*sum += s;
	return (bench_now_ns() - t0) / n;
}

double lpm_dpdk_x4(void *t, const __u32 *a, __u32 n, __u64 *sum)
{
	double t0 = bench_now_ns();
	__u32 h[4];
	__u64 s = 0;

	for (__u32 i = 0; i + 4 <= n; i += 4) {
		xmm_t ip = _mm_loadu_si128((const __m128i *)(a + i));

		rte_lpm_lookupx4(t, ip, h, 0);
		s += h[0] + h[1] + h[2] + h[3];
	}
	*sum += s;
	return (bench_now_ns() - t0) / n;
}

void lpm_dpdk_free4(void *t)
{
	rte_lpm_free(t);
}

int lpm_dpdk_load6(const __u8 (*a)[16], const __u8 *depth, __u32 n, __u32 tbl8s, void **out,
		   double *ms)
{
	static unsigned int seq;
	struct rte_lpm6_config c = { .max_rules = n + 16, .number_tbl8s = tbl8s };
	char name[32];
	struct rte_lpm6 *t;
	double t0;

	snprintf(name, sizeof(name), "xpb6_%u", seq++);
	t = rte_lpm6_create(name, SOCKET_ID_ANY, &c);
	if (!t) {
		fprintf(stderr, "xpile-bench lpm: rte_lpm6_create: %s\n", rte_strerror(rte_errno));
		return -1;
	}
	t0 = bench_now_ns();
	for (__u32 i = 0; i < n; i++)
		if (rte_lpm6_add(t, a[i], depth[i], i & 0xffffff) < 0) {
			fprintf(stderr, "xpile-bench lpm: rte_lpm6_add: route %u refused\n", i);
			rte_lpm6_free(t);
			return -1;
		}
	*ms = (bench_now_ns() - t0) / 1e6;
	*out = t;
	return 0;
}

double lpm_dpdk_bulk6(void *t, const __u8 (*a)[16], __u32 n, __u64 *sum)
{
	double t0 = bench_now_ns();
	int32_t h[32];
	__u64 s = 0;

	for (__u32 i = 0; i + 32 <= n; i += 32) {
		rte_lpm6_lookup_bulk_func(t, (uint8_t(*)[16])(uintptr_t)a[i], h, 32);
		for (int k = 0; k < 32; k++)
			s += (__u32)h[k];
	}
	*sum += s;
	return (bench_now_ns() - t0) / n;
}

void lpm_dpdk_free6(void *t)
{
	rte_lpm6_free(t);
}

#else

bool lpm_dpdk_available(void)
{
	return false;
}

int lpm_dpdk_init(__u64 bytes)
{
	return -1;
}

int lpm_dpdk_load4(const struct route4 *r, __u32 n, __u32 tbl8s, void **out, double *ms)
{
	return -1;
}

double lpm_dpdk_single4(void *t, const __u32 *a, __u32 n, __u64 *sum)
{
	return 0;
}

double lpm_dpdk_bulk4(void *t, const __u32 *a, __u32 n, __u64 *sum)
{
	return 0;
}

double lpm_dpdk_x4(void *t, const __u32 *a, __u32 n, __u64 *sum)
{
	return 0;
}

void lpm_dpdk_free4(void *t)
{
}

int lpm_dpdk_load6(const __u8 (*a)[16], const __u8 *depth, __u32 n, __u32 tbl8s, void **out,
		   double *ms)
{
	return -1;
}

double lpm_dpdk_bulk6(void *t, const __u8 (*a)[16], __u32 n, __u64 *sum)
{
	return 0;
}

void lpm_dpdk_free6(void *t)
{
}

#endif
