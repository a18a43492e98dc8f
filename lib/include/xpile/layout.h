/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * UMEM layout (frame placement, descriptor addresses) and the M3 per-core fill order.
 *
 * A power-of-two frame stride (2048, 4096) puts every packet header at the same
 * offset modulo the stride, so all headers crowd into a few L1/L2 sets and, with
 * fine-grained channel interleaving, onto one DRAM channel. The interleaved layout
 * pads the stride to a whole number of cache lines that shares no factor with
 * channels x ranks (as DPDK pads mempool objects), so consecutive frames' header
 * lines walk every channel and every cache set. The UMEM is then registered in
 * unaligned-chunk mode; descriptors coming back carry the data offset in their
 * upper bits, which xp_layout_handle() strips.
 *
 * Frames never straddle a backing page (zero copy rejects a frame crossing pages
 * it cannot see as contiguous): on 2 MiB pages they pack at the stride and a page
 * ends where the next frame would not fit; on 4 KiB pages a 2048..4096-byte frame
 * fits once per page, at an offset rotating from page to page (see docs/layout.md
 * for the frames-per-MiB cost).
 *
 * Frame i's handle is xp_layout_frame(l, i), a byte offset into the UMEM; the
 * fill ring takes handles as they are; RX and completion addresses go through
 * xp_layout_handle() before the frame returns to a pool, and xp_layout_data()
 * says where the packet bytes are.
 */
#ifndef XPILE_LAYOUT_H
#define XPILE_LAYOUT_H

#include <linux/if_xdp.h>
#include <linux/types.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "xpile/api.h"
#include "xpile/opts.h"
#include "xpile/mem.h" /* XP_PAGE_*: the backing pages a layout respects */
#include "xpile/topology.h"

