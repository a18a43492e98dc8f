/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * AF_XDP sockets and rings over the kernel API (linux/if_xdp.h), without libxdp.
 *
 * One struct xp_umem registers a caller-provided area (any layout: aligned chunks or
 * unaligned chunks at a non power-of-two stride) on its first socket. Every further
 * socket binds with XDP_SHARED_UMEM and gets its own fill and completion rings, so a
 * frame received on one (interface, queue) can be sent on another without a copy.
 *
 * Threading: a socket's four rings are single-producer/single-consumer. The thread that
 * owns a socket is the only one that may touch its rings; the helpers below take no lock
 * and use one acquire load or release store per batch. Create and destroy sockets from one
 * thread (the UMEM keeps a plain reference count).
 *
 * Addresses: descriptors carry UMEM offsets; xpile/layout.h (xp_layout_handle(),
 * xp_layout_data(), xp_layout_tx_addr()) maps them to frames for either layout.
 */
#ifndef XPILE_XSK_H
#define XPILE_XSK_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/if_xdp.h>
#include <linux/types.h>

#include "xpile/api.h"
#include "xpile/opts.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Newer than Debian 12's linux-libc-dev (6.1); values are kernel ABI. */
#ifndef XDP_USE_SG
#define XDP_USE_SG (1 << 4)
#endif
#ifndef XDP_PKT_CONTD
#define XDP_PKT_CONTD (1 << 0)
#endif
#ifndef XDP_MAX_TX_SKB_BUDGET
#define XDP_MAX_TX_SKB_BUDGET 9 /* 6.15+: descriptors one copy-mode sendto() sends */
#endif
#ifndef SO_PREFER_BUSY_POLL
#define SO_PREFER_BUSY_POLL 69
#endif
#ifndef SO_BUSY_POLL_BUDGET
#define SO_BUSY_POLL_BUDGET 70
#endif

/* One mmap()ed ring. cached_* are this thread's private copies of the shared indices.
 * ABI: the ring helpers below run in callers and read it in place, as they do
 * struct xp_xsk's rings; both layouts are frozen for libxpile.so.0
 * (tests/unit/test_abi.c). Not the pool's ring (that one is internal). */
struct xp_ring {
	__u32 cached_prod;
	__u32 cached_cons;
	__u32 mask;
	__u32 size;
	__u32 *producer;
	__u32 *consumer;
	__u32 *flags;
	void *ring;
	void *map;
	size_t map_len;
};

struct xp_umem;

struct xp_umem_opts {
	size_t sz; /* sizeof(struct xp_umem_opts); the rule: xpile/opts.h */
	void *area; /* page-aligned, caller-owned, outlives the UMEM */
	__u64 size; /* bytes */
	__u32 chunk_size; /* frame stride; any value >= 2048 with XDP_UMEM_UNALIGNED_CHUNK_FLAG */
	__u32 headroom; /* bytes before the packet, on top of the kernel's XDP_PACKET_HEADROOM */
	__u32 flags; /* XDP_UMEM_UNALIGNED_CHUNK_FLAG */
	__u32 reserved_; /* zero: the tail has no unnamed padding (xpile/opts.h) */
	/* An AF_XDP socket to register the UMEM on, instead of one of our own (which
	 * takes CAP_NET_RAW): one that xpile-agent made for us on the node (its
	 * /xsk_socket). The UMEM owns it from then on, on failure too. Read when
	 * socket_given is set. */
	__s32 socket_fd;
	bool socket_given;
	__u8 reserved2_[3]; /* zero, likewise */
};
#define xp_umem_opts__last_field socket_given

enum xp_xsk_mode {
	XP_XSK_AUTO, /* zero-copy when the driver has it, else copy (kernel fallback) */
	XP_XSK_COPY,
	XP_XSK_ZEROCOPY, /* fail with -EOPNOTSUPP when the driver lacks it */
};

