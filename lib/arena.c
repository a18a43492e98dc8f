// SPDX-License-Identifier: BSD-3-Clause
/*
 * Arena (see xpile/region.h): a memfd mapping that reserves address space only, and a
 * lazy iBuddy over its offsets. A carve is backed and mapped by one
 * madvise(MADV_POPULATE_WRITE), under the mapping's mbind() policy, which fails cleanly
 * when hugepages run short where touching a MAP_NORESERVE hugetlb mapping would raise
 * SIGBUS; kernels before 5.14 get fallocate() on the memfd, then a touch per page.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "log_internal.h"
#include "mem_internal.h"
#include "opts_internal.h"
#include "xpile/region.h"

#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23
#endif
#define XP_MPOL_BIND 2
#define XP_MAX_NODES 1024
#define XP_NODE_WORDS (XP_MAX_NODES / (8 * sizeof(unsigned long)))

struct xp_arena {
	struct xp_mem mem;
	struct xp_region *region;
	__u64 chunk;
	__u64 backed; /* atomic */
	bool require; /* XP_HUGE_REQUIRE: a carve without pages names the sysctl */
};

static __u64 pow2_up(__u64 v)
{
	return v <= 1 ? 1 : 1ull << (64 - __builtin_clzll(v - 1));
}

int xp_arena_create(const struct xp_arena_opts *opts, struct xp_arena **out)
{
	struct xp_region_opts ro = { .sz = sizeof(ro) };
	struct xp_arena_opts oc;
	const struct xp_arena_opts *o = &oc;
	struct xp_arena *a;
	__u64 per;
	bool huge;
	int err;

	if (!XP_OPTS_LOAD_LOG("arena", &oc, opts, xp_arena_opts))
		return -EINVAL;
	if (!out || !o->size) {
		xp_err("arena: NULL out pointer or a size of 0 bytes\n");
		return -EINVAL;
	}
	ro.chunk = o->chunk ? o->chunk : XP_PAGE_2M;
	ro.spaces = o->spaces ? o->spaces : 1;
	ro.algo = o->algo;
	huge = o->hugepages == XP_HUGE_REQUIRE ||
	       (o->hugepages == XP_HUGE_AUTO &&
		xp_hugepages_free() >= (long)((o->size + XP_PAGE_2M - 1) / XP_PAGE_2M));
	if (o->hugepages == XP_HUGE_AUTO && !huge)
		xp_warn("%ld free 2 MiB hugepages, %llu needed; using 4 KiB pages (reserve with: "
			"echo %ld > /proc/sys/vm/nr_hugepages)\n",
			xp_hugepages_free(),
			(unsigned long long)((o->size + XP_PAGE_2M - 1) / XP_PAGE_2M),
			xp_hugepages_wanted(o->size));
	if (ro.chunk < (huge ? XP_PAGE_2M : XP_PAGE_4K) || (ro.chunk & (ro.chunk - 1))) {
		xp_err("arena: chunk %llu is not a power of two of at least the %u-byte page\n",
		       (unsigned long long)ro.chunk, huge ? XP_PAGE_2M : XP_PAGE_4K);
		return -EINVAL;
	}
	per = pow2_up((o->size + ro.chunk * ro.spaces - 1) / (ro.chunk * ro.spaces));
	ro.size = per * ro.chunk * ro.spaces;
	a = calloc(1, sizeof(*a));
	if (!a)
		return -ENOMEM;
	a->chunk = ro.chunk;
	a->require = o->hugepages == XP_HUGE_REQUIRE;
	a->mem.numa_node = o->numa_node >= 0 ? o->numa_node : -1;
	err = xp_region_create(&ro, &a->region);
	if (err) {
		free(a);
		return err;
	}
	err = xp_memfd_map(ro.size, huge, true, &a->mem.base, &a->mem.fd);
	if (err) {
		xp_err("arena: memfd mapping of %llu bytes%s: %s\n", (unsigned long long)ro.size,
		       huge ? " of 2 MiB pages" : "", strerror(-err));
		xp_region_destroy(a->region);
		free(a);
		return err;
	}
	a->mem.size = ro.size;
	a->mem.page_size = huge ? XP_PAGE_2M : XP_PAGE_4K;
	a->mem.hugepages = huge;
	*out = a;
	return 0;
}

void xp_arena_destroy(struct xp_arena *a)
{
	if (!a)
		return;
	munmap(a->mem.base, a->mem.size);
	close(a->mem.fd);
	xp_region_destroy(a->region);
	free(a);
}

