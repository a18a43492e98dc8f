/* SPDX-License-Identifier: BSD-3-Clause */
/* Backends of the pile allocator (lib/pile.c); not installed. */
#ifndef XPILE_POOL_INTERNAL_H
#define XPILE_POOL_INTERNAL_H

#include <linux/types.h>

/*
 * Bounded MPMC ring of handles, DPDK ring_mp_mc style: producers reserve slots with
 * one CAS on prod.head, copy, then publish in order through prod.tail; consumers
 * likewise. Holds at most cap handles (exact, not rounded to a power of two).
 */
struct xp_ring;

int xp_ring_create(__u32 cap, struct xp_ring **out);
void xp_ring_destroy(struct xp_ring *r);
/* All or nothing: 0, or -ENOSPC (enqueue) / -ENOBUFS (dequeue) and nothing moved. */
int xp_ring_enqueue(struct xp_ring *r, const __u64 *objs, __u32 n);
int xp_ring_dequeue(struct xp_ring *r, __u64 *objs, __u32 n);
/* Quiescent views: the count, and the i-th queued handle (0 = next out). */
__u32 xp_ring_count(const struct xp_ring *r);
__u64 xp_ring_peek(const struct xp_ring *r, __u32 i);

#endif