struct xp_xsk_opts {
	size_t sz; /* sizeof(struct xp_xsk_opts); the rule: xpile/opts.h */
	const char *ifname;
	__u32 queue;
	__u32 rx_size; /* ring entries, powers of two; 0 = 2048 */
	__u32 tx_size;
	__u32 fill_size; /* 0 = 2 * rx_size */
	__u32 comp_size; /* 0 = tx_size */
	enum xp_xsk_mode mode; /* ignored for sockets after the first: they inherit it */
	bool no_need_wakeup; /* need_wakeup is on unless set */
	bool multi_buffer; /* XDP_USE_SG; inherited likewise */
	bool busy_poll; /* SO_PREFER_BUSY_POLL + SO_BUSY_POLL(_BUDGET) */
	__u32 busy_poll_usecs; /* 0 = 20 */
	__u32 busy_poll_budget; /* 0 = 64 */
	/* Copy mode: descriptors one kick may send (XDP_MAX_TX_SKB_BUDGET, kernel 6.15+;
	 * 32..tx_size). 0 = the kernel's default (32). */
	__u32 tx_budget;
	/* tx_budget is a wish: a kernel that refuses it (before 6.15) keeps its 32. */
	bool tx_budget_optional;
	__u8 reserved_[7]; /* zero: the tail has no unnamed padding (xpile/opts.h) */
	/* A socket made elsewhere (xpile-agent's /xsk_socket) to use instead of making
	 * one, which takes CAP_NET_RAW: the xp_xsk owns it, on failure too (the UMEM's
	 * first socket is the UMEM's own: one given for it is closed). Read when
	 * socket_given is set. */
	__s32 socket_fd;
	/* Bind to this ifindex instead of looking ifname up: the interface is in the
	 * namespace the socket was made in (the node's), not ours; its queue count is
	 * then not checked here (the binding is). 0: look ifname up. */
	__s32 ifindex;
	bool socket_given;
	__u8 reserved2_[7]; /* zero, likewise */
};
#define xp_xsk_opts__last_field socket_given

/* A bound socket and its four rings. Read its fields, do not write them; ABI (see
 * struct xp_ring). */
struct xp_xsk {
	struct xp_ring rx;
	struct xp_ring tx;
	struct xp_ring fill;
	struct xp_ring comp;
	int fd;
	int ifindex;
	__u32 queue;
	bool zerocopy;
	bool need_wakeup;
	bool multi_buffer;
	bool owns_umem_fd;
	struct xp_umem *umem;
	char ifname[16];
};

/* Kernel XDP_STATISTICS, under the kernel's names. */
struct xp_xsk_stats {
	__u64 rx_dropped;
	__u64 rx_invalid_descs;
	__u64 tx_invalid_descs;
	__u64 rx_ring_full;
	__u64 rx_fill_ring_empty_descs;
	__u64 tx_ring_empty_descs;
};

/*
 * Registers @o->area (caller-owned, page-aligned, outliving the UMEM) as a UMEM on a
 * new AF_XDP socket that the first xp_xsk_create() binds. *@out is the caller's to
 * xp_umem_destroy(). -EINVAL (no area, size or chunk size; the opts rule), -EPERM,
 * -ENOMEM (locked-memory limit), or XDP_UMEM_REG's negative errno; logged with the fix.
 */
XP_API int xp_umem_create(const struct xp_umem_opts *o, struct xp_umem **out);
/* Frees the UMEM (NULL is fine; the area stays the caller's): 0, or -EBUSY while
 * sockets still use it (then nothing changes). */
XP_API int xp_umem_destroy(struct xp_umem *u);
/* The registration's size, chunk size and headroom, as given. */
XP_API __u64 xp_umem_size(const struct xp_umem *u);
XP_API __u32 xp_umem_chunk_size(const struct xp_umem *u);
XP_API __u32 xp_umem_headroom(const struct xp_umem *u);
/* Whether it was registered with XDP_UMEM_UNALIGNED_CHUNK_FLAG. */
XP_API bool xp_umem_unaligned(const struct xp_umem *u);
/* The caller's area given at creation. */
XP_API void *xp_umem_area(const struct xp_umem *u);

/*
 * Creates and binds a socket on ifname:queue. The first socket registers the UMEM on its
 * own fd; later ones share it. Errors: -ENODEV (no such interface), -EINVAL (queue out of
 * range or bad ring sizes), -EBUSY (queue already has a socket), -EOPNOTSUPP (zero-copy or
 * multi-buffer unsupported), -EPERM. The message logged names the cause and the fix.
 * Fields past an older caller's @o->sz read as zero (xpile/opts.h). *@out is the
 * caller's to xp_xsk_destroy(), before the UMEM's xp_umem_destroy().
 */
XP_API int xp_xsk_create(struct xp_umem *u, const struct xp_xsk_opts *o, struct xp_xsk **out);
/* Unmaps the rings, closes the socket (the kernel unbinds it) and frees @x (NULL is
 * fine); the UMEM loses one user. */
XP_API void xp_xsk_destroy(struct xp_xsk *x);
/* The kernel's XDP_STATISTICS into @out (the last three stay 0 before kernel 5.9):
 * 0 or -errno. */
