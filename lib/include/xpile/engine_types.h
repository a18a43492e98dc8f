/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The engine API's types (xpile/engine.h makes the engine, xpile/pkt.h has the calls):
 * the packet handle, the queue's public head with the inlines that read it, and the
 * callbacks' types. Declares no library function, so that code holding only these
 * types (the engine's own core) depends on none of the API's. The rules of the
 * handles, ownership and ABI are xpile/pkt.h's.
 */
#ifndef XPILE_ENGINE_TYPES_H
#define XPILE_ENGINE_TYPES_H

#include <stdbool.h>
#include <linux/types.h>
#include <linux/if_xdp.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Most handles one burst call takes or gives. */
#define XP_BURST_MAX 256u

/* Another buffer of the same packet follows this one (XDP_PKT_CONTD). */
#define XP_PKT_MORE (1u << 0)

struct xp_pkt {
	__u64 addr; /* UMEM address of the bytes (an unaligned UMEM's offset rides above) */
	__u32 len; /* bytes of this buffer */
	__u32 flags; /* XP_PKT_MORE; the rest are zero from the engine, keep them */
};

struct xp_worker; /* one pinned thread per core (opaque) */
struct xp_engine;

/*
 * One AF_XDP socket: queue @queue of port @port, owned by worker @worker. The fields
 * are public so that xp_pkt_data() is inline; treat them as read-only.
 */
struct xp_queue {
	void *umem_base; /* where its UMEM is mapped */
	__u32 umem_flags; /* XDP_UMEM_UNALIGNED_CHUNK_FLAG: addresses carry their offset */
	__u32 frame_size; /* bytes per frame */
	__u32 data_off; /* where a fresh frame's packet starts (headroom included) */
	__u32 queue; /* the interface's queue id */
	__u16 port; /* index into xp_engine_opts.ports */
	__u16 umem; /* its UMEM: frames move without a copy between queues of one UMEM */
	__u32 worker; /* id of its worker (xp_worker_id()) */
	__u32 index; /* its index in the engine (xp_engine_queue()): for per-queue state */
	__u32 reserved_[3];
};

/* The packet bytes of handle @p of queue @q (any queue of the same UMEM). */
static inline void *xp_pkt_data(const struct xp_queue *q, const struct xp_pkt *p)
{
	__u64 a = p->addr;

	if (q->umem_flags & XDP_UMEM_UNALIGNED_CHUNK_FLAG)
		a = (a & XSK_UNALIGNED_BUF_ADDR_MASK) + (a >> XSK_UNALIGNED_BUF_OFFSET_SHIFT);
	return (char *)q->umem_base + a;
}

/* Whether another buffer of @p's packet follows it in the burst. */
static inline bool xp_pkt_more(const struct xp_pkt *p)
{
	return p->flags & XP_PKT_MORE;
}

/* Bytes a buffer may hold from its address on (a TX packet's room after alloc). */
static inline __u32 xp_pkt_room(const struct xp_queue *q)
{
	return q->frame_size - q->data_off;
}

/* Callbacks, on each worker's own thread. */
/* Run-loop style: a burst of @n >= 1 packets received on @q; every handle must leave
 * through xpile/pkt.h's calls before it returns. */
typedef void (*xp_burst_fn)(struct xp_worker *w, struct xp_queue *q, struct xp_pkt *pkts, __u32 n,
			    void *arg);
/* Run-loop style, instead of a burst callback: one turn on @q, receiving (or sending,
 * txonly) itself; returns the packets it moved (0: idle). */
typedef __u32 (*xp_poll_fn)(struct xp_worker *w, struct xp_queue *q, void *arg);
/* Own-loop style: the worker's whole life (see above); its return value is ignored. */
typedef int (*xp_worker_fn)(struct xp_worker *w, void *arg);
/* Worker start and end (both styles): fini must leave nothing held. */
typedef void (*xp_worker_hook)(struct xp_worker *w, void *arg);

#ifdef __cplusplus
}
#endif

#endif /* XPILE_ENGINE_TYPES_H */
