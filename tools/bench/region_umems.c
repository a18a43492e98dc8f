// SPDX-License-Identifier: BSD-3-Clause
/*
 * xpile-bench region --umems N: N UMEMs carved from one arena (xp_arena_*, what the
 * engine does) against N mappings of their own (xp_mem_alloc() each), every UMEM
 * registered with the kernel (XDP_UMEM_REG on its own AF_XDP socket, as a socket
 * group would). Start-up time is from the first call to the last registration; memory
 * is what the process gained: resident and mapped bytes (/proc/self/statm), mappings
 * (/proc/self/maps lines), fds, and bytes of pages behind them (the memfds' blocks;
 * hugetlb pages are not in RSS, so this is the figure that compares both).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "bench.h"
#include "benchutil.h"
#include "xpile/region.h"
#include "xpile/layout.h"
#include "xpile/mem.h"

struct mem_snap {
	__u64 vsz, rss; /* bytes */
	__u32 maps;
};

static void snap(struct mem_snap *s)
{
	unsigned long size = 0, res = 0;
	FILE *f = fopen("/proc/self/statm", "r");
	char line[512];

	if (f) {
		if (fscanf(f, "%lu %lu", &size, &res) != 2)
			size = res = 0;
		(void)fclose(f); /* read only: nothing to lose */
	}
	s->vsz = (__u64)size * 4096;
	s->rss = (__u64)res * 4096;
	s->maps = 0;
	f = fopen("/proc/self/maps", "r");
	while (f && fgets(line, sizeof(line), f))
		s->maps++;
	if (f)
		(void)fclose(f); /* read only: nothing to lose */
}

static __u64 fd_backed(int fd)
{
	struct stat st;

	return fstat(fd, &st) ? 0 : (__u64)st.st_blocks * 512;
}

static int umem_reg(void *base, __u64 len, int *sock)
{
	struct xdp_umem_reg reg = { .addr = (__u64)(unsigned long)base,
				    .len = len & ~2047ull,
				    .chunk_size = 2048 };

	*sock = socket(AF_XDP, SOCK_RAW | SOCK_CLOEXEC, 0);
	if (*sock < 0)
		return -errno;
	if (setsockopt(*sock, SOL_XDP, XDP_UMEM_REG, &reg, sizeof(reg)))
		return -errno;
	return 0;
}

struct umems_fig {
	double us;
	__u64 rss, vsz, backed;
	__u32 maps, fds;
};

/* One run: @arena or one mapping each. 0 or a negative errno (logged by the library). */
static int run_once(__u32 n, __u64 bytes, enum xp_hugepages hp, bool arena, struct umems_fig *f)
{
	struct xp_arena_opts ao = { .sz = sizeof(ao), .numa_node = -1, .hugepages = hp };
	struct xp_mem_opts mo = { .sz = sizeof(mo), .size = bytes, .hugepages = hp };
	struct xp_arena_buf *b = calloc(n, sizeof(*b));
	struct xp_mem *m = calloc(n, sizeof(*m));
	int *sock = calloc(n, sizeof(int)), err = 0;
	struct xp_arena *a = NULL;
	struct mem_snap s0, s1;
	double t0;
	__u32 i;

	if (!b || !m || !sock) {
		err = -ENOMEM;
		goto out;
	}
	for (i = 0; i < n; i++)
		sock[i] = -1;
	snap(&s0);
	t0 = bench_now_ns();
	ao.size = (__u64)n * bytes;
	if (arena)
		err = xp_arena_create(&ao, &a);
	for (i = 0; !err && i < n; i++) {
		void *base;
		__u64 len;

		if (arena) {
			err = xp_arena_alloc(a, bytes, 0, &b[i]);
			base = b[i].base;
			len = b[i].size;
		} else {
			err = xp_mem_alloc(&mo, &m[i]);
			base = m[i].base;
			len = m[i].size;
		}
		err = err ?: umem_reg(base, len, &sock[i]);
	}
	f->us = (bench_now_ns() - t0) / 1e3;
	snap(&s1);
	f->rss = s1.rss - s0.rss;
	f->vsz = s1.vsz - s0.vsz;
	f->maps = s1.maps - s0.maps;
	f->fds = arena ? 1 : n;
	f->backed = 0;
	for (i = 0; !err && i < n; i++)
		f->backed += arena ? 0 : fd_backed(m[i].fd);
	if (!err && arena)
		f->backed = fd_backed(xp_arena_mem(a)->fd);
out:
	for (i = 0; sock && i < n; i++)
		if (sock[i] >= 0)
			close(sock[i]);
	for (i = 0; m && b && i < n; i++) {
		if (arena && b[i].base)
			xp_arena_free(a, &b[i]);
		else if (!arena)
			xp_mem_free(&m[i]);
	}
	xp_arena_destroy(a);
	free(b);
	free(m);
	free(sock);
	return err;
}

int bench_region_umems(__u32 n, __u64 bytes, __u32 runs, enum xp_hugepages hp)
{
	struct umems_fig fa[101] = { 0 }, fm[101] = { 0 }; /* runs == 0 prints zeros */
	double ua[101], um[101];
	long hp0 = xp_hugepages_free();

	printf("# region --umems: %u UMEMs of %llu bytes, %s pages, each registered (XDP_UMEM_REG), "
	       "median of %u alternating runs, load %s\n",
	       n, (unsigned long long)bytes, hp == XP_HUGE_NEVER ? "4 KiB" : "2 MiB", runs,
	       bench_loadavg());
	for (__u32 r = 0; r < runs; r++)
		for (int k = 0; k < 2; k++) {
			bool arena = (k + r) % 2 == 0;
			int err = run_once(n, bytes, hp, arena, arena ? &fa[r] : &fm[r]);

			if (err) {
				fprintf(stderr, "xpile-bench region: %s run: %s\n",
					arena ? "arena" : "mappings", strerror(-err));
				return 1;
			}
			/* The kernel releases a registered UMEM from a work item: wait for its
			 * hugepages before the next run needs them. */
			for (int w = 0;
			     hp != XP_HUGE_NEVER && w < 1000 && xp_hugepages_free() < hp0; w++)
				usleep(5000);
			(arena ? ua : um)[r] = (arena ? fa : fm)[r].us;
		}
	printf("region umems=%u bytes=%llu page=%u arena_us=%.0f mappings_us=%.0f "
	       "arena_rss=%llu mappings_rss=%llu arena_backed=%llu mappings_backed=%llu "
	       "arena_vsz=%llu mappings_vsz=%llu arena_maps=%u mappings_maps=%u arena_fds=%u "
	       "mappings_fds=%u\n",
	       n, (unsigned long long)bytes, hp == XP_HUGE_NEVER ? XP_PAGE_4K : XP_PAGE_2M,
	       bench_median(ua, runs), bench_median(um, runs), (unsigned long long)fa[0].rss,
	       (unsigned long long)fm[0].rss, (unsigned long long)fa[0].backed,
	       (unsigned long long)fm[0].backed, (unsigned long long)fa[0].vsz,
	       (unsigned long long)fm[0].vsz, fa[0].maps, fm[0].maps, fa[0].fds, fm[0].fds);
	return 0;
}
