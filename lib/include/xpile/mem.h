/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Memory for UMEMs and region arenas: hugepage-backed, NUMA-bound, locked mappings,
 * and the host facts that choose them (a device's NUMA node, free hugepages). Every
 * mapping is MAP_SHARED of a memfd (MFD_HUGETLB | MFD_HUGE_2MB for 2 MiB pages), whose
 * fd xp_mem.fd keeps: another process given it (SCM_RIGHTS) maps the same pages.
 */
#ifndef XPILE_MEM_H
#define XPILE_MEM_H

#include <linux/types.h>
#include <stdbool.h>
#include <stddef.h>

#include "xpile/api.h"
#include "xpile/opts.h"

#ifdef __cplusplus
extern "C" {
#endif

#define XP_PAGE_4K 4096u
#define XP_PAGE_2M (2u << 20)

/* Backing memory for a UMEM or a region arena. */
enum xp_hugepages {
	XP_HUGE_AUTO = 0, /* 2 MiB pages if reserved, else 4 KiB with a warning */
	XP_HUGE_REQUIRE, /* -ENOMEM (with the sysctl to run) if not enough reserved */
	XP_HUGE_NEVER, /* 4 KiB pages */
};

struct xp_mem_opts {
	size_t sz; /* sizeof(struct xp_mem_opts); the rule: xpile/opts.h */
	__u64 size; /* bytes; rounded up to the page size used */
	enum xp_hugepages hugepages;
	bool bind_node; /* bind to numa_node with mbind(MPOL_BIND) */
	int numa_node; /* used when bind_node; -1 also means any */
	bool lock; /* mlock the area (counted against RLIMIT_MEMLOCK) */
	__u8 reserved_[3]; /* zero: the tail has no unnamed padding (xpile/opts.h) */
	/* Where the failure's reason goes, as one line, instead of the log hook: the
	 * errors and warnings of this call (a fallback's notice too). NULL: the hook. */
	char *errbuf;
	size_t errbuf_sz;
};
#define xp_mem_opts__last_field errbuf_sz

struct xp_mem {
	void *base;
	__u64 size; /* mapped bytes */
	__u32 page_size;
	bool hugepages;
	int numa_node; /* node bound, -1 if none */
	bool locked;
	int fd; /* the memfd behind the mapping (close-on-exec), closed by xp_mem_free() */
};

/*
 * Maps @o->size bytes (rounded up to the page size used) as @o asks: 2 MiB pages, or
 * 4 KiB ones (XP_HUGE_AUTO falls back with a warning naming the sysctl to run),
 * bound to a NUMA node, locked, and faulted in now rather than on the data path.
 * *@out describes the mapping and is the caller's to xp_mem_free(). -EINVAL (size 0,
 * the opts rule), -ENOMEM (XP_HUGE_REQUIRE and too few hugepages), or mmap's, mbind's
 * or mlock's negative errno; each logged with the fix.
 */
XP_API int xp_mem_alloc(const struct xp_mem_opts *o, struct xp_mem *out);
/* Unmaps what xp_mem_alloc() mapped, closes its memfd and clears @m->base (NULL or
 * freed twice is fine). */
XP_API void xp_mem_free(struct xp_mem *m);
/* NUMA node of @ifname's device: *node = 0.., or -1 (virtual device, no node). -ENODEV if no such interface. */
XP_API int xp_numa_node_of_ifname(const char *ifname, int *node);
/* Free 2 MiB hugepages the kernel holds now and has not promised to a mapping
 * (free - resv); 0 when sysfs cannot tell. */
XP_API long xp_hugepages_free(void);
/* The value for /proc/sys/vm/nr_hugepages that leaves @bytes more of 2 MiB pages free
 * (what `echo N > /proc/sys/vm/nr_hugepages` should say when they are missing). */
XP_API long xp_hugepages_wanted(__u64 bytes);

#ifdef __cplusplus
}
#endif

#endif /* XPILE_MEM_H */