const struct xp_mem *xp_arena_mem(const struct xp_arena *a)
{
	return &a->mem;
}

__u64 xp_arena_backed(const struct xp_arena *a)
{
	return __atomic_load_n(&a->backed, __ATOMIC_RELAXED);
}

/*
 * fallocate() with the calling thread bound to @node: a hugetlb memfd allocates its
 * pages under the task's policy, not the mapping's (which mbind() set for shmem).
 */
static int fallocate_on(int fd, __u64 off, __u64 len, int node)
{
	unsigned long mask[XP_NODE_WORDS] = { 0 }, old[XP_NODE_WORDS] = { 0 };
	int mode = 0, err = 0, saved = -1;

	if (node >= 0) {
		if (!syscall(SYS_get_mempolicy, &mode, old, XP_MAX_NODES + 1, NULL, 0))
			saved = mode;
		mask[node / (8 * sizeof(unsigned long))] |= 1ul
							    << (node % (8 * sizeof(unsigned long)));
		if (syscall(SYS_set_mempolicy, XP_MPOL_BIND, mask, XP_MAX_NODES + 1))
			return -errno;
	}
	if (fallocate(fd, 0, (off_t)off, (off_t)len))
		err = -errno;
	if (saved >= 0)
		syscall(SYS_set_mempolicy, saved, old, XP_MAX_NODES + 1);
	return err;
}

int xp_arena_alloc(struct xp_arena *a, __u64 bytes, __u32 hint, struct xp_arena_buf *out)
{
	__u64 n, off, size;
	char *base;
	int err;

	if (!a || !out || !bytes)
		return -EINVAL;
	n = pow2_up((bytes + a->chunk - 1) / a->chunk);
	if (n > xp_region_space_chunks(a->region) ||
	    xp_region_alloc(a->region, (__u32)n, hint, &off)) {
		xp_err("arena: no free range of %llu bytes in the %llu-byte arena\n",
		       (unsigned long long)(n * a->chunk), (unsigned long long)a->mem.size);
		return -ENOMEM;
	}
	size = (bytes + a->mem.page_size - 1) & ~(__u64)(a->mem.page_size - 1);
	base = (char *)a->mem.base + off;
	/* Bind before the pages exist so they are born on the node. */
	if (a->mem.numa_node >= 0) {
		err = xp_mem_bind(base, size, a->mem.numa_node);
		if (err) {
			xp_err("arena: binding %llu bytes to NUMA node %d: %s\n",
			       (unsigned long long)size, a->mem.numa_node, strerror(-err));
			goto fail;
		}
	}
	err = madvise(base, size, MADV_POPULATE_WRITE) ? -errno : 0;
	if (err == -EINVAL) {
		err = fallocate_on(a->mem.fd, off, size, a->mem.numa_node);
		/* Map every page now rather than fault on the data path. */
		for (__u64 o = 0; !err && o < size; o += a->mem.page_size)
			((volatile char *)base)[o] = 0;
	}
	if (err) {
		/* What was populated before the shortage goes back. */
		fallocate(a->mem.fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, (off_t)off,
			  (off_t)size);
		if (a->mem.hugepages)
			xp_err("arena: %ld free 2 MiB hugepages, %llu needed; reserve them with: "
			       "echo %ld > /proc/sys/vm/nr_hugepages\n",
			       xp_hugepages_free(), (unsigned long long)(size / XP_PAGE_2M),
			       xp_hugepages_wanted(size));
		else
			xp_err("arena: backing %llu bytes: %s\n", (unsigned long long)size,
			       strerror(-err));
		err = -ENOMEM;
		goto fail;
	}
	__atomic_fetch_add(&a->backed, size, __ATOMIC_RELAXED);
	*out = (struct xp_arena_buf){ .base = base, .off = off, .size = size, .nchunks = (__u32)n };
	return 0;
fail:
	xp_region_free(a->region, off, (__u32)n);
	return err;
}

int xp_arena_free(struct xp_arena *a, struct xp_arena_buf *b)
{
	int err;

	if (!a || !b || !b->base || b->base != (char *)a->mem.base + b->off)
		return -EINVAL;
	err = xp_region_free(a->region, b->off, b->nchunks);
	if (err)
		return err;
	/* The pages go back now: a later carve of this range starts from zeroes. */
	fallocate(a->mem.fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, (off_t)b->off,
		  (off_t)b->size);
	__atomic_fetch_sub(&a->backed, b->size, __ATOMIC_RELAXED);
	b->base = NULL;
	return 0;
}