#ifdef __cplusplus
extern "C" {
#endif

#define XP_CACHE_LINE 64
/* The kernel reserves this much in front of every received packet (XDP_PACKET_HEADROOM). */
#define XP_XDP_HEADROOM 256
enum xp_layout_kind {
	XP_LAYOUT_INTERLEAVED = 0, /* padded stride, unaligned-chunk UMEM (default) */
	XP_LAYOUT_ALIGNED = 1, /* classic power-of-two chunks, aligned UMEM */
};

/* Ignore page boundaries and pack frames at the stride: copy mode only. */
#define XP_LAYOUT_F_PACK (1u << 0)

struct xp_layout_opts {
	size_t sz; /* sizeof(struct xp_layout_opts); the rule: xpile/opts.h */
	__u32 frame_size; /* chunk size, 2048..4096 (default 2048) */
	__u32 headroom; /* UMEM headroom given to XDP_UMEM_REG (default 0) */
	__u32 nframes; /* frames wanted (required) */
	enum xp_layout_kind kind; /* default XP_LAYOUT_INTERLEAVED */
	struct xp_topology topo;
	__u32 page_size; /* backing page size, xp_mem.page_size (default 4096) */
	__u32 stride; /* interleaved stride in bytes, 0 = computed */
	__u32 flags; /* XP_LAYOUT_F_* */
};
#define xp_layout_opts__last_field flags

/* A computed layout. ABI: the inline address helpers below read it (and its topo)
 * in place in callers, so the layout is frozen for libxpile.so.0 (tests/unit/test_abi.c). */
struct xp_layout {
	enum xp_layout_kind kind;
	__u32 frame_size; /* bytes a frame owns, = chunk_size */
	__u32 chunk_size; /* for XDP_UMEM_REG / xsk_umem_config.frame_size */
	__u32 umem_flags; /* for XDP_UMEM_REG / xsk_umem_config.flags */
	__u32 headroom; /* for XDP_UMEM_REG / xsk_umem_config.frame_headroom */
	__u32 data_off; /* packet start from the frame handle on RX: headroom + 256 */
	__u32 nframes;
	__u32 stride; /* bytes between consecutive frames within a page */
	__u32 page_size; /* backing page size the layout respects */
	__u32 frames_per_page; /* frames in one backing page (~0u with XP_LAYOUT_F_PACK) */
	__u32 rot_lines; /* page p's first frame sits (p % rot_lines) lines in */
	__u64 area_size; /* bytes to allocate and register (page multiple) */
	struct xp_topology topo;
	/* M3 header-line classes: lcm(L1 sets, interleave lines x channels x ranks);
	 * 0 (xp_layout_disperse() then leaves the order as it is) beyond
	 * XP_M3_CHANNELS_MAX channels x ranks, more than 64 classes per channel or a
	 * non-power-of-two interleave. */
	__u32 m3_classes;
	__u64 m3_magic; /* ~0 / m3_classes + 1: line % m3_classes without a divide */
	__u64 m3_chinv; /* ceil(2^32 / (channels x ranks)): class / channels, no divide */
};

/* Dispersal limits: at most 64 classes per channel and 64 channels x ranks. */
#define XP_M3_CLASSES_MAX 4096u
#define XP_M3_CHANNELS_MAX 64u

/*
 * Computes the layout of @o->nframes frames into @out (caller-owned, no resources
 * held: copy it freely). 0, or -EINVAL with the offending field named through the
 * log hook (frame size, page size, stride, topology, too many frames, opts rule).
 */
XP_API int xp_layout_compute(const struct xp_layout_opts *o, struct xp_layout *out);

/* Smallest stride in lines >= @min_lines that is odd and prime to channels*ranks
 * (the interleaved layout's rule, for callers that pick their own). */
XP_API __u32 xp_layout_stride_lines(__u32 min_lines, __u32 channels, __u32 ranks);

/* Handle (UMEM offset of the frame start) of frame @i < l->nframes. */
static inline __u64 xp_layout_frame(const struct xp_layout *l, __u32 i)
{
	__u32 page = i / l->frames_per_page;
	__u32 k = i - page * l->frames_per_page;

	return (__u64)page * l->page_size + (__u64)(page % l->rot_lines) * XP_CACHE_LINE +
	       (__u64)k * l->stride;
}

/* Frame handle of an address from the RX or completion ring. */
static inline __u64 xp_layout_handle(const struct xp_layout *l, __u64 addr)
{
	if (l->umem_flags & XDP_UMEM_UNALIGNED_CHUNK_FLAG)
		return addr & XSK_UNALIGNED_BUF_ADDR_MASK;
	return addr & ~(__u64)(l->chunk_size - 1);
}

/* UMEM offset of the packet bytes an RX (or TX) descriptor address points to. */
static inline __u64 xp_layout_data(const struct xp_layout *l, __u64 addr)
{
	if (l->umem_flags & XDP_UMEM_UNALIGNED_CHUNK_FLAG)
		return (addr & XSK_UNALIGNED_BUF_ADDR_MASK) +
		       (addr >> XSK_UNALIGNED_BUF_OFFSET_SHIFT);
	return addr;
}

/* Pointer to the packet bytes, given the UMEM base. */
static inline void *xp_layout_ptr(const struct xp_layout *l, void *umem_base, __u64 addr)
{
	return (char *)umem_base + xp_layout_data(l, addr);
}

/*
 * TX descriptor address for packet bytes @off bytes into frame @handle. In
 * unaligned mode the offset rides in the upper bits, so the completion ring hands
 * back an address xp_layout_handle() maps to the frame start.
 */
static inline __u64 xp_layout_tx_addr(const struct xp_layout *l, __u64 handle, __u32 off)
{
	if (l->umem_flags & XDP_UMEM_UNALIGNED_CHUNK_FLAG)
		return handle | ((__u64)off << XSK_UNALIGNED_BUF_OFFSET_SHIFT);
	return handle + off;
}

/*
 * Index of the frame containing UMEM offset @addr (any address from a ring,
 * upper bits included); -EINVAL if @addr is in no frame. Cold: for debug checks.
 */
XP_API int xp_layout_frame_index(const struct xp_layout *l, __u64 addr, __u32 *idx);

/*
 * Header-line spread: counts, for the first @n frames of @l in index order (all
 * when @n is 0), how many first-lines-after-headroom land in each bin. @what is
 * one of the XP_SPREAD_* below; @bins must hold xp_layout_spread_bins() entries.
 * Offsets are UMEM offsets: on 2 MiB pages the low 21 bits match physical ones.
 */
enum xp_spread {
	XP_SPREAD_CH64, /* channel at 64 B interleave */
	XP_SPREAD_CH256, /* channel at 256 B interleave */
	XP_SPREAD_CH4K, /* channel at 4 KiB interleave */
	XP_SPREAD_L1, /* L1D set */
	XP_SPREAD_L2, /* L2 set */
};
/* Bins of dimension @what for @l (channels x ranks, L1 or L2 sets); 0 if unknown. */
XP_API __u32 xp_layout_spread_bins(const struct xp_layout *l, enum xp_spread what);
/* Bin (0..xp_layout_spread_bins()-1) of UMEM offset @addr in dimension @what. */
XP_API __u32 xp_spread_bin(const struct xp_layout *l, enum xp_spread what, __u64 addr);
/* Fills @bins as above: 0, or -EINVAL (unknown @what, NULL @bins); n > nframes = all. */
XP_API int xp_layout_spread(const struct xp_layout *l, enum xp_spread what, __u32 n, __u32 *bins);

/*
 * Text report of both the header-line spread over channels (64 B, 256 B, 4 KiB)
 * and over L1/L2 sets for @l: min/max/empty bins per dimension. Prints to @f.
 * 0 or -ENOMEM.
 */
XP_API int xp_layout_report(const struct xp_layout *l, FILE *f);

/*
 * M3 fill order. Writes the l->nframes handles to @handles_out in the order a pool
 * should hand them out. A frame's class is its header line modulo one L1 period
 * (a whole number of channel rounds); each round deals the next frame, in address
 * order, of every class, channel changing fastest, so any run of consecutive
 * handles covers channels and L1 sets within +-1 of uniform, and L2 sets too
 * (rounds in address order walk the L2 period). A container is the run of rounds
 * that covers every L2 set once. Core c's initial fill is the slice
 * xp_layout_core_slice() gives. @seed != 0 shuffles whole containers (M3 random
 * dispersal over DRAM rows and banks) and keeps channel and L1 evenness.
 * @handles_out holds l->nframes entries. 0, -EINVAL (@ncores 0, NULL @handles_out,
 * a layout not from xp_layout_compute(), over 2^20 classes) or -ENOMEM.
 */
XP_API int xp_layout_fill_order(const struct xp_layout *l, __u32 ncores, __u64 seed,
				__u64 *handles_out);
/*
 * M3 dispersal of one refill: reorders @h[0..n) in place, as the fill order deals,
 * before the handles go to a fill ring. Channels are dealt round-robin (0, 1, ..,
 * skipping a channel whose handles are used up); each channel's turn takes its
 * next header-line class round-robin in ascending class order (the next L1 set of
 * that channel), skipping exhausted classes. So every k-handle prefix holds each
 * of the C channels present floor(k/C) or ceil(k/C) times while all of them
 * still have handles left, and once one runs out the others stay within 1 of
 * each other
 * (the best any order of the same handles can do; which handles a refill gets is
 * the cache's business: xpile/deal.h picks them channel-even). Same inside each channel for its classes. @rng != NULL
 * (splitmix64 state, advanced) takes the members of a class in random order: M3's
 * dispersal over DRAM rows and banks, same histograms. Works in chunks of
 * XP_DISPERSE_MAX; per-batch cost, measured in docs/layout.md. Handles must be
 * frame handles of @l (xp_layout_handle() of ring addresses). Allocates nothing and
 * cannot fail; with m3_classes 0 it leaves @h as it is.
 */
#define XP_DISPERSE_MAX 256u
XP_API void xp_layout_disperse(const struct xp_layout *l, __u64 *h, __u32 n, __u64 *rng);
/* Header-line class (0..m3_classes-1, which must be non-zero) of frame handle @h:
 * what the dispersal deals by. */
static inline __u32 xp_layout_m3_class(const struct xp_layout *l, __u64 h)
{
	__u64 line = (h + l->data_off) / XP_CACHE_LINE;

	if (__builtin_expect(line >> 32, 0))
		return (__u32)(line % l->m3_classes);
	/* Lemire's fastmod: exact for 32-bit numerators. */
	return (__u32)(((unsigned __int128)(l->m3_magic * line) * l->m3_classes) >> 64);
}
/* Channel (0..channels*ranks-1) a header-line class belongs to. */
static inline __u32 xp_layout_m3_channel(const struct xp_layout *l, __u32 cls)
{
	return cls / (l->topo.interleave / XP_CACHE_LINE) % (l->topo.channels * l->topo.ranks);
}

/* Slice [*first, *first + *count) of the fill order that core @core starts with. */
XP_API void xp_layout_core_slice(const struct xp_layout *l, __u32 ncores, __u32 core, __u32 *first,
				 __u32 *count);

#ifdef __cplusplus
}
#endif

#endif /* XPILE_LAYOUT_H */
