/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Quiescent-state-based reclamation (QSBR), DPDK rte_rcu_qsbr's model: how a writer
 * learns that no reader still holds what it replaced, while readers never lock and
 * never write a shared line on their fast path.
 *
 * A reader is a worker thread with a slot of its own (a cache line). Between two
 * bursts it holds no pointer into shared tables, and says so with
 * xp_qsbr_quiescent(): one load of the global generation and one store to its slot.
 * A writer that unpublished something (flipped a table, unlinked an entry) takes a
 * token with xp_qsbr_start() and may free or reuse it once xp_qsbr_check() is true
 * for that token: every reader online at that time has been quiescent since.
 * xp_qsbr_wait() waits for a token, xp_qsbr_synchronize() is start + wait. A reader that sleeps (the engine's idle
 * wait) goes offline first, so it never holds a writer up; it must not touch the
 * tables while offline.
 *
 * Threading contract
 * - xp_qsbr_register() / xp_qsbr_unregister() may be called from any thread at any
 *   time; the slot id is the reader's until it unregisters.
 * - xp_qsbr_quiescent(), xp_qsbr_offline() and xp_qsbr_online() on one slot are
 *   called by its reader thread only.
 * - xp_qsbr_start(), xp_qsbr_check() and xp_qsbr_synchronize() may be called from
 *   any thread, including concurrently; a reader must not wait for a grace period
 *   while it is online (it would wait for itself).
 * - A grace period is bounded by the longest time an online reader goes between two
 *   quiescent calls (one burst for a worker).
 *
 * Every function returns 0 or a negative errno; nothing prints.
 */
#ifndef XPILE_QSBR_H
#define XPILE_QSBR_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>

#include "xpile/api.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Most readers one xp_qsbr tracks. */
#define XP_QSBR_MAX_READERS 1024u

/* One reader's slot, on a line of its own: 0 offline, else the generation it saw. */
struct xp_qsbr_slot {
	__u64 seen;
	__u64 pad_[7];
};

/*
 * Public for the inline reader calls (ABI: gen, nslots and slot[] are read in place,
 * tests/unit/test_abi.c); treat it as opaque.
 */
struct xp_qsbr {
	__u64 gen __attribute__((aligned(64))); /* starts at 1, only grows */
	__u32 nslots;
	__u32 pad_;
	void *priv;
	struct xp_qsbr_slot slot[] __attribute__((aligned(64)));
};

/* A grace-period token from xp_qsbr_start(). */
typedef __u64 xp_qsbr_token;

/* Creates a tracker for up to @max_readers (1..XP_QSBR_MAX_READERS): -EINVAL, -ENOMEM. */
XP_API int xp_qsbr_create(__u32 max_readers, struct xp_qsbr **out);
/* Frees it (NULL is fine); no reader may use it any more. */
XP_API void xp_qsbr_destroy(struct xp_qsbr *q);
/* Takes a free slot into *@id, online and quiescent: -ENOSPC when all are taken. */
XP_API int xp_qsbr_register(struct xp_qsbr *q, __u32 *id);
/* Gives slot @id back (offline first): -EINVAL if it was not registered. */
XP_API int xp_qsbr_unregister(struct xp_qsbr *q, __u32 id);
/* A token for "everything unpublished before this call". */
XP_API xp_qsbr_token xp_qsbr_start(struct xp_qsbr *q);
/* True once every reader online when @t was taken has been quiescent or offline. */
XP_API bool xp_qsbr_check(struct xp_qsbr *q, xp_qsbr_token t);
/* Waits until xp_qsbr_check(@t) is true: spins about 20 us (a burst), then yields the
 * CPU, then sleeps in 20 us steps. */
XP_API void xp_qsbr_wait(struct xp_qsbr *q, xp_qsbr_token t);
/* xp_qsbr_wait(xp_qsbr_start()). */
XP_API void xp_qsbr_synchronize(struct xp_qsbr *q);

/* Reader @id holds no reference into shared tables now (call between bursts). */
static inline void xp_qsbr_quiescent(struct xp_qsbr *q, __u32 id)
{
	/* Release: every table read of the last burst is ordered before the store a
	 * writer's acquire load then sees. */
	__atomic_store_n(&q->slot[id].seen, __atomic_load_n(&q->gen, __ATOMIC_ACQUIRE),
			 __ATOMIC_RELEASE);
}

/* Reader @id stops reading (before it sleeps): writers stop waiting for it. */
static inline void xp_qsbr_offline(struct xp_qsbr *q, __u32 id)
{
	__atomic_store_n(&q->slot[id].seen, 0, __ATOMIC_RELEASE);
}

/* Reader @id reads again (after it woke). */
static inline void xp_qsbr_online(struct xp_qsbr *q, __u32 id)
{
	/* An exchange, a full barrier: this reader's next table reads come after its
	 * store is visible, so a writer that still saw the slot offline unpublished
	 * before them (Dekker with xp_qsbr_start and xp_qsbr_check). */
	(void)__atomic_exchange_n(&q->slot[id].seen, __atomic_load_n(&q->gen, __ATOMIC_ACQUIRE),
				  __ATOMIC_SEQ_CST);
}

#ifdef __cplusplus
}
#endif

#endif /* XPILE_QSBR_H */
