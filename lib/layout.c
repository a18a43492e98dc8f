// SPDX-License-Identifier: BSD-3-Clause
/* UMEM frame layout: stride arithmetic, frame placement, header-line spread. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "layout_internal.h"
#include "log_internal.h"
#include "opts_internal.h"
#include "xpile/layout.h"

/*
 * Odd as well as prime to channels*ranks: cache set counts are powers of two, so an
 * odd stride in lines also walks every L1/L2 set (with 3 or 6 channels a 32-line
 * stride would otherwise pass the channel test and still pile into 2 L1 sets).
 */
__u32 xp_layout_stride_lines(__u32 min_lines, __u32 channels, __u32 ranks)
{
	__u32 ways = (channels ? channels : 1) * (ranks ? ranks : 1) * 2;
	__u32 s = min_lines ? min_lines : 1;

	while (xp_gcd64(s, ways) != 1)
		s++;
	return s;
}

static int is_pow2(__u64 x)
{
	return x && !(x & (x - 1));
}

int xp_layout_compute(const struct xp_layout_opts *opts, struct xp_layout *out)
{
	struct xp_layout l = { 0 };
	struct xp_layout_opts oc;
	const struct xp_layout_opts *o = &oc;
	__u32 flags;
	__u64 npages;

	if (!out) {
		xp_err("layout: NULL out pointer\n");
		return -EINVAL;
	}
	if (!XP_OPTS_LOAD_LOG("layout", &oc, opts, xp_layout_opts))
		return -EINVAL;
	flags = o->flags;
	l.kind = o->kind;
	l.frame_size = o->frame_size ? o->frame_size : 2048;
	l.headroom = o->headroom;
	l.nframes = o->nframes;
	l.topo = o->topo;
	l.page_size = o->page_size ? o->page_size : XP_PAGE_4K;
	xp_topology_resolve(&l.topo);

	if (l.kind != XP_LAYOUT_INTERLEAVED && l.kind != XP_LAYOUT_ALIGNED) {
		xp_err("layout: unknown kind %d\n", (int)l.kind);
		return -EINVAL;
	}
	if (!l.nframes) {
		xp_err("layout: nframes is 0\n");
		return -EINVAL;
	}
	/* The kernel's bounds on chunk_size (net/xdp/xdp_umem.c). */
	if (l.frame_size < 2048 || l.frame_size > XP_PAGE_4K || l.frame_size % XP_CACHE_LINE) {
		xp_err("layout: frame size %u must be a multiple of 64 in 2048..4096\n",
		       l.frame_size);
		return -EINVAL;
	}
	if (l.kind == XP_LAYOUT_ALIGNED && !is_pow2(l.frame_size)) {
		xp_err("layout: aligned frames must be 2048 or 4096 bytes, not %u\n", l.frame_size);
		return -EINVAL;
	}
	if (l.headroom + XP_XDP_HEADROOM >= l.frame_size) {
		xp_err("layout: headroom %u leaves no room for data in a %u-byte frame\n",
		       l.headroom, l.frame_size);
		return -EINVAL;
	}
	if (!is_pow2(l.page_size) || l.page_size < XP_PAGE_4K) {
		xp_err("layout: page size %u is not a power of two >= 4096\n", l.page_size);
		return -EINVAL;
	}
	if (l.topo.interleave % XP_CACHE_LINE || !is_pow2(l.topo.l1_sets) ||
	    !is_pow2(l.topo.l2_sets)) {
		xp_err("layout: topology needs a 64-byte multiple interleave and power-of-two "
		       "cache set counts\n");
		return -EINVAL;
	}
	/* The channel round (lines x channels x ranks) is a __u32 divisor below. */
	if ((__u64)l.topo.channels * l.topo.ranks > 1024 || l.topo.interleave > (1u << 20)) {
		xp_err("layout: %u channels x %u ranks, %u-byte interleave: at most 1024 "
		       "channels x ranks and a 1 MiB interleave\n",
		       l.topo.channels, l.topo.ranks, l.topo.interleave);
		return -EINVAL;
	}
	l.chunk_size = l.frame_size;
	l.data_off = l.headroom + XP_XDP_HEADROOM;
	l.rot_lines = 1;

	if (l.kind == XP_LAYOUT_ALIGNED) {
		l.stride = l.frame_size;
		l.frames_per_page = l.page_size / l.frame_size;
		l.umem_flags = 0;
	} else {
		l.umem_flags = XDP_UMEM_UNALIGNED_CHUNK_FLAG;
		if (o->stride) {
			if (o->stride % XP_CACHE_LINE || o->stride < l.frame_size) {
				xp_err("layout: stride %u must be a multiple of 64 and >= the "
				       "frame size %u\n",
				       o->stride, l.frame_size);
				return -EINVAL;
			}
			l.stride = o->stride;
		} else {
			l.stride = xp_layout_stride_lines(l.frame_size / XP_CACHE_LINE,
							  l.topo.channels, l.topo.ranks) *
				   XP_CACHE_LINE;
		}
		if (flags & XP_LAYOUT_F_PACK) {
			l.frames_per_page = ~0u;
		} else {
			__u32 used;

			l.frames_per_page = (l.page_size - l.frame_size) / l.stride + 1;
			used = (l.frames_per_page - 1) * l.stride + l.frame_size;
			__u32 round =
				l.topo.interleave / XP_CACHE_LINE * l.topo.channels * l.topo.ranks;

			/*
			 * Spare lines at the end of a page shift each page's frames; a
			 * whole number of channel rounds of shifts keeps channels even.
			 */
			l.rot_lines = (l.page_size - used) / XP_CACHE_LINE + 1;
			/* round >= 1: interleave a nonzero multiple of 64, channels x
			 * ranks in 1..1024 (both checked above) */
			if (l.rot_lines > round)
				/* NOLINTNEXTLINE(clang-analyzer-core.DivideZero) */
				l.rot_lines -= l.rot_lines % round;
		}
	}
	if (l.frames_per_page == ~0u) {
		__u64 bytes = (__u64)(l.nframes - 1) * l.stride + l.frame_size;

		l.area_size = (bytes + l.page_size - 1) / l.page_size * l.page_size;
	} else {
		npages = (l.nframes + (__u64)l.frames_per_page - 1) / l.frames_per_page;
		l.area_size = npages * l.page_size;
	}
	if (l.area_size > XSK_UNALIGNED_BUF_ADDR_MASK) {
		xp_err("layout: %u frames need %llu bytes, beyond the 48-bit UMEM offset\n",
		       l.nframes, (unsigned long long)l.area_size);
		return -EINVAL;
	}
	{
		__u64 round =
			(__u64)l.topo.interleave / XP_CACHE_LINE * l.topo.channels * l.topo.ranks;
		__u64 q = round / xp_gcd64(round, l.topo.l1_sets) * l.topo.l1_sets;

		__u64 nch = (__u64)l.topo.channels * l.topo.ranks;

		/* xp_layout_disperse() keeps channels and each channel's classes in
		 * 64-bit masks; a power-of-two interleave makes the latter a power of 2. */
		/* nch >= 1: xp_topology_resolve() (topology.c) made every field nonzero */
		if (nch && nch <= XP_M3_CHANNELS_MAX && q / nch <= 64 &&
		    is_pow2(l.topo.interleave / XP_CACHE_LINE)) {
			l.m3_classes = (__u32)q;
			/* q >= 1: round >= 1 (above), l1_sets a power of two */
			/* NOLINTNEXTLINE(clang-analyzer-core.DivideZero) */
			l.m3_magic = ~0ull / q + 1;
			l.m3_chinv = ((1ull << 32) + nch - 1) / nch;
		}
	}
	if (l.kind == XP_LAYOUT_INTERLEAVED && l.rot_lines == 1 && l.frames_per_page == 1)
		xp_warn("layout: %u-byte frames on %u-byte pages cannot be interleaved; frames "
			"sit at page starts like the aligned layout\n",
			l.frame_size, l.page_size);
	*out = l;
	return 0;
}

