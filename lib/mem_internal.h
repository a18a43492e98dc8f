/* SPDX-License-Identifier: BSD-3-Clause */
/* Shared by lib/mem.c and lib/arena.c: memfd mappings, NUMA bind, sysfs numbers. */
#ifndef XPILE_MEM_INTERNAL_H
#define XPILE_MEM_INTERNAL_H

#include <linux/types.h>
#include <stdbool.h>

/* A long from a sysfs/procfs file, @dflt when it cannot be read. */
long xp_read_long(const char *path, long dflt);
/* Maps a new memfd of @size bytes (2 MiB hugetlb if @huge) shared; @noreserve: no hugetlb
 * reservation at mmap (pages come from fallocate() later). 0 or a negative errno. */
int xp_memfd_map(__u64 size, bool huge, bool noreserve, void **base, int *fd);
/* mbind(MPOL_BIND) of [base, base + size) to @node: 0 or a negative errno. */
int xp_mem_bind(void *base, __u64 size, int node);

#endif
