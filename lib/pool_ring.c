// SPDX-License-Identifier: BSD-3-Clause
/*
 * The ring backend of the pool: a bounded MPMC ring with the DPDK head/tail scheme,
 * so xpile-bench can compare the pile against the classic design with everything
 * else (cache, harness) identical. The ring is struct xp_mpmc: struct xp_ring is an
 * AF_XDP ring (xpile/xsk.h), a different thing.
 */
#include <errno.h>
#include <sched.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "pool_internal.h"

struct ring_ht {
	__u32 head;
	__u32 tail;
} __attribute__((aligned(64)));

struct xp_mpmc {
	struct ring_ht prod;
	struct ring_ht cons;
	__u32 cap;
	__u32 mask;
	__u64 slots[] __attribute__((aligned(64)));
};

int xp_mpmc_create(__u32 cap, struct xp_mpmc **out)
{
	__u64 size = 1;
	struct xp_mpmc *r;

	while (size < cap)
		size <<= 1;
	if (!cap || size > (1ull << 31))
		return -EINVAL;
	if (posix_memalign((void **)&r, 64, sizeof(*r) + size * sizeof(__u64)))
		return -ENOMEM;
	memset(r, 0, sizeof(*r));
	r->cap = cap;
	r->mask = (__u32)size - 1;
	*out = r;
	return 0;
}

void xp_mpmc_destroy(struct xp_mpmc *r)
{
	free(r);
}

/*
 * Waits for earlier reservations to publish: they are a copy away, unless preempted.
 * Acquire, so that our release of the tail also publishes their slot accesses: the
 * other side acquires only the latest tail.
 */
static void ring_wait_tail(__u32 *tail, __u32 pos)
{
	unsigned int spins = 0;

	while (__atomic_load_n(tail, __ATOMIC_ACQUIRE) != pos) {
		if (++spins & 1023)
			__builtin_ia32_pause();
		else
			sched_yield();
	}
}

/* Reserves n entries on one side: bias + other tail - own head of them are free. */
static int ring_reserve(struct xp_mpmc *r, struct ring_ht *me, const struct ring_ht *other, __u32 n,
			__u32 bias, __u32 *pos)
{
	__u32 old = __atomic_load_n(&me->head, __ATOMIC_RELAXED);

	for (;;) {
		/* Acquire: slots the other side released may be reused only after its reads/writes. */
		__u32 otail = __atomic_load_n(&other->tail, __ATOMIC_ACQUIRE);

		if (n > bias + otail - old)
			return -1;
		if (__atomic_compare_exchange_n(&me->head, &old, old + n, true, __ATOMIC_RELAXED,
						__ATOMIC_RELAXED)) {
			*pos = old;
			return 0;
		}
	}
}

int xp_mpmc_enqueue(struct xp_mpmc *r, const __u64 *objs, __u32 n)
{
	__u32 pos, idx, first;

	if (!n)
		return 0;
	if (ring_reserve(r, &r->prod, &r->cons, n, r->cap, &pos))
		return -ENOSPC;
	idx = pos & r->mask;
	first = r->mask + 1 - idx < n ? r->mask + 1 - idx : n;
	memcpy(&r->slots[idx], objs, first * sizeof(__u64));
	memcpy(&r->slots[0], objs + first, (n - first) * sizeof(__u64));
	ring_wait_tail(&r->prod.tail, pos);
	__atomic_store_n(&r->prod.tail, pos + n, __ATOMIC_RELEASE);
	return 0;
}

int xp_mpmc_dequeue(struct xp_mpmc *r, __u64 *objs, __u32 n)
{
	__u32 pos, idx, first;

	if (!n)
		return 0;
	if (ring_reserve(r, &r->cons, &r->prod, n, 0, &pos))
		return -ENOBUFS;
	idx = pos & r->mask;
	first = r->mask + 1 - idx < n ? r->mask + 1 - idx : n;
	memcpy(objs, &r->slots[idx], first * sizeof(__u64));
	memcpy(objs + first, &r->slots[0], (n - first) * sizeof(__u64));
	ring_wait_tail(&r->cons.tail, pos);
	__atomic_store_n(&r->cons.tail, pos + n, __ATOMIC_RELEASE);
	return 0;
}

/*
 * Consumer tail first: the producer tail read after it is never behind it (nothing is
 * dequeued before it is published), so the difference cannot wrap below zero; under
 * load it can count enqueues made into room freed after the first read, hence the
 * clamp to cap (exact at quiescence either way; xpile/pool.h: never above N).
 */
__u32 xp_mpmc_count(const struct xp_mpmc *r)
{
	__u32 c = __atomic_load_n(&r->cons.tail, __ATOMIC_ACQUIRE);
	__u32 n = __atomic_load_n(&r->prod.tail, __ATOMIC_ACQUIRE) - c;

	return n < r->cap ? n : r->cap;
}

__u64 xp_mpmc_peek(const struct xp_mpmc *r, __u32 i)
{
	return r->slots[(__atomic_load_n(&r->cons.tail, __ATOMIC_ACQUIRE) + i) & r->mask];
}