XP_API int xp_xsk_stats(const struct xp_xsk *x, struct xp_xsk_stats *out);
/* Bytes of packet data one frame holds: chunk - headroom - XDP_PACKET_HEADROOM. */
XP_API __u32 xp_xsk_frame_room(const struct xp_umem *u);
/* Queues the interface has (RX), or a negative errno. */
XP_API int xp_ifname_rx_queues(const char *ifname);

/* ---- ring helpers (hot path) ---- */

/* Slot @idx (any u32: masked) of an address ring (fill, completion). */
static inline __u64 *xp_ring_addr(struct xp_ring *r, __u32 idx)
{
	return &((__u64 *)r->ring)[idx & r->mask];
}

/* Slot @idx (masked) of a descriptor ring (RX, TX). */
static inline struct xdp_desc *xp_ring_desc(struct xp_ring *r, __u32 idx)
{
	return &((struct xdp_desc *)r->ring)[idx & r->mask];
}

/* Producer side (fill, TX): how many of n slots are free, refreshing from the kernel. */
static inline __u32 xp_ring_prod_free(struct xp_ring *r, __u32 n)
{
	__u32 free_entries = r->size - (r->cached_prod - r->cached_cons);

	if (free_entries >= n)
		return free_entries;
	r->cached_cons = __atomic_load_n(r->consumer, __ATOMIC_ACQUIRE);
	return r->size - (r->cached_prod - r->cached_cons);
}

/* Reserves up to n slots; returns how many, the first index in *idx. */
static inline __u32 xp_ring_prod_reserve(struct xp_ring *r, __u32 n, __u32 *idx)
{
	__u32 free_entries = xp_ring_prod_free(r, n);

	if (n > free_entries)
		n = free_entries;
	*idx = r->cached_prod;
	r->cached_prod += n;
	return n;
}

/* Publishes everything reserved so far (descriptors written before the index). */
static inline void xp_ring_prod_submit(struct xp_ring *r)
{
	__atomic_store_n(r->producer, r->cached_prod, __ATOMIC_RELEASE);
}

/* Consumer side (RX, completion): peeks up to n entries; returns how many. */
static inline __u32 xp_ring_cons_peek(struct xp_ring *r, __u32 n, __u32 *idx)
{
	__u32 avail = r->cached_prod - r->cached_cons;

	if (avail == 0) {
		r->cached_prod = __atomic_load_n(r->producer, __ATOMIC_ACQUIRE);
		avail = r->cached_prod - r->cached_cons;
	}
	if (n > avail)
		n = avail;
	*idx = r->cached_cons;
	r->cached_cons += n;
	return n;
}

/* Hands peeked entries back to the kernel (after reading them). */
static inline void xp_ring_cons_release(struct xp_ring *r)
{
	__atomic_store_n(r->consumer, r->cached_cons, __ATOMIC_RELEASE);
}

/* Entries the producer has published and the consumer not yet released (racy view). */
static inline __u32 xp_ring_pending(const struct xp_ring *r)
{
	return __atomic_load_n(r->producer, __ATOMIC_ACQUIRE) -
	       __atomic_load_n(r->consumer, __ATOMIC_ACQUIRE);
}

/* The kernel asks for a wakeup (need_wakeup mode): kick TX, or wake RX for the fill ring. */
static inline bool xp_ring_needs_wakeup(const struct xp_ring *r)
{
	return __atomic_load_n(r->flags, __ATOMIC_RELAXED) & XDP_RING_NEED_WAKEUP;
}

/* Kicks the kernel to transmit (copy mode needs it for every batch of 32 or so): 0,
 * or -EAGAIN/-ENOBUFS/-EBUSY (transient: budget spent, completion ring full; retry)
 * or another -errno. */
XP_API int xp_xsk_kick_tx(struct xp_xsk *x);
/* Wakes the kernel to refill RX from the fill ring (need_wakeup set, or busy poll):
 * 0 (EAGAIN included) or -errno. */
XP_API int xp_xsk_wake_rx(struct xp_xsk *x);
/*
 * NAPI id the kernel has recorded for the socket's queue (SO_INCOMING_NAPI_ID), known
 * once a packet arrived. 0 means busy polling has nothing to run for this socket
 * (veth on recent kernels, drivers without NAPI ids): preferred busy poll then
 * changes nothing. 0 or -errno.
 */
XP_API int xp_xsk_napi_id(const struct xp_xsk *x, __u32 *id);

#ifdef __cplusplus
}
#endif

#endif /* XPILE_XSK_H */