int xp_layout_frame_index(const struct xp_layout *l, __u64 addr, __u32 *idx)
{
	__u64 a = addr & XSK_UNALIGNED_BUF_ADDR_MASK, page = 0, start, in, k, i;

	if (!l->stride || !l->page_size || !l->rot_lines)
		return -EINVAL;
	if (l->frames_per_page != ~0u)
		page = a / l->page_size;
	start = page * l->page_size + (page % l->rot_lines) * XP_CACHE_LINE;
	if (a < start)
		return -EINVAL;
	in = a - start;
	k = in / l->stride;
	if ((l->frames_per_page != ~0u && k >= l->frames_per_page) ||
	    in - k * l->stride >= l->frame_size)
		return -EINVAL;
	i = page * (l->frames_per_page == ~0u ? 0 : l->frames_per_page) + k;
	if (i >= l->nframes)
		return -EINVAL;
	*idx = (__u32)i;
	return 0;
}

__u32 xp_layout_spread_bins(const struct xp_layout *l, enum xp_spread what)
{
	switch (what) {
	case XP_SPREAD_CH64:
	case XP_SPREAD_CH256:
	case XP_SPREAD_CH4K:
		return l->topo.channels * l->topo.ranks;
	case XP_SPREAD_L1:
		return l->topo.l1_sets;
	case XP_SPREAD_L2:
		return l->topo.l2_sets;
	}
	return 0;
}

__u32 xp_spread_bin(const struct xp_layout *l, enum xp_spread what, __u64 addr)
{
	switch (what) {
	case XP_SPREAD_CH64:
		return xp_topo_channel(&l->topo, addr, 64);
	case XP_SPREAD_CH256:
		return xp_topo_channel(&l->topo, addr, 256);
	case XP_SPREAD_CH4K:
		return xp_topo_channel(&l->topo, addr, 4096);
	case XP_SPREAD_L1:
		return (__u32)((addr / XP_CACHE_LINE) & (l->topo.l1_sets - 1));
	case XP_SPREAD_L2:
		return (__u32)((addr / XP_CACHE_LINE) & (l->topo.l2_sets - 1));
	}
	return 0;
}

int xp_layout_spread(const struct xp_layout *l, enum xp_spread what, __u32 n, __u32 *bins)
{
	__u32 nb = xp_layout_spread_bins(l, what);

	if (!nb || !bins)
		return -EINVAL;
	if (!n || n > l->nframes)
		n = l->nframes;
	memset(bins, 0, nb * sizeof(*bins));
	for (__u32 i = 0; i < n; i++)
		bins[xp_spread_bin(l, what, xp_layout_frame(l, i) + l->data_off)]++;
	return 0;
}

static const char *const spread_names[] = {
	[XP_SPREAD_CH64] = "channel@64B",  [XP_SPREAD_CH256] = "channel@256B",
	[XP_SPREAD_CH4K] = "channel@4KiB", [XP_SPREAD_L1] = "L1 set",
	[XP_SPREAD_L2] = "L2 set",
};

int xp_layout_report(const struct xp_layout *l, FILE *f)
{
	__u32 nmax = l->topo.channels * l->topo.ranks, *bins;

	for (int w = XP_SPREAD_CH64; w <= XP_SPREAD_L2; w++)
		if (xp_layout_spread_bins(l, w) > nmax)
			nmax = xp_layout_spread_bins(l, w);
	bins = calloc(nmax, sizeof(*bins));

	if (!bins)
		return -ENOMEM;
	fprintf(f,
		"%s layout: %u frames of %u B, stride %u B (%u lines), %u per %u-B page, "
		"data at +%u; %u channels x %u ranks\n",
		l->kind == XP_LAYOUT_ALIGNED ? "aligned" : "interleaved", l->nframes, l->frame_size,
		l->stride, l->stride / XP_CACHE_LINE, l->frames_per_page, l->page_size, l->data_off,
		l->topo.channels, l->topo.ranks);
	fprintf(f, "  %-13s %6s %6s %8s %8s %8s\n", "dimension", "bins", "used", "min", "max",
		"max/mean");
	for (int w = XP_SPREAD_CH64; w <= XP_SPREAD_L2; w++) {
		__u32 nb = xp_layout_spread_bins(l, w), used = 0, mn = ~0u, mx = 0;

		xp_layout_spread(l, w, 0, bins);
		for (__u32 b = 0; b < nb; b++) {
			used += bins[b] != 0;
			mn = bins[b] < mn ? bins[b] : mn;
			mx = bins[b] > mx ? bins[b] : mx;
		}
		fprintf(f, "  %-13s %6u %6u %8u %8u %8.2f\n", spread_names[w], nb, used, mn, mx,
			(double)mx * nb / l->nframes);
	}
	free(bins);
	return 0;
}
